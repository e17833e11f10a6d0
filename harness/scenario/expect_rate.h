// Statistical expectations: how many of N trials of a scenario must fail for a replay to
// pass, given how often it failed before. Pure functions over the binomial distribution; no
// I/O, thread-safe.
//
// A scenario whose failure depends on timing fails in some of its trials, not all. Its
// [expect] can say so: `violated_at_least = K` with `trials = N` is met when at least K of
// the N trials fail (scenario_reader.cc). Two ways to get K:
//
// * From a rate the writer states (`violated_rate = r`, `confidence = c`): K is the largest
//   integer with P(Binomial(N, r) >= K) >= c (KForRate). Nothing else is assumed: a lock that
//   fails at rate r or more passes with probability c at least.
// * From a measured rate, k failures in n reruns (a hunt's reproduction): the true rate is
//   taken as no more than its one-sided Clopper-Pearson lower bound at kRateBoundConfidence
//   (ClopperPearsonLower: the p with P(Binomial(n, p) >= k) = 1 - that confidence), and
//   (N, K) is the cheapest replay that such a rate passes with kReplayPassProbability:
//   the smallest N <= cap with a K >= 1, and the largest such K (ReplayExpectation). None
//   within the cap: the find is too thin to be a regression (a hunt then says so and
//   writes no statistical [expect]).
//
// The numbers: 10 of 10 gives a lower bound of 0.741 and 4 trials, at least 1; 8 of 10,
// 0.493 and 7 trials, at least 1; 3 of 10 (0.087) and 2 of 10 (0.037) need more than 30
// trials: too thin (tests/expect_rate_test.cc computes them).
#pragma once

#include <optional>

namespace locklab::harness {

// The confidence of the lower bound put on a measured rate, and the probability with which
// a replay at that rate must pass.
inline constexpr double kRateBoundConfidence = 0.95;
// A scenario's `violated_rate` without `confidence`: K is met with this probability.
inline constexpr double kDefaultExpectConfidence = 0.99;
inline constexpr double kReplayPassProbability = 0.99;
// The most trials a hunt's minimal.toml asks a replay for: a regression suite replays it on
// every change, so it must stay affordable (a hunt trial is 1 to 20 s).
inline constexpr int kMaxReplayTrials = 30;

// P(X >= k) for X ~ Binomial(n, p); 1 for k <= 0, 0 for k > n. Exact (a sum of terms
// computed in log space), for n up to a few thousand.
double BinomialAtLeast(int n, double p, int k);

// The largest K in 0..n with P(Binomial(n, p) >= K) >= confidence (0 when even K = 1 falls
// short). p in [0, 1], confidence in (0, 1).
int KForRate(int n, double p, double confidence);

// The one-sided lower confidence bound on a rate measured as k of n (Clopper-Pearson): the
// p with P(Binomial(n, p) >= k) = 1 - confidence, found by bisection to 1e-12; 0 for k = 0.
double ClopperPearsonLower(int k, int n, double confidence);

struct ReplayPlan {
  int trials = 0;        // N
  int at_least = 0;      // K: at least K of the N trials fail
  double rate_low = 0;   // the lower bound the plan was made for
  double pass_probability = 0;  // P(Binomial(N, rate_low) >= K)
};

// The replay for a scenario that failed k of n times: the lower bound on its rate
// (kRateBoundConfidence), then the smallest N in 1..max_trials for which some K >= 1 has
// P(Binomial(N, rate_low) >= K) >= pass_probability, with the largest such K. Nothing when
// no N within max_trials gives one (a find too thin for a regression suite).
std::optional<ReplayPlan> ReplayExpectation(int k, int n, int max_trials = kMaxReplayTrials,
                                            double pass_probability = kReplayPassProbability,
                                            double bound_confidence = kRateBoundConfidence);

}  // namespace locklab::harness
