// One history, one verdict: for one trial of every matrix column (the quick
// presets, for a lock without and one with fencing tokens), `locklab check --json` on the
// trial's history.jsonl gives exactly the judged fields of its results.json, and every
// trial reports the coverage of its faults.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

class OneJudgeTest : public TempDirTest {
 protected:
  OneJudgeTest() : TempDirTest("locklab-one-judge") {}
};

TEST_F(OneJudgeTest, CheckOnEveryColumnsHistoryEqualsItsResults) {
  Invocation m = RunLocklab({"matrix", "--locks", "setnx,fenced", "--seed", "13", "--no-report",
                             "--out", dir_},
                            dir_, Millis(600000));
  ASSERT_LT(m.exit_code, 64) << m.output;
  std::string mdir = MatrixDirOf(m);
  ASSERT_FALSE(mdir.empty()) << m.output;
  auto mj = nlohmann::json::parse(ReadAll(mdir + "/matrix.json"));
  std::set<std::string> columns;
  int compared = 0;
  for (const auto& r : mj["trials"]) {
    std::string run_dir = r.value("run_dir", "");
    ASSERT_FALSE(run_dir.empty()) << r.dump();
    Invocation c = RunLocklab({"check", "--json", run_dir + "/history.jsonl"}, dir_, Millis(120000));
    auto cj = nlohmann::json::parse(c.output.substr(c.output.find('{')), nullptr, false);
    ASSERT_TRUE(cj.is_object()) << c.output;
    // The exit code is the verdict's, as for `locklab run`.
    std::string verdict = r.value("verdict", "");
    EXPECT_EQ(c.exit_code, verdict == "safe" ? 0 : verdict == "violated" ? 1 : 2) << run_dir;
    int judged = 0;
    for (auto it = cj.begin(); it != cj.end(); ++it) {
      if (it.key() == "file" || it.key() == "format" || it.key() == "events" || it.key() == "exit") continue;
      ++judged;
      EXPECT_EQ(r.value(it.key(), nlohmann::json()), it.value())
          << "field '" << it.key() << "' of " << run_dir << ": results.json and `locklab check` differ";
    }
    for (const char* k : {"verdict", "mutual_exclusion", "resource", "liveness", "coverage", "holds", "episodes"}) {
      EXPECT_TRUE(cj.contains(k)) << k << " missing from check --json of " << run_dir;
    }
    EXPECT_GE(judged, 10);
    // Every trial with a fault says what its fault did.
    std::string fault = r["faults"].empty() ? "none" : r["faults"][0].get<std::string>();
    columns.insert(fault);
    if (fault != "none") {
      ASSERT_EQ(cj["coverage"].size(), 1u) << run_dir;
      EXPECT_EQ(cj["coverage"][0]["fault"], fault);
      EXPECT_TRUE(cj["coverage"][0]["planned"].get<bool>()) << run_dir;
      // "safe" is evidence: the fault bit.
      if (verdict == "safe") {
        EXPECT_TRUE(cj["coverage"][0]["bit"].get<bool>()) << run_dir;
      }
    }
    ++compared;
  }
  EXPECT_GE(columns.size(), 12u) << "one trial of (nearly) every matrix column";
  EXPECT_GE(compared, 20);
}

}  // namespace
}  // namespace locklab::testing
