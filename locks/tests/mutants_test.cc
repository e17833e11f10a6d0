// Each lock mutant (locks/mutants.h) against real lab nodes: the steps that show its one
// bug, driven by hand (short TTLs, explicit sleeps, a pause point callback to interleave a
// second client, an endpoint that never answers), and the same steps on its reference lock
// not showing it. Plus the registry's view of the mutants.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "locks/fenced_lock.h"
#include "locks/mutants.h"
#include "locks/single_node_locks.h"
#include "locks/watchdog_lock.h"
#include "tests/lab_fixture.h"

// CLOCK_REALTIME as this test process sees it, stepped by g_wall_step_ns: the test's own
// libfaketime, so wall-clock-elapsed can meet a wall clock step without root. Every other
// clock goes straight to the kernel. (Executables' definitions win over libc's.)
static std::atomic<long long> g_wall_step_ns{0};
extern "C" int clock_gettime(clockid_t id, struct timespec* ts) {
  int rc = static_cast<int>(syscall(SYS_clock_gettime, id, ts));
  long long step = g_wall_step_ns.load();
  if (rc == 0 && id == CLOCK_REALTIME && step != 0) {
    long long ns = ts->tv_sec * 1000000000LL + ts->tv_nsec + step;
    ts->tv_sec = ns / 1000000000LL;
    ts->tv_nsec = ns % 1000000000LL;
  }
  return rc;
}

namespace locklab::locks {
namespace {

const char kKey[] = "lock:m";

class MutantsTest : public testing::LabNodeTest {
 protected:
  LockConfig Config(const std::string& id, std::vector<Endpoint> nodes, Millis ttl,
                    std::map<std::string, std::string> knobs = {}) {
    LockConfig c;
    c.algorithm = id;
    c.nodes = std::move(nodes);
    c.ttl = ttl;
    c.retry_delay = Millis(10);
    c.connect_timeout = c.command_timeout = Millis(100);
    c.knobs = std::move(knobs);
    return c;
  }
  std::vector<Endpoint> FiveNodes() {
    std::vector<Endpoint> e;
    for (int i = 1; i <= 5; ++i) e.push_back(StartNode("n" + std::to_string(i)).endpoint());
    return e;
  }
  static Nanos Soon(Millis d = Millis(300)) { return MonotonicNow() + d; }
};

// --- set-nx-px-lua mutants ------------------------------------------------------------------

TEST_F(MutantsTest, GetCompareDelDeletesTheNextHoldersKeyThatCameBetweenGetAndDel) {
  for (const std::string id : {"mutant:get-compare-del", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    auto& node = StartNode("n-" + std::to_string(id.size()));
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    LockResult rb;
    bool stepped = false;
    // The schedule: A's key expires and B takes it, just before A's DEL.
    auto steps = [&] {
      stepped = true;
      SleepFor(Millis(300));
      rb = b->Acquire(kKey, Soon());
    };
    LockConfig ca = Config(id, {node.endpoint()}, Millis(200));
    ca.pause_point = [&](const char* p) {
      if (std::string(p) == kPointBetweenGetAndDel) steps();
    };
    auto a = BuildLock(ca);
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    if (id == "set-nx-px-lua") steps();  // no such point: the same steps, right before release
    LockResult rel = a->Release(ra.lease);
    ASSERT_TRUE(stepped);
    ASSERT_EQ(rb.outcome, Outcome::kOk);
    Reply held = Cmd(node.endpoint(), {"GET", kKey});
    if (id == "set-nx-px-lua") {
      EXPECT_EQ(held.str, rb.lease.token) << "B keeps its lock";
      EXPECT_EQ(rel.outcome, Outcome::kFail);
    } else {
      EXPECT_TRUE(held.is_nil) << "A's late DEL removed B's lock";
      EXPECT_EQ(rel.outcome, Outcome::kOk);
    }
  }
}

TEST_F(MutantsTest, PlainDelReleaseDeletesTheNextHoldersKey) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:plain-del", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    SleepFor(Millis(300));  // A's key expired
    LockResult rb = b->Acquire(kKey, Soon());
    ASSERT_EQ(rb.outcome, Outcome::kOk);
    a->Release(ra.lease);
    bool b_lost = Cmd(node.endpoint(), {"GET", kKey}).is_nil;
    EXPECT_EQ(b_lost, id == "mutant:plain-del");
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

struct Crash {};  // a client that dies at a pause point

TEST_F(MutantsTest, SetnxThenPexpireLeavesAKeyThatNeverExpiresWhenTheClientDiesBetween) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:setnx-then-pexpire", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    LockConfig ca = Config(id, {node.endpoint()}, Millis(200));
    ca.pause_point = [](const char* p) {
      if (std::string(p) == kPointBetweenSetnxAndExpire) throw Crash{};
    };
    auto a = BuildLock(ca);
    try {
      a->Acquire(kKey, Soon());  // the reference has no such point and returns normally
    } catch (const Crash&) {
      EXPECT_EQ(id, "mutant:setnx-then-pexpire");
    }
    SleepFor(Millis(300));  // well past the TTL
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    LockResult rb = b->Acquire(kKey, Soon(Millis(100)));
    if (id == "set-nx-px-lua") {
      EXPECT_EQ(rb.outcome, Outcome::kOk) << "A's key expired";
    } else {
      EXPECT_EQ(rb.outcome, Outcome::kFail) << "A's key never expires";
      EXPECT_EQ(Cmd(node.endpoint(), {"PTTL", kKey}).integer, -1);
    }
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

TEST_F(MutantsTest, UnknownAsOkClaimsALockOnAServerThatNeverAnswered) {
  // A listening socket nobody accepts on: connect succeeds (the backlog), the SET is sent,
  // no reply ever comes, so its outcome is unknown.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  Endpoint silent;
  silent.port = ntohs(addr.sin_port);
  LockResult mutant = BuildLock(Config("mutant:unknown-as-ok", {silent}, Millis(500)))
                          ->Acquire(kKey, Soon(Millis(150)));
  LockResult reference =
      BuildLock(Config("set-nx-px-lua", {silent}, Millis(500)))->Acquire(kKey, Soon(Millis(150)));
  close(fd);
  EXPECT_EQ(mutant.outcome, Outcome::kOk) << "no server ever stored the key";
  EXPECT_EQ(reference.outcome, Outcome::kUnknown) << reference.detail;
}

TEST_F(MutantsTest, ErrorAsOkTakesAnOomReplyAsTheLockWhileAnotherClientHoldsIt) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:error-as-ok", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(5000)));
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(5000)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    // Every write is now refused with -OOM (the default policy is noeviction).
    ASSERT_EQ(Cmd(node.endpoint(), {"CONFIG", "SET", "maxmemory", "1"}).str, "OK");
    LockResult rb = b->Acquire(kKey, Soon(Millis(100)));
    Cmd(node.endpoint(), {"CONFIG", "SET", "maxmemory", "0"});
    EXPECT_EQ(Cmd(node.endpoint(), {"GET", kKey}).str, ra.lease.token) << "A still holds it";
    EXPECT_EQ(rb.outcome, id == "set-nx-px-lua" ? Outcome::kFail : Outcome::kOk) << rb.detail;
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

TEST_F(MutantsTest, TtlWholeSecondsLetsTheKeyExpireWhileTheLeaseIsStillValid) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:ttl-whole-seconds", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(1500)));
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(1500)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    // Both claim the configured TTL, less the round trip and the server's 1 ms resolution.
    EXPECT_LE(ra.lease.validity, Millis(1499));
    EXPECT_GE(ra.lease.validity, Millis(1450));
    SleepFor(Millis(1100));
    LockResult rb = b->Acquire(kKey, Soon(Millis(100)));
    bool a_believes = MonotonicNow() < ra.lease.acquired_at + ra.lease.validity;
    EXPECT_TRUE(a_believes);
    EXPECT_EQ(rb.outcome, id == "set-nx-px-lua" ? Outcome::kFail : Outcome::kOk)
        << "the mutant's key lived 1 s, not 1.5 s";
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

TEST_F(MutantsTest, ReleaseIgnoresReplyReportsOkForALockItHadLost) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:release-ignores-reply", "set-nx-px-lua"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    SleepFor(Millis(300));
    LockResult rb = b->Acquire(kKey, Soon());
    ASSERT_EQ(rb.outcome, Outcome::kOk);
    LockResult rel = a->Release(ra.lease);
    EXPECT_EQ(Cmd(node.endpoint(), {"GET", kKey}).str, rb.lease.token) << "nothing deleted";
    EXPECT_EQ(rel.outcome, id == "set-nx-px-lua" ? Outcome::kFail : Outcome::kOk);
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

// --- watchdog mutants -----------------------------------------------------------------------

// The renewal thread waits a minute: the test calls Renew (same script) by hand.
const std::map<std::string, std::string> kHandRenewal = {{"renew_period_ms", "60000"},
                                                         {"renew_ttl_ms", "5000"}};

TEST_F(MutantsTest, BlindRenewExtendsTheNextHoldersKey) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:blind-renew", "watchdog"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(200), kHandRenewal));
    auto b = BuildLock(Config("set-nx-px-lua", {node.endpoint()}, Millis(200)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    SleepFor(Millis(300));  // A lost its key
    ASSERT_EQ(b->Acquire(kKey, Soon()).outcome, Outcome::kOk);
    LockResult renew = a->Renew(ra.lease);
    long long pttl = Cmd(node.endpoint(), {"PTTL", kKey}).integer;
    if (id == "watchdog") {
      EXPECT_EQ(renew.outcome, Outcome::kFail);
      EXPECT_LE(pttl, 200);
    } else {
      EXPECT_EQ(renew.outcome, Outcome::kOk) << "A believes it renewed its lock";
      EXPECT_GT(pttl, 1000) << "B's key now lives renew_ttl";
    }
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

TEST_F(MutantsTest, RenewResurrectsRetakesAnExpiredKeyAfterAnotherClientHeldIt) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:renew-resurrects", "watchdog"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, {node.endpoint()}, Millis(200), kHandRenewal));
    auto b = BuildLock(Config("set-nx-px-lua", {node.endpoint()}, Millis(200)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    SleepFor(Millis(300));  // A's key expired; B holds the lock and releases it
    LockResult rb = b->Acquire(kKey, Soon());
    ASSERT_EQ(rb.outcome, Outcome::kOk);
    ASSERT_EQ(b->Release(rb.lease).outcome, Outcome::kOk);
    LockResult renew = a->Renew(ra.lease);
    Reply held = Cmd(node.endpoint(), {"GET", kKey});
    if (id == "watchdog") {
      EXPECT_EQ(renew.outcome, Outcome::kFail);
      EXPECT_TRUE(held.is_nil);
    } else {
      EXPECT_EQ(renew.outcome, Outcome::kOk) << "A renewed a lock B held in between";
      EXPECT_EQ(held.str, ra.lease.token);
    }
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

// The same bug reached through the lock's own renewal thread, stopped at its pause point
// watchdog-renewal-due (what a hunt arms): while it is stopped A's key expires and B holds
// and releases the lock; the renewal that then runs re-takes the key on the mutant and
// fails on the reference. The point is announced from the renewal thread, not the caller's.
TEST_F(MutantsTest, RenewResurrectsRetakesTheKeyWhenItsRenewalThreadWakesFromAStopAtRenewalDue) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:renew-resurrects", "watchdog"}) {
    SCOPED_TRACE(id);
    auto b = BuildLock(Config("set-nx-px-lua", {node.endpoint()}, Millis(200)));
    std::mutex mu;
    std::vector<std::string> renewals;  // outcomes of the renewal thread's renewals
    std::atomic<bool> stopped{false}, from_other_thread{false}, b_went_between{false};
    const auto caller = std::this_thread::get_id();
    LockConfig ca = Config(id, {node.endpoint()}, Millis(200), {{"renew_period_ms", "50"}});
    ca.pause_point = [&](const char* p) {
      if (std::string(p) != kPointRenewalDue || stopped.exchange(true)) return;
      from_other_thread = std::this_thread::get_id() != caller;
      SleepFor(Millis(300));  // the stop: A's key expires
      LockResult rb = b->Acquire(kKey, Soon());
      b_went_between = rb.outcome == Outcome::kOk && b->Release(rb.lease).outcome == Outcome::kOk;
    };
    ca.on_event = [&](int, const char* type, const char* f, const std::string&, const nlohmann::json&) {
      std::lock_guard<std::mutex> l(mu);
      if (std::string(f) == "renew" && std::string(type) != "invoke") renewals.push_back(type);
    };
    auto a = BuildLock(ca);
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    SleepFor(Millis(500));  // the first renewal stops for 300 ms, the next ones run
    ASSERT_TRUE(stopped);
    EXPECT_TRUE(from_other_thread) << "announced from the renewal thread";
    ASSERT_TRUE(b_went_between);
    std::vector<std::string> seen;
    {
      std::lock_guard<std::mutex> l(mu);
      seen = renewals;
    }
    ASSERT_FALSE(seen.empty());
    Reply held = Cmd(node.endpoint(), {"GET", kKey});
    if (id == "watchdog") {
      EXPECT_EQ(seen, std::vector<std::string>{"fail"}) << "the key was gone: renewals stop";
      EXPECT_TRUE(held.is_nil);
    } else {
      EXPECT_EQ(seen.front(), "ok") << "A renewed a lock B held in between";
      EXPECT_EQ(held.str, ra.lease.token);
    }
    a.reset();
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

// --- redlock mutants ------------------------------------------------------------------------

TEST_F(MutantsTest, QuorumOffByOneLetsTwoClientsHoldTwoNodesEach) {
  std::vector<Endpoint> nodes = FiveNodes();
  for (const std::string id : {"mutant:quorum-off-by-one", "redlock"}) {
    SCOPED_TRACE(id);
    for (int i : {2, 3, 4}) Cmd(nodes[i], {"SET", kKey, "someone-else"});
    auto a = BuildLock(Config(id, nodes, Millis(2000)));
    auto b = BuildLock(Config(id, nodes, Millis(2000)));
    LockResult ra = a->Acquire(kKey, Soon(Millis(100)));  // nodes 0 and 1 only
    for (int i : {2, 3}) Cmd(nodes[i], {"DEL", kKey});
    LockResult rb = b->Acquire(kKey, Soon(Millis(100)));  // nodes 2 and 3 (or more)
    bool both = ra.outcome == Outcome::kOk && rb.outcome == Outcome::kOk;
    EXPECT_EQ(both, id != "redlock") << ra.detail << " / " << rb.detail;
    for (const auto& e : nodes) Cmd(e, {"DEL", kKey});
  }
}

TEST_F(MutantsTest, NoDriftClaimsValidityBeyondTheDriftAllowance) {
  std::vector<Endpoint> nodes = FiveNodes();
  // TTL 10 s: the default allowance is 10000 * 0.01 + 2 = 102 ms.
  for (const std::string id : {"mutant:no-drift", "redlock"}) {
    SCOPED_TRACE(id);
    auto a = BuildLock(Config(id, nodes, Millis(10000)));
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk) << ra.detail;
    EXPECT_EQ(ra.lease.validity > Millis(10000 - 102), id != "redlock")
        << ra.lease.validity.count() << " ms";
    a->Release(ra.lease);
  }
}

TEST_F(MutantsTest, WallClockElapsedClaimsMoreThanTheTtlWhenTheWallClockStepsBack) {
  std::vector<Endpoint> nodes = FiveNodes();
  for (const std::string id : {"mutant:wall-clock-elapsed", "redlock"}) {
    SCOPED_TRACE(id);
    LockConfig c = Config(id, nodes, Millis(1000));
    c.pause_point = [](const char*) { g_wall_step_ns -= 5'000'000'000LL; };  // NTP steps back 5 s
    auto a = BuildLock(c);
    LockResult ra = a->Acquire(kKey, Soon());
    g_wall_step_ns = 0;
    ASSERT_EQ(ra.outcome, Outcome::kOk) << ra.detail;
    EXPECT_EQ(ra.lease.validity > Millis(1000), id != "redlock")
        << ra.lease.validity.count() << " ms of a 1000 ms TTL";
    a->Release(ra.lease);
  }
}

TEST_F(MutantsTest, NoValidityRecheckReturnsALockThatExpiredWhileTheRepliesWereInFlight) {
  std::vector<Endpoint> nodes = FiveNodes();
  for (const std::string id : {"mutant:no-validity-recheck", "redlock"}) {
    SCOPED_TRACE(id);
    LockConfig c = Config(id, nodes, Millis(300));
    int pauses = 0;
    c.pause_point = [&](const char*) {
      if (pauses++ == 0) SleepFor(Millis(400));  // the first attempt only
    };
    auto a = BuildLock(c);
    LockResult ra = a->Acquire(kKey, Soon(Millis(200)));
    int nodes_with_key = 0;
    for (const auto& e : nodes) nodes_with_key += !Cmd(e, {"GET", kKey}).is_nil;
    if (id == "redlock") {
      EXPECT_EQ(ra.outcome, Outcome::kFail) << "validity <= 0: refused";
    } else {
      EXPECT_EQ(ra.outcome, Outcome::kOk);
      EXPECT_GT(ra.lease.validity, Millis(0));
      EXPECT_EQ(nodes_with_key, 0) << "the keys expired before Acquire returned";
    }
    for (const auto& e : nodes) Cmd(e, {"DEL", kKey});
  }
}

// --- fenced mutant --------------------------------------------------------------------------

TEST_F(MutantsTest, FenceReadThenSetGivesTwoHoldersTheSameToken) {
  auto& node = StartNode();
  for (const std::string id : {"mutant:fence-read-then-set", "fenced"}) {
    SCOPED_TRACE(id);
    auto b = BuildLock(Config(id, {node.endpoint()}, Millis(200)));
    LockResult rb;
    bool stepped = false;
    // The schedule: A stops after reading the counter; its key expires and B takes it.
    auto steps = [&] {
      stepped = true;
      SleepFor(Millis(300));
      rb = b->Acquire(kKey, Soon());
    };
    LockConfig ca = Config(id, {node.endpoint()}, Millis(200));
    ca.pause_point = [&](const char* p) {
      if (std::string(p) == kPointBetweenFenceGetAndSet) steps();
    };
    auto a = BuildLock(ca);
    LockResult ra = a->Acquire(kKey, Soon());
    ASSERT_EQ(ra.outcome, Outcome::kOk);
    if (id == "fenced") steps();  // no such point: the same steps, right after
    ASSERT_TRUE(stepped);
    ASSERT_EQ(rb.outcome, Outcome::kOk);
    if (id == "fenced") {
      EXPECT_GT(rb.lease.fence, ra.lease.fence);
    } else {
      EXPECT_EQ(rb.lease.fence, ra.lease.fence) << "the resource accepts both writers";
    }
    Cmd(node.endpoint(), {"DEL", kKey});
  }
}

// --- the registry ---------------------------------------------------------------------------

TEST(MutantRegistryTest, EveryMutantBuildsNamesARealReferenceAndIsNotInListLocks) {
  const auto& mutants = ListMutants();
  EXPECT_GE(mutants.size(), 12u);
  for (const auto& m : mutants) {
    SCOPED_TRACE(m.id);
    EXPECT_EQ(m.id.rfind("mutant:", 0), 0u);
    EXPECT_EQ(FindLock(m.id), &m);
    const auto& locks = ListLocks();
    EXPECT_TRUE(std::none_of(locks.begin(), locks.end(),
                             [&](const LockInfo& l) { return l.id == m.id; }));
    const LockInfo* ref = FindLock(m.mutant_of);
    ASSERT_NE(ref, nullptr);
    EXPECT_TRUE(ref->mutant_of.empty());
    EXPECT_EQ(m.default_nodes, ref->default_nodes);
    EXPECT_EQ(m.backend, ref->backend);  // so the same faults apply
    for (const auto& p : ref->points) {
      EXPECT_NE(std::find(m.points.begin(), m.points.end(), p), m.points.end()) << p;
    }
    // Every point of its own has a stand-in the reference runs at (a workload point), so
    // that the reference can be judged in the same scenario.
    for (const auto& p : m.points) {
      if (std::find(ref->points.begin(), ref->points.end(), p) != ref->points.end()) continue;
      auto it = m.stand_in_points.find(p);
      ASSERT_NE(it, m.stand_in_points.end()) << p;
      EXPECT_TRUE(it->second == "after-acquire" || it->second == "after-release") << p << " -> " << it->second;
    }
    LockConfig c;
    c.algorithm = m.id;
    c.nodes.assign(static_cast<size_t>(m.default_nodes), Endpoint{"127.0.0.1", 1});
    std::unique_ptr<Lock> lock;
    Status s = MakeLock(c, &lock);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_NE(lock, nullptr);
  }
}

TEST(MutantRegistryTest, UnknownMutantAndUnknownKnobAreUsageErrors) {
  LockConfig c;
  c.nodes = {Endpoint{"127.0.0.1", 1}};
  std::unique_ptr<Lock> lock;
  c.algorithm = "mutant:no-such-bug";
  EXPECT_EQ(FindLock(c.algorithm), nullptr);
  Status s = MakeLock(c, &lock);
  EXPECT_FALSE(s.ok());
  EXPECT_GE(s.ExitCode(), 64);
  c.algorithm = "mutant:plain-del";
  c.knobs = {{"drift_factor", "0"}};  // a redlock knob: not one of set-nx-px-lua's
  EXPECT_FALSE(MakeLock(c, &lock).ok());
  c.algorithm = "mutant:no-drift";  // a redlock mutant takes its reference's knobs
  c.nodes.assign(5, Endpoint{"127.0.0.1", 1});
  EXPECT_TRUE(MakeLock(c, &lock).ok());
}

}  // namespace
}  // namespace locklab::locks
