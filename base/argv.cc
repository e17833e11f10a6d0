#include "base/argv.h"

#include "base/numbers.h"

namespace locklab {

bool ArgvReader::Next() {
  if (next_ >= args_.size()) return false;
  index_ = next_++;
  const std::string& w = args_[index_];
  if (!after_dashes_ && w == "--") {
    after_dashes_ = true;
    return Next();
  }
  at_flag_ = !after_dashes_ && !w.empty() && w[0] == '-';
  flag_.clear();
  value_.clear();
  inline_value_ = false;
  if (at_flag_) {
    size_t eq = w.find('=');
    inline_value_ = w.rfind("--", 0) == 0 && eq != std::string::npos;
    flag_ = inline_value_ ? w.substr(0, eq) : w;
    if (inline_value_) value_ = w.substr(eq + 1);
  }
  return true;
}

std::vector<std::string> ArgvReader::Rest() const {
  return std::vector<std::string>(args_.begin() + static_cast<std::ptrdiff_t>(next_), args_.end());
}

Status ArgvReader::Value(std::string* out) {
  if (inline_value_) {
    *out = value_;
    return Status::Ok();
  }
  if (next_ >= args_.size()) return Status::Usage(command_ + ": flag " + flag_ + " needs a value");
  *out = args_[next_++];
  return Status::Ok();
}

Status ArgvReader::Int(int64_t lo, int64_t hi, int64_t* out) {
  std::string v;
  if (Status s = Value(&v); !s.ok()) return s;
  if (Status s = ParseInt(v, lo, hi, out); !s.ok()) return Error(s.message());
  return Status::Ok();
}

bool ArgvReader::Is(std::string_view flag) const {
  if (!at_flag_) return false;
  if (spec_ == nullptr) return flag_ == flag;
  const FlagSpec* row = spec_->Find(flag);
  return row != nullptr && row == spec_->Find(flag_);
}

Status ArgvReader::Duration(std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                            std::chrono::milliseconds* out) {
  std::string v;
  if (Status s = Value(&v); !s.ok()) return s;
  if (Status s = ParseDuration(v, lo, hi, out); !s.ok()) return Error(s.message());
  return Status::Ok();
}

Status ArgvReader::NoValue() const {
  if (!inline_value_) return Status::Ok();
  return Status::Usage(command_ + ": flag " + flag_ + " takes no value");
}

Status ArgvReader::Unknown() const {
  if (!at_flag_) return Status::Usage(command_ + ": unexpected argument '" + word() + "'");
  return Status::Usage(command_ + ": unknown flag " + flag_);
}

Status ArgvReader::Error(const std::string& what) const {
  return Status::Usage(command_ + ": flag " + flag_ + ": " + what);
}

}  // namespace locklab
