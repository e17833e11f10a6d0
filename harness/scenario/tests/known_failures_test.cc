// KnownFailures (hunt --known): which finds an expectation file or a corpus already accounts
// for, and that a find it does not cover stays new.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "harness/scenario/known_failures.h"

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

}  // namespace
}  // namespace locklab::harness
