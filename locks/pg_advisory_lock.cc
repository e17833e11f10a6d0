#include "locks/pg_advisory_lock.h"

#include <algorithm>

#include "locks/knobs.h"

namespace locklab::locks {

namespace {
constexpr char kLockNotAvailable[] = "55P03";
}  // namespace

Status ParsePgAdvisoryOptions(const LockConfig& config, PgAdvisoryOptions* out) {
  KnobReader r(config.algorithm, config.knobs);
  r.Choice("wait", {"block", "try"}, &out->wait);
  r.Duration("idle_session_timeout_ms", Millis(0), Millis(2147483647), &out->idle_session_timeout);
  return r.status();
}

int64_t AdvisoryKey(const std::string& key) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>(h);
}

PgAdvisoryLock::PgAdvisoryLock(const LockConfig& config, const PgAdvisoryOptions& options)
    : config_(config),
      options_(options),
      conn_(config.nodes.empty() ? Endpoint{} : config.nodes[0],
            PostgresOptions{"locklab", "postgres", config.connect_timeout}) {}

Outcome PgAdvisoryLock::Prepare(std::string* detail) {
  if (conn_.connected() && conn_.backend_pid() == prepared_backend_) return Outcome::kOk;
  if (options_.idle_session_timeout.count() > 0) {
    SqlResult r = conn_.Query(
        "SET idle_session_timeout = " + std::to_string(options_.idle_session_timeout.count()),
        config_.command_timeout);
    if (r.outcome != Outcome::kOk || !r.sqlstate.empty()) {
      *detail = "SET idle_session_timeout: " + r.error;
      return Outcome::kFail;  // a SET holds no lock: retrying is safe
    }
  }
  prepared_backend_ = conn_.backend_pid();
  return Outcome::kOk;
}

Outcome PgAdvisoryLock::Attempt(const std::string& key, Nanos deadline, std::string* detail) {
  if (Prepare(detail) != Outcome::kOk) return Outcome::kFail;
  const std::string k = std::to_string(AdvisoryKey(key));
  Millis budget = config_.command_timeout;
  std::string sql;
  if (options_.wait == "try") {
    sql = "SELECT pg_try_advisory_lock(" + k + ")";
  } else {
    // lock_timeout 0 means "wait forever": the server waits at least 1 ms. The client waits
    // that long plus a command timeout for the answer.
    int64_t wait_ms = std::max<int64_t>(
        1, std::chrono::duration_cast<Millis>(deadline - MonotonicNow()).count());
    sql = "SET lock_timeout = " + std::to_string(wait_ms) + "; SELECT pg_advisory_lock(" + k + ")";
    budget += Millis(wait_ms);
  }
  SqlResult r = conn_.Query(sql, budget);
  if (r.outcome != Outcome::kOk) {
    *detail = r.error;
    return r.outcome;  // unknown: the session is closed, the server drops its locks
  }
  if (!r.sqlstate.empty()) {
    *detail = r.sqlstate == kLockNotAvailable ? "advisory lock held by another session"
                                              : r.sqlstate + " " + r.error;
    return Outcome::kFail;
  }
  if (options_.wait == "try" && (r.rows.empty() || r.rows[0].empty() || r.rows[0][0] != "t")) {
    *detail = "advisory lock held by another session";
    return Outcome::kFail;
  }
  return Outcome::kOk;
}

LockResult PgAdvisoryLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result = AttemptUntil(deadline, config_.retry_delay, [&](std::string* detail) {
    return Attempt(key, deadline, detail);
  });
  if (result.outcome == Outcome::kOk) {
    result.lease.key = key;
    result.lease.token = "backend-" + std::to_string(conn_.backend_pid());
    result.lease.validity = Millis::max();
    result.lease.acquired_at = MonotonicNow();
  }
  return result;
}

LockResult PgAdvisoryLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (!conn_.connected() || lease.token != "backend-" + std::to_string(conn_.backend_pid())) {
    // The session that held the lock is gone, and its locks with it (or they will be, when
    // the server notices the closed connection). Nothing is left to unlock.
    result.outcome = Outcome::kFail;
    result.detail = "the locking session is gone";
    return result;
  }
  SqlResult r = conn_.Query("SELECT pg_advisory_unlock(" + std::to_string(AdvisoryKey(lease.key)) +
                                ")",
                            config_.command_timeout);
  if (r.outcome != Outcome::kOk) {
    result.outcome = r.outcome;
    result.detail = "pg_advisory_unlock: " + r.error;
    return result;
  }
  bool released = r.sqlstate.empty() && !r.rows.empty() && !r.rows[0].empty() && r.rows[0][0] == "t";
  result.outcome = released ? Outcome::kOk : Outcome::kFail;
  result.detail = released ? "" : (r.error.empty() ? "the session did not hold the lock" : r.error);
  return result;
}

}  // namespace locklab::locks
