#include "locks/knobs.h"

#include <cmath>

namespace locklab::locks {

const std::string* KnobReader::Find(const std::string& name) const {
  auto it = knobs_.find(name);
  return it == knobs_.end() ? nullptr : &it->second;
}

void KnobReader::Bad(const std::string& name, const std::string& value,
                     const std::string& expected) {
  if (!status_.ok()) return;
  status_ = Status::Usage("lock '" + lock_id_ + "': knob '" + name + "': '" + value +
                          "': expected " + expected);
}

void KnobReader::Int(const std::string& name, int64_t min, int64_t max, int64_t* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  std::string expected =
      "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  try {
    size_t used = 0;
    long long n = std::stoll(*v, &used);
    if (used != v->size() || n < min || n > max) return Bad(name, *v, expected);
    *out = n;
  } catch (...) {
    Bad(name, *v, expected);
  }
}

void KnobReader::Duration(const std::string& name, Millis min, Millis max, Millis* out) {
  int64_t n = out->count();
  Int(name, min.count(), max.count(), &n);
  *out = Millis(n);
}

void KnobReader::Double(const std::string& name, double min, double max, double* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  std::string expected = "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  try {
    size_t used = 0;
    double d = std::stod(*v, &used);
    if (used != v->size() || !std::isfinite(d) || d < min || d > max) {
      return Bad(name, *v, expected);
    }
    *out = d;
  } catch (...) {
    Bad(name, *v, expected);
  }
}

void KnobReader::Bool(const std::string& name, bool* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  if (*v == "true" || *v == "1" || *v == "yes") {
    *out = true;
  } else if (*v == "false" || *v == "0" || *v == "no") {
    *out = false;
  } else {
    Bad(name, *v, "true or false");
  }
}

void KnobReader::Choice(const std::string& name, const std::vector<std::string>& choices,
                        std::string* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  std::string expected;
  for (const auto& c : choices) {
    if (c == *v) {
      *out = *v;
      return;
    }
    expected += (expected.empty() ? "" : " or ") + c;
  }
  Bad(name, *v, expected);
}

}  // namespace locklab::locks
