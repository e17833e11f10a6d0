// pg-advisory against a real lab postgres (initdb + postmaster started by the lab code under
// test as the `postgres` user, on a free loopback port), and PostgresConnection's outcomes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "locks/pg_advisory_lock.h"
#include "locks/postgres_connection.h"
#include "tests/lab_fixture.h"

namespace locklab::testing {
namespace {

class PgAdvisoryTest : public LabNodeTest {
 protected:
  harness::LabNode& StartPostgres() { return StartServer(locks::Backend::kPostgres, "pg1"); }
  locks::LockConfig Config(const harness::LabNode& n) { return ConfigOn("pg-advisory", n); }
};

// The waiting itself: SessionLockTest. Here: what a refusal and a double unlock say.
TEST_F(PgAdvisoryTest, ARefusalAndAnUnlockOfALockNotHeldSayWhy) {
  auto& n = StartPostgres();
  auto a = BuildLock(Config(n));
  auto b = BuildLock(Config(n));
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(300));  // lock_timeout: 55P03
  EXPECT_EQ(rb.outcome, locks::Outcome::kFail) << rb.detail;
  EXPECT_NE(rb.detail.find("held by another session"), std::string::npos) << rb.detail;
  ASSERT_EQ(a->Release(ra.lease).outcome, locks::Outcome::kOk);
  // a no longer holds it: a second unlock is answered false (with the server's WARNING as
  // the reason, not on the client's stderr), a fail.
  auto again = a->Release(ra.lease);
  EXPECT_EQ(again.outcome, locks::Outcome::kFail);
  EXPECT_NE(again.detail.find("you don't own a lock"), std::string::npos) << again.detail;
}

TEST_F(PgAdvisoryTest, TryModePollsUntilTheHolderLetsGo) {
  auto& n = StartPostgres();
  auto c = Config(n);
  c.knobs["wait"] = "try";
  auto a = BuildLock(c);
  auto b = BuildLock(c);
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  auto rb = b->Acquire("lock:0", MonotonicNow() + Millis(300));
  EXPECT_EQ(rb.outcome, locks::Outcome::kFail) << rb.detail;
  ASSERT_EQ(a->Release(ra.lease).outcome, locks::Outcome::kOk);
  rb = b->Acquire("lock:0", MonotonicNow() + Millis(2000));
  EXPECT_EQ(rb.outcome, locks::Outcome::kOk) << rb.detail;
}

// Regression (2026-11-22): a postmaster's backends each run in a session of their own, so
// the node pause (SIGSTOP to the postmaster's process group) stopped only the postmaster
// and the holder's backend went on answering: "server-pause" paused nothing that held a lock.
TEST_F(PgAdvisoryTest, ANodePauseStopsTheBackendsThatServeSessions) {
  auto& n = StartPostgres();
  auto a = BuildLock(Config(n));
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  ASSERT_TRUE(n.Signal(SIGSTOP));
  auto rr = a->Release(ra.lease);  // its backend is stopped: no answer within 1 s
  EXPECT_EQ(rr.outcome, locks::Outcome::kUnknown) << rr.detail;
  ASSERT_TRUE(n.Signal(SIGCONT));
  // The closed session ends once the backend runs again; the key is free.
  auto b = BuildLock(Config(n));
  EXPECT_EQ(b->Acquire("lock:0", MonotonicNow() + Millis(2000)).outcome, locks::Outcome::kOk);
}

TEST_F(PgAdvisoryTest, AnIdleSessionTimeoutEndsAPausedHoldersLock) {
  auto& n = StartPostgres();
  auto c = Config(n);
  c.knobs["idle_session_timeout_ms"] = "300";
  auto a = BuildLock(c);
  auto b = BuildLock(Config(n));
  auto ra = a->Acquire("lock:0", MonotonicNow() + Millis(2000));
  ASSERT_EQ(ra.outcome, locks::Outcome::kOk) << ra.detail;
  SleepFor(Millis(800));  // a "pauses" with its session idle
  EXPECT_EQ(b->Acquire("lock:0", MonotonicNow() + Millis(3000)).outcome, locks::Outcome::kOk);
  EXPECT_NE(a->Release(ra.lease).outcome, locks::Outcome::kOk);
}

// The node's scratch directory and postmaster: SessionLockTest. Here: its backends, which
// are not in the postmaster's process group.
TEST_F(PgAdvisoryTest, StopLeavesNoBackend) {
  pid_t backend;
  {
    auto& n = StartPostgres();
    locks::PostgresConnection conn(n.endpoint(), {});
    auto r = conn.Query("SELECT pg_backend_pid()", Millis(2000));
    ASSERT_EQ(r.outcome, locks::Outcome::kOk) << r.error;
    ASSERT_EQ(r.rows.size(), 1u);
    backend = std::stoi(r.rows[0][0]);
    EXPECT_EQ(backend, conn.backend_pid());
    EXPECT_FALSE(harness::ProcessGone(backend));
    nodes_.clear();  // stops the node
  }
  // Killed with the postmaster, not left to notice its death some time later.
  EXPECT_TRUE(harness::ProcessGone(backend)) << "backend " << backend << " outlived the node";
}

// A TMPDIR only root can enter (a CI runner's private temp directory) must not stop postgres,
// which runs as another user: its scratch directory then goes to /tmp.
TEST_F(PgAdvisoryTest, StartsUnderAPrivateTmpdir) {
  std::string priv = MakeTempDir("locklab-private-tmp");  // mode 0700, root's
  ASSERT_FALSE(priv.empty());
  const char* old = getenv("TMPDIR");
  std::string saved = old ? old : "";
  setenv("TMPDIR", priv.c_str(), 1);
  auto& n = StartPostgres();
  if (old) setenv("TMPDIR", saved.c_str(), 1); else unsetenv("TMPDIR");
  EXPECT_TRUE(n.Running());
  EXPECT_EQ(n.scratch().rfind("/tmp/locklab-postgres-", 0), 0u) << n.scratch();
  rmdir(priv.c_str());
}

TEST(PostgresConnectionTest, NothingListeningIsAFailNotUnknown) {
  int port = 0;
  ASSERT_TRUE(harness::FreeLoopbackPort(&port).ok());
  locks::PostgresConnection c({"127.0.0.1", port}, {});
  auto r = c.Query("SELECT 1", Millis(200));
  EXPECT_EQ(r.outcome, locks::Outcome::kFail) << r.error;
  EXPECT_FALSE(c.connected());
}

TEST_F(PgAdvisoryTest, AnAnswerLaterThanTheTimeoutIsUnknownAndEndsTheSession) {
  auto& n = StartPostgres();
  locks::PostgresConnection c(n.endpoint(), {});
  ASSERT_EQ(c.Query("SELECT 1", Millis(2000)).outcome, locks::Outcome::kOk);
  Nanos t0 = MonotonicNow();
  auto r = c.Query("SELECT pg_sleep(3)", Millis(200));
  EXPECT_EQ(r.outcome, locks::Outcome::kUnknown) << r.error;
  EXPECT_LT(ToMillis(MonotonicNow() - t0), 1000.0);
  EXPECT_FALSE(c.connected());
  // An SQL error is an answer: kOk with the SQLSTATE, and the session stays.
  r = c.Query("SELECT 1/0", Millis(2000));
  EXPECT_EQ(r.outcome, locks::Outcome::kOk);
  EXPECT_EQ(r.sqlstate, "22012") << r.error;
  EXPECT_TRUE(c.connected());
}

TEST(AdvisoryKeyTest, IsSixtyFourBitFnv1a) {
  EXPECT_EQ(locks::AdvisoryKey(""), static_cast<int64_t>(14695981039346656037ull));
  EXPECT_EQ(locks::AdvisoryKey("a"), static_cast<int64_t>(0xaf63dc4c8601ec8cull));
  EXPECT_NE(locks::AdvisoryKey("lock:0"), locks::AdvisoryKey("lock:1"));
}

}  // namespace
}  // namespace locklab::testing
