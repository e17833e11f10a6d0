// KnownFailures (hunt --known): which finds an expectation file or a corpus already accounts
// for, and that a find it does not cover stays new; and how the story tells what a hunt
// could not do (runs not run, fates of finds, undecided).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "hunt/hunt_known.h"
#include "hunt/hunt_story.h"

namespace locklab::harness {
namespace {

class KnownFailuresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/locklab-known-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!HasFailure()) (void)!system(("rm -rf " + dir_).c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    (void)!system(("mkdir -p $(dirname " + path + ")").c_str());
    std::ofstream(path) << text;
    return path;
  }
  static RunOptions Under(std::vector<std::string> faults) {
    RunOptions o;
    o.lock = "set-nx-px-lua";
    for (auto& f : faults) {
      faults::FaultOptions fo;
      fo.id = f;
      o.faults.push_back(fo);
    }
    return o;
  }
  std::string dir_;
};

TEST_F(KnownFailuresTest, AnExpectationFilesViolatedCellsAccountForFindsUnderTheirFault) {
  KnownFailures k;
  const std::string file = Write("expect.toml",
                                 "[[cell]]\nlock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"V\"\n"
                                 "[[cell]]\nlock = \"set-nx-px-lua\"\nfault = \"none\"\nverdict = \"S\"\n"
                                 "[[cell]]\nlock = \"*\"\nfault = \"slow-cs\"\nverdict = \"V\"\nresource = \"S\"\n");
  ASSERT_TRUE(k.Add(file).ok());
  const FailureKindSet violated = {FailureKind::kViolated}, both = {FailureKind::kViolated, FailureKind::kResource};
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({"client-pause"}), both),
            file + ":1 pins set-nx-px-lua x client-pause V");
  EXPECT_NE(k.Accounts("set-nx-px-lua", Under({"reply-loss", "client-pause"}), violated), "");
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({"reply-loss"}), violated), "") << "reply-loss is pinned by nothing";
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({}), violated), "") << "none is pinned S: a plain failure is new";
  EXPECT_EQ(k.Accounts("setnx", Under({"client-pause"}), violated), "") << "another lock's pin";
  // V with the resource pinned intact accounts for overlaps, not for a broken resource.
  EXPECT_NE(k.Accounts("setnx", Under({"slow-cs"}), violated), "");
  EXPECT_EQ(k.Accounts("setnx", Under({"slow-cs"}), both), "");
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({"client-pause"}), {FailureKind::kStuck}), "");
}

TEST_F(KnownFailuresTest, ACorpusScenarioAccountsForFindsWithItsFaults) {
  Write("corpus/.gitkeep", "");
  Write("corpus/a.toml", "[lock]\nid = \"set-nx-px-lua\"\n[[faults]]\nid = \"client-pause\"\n[expect]\nverdict = \"violated\"\n");
  Write("corpus/safe.toml", "[lock]\nid = \"set-nx-px-lua\"\n[[faults]]\nid = \"reply-loss\"\n[expect]\nverdict = \"safe\"\n");
  KnownFailures k;
  ASSERT_TRUE(k.Add(dir_ + "/corpus").ok());
  EXPECT_EQ(k.Describe(), "0 expectation entries, 1 failing scenario");
  const FailureKindSet violated = {FailureKind::kViolated};
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({"client-pause", "delay"}), violated),
            dir_ + "/corpus/a.toml fails set-nx-px-lua under client-pause");
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({"reply-loss"}), violated), "") << "a safe scenario accounts for nothing";
  EXPECT_EQ(k.Accounts("set-nx-px-lua", Under({}), violated), "");
}

TEST_F(KnownFailuresTest, AnEmptyCorpusAddsNothingAndBadInputIsOneLine) {
  Write("empty/.gitkeep", "");
  KnownFailures k;
  EXPECT_TRUE(k.Add(dir_ + "/empty").ok());
  EXPECT_TRUE(k.empty());
  Status missing = k.Add(dir_ + "/nowhere");
  EXPECT_EQ(missing.ExitCode(), 64);
  EXPECT_NE(missing.message().find("flag --known: " + dir_ + "/nowhere"), std::string::npos);
  Status bad = k.Add(Write("bad.toml", "[[cell]]\nlock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"X\"\n"));
  EXPECT_EQ(bad.ExitCode(), 65);
  EXPECT_NE(bad.message().find(dir_ + "/bad.toml:4: field 'cell.verdict'"), std::string::npos) << bad.message();
}

// The summary and hunt.json tell runs that could not run apart from finds that did not
// reproduce, and say why a hunt is undecided.
TEST(HuntAccountingTest, TheStoryCountsWhatCouldNotRunAndEachFindsFate) {
  HuntStory s;
  s.lock = "mutant:plain-del";
  s.trials = 85;
  s.runs_not_run = 61;
  s.runs_retried = 40;
  s.scenarios_not_run = 21;
  s.not_run_why = {{"a lock did not start: no hello line within start_timeout_ms 20000", 61}};
  s.jobs = 2;
  s.lowest_jobs = 1;
  s.concurrency_changes = {"at 12 s: 2 -> 1 trials at a time (t0004: a lock did not start)"};
  s.undecided = "21 of 45 trials could not run";
  FoundScenario f;
  f.options.name = "t0031";
  f.baseline_failed = true;
  f.fate = FindFate::kNotRun;
  f.why = "its confirmation could not run in 3 attempts";
  s.found.push_back(f);
  const std::string out = HuntSummary(s, "/h");
  EXPECT_NE(out.find("85 trials in 0 s (24 ran, 61 could not run, 40 run again); 0 new failing scenarios found; "
                     "1 not confirmed (its runs could not run)"),
            std::string::npos) << out;
  EXPECT_NE(out.find("not run: 61 x a lock did not start"), std::string::npos) << out;
  EXPECT_NE(out.find("undecided: 21 of 45"), std::string::npos) << out;
  EXPECT_EQ(out.find("no failure within the budget"), std::string::npos) << "an undecided hunt never says nothing was found";
  const auto j = HuntJson(s);
  EXPECT_EQ(j["found"][0]["fate"], "not-run");
  EXPECT_EQ(j["not_run"]["runs"], 61);
  EXPECT_EQ(j["not_run"]["scenarios"], 21);
  EXPECT_EQ(j["concurrency"]["lowest"], 1);
  EXPECT_EQ(j["undecided"], "21 of 45 trials could not run");
  s.found[0].fate = FindFate::kKnown;
  s.found[0].why = "expect.toml:3 pins x";
  s.undecided.clear();
  EXPECT_NE(HuntSummary(s, "/h").find("known: found/t0031.toml: expect.toml:3 pins x"), std::string::npos);
  EXPECT_NE(HuntSummary(s, "/h").find("no new failure within the budget (only known ones)"), std::string::npos);
}

}  // namespace
}  // namespace locklab::harness
