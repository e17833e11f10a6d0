// db-row against a real lab mariadbd and etcd-lease against a real 3-member lab etcd
// cluster (both started by the lab code under test, on free loopback ports).
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "locks/db_row_lock.h"
#include "locks/etcd_lease_lock.h"
#include "locks/http_client.h"
#include "locks/mariadb_connection.h"
#include "tests/lab_fixture.h"

namespace locklab::testing {
namespace {

class DbRowTest : public LabNodeTest {
 protected:
  harness::LabNode& StartMariaDb() { return StartServer(locks::Backend::kMariadb, "db1"); }
  locks::LockConfig Config(const harness::LabNode& n) { return ConfigOn("db-row", n); }
};

TEST_F(DbRowTest, AutocommitAsPrintedHoldsNothing) {
  // The article's lock() never turns autocommit off: the row lock ends with the SELECT.
  auto& n = StartMariaDb();
  auto c = Config(n);
  c.knobs["transaction"] = "autocommit";
  auto a = BuildLock(c);
  auto b = BuildLock(c);
  ASSERT_EQ(a->Acquire("lock:0", MonotonicNow() + Millis(2000)).outcome, locks::Outcome::kOk);
  EXPECT_EQ(b->Acquire("lock:0", MonotonicNow() + Millis(500)).outcome, locks::Outcome::kOk);
}

TEST(MariaDbConnectionTest, NothingListeningIsAFailNotUnknown) {
  int port = 0;
  ASSERT_TRUE(harness::FreeLoopbackPort(&port).ok());
  locks::MariaDbConnection c({"127.0.0.1", port}, {"locklab", "", Millis(200)});
  auto r = c.Query("SELECT 1", Millis(200));
  EXPECT_EQ(r.outcome, locks::Outcome::kFail) << r.error;
}

class EtcdLeaseTest : public LabNodeTest {
 protected:
  void StartEtcd() {
    cluster_ = std::make_unique<harness::LabCluster>(dir_ + "/nodes", paths_);
    Nanos t0 = MonotonicNow();
    Status s = cluster_->Start(3, false, {}, locks::Backend::kEtcd);
    ASSERT_TRUE(s.ok()) << s.message();
    std::cerr << "3-member etcd ready in " << ToMillis(MonotonicNow() - t0) << " ms\n";
  }
  locks::LockConfig Config() {
    locks::LockConfig c;
    c.algorithm = "etcd-lease";
    c.nodes = cluster_->lock_endpoints();
    c.ttl = Millis(1000);
    return c;
  }
  std::unique_ptr<harness::LabCluster> cluster_;
};

TEST_F(EtcdLeaseTest, FencesGrowFromHolderToHolderAndTheLeaseOutlivesItsTtl) {
  StartEtcd();
  auto a = BuildLock(Config());
  auto b = BuildLock(Config());
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  EXPECT_GT(ra.lease.fence, 0);
  // Three TTLs later the keep-alive still holds the lease: b cannot get in.
  SleepFor(Millis(3000));
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(800));
  EXPECT_NE(rb.outcome, locks::Outcome::kOk) << rb.detail;
  EXPECT_EQ(a->Release(ra.lease).outcome, locks::Outcome::kOk);
  rb = b->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
  EXPECT_GT(rb.lease.fence, ra.lease.fence);
  EXPECT_EQ(b->Release(rb.lease).outcome, locks::Outcome::kOk);
}

TEST_F(EtcdLeaseTest, HolderKeepsTheLockWhileOneMemberIsDownAndBack) {
  StartEtcd();
  auto a = BuildLock(Config());
  auto b = BuildLock(Config());
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  cluster_->nodes()[0]->Kill();  // the member a and b talk to first
  SleepFor(Millis(2500));        // > 2 TTLs: keep-alives go to the other members
  EXPECT_NE(b->Acquire("lock:0", MonotonicNow() + Millis(800)).outcome, locks::Outcome::kOk);
  ASSERT_TRUE(cluster_->nodes()[0]->Restart().ok());
  EXPECT_EQ(a->Release(ra.lease).outcome, locks::Outcome::kOk);
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(3000));
  ASSERT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
  EXPECT_GT(rb.lease.fence, ra.lease.fence);
}

TEST_F(EtcdLeaseTest, AnAbandonedLeaseExpiresAndTheNextHolderGetsIt) {
  StartEtcd();
  auto b = BuildLock(Config());
  auto a = BuildLock(Config());
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk);
  a.reset();  // stops the keep-alive without unlocking: a crashed holder
  Nanos t0 = MonotonicNow();
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(4000));
  EXPECT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
  EXPECT_LT(ToMillis(MonotonicNow() - t0), 3000.0);
}

TEST_F(EtcdLeaseTest, StopLeavesNoMemberAndNoScratchDirectory) {
  StartEtcd();
  std::vector<pid_t> pids;
  std::vector<std::string> scratch;
  for (auto& n : cluster_->nodes()) {
    pids.push_back(n->pid());
    scratch.push_back(n->scratch());
    EXPECT_FALSE(scratch.back().empty());
  }
  cluster_.reset();
  for (pid_t p : pids) EXPECT_FALSE(harness::ProcessAlive(p)) << p;
  for (const auto& d : scratch) EXPECT_FALSE(PathExists(d)) << d;
}

TEST(Base64Test, RoundTripsEveryLength) {
  for (const std::string& s :
       std::vector<std::string>{"", "l", "lo", "loc", "lock:0", std::string("\0\xff\x10", 3)}) {
    std::string back;
    ASSERT_TRUE(locks::Base64Decode(locks::Base64Encode(s), &back));
    EXPECT_EQ(back, s);
  }
  EXPECT_EQ(locks::Base64Encode("lock:0"), "bG9jazow");
}

TEST(HttpClientTest, ChunkedBodyDecodesAndACutOneIsRefused) {
  std::string out;
  EXPECT_TRUE(locks::DecodeChunked("4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n", &out));
  EXPECT_EQ(out, "abcdef");
  EXPECT_FALSE(locks::DecodeChunked("4\r\nab", &out));
}

}  // namespace
}  // namespace locklab::testing
