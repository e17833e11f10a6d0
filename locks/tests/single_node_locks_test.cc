// Each single-node lock against a real lab Redis node: acquire, contention, release,
// expiry, release by a non-owner, and the three outcomes across the network.
#include <signal.h>

#include "locks/lock.h"
#include "locks/tests/slow_reply_validity.h"
#include "tests/lab_fixture.h"

namespace locklab::locks {
namespace {

class SingleNodeLockTest : public testing::LabNodeTest,
                           public ::testing::WithParamInterface<std::string> {
 protected:
  std::unique_ptr<Lock> Make(const Endpoint& e, Millis ttl = Millis(1000),
                             Millis timeout = Millis(200)) {
    LockConfig c;
    c.algorithm = GetParam();
    c.nodes = {e};
    c.ttl = ttl;
    c.retry_delay = Millis(10);
    c.command_timeout = timeout;
    c.connect_timeout = timeout;
    return BuildLock(c);
  }
  bool Expires() const { return GetParam() != "setnx"; }
};

TEST_P(SingleNodeLockTest, AcquireWritesOwnerTokenWithTheAlgorithmsExpiry) {
  auto& node = StartNode();
  auto lock = Make(node.endpoint());
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(r.lease.token.size(), 32u);
  EXPECT_EQ(Cmd(node.endpoint(), {"GET", "lock:a"}).str, r.lease.token);
  long long pttl = Cmd(node.endpoint(), {"PTTL", "lock:a"}).integer;
  if (Expires()) {
    EXPECT_GT(pttl, 500);
    EXPECT_LE(pttl, 1000);
  } else {
    EXPECT_EQ(pttl, -1) << "setnx sets no expiry";
  }
}

// Regression: the validity counts from before the SET was sent, not from the reply
// (slow_reply_validity.h).
TEST_P(SingleNodeLockTest, ValidityEndsBeforeTheKeyEvenAfterASlowReply) {
  if (!Expires()) GTEST_SKIP() << "setnx claims no validity";
  auto& node = StartNode();
  auto lock = Make(node.endpoint(), Millis(1000), Millis(1000));
  ExpectValidityEndsBeforeTheKeyAfterASlowReply(node, *lock);
}

TEST_P(SingleNodeLockTest, SecondClientWaitsThenFailsAtItsDeadline) {
  auto& node = StartNode();
  auto a = Make(node.endpoint());
  auto b = Make(node.endpoint());
  ASSERT_EQ(a->Acquire("lock:a", MonotonicNow() + Millis(500)).outcome, Outcome::kOk);
  Nanos t0 = MonotonicNow();
  LockResult r = b->Acquire("lock:a", t0 + Millis(150));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_GE(MonotonicNow() - t0, Millis(100));
}

TEST_P(SingleNodeLockTest, ReleaseLetsTheNextClientIn) {
  auto& node = StartNode();
  auto a = Make(node.endpoint());
  auto b = Make(node.endpoint());
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  EXPECT_EQ(a->Release(ra.lease).outcome, Outcome::kOk);
  EXPECT_TRUE(Cmd(node.endpoint(), {"GET", "lock:a"}).is_nil);
  EXPECT_EQ(b->Acquire("lock:a", MonotonicNow() + Millis(500)).outcome, Outcome::kOk);
}

TEST_P(SingleNodeLockTest, ExpiryFreesTheKeyOnlyWhenTheAlgorithmSetsOne) {
  auto& node = StartNode();
  auto a = Make(node.endpoint(), Millis(150));
  auto b = Make(node.endpoint(), Millis(150));
  ASSERT_EQ(a->Acquire("lock:a", MonotonicNow() + Millis(500)).outcome, Outcome::kOk);
  LockResult rb = b->Acquire("lock:a", MonotonicNow() + Millis(600));
  if (Expires()) {
    EXPECT_EQ(rb.outcome, Outcome::kOk) << "the key expires after 150 ms";
  } else {
    EXPECT_EQ(rb.outcome, Outcome::kFail) << "setnx keys never expire";
  }
}

TEST_P(SingleNodeLockTest, ReleaseByANonOwnerDoesWhatTheAlgorithmReallyDoes) {
  auto& node = StartNode();
  auto a = Make(node.endpoint());
  auto b = Make(node.endpoint());
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  Lease stale = ra.lease;
  stale.token = "not-the-owner";
  LockResult rel = b->Release(stale);
  Reply left = Cmd(node.endpoint(), {"GET", "lock:a"});
  if (GetParam() == "set-nx-px-lua") {
    EXPECT_EQ(rel.outcome, Outcome::kFail);
    EXPECT_EQ(left.str, ra.lease.token) << "compare-and-delete keeps the owner's key";
  } else {
    EXPECT_EQ(rel.outcome, Outcome::kOk);
    EXPECT_TRUE(left.is_nil) << GetParam() << " deletes another owner's key";
  }
}

TEST_P(SingleNodeLockTest, ServerDownIsAFailNotAnUnknown) {
  auto& node = StartNode();
  Endpoint e = node.endpoint();
  node.Kill();
  auto a = Make(e);
  LockResult r = a->Acquire("lock:a", MonotonicNow() + Millis(100));
  EXPECT_EQ(r.outcome, Outcome::kFail) << "connection refused: the command never ran";
}

TEST_P(SingleNodeLockTest, TimeoutIsAnUnknownNotAFail) {
  auto& node = StartNode();
  auto a = Make(node.endpoint(), Millis(1000), Millis(100));
  // Connect first, so the command is sent and then never answered.
  ASSERT_EQ(Cmd(node.endpoint(), {"PING"}).str, "PONG");
  LockResult warm = a->Acquire("lock:warm", MonotonicNow() + Millis(300));
  ASSERT_EQ(warm.outcome, Outcome::kOk);
  ASSERT_EQ(kill(node.pid(), SIGSTOP), 0);
  LockResult r = a->Acquire("lock:a", MonotonicNow() + Millis(150));
  kill(node.pid(), SIGCONT);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.detail;
}

INSTANTIATE_TEST_SUITE_P(AllSingleNodeLocks, SingleNodeLockTest,
                         ::testing::Values("setnx", "setnx-expire", "set-nx-px-del",
                                           "set-nx-px-lua"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

TEST(LockRegistryTest, UnknownIdAndKnobAreNamed) {
  LockConfig c;
  c.algorithm = "nope";
  c.nodes = {Endpoint{}};
  std::unique_ptr<Lock> lock;
  Status s = MakeLock(c, &lock);
  EXPECT_EQ(s.message(), "lock 'nope': unknown lock id (see `locklab list`)");
  c.algorithm = "setnx";
  c.knobs["drift"] = "0.1";
  s = MakeLock(c, &lock);
  EXPECT_EQ(s.message(), "lock 'setnx': unknown knob 'drift'");
}

}  // namespace
}  // namespace locklab::locks
