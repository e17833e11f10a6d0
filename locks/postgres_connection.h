// PostgresConnection: one PostgreSQL client session (libpq) with millisecond timeouts.
//
// libpq's blocking calls wait as long as the server takes, and its connect_timeout is whole
// seconds; a lock needs a bound per statement (a pg_advisory_lock may wait for seconds, an
// unlock should answer within the command timeout). So every call runs libpq's asynchronous
// API (PQconnectStartParams/PQconnectPoll, PQsendQuery/PQconsumeInput/PQisBusy) on a
// non-blocking connection and waits on its socket with poll() for at most the caller's
// timeout (CLOCK_MONOTONIC, milliseconds). TLS and GSSAPI encryption are off (sslmode and
// gssencmode disable): the lab server listens on loopback only, and each would add a round
// trip or, with Kerberos libraries present, a lookup that can stall.
//
// Outcomes (locks/sql_result.h): an SQL error is kOk with `sqlstate` set; a failed connect
// is kFail; no answer in time, or a connection that broke with the statement in flight, is
// kUnknown and closes the session (its socket shut down first, so a partitioned link cannot
// block PQfinish). The server ends that session, and with it every session-level advisory
// lock it held, once it sees the connection end. The next Query() reconnects as a new
// session (`backend_pid` changes).
//
// Not thread-safe: one thread per connection.
#pragma once

#include <string>

#include "base/clock.h"
#include "locks/redis_connection.h"
#include "locks/sql_result.h"

struct pg_conn;

namespace locklab::locks {

struct PostgresOptions {
  std::string user = "locklab";       // the lab server trusts every loopback connection
  std::string database = "postgres";  // made by initdb
  Millis connect_timeout{200};
};

class PostgresConnection {
 public:
  PostgresConnection(Endpoint endpoint, PostgresOptions options);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  // Runs `sql` (one statement, or several separated by ';' that the server runs in order and
  // stops at the first error), waiting at most `timeout` for the whole answer; first
  // connects within the connect timeout if needed (a failed connect is kFail). `rows` are
  // those of the last statement that returned any; with no error, `error` holds the last
  // notice the server sent (a WARNING), if any.
  SqlResult Query(const std::string& sql, Millis timeout);
  bool connected() const { return conn_ != nullptr; }
  // The server process serving this session (0 when not connected): session-level advisory
  // locks belong to it.
  int backend_pid() const { return backend_pid_; }
  // Closes the session (shutting the socket down first); the server ends it on its side.
  void Close();

 private:
  bool Connect(std::string* error);
  // Waits until the socket is readable (and writable, when `write`); false when `end` passed.
  bool WaitSocket(bool write, Nanos end);

  Endpoint endpoint_;
  PostgresOptions options_;
  pg_conn* conn_ = nullptr;
  int backend_pid_ = 0;
  std::string notice_;  // the last notice of the running statement
};

}  // namespace locklab::locks
