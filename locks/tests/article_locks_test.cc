// The articles' locks do what their published code does, bugs included.
#include <mutex>
#include <set>

#include "locks/lock.h"
#include "tests/lab_fixture.h"

namespace locklab::locks {
namespace {

class ArticleLockTest : public testing::LabNodeTest {
 protected:
  std::unique_ptr<Lock> Make(const std::string& id, const Endpoint& e,
                             std::map<std::string, std::string> knobs = {},
                             Millis ttl = Millis(1000)) {
    LockConfig c;
    c.algorithm = id;
    c.nodes = {e};
    c.ttl = ttl;
    c.knobs = std::move(knobs);
    c.on_event = [this](int worker, const char* type, const char* f, const std::string&,
                        const nlohmann::json& value) {
      std::lock_guard<std::mutex> l(mu_);
      workers_.insert(worker);
      events_.push_back(std::string(type) + " " + f + " " + value.dump());
    };
    return BuildLock(c);
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }
  std::mutex mu_;
  std::vector<std::string> events_;
  std::set<int> workers_;
};

TEST_F(ArticleLockTest, RedisLockUtilsKeyLivesFiveMilliseconds) {
  auto& node = StartNode();
  auto a = Make("article-redislockutil", node.endpoint());
  auto b = Make("article-redislockutil", node.endpoint());
  LockResult ra = a->Acquire("lock:a", MonotonicNow());
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  EXPECT_LE(Cmd(node.endpoint(), {"PTTL", "lock:a"}).integer, 5);
  SleepFor(Millis(10));
  EXPECT_EQ(b->Acquire("lock:a", MonotonicNow()).outcome, Outcome::kOk)
      << "A still believes it holds the lock";
}

TEST_F(ArticleLockTest, RedisLockUtilGivesUpAfterOneSecondOfHundredMsPolls) {
  auto& node = StartNode();
  ASSERT_EQ(Cmd(node.endpoint(), {"SET", "lock:a", "held"}).str, "OK");
  auto a = Make("article-redislockutil", node.endpoint(), {{"timeout_ms", "300"}});
  Nanos t0 = MonotonicNow();
  LockResult r = a->Acquire("lock:a", t0 + Millis(5000));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  Nanos took = MonotonicNow() - t0;
  EXPECT_GE(took, Millis(300));
  EXPECT_LT(took, Millis(1000)) << "its own TIME_OUT, not the caller's deadline";
}

TEST_F(ArticleLockTest, BlockingLockReturnsAsIfLockedWhenItTimesOut) {
  auto& node = StartNode();
  ASSERT_EQ(Cmd(node.endpoint(), {"SET", "lock:a", "held"}).str, "OK");
  auto a = Make("article-blocking", node.endpoint(), {{"sleep_ms", "20"}});
  LockResult r = a->Acquire("lock:a", MonotonicNow() + Millis(100));
  EXPECT_EQ(r.outcome, Outcome::kOk) << "lock() is void: its caller goes on";
  EXPECT_EQ(Cmd(node.endpoint(), {"GET", "lock:a"}).str, "held") << "without the lock";
  EXPECT_EQ(a->Release(r.lease).outcome, Outcome::kFail) << "its unlock is owner-checked";
}

TEST_F(ArticleLockTest, WatchdogArticleDeletesAnotherOwnersKeyAndGrowsTheTtl) {
  auto& node = StartNode();
  auto a = Make("article-watchdog", node.endpoint(),
                {{"lock_s", "2"}, {"initial_delay_ms", "50"}, {"period_ms", "100"}});
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(300));
  ASSERT_EQ(ra.outcome, Outcome::kOk);
  EXPECT_LE(Cmd(node.endpoint(), {"TTL", "lock:a"}).integer, 2);
  SleepFor(Millis(280));  // renewals at 50, 150, 250 ms: 2 -> 12 -> 22 -> 32 s
  EXPECT_GE(Cmd(node.endpoint(), {"TTL", "lock:a"}).integer, 30) << "remaining TTL + 10 s each time";
  // Another client's key: the article's finally-DEL removes it.
  ASSERT_EQ(Cmd(node.endpoint(), {"SET", "lock:a", "someone-else"}).str, "OK");
  EXPECT_EQ(a->Release(ra.lease).outcome, Outcome::kOk);
  EXPECT_TRUE(Cmd(node.endpoint(), {"GET", "lock:a"}).is_nil) << "DEL without owner check";
  SleepFor(Millis(150));
  auto events = Events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), "fail renew {\"error\":\"not-owner\"}")
      << "the renewal task ran on after release until it saw the key was not its own";
}

TEST(LockListTest, EveryLockIsListedWithItsKnobs) {
  std::vector<std::string> ids;
  for (const auto& l : ListLocks()) {
    ids.push_back(l.id);
    EXPECT_FALSE(l.description.empty());
    for (const auto& k : l.knobs) {
      EXPECT_FALSE(k.default_value.empty()) << l.id << "." << k.name;
      EXPECT_FALSE(k.description.empty()) << l.id << "." << k.name;
      // The documented default is accepted as a value.
      LockConfig c;
      c.algorithm = l.id;
      c.nodes.assign(l.default_nodes, Endpoint{});
      c.knobs = {{k.name, k.default_value}};
      std::unique_ptr<Lock> lock;
      Status s = MakeLock(c, &lock);
      EXPECT_TRUE(s.ok()) << s.message();
    }
  }
  for (const char* id : {"watchdog", "redlock", "fenced", "article-redislockutil",
                         "article-blocking", "article-watchdog"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  }
  EXPECT_EQ(FindLock("redlock")->default_nodes, 5);
  EXPECT_EQ(FindLock("redlock")->knobs.size(), 9u);
}

}  // namespace
}  // namespace locklab::locks
