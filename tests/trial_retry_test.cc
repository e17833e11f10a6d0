// tests/trial_retry.h on hand-written results.json and matrix.json: which runs count as
// trusted, that an untrusted run is rerun and never judged, that the first trusted one is
// judged once, and that the number of runs is bounded. No lab: the whole runs are stubs.
#include "tests/trial_retry.h"

#include <gtest/gtest.h>

namespace locklab::testing {
namespace {

nlohmann::json Lag(double max_ms, double bound_ms, bool trusted) {
  return {{"verdict", "violated"},
          {"lab_lag", {{"max_ms", max_ms}, {"bound_ms", bound_ms}, {"timing_trusted", trusted}}}};
}

TEST(TrialRetryTest, ResultsJsonSaysWhetherItsTimingIsTrusted) {
  EXPECT_TRUE(FromResults(Lag(12.5, 50, true)).trusted);
  TimedAttempt late = FromResults(Lag(73.1, 50, false));
  EXPECT_FALSE(late.trusted);
  EXPECT_EQ(late.why, "the lab itself ran up to 73 ms late (bound 50 ms, lab_lag)");
  EXPECT_FALSE(FromResults(Lag(73.1, 50, true)).trusted) << "over its bound, whatever the flag";
  nlohmann::json stalled = Lag(3, 50, true);
  stalled["timing_trusted"] = false;  // the harness's own stall
  EXPECT_FALSE(FromResults(stalled).trusted);
  EXPECT_TRUE(FromResults({{"verdict", "safe"}}).trusted) << "no lab_lag: an older results.json";
  EXPECT_TRUE(FromResults(nlohmann::json()).trusted) << "no results: the checks say so";
}

TEST(TrialRetryTest, MatrixJsonCountsItsUntrustedTrials) {
  EXPECT_TRUE(FromMatrix({{"lab_lag", {{"untrusted_trials", 0}, {"worst_ms", 0}}}}).trusted);
  TimedAttempt m = FromMatrix({{"lab_lag", {{"untrusted_trials", 2}, {"worst_ms", 88.0}}}});
  EXPECT_FALSE(m.trusted);
  EXPECT_EQ(m.why, "2 trial(s) ran with the lab up to 88 ms late (matrix.json lab_lag)");
  EXPECT_FALSE(BothTrusted(FromMatrix({}), m).trusted);
  EXPECT_TRUE(BothTrusted(FromMatrix({}), FromMatrix({})).trusted);
}

TEST(TrialRetryTest, UntrustedRunsAreRerunAndOnlyTheTrustedOneIsJudged) {
  std::vector<nlohmann::json> runs = {Lag(90, 50, false), Lag(120, 50, false), Lag(10, 50, true)};
  int made = 0, judged = 0;
  TrustedTimingRun r = RunWithTrustedTiming([&] { return FromResults(runs[made++]); },
                                            [&](const nlohmann::json& res) {
                                              ++judged;
                                              EXPECT_EQ(res["lab_lag"]["max_ms"], 10);
                                            },
                                            3);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(judged, 1);
  EXPECT_EQ(r.judged, 3);
  ASSERT_EQ(r.untrusted.size(), 2u);
  EXPECT_EQ(r.untrusted[0],
            "attempt 1: the lab itself ran up to 90 ms late (bound 50 ms, lab_lag)");
}

TEST(TrialRetryTest, AFirstTrustedRunIsJudgedAndNoOtherRuns) {
  int made = 0, judged = 0;
  TrustedTimingRun r = RunWithTrustedTiming(
      [&] {
        ++made;
        return FromResults(Lag(1, 50, true));
      },
      [&](const nlohmann::json&) { ++judged; }, 3);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(judged, 1);
  EXPECT_EQ(r.judged, 1);
}

TEST(TrialRetryTest, NoTrustedRunIsNeverJudgedAndTheRunsAreBounded) {
  int made = 0, judged = 0;
  TrustedTimingRun r = RunWithTrustedTiming(
      [&] {
        ++made;
        return FromResults(Lag(200, 50, false));
      },
      [&](const nlohmann::json&) { ++judged; }, kTrustedTimingAttempts);
  EXPECT_EQ(made, kTrustedTimingAttempts);
  EXPECT_EQ(judged, 0) << "a verdict with untrusted timing is neither a pass nor a failure";
  EXPECT_EQ(r.judged, 0);
  EXPECT_EQ(r.untrusted.size(), static_cast<size_t>(kTrustedTimingAttempts));
}

}  // namespace
}  // namespace locklab::testing
