// Whole-stack chaos tests: real redis-server nodes, real client processes, real SIGSTOP /
// SIGCONT, verdicts read from results.json, which the checker derived from the recorded
// history only. Each runs the `locklab` binary as a user would.
#include <signal.h>

#include <gtest/gtest.h>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

// A short trial: TTL 500 ms, pauses of 1200 ms (> TTL), 3 clients (see TrialTest). Verdicts
// and counts that depend on timing are judged only on a run whose timing the lab trusted
// (TrustedTrial, tests/trial_retry.h).
using RunTrialTest = TrialTest;

TEST_F(RunTrialTest, SetNxPxLuaUnderPauseLongerThanTtlIsViolated) {
  int code = 0;
  TrustedTrial("set-nx-px-lua", "client-pause", {}, [&](const nlohmann::json& r) {
    EXPECT_EQ(r["verdict"], "violated") << r.dump(2);
    EXPECT_GE(r["mutual_exclusion"]["overlapping_pairs"].get<int>(), 1);
    EXPECT_TRUE(r.contains("first_violation"));
    EXPECT_EQ(r["first_violation"]["faults_active"][0]["fault"], "client-pause");
    EXPECT_EQ(code, 1);
  }, &code);
}

TEST_F(RunTrialTest, PauseBeforeTheWriteLosesUpdates) {
  // The paused client read the counter, others incremented it meanwhile, then it wrote its
  // stale value + 1: lost updates, found by comparing acknowledged writes to the final value.
  TrustedTrial("set-nx-px-lua", "client-pause", {"--pause-point", "before-write"},
               [](const nlohmann::json& r) {
                 EXPECT_EQ(r["verdict"], "violated") << r.dump(2);
                 EXPECT_GE(r["mutual_exclusion"]["overlapping_pairs"].get<int>(), 1);
                 EXPECT_GE(r["resource"]["lost_updates"].get<int>(), 1);
               });
}

TEST_F(RunTrialTest, SetNxPxLuaWithoutFaultsIsSafe) {
  int code = -1;
  TrustedTrial("set-nx-px-lua", "none", {}, [&](const nlohmann::json& r) {
    EXPECT_EQ(r["verdict"], "safe") << r.dump(2);
    EXPECT_EQ(r["mutual_exclusion"]["overlapping_pairs"], 0);
    EXPECT_EQ(r["resource"]["lost_updates"], 0);
    EXPECT_GT(r["resource"]["acknowledged_writes"].get<int>(), 10) << "the workload made progress";
    EXPECT_EQ(code, 0);
  }, &code);
}

// lab_lag measures the lab's own lateness, not the fault: random-mode pauses of 1.2 s land
// in the middle of the clients' sleeps, and those sleeps must not count as lag (else every
// paused run would look untrusted), while every client still reports its other sleeps.
TEST_F(RunTrialTest, LabLagLeavesOutTheInjectedPausesAndCountsTheRest) {
  auto r = Trial("set-nx-px-lua", "client-pause", {"--pause-mode", "random"});
  ASSERT_TRUE(r.contains("lab_lag")) << r.dump(2);
  const auto& lag = r["lab_lag"];
  EXPECT_EQ(lag["clients_reporting"], 3) << lag.dump();
  EXPECT_GT(lag["sleeps"].get<int>(), 10) << lag.dump();
  EXPECT_LT(lag["max_ms"].get<double>(), 1000.0) << "a 1.2 s pause counted as lag: " << lag.dump();
  EXPECT_EQ(lag["bound_ms"], 50.0) << "a tenth of the 500 ms TTL";
}

TEST_F(RunTrialTest, SetnxUnderTheSamePauseIsSafe) {
  // No expiry: the others wait out the pause.
  TrustedTrial("setnx", "client-pause", {"--pause-point", "before-write"},
               [](const nlohmann::json& r) {
                 EXPECT_EQ(r["verdict"], "safe") << r.dump(2);
                 EXPECT_EQ(r["mutual_exclusion"]["overlapping_pairs"], 0);
                 EXPECT_EQ(r["resource"]["lost_updates"], 0);
               });
}

TEST_F(RunTrialTest, SigintKeepsTheHistoryAndLeavesNothingBehind) {
  std::string log = dir_ + "/sigint.out";
  pid_t pid = StartLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "none",
                            "--duration", "60s", "--ttl", "500", "--no-report", "--out", dir_},
                           log);
  ASSERT_GT(pid, 0);
  // Wait until events flow, then interrupt like a terminal's Ctrl-C.
  std::string run_dir;
  for (int i = 0; i < 100 && run_dir.empty(); ++i) {
    SleepFor(Millis(100));
    std::string latest = dir_ + "/latest";
    char buf[4096];
    ssize_t n = readlink(latest.c_str(), buf, sizeof(buf) - 1);
    if (n > 0 && ReadAll(dir_ + "/" + std::string(buf, n) + "/history.jsonl").size() > 1000) {
      run_dir = dir_ + "/" + std::string(buf, n);
    }
  }
  ASSERT_FALSE(run_dir.empty()) << ReadAll(log);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  Invocation inv = FinishLocklab(pid, log, Millis(15000));
  EXPECT_EQ(inv.exit_code, 2) << inv.output;
  auto r = Results(run_dir);
  ASSERT_FALSE(r.is_discarded()) << "results.json missing or broken";
  EXPECT_EQ(r["interrupted"], true);
  EXPECT_NE(r["verdict"], "safe") << "an interrupted run is never called safe";
  EXPECT_GT(r["ops"].get<int>(), 0);
  EXPECT_GT(ReadAll(run_dir + "/history.jsonl").size(), 1000u);
  auto pids = LoggedPids(run_dir);
  EXPECT_GE(pids.size(), 5u) << "2 nodes + 3 clients were logged";
  for (pid_t p : pids) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
}

// A fault that cannot bite proves nothing. A pause armed at a point this lock
// never reaches used to read "safe". (A point the lock does not even announce, such as
// Redlock's replies-in-flight on a single-node lock, is refused before the run.)
// The driver announces "never-reached" and never stops there.
TEST_F(RunTrialTest, APausePointTheLockNeverReachesIsUnknownNotSafe) {
  int code = 0;
  TrustedTrial("driver:examples/drivers/get_compare_del.py", "client-pause",
               {"--param", "point=never-reached", "--driver-arg", "--extra-point",
                "--driver-arg", "never-reached"},
               [&](const nlohmann::json& r) {
                 EXPECT_EQ(r["verdict"], "unknown") << r.dump(2);
                 EXPECT_EQ(code, 2);
                 EXPECT_EQ(r.value("verdict_reason", ""),
                           "no fault bit: client-pause: armed 1, opened 0")
                     << r.dump(2);
                 ASSERT_EQ(r["coverage"].size(), 1u);
                 EXPECT_EQ(r["coverage"][0]["armed"], 1);
                 EXPECT_EQ(r["coverage"][0]["windows_opened"], 0);
                 EXPECT_EQ(r["coverage"][0]["bit"], false);
                 EXPECT_GT(r["acquires"]["ok"].get<int>(), 10) << "the lock itself did real work";
               },
               &code);
}

// The same fault at a point the lock reaches bites, and its coverage says so.
// A 7 s run: a window opens when the armed client (one of three on one key) next completes
// an acquire, and a later one is armed only if it can close before the end. In the 5 s run
// this test had, the second window fitted only when the first opened within 1.3 s of its
// arm; on a loaded machine the armed client could lose the key that long (it took up to
// 0.5 s at load 12) and one window opened. Nominally three fit in 7 s; two need the first
// within 3.3 s.
TEST_F(RunTrialTest, APauseAfterAcquireBitesAndCoverageSaysWhere) {
  TrustedTrial("fenced", "client-pause", {"--duration", "7s"}, [](const nlohmann::json& r) {
    ASSERT_EQ(r["coverage"].size(), 1u) << r.dump(2);
    const auto& c = r["coverage"][0];
    EXPECT_EQ(c["bit"], true) << c.dump();
    EXPECT_GE(c["windows_opened"].get<int>(), 2) << c.dump();
    EXPECT_EQ(c["windows_met"], c["windows_opened"]) << c.dump();
    EXPECT_GE(c["armed"].get<int>(), c["windows_opened"].get<int>()) << c.dump();
    EXPECT_FALSE(c["clients_hit"].empty()) << c.dump();
  });
}

TEST_F(RunTrialTest, BadFlagExits64WithOneLineNamingIt) {
  Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--ttl", "soon", "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output, "locklab run: flag --ttl: expected a duration like 500ms, 6s, 2m or 1h (a bare "
                        "number is milliseconds), got 'soon'\n");
  inv = RunLocklab({"run", "--bogus", "1"}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output, "locklab run: unknown flag --bogus\n");
  inv = RunLocklab({"run", "--lock", "nope", "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_NE(inv.output.find("lock 'nope': unknown lock id"), std::string::npos) << inv.output;
}

TEST_F(RunTrialTest, ScenarioFileReplaysTheRun) {
  auto first = Trial("set-nx-px-lua", "none");
  std::string run_dir = first["run_dir"];
  Invocation inv = RunLocklab({"run", run_dir + "/scenario.toml", "--no-report", "--out", dir_ + "/replay"}, dir_);
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  auto second = Results(RunDirOf(inv));
  EXPECT_EQ(second["seed"], first["seed"]);
  EXPECT_EQ(second["scenario"], first["scenario"]);
  EXPECT_EQ(second["config"], first["config"]);
}

TEST_F(RunTrialTest, BadScenarioFieldNamesFileLineAndField) {
  std::string path = dir_ + "/bad.toml";
  std::ofstream(path) << "name = \"x\"\n[lock]\nid = \"setnx\"\nttl_ms = \"long\"\n";
  Invocation inv = RunLocklab({"run", path, "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 65);
  EXPECT_EQ(inv.output, "locklab " + path + ":4: field 'lock.ttl_ms': expected an integer in 1..3600000, got 'long'\n");
}

}  // namespace
}  // namespace locklab::testing

namespace locklab::testing {
namespace {

TEST(MatrixTest, SmallMatrixWritesItsFilesAndPinsExpectations) {
  std::string dir = MakeTempDir("locklab-matrix");
  std::string expect = dir + "/expect.toml";
  std::ofstream(expect) << "[[cell]]\nlock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"V\"\n"
                           "[[cell]]\nlock = \"setnx\"\nfault = \"client-pause\"\nverdict = \"S\"\n"
                           "[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"S\"\n";
  Invocation inv = RunLocklab({"matrix", "--locks", "set-nx-px-lua,setnx", "--faults", "none,client-pause",
                               "--expect", expect, "--seed", "7", "--no-report", "--out", dir},
                              dir, Millis(120000));
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  const std::string mdir = MatrixDirOf(inv);
  ASSERT_FALSE(mdir.empty()) << inv.output;
  auto j = nlohmann::json::parse(ReadAll(mdir + "/matrix.json"));
  EXPECT_EQ(j["cells"].size(), 4u);
  EXPECT_EQ(j["trials"].size(), 4u);
  for (const auto& c : j["cells"]) {
    if (c.contains("matches")) {
      EXPECT_TRUE(c["matches"].get<bool>()) << c.dump();
    }
  }
  const std::string md = ReadAll(mdir + "/matrix.md");
  EXPECT_NE(md.find("| `setnx` |"), std::string::npos);
  // The figures measured over many seeds (scenarios/matrix/detection-power.json), for
  // this table's four cells only.
  EXPECT_NE(md.find("## Detection power (measured over many seeds"), std::string::npos) << md;
  EXPECT_NE(md.find("this table's cells: "), std::string::npos) << md;
  EXPECT_NE(ReadAll(mdir + "/junit.xml").find("testcase"), std::string::npos);

  // The same matrix pinned to a wrong answer fails.
  std::ofstream(expect) << "[[cell]]\nlock = \"setnx\"\nfault = \"none\"\nverdict = \"V\"\n";
  inv = RunLocklab({"matrix", "--locks", "setnx", "--faults", "none", "--expect", expect,
                    "--no-report", "--out", dir},
                   dir, Millis(60000));
  EXPECT_EQ(inv.exit_code, 1) << inv.output;
  EXPECT_NE(inv.output.find("1 cell(s) disagree"), std::string::npos) << inv.output;
  if (!::testing::Test::HasFailure()) (void)!system(("rm -rf " + dir).c_str());
}

// Regression: a --scenarios directory of one's own got the default presets' detection
// power in its matrix.md, figures measured on other cells. They come from the presets'
// own directory now, or not at all.
TEST(MatrixTest, DetectionPowerComesFromThePresetsDirectory) {
  std::string dir = MakeTempDir("locklab-matrix");
  std::ofstream(dir + "/none.toml") << "name = \"none\"\nduration_ms = 1000\n[lock]\n"
                                       "id = \"set-nx-px-lua\"\nttl_ms = 500\n";
  auto run = [&] {
    Invocation inv = RunLocklab({"matrix", "--scenarios", dir, "--locks", "setnx", "--faults",
                                 "none", "--seed", "3", "--no-report", "--out", dir + "/out"},
                                dir, Millis(60000));
    EXPECT_EQ(inv.exit_code, 0) << inv.output;
    return ReadAll(MatrixDirOf(inv) + "/matrix.md");
  };
  std::string md = run();
  EXPECT_NE(md.find("| `setnx` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("Detection power"), std::string::npos) << md;
  std::ofstream(dir + "/detection-power.json")
      << R"({"measured": "2026-11-22", "mode": "quick", "runs": 3, "seeds": [1, 2, 3],)"
      << R"( "cells": [{"lock": "setnx", "fault": "none", "verdicts": ["S", "S", "S"]}]})";
  md = run();
  EXPECT_NE(md.find("Over 3 quick matrices (seeds 1-3"), std::string::npos) << md;
  if (!::testing::Test::HasFailure()) (void)!system(("rm -rf " + dir).c_str());
}

// The matrix as a CI gate, through real trials: set-nx-px-lua under client-pause (pauses of
// 2 s, 4 TTLs, before the write) violates in every run, setnx (no expiry) never does. Two
// cells, two at a time: about 4 s a matrix. A verdict is judged only on a matrix whose
// timing the lab trusted (tests/trial_retry.h); exit codes and files on every attempt.
class MatrixGateTest : public TempDirTest {
 protected:
  MatrixGateTest() : TempDirTest("locklab-matrix-gate") {}
  Invocation Matrix(const std::string& locks, std::vector<std::string> extra) {
    std::vector<std::string> args = {"matrix", "--locks", locks, "--faults", "client-pause",
                                     "--seed", "5", "--jobs", "2", "--no-report", "--out", dir_};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = RunLocklab(args, dir_, Millis(120000));
    EXPECT_LT(last_.exit_code, 2) << last_.output;
    matrix_dir_ = MatrixDirOf(last_);
    EXPECT_FALSE(matrix_dir_.empty()) << last_.output;
    return last_;
  }
  TimedAttempt Timing() const {
    return FromMatrix(nlohmann::json::parse(ReadAll(matrix_dir_ + "/matrix.json"), nullptr, false));
  }
  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  Invocation last_;
  std::string matrix_dir_;
};

TEST_F(MatrixGateTest, ACellExpectedSafeThatComesOutViolatedIsTheOneFailure) {
  // One glob pins every cell S: setnx holds it, set-nx-px-lua does not.
  const std::string expect = dir_ + "/all-safe.toml";
  std::ofstream(expect) << "[[cell]]\nlock = \"*\"\nfault = \"*\"\nverdict = \"S\"\n";
  CheckWithTrustedTiming(
      [&] {
        Matrix("set-nx-px-lua,setnx", {"--expect", expect});
        return Timing();
      },
      [&](const nlohmann::json&) {
        EXPECT_EQ(last_.exit_code, 1) << last_.output;
        const std::string junit = ReadAll(matrix_dir_ + "/junit.xml");
        EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos) << junit;
        EXPECT_EQ(Count(junit, "<failure "), 1) << junit;
        const std::string failed = "<testcase classname=\"matrix\" name=\"set-nx-px-lua x client-pause\">\n"
                                   "    <failure message=\"set-nx-px-lua x client-pause: expected S, got V (1/1 violated; " +
                                   expect + ":1): ";
        EXPECT_NE(junit.find(failed), std::string::npos) << junit;
        // The trial directory, in the message and in the failure's text.
        EXPECT_EQ(Count(junit, "trial " + matrix_dir_ + "/cells/set-nx-px-lua--client-pause/"), 2) << junit;
        EXPECT_NE(junit.find("<testcase classname=\"matrix\" name=\"setnx x client-pause\"/>"), std::string::npos)
            << junit;
        // The end of the output names the regressed cell, one line.
        std::vector<std::string> lines = Lines(last_.output);
        ASSERT_GE(lines.size(), 2u);
        EXPECT_EQ(lines[lines.size() - 2], "regressed: 1 cell(s) (expectations " + expect + "):") << last_.output;
        EXPECT_EQ(lines.back().rfind("  set-nx-px-lua x client-pause: expected S, got V (1/1 violated; ", 0), 0u)
            << last_.output;
      });
}

TEST_F(MatrixGateTest, WrittenExpectationsReadBackOnTheSameSeedPass) {
  const std::string baseline = dir_ + "/baseline.toml";
  std::string first_dir;
  CheckWithTrustedTiming(
      [&] {
        Invocation wrote = Matrix("set-nx-px-lua,setnx", {"--write-expect", baseline});
        EXPECT_EQ(wrote.exit_code, 0) << wrote.output << " (no expectation, no --fail-on: nothing fails it)";
        EXPECT_NE(wrote.output.find("expectations: " + baseline + " (2 cell(s) pinned)\n"), std::string::npos)
            << wrote.output;
        TimedAttempt first = Timing();
        Matrix("set-nx-px-lua,setnx", {"--expect", baseline});
        return BothTrusted(first, Timing());
      },
      [&](const nlohmann::json&) {
        const std::string text = ReadAll(baseline);
        EXPECT_NE(text.find("lock = \"set-nx-px-lua\"\nfault = \"client-pause\"\nverdict = \"V\"\n"
                            "violated_in = \"1/1\"\n"),
                  std::string::npos) << text;
        EXPECT_NE(text.find("lock = \"setnx\"\nfault = \"client-pause\"\nverdict = \"S\"\n"), std::string::npos)
            << text;
        EXPECT_EQ(last_.exit_code, 0) << last_.output;
        EXPECT_NE(last_.output.find("regressed: none (expectations " + baseline + ")\n"), std::string::npos)
            << last_.output;
        EXPECT_EQ(Count(ReadAll(matrix_dir_ + "/junit.xml"), "<failure "), 0);
      });
}

TEST_F(MatrixGateTest, FailOnViolatedFailsAViolatedCell) {
  CheckWithTrustedTiming(
      [&] {
        Matrix("set-nx-px-lua", {"--fail-on", "violated,stuck"});
        return Timing();
      },
      [&](const nlohmann::json&) {
        EXPECT_EQ(last_.exit_code, 1) << last_.output;
        const std::string junit = ReadAll(matrix_dir_ + "/junit.xml");
        EXPECT_EQ(Count(junit, "<failure "), 1) << junit;
        EXPECT_NE(junit.find("<failure message=\"set-nx-px-lua x client-pause: got V (1/1 violated), "
                             "--fail-on violated,stuck: "),
                  std::string::npos) << junit;
        EXPECT_NE(last_.output.find("regressed: 1 cell(s) (--fail-on violated,stuck):\n"), std::string::npos)
            << last_.output;
      });
}

TEST(MatrixTest, BadFlagsAreNamed) {
  std::string dir = MakeTempDir("locklab-matrix");
  Invocation inv = RunLocklab({"matrix", "--locks", "nope"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output, "locklab matrix: flag --locks: unknown lock 'nope'\n");
  inv = RunLocklab({"matrix", "--trials", "zero"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output, "locklab matrix: flag --trials: expected an integer in 1..1000, got 'zero'\n");
  inv = RunLocklab({"matrix", "--fail-on", "violated,safe"}, dir);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output, "locklab matrix: flag --fail-on: 'safe' is not one of violated, stuck, unknown\n");
  // Before any trial runs: the file's directory is not there (exit 70, the file named).
  inv = RunLocklab({"matrix", "--locks", "setnx", "--faults", "none", "--write-expect", dir + "/no/x.toml"}, dir);
  EXPECT_EQ(inv.exit_code, 70);
  EXPECT_EQ(inv.output, "locklab matrix: write " + dir + "/no/x.toml: No such file or directory\n");
  std::ofstream(dir + "/typo.toml") << "[[cell]]\nlock = \"set-nx-px-lau\"\nfault = \"*\"\nverdict = \"S\"\n";
  inv = RunLocklab({"matrix", "--locks", "setnx", "--faults", "none", "--expect", dir + "/typo.toml"}, dir);
  EXPECT_EQ(inv.exit_code, 65);
  EXPECT_EQ(inv.output, "locklab matrix: " + dir + "/typo.toml:2: field 'cell.lock': unknown lock "
                        "'set-nx-px-lau' (see `locklab list`; a glob uses *)\n");
  (void)!system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace locklab::testing

namespace locklab::testing {
namespace {

TEST(ClusterCommandTest, UpStatusDownLeavesNothingBehind) {
  std::string dir = MakeTempDir("locklab-cluster");
  setenv("LOCKLAB_HOME", dir.c_str(), 1);
  Invocation up = RunLocklab({"cluster", "up", "--nodes", "2"}, dir);
  ASSERT_EQ(up.exit_code, 0) << up.output;
  EXPECT_NE(up.output.find("n1 127.0.0.1:"), std::string::npos) << up.output;
  EXPECT_NE(up.output.find("resource 127.0.0.1:"), std::string::npos) << up.output;
  auto state = nlohmann::json::parse(ReadAll(dir + "/cluster/state.json"));
  ASSERT_EQ(state["nodes"].size(), 3u);
  Invocation status = RunLocklab({"cluster", "status"}, dir);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_EQ(std::count(status.output.begin(), status.output.end(), '\n'), 3) << status.output;
  EXPECT_EQ(status.output.find("DOWN"), std::string::npos) << status.output;
  Invocation again = RunLocklab({"cluster", "up"}, dir);
  EXPECT_EQ(again.exit_code, 64) << "a second cluster is refused: " << again.output;
  Invocation down = RunLocklab({"cluster", "down"}, dir);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  for (const auto& n : state["nodes"]) {
    pid_t pid = n["pid"].get<int>();
    for (int i = 0; i < 50 && PidExists(pid); ++i) SleepFor(Millis(10));
    EXPECT_FALSE(PidExists(pid)) << n.dump();
  }
  EXPECT_EQ(RunLocklab({"cluster", "status"}, dir).output, "cluster: down\n");
  unsetenv("LOCKLAB_HOME");
  (void)!system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace locklab::testing
