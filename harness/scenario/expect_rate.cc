#include "harness/scenario/expect_rate.h"

#include <algorithm>
#include <cmath>

namespace locklab::harness {

double BinomialAtLeast(int n, double p, int k) {
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  if (p <= 0.0) return 0.0;
  if (p >= 1.0) return 1.0;
  // Each term C(n,i) p^i (1-p)^(n-i) in log space (lgamma), so no factorial overflows.
  const double lp = std::log(p), lq = std::log1p(-p);
  double sum = 0.0;
  for (int i = k; i <= n; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                            i * lp + (n - i) * lq;
    sum += std::exp(log_term);
  }
  return std::min(1.0, sum);
}

int KForRate(int n, double p, double confidence) {
  int k = 0;
  // The tail shrinks as K grows: the last K that still reaches the confidence.
  while (k < n && BinomialAtLeast(n, p, k + 1) >= confidence) ++k;
  return k;
}

double ClopperPearsonLower(int k, int n, double confidence) {
  if (k <= 0 || n <= 0) return 0.0;
  const double alpha = 1.0 - confidence;
  // P(Binomial(n, p) >= k) grows with p: bisect for the p where it equals alpha.
  double lo = 0.0, hi = 1.0;
  while (hi - lo > 1e-12) {
    const double mid = (lo + hi) / 2;
    if (BinomialAtLeast(n, mid, k) < alpha) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

std::optional<ReplayPlan> ReplayExpectation(int k, int n, int max_trials, double pass_probability,
                                            double bound_confidence) {
  const double low = ClopperPearsonLower(k, n, bound_confidence);
  if (low <= 0.0) return std::nullopt;
  for (int trials = 1; trials <= max_trials; ++trials) {
    const int at_least = KForRate(trials, low, pass_probability);
    if (at_least >= 1) {
      return ReplayPlan{trials, at_least, low, BinomialAtLeast(trials, low, at_least)};
    }
  }
  return std::nullopt;
}

}  // namespace locklab::harness
