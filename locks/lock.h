// Lock: the one interface every lock algorithm implements (docs/design.md 3.1).
//
// A lock is built from a LockConfig (endpoints, TTL, retry policy, algorithm knobs) by
// MakeLock(). Acquire() retries until the deadline; every call returns ok, fail (certainly
// did not take effect) or unknown (a timeout or dropped connection: it may have). A Lease
// carries the owner token, the validity the algorithm believes in and, where the algorithm
// issues one, a fencing token. Knobs that decide safety are explicit config with documented
// defaults (LockInfo lists them), never hidden constants.
//
// A Lock is used by one thread at a time, except that an algorithm may run its own renewal
// thread internally (watchdog). Such a thread reports what it does through
// LockConfig::on_event, so the callback must be thread-safe; it is never called after the
// Lock's destructor returned (the destructor joins the thread); the same holds for
// pause_point and point_armed when the lock announces a point from that thread (watchdog's
// watchdog-renewal-due). Locks never know about faults: faults act from outside, the
// way production does; the only hook is PausePoint, through which the client process can
// stop itself at a named point when the harness armed it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "locks/backend.h"
#include "locks/lease_ttl.h"
#include "locks/outcome.h"

namespace locklab::locks {

struct Lease {
  std::string key;
  std::string token;      // the owner token written to the server(s)
  Millis validity{0};     // how long the algorithm believes the lock is valid from acquired_at
  Nanos acquired_at{0};   // MonotonicNow() when Acquire returned
  int64_t fence = -1;     // fencing token, -1 when the algorithm issues none
};

struct LockResult {
  Outcome outcome = Outcome::kFail;
  // kOk: the lease. kUnknown with a non-empty lease.token: the lock learned that it may now
  // hold lease.key with that token (a lock driver's `ok` that came after the deadline); the
  // caller never held it, and should Release(lease) at once. Otherwise unused.
  Lease lease;
  std::string detail;     // why, for logs and history values ("key held", "timeout on ...")
};

// Called by algorithms at named points ("redlock-replies-in-flight"). May stop the process.
using PausePoint = std::function<void(const char* point)>;
// Whether a stop is armed at `point`, without taking it. Lets an algorithm aim an armed stop
// at the moment the schedule is about (Redlock stops only on an attempt whose unread replies
// grant a quorum) and skip that work when nothing is armed. Empty: every call of
// pause_point is made.
using PointArmed = std::function<bool(const char* point)>;

// History events a lock emits on its own, outside Acquire/Release: a renewal thread's
// `renew` invoke / ok / fail / info (docs/design.md 3.2). type: invoke | ok | fail | info.
// `worker` (>= 1) names the thread that emits: a history is a set of sequential processes
// (Jepsen), each with at most one pending operation, and a renewal thread runs concurrently
// with the client's own acquire/read/write/release, so the client records each worker as a
// logical process of its own (harness/trial/client_main.cc: client p, worker w -> p + 1000 * w).
// Workers that run at the same time have different numbers. Must be thread-safe: it is
// called from the lock's renewal threads.
using LockEventFn = std::function<void(int worker, const char* type, const char* f,
                                       const std::string& key, const nlohmann::json& value)>;

struct LockConfig {
  std::string algorithm;
  std::vector<Endpoint> nodes;     // lock servers; most algorithms use nodes[0]
  Millis ttl{kDefaultLeaseTtl};    // key lifetime (PX / EXPIRE; locks/lease_ttl.h)
  Millis retry_delay{20};          // wait between acquire attempts
  Millis connect_timeout{200};
  Millis command_timeout{200};     // per-command (per-node for redlock) timeout
  std::map<std::string, std::string> knobs;  // algorithm-specific, validated by MakeLock
  std::vector<std::string> driver_args;      // driver:PATH locks only: the program's arguments
  PausePoint pause_point;          // may be empty
  PointArmed point_armed;          // may be empty
  LockEventFn on_event;            // may be empty: renewals then go unrecorded
};

// The acquire loop of a lock whose every attempt is one certain-or-uncertain step (db-row,
// pg-advisory): calls `attempt` until it returns kOk, or until another try after
// `retry_delay` would start past `deadline` (it runs at least once). The outcome is kOk, else
// kUnknown when any attempt was unknown, else kFail; `detail` is the last attempt's. The
// caller fills the Lease of a kOk.
LockResult AttemptUntil(Nanos deadline, Millis retry_delay,
                        const std::function<Outcome(std::string* detail)>& attempt);

class Lock {
 public:
  virtual ~Lock() = default;
  // Tries until `deadline` (MonotonicNow time). kFail when the deadline passed with every
  // attempt certainly refused; kUnknown when some attempt's outcome is unknown.
  virtual LockResult Acquire(const std::string& key, Nanos deadline) = 0;
  virtual LockResult Release(const Lease& lease) = 0;
  virtual bool SupportsRenew() const { return false; }
  virtual LockResult Renew(const Lease& lease);
};

struct KnobInfo {
  std::string name;
  std::string default_value;
  std::string description;
};

struct LockInfo {
  std::string id;
  std::string description;
  std::vector<KnobInfo> knobs;  // beyond the common ttl / retry_delay / timeouts
  int default_nodes = 1;
  // The servers the lab starts as this lock's nodes (locks/backend.h): the lab Redis,
  // mariadbd, a PostgreSQL postmaster, members of one etcd cluster or of one ZooKeeper
  // ensemble. Text only where it is printed (BackendName: `locklab list --json`). The faults
  // that apply to the lock follow from it: those its servers offer what they need
  // (SurfacesOf, faults::FaultFits); a Redis-specific fault such as failover or a
  // libfaketime clock fault means nothing to a database lock.
  Backend backend = Backend::kRedis;
  // Pause points the lock itself announces through LockConfig::pause_point, besides the
  // workload's (after-acquire, before-write, after-release): a fault may arm any of them.
  std::vector<std::string> points;
  // For a lock mutant (a deliberately broken variant, `mutant:NAME`): the reference lock it
  // was made from, so a kill can be judged against that lock in the same conditions. Empty
  // for every other lock. It says what the lock was built from, never what it should do.
  std::string mutant_of;
  // For a mutant's own pause points (those its reference does not have): the reference's
  // point at the same phase of the cycle, where a fault armed at the own point is armed
  // when the reference runs the same scenario (hunt --baseline). A point inside the
  // acquire stands in as after-acquire (the reference's acquire is one step, so this is the
  // nearest, and it is the stricter test: the reference then holds the lock while
  // stopped); a point inside the release as after-release.
  std::map<std::string, std::string> stand_in_points;
  // Whether the lab's --ttl sets the lock's lifetime. False for a lock that keeps its own (a
  // fixed key lifetime, a session, a transaction; its description says "the lab --ttl is not
  // used"): a run that scales the TTL leaves such a lock's rows alone.
  bool uses_lab_ttl = true;
};


const std::vector<LockInfo>& ListLocks();
const LockInfo* FindLock(const std::string& id);

// Builds the algorithm named by config.algorithm. Errors name the unknown id or knob.
Status MakeLock(const LockConfig& config, std::unique_ptr<Lock>* out);

}  // namespace locklab::locks
