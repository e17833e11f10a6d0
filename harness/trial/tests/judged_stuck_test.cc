// JudgedStuck: the one rule by which a run's results.json makes a matrix cell L.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/trial/child_runs.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

using Json = nlohmann::ordered_json;

Json Results(const char* verdict, bool stuck) {
  return Json{{"verdict", verdict}, {"liveness", {{"stuck", stuck}, {"longest_wait_ms", 4701.3}}}};
}

TEST(JudgedStuckTest, StuckCountsInATrialJudgedSafe) {
  EXPECT_TRUE(JudgedStuck(Results("safe", true)));
  EXPECT_FALSE(JudgedStuck(Results("safe", false)));
}

// Regression (the first default matrix with the Curator driver: its JVM took past the first
// acquire's timeout to connect, no acquire was granted, every client waited, and the cell
// read L): a trial that could not be judged is unknown with its reason, not a stuck lock.
TEST(JudgedStuckTest, AnUnjudgedTrialIsNeverStuck) {
  EXPECT_FALSE(JudgedStuck(Results("unknown", true)));
  EXPECT_FALSE(JudgedStuck(Results("violated", true))) << "V wins over L";
  EXPECT_FALSE(JudgedStuck(Json()));
  EXPECT_FALSE(JudgedStuck(Json{{"verdict", "safe"}, {"liveness", "stuck"}}));
}

// A run's [expect] stuck reads the same rule (CheckExpectations): a trial the judge could not
// vouch for is no stuck lock, and a violated one is V, not L.
TEST(JudgedStuckTest, RunExpectationsReadTheSameRule) {
  RunOptions o;
  o.expect_stuck = true;
  EXPECT_EQ(CheckExpectations(o, Results("safe", true)), "");
  EXPECT_EQ(CheckExpectations(o, Results("unknown", true)), "expected stuck yes, got no");
  o.expect_stuck = false;
  o.expect_verdict = checker::Verdict::kViolated;
  EXPECT_EQ(CheckExpectations(o, Results("violated", true)), "");
  EXPECT_EQ(CheckExpectations(o, Results("safe", true)), "expected verdict violated, got safe; expected stuck no, got yes");
}

}  // namespace
}  // namespace locklab::harness
