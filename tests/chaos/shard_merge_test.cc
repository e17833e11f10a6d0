// `locklab matrix --shard I/N` + `locklab merge`: a matrix cut into shards and merged back
// is the matrix a single machine runs with the same seed (same trial seeds, same verdicts
// and counts), and merge refuses shards that do not make one matrix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_locklab.h"
#include "tests/trial_retry.h"

namespace locklab::testing {
namespace {

class ShardMergeTest : public TempDirTest {
 protected:
  ShardMergeTest() : TempDirTest("locklab-shards") {}
  // 2 locks x 2 faults (3 s cells), 2 trials per cell: 8 trials.
  Invocation Matrix(uint64_t seed, std::vector<std::string> extra) {
    std::vector<std::string> args = {"matrix",
                                     "--locks",
                                     "set-nx-px-lua,setnx",
                                     "--faults",
                                     "none,client-pause",
                                     "--trials",
                                     "2",
                                     "--seed",
                                     std::to_string(seed),
                                     "--jobs",
                                     "4",
                                     "--no-report",
                                     "--out",
                                     dir_};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunLocklab(args, dir_, Millis(120000));
  }

  // Seed 7's whole matrix, its shards 1/3..3/3 and their merge (shards given out of order);
  // asserts what timing cannot change: every shard ran its own trials, none twice, and the
  // merge has the whole run's plan, trial seeds and cells in the same order.
  void RunWholeShardsAndMerge(std::string* whole_dir, std::vector<std::string>* shard_dirs,
                              std::string* merged_dir) {
    shard_dirs->clear();
    Invocation whole = Matrix(7, {});
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    *whole_dir = MatrixDirOf(whole);
    ASSERT_FALSE(whole_dir->empty()) << whole.output;

    size_t trials_in_shards = 0;
    for (int i = 1; i <= 3; ++i) {
      Invocation shard = Matrix(7, {"--shard", std::to_string(i) + "/3"});
      ASSERT_EQ(shard.exit_code, 0) << shard.output;
      shard_dirs->push_back(MatrixDirOf(shard));
      auto sj = nlohmann::json::parse(ReadAll(shard_dirs->back() + "/matrix.json"));
      EXPECT_EQ(sj["shard"]["index"], i);
      trials_in_shards += sj["trial_records"].size();
    }
    EXPECT_EQ(trials_in_shards, 8u);  // round robin: 3 + 3 + 2, none run twice

    // Shards in any order.
    Invocation merged = RunLocklab({"merge", (*shard_dirs)[2], (*shard_dirs)[0], (*shard_dirs)[1],
                                    "--no-report", "--out", dir_ + "/merged"},
                                   dir_);
    ASSERT_EQ(merged.exit_code, 0) << merged.output;
    *merged_dir = MatrixDirOf(merged);
    ASSERT_FALSE(merged_dir->empty()) << merged.output;

    auto w = nlohmann::json::parse(ReadAll(*whole_dir + "/matrix.json"));
    auto m = nlohmann::json::parse(ReadAll(*merged_dir + "/matrix.json"));
    EXPECT_EQ(m["plan"], w["plan"]);
    EXPECT_FALSE(m.contains("shard"));
    ASSERT_EQ(m["cells"].size(), w["cells"].size());
    for (size_t c = 0; c < w["cells"].size(); ++c) {
      for (const char* k : {"algorithm", "faults", "trials"}) {
        EXPECT_EQ(m["cells"][c][k], w["cells"][c][k]) << k << " of cell " << w["cells"][c].dump();
      }
    }
    // The same trials, with the same seeds, in the same order.
    ASSERT_EQ(m["trial_records"].size(), 8u);
    ASSERT_EQ(w["trial_records"].size(), 8u);
    std::set<uint64_t> seeds;
    for (size_t n = 0; n < 8; ++n) {
      EXPECT_EQ(m["trial_records"][n]["seed"], w["trial_records"][n]["seed"]);
      EXPECT_EQ(m["trial_records"][n]["cell"], w["trial_records"][n]["cell"]);
      EXPECT_EQ(m["trials"][n]["seed"], w["trials"][n]["seed"]);
      seeds.insert(m["trials"][n]["seed"].get<uint64_t>());
    }
    EXPECT_EQ(seeds.size(), 8u);
  }

  // What the trials found: the same verdicts and counts per cell, the same table in
  // matrix.md and the same junit.xml.
  static void ExpectSameFindings(const std::string& whole_dir, const std::string& merged_dir) {
    auto w = nlohmann::json::parse(ReadAll(whole_dir + "/matrix.json"));
    auto m = nlohmann::json::parse(ReadAll(merged_dir + "/matrix.json"));
    ASSERT_EQ(m["cells"].size(), w["cells"].size());
    for (size_t c = 0; c < w["cells"].size(); ++c) {
      for (const char* k : {"verdict", "resource", "violated", "stuck", "safe", "unknown"}) {
        EXPECT_EQ(m["cells"][c][k], w["cells"][c][k]) << k << " of cell " << w["cells"][c].dump();
      }
    }
    // matrix.md: the same table, its rows only. Times differ between two runs of one seed
    // (each cell's median time to the first violation "@1.5s", whether the machine ran the
    // lab late: the " ~" marks, see lab_lag), and so does the text under the table (elapsed
    // seconds, the pids an effect's evidence names, the `~` note of one run and not the
    // other: its presence had decided where this comparison stopped reading).
    auto table = [](const std::string& md) {
      std::istringstream in(md);
      std::string line, rows;
      while (std::getline(in, line)) {
        if (line.rfind("|", 0) == 0) rows += line + "\n";
      }
      rows = std::regex_replace(rows, std::regex(" ~ \\|"), " |");
      return std::regex_replace(rows, std::regex(" @[0-9.]+s"), " @");
    };
    std::string whole_table = table(ReadAll(whole_dir + "/matrix.md"));
    EXPECT_NE(whole_table.find("| `setnx` |"), std::string::npos) << whole_table;
    EXPECT_EQ(table(ReadAll(merged_dir + "/matrix.md")), whole_table);
    std::regex time_attr("time=\"[^\"]*\"");
    EXPECT_EQ(std::regex_replace(ReadAll(merged_dir + "/junit.xml"), time_attr, ""),
              std::regex_replace(ReadAll(whole_dir + "/junit.xml"), time_attr, ""));
  }
};

// One attempt: the whole matrix, its three shards and their merge. Which trials ran, with
// which seeds and in which order, does not depend on timing: asserted on every attempt. What
// the trials found does (a pause that lands late, a loaded lab): compared only when both the
// whole matrix and the merged one ran with trusted timing (tests/trial_retry.h).
TEST_F(ShardMergeTest, ThreeShardsMergedMatchTheWholeRun) {
  std::string whole_dir, merged_dir;
  std::vector<std::string> shard_dirs;
  CheckWithTrustedTiming(
      [&] {
        RunWholeShardsAndMerge(&whole_dir, &shard_dirs, &merged_dir);
        if (HasFatalFailure()) return TimedAttempt{};
        return BothTrusted(FromMatrix(nlohmann::json::parse(ReadAll(whole_dir + "/matrix.json"))),
                           FromMatrix(nlohmann::json::parse(ReadAll(merged_dir + "/matrix.json"))));
      },
      [&](const nlohmann::json&) { ExpectSameFindings(whole_dir, merged_dir); });
  if (HasFatalFailure() || shard_dirs.size() != 3) return;

  // Refusals, one line each, exit 64 (of the last attempt's shards; skipped or not).
  Invocation missing =
      RunLocklab({"merge", shard_dirs[0], shard_dirs[2], "--out", dir_ + "/x"}, dir_);
  EXPECT_EQ(missing.exit_code, 64);
  EXPECT_EQ(missing.output.rfind("locklab merge: missing shard(s) 2/3 of plan ", 0), 0u)
      << missing.output;
  EXPECT_EQ(std::count(missing.output.begin(), missing.output.end(), '\n'), 1);
  Invocation twice = RunLocklab(
      {"merge", shard_dirs[0], shard_dirs[1], shard_dirs[1], shard_dirs[2], "--out", dir_ + "/x"},
      dir_);
  EXPECT_EQ(twice.exit_code, 64);
  EXPECT_EQ(twice.output.rfind("locklab merge: shard 2/3 given twice", 0), 0u) << twice.output;
  Invocation other = RunLocklab({"merge", shard_dirs[0], whole_dir, "--out", dir_ + "/x"}, dir_);
  EXPECT_EQ(other.exit_code, 64);
  EXPECT_NE(other.output.find("is not a shard of the same matrix"), std::string::npos)
      << other.output;
  EXPECT_EQ(std::count(other.output.begin(), other.output.end(), '\n'), 1);
}

TEST_F(ShardMergeTest, ShardsOfDifferentSeedsAreRefused) {
  // Seeds 7 and 8 of a one-cell matrix: two shards that look complete together.
  std::vector<std::string> dirs;
  for (auto [seed, shard] : {std::pair{7, "1/2"}, std::pair{8, "2/2"}}) {
    Invocation inv =
        RunLocklab({"matrix", "--locks", "setnx", "--faults", "none", "--trials", "2", "--seed",
                    std::to_string(seed), "--shard", shard, "--no-report", "--out", dir_},
                   dir_, Millis(60000));
    ASSERT_EQ(inv.exit_code, 0) << inv.output;
    dirs.push_back(MatrixDirOf(inv));
  }
  Invocation inv = RunLocklab({"merge", dirs[0], dirs[1], "--out", dir_ + "/x"}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_NE(inv.output.find("(seed 8, quick"), std::string::npos) << inv.output;
  EXPECT_NE(inv.output.find("vs seed 7, quick"), std::string::npos) << inv.output;
}

// Expectations are resolved per cell when the plan is made, so a glob pins the merged cells
// as it pins a whole run's; --fail-on travels in the plan. Two shards of set-nx-px-lua (V
// under client-pause) and setnx (S): the shards judge nothing (exit 0), the merge fails the
// one cell the glob says is S, and writes the baseline a shard cannot.
TEST_F(ShardMergeTest, TheMergeJudgesGlobExpectationsAndWritesTheBaseline) {
  const std::string expect = dir_ + "/all-safe.toml";
  std::ofstream(expect) << "[[cell]]\nlock = \"*\"\nfault = \"client-*\"\nverdict = \"S\"\n";
  const std::string baseline = dir_ + "/baseline.toml";
  Invocation merged;
  std::string merged_dir;
  CheckWithTrustedTiming(
      [&] {
        std::vector<std::string> shards;
        TimedAttempt timing;
        for (const char* shard : {"1/2", "2/2"}) {
          Invocation inv = RunLocklab({"matrix", "--locks", "set-nx-px-lua,setnx", "--faults", "client-pause",
                                       "--seed", "5", "--shard", shard, "--expect", expect, "--fail-on",
                                       "stuck", "--no-report", "--out", dir_},
                                      dir_, Millis(60000));
          EXPECT_EQ(inv.exit_code, 0) << inv.output << " (a shard judges nothing)";
          shards.push_back(MatrixDirOf(inv));
          timing = BothTrusted(timing, FromMatrix(nlohmann::json::parse(ReadAll(shards.back() + "/matrix.json"),
                                                                        nullptr, false)));
        }
        merged = RunLocklab({"merge", shards[0], shards[1], "--no-report", "--write-expect", baseline, "--out",
                             dir_ + "/merged"},
                            dir_);
        merged_dir = MatrixDirOf(merged);
        EXPECT_FALSE(merged_dir.empty()) << merged.output;
        return timing;
      },
      [&](const nlohmann::json&) {
        EXPECT_EQ(merged.exit_code, 1) << merged.output;
        auto m = nlohmann::json::parse(ReadAll(merged_dir + "/matrix.json"));
        EXPECT_EQ(m["plan"]["fail_on"], "stuck");
        ASSERT_EQ(m["cells"].size(), 2u);
        EXPECT_EQ(m["cells"][0]["expected_origin"], expect + ":1");
        EXPECT_TRUE(m["cells"][0].value("regressed", false)) << m["cells"][0].dump();
        EXPECT_FALSE(m["cells"][1].value("regressed", false)) << m["cells"][1].dump();
        const std::string junit = ReadAll(merged_dir + "/junit.xml");
        EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos) << junit;
        EXPECT_NE(junit.find("<failure message=\"set-nx-px-lua x client-pause: expected S, got V"), std::string::npos)
            << junit;
        EXPECT_NE(merged.output.find("regressed: 1 cell(s) (expectations " + expect + ", --fail-on stuck):\n"),
                  std::string::npos) << merged.output;
        EXPECT_NE(merged.output.find("expectations: " + baseline + " (2 cell(s) pinned)\n"), std::string::npos)
            << merged.output;
        EXPECT_NE(ReadAll(baseline).find("lock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"V\"\n"),
                  std::string::npos) << ReadAll(baseline);
      });
}

TEST(ShardFlagsTest, BadShardFlagsAreNamed) {
  std::string dir = MakeTempDir("locklab-shards");
  Invocation inv = RunLocklab({"matrix", "--shard", "4/3", "--seed", "1"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab matrix: flag --shard: '4/3' is not I/N with 1 <= I <= N <= 10000\n");
  inv = RunLocklab({"matrix", "--shard", "1/3"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab matrix: flag --shard: needs --seed N (every shard must use the same seed)\n");
  inv = RunLocklab({"matrix", "--shard", "1/3", "--seed", "1", "--write-expect", dir + "/x.toml"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab matrix: flag --write-expect: a shard has only some cells' trials (write it from "
            "the merge: locklab merge DIR... --write-expect FILE)\n");
  inv = RunLocklab({"merge", dir + "/nothing"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab merge: " + dir +
                "/nothing/matrix.json: not a matrix.json written by `locklab matrix` (no plan)\n");
  (void)!system(("rm -rf " + dir).c_str());
}

// Regression: nodes run with their own directory as cwd, so a relative --out (the CI
// example's "shard-out", the default "runs") gave redis-server a --dir that did not exist
// and every trial ended unknown with 0 ops.
TEST(RelativeOutDirTest, RunWithRelativeOutDirStartsItsNodes) {
  std::string dir = MakeTempDir("locklab-relout");
  harness::SpawnOptions o;
  o.argv = {LOCKLAB_BINARY, "run",   "--lock", "setnx", "--duration", "1s",
            "--no-report",  "--out", "rel"};
  o.cwd = dir;
  o.log_path = dir + "/out.log";
  pid_t pid = -1;
  ASSERT_TRUE(harness::Spawn(o, &pid).ok());
  Invocation inv = FinishLocklab(pid, o.log_path, Millis(30000));
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  std::string run_dir = RunDirOf(inv);
  EXPECT_EQ(run_dir.rfind(dir + "/rel/setnx--none/", 0), 0u) << inv.output;
  auto r = Results(run_dir);
  EXPECT_EQ(r["verdict"], "safe") << r.dump();
  EXPECT_GT(r["ops"].get<int>(), 0);
  if (!::testing::Test::HasFailure()) (void)!system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace locklab::testing
