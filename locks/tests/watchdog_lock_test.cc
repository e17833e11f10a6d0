// The watchdog against a real lab node: it keeps the lock through a critical section of
// 3 x TTL, records its renewals, and stops renewing once the key is no longer its own.
#include <signal.h>

#include <mutex>

#include "locks/watchdog_lock.h"
#include "tests/lab_fixture.h"

namespace locklab::locks {
namespace {

struct Recorded {
  std::string type, f, key;
  nlohmann::json value;
};

class WatchdogTest : public testing::LabNodeTest {
 protected:
  std::unique_ptr<Lock> Make(const Endpoint& e, Millis ttl) {
    LockConfig c;
    c.algorithm = "watchdog";
    c.nodes = {e};
    c.ttl = ttl;
    c.retry_delay = Millis(10);
    c.on_event = [this](int worker, const char* type, const char* f, const std::string& key,
                        const nlohmann::json& value) {
      EXPECT_EQ(worker, 1);
      std::lock_guard<std::mutex> l(mu_);  // called from the renewal thread
      events_.push_back({type, f, key, value});
    };
    return BuildLock(c);
  }
  std::vector<Recorded> Events() {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }
  int Count(const std::string& type) {
    int n = 0;
    for (const auto& e : Events()) n += e.f == "renew" && e.type == type;
    return n;
  }
  std::mutex mu_;
  std::vector<Recorded> events_;
};

TEST_F(WatchdogTest, KeepsTheLockThroughACriticalSectionOfThreeTtls) {
  auto& node = StartNode();
  auto a = Make(node.endpoint(), Millis(300));
  auto b = Make(node.endpoint(), Millis(300));
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk) << ra.detail;
  // B keeps trying for the whole 3 x TTL critical section: it must never get in.
  LockResult rb = b->Acquire("lock:a", MonotonicNow() + Millis(900));
  EXPECT_EQ(rb.outcome, Outcome::kFail) << "the watchdog let the key expire";
  EXPECT_EQ(Cmd(node.endpoint(), {"GET", "lock:a"}).str, ra.lease.token);
  EXPECT_GE(Count("ok"), 6) << "a renewal every TTL/3 = 100 ms";
  EXPECT_EQ(Count("fail") + Count("info"), 0);
  for (const auto& e : Events()) {
    EXPECT_EQ(e.key, "lock:a");
    if (e.type == "invoke") {
      EXPECT_EQ(e.value["token"], ra.lease.token);
    }
  }
  EXPECT_EQ(a->Release(ra.lease).outcome, Outcome::kOk);
  int after_release = static_cast<int>(Events().size());
  SleepFor(Millis(250));
  EXPECT_EQ(static_cast<int>(Events().size()), after_release) << "release stops the renewals";
  EXPECT_EQ(b->Acquire("lock:a", MonotonicNow() + Millis(300)).outcome, Outcome::kOk);
}

TEST_F(WatchdogTest, StopsRenewingOnceTheKeyIsNoLongerTheOwners) {
  auto& node = StartNode();
  auto a = Make(node.endpoint(), Millis(300));
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  // Someone else owns the key now (as after an expiry and a new holder), with no expiry.
  ASSERT_EQ(Cmd(node.endpoint(), {"SET", "lock:a", "someone-else"}).str, "OK");
  SleepFor(Millis(250));
  ASSERT_EQ(Count("fail"), 1);
  auto events = Events();
  EXPECT_EQ(events.back().type, "fail");
  EXPECT_EQ(events.back().value["error"], "not-owner");
  size_t seen = events.size();
  SleepFor(Millis(300));
  EXPECT_EQ(Events().size(), seen) << "no renewal after a failed one";
  EXPECT_EQ(Cmd(node.endpoint(), {"PTTL", "lock:a"}).integer, -1)
      << "the owner check kept the watchdog off someone else's key";
  EXPECT_EQ(a->Release(ra.lease).outcome, Outcome::kFail) << "compare-and-delete";
  EXPECT_EQ(Cmd(node.endpoint(), {"GET", "lock:a"}).str, "someone-else");
}

TEST_F(WatchdogTest, ARenewalThatTimesOutIsInfoAndStops) {
  auto& node = StartNode();
  auto a = Make(node.endpoint(), Millis(300));
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(500));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  SleepFor(Millis(150));  // one renewal done, the renewal connection is open
  ASSERT_EQ(kill(node.pid(), SIGSTOP), 0);
  SleepFor(Millis(450));  // a renewal is sent and times out after 200 ms
  kill(node.pid(), SIGCONT);
  EXPECT_EQ(Count("info"), 1);
  size_t seen = Events().size();
  SleepFor(Millis(250));
  EXPECT_EQ(Events().size(), seen);
}

TEST_F(WatchdogTest, KnobsSetPeriodAndRenewalTtl) {
  auto& node = StartNode();
  LockConfig c;
  c.algorithm = "watchdog";
  c.nodes = {node.endpoint()};
  c.ttl = Millis(300);
  c.knobs = {{"renew_period_ms", "50"}, {"renew_ttl_ms", "5000"}};
  std::unique_ptr<Lock> lock;
  ASSERT_TRUE(MakeLock(c, &lock).ok());
  EXPECT_EQ(static_cast<WatchdogLock*>(lock.get())->renew_period(), Millis(50));
  LockResult r = lock->Acquire("lock:a", MonotonicNow() + Millis(300));
  ASSERT_EQ(r.outcome, Outcome::kOk);
  SleepFor(Millis(120));
  EXPECT_GT(Cmd(node.endpoint(), {"PTTL", "lock:a"}).integer, 4000);
  c.knobs = {{"renew_period_ms", "soon"}};
  EXPECT_EQ(MakeLock(c, &lock).message(),
            "lock 'watchdog': knob 'renew_period_ms': expected an integer in 0..3600000, got "
            "'soon'");
}

}  // namespace
}  // namespace locklab::locks
