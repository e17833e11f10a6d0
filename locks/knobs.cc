#include "locks/knobs.h"

#include <optional>

#include "base/numbers.h"

namespace locklab::locks {

const std::string* KnobReader::Find(const std::string& name) const {
  auto it = knobs_.find(name);
  return it == knobs_.end() ? nullptr : &it->second;
}

void KnobReader::Bad(const std::string& name, const std::string& what) {
  if (!status_.ok()) return;
  status_ = Status::Usage("lock '" + lock_id_ + "': knob '" + name + "': " + what);
}

void KnobReader::Int(const std::string& name, int64_t min, int64_t max, int64_t* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  std::optional<int64_t> n = ParseInt(*v, min, max);
  if (!n) return Bad(name, ExpectedInteger(min, max, *v));
  *out = *n;
}

void KnobReader::Duration(const std::string& name, Millis min, Millis max, Millis* out) {
  int64_t n = out->count();
  Int(name, min.count(), max.count(), &n);
  *out = Millis(n);
}

void KnobReader::Double(const std::string& name, double min, double max, double* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  std::optional<double> d = ParseDouble(*v, min, max);
  if (!d) return Bad(name, ExpectedNumber(min, max, *v));
  *out = *d;
}

void KnobReader::Bool(const std::string& name, bool* out) {
  const std::string* v = Find(name);
  if (v == nullptr) return;
  if (*v == "true" || *v == "1" || *v == "yes") {
    *out = true;
  } else if (*v == "false" || *v == "0" || *v == "no") {
    *out = false;
  } else {
    Bad(name, "'" + *v + "': expected true or false");
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
  Bad(name, "'" + *v + "': expected " + expected);
}

}  // namespace locklab::locks
