// TrialOutcome (checker/trial_outcome.h): one results.json read one way, and its three rules
// (stuck, trusted, exit code), on results.json objects written by hand.
#include "checker/trial_outcome.h"

#include <iterator>
#include <set>

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

// results.json is written where it is read: what ToJson writes, FromJson reads back, field by
// field, judged or not.
TEST(TrialOutcomeTest, ToJsonIsReadBackByFromJson) {
  TrialOutcome o;
  o.verdict = Verdict::kViolated;
  o.verdict_reason = "2 overlapping hold pairs";
  o.resource_verdict = Verdict::kSafe;
  o.liveness_stuck = true;
  o.first_violation_ms = 812.5;
  o.timing_trusted = false;
  o.lab_lag_max_ms = 77.0;
  o.interrupted = true;
  o.run_dir = "runs/x/1";
  TrialResultsParts parts;
  parts.head = {{"scenario", "s"}};
  parts.lab_lag = {{"bound_ms", 10.0}};
  parts.run = {{"duration_ms", 1200}};
  const Json written = o.ToJson(parts);
  const TrialOutcome back = TrialOutcome::FromJson(written);
  EXPECT_EQ(back.verdict, o.verdict);
  EXPECT_EQ(back.verdict_reason, o.verdict_reason);
  EXPECT_EQ(back.resource_verdict, Verdict::kUnknown) << "not judged: no resource_verdict";
  EXPECT_FALSE(back.liveness_stuck) << "not judged: no liveness";
  EXPECT_FALSE(back.first_violation_ms.has_value());
  EXPECT_EQ(back.timing_trusted, o.timing_trusted);
  EXPECT_EQ(back.lab_lag_max_ms, o.lab_lag_max_ms);
  EXPECT_EQ(back.interrupted, o.interrupted);
  EXPECT_EQ(back.run_dir, o.run_dir);
  EXPECT_EQ(written.begin().key(), "scenario") << written.dump();
  EXPECT_EQ(std::prev(written.end()).key(), "run_dir") << written.dump();
  EXPECT_EQ(written["lab_lag"]["bound_ms"], 10.0);
  EXPECT_EQ(written["history_error"], "");
}

// With the judge's report, the outcome's fields stand where the report put them, and an
// unknown from a history written in part says why beside history_error.
TEST(TrialOutcomeTest, ToJsonOverTheJudgesReport) {
  Judgement j;
  j.verdict = Verdict::kSafe;
  j.resource_verdict = Verdict::kSafe;
  j.liveness.stuck = true;
  TrialOutcome o = TrialOutcome::FromJudgement(j);
  EXPECT_TRUE(o.Stuck());
  TrialResultsParts parts;
  parts.judgement = &j;
  Json written = o.ToJson(parts);
  // The trial's result opens the file, word and letter (safe verdict, stuck: L), then the verdict.
  EXPECT_EQ(written.begin().key(), "result");
  EXPECT_EQ(written["result"], "stuck");
  EXPECT_EQ(written["result_letter"], "L");
  EXPECT_EQ(std::next(written.begin(), 2).key(), "verdict");
  EXPECT_EQ(TrialOutcome::FromJson(written).Result(), TrialResult::kStuck);
  EXPECT_FALSE(written.contains("verdict_reason"));
  EXPECT_FALSE(written.contains("history_error"));
  EXPECT_TRUE(TrialOutcome::FromJson(written).Stuck());
  EXPECT_EQ(TrialOutcome::FromJson(written).resource_verdict, Verdict::kSafe);

  o.verdict = Verdict::kUnknown;
  o.verdict_reason = "the history is incomplete: disk full";
  parts.history_error = "disk full";
  written = o.ToJson(parts);
  const TrialOutcome back = TrialOutcome::FromJson(written);
  EXPECT_EQ(back.verdict, Verdict::kUnknown);
  EXPECT_EQ(back.verdict_reason, o.verdict_reason);
  EXPECT_FALSE(back.Stuck());
  EXPECT_EQ(written["history_error"], "disk full");
  EXPECT_EQ(written["result"], "unknown") << "the outcome's result, not the report's";
  EXPECT_EQ(back.ExitCode(), 2);
}

// The one trusted rule: the clients' lag and the harness's stall, each within a tenth of the TTL.
TEST(TrialOutcomeTest, TimingTrustedWithinATenthOfTheTtl) {
  using Ms = std::chrono::duration<double, std::milli>;
  EXPECT_EQ(TrialOutcome::LagBound(Millis(1000)), Ms(100));
  EXPECT_TRUE(TrialOutcome::TimingTrusted(Ms(100), Ms(0), Millis(1000)));
  EXPECT_FALSE(TrialOutcome::TimingTrusted(Ms(100.5), Ms(0), Millis(1000)));
  EXPECT_FALSE(TrialOutcome::TimingTrusted(Ms(1), Ms(250), Millis(1000)));
}

}  // namespace
// The one result table: each result's word and letter read back as that result, in enum
// order, and nothing else reads as one.
TEST(TrialResultTest, EveryResultIsSpeltOnceAndReadsBack) {
  std::set<std::string_view> words, letters;
  size_t i = 0;
  for (const auto& r : ResultTable()) {
    EXPECT_EQ(static_cast<size_t>(r.result), i++);
    EXPECT_EQ(ParseResultWord(r.word), r.result);
    EXPECT_EQ(ParseResultLetter(r.letter), r.result);
    EXPECT_TRUE(words.insert(r.word).second) << r.word;
    EXPECT_TRUE(letters.insert(r.letter).second) << r.letter;
    EXPECT_EQ(r.colour.size(), 7u);
    EXPECT_EQ(r.fill.size(), 7u);
  }
  EXPECT_EQ(ParseResultWord("Safe"), std::nullopt);
  EXPECT_EQ(ParseResultLetter("X"), std::nullopt);
  EXPECT_EQ(VerdictName(Verdict::kViolated), NameOf(TrialResult::kViolated).word);
  EXPECT_EQ(ResultOf(Verdict::kSafe, true), TrialResult::kStuck);
  EXPECT_EQ(ResultOf(Verdict::kViolated, true), TrialResult::kViolated);
  EXPECT_EQ(ResultOf(Verdict::kUnknown, true), TrialResult::kUnknown);
}

}  // namespace locklab::checker
