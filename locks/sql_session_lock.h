// SqlSessionLock: the base of the locks that hold their lock in one SQL server session
// (`db-row` on MariaDB, `pg-advisory` on PostgreSQL). It owns the session, the acquire loop
// up to the deadline, the mapping of every statement to ok / fail / unknown, the owner token
// and the release; a subclass only says its SQL and what the server's answers mean.
//
// The owner is the session: Lease::token is the subclass's prefix and the session's id
// ("session-42", "backend-4711"). Such a lock has no TTL: it lasts as long as the session,
// which ends with the connection (a crashed client's kernel closes the socket and the server
// drops the lock at once), when the server kills an idle session, or when the server
// restarts (the lock lived in its memory: the old holder still believes it holds until its
// next statement fails). So the lab's --ttl is not used, and the Lease's validity is
// unbounded (Millis::max()).
//
// Acquire(key, deadline) makes attempts every retry_delay until one is granted or another
// would start past the deadline (AttemptUntil: ok, else unknown if any attempt was, else
// fail). One attempt:
//   1. SessionSettings(), once per server session (after every reconnect);
//   2. BeforeLock(key), what must precede the lock statement (db-row: its row, START
//      TRANSACTION);
//   3. LockStatement(key, deadline), then LockAnswer() on the server's answer.
// Steps 1 and 2 hold no lock, so any outcome but ok there is a certain fail (an unknown one
// has closed the session, and the server ends whatever it began). The lock statement's
// outcome is the attempt's: with no answer in time it is unknown (timeouts are unknown,
// never fail), and the session is closed, so the server drops anything it granted.
//
// Release(lease) is fail ("the locking session is gone") when the lease's session is no
// longer this lock's open session: the server has ended it, or will when it notices the
// closed connection, and nothing is left to release. Otherwise ReleaseStatement(): no answer
// is unknown, an answer goes to ReleaseAnswer().
//
// Thread-compatible: one thread per lock object (no renewal thread: nothing to renew).
#pragma once

#include <memory>
#include <string>

#include "locks/lock.h"
#include "locks/sql_session.h"

namespace locklab::locks {

class SqlSessionLock : public Lock {
 public:
  LockResult Acquire(const std::string& key, Nanos deadline) final;
  LockResult Release(const Lease& lease) final;

  // The server a session lock talks to: config.nodes[0] (the default Endpoint when empty).
  static Endpoint SessionNode(const LockConfig& config);

 protected:
  // One statement of the lock, with how long to wait for its answer and the words a
  // failure's detail starts with ("COMMIT: "; may be empty).
  struct Statement {
    std::string sql;  // "" = nothing to send
    Millis timeout{0};
    std::string label;
  };

  // `session` is not connected yet; `token_prefix` names the kind of session ("session-").
  SqlSessionLock(const LockConfig& config, std::unique_ptr<SqlSession> session,
                 std::string token_prefix);

  // Settings for a new server session (sql "" = none). Any failure fails the attempt.
  virtual Statement SessionSettings() const = 0;
  // Called before each lock statement: kOk to go on; anything else fails the attempt, with
  // `*detail` set. The default does nothing.
  virtual Outcome BeforeLock(const std::string& key, std::string* detail);
  // The statement that takes the lock on `key`, waiting on the server until about `deadline`.
  virtual Statement LockStatement(const std::string& key, Nanos deadline) const = 0;
  // The server answered the lock statement: kOk granted, or kFail refused with `*detail`.
  virtual Outcome LockAnswer(const std::string& key, const SqlResult& answer,
                             std::string* detail) = 0;
  // The statement that releases `lease` on this session.
  virtual Statement ReleaseStatement(const Lease& lease) const = 0;
  // The server answered the release statement: kOk released, or kFail with `*detail`.
  virtual Outcome ReleaseAnswer(const SqlResult& answer, std::string* detail) const = 0;

  const LockConfig& config() const { return config_; }
  SqlSession& session() { return *session_; }

 private:
  Outcome Attempt(const std::string& key, Nanos deadline, std::string* detail);
  std::string OwnerToken() const;

  LockConfig config_;
  std::unique_ptr<SqlSession> session_;
  std::string token_prefix_;
  uint64_t prepared_session_ = 0;  // the session whose SessionSettings() ran
};

}  // namespace locklab::locks
