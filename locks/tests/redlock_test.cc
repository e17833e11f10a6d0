// Redlock against five real lab nodes: quorum with nodes down, undoing a failed attempt,
// release everywhere, the validity formula (with an injected clock), the re-check knob that
// separates implementations under "pause while the replies are in flight", extensions.
#include <atomic>
#include <thread>

#include "locks/redlock.h"
#include "tests/lab_fixture.h"

namespace locklab::locks {
namespace {

class RedlockTest : public testing::LabNodeTest {
 protected:
  void SetUp() override {
    testing::LabNodeTest::SetUp();
    for (int i = 1; i <= 5; ++i) endpoints_.push_back(StartNode("n" + std::to_string(i)).endpoint());
  }
  LockConfig Config(std::map<std::string, std::string> knobs = {}) {
    LockConfig c;
    c.algorithm = "redlock";
    c.nodes = endpoints_;
    c.ttl = Millis(1000);
    c.retry_delay = Millis(10);
    c.command_timeout = Millis(100);
    c.connect_timeout = Millis(100);
    c.knobs = std::move(knobs);
    return c;
  }
  std::unique_ptr<RedlockLock> Make(LockConfig c, std::function<void(RedlockOptions&)> edit = {}) {
    RedlockOptions o;
    Status s = ParseRedlockOptions(c, &o);
    EXPECT_TRUE(s.ok()) << s.message();
    if (edit) edit(o);
    return std::make_unique<RedlockLock>(c, o);
  }
  int NodesHolding(const std::string& key, const std::string& token) {
    int n = 0;
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      if (!nodes_[i]->Running()) continue;
      RedisConnection c(endpoints_[i], Millis(300), Millis(300));
      n += c.Command({"GET", key}).str == token;
    }
    return n;
  }
  int NodesWithKey(const std::string& key) {
    int n = 0;
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      if (!nodes_[i]->Running()) continue;
      RedisConnection c(endpoints_[i], Millis(300), Millis(300));
      n += !c.Command({"GET", key}).is_nil;
    }
    return n;
  }
  std::vector<Endpoint> endpoints_;
};

TEST_F(RedlockTest, AcquiresOnAllFiveAndReleasesEverywhere) {
  auto lock = Make(Config());
  EXPECT_EQ(lock->quorum(), 3);
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(NodesHolding("lock:a", r.lease.token), 5);
  EXPECT_GT(r.lease.validity, Millis(900));
  EXPECT_LE(r.lease.validity, Millis(988));
  EXPECT_EQ(lock->Release(r.lease).outcome, Outcome::kOk);
  EXPECT_EQ(NodesWithKey("lock:a"), 0);
}

TEST_F(RedlockTest, AcquiresWithTwoNodesDown) {
  nodes_[3]->Kill();
  nodes_[4]->Kill();
  for (const char* mode : {"parallel", "sequential"}) {
    auto lock = Make(Config({{"mode", mode}}));
    LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
    ASSERT_EQ(r.outcome, Outcome::kOk) << mode << ": " << r.detail;
    EXPECT_EQ(NodesHolding("lock:a", r.lease.token), 3);
    EXPECT_EQ(lock->Release(r.lease).outcome, Outcome::kOk) << "3 deletions are a quorum";
  }
}

TEST_F(RedlockTest, RefusesWithThreeNodesDownAndUndoesThePartialLock) {
  nodes_[2]->Kill();
  nodes_[3]->Kill();
  nodes_[4]->Kill();
  // Count what the two live nodes saw during the attempt: both took the key, then lost it.
  std::string seen;
  LockConfig c = Config({{"retry_count", "1"}});
  c.pause_point = [&](const char*) {
    // Replies not read yet, but the SETs have been sent: wait until they landed.
    SleepFor(Millis(20));
    seen = std::to_string(NodesWithKey("lock:a"));
  };
  auto lock = Make(c);
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(2000));
  EXPECT_EQ(r.outcome, Outcome::kFail) << r.detail;
  EXPECT_EQ(seen, "2") << "the live nodes were locked by the attempt";
  EXPECT_EQ(NodesWithKey("lock:a"), 0) << "a failed attempt is undone on every node";
  EXPECT_NE(r.detail.find("locked 2 of 5"), std::string::npos) << r.detail;
}

TEST_F(RedlockTest, ContendedKeyIsNotTakenByASecondClient) {
  auto a = Make(Config());
  auto b = Make(Config({{"retry_count", "2"}}));
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  LockResult rb = b->Acquire("lock:a", MonotonicNow() + Millis(500));
  EXPECT_EQ(rb.outcome, Outcome::kFail);
  EXPECT_EQ(NodesHolding("lock:a", ra.lease.token), 5) << "B's undo is owner-checked";
}

// A fake lock clock: the test moves it at the pause point, i.e. while the replies are in
// flight, so elapsed time is exactly what the test says.
struct FakeClock {
  std::atomic<int64_t> ns{1'000'000'000};
  std::function<Nanos()> Fn() {
    return [this] { return Nanos(ns.load()); };
  }
  void Advance(Millis d) { ns += Nanos(d).count(); }
};

TEST_F(RedlockTest, ValidityIsTtlMinusElapsedMinusDrift) {
  FakeClock clock;
  LockConfig c = Config();
  std::string point;
  c.pause_point = [&](const char* p) {
    point = p;
    clock.Advance(Millis(100));
  };
  auto lock = Make(c, [&](RedlockOptions& o) { o.clock = clock.Fn(); });
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(point, "redlock-replies-in-flight");
  // 1000 - 100 - (1000 * 0.01 + 2) = 888
  EXPECT_EQ(r.lease.validity, Millis(888));
  EXPECT_EQ(lock->Validity(Millis(100)), Millis(888));
  c.knobs = {{"drift_factor", "0.1"}, {"drift_constant_ms", "0"}};
  auto other = Make(c, [&](RedlockOptions& o) { o.clock = clock.Fn(); });
  EXPECT_EQ(other->Validity(Millis(100)), Millis(800));
}

// Regression (CI, 2026-11-21): the armed stop fired on whichever attempt came first, mostly
// one that lost to the holder, so known-answers 2b saw no violation in 4 runs of 6. With
// point_armed the lock peeks at the unread replies and stops only on an attempt that won.
TEST_F(RedlockTest, ArmedStopSkipsLosingAttemptsAndLandsOnTheWinningOne) {
  for (bool parallel : {true, false}) {
    auto holder = Make(Config());
    LockResult held = holder->Acquire("lock:a", MonotonicNow() + Millis(500));
    ASSERT_EQ(held.outcome, Outcome::kOk);
    LockConfig c = Config({{"mode", parallel ? "parallel" : "sequential"}});
    int armed_asks = 0, stops = 0;
    int64_t stopped_with_key_held_by = -1;
    c.point_armed = [&](const char*) { return ++armed_asks > 0; };
    c.pause_point = [&](const char*) {
      ++stops;
      stopped_with_key_held_by = NodesHolding("lock:a", held.lease.token);
    };
    auto lock = Make(c);
    std::thread release([&] {
      SleepFor(Millis(150));
      holder->Release(held.lease);
    });
    LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(1000));
    release.join();
    ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
    EXPECT_GT(armed_asks, 1) << "losing attempts were asked about, parallel=" << parallel;
    EXPECT_EQ(stops, 1) << "only the winning attempt stops, parallel=" << parallel;
    EXPECT_EQ(stopped_with_key_held_by, 0) << "the stop came after the holder let go";
    lock->Release(r.lease);
  }
}

TEST_F(RedlockTest, RecheckRefusesALockWhoseValidityWasUsedUpWhileRepliesWereInFlight) {
  FakeClock clock;
  LockConfig c = Config({{"retry_count", "1"}});
  c.pause_point = [&](const char*) { clock.Advance(Millis(1200)); };  // a pause > TTL
  auto lock = Make(c, [&](RedlockOptions& o) { o.clock = clock.Fn(); });
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.detail.find("locked 5 of 5"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("validity -212 ms"), std::string::npos) << r.detail;
  EXPECT_EQ(NodesWithKey("lock:a"), 0) << "the refused lock is released";
}

TEST_F(RedlockTest, WithoutRecheckTheExpiredLockIsReturned) {
  FakeClock clock;
  LockConfig c = Config({{"retry_count", "1"}, {"recheck_validity", "false"}});
  c.pause_point = [&](const char*) { clock.Advance(Millis(1200)); };
  auto lock = Make(c, [&](RedlockOptions& o) { o.clock = clock.Fn(); });
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(r.lease.validity, Millis(988)) << "the pause was not counted";
}

TEST_F(RedlockTest, ExtensionsAreOwnerCheckedAndBounded) {
  auto none = Make(Config());
  EXPECT_FALSE(none->SupportsRenew());
  auto lock = Make(Config({{"max_extensions", "1"}}));
  EXPECT_TRUE(lock->SupportsRenew());
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(r.outcome, Outcome::kOk);
  SleepFor(Millis(300));
  LockResult e = lock->Renew(r.lease);
  EXPECT_EQ(e.outcome, Outcome::kOk) << e.detail;
  RedisConnection n1(endpoints_[0], Millis(300), Millis(300));
  EXPECT_GT(n1.Command({"PTTL", "lock:a"}).integer, 900) << "extended to a full TTL";
  EXPECT_EQ(lock->Renew(r.lease).outcome, Outcome::kFail) << "bounded";
  Lease stale = r.lease;
  stale.token = "not-mine";
  auto other = Make(Config({{"max_extensions", "5"}}));
  EXPECT_EQ(other->Renew(stale).outcome, Outcome::kFail);
}

TEST_F(RedlockTest, BadKnobsAreNamed) {
  std::unique_ptr<Lock> lock;
  LockConfig c = Config({{"mode", "both"}});
  EXPECT_EQ(MakeLock(c, &lock).message(),
            "lock 'redlock': knob 'mode': 'both': expected parallel or sequential");
  c = Config({{"clock", "sundial"}});
  EXPECT_EQ(MakeLock(c, &lock).message(),
            "lock 'redlock': knob 'clock': 'sundial': expected monotonic or wall");
  c = Config({{"recheck_validity", "maybe"}});
  EXPECT_EQ(MakeLock(c, &lock).message(),
            "lock 'redlock': knob 'recheck_validity': 'maybe': expected true or false");
}

}  // namespace
}  // namespace locklab::locks
