// Redlock (`redlock`): the multi-master algorithm of redis.io "Distributed Locks with
// Redis", with every knob that decides its safety exposed.
//
// One attempt: read the lock clock (start); SET key token NX PX ttl on every node (in
// parallel: all sent, then all replies read; or sequentially: send, read, next node), each
// bounded by the per-node timeout; read the clock again; elapsed = end - start;
// validity = ttl - elapsed - (ttl * drift_factor + drift_constant). The lock is taken when at
// least N/2+1 nodes said OK and validity > 0. Otherwise the attempt is undone on all nodes
// (compare-and-delete, also on nodes that did not answer: their SET may have landed), and
// the next attempt follows after retry_delay + a random jitter, until retry_count attempts
// were made or the Acquire deadline passed. Release is compare-and-delete on all nodes.
// Renew (when max_extensions > 0) is an owner-checked PEXPIRE ttl on all nodes, with the
// same quorum and validity rule, at most max_extensions times per lease.
//
// Between sending the SETs and reading the replies the lock calls
// config.pause_point("redlock-replies-in-flight"), so the harness can stop the client there
// (Kleppmann's schedule, docs/known-answers.md schedule 2). When config.point_armed says a stop is
// armed there, the lock first peeks (unread, via PeekReplyStart) at the replies and makes the call
// only on an attempt that a quorum granted: a stop on a losing attempt tests nothing. Where `end`
// is read decides what that pause does: with recheck_validity (the default) the clock is read after
// the replies, so a pause longer than the TTL leaves validity <= 0 and the lock is refused; without
// it the clock is read right after the SETs were sent (before the replies), so the pause is not
// counted and an already expired lock is returned.
//
// Elapsed time is measured with LockClockNow(clock) (monotonic or wall, by knob) so client
// clock faults are seen by the algorithm; tests inject RedlockOptions::clock instead.
// Parallel replies are read one node after the other, each with the per-node timeout, so an
// attempt waits at most N * node_timeout (in practice about one timeout: replies from live
// nodes are already buffered by the time a dead node's read times out).
//
// Thread-compatible: one thread per lock object (one connection per node, owned).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "base/random.h"
#include "locks/lock.h"
#include "locks/redis_connection.h"

namespace locklab::locks {

struct RedlockOptions {
  Millis ttl{1000};
  Millis node_timeout{200};     // per-node command timeout
  double drift_factor = 0.01;   // clock drift allowance, fraction of the TTL
  Millis drift_constant{2};     // + this many ms (the redis.io "+2 ms" term)
  int retry_count = 0;          // attempts per Acquire; 0 = until the Acquire deadline
  Millis retry_delay{20};       // wait between attempts ...
  Millis retry_jitter{20};      // ... plus uniform [0, retry_jitter]
  bool parallel = true;         // send all SETs before reading any reply
  bool recheck_validity = true; // read the clock after the replies (true) or before them
  LockClockKind clock_kind = LockClockKind::kMonotonic;
  int max_extensions = 0;       // Renew allowed this many times per lease; 0 = no Renew
  std::function<Nanos()> clock; // empty = LockClockNow(clock_kind); tests inject a fake
  // Mutant quorum-off-by-one (locks/mutants.h) only, never a knob: quorum N/2, not N/2+1.
  bool quorum_off_by_one = false;
};
Status ParseRedlockOptions(const LockConfig& config, RedlockOptions* out);

class RedlockLock : public Lock {
 public:
  RedlockLock(const LockConfig& config, RedlockOptions options);
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;
  bool SupportsRenew() const override { return options_.max_extensions > 0; }
  LockResult Renew(const Lease& lease) override;

  int quorum() const {
    return static_cast<int>(conns_.size()) / 2 + (options_.quorum_off_by_one ? 0 : 1);
  }
  // ttl - elapsed - (ttl * drift_factor + drift_constant), floored to whole ms.
  Millis Validity(Nanos elapsed) const;

 private:
  struct NodeReplies {
    std::vector<Reply> replies;  // one per node
    Nanos sent_at{0};            // clock after the last command was sent
  };
  // Sends argv (one per node) to every node, in parallel or sequentially; calls the pause
  // point `point` between sending and reading (empty: none).
  NodeReplies Broadcast(const std::vector<std::vector<std::string>>& argv, const char* point);
  // Compare-and-delete on every node; returns how many deleted our key, *unknown when some
  // node's outcome is unknown.
  int UnlockAll(const Lease& lease, bool* unknown);
  Nanos Now() const;

  LockConfig config_;
  RedlockOptions options_;
  std::vector<std::unique_ptr<RedisConnection>> conns_;
  std::map<std::string, int> extensions_;  // token -> extensions used
  Rng rng_;
};

}  // namespace locklab::locks
