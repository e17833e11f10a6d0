// Fencing against real lab nodes: tokens from INCR grow with each acquire, and the resource's
// atomic check-and-write rejects an older token and accepts a newer one.
#include "locks/fenced_lock.h"
#include "locks/tests/slow_reply_validity.h"
#include "tests/lab_fixture.h"
#include "workloads/fenced_resource.h"

namespace locklab::locks {
namespace {

class FencedTest : public testing::LabNodeTest {
 protected:
  std::unique_ptr<Lock> Make(const Endpoint& e, Millis ttl = Millis(1000),
                             std::map<std::string, std::string> knobs = {}) {
    LockConfig c;
    c.algorithm = "fenced";
    c.nodes = {e};
    c.ttl = ttl;
    c.retry_delay = Millis(10);
    c.knobs = std::move(knobs);
    return BuildLock(c);
  }
};

TEST_F(FencedTest, EachAcquireDrawsANewerTokenFromTheLockNode) {
  auto& node = StartNode();
  for (const char* atomic : {"true", "false"}) {
    auto a = Make(node.endpoint(), Millis(1000), {{"atomic_fence", atomic}});
    auto b = Make(node.endpoint(), Millis(1000), {{"atomic_fence", atomic}});
    LockResult r1 = a->Acquire("lock:a", MonotonicNow() + Millis(300));
    ASSERT_EQ(r1.outcome, Outcome::kOk) << r1.detail;
    EXPECT_GE(r1.lease.fence, 1);
    EXPECT_EQ(b->Acquire("lock:a", MonotonicNow() + Millis(50)).outcome, Outcome::kFail);
    EXPECT_EQ(Cmd(node.endpoint(), {"GET", "fence:lock:a"}).str, std::to_string(r1.lease.fence))
        << "a refused acquire draws no token";
    ASSERT_EQ(a->Release(r1.lease).outcome, Outcome::kOk);
    LockResult r2 = b->Acquire("lock:a", MonotonicNow() + Millis(300));
    ASSERT_EQ(r2.outcome, Outcome::kOk);
    EXPECT_EQ(r2.lease.fence, r1.lease.fence + 1);
    ASSERT_EQ(b->Release(r2.lease).outcome, Outcome::kOk);
  }
}

// The validity counts from before the SET was sent for fenced too (its own Attempt: SET,
// then the token), not from the reply (slow_reply_validity.h).
TEST_F(FencedTest, ValidityEndsBeforeTheKeyEvenAfterASlowReply) {
  auto& node = StartNode();
  auto lock = Make(node.endpoint(), Millis(1000));
  ExpectValidityEndsBeforeTheKeyAfterASlowReply(node, *lock);
}

TEST_F(FencedTest, ResourceRejectsAnOlderTokenAndAcceptsANewerOne) {
  auto& resource = StartNode("resource");
  RedisConnection conn(resource.endpoint(), Millis(500), Millis(500));
  using workloads::FencedWrite;
  auto w = FencedWrite(conn, "counter:0", 1, 33);
  ASSERT_EQ(w.outcome, Outcome::kOk) << w.error;
  EXPECT_TRUE(w.accepted);
  w = FencedWrite(conn, "counter:0", 2, 34);
  EXPECT_TRUE(w.accepted);
  w = FencedWrite(conn, "counter:0", 3, 34);
  EXPECT_TRUE(w.accepted) << "the same holder may write again";
  w = FencedWrite(conn, "counter:0", 99, 33);
  EXPECT_EQ(w.outcome, Outcome::kOk);
  EXPECT_FALSE(w.accepted) << "token 33 after 34";
  EXPECT_EQ(w.newest, 34);
  EXPECT_EQ(Cmd(resource.endpoint(), {"GET", "counter:0"}).str, "3") << "the stale write left no trace";
  w = FencedWrite(conn, "counter:0", 4, 35);
  EXPECT_TRUE(w.accepted);
  EXPECT_EQ(Cmd(resource.endpoint(), {"GET", "counter:0"}).str, "4");
  EXPECT_EQ(Cmd(resource.endpoint(), {"GET", "counter:0:fence"}).str, "35");
}

TEST_F(FencedTest, AnExpiredHoldersWriteIsRejectedAfterTheNextHoldersWrite) {
  // KNOWN-ANSWERS schedule 3: C1 acquires, stalls past the TTL; C2 acquires and writes; C1
  // writes with its older token and is rejected.
  auto& node = StartNode();
  auto& resource = StartNode("resource");
  auto c1 = Make(node.endpoint(), Millis(150));
  auto c2 = Make(node.endpoint(), Millis(150));
  LockResult r1 = c1->Acquire("lock:a", MonotonicNow() + Millis(300));
  ASSERT_EQ(r1.outcome, Outcome::kOk);
  LockResult r2 = c2->Acquire("lock:a", MonotonicNow() + Millis(600));  // after C1's expiry
  ASSERT_EQ(r2.outcome, Outcome::kOk);
  EXPECT_GT(r2.lease.fence, r1.lease.fence);
  RedisConnection conn(resource.endpoint(), Millis(500), Millis(500));
  EXPECT_TRUE(workloads::FencedWrite(conn, "counter:0", 1, r2.lease.fence).accepted);
  EXPECT_FALSE(workloads::FencedWrite(conn, "counter:0", 1, r1.lease.fence).accepted);
}

}  // namespace
}  // namespace locklab::locks
