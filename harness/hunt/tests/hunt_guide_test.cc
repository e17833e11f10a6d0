// The hunt's feedback: signals read from a history, the corpus that keeps what was new or
// closer to failing, and the mutations it makes of what it kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/random.h"
#include "checker/history.h"
#include "harness/hunt/hunt_guide.h"
#include "checker/trial_signals.h"

namespace locklab::harness {
namespace {

using checker::TrialSignals;

checker::History Parse(const std::string& jsonl) {
  std::istringstream in(jsonl);
  checker::History h;
  Status s = checker::ParseJsonlHistory(in, "test.jsonl", &h);
  EXPECT_TRUE(s.ok()) << s.message();
  return h;
}

// Client 1 is granted a 100 ms lease at 0 ms, writes at 95 ms (inside its last tenth) and at
// 120 ms (past it), renews at 150 ms (too late), releases at 200 ms (past its validity even
// after the renewal's 30 ms). Client 2's renew fails, and its release comes back unknown.
const char kLeaseHistory[] =
    R"({"index":0,"time_ns":0,"process":1,"type":"invoke","f":"acquire","key":"lock:0","value":null}
{"index":1,"time_ns":0,"process":1,"type":"ok","f":"acquire","key":"lock:0","value":{"token":"a","validity_ms":100}}
{"index":2,"time_ns":94000000,"process":1,"type":"invoke","f":"write","key":"counter:0","value":1}
{"index":3,"time_ns":95000000,"process":1,"type":"ok","f":"write","key":"counter:0","value":1}
{"index":4,"time_ns":119000000,"process":1,"type":"invoke","f":"write","key":"counter:0","value":2}
{"index":5,"time_ns":120000000,"process":1,"type":"ok","f":"write","key":"counter:0","value":2}
{"index":6,"time_ns":149000000,"process":1,"type":"invoke","f":"renew","key":"lock:0","value":{"token":"a"}}
{"index":7,"time_ns":150000000,"process":1,"type":"ok","f":"renew","key":"lock:0","value":{"validity_ms":30}}
{"index":8,"time_ns":200000000,"process":1,"type":"invoke","f":"release","key":"lock:0","value":{"token":"a"}}
{"index":9,"time_ns":201000000,"process":1,"type":"ok","f":"release","key":"lock:0","value":null}
{"index":10,"time_ns":210000000,"process":2,"type":"invoke","f":"acquire","key":"lock:0","value":null}
{"index":11,"time_ns":211000000,"process":2,"type":"ok","f":"acquire","key":"lock:0","value":{"token":"b","validity_ms":100}}
{"index":12,"time_ns":220000000,"process":2,"type":"invoke","f":"renew","key":"lock:0","value":{"token":"b"}}
{"index":13,"time_ns":221000000,"process":2,"type":"fail","f":"renew","key":"lock:0","value":null}
{"index":14,"time_ns":230000000,"process":2,"type":"invoke","f":"release","key":"lock:0","value":{"token":"b"}}
{"index":15,"time_ns":231000000,"process":2,"type":"info","f":"release","key":"lock:0","value":null}
)";

TEST(HuntSignalsTest, ReadsHowCloseALeaseCameFromTheEventsAlone) {
  TrialSignals s = SignalsOf(Parse(kLeaseHistory), 2400, Millis(3000));
  EXPECT_EQ(s.holds, 2);
  EXPECT_EQ(s.writes_near_lease_end, 1);
  EXPECT_EQ(s.writes_after_lease_end, 1);
  EXPECT_EQ(s.renew_late, 1);
  EXPECT_EQ(s.holds_past_validity, 1);  // client 1's; client 2 released within its lease
  EXPECT_EQ(s.renew_failures, 1);
  EXPECT_EQ(s.unknown_outcomes, 1);
  EXPECT_DOUBLE_EQ(s.wait_fraction, 0.8);
  EXPECT_TRUE(s.outcome_kinds.count("release:info"));
  EXPECT_TRUE(s.outcome_kinds.count("renew:fail"));

  std::set<std::string> f = Features(s);
  EXPECT_TRUE(f.count("kind:renew:fail"));
  EXPECT_TRUE(f.count("renew_late:1"));
  EXPECT_TRUE(f.count("wait:75"));
  EXPECT_FALSE(f.count("wait:90"));
  EXPECT_GT(Closeness(s), Closeness(TrialSignals{}));
}

TEST(HuntSignalsTest, ALeaseWithoutValidityShowsNoLeaseSignal) {
  const char history[] =
      R"({"index":0,"time_ns":0,"process":1,"type":"invoke","f":"acquire","key":"lock:0","value":null}
{"index":1,"time_ns":0,"process":1,"type":"ok","f":"acquire","key":"lock:0","value":{"token":"a"}}
{"index":2,"time_ns":5000000000,"process":1,"type":"invoke","f":"write","key":"counter:0","value":1}
{"index":3,"time_ns":5000000001,"process":1,"type":"ok","f":"write","key":"counter:0","value":1}
{"index":4,"time_ns":9000000000,"process":1,"type":"invoke","f":"release","key":"lock:0","value":{"token":"a"}}
)";
  TrialSignals s = SignalsOf(Parse(history), -1, Millis(0));
  EXPECT_EQ(s.holds_past_validity + s.writes_after_lease_end + s.writes_near_lease_end, 0);
  EXPECT_EQ(s.wait_fraction, 0);
  EXPECT_EQ(Features(s), (std::set<std::string>{"kind:acquire:ok", "kind:write:ok"}));
}

TEST(HuntSignalsTest, ARunDirectoryGivesItsHistoryAndItsLivenessAsRead) {
  char tmpl[] = "/tmp/locklab-signals-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/history.jsonl") << kLeaseHistory;
  nlohmann::ordered_json results = {{"verdict", "safe"},
                                    {"liveness", {{"stuck", false}, {"longest_wait_ms", 1500.0}, {"stuck_after_ms", 2000}}}};
  TrialSignals s;
  ASSERT_TRUE(ReadTrialSignals(dir, results, &s).ok());
  EXPECT_EQ(s.renew_late, 1);
  EXPECT_DOUBLE_EQ(s.wait_fraction, 0.75);
  // A results.json of another shape: the history's signals still count, no wait.
  ASSERT_TRUE(ReadTrialSignals(dir, nlohmann::ordered_json{{"liveness", {{"stuck_after_ms", "soon"}}}}, &s).ok());
  EXPECT_EQ(s.renew_late, 1);
  EXPECT_EQ(s.wait_fraction, 0);
  EXPECT_FALSE(ReadTrialSignals(dir + "/absent", results, &s).ok());
  std::filesystem::remove_all(dir);
}

TEST(HuntSignalsTest, CountsFallIntoCoarseBuckets) {
  TrialSignals five, six, nine;
  five.renew_late = 5;
  six.renew_late = 6;
  nine.renew_late = 9;
  EXPECT_EQ(Features(five), Features(six));
  EXPECT_NE(Features(five), Features(nine));
}

SearchSpace Space() {
  SearchSpace s;
  s.lock = "set-nx-px-lua";
  s.ttl = Millis(500);
  s.faults = {"client-pause", "partition", "reply-loss"};
  s.max_faults = 3;
  return s;
}

TEST(GuidedCorpusTest, KeepsWhatIsNewOrCloserAndNothingElse) {
  GuidedCorpus corpus;
  RunOptions o;
  o.name = "t0001";
  TrialSignals plain;
  plain.outcome_kinds = {"acquire:ok", "release:ok"};
  EXPECT_TRUE(corpus.Observe(o, plain));   // everything is new at first
  EXPECT_FALSE(corpus.Observe(o, plain));  // the same again: nothing new, no closer
  TrialSignals renew_fail = plain;
  renew_fail.outcome_kinds.insert("renew:fail");
  EXPECT_TRUE(corpus.Observe(o, renew_fail));  // a new outcome kind
  TrialSignals more_fails = renew_fail;
  more_fails.renew_failures = 1;
  EXPECT_TRUE(corpus.Observe(o, more_fails));  // closer than any before (and a new count)
  EXPECT_EQ(corpus.size(), 3u);
}

TEST(GuidedCorpusTest, MutationsStayInTheSpaceAndReplayForASeed) {
  SearchSpace space = Space();
  Rng draw(7);
  GuidedCorpus a, b;
  for (int i = 0; i < 5; ++i) {
    RunOptions o = DrawScenario(space, draw, "t" + std::to_string(i));
    TrialSignals s;
    s.renew_late = i + 1;  // each closer than the last: all kept
    ASSERT_TRUE(a.Observe(o, s));
    ASSERT_TRUE(b.Observe(o, s));
  }
  Rng ra(11), rb(11);
  bool changed = false;
  for (int i = 0; i < 200; ++i) {
    RunOptions x = a.Mutate(space, ra, "m");
    RunOptions y = b.Mutate(space, rb, "m");
    EXPECT_EQ(x.seed, y.seed);
    EXPECT_EQ(x.faults.size(), y.faults.size());
    EXPECT_EQ(x.duration, y.duration);
    EXPECT_EQ(x.name, "m");
    EXPECT_LE(x.duration, space.max_duration);
    EXPECT_GE(x.clients, space.min_clients);
    EXPECT_LE(x.clients, space.max_clients);
    EXPECT_LE(static_cast<int>(x.faults.size()), space.max_faults);
    for (const auto& f : x.faults) EXPECT_GE(f.first_at, Millis(0));
    changed = changed || x.faults.size() > 1;
  }
  EXPECT_TRUE(changed) << "200 mutations never added a second fault";
}

}  // namespace
}  // namespace locklab::harness
