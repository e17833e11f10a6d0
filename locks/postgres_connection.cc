#include "locks/postgres_connection.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

namespace locklab::locks {

PostgresConnection::PostgresConnection(Endpoint endpoint, PostgresOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {}

PostgresConnection::~PostgresConnection() { Close(); }

void PostgresConnection::Close() {
  if (conn_ == nullptr) return;
  // PQfinish sends a Terminate message; with the socket shut down it cannot wait on a
  // partitioned link. The server sees the connection end and drops the session's locks.
  int fd = PQsocket(conn_);
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  PQfinish(conn_);
  conn_ = nullptr;
  backend_pid_ = 0;
}

bool PostgresConnection::WaitSocket(bool write, Nanos end) {
  for (;;) {
    Nanos now = MonotonicNow();
    if (now >= end) return false;
    pollfd p{PQsocket(conn_), static_cast<short>(POLLIN | (write ? POLLOUT : 0)), 0};
    int n = poll(&p, 1, static_cast<int>((end - now).count() / 1000000 + 1));
    if (n > 0) return true;
    // n < 0: EINTR (SIGSTOP/SIGCONT), n == 0: timed out by poll's rounding; recheck `end`.
  }
}

bool PostgresConnection::Connect(std::string* error) {
  std::string port = std::to_string(endpoint_.port);
  const char* keys[] = {"hostaddr", "port",       "user",    "dbname",
                        "sslmode",  "gssencmode", "application_name", nullptr};
  const char* values[] = {endpoint_.host.c_str(), port.c_str(), options_.user.c_str(),
                          options_.database.c_str(), "disable", "disable", "locklab", nullptr};
  conn_ = PQconnectStartParams(keys, values, 0);
  if (conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
    *error = "connect to " + endpoint_.ToString() + ": " +
             (conn_ ? PQerrorMessage(conn_) : "out of memory");
    Close();
    return false;
  }
  Nanos end = MonotonicNow() + options_.connect_timeout;
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK) {
    if (st == PGRES_POLLING_FAILED) {
      std::string msg = PQerrorMessage(conn_);
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      *error = "connect to " + endpoint_.ToString() + ": " + msg;
      Close();
      return false;
    }
    if (!WaitSocket(st == PGRES_POLLING_WRITING, end)) {
      *error = "connect timeout to " + endpoint_.ToString();
      Close();
      return false;
    }
    st = PQconnectPoll(conn_);
  }
  PQsetnonblocking(conn_, 1);
  // Notices (a WARNING from pg_advisory_unlock of a lock not held) go into the statement's
  // result rather than to the client's stderr, libpq's default.
  PQsetNoticeProcessor(
      conn_,
      [](void* arg, const char* message) {
        std::string* notice = static_cast<std::string*>(arg);
        *notice = message;
        while (!notice->empty() && notice->back() == '\n') notice->pop_back();
      },
      &notice_);
  backend_pid_ = PQbackendPID(conn_);
  return true;
}

bool PostgresConnection::Exchange(const std::string& sql, Nanos end, Millis timeout,
                                  SqlResult* result) {
  SqlResult& r = *result;
  notice_.clear();
  auto lost = [&](const std::string& what) {
    r.error = what;
    return false;
  };
  auto lib_error = [&]() {
    std::string msg = PQerrorMessage(conn_);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return msg;
  };
  if (PQsendQuery(conn_, sql.c_str()) == 0) {
    return lost("connection lost: " + lib_error());
  }
  for (;;) {  // the query may not fit the socket buffer at once
    int f = PQflush(conn_);
    if (f == 0) break;
    if (f < 0) return lost("connection lost: " + lib_error());
    if (!WaitSocket(true, end)) return lost("timeout after " + std::to_string(timeout.count()) + " ms");
    if (PQconsumeInput(conn_) == 0) return lost("connection lost: " + lib_error());
  }
  bool any_error = false;
  for (;;) {
    while (PQisBusy(conn_)) {
      if (!WaitSocket(false, end)) {
        return lost("timeout after " + std::to_string(timeout.count()) + " ms");
      }
      if (PQconsumeInput(conn_) == 0) return lost("connection lost: " + lib_error());
    }
    PGresult* res = PQgetResult(conn_);
    if (res == nullptr) break;
    ExecStatusType st = PQresultStatus(res);
    if (st == PGRES_TUPLES_OK) {
      r.rows.clear();
      int n = PQntuples(res), m = PQnfields(res);
      for (int i = 0; i < n; ++i) {
        std::vector<std::string> cols;
        for (int j = 0; j < m; ++j) cols.emplace_back(PQgetvalue(res, i, j));
        r.rows.push_back(std::move(cols));
      }
    } else if (st != PGRES_COMMAND_OK && st != PGRES_EMPTY_QUERY && !any_error) {
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      std::string msg = PQresultErrorMessage(res);
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      any_error = true;
      r.sqlstate = state ? state : "";
      r.error = msg;
    }
    PQclear(res);
  }
  // libpq reports a connection that broke mid-answer as an error result without SQLSTATE.
  if (PQstatus(conn_) == CONNECTION_BAD || (any_error && r.sqlstate.empty())) {
    return lost("connection lost: " + (r.error.empty() ? lib_error() : r.error));
  }
  if (r.error.empty()) r.error = notice_;
  return true;
}

}  // namespace locklab::locks
