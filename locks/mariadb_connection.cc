#include "locks/mariadb_connection.h"

#include <mysql.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

namespace locklab::locks {

MariaDbConnection::MariaDbConnection(Endpoint endpoint, MariaDbOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {}

MariaDbConnection::~MariaDbConnection() { Close(); }

std::string MariaDbConnection::Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    switch (c) {
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\0':
        out += "\\0";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out + "'";
}

void MariaDbConnection::Close() {
  if (mysql_ == nullptr) return;
  // Shut the socket down first: mysql_close() sends COM_QUIT, which must not wait on a
  // partitioned link. The server sees the end of the connection and rolls back.
  my_socket fd = mysql_get_socket(mysql_);
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  mysql_close(mysql_);
  mysql_ = nullptr;
  session_id_ = 0;
}

bool MariaDbConnection::Wait(int* status, Nanos end) {
  for (;;) {
    Nanos now = MonotonicNow();
    if (now >= end) return false;
    int64_t left_ms = (end - now).count() / 1000000 + 1;
    bool lib_timeout = (*status & MYSQL_WAIT_TIMEOUT) != 0;
    int64_t wait_ms = left_ms;
    if (lib_timeout) wait_ms = std::min<int64_t>(wait_ms, mysql_get_timeout_value_ms(mysql_));
    pollfd p{mysql_get_socket(mysql_), 0, 0};
    if (*status & MYSQL_WAIT_READ) p.events |= POLLIN;
    if (*status & MYSQL_WAIT_WRITE) p.events |= POLLOUT;
    if (*status & MYSQL_WAIT_EXCEPT) p.events |= POLLPRI;
    int n = poll(&p, 1, static_cast<int>(wait_ms));
    if (n < 0) continue;  // EINTR (SIGSTOP/SIGCONT): recompute what is left
    if (n == 0) {
      if (lib_timeout && wait_ms < left_ms) {
        *status = MYSQL_WAIT_TIMEOUT;
        return true;
      }
      if (MonotonicNow() >= end) return false;
      continue;
    }
    int ready = 0;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_READ;
    if (p.revents & (POLLOUT | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_WRITE;
    if (p.revents & POLLPRI) ready |= MYSQL_WAIT_EXCEPT;
    *status = ready;
    return true;
  }
}

bool MariaDbConnection::Connect(std::string* error) {
  mysql_ = mysql_init(nullptr);
  if (mysql_ == nullptr) {
    *error = "mysql_init failed";
    return false;
  }
  mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr);
  unsigned proto = MYSQL_PROTOCOL_TCP;
  mysql_options(mysql_, MYSQL_OPT_PROTOCOL, &proto);
  Nanos end = MonotonicNow() + options_.connect_timeout;
  MYSQL* ret = nullptr;
  const char* db = options_.database.empty() ? nullptr : options_.database.c_str();
  int status = mysql_real_connect_start(&ret, mysql_, endpoint_.host.c_str(), options_.user.c_str(),
                                        "", db, static_cast<unsigned>(endpoint_.port), nullptr, 0);
  while (status != 0) {
    if (!Wait(&status, end)) {
      *error = "connect timeout to " + endpoint_.ToString();
      Close();
      return false;
    }
    status = mysql_real_connect_cont(&ret, mysql_, status);
  }
  if (ret == nullptr) {
    *error = "connect to " + endpoint_.ToString() + ": " + mysql_error(mysql_);
    Close();
    return false;
  }
  session_id_ = mysql_thread_id(mysql_);
  return true;
}

bool MariaDbConnection::Exchange(const std::string& sql, Nanos end, Millis timeout,
                                 SqlResult* result) {
  auto lost = [&](const std::string& what) {
    result->error = what;
    return false;
  };
  int err = 0;
  int status = mysql_real_query_start(&err, mysql_, sql.data(), sql.size());
  while (status != 0) {
    if (!Wait(&status, end))
      return lost("timeout after " + std::to_string(timeout.count()) + " ms");
    status = mysql_real_query_cont(&err, mysql_, status);
  }
  if (err != 0) {
    unsigned code = mysql_errno(mysql_);
    if (code >= 2000) return lost(std::string("connection lost: ") + mysql_error(mysql_));
    result->sql_errno = code;  // the server answered with an SQL error
    result->error = mysql_error(mysql_);
    return true;
  }
  MYSQL_RES* res = nullptr;
  status = mysql_store_result_start(&res, mysql_);
  while (status != 0) {
    if (!Wait(&status, end)) return lost("timeout reading the result");
    status = mysql_store_result_cont(&res, mysql_, status);
  }
  if (res == nullptr) {
    if (mysql_field_count(mysql_) != 0) {
      return lost(std::string("result lost: ") + mysql_error(mysql_));
    }
  } else {
    unsigned fields = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      std::vector<std::string> cols;
      for (unsigned i = 0; i < fields; ++i) cols.emplace_back(row[i] ? row[i] : "");
      result->rows.push_back(std::move(cols));
    }
    mysql_free_result(res);
  }
  return true;
}

}  // namespace locklab::locks
