// DbRowLock (`db-row`): the database lock of articles/002_f9afaf25e46500fc.txt on MariaDB.
//
// The article (lines 128-133: the table; 224-276: createLock; 282-318 and 336-372: lock;
// 380-396: unlock) makes a lock resource by INSERTing a row with a UNIQUE transaction_id
// (a duplicate key means it already exists), locks it with `SELECT * FROM distributed_lock
// WHERE transaction_id = ? FOR UPDATE` inside an open transaction, and releases it with
// COMMIT on the same connection. Here: the lab's mariadbd (harness/lab/lab_servers.h) has the
// table `locklab.distributed_lock`; Acquire INSERTs the row once per key (autocommit,
// duplicate ignored), then START TRANSACTION + SELECT ... FOR UPDATE WAIT n on its one
// session; Release is COMMIT. The owner is the session: Lease::token is "session-<id>".
// The session, the acquire loop, the outcomes and the release: locks/sql_session_lock.h.
//
// What "TTL" means here. The row lock has no expiry: it lasts as long as the transaction,
// which ends with COMMIT/ROLLBACK, with the end of the connection (a crashed client's
// kernel closes the socket and the server rolls back at once), when the server kills an
// idle session (wait_timeout, 8 h by default; knob wait_timeout_s) or when the server
// restarts (row locks are not persistent: a restarted server has no locks, while the old
// holder still believes it holds until its next statement fails). innodb_lock_wait_timeout
// (50 s by default) is not a TTL: it bounds how long a *waiter* blocks in SELECT ... FOR
// UPDATE before error 1205; here each attempt waits floor(time left to the deadline)
// seconds (WAIT n, whole seconds), and NOWAIT when less than a second is left (then retried
// every retry_delay). So the lab's --ttl is not used by this lock, and the Lease's validity
// is unbounded (Millis::max()).
//
// Outcomes: a granted SELECT is ok; error 1205/3572 (wait timeout / NOWAIT) is a certain
// refusal; a statement with no answer in time is unknown and the session is closed (the
// server then rolls back, releasing anything it held). A COMMIT with no answer is unknown.
//
// Knob transaction=autocommit runs the article's lock() literally as printed: it never
// calls setAutoCommit(false) on the lock's connection, so SELECT ... FOR UPDATE is a
// transaction of its own and the row lock is gone when the statement returns.
//
// Thread-compatible: one thread per lock object (no renewal thread: nothing to renew).
#pragma once

#include <set>
#include <string>

#include "locks/lock.h"
#include "locks/sql_session_lock.h"

namespace locklab::locks {

struct DbRowOptions {
  std::string transaction = "explicit";  // explicit (START TRANSACTION) or autocommit
  int64_t wait_timeout_s = 0;            // SET SESSION wait_timeout; 0 = server default
};

Status ParseDbRowOptions(const LockConfig& config, DbRowOptions* out);

// The article's table, created by the lab server's bootstrap.
extern const char kDistributedLockTableSql[];

class DbRowLock : public SqlSessionLock {
 public:
  DbRowLock(const LockConfig& config, const DbRowOptions& options);

 private:
  Statement SessionSettings() const override;
  // The key's row (createLock, once per key), then START TRANSACTION.
  Outcome BeforeLock(const std::string& key, std::string* detail) override;
  Statement LockStatement(const std::string& key, Nanos deadline) const override;
  Outcome LockAnswer(const std::string& key, const SqlResult& answer, std::string* detail) override;
  Statement ReleaseStatement(const Lease& lease) const override;
  Outcome ReleaseAnswer(const SqlResult& answer, std::string* detail) const override;

  bool explicit_transaction() const { return options_.transaction == "explicit"; }

  DbRowOptions options_;
  std::set<std::string> created_;  // keys whose row exists (rows are never deleted)
};

}  // namespace locklab::locks
