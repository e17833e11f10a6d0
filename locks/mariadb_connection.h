// MariaDbConnection: one MariaDB client session (libmariadb) behind SqlSession, with
// millisecond timeouts.
//
// libmariadb's blocking API only takes whole-second read/write timeouts fixed at connect
// time, but a lock needs a different bound per statement (a blocking SELECT ... FOR UPDATE
// may wait for seconds, a COMMIT should answer within the command timeout). So every call
// runs libmariadb's non-blocking API (MYSQL_OPT_NONBLOCK) and waits on the socket with
// poll() for at most the caller's timeout (CLOCK_MONOTONIC, milliseconds).
//
// Outcomes and reconnects: locks/sql_session.h. An SQL error is kOk with `sql_errno` set;
// session_id() is the server's connection id (mysql_thread_id).
//
// Not thread-safe: one thread per connection.
#pragma once

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "locks/outcome.h"
#include "locks/sql_session.h"

struct st_mysql;

namespace locklab::locks {

struct MariaDbOptions {
  std::string user = "locklab";      // the lab server runs --skip-grant-tables: any user works
  std::string database = "locklab";  // "" = none (the bootstrap creates it)
  Millis connect_timeout{200};
};

class MariaDbConnection : public SqlSession {
 public:
  MariaDbConnection(Endpoint endpoint, MariaDbOptions options);
  ~MariaDbConnection() override;
  MariaDbConnection(const MariaDbConnection&) = delete;
  MariaDbConnection& operator=(const MariaDbConnection&) = delete;

  bool connected() const override { return mysql_ != nullptr; }
  uint64_t session_id() const override { return session_id_; }
  void Close() override;
  // Escapes `s` for a single-quoted SQL string literal.
  static std::string Quote(const std::string& s);

 private:
  bool Connect(std::string* error) override;
  bool Exchange(const std::string& sql, Nanos end, Millis timeout, SqlResult* result) override;
  // Waits for the socket events libmariadb asked for; false when `end` passed first.
  bool Wait(int* status, Nanos end);

  Endpoint endpoint_;
  MariaDbOptions options_;
  st_mysql* mysql_ = nullptr;
  uint64_t session_id_ = 0;
};

}  // namespace locklab::locks
