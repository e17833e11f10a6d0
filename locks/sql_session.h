// SqlSession: one client session with an SQL server, with a millisecond bound on every
// statement; SqlResult: the answer to one statement. The two drivers behind it are
// MariaDbConnection (libmariadb) and PostgresConnection (libpq); the session locks
// (locks/sql_session_lock.h) hold their lock in such a session.
//
// Outcomes (docs/design.md 3.1): Query() connects first when it has no session, and a failed
// connect is kFail (nothing was sent: the statement certainly did not run). kOk = the server
// answered, possibly with an SQL error (`sql_errno` or `sqlstate` says which). kUnknown =
// the statement was sent but its whole answer did not come within the caller's timeout, or
// the connection broke with it in flight: it may have run. After kUnknown the session is
// closed (its socket shut down first, so a partitioned link cannot block the close); the
// server ends that session, and everything it held, once it sees the connection end. The
// next Query() reconnects, which is a new session with a new `session_id`: an open
// transaction or a session-level lock does not survive it.
//
// Not thread-safe: one thread per session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "locks/outcome.h"

namespace locklab::locks {

struct SqlResult {
  Outcome outcome = Outcome::kFail;
  unsigned sql_errno = 0;  // MariaDB server error (1205 lock wait timeout, ...), 0 = none
  std::string sqlstate;    // PostgreSQL SQLSTATE ("55P03" lock not available), "" = none
  std::string error;       // server or transport error text
  std::vector<std::vector<std::string>> rows;  // result set, NULL as ""

  // Whether the server answered with an SQL error (either driver's kind).
  bool server_error() const { return sql_errno != 0 || !sqlstate.empty(); }
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;

  // Runs `sql`, waiting at most `timeout` for its whole answer; first connects (within the
  // driver's connect timeout) when there is no session. Outcomes: see above.
  SqlResult Query(const std::string& sql, Millis timeout);

  virtual bool connected() const = 0;
  // The server's name for the current session (MariaDB's connection id, PostgreSQL's
  // backend pid); 0 when not connected. A lock held in the session belongs to this id.
  virtual uint64_t session_id() const = 0;
  // Closes the session (shutting the socket down first); the server ends it on its side.
  virtual void Close() = 0;

 protected:
  // Opens a session within the connect timeout; false with `*error` when none was made
  // (then nothing is left open).
  virtual bool Connect(std::string* error) = 0;
  // Sends `sql` on the open session and reads its whole answer by `end` (MonotonicNow
  // time; `timeout` is only for the message). True when the server answered: `*result`
  // then holds its rows or its SQL error. False when the answer was lost (timeout, broken
  // connection), with why in result->error; Query() then closes the session.
  virtual bool Exchange(const std::string& sql, Nanos end, Millis timeout, SqlResult* result) = 0;
};

}  // namespace locklab::locks
