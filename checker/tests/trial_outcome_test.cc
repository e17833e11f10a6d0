// TrialOutcome (checker/trial_outcome.h): one results.json read one way, and its three rules
// (stuck, trusted, exit code), on results.json objects written by hand.
#include "checker/trial_outcome.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace locklab::checker {
namespace {

using Json = nlohmann::ordered_json;

Json Results(const char* verdict, bool stuck) {
  return Json{{"verdict", verdict},
              {"verdict_reason", "why"},
              {"resource_verdict", "safe"},
              {"liveness", {{"stuck", stuck}, {"longest_wait_ms", 4701.3}}},
              {"lab_lag", {{"max_ms", 2.5}, {"bound_ms", 50.0}, {"timing_trusted", true}}},
              {"interrupted", false},
              {"run_dir", "runs/x/1"}};
}

TEST(TrialOutcomeTest, ReadsEveryFieldItNames) {
  Json r = Results("violated", false);
  r["first_violation_ms"] = 812.5;
  r["resource_verdict"] = "violated";
  r["interrupted"] = true;
  r["lab_lag"]["timing_trusted"] = false;
  r["lab_lag"]["max_ms"] = 77.0;
  const TrialOutcome o = TrialOutcome::FromJson(r);
  EXPECT_EQ(o.verdict, Verdict::kViolated);
  EXPECT_EQ(o.verdict_reason, "why");
  EXPECT_EQ(o.resource_verdict, Verdict::kViolated);
  ASSERT_TRUE(o.first_violation_ms.has_value());
  EXPECT_EQ(*o.first_violation_ms, 812.5);
  EXPECT_FALSE(o.Trusted());
  EXPECT_EQ(o.lab_lag_max_ms, 77.0);
  EXPECT_TRUE(o.interrupted);
  EXPECT_EQ(o.run_dir, "runs/x/1");
  EXPECT_EQ(o.ExitCode(), 1);
}

// The one stuck rule: liveness.stuck counts only in a trial judged safe (V wins over L, and
// an unknown trial is unknown with its reason, not a stuck lock).
TEST(TrialOutcomeTest, StuckOnlyInATrialJudgedSafe) {
  EXPECT_TRUE(TrialOutcome::FromJson(Results("safe", true)).Stuck());
  EXPECT_FALSE(TrialOutcome::FromJson(Results("safe", false)).Stuck());
  EXPECT_FALSE(TrialOutcome::FromJson(Results("unknown", true)).Stuck());
  EXPECT_FALSE(TrialOutcome::FromJson(Results("violated", true)).Stuck());
  EXPECT_TRUE(TrialOutcome::FromJson(Results("unknown", true)).liveness_stuck)
      << "the judge's report itself is kept";
  EXPECT_FALSE(TrialOutcome::FromJson(Json{{"verdict", "safe"}, {"liveness", "stuck"}}).Stuck());
}

// What an older or partial results.json leaves out reads as the defaults the readers used.
TEST(TrialOutcomeTest, AbsentFieldsAreUnknownAndTrusted) {
  const TrialOutcome o = TrialOutcome::FromJson(Json::object());
  EXPECT_EQ(o.verdict, Verdict::kUnknown);
  EXPECT_FALSE(o.verdict_reason.has_value());
  EXPECT_EQ(o.resource_verdict, Verdict::kUnknown);
  EXPECT_FALSE(o.first_violation_ms.has_value());
  EXPECT_TRUE(o.Trusted());
  EXPECT_FALSE(o.Stuck());
  EXPECT_EQ(o.run_dir, "");
  EXPECT_EQ(o.ExitCode(), 2);
  EXPECT_EQ(TrialOutcome::FromJson(Json{{"verdict", "error"}}).verdict, Verdict::kUnknown);
}

// A field of another type throws, naming the problem, so the reader can say which.
TEST(TrialOutcomeTest, AFieldOfTheWrongTypeThrows) {
  EXPECT_THROW(TrialOutcome::FromJson(Json()), nlohmann::json::exception);
  EXPECT_THROW(TrialOutcome::FromJson(Json{{"verdict", 3}}), nlohmann::json::exception);
  EXPECT_THROW(TrialOutcome::FromJson(Json{{"first_violation_ms", "soon"}}), nlohmann::json::exception);
  EXPECT_THROW(TrialOutcome::FromJson(Json{{"lab_lag", "late"}}), nlohmann::json::exception);
}

}  // namespace
}  // namespace locklab::checker
