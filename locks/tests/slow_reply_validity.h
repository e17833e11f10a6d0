// The check behind the "validity ends before the key, even after a slow reply" regression
// tests of the single-node locks and of fenced (each runs it on its own lock): the lock's
// validity counts from before the SET was sent, not from the reply (SingleNodeLock::Acquire).
// Hunt's baseline runs of set-nx-px-lua under validity = "honour" showed sub-millisecond
// overlaps before; a server paused for 150 ms makes the round trip long enough to see it.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "harness/lab/lab_cluster.h"
#include "locks/lock.h"

namespace locklab::locks {

// `lock` has a TTL of 1000 ms on `node`.
inline void ExpectValidityEndsBeforeTheKeyAfterASlowReply(harness::LabNode& node, Lock& lock) {
  ASSERT_TRUE(node.Signal(SIGSTOP));
  std::thread resume([&] {
    SleepFor(Millis(150));
    node.Signal(SIGCONT);
  });
  const Nanos sent = MonotonicNow();
  LockResult r = lock.Acquire("lock:a", MonotonicNow() + Millis(900));
  resume.join();
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
  // The key lives until at least `sent` + ttl (the lock sends after `sent`, the server sets
  // the expiry after that), so the claimed validity must end before then. (Bounding it by
  // `sent` + ttl - 1 ms, the lock's own margin, failed under ASan: the lock reads its own
  // send time a few microseconds after this test's `sent`.)
  EXPECT_LT(r.lease.acquired_at + r.lease.validity, sent + Millis(1000));
  EXPECT_LE(r.lease.validity, Millis(850)) << "the 150 ms the reply took are not valid time";
  EXPECT_GT(r.lease.validity, Millis(500));
}

}  // namespace locklab::locks
