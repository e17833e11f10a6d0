// MariaDbConnection: one MariaDB client session (libmariadb) with millisecond timeouts.
//
// libmariadb's blocking API only takes whole-second read/write timeouts fixed at connect
// time, but a lock needs a different bound per statement (a blocking SELECT ... FOR UPDATE
// may wait for seconds, a COMMIT should answer within the command timeout). So every call
// runs libmariadb's non-blocking API (MYSQL_OPT_NONBLOCK) and waits on the socket with
// poll() for at most the caller's timeout (CLOCK_MONOTONIC, milliseconds).
//
// Outcomes (DESIGN.md 3.1): kOk = the server answered (possibly with an SQL error, see
// `sql_errno`); kFail = certainly not executed (no connection could be made); kUnknown = the
// statement was sent but no answer came in time, or the connection broke while it was in
// flight. After kUnknown the session is closed (its socket shut down first, so a partitioned
// network cannot block the close); the server rolls back whatever that session held once it
// sees the connection end. The next Query() reconnects. A reconnect is a new session: an
// open transaction does not survive it (`session_id` changes).
//
// Not thread-safe: one thread per connection.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "locks/redis_connection.h"
#include "locks/sql_result.h"

struct st_mysql;

namespace locklab::locks {

struct MariaDbOptions {
  std::string user = "locklab";      // the lab server runs --skip-grant-tables: any user works
  std::string database = "locklab";  // "" = none (the bootstrap creates it)
  Millis connect_timeout{200};
};

class MariaDbConnection {
 public:
  MariaDbConnection(Endpoint endpoint, MariaDbOptions options);
  ~MariaDbConnection();
  MariaDbConnection(const MariaDbConnection&) = delete;
  MariaDbConnection& operator=(const MariaDbConnection&) = delete;

  // Runs one statement, waiting at most `timeout` for its answer (and, if needed, first
  // connects within the connect timeout; a failed connect is kFail).
  SqlResult Query(const std::string& sql, Millis timeout);
  bool connected() const { return mysql_ != nullptr; }
  // The server's connection id of the current session (0 when not connected). A lock held
  // in this session's transaction belongs to this id.
  unsigned long session_id() const { return session_id_; }
  // Closes the session (shutting the socket down first); the server ends it on its side.
  void Close();
  // Escapes `s` for a single-quoted SQL string literal.
  static std::string Quote(const std::string& s);

 private:
  bool Connect(std::string* error);
  // Waits for the socket events libmariadb asked for; false when `end` passed first.
  bool Wait(int* status, Nanos end);

  Endpoint endpoint_;
  MariaDbOptions options_;
  st_mysql* mysql_ = nullptr;
  unsigned long session_id_ = 0;
};

}  // namespace locklab::locks
