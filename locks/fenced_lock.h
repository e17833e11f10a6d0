// FencedLock (`fenced`): set-nx-px-lua that also issues a fencing token (Kleppmann 2016).
//
// Acquire runs one Lua script on the lock node: SET key token NX PX ttl and, only if that
// succeeded, INCR "fence:<key>"; the INCR result is Lease::fence. Doing both in one script
// matters: with two commands a client paused between its SET and its INCR could draw a
// token newer than the next holder's while its own lock has already expired (the knob
// atomic_fence=false builds exactly that, for comparison). Release is compare-and-delete.
//
// The lock alone is no safer than set-nx-px-lua: a paused holder still overlaps the next
// one. The safety is at the resource, which must check the token and write in one atomic
// step (workloads/fenced_resource.h) and reject a token older than the newest it accepted.
// The counter is a plain key on the lock node, so it is only as durable as that node (a
// restart without persistence resets it: KNOWN-ANSWERS "V if the counter restarts empty").
//
// Thread-compatible: one thread per lock object.
#pragma once

#include "locks/single_node_locks.h"

namespace locklab::locks {

struct FencedOptions {
  bool atomic_fence = true;  // SET and INCR in one Lua script (true) or as two commands
  // Mutant fence-read-then-set (locks/mutants.h) only, never a knob: after the SET, the
  // token is drawn as GET fence:<key>, pause point, SET fence:<key> value+1, so two
  // holders can draw the same token.
  bool fence_read_then_set = false;
};

extern const char kPointBetweenFenceGetAndSet[];  // "mutant-between-fence-get-and-set"
Status ParseFencedOptions(const LockConfig& config, FencedOptions* out);

// The counter key of a lock key: "fence:<key>".
std::string FenceKey(const std::string& lock_key);

class FencedLock : public SingleNodeLock {
 public:
  FencedLock(const LockConfig& config, const FencedOptions& options);

 protected:
  Outcome Attempt(const std::string& key, const std::string& token, Lease* lease,
                  std::string* detail) override;

 private:
  // One attempt: kOk with *fence set, kFail held, kUnknown outcome unknown.
  Outcome TryFenced(const std::string& key, const std::string& token, int64_t* fence,
                    std::string* detail);
  FencedOptions options_;
};

}  // namespace locklab::locks
