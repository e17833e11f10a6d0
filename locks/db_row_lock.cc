#include "locks/db_row_lock.h"

#include <algorithm>

#include "locks/knobs.h"

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
}  // namespace

Status ParseDbRowOptions(const LockConfig& config, DbRowOptions* out) {
  KnobReader r(config.algorithm, config.knobs);
  r.Choice("transaction", {"explicit", "autocommit"}, &out->transaction);
  r.Int("wait_timeout_s", 0, 31536000, &out->wait_timeout_s);
  return r.status();
}

DbRowLock::DbRowLock(const LockConfig& config, const DbRowOptions& options)
    : config_(config),
      options_(options),
      conn_(config.nodes.empty() ? Endpoint{} : config.nodes[0],
            MariaDbOptions{"locklab", "locklab", config.connect_timeout}) {}

Outcome DbRowLock::Prepare(const std::string& key, std::string* detail) {
  if (!conn_.connected() || conn_.session_id() != prepared_session_) {
    if (options_.wait_timeout_s > 0) {
      SqlResult r =
          conn_.Query("SET SESSION wait_timeout = " + std::to_string(options_.wait_timeout_s),
                      config_.command_timeout);
      if (r.outcome != Outcome::kOk || r.sql_errno != 0) {
        *detail = r.error;
        // A SET that may or may not have run holds no lock: retrying is safe.
        return r.outcome == Outcome::kOk ? Outcome::kFail : r.outcome;
      }
    }
    prepared_session_ = conn_.session_id();
  }
  if (created_.count(key)) return Outcome::kOk;
  // createLock (articles/002 lines 224-276): INSERT, a duplicate key means it exists.
  SqlResult r = conn_.Query("INSERT INTO distributed_lock (transaction_id) VALUES (" +
                                MariaDbConnection::Quote(key) + ")",
                            config_.command_timeout);
  if (r.outcome != Outcome::kOk) {
    *detail = "createLock: " + r.error;
    return r.outcome;
  }
  if (r.sql_errno != 0 && r.sql_errno != kErrDupEntry) {
    *detail = "createLock: " + r.error;
    return Outcome::kFail;
  }
  created_.insert(key);
  return Outcome::kOk;
}

Outcome DbRowLock::Attempt(const std::string& key, int64_t wait_s, Nanos deadline,
                           std::string* detail) {
  Outcome p = Prepare(key, detail);
  // An unknown INSERT or SET held no row lock (autocommit): the attempt certainly failed.
  if (p != Outcome::kOk) return Outcome::kFail;
  const bool explicit_tx = options_.transaction == "explicit";
  if (explicit_tx) {
    SqlResult b = conn_.Query("START TRANSACTION", config_.command_timeout);
    if (b.outcome != Outcome::kOk || b.sql_errno != 0) {
      *detail = "START TRANSACTION: " + b.error;
      return Outcome::kFail;  // no lock statement was sent
    }
  }
  std::string sql =
      "SELECT id FROM distributed_lock WHERE transaction_id = " + MariaDbConnection::Quote(key) +
      " FOR UPDATE " + (wait_s > 0 ? "WAIT " + std::to_string(wait_s) : std::string("NOWAIT"));
  // The server answers within wait_s; the client waits that long plus a command timeout,
  // but never past the caller's deadline plus a command timeout.
  Millis budget = Millis(wait_s * 1000) + config_.command_timeout;
  Millis to_deadline =
      std::chrono::duration_cast<Millis>(deadline - MonotonicNow()) + config_.command_timeout;
  budget = std::max(config_.command_timeout, std::min(budget, to_deadline));
  SqlResult r = conn_.Query(sql, budget);
  if (r.outcome != Outcome::kOk) {
    *detail = "SELECT FOR UPDATE: " + r.error;
    return r.outcome;  // unknown: the session is closed, the server rolls back
  }
  if (r.sql_errno != 0) {
    *detail = r.error;
    if (explicit_tx) conn_.Query("ROLLBACK", config_.command_timeout);
    if (r.sql_errno == kErrLockWaitTimeout || r.sql_errno == kErrLockNowait ||
        r.sql_errno == kErrDeadlock) {
      *detail = "row locked by another session";
    }
    return Outcome::kFail;
  }
  if (r.rows.empty()) {
    // The article's lock() returns false when the row is missing (line 292).
    *detail = "no row for " + key;
    created_.erase(key);
    if (explicit_tx) conn_.Query("ROLLBACK", config_.command_timeout);
    return Outcome::kFail;
  }
  return Outcome::kOk;
}

LockResult DbRowLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result = AttemptUntil(deadline, config_.retry_delay, [&](std::string* detail) {
    int64_t wait_s = std::max<int64_t>(0, (deadline - MonotonicNow()).count() / 1000000000);
    return Attempt(key, wait_s, deadline, detail);
  });
  if (result.outcome == Outcome::kOk) {
    result.lease.key = key;
    result.lease.token = "session-" + std::to_string(conn_.session_id());
    result.lease.validity = Millis::max();
    result.lease.acquired_at = MonotonicNow();
  }
  return result;
}

LockResult DbRowLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (!conn_.connected() || lease.token != "session-" + std::to_string(conn_.session_id())) {
    // The session that held the row lock is gone: the server rolled it back (or will,
    // when it notices the closed connection). Nothing is left to commit.
    result.outcome = Outcome::kFail;
    result.detail = "the locking session is gone";
    return result;
  }
  SqlResult r = conn_.Query("COMMIT", config_.command_timeout);
  if (r.outcome != Outcome::kOk) {
    result.outcome = r.outcome;
    result.detail = "COMMIT: " + r.error;
    return result;
  }
  result.outcome = r.sql_errno == 0 ? Outcome::kOk : Outcome::kFail;
  result.detail = r.error;
  return result;
}

}  // namespace locklab::locks
