// JudgedStuck: the one rule by which a run's results.json makes a matrix cell L.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/child_runs.h"

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

}  // namespace
}  // namespace locklab::harness
