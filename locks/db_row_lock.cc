#include "locks/db_row_lock.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "locks/knobs.h"
#include "locks/mariadb_connection.h"

namespace locklab::locks {

// articles/002 lines 128-133, with the article's columns; MariaDB 10.11 accepts the zero
// create_time default only without NO_ZERO_DATE, so it defaults to the current time here.
const char kDistributedLockTableSql[] =
    "CREATE TABLE IF NOT EXISTS distributed_lock ("
    " id BIGINT UNSIGNED PRIMARY KEY AUTO_INCREMENT,"
    " transaction_id VARCHAR(128) NOT NULL DEFAULT '',"
    " last_update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,"
    " create_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,"
    " UNIQUE KEY idx_transaction_id (transaction_id)) ENGINE=InnoDB";

namespace {
constexpr unsigned kErrLockWaitTimeout = 1205;
constexpr unsigned kErrLockNowait = 3572;  // ER_LOCK_NOWAIT
constexpr unsigned kErrDupEntry = 1062;
constexpr unsigned kErrDeadlock = 1213;

// The lock's one session, on the lock's node.
std::unique_ptr<SqlSession> MariaDbSession(const LockConfig& config) {
  return std::make_unique<MariaDbConnection>(
      SqlSessionLock::SessionNode(config),
      MariaDbOptions{"locklab", "locklab", config.connect_timeout});
}
}  // namespace

Status ParseDbRowOptions(const LockConfig& config, DbRowOptions* out) {
  KnobReader r(config.algorithm, config.knobs);
  r.Choice("transaction", {"explicit", "autocommit"}, &out->transaction);
  r.Int("wait_timeout_s", 0, 31536000, &out->wait_timeout_s);
  return r.status();
}

DbRowLock::DbRowLock(const LockConfig& config, const DbRowOptions& options)
    : SqlSessionLock(config, MariaDbSession(config), "session-"), options_(options) {}

SqlSessionLock::Statement DbRowLock::SessionSettings() const {
  if (options_.wait_timeout_s <= 0) return {};
  return {"SET SESSION wait_timeout = " + std::to_string(options_.wait_timeout_s),
          config().command_timeout, ""};
}

Outcome DbRowLock::BeforeLock(const std::string& key, std::string* detail) {
  if (!created_.count(key)) {
    // createLock (articles/002 lines 224-276): INSERT, a duplicate key means it exists.
    SqlResult r = session().Query("INSERT INTO distributed_lock (transaction_id) VALUES (" +
                                      MariaDbConnection::Quote(key) + ")",
                                  config().command_timeout);
    if (r.outcome != Outcome::kOk || (r.sql_errno != 0 && r.sql_errno != kErrDupEntry)) {
      *detail = "createLock: " + r.error;
      return Outcome::kFail;  // an INSERT in autocommit holds no row lock
    }
    created_.insert(key);
  }
  if (explicit_transaction()) {
    SqlResult b = session().Query("START TRANSACTION", config().command_timeout);
    if (b.outcome != Outcome::kOk || b.sql_errno != 0) {
      *detail = "START TRANSACTION: " + b.error;
      return Outcome::kFail;  // no lock statement was sent
    }
  }
  return Outcome::kOk;
}

SqlSessionLock::Statement DbRowLock::LockStatement(const std::string& key, Nanos deadline) const {
  // WAIT takes whole seconds: floor(time left), NOWAIT when less than a second is left.
  int64_t wait_s = std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::seconds>(deadline - MonotonicNow()).count());
  std::string sql =
      "SELECT id FROM distributed_lock WHERE transaction_id = " + MariaDbConnection::Quote(key) +
      " FOR UPDATE " + (wait_s > 0 ? "WAIT " + std::to_string(wait_s) : std::string("NOWAIT"));
  // The server answers within wait_s; the client waits that long plus a command timeout,
  // but never past the caller's deadline plus a command timeout.
  const Millis command_timeout = config().command_timeout;
  Millis budget = std::chrono::seconds(wait_s) + command_timeout;
  Millis to_deadline =
      std::chrono::duration_cast<Millis>(deadline - MonotonicNow()) + command_timeout;
  budget = std::max(command_timeout, std::min(budget, to_deadline));
  return {sql, budget, "SELECT FOR UPDATE: "};
}

Outcome DbRowLock::LockAnswer(const std::string& key, const SqlResult& answer,
                              std::string* detail) {
  if (answer.sql_errno != 0) {
    *detail = answer.error;
    if (explicit_transaction()) session().Query("ROLLBACK", config().command_timeout);
    if (answer.sql_errno == kErrLockWaitTimeout || answer.sql_errno == kErrLockNowait ||
        answer.sql_errno == kErrDeadlock) {
      *detail = "row locked by another session";
    }
    return Outcome::kFail;
  }
  if (answer.rows.empty()) {
    // The article's lock() returns false when the row is missing (line 292).
    *detail = "no row for " + key;
    created_.erase(key);
    if (explicit_transaction()) session().Query("ROLLBACK", config().command_timeout);
    return Outcome::kFail;
  }
  return Outcome::kOk;
}

SqlSessionLock::Statement DbRowLock::ReleaseStatement(const Lease&) const {
  return {"COMMIT", config().command_timeout, "COMMIT: "};
}

Outcome DbRowLock::ReleaseAnswer(const SqlResult& answer, std::string* detail) const {
  *detail = answer.error;
  return answer.sql_errno == 0 ? Outcome::kOk : Outcome::kFail;
}

}  // namespace locklab::locks
