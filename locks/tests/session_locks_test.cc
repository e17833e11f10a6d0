// What the two database locks share, run on each against its real lab server: db-row on a
// lab mariadbd and pg-advisory on a lab postgres. Both hold their lock in a server session,
// so closing the session releases it, and a server restart drops it while the holder still
// believes it holds (locks/db_row_lock.h, locks/pg_advisory_lock.h).
#include <gtest/gtest.h>

#include <thread>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "tests/lab_fixture.h"

namespace locklab::testing {
namespace {

struct SessionLockCase {
  std::string algorithm;  // the lock
  locks::Backend kind;    // its lab server (NodeOptions::kind)
  std::string bad_knob;   // a knob and a value it refuses
  std::string bad_value;
  std::string token_prefix;  // the owner token names the server session
};

class SessionLockTest : public LabNodeTest,
                        public ::testing::WithParamInterface<SessionLockCase> {
 protected:
  harness::LabNode& StartDb() { return StartServer(GetParam().kind, "db1"); }
  locks::LockConfig Config(const harness::LabNode& n) { return ConfigOn(GetParam().algorithm, n); }
};

TEST_P(SessionLockTest, AWaiterIsRefusedWhileHeldAndWokenTheMomentTheHolderReleases) {
  auto& n = StartDb();
  auto a = BuildLock(Config(n));
  auto b = BuildLock(Config(n));
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  EXPECT_EQ(ra.lease.fence, -1);
  EXPECT_EQ(ra.lease.token.rfind(GetParam().token_prefix, 0), 0u) << ra.lease.token;
  // Held: the server makes b wait out its deadline and then refuses (certain, not unknown).
  Nanos t0 = MonotonicNow();
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(1500));
  EXPECT_EQ(rb.outcome, locks::Outcome::kFail) << rb.detail;
  EXPECT_GE(ToMillis(MonotonicNow() - t0), 1000.0);
  // Another key is independent.
  auto rb1 = b->Acquire("lock:1", MonotonicNow() + Millis(1000));
  ASSERT_EQ(rb1.outcome, locks::Outcome::kOk) << rb1.detail;
  EXPECT_EQ(b->Release(rb1.lease).outcome, locks::Outcome::kOk);
  // The server queues b and wakes it when a releases: well before b's 3 s deadline.
  std::thread releaser([&] {
    SleepFor(Millis(300));
    EXPECT_EQ(a->Release(ra.lease).outcome, locks::Outcome::kOk);
  });
  t0 = MonotonicNow();
  rb = b->Acquire("lock:0", MonotonicNow() + Millis(3000));
  releaser.join();
  EXPECT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
  EXPECT_LT(ToMillis(MonotonicNow() - t0), 1500.0);
  EXPECT_NE(rb.lease.token, ra.lease.token);  // another session owns it
}

TEST_P(SessionLockTest, AClosedHolderSessionReleasesTheLock) {
  auto& n = StartDb();
  auto b = BuildLock(Config(n));
  {
    auto a = BuildLock(Config(n));
    ASSERT_EQ(a->Acquire("lock:0", MonotonicNow() + Millis(2000)).outcome, locks::Outcome::kOk);
  }  // a's connection closes without a release, as a crashed client's would
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(2000));
  EXPECT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
}

TEST_P(SessionLockTest, ServerRestartDropsTheLockWhileTheHolderStillBelievesIt) {
  auto& n = StartDb();
  auto a = BuildLock(Config(n));
  auto b = BuildLock(Config(n));
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  pid_t old = n.pid();
  ASSERT_TRUE(n.Restart().ok());
  EXPECT_FALSE(harness::ProcessAlive(old));
  // The lock lived in the server's memory: the restarted server grants it to b...
  EXPECT_EQ(b->Acquire("lock:0", MonotonicNow() + Millis(3000)).outcome, locks::Outcome::kOk);
  // ...and a learns it only when its release finds the session gone.
  EXPECT_NE(a->Release(ra.lease).outcome, locks::Outcome::kOk);
}

TEST_P(SessionLockTest, BadKnobIsAUsageError) {
  locks::LockConfig c;
  c.algorithm = GetParam().algorithm;
  c.nodes = {locks::Endpoint{}};
  c.knobs[GetParam().bad_knob] = GetParam().bad_value;
  std::unique_ptr<locks::Lock> l;
  Status s = locks::MakeLock(c, &l);
  EXPECT_EQ(s.code(), Status::Code::kUsage);
  EXPECT_NE(s.message().find(GetParam().bad_knob), std::string::npos) << s.message();
}

TEST_P(SessionLockTest, StopLeavesNoServerAndNoScratchDirectory) {
  pid_t pid;
  std::string scratch;
  {
    harness::NodeOptions o;
    o.name = "db1";
    o.kind = GetParam().kind;
    harness::LabNode node(o, dir_ + "/db1", paths_);
    ASSERT_TRUE(node.Start().ok());
    pid = node.pid();
    scratch = node.scratch();
    ASSERT_FALSE(scratch.empty());
    EXPECT_TRUE(PathExists(scratch + "/data"));
  }
  EXPECT_FALSE(harness::ProcessAlive(pid));
  EXPECT_FALSE(PathExists(scratch));
}

INSTANTIATE_TEST_SUITE_P(
    DatabaseLocks, SessionLockTest,
    ::testing::Values(SessionLockCase{"db-row", locks::Backend::kMariadb, "transaction", "sometimes", "session-"},
                      SessionLockCase{"pg-advisory", locks::Backend::kPostgres, "wait", "sometimes", "backend-"}),
    [](const ::testing::TestParamInfo<SessionLockCase>& info) {
      return info.param.kind == locks::Backend::kMariadb ? std::string("DbRow")
                                                         : std::string("PgAdvisory");
    });

}  // namespace
}  // namespace locklab::testing
