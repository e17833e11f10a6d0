// The single-instance Redis locks of DESIGN.md 3.1, each as people write it:
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

class SingleNodeLock : public Lock {
 public:
  SingleNodeLock(const LockConfig& config, AcquireStyle acquire, ReleaseStyle release);
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;

 protected:
  // One attempt: kOk taken, kFail held by someone, kUnknown outcome unknown.
  Outcome TryOnce(const std::string& key, const std::string& token, std::string* detail);
  // One attempt of Acquire's retry loop; on kOk it fills what the algorithm knows about the
  // lease (validity, fence). Subclasses that take a lock differently override this only.
  virtual Outcome Attempt(const std::string& key, const std::string& token, Lease* lease,
                          std::string* detail);
  LockConfig config_;
  AcquireStyle acquire_;
  ReleaseStyle release_;
  RedisConnection conn_;
};

// The Lua compare-and-delete (redis.io "Distributed Locks with Redis").
extern const char kCompareAndDeleteScript[];

}  // namespace locklab::locks
