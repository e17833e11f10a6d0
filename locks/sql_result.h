// SqlResult: the answer to one SQL statement sent by a lock's database session
// (MariaDbConnection, PostgresConnection).
//
// `outcome` is the network's answer (DESIGN.md 3.1): kOk = the server answered, which may be
// an SQL error (then `sql_errno` or `sqlstate` says which); kFail = certainly not executed
// (no connection could be made); kUnknown = sent, but no answer came in time or the
// connection broke while it was in flight.
#pragma once

#include <string>
#include <vector>

#include "locks/outcome.h"

namespace locklab::locks {

struct SqlResult {
  Outcome outcome = Outcome::kFail;
  unsigned sql_errno = 0;  // MariaDB server error (1205 lock wait timeout, ...), 0 = none
  std::string sqlstate;    // PostgreSQL SQLSTATE ("55P03" lock not available), "" = none
  std::string error;       // server or transport error text
  std::vector<std::vector<std::string>> rows;  // result set, NULL as ""
};

}  // namespace locklab::locks
