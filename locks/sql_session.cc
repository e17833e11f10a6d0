#include "locks/sql_session.h"

namespace locklab::locks {

SqlResult SqlSession::Query(const std::string& sql, Millis timeout) {
  SqlResult r;
  if (!connected()) {
    std::string error;
    if (!Connect(&error)) {
      // Nothing was sent: the statement certainly did not run. (A connect that timed out
      // through a black-holed link never got to authenticate, so no session exists either.)
      r.outcome = Outcome::kFail;
      r.error = error;
      return r;
    }
  }
  if (!Exchange(sql, MonotonicNow() + timeout, timeout, &r)) {
    r.outcome = Outcome::kUnknown;
    r.rows.clear();
    Close();
    return r;
  }
  r.outcome = Outcome::kOk;
  return r;
}

}  // namespace locklab::locks
