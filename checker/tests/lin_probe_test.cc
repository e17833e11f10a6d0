// The depth-first probe and the merging of interchangeable operations (lin_sweep.cc), on
// wide histories: many operations open at once, where the breadth-first closure had to
// enumerate every subset. Verdicts are judged by the brute-force checker (every order of
// every op), and the three ways of running the search (sweep alone, probe first, probe when
// wide) must agree on the verdict and on the shortest prefix that cannot be linearized.
// Speed is the benchmark's business (bench/checker_bench --wide); here only what can be
// wrong is asserted.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/linearizability.h"
#include "checker/testing/brute_force.h"
#include "checker/testing/wide_history_generator.h"

namespace locklab::checker {
namespace {

using json = nlohmann::json;

std::string Dump(const History& h) {
  std::string s;
  for (const Event& e : h) s += ToJsonLine(e) + "\n";
  return s;
}

LinearizabilityResult CheckWith(const History& h, Model m, size_t probe) {
  LinearizabilityOptions o;
  o.probe_after_configs = probe;
  LinearizabilityResult r;
  Status s = CheckLinearizability(h, m, o, "wide", &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

// All three ways against the brute force; returns whether the history is valid.
bool ExpectAgreement(const History& h, Model m, const std::string& what) {
  bool want = testing::BruteForce(m, testing::OperationsOf(h), false);
  int64_t prefix = -2;
  for (size_t probe : {kNeverProbe, size_t(0), size_t(1), size_t(1024)}) {
    LinearizabilityResult r = CheckWith(h, m, probe);
    EXPECT_EQ(r.verdict, want ? LinVerdict::kValid : LinVerdict::kInvalid)
        << what << " " << ModelName(m) << " probe_after_configs " << probe << "\n"
        << r.ToText() << Dump(h);
    int64_t p = r.counterexample ? r.counterexample->failed.complete_index : -1;
    if (prefix == -2) prefix = p;
    EXPECT_EQ(p, prefix) << what << " " << ModelName(m) << " probe " << probe << "\n" << Dump(h);
  }
  return want;
}

// Operations from their call and return times, made into a history in time order (ties in
// the order they were added). Outcome code: 0 info, 1 fail, else ok; an acquire's completion
// names its token unless it failed, a release or renew names it on the call.
class TimedOps {
 public:
  void Add(int process, const std::string& f, const std::string& token, int64_t call, int64_t ret, int outcome) {
    testing::GOp o;
    o.process = process;
    o.f = f;
    o.key = "k";
    if (f != "acquire") o.in = json{{"token", token}};
    o.call = call;
    o.ret = ret;
    o.outcome = outcome == 0 ? EventType::kInfo : outcome == 1 ? EventType::kFail : EventType::kOk;
    if (f == "acquire" && outcome != 1) o.out = json{{"token", token}};
    ops_.push_back(std::move(o));
  }
  History InTimeOrder() const { return testing::HistoryOf(ops_); }

 private:
  std::vector<testing::GOp> ops_;
};

// `trials` histories of `draw` against the brute force under each of `models`; both verdicts
// must be well represented (more than `at_least` each), or the comparison shows little.
template <typename Draw>
void ExpectAgreementOn(uint64_t seed, int trials, std::vector<Model> models, int at_least, Draw draw) {
  std::mt19937_64 rng(seed);
  int valid = 0, invalid = 0;
  for (int trial = 0; trial < trials; ++trial) {
    History h = draw(rng);
    for (Model m : models) {
      bool ok = ExpectAgreement(h, m, "trial " + std::to_string(trial));
      (ok ? valid : invalid)++;
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(valid, at_least);
  EXPECT_GT(invalid, at_least);
}

// Random wide histories: every process does one operation, all of them overlap a lot;
// acquires and releases of three tokens, some outcomes unknown or failed.
History RandomWide(std::mt19937_64& rng, int ops) {
  TimedOps t;
  for (int p = 0; p < ops; ++p) {
    int64_t call = static_cast<int64_t>(rng() % 12);
    int64_t ret = call + 1 + static_cast<int64_t>(rng() % 14);
    bool acquire = rng() % 2 == 0;
    std::string token = "t" + std::to_string(rng() % 3);
    int outcome = static_cast<int>(rng() % 10);
    t.Add(p, acquire ? "acquire" : "release", token, call, ret, outcome);
  }
  return t.InTimeOrder();
}

TEST(LinProbe, RandomWideHistoriesMatchBruteForce) {
  ExpectAgreementOn(20261127, 600, {Model::kMutex, Model::kOwnerMutex}, 150,
                    [](std::mt19937_64& rng) { return RandomWide(rng, 3 + static_cast<int>(rng() % 6)); });
}

TEST(LinProbe, GeneratedWideWindowsMatchBruteForce) {
  int invalid = 0;
  for (int k = 1; k <= 4; ++k) {
    for (bool bad : {false, true}) {
      for (int unknown = 0; unknown <= 1; ++unknown) {
        for (uint64_t seed = 1; seed <= 6; ++seed) {
          testing::WideHistorySpec spec;
          spec.windows = 1;
          spec.k = k;
          spec.invalid = bad;
          spec.unknown_per_window = unknown;
          spec.seed = seed;
          History h = testing::GenerateWideHistory(spec);
          for (Model m : {Model::kMutex, Model::kOwnerMutex, Model::kFencedMutex}) {
            bool ok = ExpectAgreement(h, m, "k " + std::to_string(k) + " seed " +
                                                std::to_string(seed));
            // The generator's own claim: the window is valid unless made invalid (with an
            // unknown acquire, k+1 acquires may still fit k-1 releases: that one need not
            // take effect).
            if (!bad || unknown == 0) {
              EXPECT_EQ(ok, !bad) << "generator, k " << k << " seed " << seed;
            }
            invalid += !ok;
          }
        }
      }
    }
  }
  EXPECT_GT(invalid, 20);
}

// The generator's ten windows of k acquires and k releases open at once, seeded by k; with
// `bad`, the middle one cannot be linearized.
History TenWideWindows(int k, bool bad) {
  testing::WideHistorySpec spec;
  spec.k = k;
  spec.invalid = bad;
  spec.seed = static_cast<uint64_t>(k);
  return testing::GenerateWideHistory(spec);
}

// Ten windows, wide enough that the closure once had to hold ~C(2k,k) configurations: the
// verdicts the generator promises, under each way of running the search.
TEST(LinProbe, TenWideWindowsGetTheirVerdict) {
  for (int k : {6, 10}) {
    for (bool bad : {false, true}) {
      History h = TenWideWindows(k, bad);
      for (Model m : {Model::kMutex, Model::kOwnerMutex}) {
        for (size_t probe : {size_t(0), size_t(1024)}) {
          LinearizabilityResult r = CheckWith(h, m, probe);
          EXPECT_EQ(r.verdict, bad ? LinVerdict::kInvalid : LinVerdict::kValid)
              << "k " << k << " " << ModelName(m) << " probe " << probe << "\n" << r.ToText();
          if (bad && r.counterexample) {
            // The shortest prefix ends inside the middle window (the fifth of ten).
            int64_t window_events = 4 * k;
            EXPECT_GE(r.counterexample->failed.complete_index, 5 * window_events) << r.ToText();
            EXPECT_LT(r.counterexample->failed.complete_index, 6 * window_events) << r.ToText();
          }
        }
      }
    }
  }
}

// A time budget ends a search that cannot finish in it with unknown, naming the budget. (A
// budget of nothing: the wide windows that once outlasted 50 ms now take a few states.)
TEST(LinProbe, ABudgetTooSmallAnswersUnknown) {
  testing::WideHistorySpec spec;
  spec.k = 16;
  spec.invalid = true;
  History h = testing::GenerateWideHistory(spec);
  LinearizabilityOptions o;
  o.time_budget = std::chrono::milliseconds(0);
  LinearizabilityResult r = CheckLinearizability(h, Model::kOwnerMutex, o);
  EXPECT_EQ(r.verdict, LinVerdict::kUnknown) << r.ToText();
  EXPECT_NE(r.reason.find("time budget (0 ms) exhausted"), std::string::npos) << r.reason;
}

// Invalid wide windows under the owner models were exponential (every subset of the tokens
// that acquired and released was its own configuration: k=16 took 1.6 s, k=20 ran out of a
// 10 s budget). An acquire/release pair of one token open at once is linearized whole as soon
// as the lock is free (lin_sweep.cc, PairBlocks): a few states per window, whatever k.
TEST(LinProbe, WideOwnerWindowsCloseTheirPairsAtOnce) {
  for (int k : {16, 24, 40}) {
    for (bool bad : {false, true}) {
      History h = TenWideWindows(k, bad);
      for (Model m : {Model::kOwnerMutex, Model::kFencedMutex}) {
        for (size_t probe : {kNeverProbe, size_t(0), size_t(1024)}) {
          LinearizabilityResult r = CheckWith(h, m, probe);
          ASSERT_EQ(r.verdict, bad ? LinVerdict::kInvalid : LinVerdict::kValid)
              << "k " << k << " " << ModelName(m) << " probe " << probe << "\n" << r.ToText();
          EXPECT_LT(r.states_explored, 200u * static_cast<uint64_t>(k))
              << "k " << k << " " << ModelName(m) << " probe " << probe;
          if (bad) {
            int64_t window_events = 4 * k;  // the middle window, the sixth of ten
            EXPECT_GE(r.counterexample->failed.complete_index, 5 * window_events) << r.ToText();
            EXPECT_LT(r.counterexample->failed.complete_index, 6 * window_events) << r.ToText();
          }
        }
      }
    }
  }
}

// Random windows where each token has one acquire and one release, often open together (the
// blocks the sweep closes at once), on other processes, with some outcomes unknown or failed,
// and some tokens given a third operation (no longer a block): against the brute force.
History RandomPairs(std::mt19937_64& rng, int tokens) {
  TimedOps ops;
  int process = 0;
  auto op = [&](const std::string& f, const std::string& token) {
    int64_t call = static_cast<int64_t>(rng() % 10);
    int64_t ret = call + 1 + static_cast<int64_t>(rng() % 12);
    int outcome = static_cast<int>(rng() % 12);
    ops.Add(process++, f, token, call, ret, outcome);
  };
  for (int t = 0; t < tokens; ++t) {
    std::string token = "t" + std::to_string(t);
    op("acquire", token);
    op("release", token);
    if (rng() % 5 == 0) op(rng() % 2 ? "renew" : "release", token);
  }
  return ops.InTimeOrder();
}

TEST(LinProbe, RandomPairWindowsMatchBruteForce) {
  ExpectAgreementOn(20261128, 500, {Model::kOwnerMutex, Model::kFencedMutex}, 100,
                    [](std::mt19937_64& rng) { return RandomPairs(rng, 2 + static_cast<int>(rng() % 3)); });
}

}  // namespace
}  // namespace locklab::checker
