#include "locks/lock.h"

namespace locklab::locks {

LockResult Lock::Renew(const Lease&) {
  LockResult r;
  r.outcome = Outcome::kFail;
  r.detail = "this algorithm does not renew";
  return r;
}

LockResult AttemptUntil(Nanos deadline, Millis retry_delay,
                        const std::function<Outcome(std::string* detail)>& attempt) {
  LockResult result;
  bool any_unknown = false;
  for (;;) {
    Outcome o = attempt(&result.detail);
    if (o == Outcome::kOk) {
      result.outcome = Outcome::kOk;
      result.detail.clear();
      return result;
    }
    if (o == Outcome::kUnknown) any_unknown = true;
    if (MonotonicNow() + retry_delay >= deadline) break;
    SleepFor(retry_delay);
  }
  result.outcome = any_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

}  // namespace locklab::locks
