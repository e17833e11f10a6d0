// PostgresConnection: one PostgreSQL client session (libpq) behind SqlSession, with
// millisecond timeouts.
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
// Outcomes and reconnects: locks/sql_session.h. An SQL error is kOk with `sqlstate` set.
// Query() may carry several statements separated by ';', which the server runs in order,
// stopping at the first error; `rows` are those of the last statement that returned any,
// and with no error `error` holds the last notice the server sent (a WARNING), if any.
// session_id() is backend_pid(): session-level advisory locks belong to that process.
//
// Not thread-safe: one thread per connection.
#pragma once

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "locks/outcome.h"
#include "locks/sql_session.h"

struct pg_conn;

namespace locklab::locks {

struct PostgresOptions {
  std::string user = "locklab";       // the lab server trusts every loopback connection
  std::string database = "postgres";  // made by initdb
  Millis connect_timeout{200};
};

class PostgresConnection : public SqlSession {
 public:
  PostgresConnection(Endpoint endpoint, PostgresOptions options);
  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  bool connected() const override { return conn_ != nullptr; }
  uint64_t session_id() const override { return static_cast<uint64_t>(backend_pid_); }
  // The server process serving this session (0 when not connected).
  int backend_pid() const { return backend_pid_; }
  void Close() override;

 private:
  bool Connect(std::string* error) override;
  bool Exchange(const std::string& sql, Nanos end, Millis timeout, SqlResult* result) override;
  // Waits until the socket is readable (and writable, when `write`); false when `end` passed.
  bool WaitSocket(bool write, Nanos end);

  Endpoint endpoint_;
  PostgresOptions options_;
  pg_conn* conn_ = nullptr;
  int backend_pid_ = 0;
  std::string notice_;  // the last notice of the running statement
};

}  // namespace locklab::locks
