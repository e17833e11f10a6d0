// The single-instance Redis locks of docs/design.md 3.1, each as people write it:
//   setnx          SETNX key token; DEL to release (no expiry at all)
//   setnx-expire   SETNX then PEXPIRE as two commands; DEL to release
//   set-nx-px-del  SET key token NX PX ttl; plain DEL to release (deletes anyone's key)
//   set-nx-px-lua  SET key token NX PX ttl; Lua compare-and-delete release
// Thread-compatible: one thread per lock object.
#pragma once

#include <memory>

#include "locks/lock.h"
#include "locks/redis_connection.h"

namespace locklab::locks {

enum class AcquireStyle { kSetnx, kSetnxThenExpire, kSetNxPx };
enum class ReleaseStyle { kDel, kCompareAndDelete };

// One deliberate bug for a lock mutant (locks/mutants.h), never set by a reference lock and
// never a user knob: each value is one small change to the code below, named by its mutant.
enum class SingleNodeMutation {
  kNone,
  kGetCompareDel,        // release: GET, compare in the client, then DEL (two commands)
  kSetnxPexpirePoint,    // announce a pause point between SETNX and PEXPIRE
  kUnknownAsOk,          // an unknown SET outcome (timeout, lost connection) taken as acquired
  kErrorAsOk,            // an error reply to SET (OOM, READONLY, LOADING) taken as acquired
  kTtlWholeSeconds,      // SET ... EX floor(ttl / 1 s), min 1 s; the lease still says ttl
  kReleaseIgnoresReply,  // release is ok whenever a reply arrived, whatever it says
};

class SingleNodeLock : public Lock {
 public:
  SingleNodeLock(const LockConfig& config, AcquireStyle acquire, ReleaseStyle release);
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;
  // For mutants only (locks/mutants.cc); the reference locks keep kNone.
  void set_mutation(SingleNodeMutation m) { mutation_ = m; }

 protected:
  // One attempt: kOk taken, kFail held by someone, kUnknown outcome unknown.
  Outcome TryOnce(const std::string& key, const std::string& token, std::string* detail);
  // One attempt of Acquire's retry loop; on kOk it fills what the algorithm knows about the
  // lease (validity, fence). Subclasses that take a lock differently override this only.
  virtual Outcome Attempt(const std::string& key, const std::string& token, Lease* lease,
                          std::string* detail);
  // The release of the mutant get-compare-del (GET, compare, pause point, DEL).
  LockResult ReleaseGetCompareDel(const Lease& lease);
  LockConfig config_;
  AcquireStyle acquire_;
  ReleaseStyle release_;
  RedisConnection conn_;
  SingleNodeMutation mutation_ = SingleNodeMutation::kNone;
};

// The pause points the mutants announce (LockInfo::points).
extern const char kPointBetweenGetAndDel[];      // "mutant-between-get-and-del"
extern const char kPointBetweenSetnxAndExpire[];  // "mutant-between-setnx-and-expire"

// The Lua compare-and-delete (redis.io "Distributed Locks with Redis").
extern const char kCompareAndDeleteScript[];

}  // namespace locklab::locks
