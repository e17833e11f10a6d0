#include "locks/pg_advisory_lock.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "locks/knobs.h"
#include "locks/postgres_connection.h"

namespace locklab::locks {

namespace {
constexpr char kLockNotAvailable[] = "55P03";

// Whether a one-row boolean answer (pg_try_advisory_lock, pg_advisory_unlock) is true.
bool AnsweredTrue(const SqlResult& r) {
  return !r.rows.empty() && !r.rows[0].empty() && r.rows[0][0] == "t";
}

// The lock's one session, on the lock's node.
std::unique_ptr<SqlSession> PostgresSession(const LockConfig& config) {
  return std::make_unique<PostgresConnection>(
      SqlSessionLock::SessionNode(config),
      PostgresOptions{"locklab", "postgres", config.connect_timeout});
}
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
    : SqlSessionLock(config, PostgresSession(config), "backend-"), options_(options) {}

SqlSessionLock::Statement PgAdvisoryLock::SessionSettings() const {
  if (options_.idle_session_timeout.count() <= 0) return {};
  return {"SET idle_session_timeout = " + std::to_string(options_.idle_session_timeout.count()),
          config().command_timeout, "SET idle_session_timeout: "};
}

SqlSessionLock::Statement PgAdvisoryLock::LockStatement(const std::string& key,
                                                        Nanos deadline) const {
  const std::string k = std::to_string(AdvisoryKey(key));
  if (options_.wait == "try") {
    return {"SELECT pg_try_advisory_lock(" + k + ")", config().command_timeout, ""};
  }
  // lock_timeout 0 means "wait forever": the server waits at least 1 ms. The client waits
  // that long plus a command timeout for the answer.
  Millis wait = std::max(Millis(1), std::chrono::duration_cast<Millis>(deadline - MonotonicNow()));
  return {
      "SET lock_timeout = " + std::to_string(wait.count()) + "; SELECT pg_advisory_lock(" + k + ")",
      config().command_timeout + wait, ""};
}

Outcome PgAdvisoryLock::LockAnswer(const std::string&, const SqlResult& answer,
                                   std::string* detail) {
  if (!answer.sqlstate.empty()) {
    *detail = answer.sqlstate == kLockNotAvailable ? "advisory lock held by another session"
                                                   : answer.sqlstate + " " + answer.error;
    return Outcome::kFail;
  }
  if (options_.wait == "try" && !AnsweredTrue(answer)) {
    *detail = "advisory lock held by another session";
    return Outcome::kFail;
  }
  return Outcome::kOk;
}

SqlSessionLock::Statement PgAdvisoryLock::ReleaseStatement(const Lease& lease) const {
  return {"SELECT pg_advisory_unlock(" + std::to_string(AdvisoryKey(lease.key)) + ")",
          config().command_timeout, "pg_advisory_unlock: "};
}

Outcome PgAdvisoryLock::ReleaseAnswer(const SqlResult& answer, std::string* detail) const {
  if (answer.sqlstate.empty() && AnsweredTrue(answer)) {
    detail->clear();
    return Outcome::kOk;
  }
  *detail = answer.error.empty() ? "the session did not hold the lock" : answer.error;
  return Outcome::kFail;
}

}  // namespace locklab::locks
