// What the two database locks share, run on each against its real lab server: db-row on a
// lab mariadbd and pg-advisory on a lab postgres. Both hold their lock in a server session,
// so closing the session releases it, and a server restart drops it while the holder still
// believes it holds (locks/db_row_lock.h, locks/pg_advisory_lock.h).
#include <gtest/gtest.h>

#include "harness/lab_cluster.h"
#include "harness/process.h"
#include "tests/lab_fixture.h"

namespace locklab::testing {
namespace {

struct SessionLockCase {
  std::string algorithm;  // the lock
  std::string kind;       // its lab server (NodeOptions::kind)
  std::string bad_knob;   // a knob and a value it refuses
  std::string bad_value;
};

class SessionLockTest : public LabNodeTest,
                        public ::testing::WithParamInterface<SessionLockCase> {
 protected:
  harness::LabNode& StartDb() { return StartServer(GetParam().kind, "db1"); }
  // 1 s statement bounds, so that a loaded machine cannot turn a grant into an unknown.
  locks::LockConfig Config(const harness::LabNode& n) {
    locks::LockConfig c = ConfigOn(GetParam().algorithm, n);
    c.connect_timeout = c.command_timeout = Millis(1000);
    return c;
  }
};

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
    ::testing::Values(SessionLockCase{"db-row", "mariadb", "transaction", "sometimes"},
                      SessionLockCase{"pg-advisory", "postgres", "wait", "sometimes"}),
    [](const ::testing::TestParamInfo<SessionLockCase>& info) {
      return info.param.kind == "mariadb" ? std::string("DbRow") : std::string("PgAdvisory");
    });

}  // namespace
}  // namespace locklab::testing
