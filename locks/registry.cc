// The lock registry: ids, descriptions and knobs (locklab list), and MakeLock.
#include <algorithm>

#include "locks/article_locks.h"
#include "locks/db_row_lock.h"
#include "locks/driver_lock.h"
#include "locks/etcd_lease_lock.h"
#include "locks/fenced_lock.h"
#include "locks/lock.h"
#include "locks/mutants.h"
#include "locks/pg_advisory_lock.h"
#include "locks/redlock.h"
#include "locks/single_node_locks.h"
#include "locks/watchdog_lock.h"
#include "locks/zk_lock.h"

namespace locklab::locks {

// A lock that keeps its own lifetime (a fixed key lifetime, a session, a transaction): the
// lab's --ttl does not reach it (LockInfo::uses_lab_ttl).
static LockInfo NoLabTtl(LockInfo info) {
  info.uses_lab_ttl = false;
  return info;
}

const std::vector<LockInfo>& ListLocks() {
  static const std::vector<LockInfo> kLocks = {
      {"setnx", "SETNX with no expiry, DEL to release: a crashed holder blocks everyone forever",
       {}, 1},
      {"setnx-expire",
       "SETNX then PEXPIRE as two commands, DEL to release: a crash between them leaves a key "
       "that never expires; DEL removes whoever holds the key",
       {}, 1},
      {"set-nx-px-del",
       "SET NX PX (atomic expiry), plain DEL to release: a late DEL deletes the next holder's lock",
       {}, 1},
      {"set-nx-px-lua",
       "SET NX PX, Lua compare-and-delete release: the canonical single-instance lock",
       {}, 1},
      {"watchdog",
       "set-nx-px-lua plus a renewal thread in the client process (Redisson style): every "
       "renew_period an owner-checked PEXPIRE; a renewal that fails or finds the key gone is a "
       "`renew` fail/info event and stops renewing. Survives a long critical section, not a "
       "process pause > TTL (the thread is frozen too). Pause point watchdog-renewal-due: the "
       "renewal thread, woken to renew, before it sends the renewal",
       {{"renew_period_ms", "0", "time between renewals; 0 = TTL/3"},
        {"renew_ttl_ms", "0", "the TTL each renewal sets (PEXPIRE); 0 = the lock TTL"}},
       1, Backend::kRedis, {kPointRenewalDue}},
      {"redlock",
       "Redlock (redis.io): SET NX PX on N independent nodes, quorum N/2+1, validity = TTL - "
       "elapsed - (TTL*drift_factor + drift_constant); a failed attempt is undone on all nodes; "
       "release is compare-and-delete on all nodes. Pause point redlock-replies-in-flight sits "
       "between sending the SETs and reading the replies (an armed stop lands on an attempt whose "
       "unread replies grant a quorum)",
       {{"node_timeout_ms", "0", "per-node command timeout; 0 = the common command timeout"},
        {"drift_factor", "0.01", "clock drift allowance as a fraction of the TTL"},
        {"drift_constant_ms", "2", "constant added to the drift allowance (the +2 ms term)"},
        {"retry_count", "0", "attempts per acquire; 0 = keep trying until the acquire deadline"},
        {"retry_jitter_ms", "20",
         "random extra wait in [0, jitter] after retry_delay between attempts"},
        {"mode", "parallel",
         "parallel (send every SET, then read the replies) or sequential (one node at a time)"},
        {"recheck_validity", "true",
         "read the clock after the replies (true) or right after sending (false: a pause while "
         "the replies are in flight is not counted and an expired lock is returned)"},
        {"clock", "monotonic",
         "clock for elapsed time: monotonic or wall (a stepped wall clock changes validity)"},
        {"max_extensions", "0", "how many times Renew may extend a lease; 0 = no extension"}},
       5, Backend::kRedis, {"redlock-replies-in-flight"}},
      {"fenced",
       "set-nx-px-lua plus a fencing token from INCR fence:<key> on the lock node (one Lua "
       "script with the SET); the workload's write becomes a Lua check-and-write on the resource "
       "that rejects a token older than the newest accepted (fail stale-fence)",
       {{"atomic_fence", "true",
         "SET and INCR in one script (true) or as two commands (false: a client paused between "
         "them can draw a newer token than the next holder)"}},
       1},
      NoLabTtl({"article-redislockutil",
       "as published in articles/004_3b37561fd22cc827.txt (RedisLockUtil, file lines 96-166 = its "
       "listing lines 1-71): SET NX PX with a 5 ms "
       "key lifetime (line 6), 100 ms polling (line 41), 1 s wait on the wall clock (lines 9, "
       "25, 35-36), Lua compare-and-delete. Wrong: the key expires 5 ms after it is set, so "
       "almost any critical section overlaps the next holder's; the lab --ttl is not used",
       {{"expire_ms", "5", "EXPIRE_TIME, the key lifetime (PX)"},
        {"poll_ms", "100", "Thread.sleep between attempts"},
        {"timeout_ms", "1000", "TIME_OUT, how long lock() tries (the acquire deadline is ignored)"}},
       1}),
      {"article-blocking",
       "as published in articles/003_aa1558153cde98e6.txt (blocking lock(), file lines 69-81; "
       "unlock() 95-103): "
       "SET NX PX in a loop that counts its timeout down by the sleep time only, then returns "
       "normally: lock() is void, so after a timeout its caller runs the critical section "
       "without the lock. Key lifetime = the lab --ttl (DEFAULT_EXPIRE_TIME is not shown)",
       {{"sleep_ms", "100", "DEFAULT_SLEEP_TIME between attempts (value not shown in the article)"},
        {"timeout_ms", "0", "lock()'s timeout argument; 0 = the time left to the acquire deadline"}},
       1},
      NoLabTtl({"article-watchdog",
       "as published in articles/001_9d6267c7dd2be9e5.txt (normalRedisLock file lines 29-85, "
       "WatchDogThread 90-143): SET NX "
       "EX 10 in a busy loop; a fixed-rate renewal (first after 1 s, then every 5 s) whose script "
       "sets TTL to remaining TTL + 10 s (lines 102-104, so the TTL grows); on a renewal error "
       "an unconditional EXPIRE 30 s of whoever holds the key (line 138); release is a DEL "
       "without an owner check (line 80) and does not cancel the renewal. The lab --ttl is not used",
       {{"lock_s", "10", "the acquire's EX seconds (line 43)"},
        {"renew_add_s", "10", "seconds the renewal script adds to the remaining TTL (line 130)"},
        {"initial_delay_ms", "1000", "first renewal after (line 53)"},
        {"period_ms", "5000", "renewal period, fixed rate (line 53)"},
        {"fallback_expire_s", "30", "the catch block's blind EXPIRE (line 138)"},
        {"spin_ms", "0", "sleep between acquire attempts (the article's loop has none)"}},
       1}),
      NoLabTtl({"db-row",
       "the database lock of articles/002_f9afaf25e46500fc.txt on MariaDB: a row with a "
       "UNIQUE key (INSERT, duplicate = exists), SELECT ... FOR UPDATE in an open "
       "transaction, release = COMMIT. No TTL: the lock lives as long as the transaction "
       "(commit, connection end, server kill of an idle session, server restart); the lab "
       "--ttl is not used. A waiter blocks up to the acquire deadline (WAIT n)",
       {{"transaction", "explicit",
         "explicit (START TRANSACTION, the article's intent) or autocommit (its lock() as "
         "printed: no setAutoCommit(false), the row lock ends with the SELECT)"},
        {"wait_timeout_s", "0",
         "SET SESSION wait_timeout: the server kills a session idle this long (a paused "
         "holder loses its lock); 0 = the server default, 8 h"}},
       1, Backend::kMariadb}),
      NoLabTtl({"pg-advisory",
       "a PostgreSQL session-level advisory lock: pg_advisory_lock(hash of the key) on one "
       "session, release = pg_advisory_unlock on the same session. No TTL: the lock lives as "
       "long as the session (connection end, server kill of an idle session, server "
       "restart); the lab --ttl is not used. A waiter blocks up to the acquire deadline "
       "(lock_timeout)",
       {{"wait", "block",
         "block (SET lock_timeout to the time left, then pg_advisory_lock: the server queues "
         "the waiter) or try (pg_try_advisory_lock every retry_delay)"},
        {"idle_session_timeout_ms", "0",
         "SET idle_session_timeout: the server ends a session idle this long (a paused holder "
         "loses its lock); 0 = off, the server default"}},
       1, Backend::kPostgres}),
      {"etcd-lease",
       "etcd's v3 lock API over its JSON gateway on a 3-member etcd cluster: a lease (the lab "
       "TTL rounded up to whole seconds) kept alive every TTL/3 by a thread, /v3/lock/lock "
       "with it, the lock key's create revision as the fencing token (checked by the fenced "
       "resource), release = /v3/lock/unlock then lease revoke. Consensus survives member "
       "restarts; a paused holder still outlives its lease (fencing saves the resource)",
       {{"fencing", "true",
         "hand out the key's create revision as the fencing token (false: plain writes)"},
        {"keepalive_ms", "0", "time between lease keep-alives; 0 = TTL/3"}},
       3, Backend::kEtcd},
      {"zk-lock",
       "ZooKeeper's lock recipe on the C client against a 3-member ensemble: one session per "
       "client (its timeout = the lab TTL: the session is the lease), an ephemeral sequential "
       "node /locklab/<key>/lock-<session>-N, lowest wins, else watch the predecessor; release "
       "deletes the node. A holder paused past its session timeout loses the lock while it "
       "still acts",
       {{"session_timeout_ms", "0", "the session timeout asked for; 0 = the lab TTL"}},
       3, Backend::kZookeeper},
      {"zk-lock-fenced",
       "zk-lock with its node's czxid (the ensemble's transaction id that created it) as the "
       "fencing token, checked by the fenced resource (a paused holder's late write is "
       "rejected as stale-fence)",
       {{"session_timeout_ms", "0", "the session timeout asked for; 0 = the lab TTL"}},
       3, Backend::kZookeeper},
  };
  return kLocks;
}

const LockInfo* FindLock(const std::string& id) {
  if (IsDriverId(id)) return &DriverLockInfo();  // any driver:PATH (the path is checked later)
  if (IsMutantId(id)) return FindMutant(id);     // mutant:NAME, not in ListLocks (mutants.h)
  for (const auto& l : ListLocks()) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

Status MakeLock(const LockConfig& config, std::unique_ptr<Lock>* out) {
  const LockInfo* info = FindLock(config.algorithm);
  if (info == nullptr) {
    return Status::Usage("lock '" + config.algorithm + "': unknown lock id (see `locklab list`)");
  }
  for (const auto& knob : config.knobs) {
    // Not a structured binding: clang 14 (the fuzz builds) cannot capture one in a lambda.
    const std::string& name = knob.first;
    bool known = std::any_of(info->knobs.begin(), info->knobs.end(),
                             [&](const KnobInfo& k) { return k.name == name; });
    if (!known) return Status::Usage("lock '" + config.algorithm + "': unknown knob '" + name + "'");
  }
  if (config.nodes.empty()) return Status::Usage("lock '" + config.algorithm + "': no nodes");
  if (config.ttl.count() <= 0) return Status::Usage("lock: ttl must be > 0 ms");
  const std::string& id = config.algorithm;
  if (IsMutantId(id)) {
    return MakeMutant(config, out);
  } else if (IsDriverId(id)) {
    DriverOptions o;
    Status s = ParseDriverOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<DriverLock>(config, o);
  } else if (id == "setnx") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetnx, ReleaseStyle::kDel);
  } else if (id == "setnx-expire") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetnxThenExpire,
                                            ReleaseStyle::kDel);
  } else if (id == "set-nx-px-del") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetNxPx, ReleaseStyle::kDel);
  } else if (id == "set-nx-px-lua") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetNxPx,
                                            ReleaseStyle::kCompareAndDelete);
  } else if (id == "watchdog") {
    WatchdogOptions o;
    Status s = ParseWatchdogOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<WatchdogLock>(config, o);
  } else if (id == "redlock") {
    RedlockOptions o;
    Status s = ParseRedlockOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<RedlockLock>(config, o);
  } else if (id == "fenced") {
    FencedOptions o;
    Status s = ParseFencedOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<FencedLock>(config, o);
  } else if (id == "article-redislockutil") {
    RedisLockUtilOptions o;
    Status s = ParseRedisLockUtilOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<ArticleRedisLockUtilLock>(config, o);
  } else if (id == "article-blocking") {
    BlockingOptions o;
    Status s = ParseBlockingOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<ArticleBlockingLock>(config, o);
  } else if (id == "article-watchdog") {
    ArticleWatchdogOptions o;
    Status s = ParseArticleWatchdogOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<ArticleWatchdogLock>(config, o);
  } else if (id == "db-row") {
    DbRowOptions o;
    Status s = ParseDbRowOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<DbRowLock>(config, o);
  } else if (id == "pg-advisory") {
    PgAdvisoryOptions o;
    Status s = ParsePgAdvisoryOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<PgAdvisoryLock>(config, o);
  } else if (id == "etcd-lease") {
    EtcdLeaseOptions o;
    Status s = ParseEtcdLeaseOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<EtcdLeaseLock>(config, o);
  } else if (id == "zk-lock" || id == "zk-lock-fenced") {
    ZkLockOptions o;
    Status s = ParseZkLockOptions(config, &o);
    if (!s.ok()) return s;
    *out = std::make_unique<ZkLock>(config, o);
  } else {
    return Status::Usage("lock '" + id + "': listed but not built");
  }
  return Status::Ok();
}

}  // namespace locklab::locks
