// Verdicts of whole runs on a busy machine: a chaos test's timing-dependent assertions are
// judged only on a run whose own timing the lab trusted.
//
// Contract: CheckWithTrustedTiming(attempt, checks) runs `attempt` (one whole run: a trial,
// a matrix) up to kTrustedTimingAttempts times. The first attempt whose timing is trusted
// gets `checks` (ordinary EXPECT/ASSERT: a wrong verdict there fails the test) and no
// further attempt runs. An attempt whose timing is not trusted is never judged: it is rerun,
// with one line on stderr saying why. When no attempt had trusted timing the test is
// skipped (GTEST_SKIP, with a line naming every attempt's reason), never passed silently
// and never failed: a red test must mean a broken lab, not a slow machine.
//
// What "trusted" means is the harness's word, read from results.json (trial/
// trial_results.cc): lab_lag.timing_trusted, and lab_lag.max_ms within lab_lag.bound_ms (a
// tenth of the TTL); a top-level "timing_trusted": false counts too. A matrix is trusted
// when matrix.json's lab_lag counts no untrusted trial. A results.json without lab_lag (an
// older or foreign one) is trusted. Assertions the attempt itself makes (exit codes, no
// process left behind) hold on every attempt: they are not about timing.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace locklab::testing {

// At most this many runs of one verdict (a chaos trial is 5 to 10 s: 30 s at worst).
constexpr int kTrustedTimingAttempts = 3;

// One whole run, as the checks read it.
struct TimedAttempt {
  nlohmann::json value;  // what the checks read: a results.json, a matrix.json, ...
  bool trusted = true;   // the lab's own timing was within its bound
  std::string why;  // when not trusted: one line, e.g. "lab ran up to 73 ms late (bound 50 ms)"
};

// results.json's own word on its timing (see the header comment).
inline TimedAttempt FromResults(const nlohmann::json& results) {
  TimedAttempt a;
  a.value = results;
  if (!results.is_object()) return a;  // no results: the checks say what is missing
  if (results.contains("timing_trusted") && results["timing_trusted"] == false) {
    a.trusted = false;
    a.why = "results.json: timing_trusted false";
  }
  if (!results.contains("lab_lag") || !results["lab_lag"].is_object()) return a;
  const nlohmann::json& lag = results["lab_lag"];
  const double max_ms = lag.value("max_ms", 0.0), bound_ms = lag.value("bound_ms", 0.0);
  if (lag.value("timing_trusted", true) == false || (bound_ms > 0 && max_ms > bound_ms)) {
    a.trusted = false;
    a.why = "the lab itself ran up to " + std::to_string(static_cast<int>(max_ms)) +
            " ms late (bound " + std::to_string(static_cast<int>(bound_ms)) + " ms, lab_lag)";
  }
  return a;
}

// matrix.json's lab_lag: {"untrusted_trials": N, "worst_ms": W} (harness/matrix/matrix_outputs.cc).
inline TimedAttempt FromMatrix(const nlohmann::json& matrix) {
  TimedAttempt a;
  a.value = matrix;
  if (!matrix.is_object() || !matrix.contains("lab_lag") || !matrix["lab_lag"].is_object())
    return a;
  const int untrusted = matrix["lab_lag"].value("untrusted_trials", 0);
  if (untrusted > 0) {
    a.trusted = false;
    a.why = std::to_string(untrusted) + " trial(s) ran with the lab up to " +
            std::to_string(static_cast<int>(matrix["lab_lag"].value("worst_ms", 0.0))) +
            " ms late (matrix.json lab_lag)";
  }
  return a;
}

// Both runs of a comparison (e.g. a whole matrix and its merged shards) must be trusted.
inline TimedAttempt BothTrusted(const TimedAttempt& a, const TimedAttempt& b) {
  TimedAttempt out;
  out.value = nlohmann::json::array({a.value, b.value});
  out.trusted = a.trusted && b.trusted;
  out.why = a.why + (a.why.empty() || b.why.empty() ? "" : "; ") + b.why;
  return out;
}

// The loop without the skip: which attempt was judged (1-based; 0 when none had trusted
// timing, or an attempt failed fatally) and why each earlier one was not.
struct TrustedTimingRun {
  int judged = 0;
  std::vector<std::string> untrusted;  // "attempt N: why", one per attempt not judged
};
inline TrustedTimingRun RunWithTrustedTiming(
    const std::function<TimedAttempt()>& attempt,
    const std::function<void(const nlohmann::json&)>& checks, int attempts) {
  TrustedTimingRun out;
  for (int i = 1; i <= attempts; ++i) {
    TimedAttempt a = attempt();
    // A broken attempt (no run directory, a crash) is the lab's fault, not the machine's.
    if (::testing::Test::HasFatalFailure()) return out;
    // No results at all (the binary did not start, no run directory): already a failure,
    // and nothing to judge.
    if (a.value.is_discarded() || (a.value.is_null() && ::testing::Test::HasFailure())) return out;
    if (a.trusted) {
      if (i > 1) {
        std::cerr << "trusted timing: attempt " << i << " of " << attempts
                  << " is judged (the earlier ones ran with untrusted timing)\n";
      }
      out.judged = i;
      checks(a.value);
      return out;
    }
    out.untrusted.push_back("attempt " + std::to_string(i) + ": " + a.why);
    std::cerr << "untrusted timing: " << out.untrusted.back()
              << (i < attempts ? "; running it again\n" : "\n");
  }
  return out;
}

inline void CheckWithTrustedTiming(const std::function<TimedAttempt()>& attempt,
                                   const std::function<void(const nlohmann::json&)>& checks,
                                   int attempts = kTrustedTimingAttempts) {
  TrustedTimingRun run = RunWithTrustedTiming(attempt, checks, attempts);
  if (run.judged > 0 || ::testing::Test::HasFatalFailure()) return;
  std::string all;
  for (const auto& r : run.untrusted) all += (all.empty() ? "" : "; ") + r;
  GTEST_SKIP() << "not judged: every one of " << attempts
               << " runs had untrusted timing, the machine was too busy (" << all << ")";
}

}  // namespace locklab::testing
