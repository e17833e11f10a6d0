// DbRowLock (`db-row`): the database lock of articles/002_f9afaf25e46500fc.txt on MariaDB.
//
// The article (lines 128-133: the table; 224-276: createLock; 282-318 and 336-372: lock;
// 380-396: unlock) makes a lock resource by INSERTing a row with a UNIQUE transaction_id
// (a duplicate key means it already exists), locks it with `SELECT * FROM distributed_lock
// WHERE transaction_id = ? FOR UPDATE` inside an open transaction, and releases it with
// COMMIT on the same connection. Here: the lab's mariadbd (harness/lab_servers.h) has the
// table `locklab.distributed_lock`; Acquire INSERTs the row once per key (autocommit,
// duplicate ignored), then START TRANSACTION + SELECT ... FOR UPDATE WAIT n on its one
// session; Release is COMMIT. The owner is the session: Lease::token is "session-<id>".
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

#include "locks/lock.h"
#include "locks/mariadb_connection.h"

namespace locklab::locks {

struct DbRowOptions {
  std::string transaction = "explicit";  // explicit (START TRANSACTION) or autocommit
  int64_t wait_timeout_s = 0;            // SET SESSION wait_timeout; 0 = server default
};

Status ParseDbRowOptions(const LockConfig& config, DbRowOptions* out);

// The article's table, created by the lab server's bootstrap.
extern const char kDistributedLockTableSql[];

class DbRowLock : public Lock {
 public:
  DbRowLock(const LockConfig& config, const DbRowOptions& options);
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;

 private:
  // One attempt waiting at most `wait` on the server (0 = NOWAIT): kOk granted, kFail
  // refused, kUnknown outcome unknown.
  Outcome Attempt(const std::string& key, int64_t wait_s, Nanos deadline, std::string* detail);
  // The session set-up after a (re)connect: wait_timeout, and the key's row (createLock).
  Outcome Prepare(const std::string& key, std::string* detail);

  LockConfig config_;
  DbRowOptions options_;
  MariaDbConnection conn_;
  unsigned long prepared_session_ = 0;  // session whose wait_timeout is set
  std::set<std::string> created_;       // keys whose row exists (rows are never deleted)
};

}  // namespace locklab::locks
