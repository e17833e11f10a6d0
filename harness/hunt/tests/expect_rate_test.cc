// Statistical expectations: the binomial arithmetic of expect_rate.h (exact values, and
// replays simulated with a seeded Rng at the rates a plan is made for), the [expect] keys
// read, refused and written back (scenario_reader.cc, scenario_writer.cc), and the tally
// that judges a scenario's trials (run_checks.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "base/random.h"
#include "faults/fault.h"
#include "harness/scenario/expect_rate.h"
#include "harness/hunt/hunt_story.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

TEST(ExpectRateTest, BinomialTailIsExact) {
  // P(X >= 8), X ~ Binomial(10, 0.5) = (45 + 10 + 1) / 1024.
  EXPECT_NEAR(BinomialAtLeast(10, 0.5, 8), 56.0 / 1024.0, 1e-12);
  // P(X >= 1) = 1 - (1 - p)^n.
  EXPECT_NEAR(BinomialAtLeast(4, 0.3, 1), 1 - std::pow(0.7, 4), 1e-12);
  EXPECT_NEAR(BinomialAtLeast(30, 0.2, 0), 1.0, 0);
  EXPECT_EQ(BinomialAtLeast(3, 0.9, 4), 0.0);
  EXPECT_EQ(BinomialAtLeast(3, 0.0, 1), 0.0);
  EXPECT_EQ(BinomialAtLeast(3, 1.0, 3), 1.0);
  // The whole distribution sums to 1: P(X >= k) - P(X >= k+1) = P(X = k).
  double sum = 0;
  for (int k = 0; k <= 25; ++k) sum += BinomialAtLeast(25, 0.37, k) - BinomialAtLeast(25, 0.37, k + 1);
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

TEST(ExpectRateTest, ClopperPearsonLowerBound) {
  // k = n: the bound solves p^n = 1 - confidence.
  EXPECT_NEAR(ClopperPearsonLower(10, 10, 0.95), std::pow(0.05, 0.1), 1e-9);
  // k = 1: 1 - (1 - p)^n = 0.05.
  EXPECT_NEAR(ClopperPearsonLower(1, 10, 0.95), 1 - std::pow(0.95, 0.1), 1e-9);
  EXPECT_EQ(ClopperPearsonLower(0, 10, 0.95), 0.0);
  // By definition: at the bound, k or more of n happen with probability 1 - confidence.
  for (int k = 1; k <= 10; ++k) {
    EXPECT_NEAR(BinomialAtLeast(10, ClopperPearsonLower(k, 10, 0.95), k), 0.05, 1e-9) << k;
  }
  // Below k / n, and rising with k.
  for (int k = 1; k < 10; ++k) {
    EXPECT_LT(ClopperPearsonLower(k, 10, 0.95), k / 10.0);
    EXPECT_LT(ClopperPearsonLower(k, 10, 0.95), ClopperPearsonLower(k + 1, 10, 0.95));
  }
}

TEST(ExpectRateTest, KForRateIsTheLargestKThatHolds) {
  for (int n : {1, 5, 20, 30}) {
    for (double p : {0.05, 0.3, 0.7, 0.95}) {
      const int k = KForRate(n, p, 0.99);
      if (k > 0) {
        EXPECT_GE(BinomialAtLeast(n, p, k), 0.99) << n << " " << p;
      }
      if (k < n) {
        EXPECT_LT(BinomialAtLeast(n, p, k + 1), 0.99) << n << " " << p;
      }
    }
  }
  EXPECT_EQ(KForRate(3, 0.1, 0.99), 0);  // 1 - 0.9^3 = 0.271
  EXPECT_EQ(KForRate(10, 1.0, 0.99), 10);
}

TEST(ExpectRateTest, ReplayPlansOfAHuntsReproductionRates) {
  // The numbers expect_rate.h quotes.
  auto ten = ReplayExpectation(10, 10);
  ASSERT_TRUE(ten);
  EXPECT_EQ(ten->trials, 4);
  EXPECT_EQ(ten->at_least, 1);
  EXPECT_NEAR(ten->rate_low, 0.741, 0.001);
  auto eight = ReplayExpectation(8, 10);
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->trials, 7);
  EXPECT_EQ(eight->at_least, 1);
  EXPECT_NEAR(eight->rate_low, 0.493, 0.001);
  // 2 and 3 of 10 are too thin for a regression within 30 trials.
  EXPECT_FALSE(ReplayExpectation(3, 10));
  EXPECT_FALSE(ReplayExpectation(2, 10));
  EXPECT_FALSE(ReplayExpectation(0, 10));
  // Every plan within the cap, with K >= 1, passing at its bound with 99%, and the cheapest.
  for (int k = 1; k <= 10; ++k) {
    auto plan = ReplayExpectation(k, 10);
    if (!plan) continue;
    EXPECT_LE(plan->trials, kMaxReplayTrials);
    EXPECT_GE(plan->at_least, 1);
    EXPECT_GE(BinomialAtLeast(plan->trials, plan->rate_low, plan->at_least), kReplayPassProbability);
    EXPECT_EQ(KForRate(plan->trials - 1, plan->rate_low, kReplayPassProbability), 0) << k;
  }
}

// How often `replays` replays of a scenario failing at rate p, each of `trials` trials, see
// at least `at_least` failures.
double SimulatedPassRate(int trials, int at_least, double p, int replays, uint64_t seed) {
  Rng rng(seed);
  int passed = 0;
  for (int r = 0; r < replays; ++r) {
    int failed = 0;
    for (int t = 0; t < trials; ++t) failed += rng.Unit() < p;
    passed += failed >= at_least;
  }
  return static_cast<double>(passed) / replays;
}

TEST(ExpectRateTest, SimulatedReplaysAtOrAboveTheBoundPass) {
  // 20000 replays: the pass rate's standard error at 0.99 is 0.0007; 3 of them below 0.99
  // is the simulation's noise, not the plan's.
  constexpr int kReplays = 20000;
  const double floor = kReplayPassProbability - 3 * std::sqrt(0.99 * 0.01 / kReplays);
  // 2 and 3 of 10 (too thin within 30 trials): their plans with no cap on trials, and the
  // plans a hunt writes (4 to 10 of 10).
  for (int k = 2; k <= 10; ++k) {
    auto plan = ReplayExpectation(k, 10, k < 4 ? 1000 : kMaxReplayTrials);
    ASSERT_TRUE(plan) << k;
    for (double p : {plan->rate_low, (plan->rate_low + 1) / 2, 1.0}) {
      const double pass = SimulatedPassRate(plan->trials, plan->at_least, p, kReplays, 1000 + k);
      EXPECT_GE(pass, floor) << k << " of 10: " << plan->trials << " trials, at least "
                             << plan->at_least << ", rate " << p;
    }
  }
}

TEST(ExpectRateTest, TwentyReplaysOfAPlanAllPass) {
  // The hunt's promise: a minimal that reproduced k of 10 either gets an expectation that
  // holds in 20 of 20 replays at a rate at its bound, or none. Exactly: P(all 20 pass).
  for (int k = 1; k <= 10; ++k) {
    auto plan = ReplayExpectation(k, 10);
    if (!plan) continue;
    const double all_pass = std::pow(BinomialAtLeast(plan->trials, k / 10.0, plan->at_least), 20);
    EXPECT_GE(all_pass, 0.8) << k << " of 10 at its measured rate";
  }
}

RunOptions Parse(const std::string& text, Status* s) {
  RunOptions o;
  *s = ParseScenario(text, "corpus.toml", &o);
  return o;
}

const char kLock[] = "[lock]\nid = \"set-nx-px-lua\"\n";

TEST(StatisticalExpectTest, ReadAndWrittenBack) {
  Status s;
  RunOptions o = Parse(std::string("trials = 5\n[expect]\nviolated_at_least = 2\nresource = \"violated\"\n") + kLock, &s);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.expect_violated_at_least, 2);
  EXPECT_TRUE(IsStatisticalExpectation(o));
  EXPECT_EQ(RequiredFailures(o), 2);
  EXPECT_EQ(PerTrialExpectation(o), "verdict violated, resource violated");
  RunOptions back;
  ASSERT_TRUE(ParseScenario(ScenarioToToml(o), "back.toml", &back).ok()) << ScenarioToToml(o);
  EXPECT_EQ(back.expect_violated_at_least, 2);
  EXPECT_EQ(ScenarioToToml(back), ScenarioToToml(o));

  o = Parse(std::string("trials = 10\n[expect]\nviolated_rate = 0.3\nconfidence = 0.95\n") + kLock, &s);
  ASSERT_TRUE(s.ok()) << s.message();
  back = RunOptions{};
  EXPECT_EQ(RequiredFailures(o), KForRate(10, 0.3, 0.95));
  ASSERT_TRUE(ParseScenario(ScenarioToToml(o), "back.toml", &back).ok()) << ScenarioToToml(o);
  EXPECT_EQ(back.expect_violated_rate, 0.3);
  EXPECT_EQ(back.expect_confidence, 0.95);
  EXPECT_EQ(ScenarioToToml(back), ScenarioToToml(o));
  // Rate 1 as an integer, and the default confidence.
  o = Parse(std::string("trials = 3\n[expect]\nviolated_rate = 1\n") + kLock, &s);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(RequiredFailures(o), 3);
  back = RunOptions{};
  ASSERT_TRUE(ParseScenario(ScenarioToToml(o), "back.toml", &back).ok()) << ScenarioToToml(o);
  EXPECT_EQ(back.expect_violated_rate, 1.0);
  // Without the statistical keys nothing changes: every trial must meet it.
  o = Parse(std::string("trials = 3\n[expect]\nverdict = \"violated\"\n") + kLock, &s);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(IsStatisticalExpectation(o));
  EXPECT_EQ(RequiredFailures(o), 3);
  EXPECT_EQ(ScenarioToToml(o).find("violated_at_least"), std::string::npos);
}

TEST(StatisticalExpectTest, NonsenseIsRefusedWithFileLineAndField) {
  struct Case {
    std::string expect, message;
  };
  const Case cases[] = {
      {"violated_at_least = 4", "corpus.toml:3: field 'expect.violated_at_least': 4 of 3 trials"},
      {"violated_at_least = 0", "corpus.toml:3: field 'expect.violated_at_least': expected an integer in 1..1000"},
      {"violated_at_least = 1.5", "field 'expect.violated_at_least': expected an integer"},
      {"violated_rate = 1.5", "corpus.toml:3: field 'expect.violated_rate': expected a number in (0, 1], got '1.5'"},
      {"violated_rate = 0", "field 'expect.violated_rate': expected a number in (0, 1]"},
      {"violated_rate = -0.2", "field 'expect.violated_rate': expected a number in (0, 1]"},
      {"violated_rate = \"high\"", "field 'expect.violated_rate': expected a number in (0, 1], got 'high'"},
      {"violated_rate = 0.1", "field 'expect.violated_rate': at rate 0.1, 3 trials fail at least once"},
      {"violated_rate = 0.5\nviolated_at_least = 1", "not both"},
      {"violated_rate = 0.9\nconfidence = 1", "corpus.toml:4: field 'expect.confidence': expected a number in (0, 1)"},
      {"confidence = 0.9", "field 'expect.confidence': only with violated_rate"},
      {"verdict = \"safe\"\nviolated_at_least = 1", "corpus.toml:3: field 'expect.verdict': violated_at_least counts failing trials"},
      {"violated_at_most = 1", "corpus.toml:3: field 'expect.violated_at_most'"},
      // An empty word is no expectation written down, not "none": refused like any other.
      {"verdict = \"\"", "corpus.toml:3: field 'expect.verdict': expected "},
      {"verdict = \"Violated\"", "corpus.toml:3: field 'expect.verdict': expected "},
      {"stuck = \"\"", "corpus.toml:3: field 'expect.stuck': expected yes or no"},
      {"resource = \"unknown\"", "corpus.toml:3: field 'expect.resource': expected safe or violated"},
      {"resource = \"\"", "corpus.toml:3: field 'expect.resource': expected safe or violated"},
  };
  for (const Case& c : cases) {
    Status s;
    Parse("trials = 3\n[expect]\n" + c.expect + "\n" + kLock, &s);
    EXPECT_FALSE(s.ok()) << c.expect;
    EXPECT_EQ(s.ExitCode(), 65) << c.expect;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.expect << "\n  got: " << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
}

nlohmann::ordered_json Results(const std::string& verdict, const std::string& resource = "safe") {
  return {{"verdict", verdict}, {"resource_verdict", resource}};
}

// A failure seen while the lab itself ran late does not count towards K, and the trial is
// replaced (at most `trials` more): a busy machine makes a replay longer, never a regression.
TEST(StatisticalExpectTest, ATrialTheLabRanLateForIsReplacedNotCountedAgainst) {
  Status s;
  RunOptions o = Parse(std::string("trials = 2\n[expect]\nviolated_at_least = 2\n") + kLock, &s);
  ASSERT_TRUE(s.ok());
  nlohmann::ordered_json late = Results("violated");
  late["lab_lag"] = {{"timing_trusted", false}};
  ExpectationTally tally(o);
  EXPECT_EQ(tally.TrialsToRun(), 2);
  tally.Add(late);
  tally.Add(late);
  EXPECT_EQ(tally.TrialsToRun(), 4);  // two replacements
  EXPECT_EQ(tally.Decide(2), ExpectationTally::Outcome::kOpen);
  tally.Add(late);
  tally.Add(late);
  EXPECT_EQ(tally.TrialsToRun(), 4);  // at most `trials` more
  // Every trial ran: K only by counting late ones is undecided, not NOT met.
  EXPECT_EQ(tally.Decide(0), ExpectationTally::Outcome::kOpen);
  EXPECT_NE(tally.Describe().find("4 more while the lab itself ran late"), std::string::npos) << tally.Describe();

  ExpectationTally mixed(o);
  mixed.Add(late);
  mixed.Add(Results("violated"));
  mixed.Add(Results("violated"));  // the replacement, on time
  EXPECT_EQ(mixed.Decide(0), ExpectationTally::Outcome::kMet);

  ExpectationTally missed(o);
  missed.Add(late);
  missed.Add(Results("safe"));
  missed.Add(Results("safe"));  // even the late one would leave 1 of 2
  EXPECT_EQ(missed.Decide(0), ExpectationTally::Outcome::kNotMet);
}

TEST(StatisticalExpectTest, TallyDecidesAsSoonAsTheCountDoes) {
  Status s;
  RunOptions o = Parse(std::string("trials = 5\n[expect]\nviolated_at_least = 2\n") + kLock, &s);
  ASSERT_TRUE(s.ok());
  ExpectationTally tally(o);
  tally.Add(Results("safe"));
  EXPECT_EQ(tally.Decide(4), ExpectationTally::Outcome::kOpen);
  tally.Add(Results("unknown"));  // the others may end any way
  tally.Add(Results("violated"));
  EXPECT_EQ(tally.Decide(2), ExpectationTally::Outcome::kOpen);
  tally.Add(Results("violated"));
  EXPECT_EQ(tally.Decide(1), ExpectationTally::Outcome::kMet);
  EXPECT_EQ(tally.violated(), 2);
  EXPECT_NE(tally.Describe().find("2 of 4 trials had verdict violated, at least 2 of 5 needed"), std::string::npos)
      << tally.Describe();

  ExpectationTally missed(o);
  for (int i = 0; i < 4; ++i) missed.Add(Results("safe"));
  EXPECT_EQ(missed.Decide(1), ExpectationTally::Outcome::kNotMet);  // 1 left cannot reach 2
  EXPECT_NE(missed.Describe().find("0 of 4 trials had verdict violated"), std::string::npos);
  EXPECT_NE(missed.Describe().find("(expectation at corpus.toml:2)"), std::string::npos) << missed.Describe();

  // Exact: every trial must meet it; the first miss decides.
  RunOptions exact = Parse(std::string("trials = 3\n[expect]\nverdict = \"violated\"\n") + kLock, &s);
  ExpectationTally e(exact);
  e.Add(Results("violated"));
  EXPECT_EQ(e.Decide(2), ExpectationTally::Outcome::kOpen);
  e.Add(Results("safe"));
  EXPECT_EQ(e.Decide(1), ExpectationTally::Outcome::kNotMet);
  EXPECT_NE(e.Describe().find("trial 2: expected verdict violated, got safe"), std::string::npos) << e.Describe();
  ExpectationTally all(exact);
  for (int i = 0; i < 3; ++i) all.Add(Results("violated"));
  EXPECT_EQ(all.Decide(0), ExpectationTally::Outcome::kMet);
  // A failure seen while the lab itself ran late does not count (as in a hunt's reruns).
  ExpectationTally late(o);
  nlohmann::ordered_json untrusted = Results("violated");
  untrusted["lab_lag"] = {{"timing_trusted", false}};
  late.Add(untrusted);
  late.Add(untrusted);
  late.Add(Results("violated"));
  EXPECT_EQ(late.met(), 1);
  EXPECT_EQ(late.Decide(2), ExpectationTally::Outcome::kOpen);
  EXPECT_NE(late.Describe().find("(2 more while the lab itself ran late: not counted)"), std::string::npos)
      << late.Describe();
  late.Add(untrusted);
  late.Add(untrusted);
  // K reached only by counting late trials: undecided (unknown), not a regression.
  EXPECT_EQ(late.Decide(0), ExpectationTally::Outcome::kOpen);
  // Exact expectations judge every trial as before, trusted or not.
  ExpectationTally exact_late(exact);
  for (int i = 0; i < 3; ++i) exact_late.Add(untrusted);
  EXPECT_EQ(exact_late.Decide(0), ExpectationTally::Outcome::kMet);
  // A resource-only statistical expectation counts trials with a broken resource.
  RunOptions res = Parse(std::string("trials = 2\n[expect]\nviolated_at_least = 1\nresource = \"violated\"\n") + kLock, &s);
  ExpectationTally r(res);
  r.Add(Results("violated", "safe"));
  EXPECT_EQ(r.met(), 0);
  r.Add(Results("violated", "violated"));
  EXPECT_EQ(r.Decide(0), ExpectationTally::Outcome::kMet);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

HuntStory StoryOf(int reproduced, int reruns) {
  HuntStory s;
  s.lock = "mutant:plain-del";
  s.baseline = "set-nx-px-lua";
  RunOptions m;
  m.lock = "mutant:plain-del";
  m.seed = 77;
  m.duration = Millis(1500);
  faults::FaultOptions f;
  f.id = "client-pause";
  m.faults.push_back(f);
  s.minimal = m;
  s.kinds = {FailureKind::kViolated};
  s.reproduced = reproduced;
  s.reruns = reruns;
  return s;
}

TEST(HuntMinimalExpectTest, AFindThatReproducesGetsAStatisticalExpect) {
  HuntStory s = StoryOf(10, 10);
  RunOptions back;
  const std::string toml = MinimalToml(s, "runs/hunt-x/1");
  Status read = ParseScenario(toml, "minimal.toml", &back);
  ASSERT_TRUE(read.ok()) << read.message() << "\n" << toml;
  EXPECT_EQ(back.trials, 4);
  EXPECT_EQ(back.expect_violated_at_least, 1);
  EXPECT_EQ(back.expect_verdict, checker::Verdict::kViolated);
  EXPECT_EQ(back.seed, 77u);
  EXPECT_TRUE(MinimalIsRegression(s));
  EXPECT_NE(DescribeMinimalReplay(s).find("regression: minimal.toml expects at least 1 of 4 trials"), std::string::npos)
      << DescribeMinimalReplay(s);
  EXPECT_NE(DescribeMinimalReplay(s).find("4 x 1.5 s = 6 s"), std::string::npos) << DescribeMinimalReplay(s);
  const auto j = HuntJson(s);
  EXPECT_EQ(j["minimal"]["regression"]["trials"], 4);
  EXPECT_EQ(j["minimal"]["regression"]["violated_at_least"], 1);
  EXPECT_EQ(j["minimal"]["regression"]["corpus"], true);
  // A resource-only difference counts trials whose resource broke.
  s.kinds = {FailureKind::kResource};
  back = RunOptions{};
  ASSERT_TRUE(ParseScenario(MinimalToml(s, "d"), "minimal.toml", &back).ok());
  EXPECT_EQ(back.expect_resource, checker::Verdict::kViolated);
  EXPECT_EQ(back.expect_violated_at_least, 1);
  // The baseline failed it: still its lock's regression, but no kill for a corpus.
  s.baseline_failures = 2;
  EXPECT_FALSE(MinimalIsRegression(s));
  EXPECT_NE(DescribeMinimalReplay(s).find("the baseline failed it too"), std::string::npos);
}

// The promise: a minimal that reproduced 2 or 3 times in 10 is not written as a regression,
// and the hunt says so (hunt.json, hunt.md and the summary carry DescribeMinimalReplay).
TEST(HuntMinimalExpectTest, AThinFindIsNotWrittenAsARegressionAndTheHuntSaysSo) {
  for (int k : {2, 3}) {
    HuntStory s = StoryOf(k, 10);
    const std::string toml = MinimalToml(s, "d");
    RunOptions back;
    ASSERT_TRUE(ParseScenario(toml, "minimal.toml", &back).ok()) << toml;
    EXPECT_FALSE(HasExpectations(back)) << toml;
    EXPECT_NE(toml.find("# No [expect]: too rare to be a regression"), std::string::npos) << toml;
    EXPECT_FALSE(MinimalIsRegression(s));
    EXPECT_EQ(DescribeMinimalReplay(s).rfind("not a regression: minimal.toml failed in " + std::to_string(k) + " of 10", 0), 0u)
        << DescribeMinimalReplay(s);
    const auto j = HuntJson(s);
    EXPECT_TRUE(j["minimal"]["regression"].is_null());
    EXPECT_NE(j["minimal"]["regression_note"].get<std::string>().find("not a regression"), std::string::npos);
    EXPECT_NE(HuntSummary(s, "d").find("not a regression"), std::string::npos);
  }
}

TEST(HuntMinimalExpectTest, CorpusCopiesOnceUnderANameThatSaysLockFaultsAndHash) {
  char tmpl[] = "/tmp/locklab-corpus-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string corpus = std::string(tmpl) + "/corpus";
  HuntStory s = StoryOf(9, 10);
  std::string path, again;
  bool existed = true;
  ASSERT_TRUE(CopyToCorpus(s, "runs/hunt-a/1", corpus, &path, &existed).ok());
  EXPECT_FALSE(existed);
  const std::string name = path.substr(path.rfind('/') + 1);
  EXPECT_EQ(name.rfind("mutant-plain-del--client-pause--", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("mutant-plain-del--client-pause--").size() + 8 + 5) << name;
  RunOptions back;
  ASSERT_TRUE(LoadScenarioFile(path, &back).ok());
  EXPECT_TRUE(IsStatisticalExpectation(back));
  EXPECT_EQ(back.name, "mutant-plain-del--client-pause");
  EXPECT_NE(ReadFile(path).find("# Found and shrunk by `locklab hunt` (runs/hunt-a/1)"), std::string::npos);
  // The same scenario from another hunt (its directory in the comment differs): not copied again.
  ASSERT_TRUE(CopyToCorpus(s, "runs/hunt-b/2", corpus, &again, &existed).ok());
  EXPECT_TRUE(existed);
  EXPECT_EQ(again, path);
  // Another scenario: another name.
  s.minimal->seed = 78;
  ASSERT_TRUE(CopyToCorpus(s, "runs/hunt-a/1", corpus, &again, &existed).ok());
  EXPECT_FALSE(existed);
  EXPECT_NE(again, path);
  (void)!system(("rm -rf " + std::string(tmpl)).c_str());
}

}  // namespace
}  // namespace locklab::harness
