// PgAdvisoryLock (`pg-advisory`): a PostgreSQL session-level advisory lock, the database
// lock most PostgreSQL shops reach for instead of article 002's locked row.
//
// The key is hashed to a bigint (64-bit FNV-1a of its bytes) and locked with
// `pg_advisory_lock(k)` on the lock's one session; release is `pg_advisory_unlock(k)` on the
// same session. The owner is the session: Lease::token is "backend-<pid>" (the server
// process serving it). The session, the acquire loop, the outcomes and the release:
// locks/sql_session_lock.h. Two ways to wait, knob `wait`:
//   block: `SET lock_timeout = <time left to the deadline>` then `SELECT pg_advisory_lock(k)`;
//          the server queues the waiter and answers the moment the lock is free, or SQLSTATE
//          55P03 when the lock timeout passes (a certain refusal);
//   try:   `SELECT pg_try_advisory_lock(k)` every retry_delay until the deadline (false is a
//          certain refusal).
//
// What "TTL" means here. An advisory lock has no expiry: it lasts as long as the session,
// which ends with the connection (a crashed client's kernel closes the socket and the
// server drops its locks at once), when the server kills an idle session
// (idle_session_timeout, off by default; knob idle_session_timeout_ms) or when the server
// restarts (advisory locks live in shared memory only: a restarted server has none, while
// the old holder believes it holds until its next statement fails). So the lab's --ttl is
// not used and the Lease's validity is unbounded (Millis::max()).
//
// Outcomes: a granted lock is ok; 55P03 or a false try is fail; a statement with no answer
// in time is unknown and the session is closed (the server then drops anything it held).
// An unlock with no answer is unknown; an unlock answered false (the session did not hold
// the lock) is fail.
//
// Thread-compatible: one thread per lock object (no renewal thread: nothing to renew).
#pragma once

#include <cstdint>
#include <string>

#include "locks/lock.h"
#include "locks/sql_session_lock.h"

namespace locklab::locks {

struct PgAdvisoryOptions {
  std::string wait = "block";      // block (lock_timeout) or try (polling)
  Millis idle_session_timeout{0};  // SET idle_session_timeout; 0 = off (the default)
};

Status ParsePgAdvisoryOptions(const LockConfig& config, PgAdvisoryOptions* out);

// The advisory-lock key of a lab key: 64-bit FNV-1a as a signed bigint.
int64_t AdvisoryKey(const std::string& key);

class PgAdvisoryLock : public SqlSessionLock {
 public:
  PgAdvisoryLock(const LockConfig& config, const PgAdvisoryOptions& options);

 private:
  Statement SessionSettings() const override;
  Statement LockStatement(const std::string& key, Nanos deadline) const override;
  Outcome LockAnswer(const std::string& key, const SqlResult& answer, std::string* detail) override;
  Statement ReleaseStatement(const Lease& lease) const override;
  Outcome ReleaseAnswer(const SqlResult& answer, std::string* detail) const override;

  PgAdvisoryOptions options_;
};

}  // namespace locklab::locks
