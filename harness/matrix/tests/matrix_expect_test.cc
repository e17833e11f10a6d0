// The matrix as a gate, without a lab: expectation files (globs and which entry pins a
// cell, harness/matrix/matrix_plan.h), --fail-on, and what a judged plan writes (regressions,
// junit.xml, the --write-expect file read back). Trials' results.json are written by hand
// here; tests/chaos/run_trial_test.cc runs the same through real matrices.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "faults/fault.h"
#include "harness/matrix/matrix_merge.h"
#include "harness/matrix/matrix_outputs.h"
#include "harness/matrix/detection_power.h"
#include "harness/matrix/matrix_plan.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

Expectation Entry(std::string lock, std::string fault, std::string verdict, std::string origin) {
  Expectation e;
  e.lock = std::move(lock);
  e.fault = std::move(fault);
  e.verdict = std::move(verdict);
  e.origin = std::move(origin);
  return e;
}

std::string PinnedBy(const Expectations& file, const std::string& lock, const std::string& fault) {
  const Expectation* e = FindExpectation(file, lock, fault);
  return e ? e->origin : "none";
}

TEST(MatrixExpectTest, GlobStarMatchesAnyRunOfCharacters) {
  EXPECT_TRUE(GlobMatches("*", "setnx"));
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("setnx", "setnx"));
  EXPECT_FALSE(GlobMatches("setnx", "setnx-expire"));
  EXPECT_TRUE(GlobMatches("setnx*", "setnx-expire"));
  EXPECT_TRUE(GlobMatches("setnx*", "setnx"));
  EXPECT_TRUE(GlobMatches("driver:*", "driver:examples/drivers/redis_py_lock.py"));
  EXPECT_FALSE(GlobMatches("driver:*", "set-nx-px-lua"));
  EXPECT_TRUE(GlobMatches("*-lua", "set-nx-px-lua"));
  EXPECT_FALSE(GlobMatches("*-lua", "set-nx-px-lua2"));
  EXPECT_TRUE(GlobMatches("s*x*a", "set-nx-px-lua"));
  EXPECT_TRUE(GlobMatches("*a*a*", "aa"));
  EXPECT_FALSE(GlobMatches("*a*a*", "a"));
  EXPECT_TRUE(GlobMatches("client-*", "client-pause"));
  EXPECT_FALSE(GlobMatches("client-?", "client-p")) << "only * is special";
}

TEST(MatrixExpectTest, TheMostSpecificEntryPinsACell) {
  const Expectations file = {
      Entry("*", "*", "S", "every"),
      Entry("driver:*", "*", "V", "drivers"),
      Entry("driver:examples/*", "*", "L", "example-drivers"),
      Entry("*", "client-pause", "V", "any-lock-pause"),
      Entry("setnx", "*", "L", "setnx-row"),
      Entry("setnx", "client-pause", "S", "setnx-pause"),
      Entry("set*", "client-*", "V", "set-client"),
  };
  // Exact lock and fault beats everything.
  EXPECT_EQ(PinnedBy(file, "setnx", "client-pause"), "setnx-pause");
  // One exact field beats none: setnx's row beats "set*" x "client-*" and "*" x "*".
  EXPECT_EQ(PinnedBy(file, "setnx", "client-crash"), "setnx-row");
  // No exact field: the longer literal prefix (3 + 7 before the stars) wins over "*".
  EXPECT_EQ(PinnedBy(file, "set-nx-px-lua", "client-crash"), "set-client");
  // driver:* matches drivers, and a longer prefix beats it.
  EXPECT_EQ(PinnedBy(file, "driver:my/own_lock.py", "none"), "drivers");
  EXPECT_EQ(PinnedBy(file, "driver:examples/drivers/kazoo_lock.py", "none"), "example-drivers");
  // An exact fault beats a longer glob prefix (exact fields count first).
  EXPECT_EQ(PinnedBy(file, "driver:examples/drivers/kazoo_lock.py", "client-pause"), "any-lock-pause");
  EXPECT_EQ(PinnedBy(file, "redlock", "restart"), "every");
  EXPECT_EQ(PinnedBy(Expectations{}, "redlock", "restart"), "none");
  EXPECT_EQ(PinnedBy({Entry("redlock", "*", "S", "r")}, "setnx", "none"), "none");
}

TEST(MatrixExpectTest, EveryLiteralCharacterOfAGlobCounts) {
  // "*-lua" is more specific than "*" though neither has a literal prefix: a catch-all added
  // below it does not take its cells.
  const Expectations file = {Entry("*-lua", "*", "V", "lua-row"), Entry("*", "*", "S", "every")};
  EXPECT_EQ(PinnedBy(file, "set-nx-px-lua", "none"), "lua-row");
  EXPECT_EQ(PinnedBy(file, "setnx", "none"), "every");
  // Summed over both fields, wherever the stars are.
  EXPECT_EQ(PinnedBy({Entry("*px*", "*", "V", "px"), Entry("set*", "*", "S", "set")}, "set-nx-px-lua", "none"),
            "set") << "3 literal characters each: the later";
  EXPECT_EQ(PinnedBy({Entry("*-px-*", "*", "V", "px"), Entry("set*", "*", "S", "set")}, "set-nx-px-lua", "none"),
            "px");
}

TEST(MatrixExpectTest, EqualEntriesGoToTheLaterOne) {
  // lock = "*", fault = "none" and lock = "setnx", fault = "*": one exact field each, no
  // literal prefix: the later in the file wins, whichever it is.
  Expectations file = {Entry("*", "none", "S", "first"), Entry("setnx", "*", "V", "second")};
  EXPECT_EQ(PinnedBy(file, "setnx", "none"), "second");
  std::reverse(file.begin(), file.end());
  EXPECT_EQ(PinnedBy(file, "setnx", "none"), "first");
  // A repeated exact entry: the later, as the file's map always had it.
  EXPECT_EQ(PinnedBy({Entry("setnx", "none", "S", "a"), Entry("setnx", "none", "V", "b")}, "setnx", "none"), "b");
}

class ExpectFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/locklab-expect-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!HasFailure()) (void)!system(("rm -rf " + dir_).c_str());
  }
  // Loads `text` as FILE; returns the error message, "" when it loaded.
  std::string Load(const std::string& text, Expectations* out) {
    path_ = dir_ + "/expect.toml";
    std::ofstream(path_) << text;
    Status s = LoadExpectations(path_, {"none", "client-pause", "my-column"}, out);
    if (!s.ok()) {
      EXPECT_EQ(s.ExitCode(), 65) << s.message();
    }
    return s.ok() ? "" : s.message();
  }
  std::string dir_, path_;
};

TEST_F(ExpectFileTest, GlobsLoadAndUnknownExactIdsAreRefused) {
  Expectations e;
  ASSERT_EQ(Load("[[cell]]\nlock = \"*\"\nfault = \"*\"\nverdict = \"S\"\n"
                 "[[cell]]\nlock = \"driver:*\"\nfault = \"no-such-fault*\"\nverdict = \"V\"\n"
                 "violated_in = \"3/3\"\n"
                 "[[cell]]\nlock = \"mutant:plain-del\"\nfault = \"my-column\"\nresource = \"V\"\n",
                 &e),
            "");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[1].violated_in, "3/3");
  EXPECT_EQ(e[2].resource, "V");
  EXPECT_EQ(e[2].origin, path_ + ":10");

  // `message` starts with the line: a field's own, or the entry's [[cell]] line.
  auto refused = [&](const std::string& text, const std::string& message) {
    Expectations ignored;
    EXPECT_EQ(Load(text, &ignored), path_ + ":" + message) << text;
  };
  refused("[[cell]]\nlock = \"set-nx-px-lau\"\nfault = \"none\"\nverdict = \"S\"\n",
          "2: field 'cell.lock': unknown lock 'set-nx-px-lau' (see `locklab list`; a glob uses *)");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"client-paws\"\nverdict = \"S\"\n",
          "3: field 'cell.fault': unknown fault 'client-paws' (no such fault or cell scenario; a glob uses *)");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdcit = \"S\"\n",
          "4: field 'cell.verdcit': unknown field (lock, fault, verdict, resource, violated_in, stuck_in)");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"?\"\n",
          "4: field 'cell.verdict': expected S, V or L, got '?'");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nresource = \"L\"\n",
          "4: field 'cell.resource': expected S or V, got 'L'");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\nviolated_in = \"4/3\"\n",
          "5: field 'cell.violated_in': expected N/M (trials), got '4/3'");
  refused("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\n", "1: field 'cell': needs verdict and/or resource");
  refused("[[cell]]\nlock = \"setnx\"\nverdict = \"S\"\n", "1: field 'cell': needs lock and fault");
  // In the tenth entry, the field's line, not the first entry's.
  std::string many;
  for (int i = 0; i < 9; ++i) many += "[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\n";
  refused(many + "[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"X\"\n",
          "40: field 'cell.verdict': expected S, V or L, got 'X'");
  // Anything but [[cell]] is refused, not ignored: it would pin nothing.
  refused("verdict = \"S\"\n[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\n",
          "1: field 'verdict': unknown field (an expectation file holds [[cell]] tables only)");
  refused("[cell]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\n",
          "1: field 'cell': expected [[cell]] tables");
  Expectations ignored;
  EXPECT_EQ(Load("[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\n\n"
                 "[[cels]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"V\"\n",
                 &ignored),
            path_ + ":6: field 'cels': unknown field (an expectation file holds [[cell]] tables only)");
}

TEST_F(ExpectFileTest, AFileWithoutCellsPinsNothingAndAMissingOneIsOneLine) {
  Expectations e;
  EXPECT_EQ(Load("# every cell of the run was unknown\n", &e), "");
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(Load("", &e), "");
  auto load = [&](const std::string& path) {
    Status s = LoadExpectations(path, {"none"}, &e);
    EXPECT_EQ(s.ExitCode(), 65) << s.message();
    return s.message();
  };
  EXPECT_EQ(load(dir_ + "/no-such.toml"), dir_ + "/no-such.toml: cannot open: No such file or directory");
  EXPECT_EQ(load(dir_), dir_ + ": is a directory, not an expectation file");
}

TEST(MatrixExpectTest, FailOnWordsAreValidated) {
  FailOn f;
  EXPECT_EQ(ParseFailOn("violated", &f), "");
  EXPECT_TRUE(f.Hits(*checker::ParseResultLetter("V")));
  EXPECT_FALSE(f.Hits(*checker::ParseResultLetter("L")));
  EXPECT_FALSE(f.Hits(*checker::ParseResultLetter("?")));
  EXPECT_FALSE(f.Hits(*checker::ParseResultLetter("S")));
  EXPECT_EQ(ParseFailOn("unknown,violated,stuck", &f), "");
  EXPECT_EQ(f.ToString(), "violated,stuck,unknown");
  EXPECT_TRUE(f.Hits(*checker::ParseResultLetter("L")));
  EXPECT_TRUE(f.Hits(*checker::ParseResultLetter("?")));
  EXPECT_FALSE(f.Hits(*checker::ParseResultLetter("-"))) << "an interrupted cell is the exit code 2's business";
  EXPECT_FALSE(f.Hits(*checker::ParseResultLetter("n/a")));
  FailOn kept = f;
  EXPECT_EQ(ParseFailOn("violated,safe", &f), "'safe' is not one of violated, stuck, unknown");
  EXPECT_EQ(ParseFailOn("stuck,stuck", &f), "'stuck' given twice");
  EXPECT_EQ(ParseFailOn("", &f), "expected violated, stuck and/or unknown, comma-separated");
  EXPECT_EQ(f.ToString(), kept.ToString()) << "a refused value leaves the set alone";
}

// A plan of the shipped presets' none and client-pause columns for two locks, its trials'
// results written by hand: results[cell "lock x fault"] = verdict (safe, violated, unknown,
// stuck).
class JudgedPlanTest : public ExpectFileTest {
 protected:
  Plan MakePlan(const Expectations& expectations, const FailOn& fail_on) {
    PlanRequest r;
    r.seed = 7;
    r.lock_ids = {"set-nx-px-lua", "setnx"};
    std::vector<Preset> all;
    EXPECT_TRUE(LoadPresets(kDefaultPresetDir, &all).ok());
    for (const auto& p : all) {
      if (p.fault == "none" || p.fault == "client-pause") r.presets.push_back(p);
    }
    r.expectations = expectations;
    r.fail_on = fail_on;
    r.expect_path = expectations.empty() ? "" : "pins.toml";
    r.preset_dir = dir_;  // no detection-power.json
    return BuildPlan(r);
  }
  void Finish(Plan* plan, const std::map<std::string, std::string>& verdicts) {
    for (auto& tr : plan->all) {
      const Cell& c = plan->cells[tr.cell];
      std::string v = verdicts.at(c.lock + " x " + c.fault);
      tr.ran = tr.done = true;
      tr.results = {{"verdict", v == "stuck" ? "safe" : v},
                    {"verdict_reason", "reason of " + c.lock + " x " + c.fault},
                    {"resource_verdict", v == "violated" ? "violated" : "safe"},
                    {"run_dir", "/runs/" + c.lock + "--" + c.fault + "/t" + std::to_string(tr.index)}};
      if (v == "stuck") tr.results["liveness"] = {{"stuck", true}};
    }
  }
  int Write(Plan* plan, int shard_index = 1, int shard_count = 1) {
    MatrixOutput out;
    out.dir = dir_;
    out.shard_index = shard_index;
    out.shard_count = shard_count;
    Status written;
    int regressed = WriteMatrix(plan, out, &written);
    EXPECT_TRUE(written.ok()) << written.message();
    return regressed;
  }
  // What --write-expect writes of `plan` into `path` (a failure when it cannot).
  std::string WrittenExpectations(const Plan& plan, const std::string& path, int* pinned) {
    EXPECT_TRUE(WriteExpectationFile(plan, path, pinned).ok());
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string Junit() {
    std::ifstream in(dir_ + "/junit.xml");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  const std::map<std::string, std::string> kFound = {{"set-nx-px-lua x none", "safe"},
                                                      {"set-nx-px-lua x client-pause", "violated"},
                                                      {"setnx x none", "unknown"},
                                                      {"setnx x client-pause", "safe"}};
};

TEST_F(JudgedPlanTest, ExpectedSGotVIsTheOneFailureAndExpectedVPasses) {
  // Everything S but set-nx-px-lua's own row, which says V everywhere: its none cell (S)
  // and setnx's none (unknown: pinned S, so a regression too) disagree.
  Plan plan = MakePlan({Entry("*", "*", "S", "pins.toml:1"), Entry("set-nx-px-lua", "*", "V", "pins.toml:5")}, {});
  Finish(&plan, kFound);
  EXPECT_EQ(Write(&plan), 2);
  const std::string junit = Junit();
  EXPECT_EQ(Count(junit, "<failure "), 2) << junit;
  EXPECT_NE(junit.find("failures=\"2\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"set-nx-px-lua x none: expected V, got S (0/1 violated; "
                       "pins.toml:5): reason of set-nx-px-lua x none; trial /runs/set-nx-px-lua--none/t0\">"
                       "trial /runs/set-nx-px-lua--none/t0\n</failure>"),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("setnx x none: expected S, got ? (0/1 violated, 1 unknown; pins.toml:1)"),
            std::string::npos) << junit;
  // The expected V passes.
  EXPECT_NE(junit.find("<testcase classname=\"matrix\" name=\"set-nx-px-lua x client-pause\"/>"),
            std::string::npos) << junit;
  const std::string summary = RegressionSummary(plan);
  EXPECT_EQ(Count(summary, "\n"), 4) << summary;
  EXPECT_EQ(summary.rfind("gate: 4 of 4 cells pinned by pins.toml, 0 by --fail-on, 0 unpinned\n"
                          "regressed: 2 cell(s) (expectations pins.toml):\n  set-nx-px-lua x none: ", 0), 0u)
      << summary;
}

TEST_F(JudgedPlanTest, FailOnJudgesOnlyTheCellsNoEntryPins) {
  FailOn fail_on;
  ASSERT_EQ(ParseFailOn("violated,unknown", &fail_on), "");
  // set-nx-px-lua x client-pause is pinned V by the file: it passes; setnx x none is not
  // pinned and unknown: --fail-on unknown fails it.
  Plan plan = MakePlan({Entry("set-nx-px-lua", "client-*", "V", "pins.toml:1")}, fail_on);
  Finish(&plan, kFound);
  EXPECT_EQ(Write(&plan), 1);
  const std::string junit = Junit();
  EXPECT_EQ(Count(junit, "<failure "), 1) << junit;
  EXPECT_NE(junit.find("<failure message=\"setnx x none: got ? (0/1 violated, 1 unknown), --fail-on "
                       "violated,unknown: reason of setnx x none; trial /runs/setnx--none/t0\""),
            std::string::npos)
      << junit;
  // The same without --fail-on unknown: the unknown cell is skipped, not failed, and the
  // violated one no entry pins would fail under --fail-on violated alone.
  ASSERT_EQ(ParseFailOn("violated", &fail_on), "");
  plan = MakePlan({}, fail_on);
  Finish(&plan, kFound);
  EXPECT_EQ(Write(&plan), 1);
  EXPECT_NE(Junit().find("<failure message=\"set-nx-px-lua x client-pause: got V (1/1 violated), --fail-on violated"),
            std::string::npos) << Junit();
  EXPECT_NE(Junit().find("<skipped message=\"not judged (?): reason of setnx x none\"/>"), std::string::npos)
      << Junit();
  // Nothing judges: every cell passes but the unknown one, skipped; exit code 0.
  plan = MakePlan({}, {});
  Finish(&plan, kFound);
  EXPECT_EQ(Write(&plan), 0);
  EXPECT_EQ(Count(Junit(), "<failure "), 0) << Junit();
  EXPECT_NE(Junit().find("skipped=\"1\""), std::string::npos) << Junit();
  EXPECT_EQ(RegressionSummary(plan), "");
}

TEST_F(JudgedPlanTest, AWrittenExpectationFileReadsBackAndPinsWhatItSaw) {
  std::map<std::string, std::string> found = kFound;
  found["setnx x client-pause"] = "stuck";
  Plan plan = MakePlan({}, {});
  Finish(&plan, found);
  Write(&plan);
  const std::string path = dir_ + "/baseline.toml";
  int pinned = 0;
  ASSERT_TRUE(WriteExpectationFile(plan, path, &pinned).ok());
  EXPECT_EQ(pinned, 3) << "the unknown cell is not pinned";
  std::set<std::string> faults;
  for (const auto& f : faults::ListFaults()) faults.insert(f.id);
  faults.insert({"none", "client-pause"});  // the columns, as the matrix adds them
  Expectations e;
  Status s = LoadExpectations(path, faults, &e);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[1].lock, "set-nx-px-lua");
  EXPECT_EQ(e[1].fault, "client-pause");
  EXPECT_EQ(e[1].verdict, "V");
  EXPECT_EQ(e[1].violated_in, "1/1");
  EXPECT_EQ(e[2].verdict, "L");
  EXPECT_EQ(e[2].stuck_in, "1/1");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#   setnx x none: reason of setnx x none\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n# measured: "), std::string::npos) << "no detection-power.json here: " << text;

  // The same findings judged by the file: no regression.
  Plan again = MakePlan(e, {});
  Finish(&again, found);
  EXPECT_EQ(Write(&again), 0);
  EXPECT_EQ(RegressionSummary(again),
            "gate: 3 of 4 cells pinned by pins.toml, 0 by --fail-on, 1 unpinned\nregressed: none (expectations pins.toml)\n");

  // A directory that is not there: Status::Io naming the file (exit 70).
  s = WriteExpectationFile(plan, dir_ + "/no/such/dir/x.toml", &pinned);
  EXPECT_EQ(s.ExitCode(), 70);
  EXPECT_NE(s.message().find(dir_ + "/no/such/dir/x.toml"), std::string::npos) << s.message();
}

TEST_F(JudgedPlanTest, AFileWrittenFromARunWithNoJudgedCellReadsBack) {
  Plan plan = MakePlan({}, {});
  Finish(&plan, {{"set-nx-px-lua x none", "unknown"},
                 {"set-nx-px-lua x client-pause", "unknown"},
                 {"setnx x none", "unknown"},
                 {"setnx x client-pause", "unknown"}});
  Write(&plan);
  const std::string path = dir_ + "/baseline.toml";
  int pinned = -1;
  ASSERT_TRUE(WriteExpectationFile(plan, path, &pinned).ok());
  EXPECT_EQ(pinned, 0);
  Expectations e;
  Status s = LoadExpectations(path, {"none", "client-pause"}, &e);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(e.empty());
}

// A shard holds some of a cell's trials: it judges nothing (its exit code is 0 when they
// ran), so its junit.xml must not fail a cell either; the merge does, from every trial.
TEST_F(JudgedPlanTest, AShardFailsNoCellInItsJunit) {
  FailOn fail_on;
  ASSERT_EQ(ParseFailOn("violated,unknown", &fail_on), "");
  Plan plan = MakePlan({Entry("*", "*", "S", "pins.toml:1")}, fail_on);
  SliceForShard(&plan, 1, 2);
  Finish(&plan, kFound);
  EXPECT_EQ(Write(&plan, 1, 2), 0);
  const std::string junit = Junit();
  EXPECT_EQ(Count(junit, "<failure "), 0) << junit;
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos) << junit;
  for (const auto& c : plan.cells) EXPECT_FALSE(c.regressed) << c.lock << " x " << c.fault;
  std::ifstream in(dir_ + "/matrix.json");
  const auto shard_json = nlohmann::json::parse(in);
  for (const auto& c : shard_json["cells"]) {
    EXPECT_FALSE(c.contains("matches")) << c.dump() << " (a shard's cell neither matches nor not)";
    EXPECT_EQ(c["expected"], "S") << "the pin travels to the merge";
  }
  // The whole matrix of the same findings fails what the glob pins S.
  Plan whole = MakePlan({Entry("*", "*", "S", "pins.toml:1")}, fail_on);
  Finish(&whole, kFound);
  EXPECT_EQ(Write(&whole), 2);
  EXPECT_EQ(Count(Junit(), "<failure "), 2) << Junit();
}

// `locklab merge` reads matrix.json files a person may have edited: a missing key, a cell
// too few or a results.json of another shape is one line or an unknown trial, never a crash.
TEST_F(JudgedPlanTest, MergeSaysWhatIsWrongWithAMalformedMatrixJson) {
  Plan plan = MakePlan({}, {});
  Finish(&plan, kFound);
  Write(&plan);
  std::ifstream in(dir_ + "/matrix.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  auto merge = [&](const nlohmann::json& doc) {
    const std::string shard = dir_ + "/shard";
    (void)!system(("rm -rf " + shard + " && mkdir -p " + shard).c_str());
    std::ofstream(shard + "/matrix.json") << doc.dump();
    return RunMergeCommand({shard, "--no-report", "--out", dir_ + "/merged"});
  };
  ASSERT_EQ(merge(good), 0) << "the unedited file merges";
  nlohmann::json no_seed = good;
  no_seed.erase("seed");
  EXPECT_EQ(merge(no_seed), 64);
  nlohmann::json empty_cell = good;
  empty_cell["cells"][0] = nlohmann::json::object();
  EXPECT_EQ(merge(empty_cell), 64);
  nlohmann::json cell_missing = good;
  cell_missing["cells"].erase(cell_missing["cells"].size() - 1);
  EXPECT_EQ(merge(cell_missing), 64);
  nlohmann::json no_trials = good;
  no_trials.erase("trials");
  EXPECT_EQ(merge(no_trials), 64);
  // A trial's results of another shape: that trial is unknown, with the reason.
  nlohmann::json odd_results = good;
  odd_results["trials"][0]["first_violation_ms"] = "soon";
  odd_results["trials"][1]["lab_lag"] = 3;
  EXPECT_EQ(merge(odd_results), 0) << "unknown cells fail nothing without --fail-on";
}

// Two driver rows whose files share a name get trial names of their own: the scheduler's
// scenario and log files (cells/<name>-N.toml) and run directories are named by them.
TEST_F(JudgedPlanTest, RowsOfTheSameFileNameGetTheirOwnTrialNames) {
  PlanRequest r;
  r.seed = 7;
  r.lock_ids = {"driver:a/lock.py", "driver:b/lock.py", "driver:c/lock-2.js", "setnx"};
  std::vector<Preset> all;
  ASSERT_TRUE(LoadPresets(kDefaultPresetDir, &all).ok());
  for (const auto& p : all) {
    if (p.fault == "none") r.presets.push_back(p);
  }
  Plan plan = BuildPlan(r);
  std::set<std::string> names;
  for (const auto& tr : plan.all) {
    EXPECT_TRUE(names.insert(tr.options.name).second) << tr.options.name << " twice";
  }
  EXPECT_EQ(names, (std::set<std::string>{"driver-lock--none", "driver-lock-2--none", "driver-lock-2-2--none",
                                           "setnx--none"}));
}

// The cell's detection rate, when it was measured over many seeds, beside its pin: one run
// cannot say whether a V comes back every time.
TEST_F(JudgedPlanTest, AWrittenPinSaysHowOftenItsLetterWasMeasured) {
  std::ofstream(dir_ + "/detection-power.json")
      << R"({"mode": "quick", "runs": 3, "cells": [)"
      << R"({"lock": "set-nx-px-lua", "fault": "client-pause", "verdicts": ["V", "S", "V"]},)"
      << R"({"lock": "setnx", "fault": "client-pause", "verdicts": ["S", "S", "S"]}]})";
  Plan plan = MakePlan({}, {});
  Finish(&plan, kFound);
  Write(&plan);
  int pinned = 0;
  const std::string path = dir_ + "/baseline.toml";
  const std::string text = WrittenExpectations(plan, path, &pinned);
  EXPECT_NE(text.find("lock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"V\"\n"
                      "violated_in = \"1/1\"\n"
                      "# measured: V in 2 of 3 quick matrices of its seeds (detection-power.json)\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("# measured: S in 3 of 3 quick"), std::string::npos) << text;
  EXPECT_EQ(text.find("# measured: S in 0"), std::string::npos) << "none for a cell not measured: " << text;
  Expectations e;
  EXPECT_TRUE(LoadExpectations(path, {"none", "client-pause"}, &e).ok());
  EXPECT_EQ(e.size(), 3u);
}

TEST_F(JudgedPlanTest, ALagBelowAMillisecondIsNotSaidToBeZero) {
  Plan plan = MakePlan({}, {});
  Finish(&plan, kFound);
  plan.all[0].results["lab_lag"] = {{"timing_trusted", false}, {"max_ms", 0.3}};
  Write(&plan);
  std::ifstream in(dir_ + "/matrix.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("ran with the lab's own sleeps up to 0.3 ms late"), std::string::npos) << md;
}

TEST_F(JudgedPlanTest, GlobsAndFailOnAreInThePlanId) {
  FailOn fail_on;
  ASSERT_EQ(ParseFailOn("violated", &fail_on), "");
  const std::string plain = MakePlan({}, {}).id;
  EXPECT_NE(MakePlan({}, fail_on).id, plain) << "shards of another --fail-on are another plan";
  Plan pinned = MakePlan({Entry("*", "none", "S", "a:1")}, {});
  EXPECT_NE(pinned.id, plain);
  int pinned_cells = 0;
  for (const auto& c : pinned.cells) pinned_cells += c.expected == "S";
  EXPECT_EQ(pinned_cells, 2) << "the glob resolved per cell, in the plan";
}


// A measurement that recorded the cell n/a in every run did not run it: no `# measured:`
// note claims a letter "in 0 of N" (matrix.md lists it as not in the measurement).
TEST_F(JudgedPlanTest, APinHasNoMeasuredNoteForACellTheMeasurementDidNotRun) {
  std::ofstream(dir_ + "/detection-power.json")
      << R"({"mode": "quick", "runs": 3, "cells": [)"
      << R"({"lock": "setnx", "fault": "client-pause", "verdicts": ["n/a", "n/a", "n/a"]}]})";
  Plan plan = MakePlan({}, {});
  Finish(&plan, kFound);
  Write(&plan);
  int pinned = 0;
  const std::string path = dir_ + "/baseline.toml";
  const std::string text = WrittenExpectations(plan, path, &pinned);
  EXPECT_EQ(text.find("\n# measured: "), std::string::npos) << text;
  EXPECT_FALSE(DetectionPowerMeasured({"n/a", "n/a"}));
  EXPECT_TRUE(DetectionPowerMeasured({"n/a", "S"}));
}

// One id for one driver: `./x`, `x` and the absolute path, from any working directory of
// the repository, spelt relative to the repository's root.
TEST_F(ExpectFileTest, ADriverPathHasOneCanonicalIdFromAnyWorkingDirectory) {
  ASSERT_EQ(system(("mkdir -p " + dir_ + "/team/.git " + dir_ + "/team/ci/locklab " + dir_ + "/team/sub").c_str()), 0);
  std::ofstream(dir_ + "/team/ci/locklab/driver.py") << "#!/usr/bin/env python3\n";
  const std::string root = dir_ + "/team";
  EXPECT_EQ(CanonicalLockId("driver:ci/locklab/driver.py", root), "driver:ci/locklab/driver.py");
  EXPECT_EQ(CanonicalLockId("driver:./ci/locklab/driver.py", root), "driver:ci/locklab/driver.py");
  EXPECT_EQ(CanonicalLockId("driver:" + root + "/ci/locklab/driver.py", "/"), "driver:ci/locklab/driver.py");
  EXPECT_EQ(CanonicalLockId("driver:../ci/locklab/driver.py", root + "/sub"), "driver:ci/locklab/driver.py");
  EXPECT_EQ(CanonicalLockId("driver:locklab/./driver.py", root + "/ci"), "driver:ci/locklab/driver.py");
  // No such file: the text, normalised; a built-in id as it is.
  EXPECT_EQ(CanonicalLockId("driver:./no/such/../file.py", root), "driver:no/file.py");
  EXPECT_EQ(CanonicalLockId("set-nx-px-lua", root), "set-nx-px-lua");
  // The lab's own examples: relative to the locklab tree, from anywhere.
  EXPECT_EQ(CanonicalLockId("driver:examples/drivers/redis_py_lock.py", "/"), "driver:examples/drivers/redis_py_lock.py");
}

// The case that disarmed a gate: the file pins driver:examples/..., the run spells it
// driver:./examples/...; the entry pins the cell, and a row it does not match is refused.
TEST_F(JudgedPlanTest, AnEntryPinsItsDriverHoweverTheRunSpellsThePath) {
  Expectations file;
  ASSERT_EQ(Load("[[cell]]\nlock = \"driver:examples/drivers/redis_py_lock.py\"\nfault = \"client-pause\"\nverdict = \"S\"\n",
                 &file), "");
  for (const std::string spelt : {"driver:./examples/drivers/redis_py_lock.py",
                                  "driver:" LOCKLAB_SOURCE_DIR "/examples/drivers/redis_py_lock.py"}) {
    const Expectation* e = FindExpectation(file, spelt, "client-pause");
    ASSERT_NE(e, nullptr) << spelt;
    EXPECT_EQ(e->origin, path_ + ":1");
    EXPECT_EQ(FindExpectation(file, spelt, "none"), nullptr);
  }
  // The same entry in a run of that driver matches; a typo of its path matches no cell.
  PlanRequest r;
  r.lock_ids = {"driver:./examples/drivers/redis_py_lock.py"};
  std::vector<Preset> all;
  ASSERT_TRUE(LoadPresets(kDefaultPresetDir, &all).ok());
  std::vector<std::string> columns;
  for (const auto& p : all) {
    columns.push_back(p.fault);
    if (p.fault == "client-pause") r.presets.push_back(p);
  }
  r.expectations = file;
  r.expect_path = path_;
  Plan plan = BuildPlan(r);
  ASSERT_EQ(plan.cells.size(), 1u);
  EXPECT_EQ(plan.cells[0].origin, path_ + ":1");
  EXPECT_TRUE(UnmatchedExpectation(plan, file, columns).ok());
  Expectations typo;
  ASSERT_EQ(Load("[[cell]]\nverdict = \"S\"\nfault = \"client-pause\"\nlock = \"driver:examples/drivers/redis_py_lok.py\"\n", &typo), "");
  Status u = UnmatchedExpectation(plan, typo, columns);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.ExitCode(), 65);
  EXPECT_EQ(u.message().rfind(path_ + ":4: field 'cell.lock': 'driver:examples/drivers/redis_py_lok.py'", 0), 0u) << u.message();
  // An entry for a lock of the default matrix that this run did not select is no typo.
  Expectations other;
  ASSERT_EQ(Load("[[cell]]\nlock = \"setnx\"\nfault = \"client-pause\"\nverdict = \"S\"\n"
                 "[[cell]]\nlock = \"driver:*\"\nfault = \"*\"\nverdict = \"S\"\n", &other), "");
  EXPECT_TRUE(UnmatchedExpectation(plan, other, columns).ok());
  Expectations no_column;
  ASSERT_EQ(Load("[[cell]]\nlock = \"driver:*\"\nfault = \"client-*x\"\nverdict = \"S\"\n", &no_column), "");
  EXPECT_FALSE(UnmatchedExpectation(plan, no_column, columns).ok()) << "a glob that matches no column pins nothing";
}

TEST_F(JudgedPlanTest, TheGateSaysHowManyCellsItPins) {
  Expectations file = {Entry("set-nx-px-lua", "*", "S", "pins.toml:1")};
  Plan plan = MakePlan(file, {});
  Finish(&plan, kFound);
  Write(&plan);
  EXPECT_EQ(PinSummary(plan), "gate: 2 of 4 cells pinned by pins.toml, 0 by --fail-on, 2 unpinned");
  EXPECT_NE(RegressionSummary(plan).find("gate: 2 of 4 cells pinned"), std::string::npos);
  FailOn f;
  ASSERT_EQ(ParseFailOn("violated", &f), "");
  Plan with_fail_on = MakePlan(file, f);
  Finish(&with_fail_on, kFound);
  Write(&with_fail_on);
  EXPECT_EQ(PinSummary(with_fail_on), "gate: 2 of 4 cells pinned by pins.toml, 2 by --fail-on, 0 unpinned");
}

// --write-expect writes the canonical id: the file pins the cells from another directory.
TEST_F(JudgedPlanTest, AWrittenFileNamesDriversByTheirCanonicalId) {
  PlanRequest r;
  r.seed = 7;
  r.lock_ids = {"driver:./examples/drivers/redis_py_lock.py"};
  std::vector<Preset> all;
  ASSERT_TRUE(LoadPresets(kDefaultPresetDir, &all).ok());
  for (const auto& p : all) {
    if (p.fault == "none") r.presets.push_back(p);
  }
  r.preset_dir = dir_;
  Plan plan = BuildPlan(r);
  for (auto& tr : plan.all) {
    tr.ran = tr.done = true;
    tr.results = {{"verdict", "safe"}, {"verdict_reason", "ok"}, {"resource_verdict", "safe"}, {"run_dir", "/r"}};
  }
  Write(&plan);
  int pinned = 0;
  const std::string path = dir_ + "/baseline.toml";
  ASSERT_TRUE(WriteExpectationFile(plan, path, &pinned).ok());
  EXPECT_EQ(pinned, 1);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("lock = \"driver:examples/drivers/redis_py_lock.py\""), std::string::npos) << text;
}

}  // namespace
}  // namespace locklab::harness
