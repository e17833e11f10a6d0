#include "locks/sql_session_lock.h"

#include <utility>

namespace locklab::locks {

SqlSessionLock::SqlSessionLock(const LockConfig& config, std::unique_ptr<SqlSession> session,
                               std::string token_prefix)
    : config_(config), session_(std::move(session)), token_prefix_(std::move(token_prefix)) {}

Endpoint SqlSessionLock::SessionNode(const LockConfig& config) {
  return config.nodes.empty() ? Endpoint{} : config.nodes[0];
}

Outcome SqlSessionLock::BeforeLock(const std::string&, std::string*) { return Outcome::kOk; }

std::string SqlSessionLock::OwnerToken() const {
  return token_prefix_ + std::to_string(session_->session_id());
}

Outcome SqlSessionLock::Attempt(const std::string& key, Nanos deadline, std::string* detail) {
  if (!session_->connected() || session_->session_id() != prepared_session_) {
    Statement settings = SessionSettings();
    if (!settings.sql.empty()) {
      SqlResult r = session_->Query(settings.sql, settings.timeout);
      if (r.outcome != Outcome::kOk || r.server_error()) {
        *detail = settings.label + r.error;
        return Outcome::kFail;  // a setting holds no lock: retrying is safe
      }
    }
    prepared_session_ = session_->session_id();
  }
  if (BeforeLock(key, detail) != Outcome::kOk) return Outcome::kFail;
  Statement lock = LockStatement(key, deadline);
  SqlResult r = session_->Query(lock.sql, lock.timeout);
  if (r.outcome != Outcome::kOk) {
    *detail = lock.label + r.error;
    return r.outcome;  // unknown: the session is closed, the server drops what it granted
  }
  return LockAnswer(key, r, detail);
}

LockResult SqlSessionLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result = AttemptUntil(deadline, config_.retry_delay, [&](std::string* detail) {
    return Attempt(key, deadline, detail);
  });
  if (result.outcome == Outcome::kOk) {
    result.lease.key = key;
    result.lease.token = OwnerToken();
    result.lease.validity = Millis::max();
    result.lease.acquired_at = MonotonicNow();
  }
  return result;
}

LockResult SqlSessionLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (!session_->connected() || lease.token != OwnerToken()) {
    result.outcome = Outcome::kFail;
    result.detail = "the locking session is gone";
    return result;
  }
  Statement release = ReleaseStatement(lease);
  SqlResult r = session_->Query(release.sql, release.timeout);
  if (r.outcome != Outcome::kOk) {
    result.outcome = r.outcome;
    result.detail = release.label + r.error;
    return result;
  }
  result.outcome = ReleaseAnswer(r, &result.detail);
  return result;
}

}  // namespace locklab::locks
