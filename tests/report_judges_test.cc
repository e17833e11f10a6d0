// Through the real binary: `locklab report` judges the run's history
// with the one judge and never trusts results.json (a doctored results.json cannot change the
// headline: the report shows the history's judgement and names the field that disagreed, on
// stderr and on the page); an interpreter that is missing, not executable, /bin/false or a
// Python without matplotlib is exit 69 with one line, for `report` and for `run`; a report
// directory nobody may write (a read-only mount: the tests run as root, whom chmod does not
// stop) is exit 70 for `report` as a run directory is for `run`; a killed run (torn history,
// no results.json) and an interrupted one still get their report.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

// Sets an environment variable for the binaries this test starts, and puts it back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// The <h1> of a run report: its title and the verdict badge.
std::string Headline(const std::string& html) {
  size_t a = html.find("<h1>");
  size_t b = html.find("</h1>", a);
  return a == std::string::npos || b == std::string::npos ? "" : html.substr(a, b - a);
}

class ReportJudgesTest : public TempDirTest {
 protected:
  ReportJudgesTest() : TempDirTest("locklab-report") {}
  void TearDown() override {
    for (const auto& m : mounts_) umount2(m.c_str(), MNT_DETACH);
    TempDirTest::TearDown();
  }
  // A real violating run (client-pause 1200 ms > TTL 500 ms), without its report.
  std::string ViolatingRun() {
    Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "client-pause",
                                 "--pause", "1200", "--ttl", "500", "--hold", "100",
                                 "--duration", "4s", "--seed", "7", "--no-report", "--out",
                                 dir_ + "/runs"},
                                dir_);
    EXPECT_EQ(inv.exit_code, 1) << inv.output;
    return RunDirOf(inv);
  }
  // A read-only tmpfs at `path` (made if missing); false when this machine cannot mount.
  bool ReadOnlyMount(const std::string& path) {
    mkdir(path.c_str(), 0755);
    if (mount("tmpfs", path.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) return false;
    mounts_.push_back(path);
    return true;
  }
  std::vector<std::string> mounts_;
};

// Item 8: results.json replaced by {"verdict":"safe"}, then by the run's own with the verdict
// and the overlap count changed: the headline stays the history's (violated, "overlap #1 of
// N" with the judged N), the report is made (exit 0), and one line names the field.
TEST_F(ReportJudgesTest, ADoctoredResultsJsonCannotChangeTheHeadline) {
  std::string run = ViolatingRun();
  ASSERT_FALSE(run.empty());
  nlohmann::json real = Results(run);
  ASSERT_EQ(real.value("verdict", ""), "violated");
  int64_t episodes = real["mutual_exclusion"]["episodes"].get<int64_t>();
  ASSERT_GT(episodes, 0);
  const std::string overlap_line = "overlap #1 of " + std::to_string(episodes);

  // The run's own results.json agrees with its history: no line but the report's.
  Invocation inv = RunLocklab({"report", run}, dir_);
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  EXPECT_EQ(Lines(inv.output).size(), 1u) << inv.output;

  std::ofstream(run + "/results.json") << "{\"verdict\":\"safe\"}\n";
  inv = RunLocklab({"report", run}, dir_);
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  EXPECT_NE(inv.output.find("report: " + run + "/results.json: field 'verdict': says safe, the "
                            "history judges violated; the report shows the history's judgement"),
            std::string::npos)
      << inv.output;
  EXPECT_EQ(Lines(inv.output).size(), 2u) << inv.output;  // the report's path and that line
  std::string html = ReadAll(run + "/report/index.html");
  EXPECT_NE(Headline(html).find("badge violated"), std::string::npos) << Headline(html);
  EXPECT_EQ(Headline(html).find("badge safe"), std::string::npos) << Headline(html);
  EXPECT_NE(html.find(overlap_line), std::string::npos);

  nlohmann::json doctored = real;
  doctored["verdict"] = "safe";
  doctored.erase("verdict_reason");
  doctored["mutual_exclusion"]["overlapping_pairs"] = 0;
  doctored["mutual_exclusion"]["episodes"] = 0;
  doctored["episodes"] = nlohmann::json::array();
  std::ofstream(run + "/results.json") << doctored.dump(2) << "\n";
  inv = RunLocklab({"report", run}, dir_);
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  EXPECT_NE(inv.output.find("field 'verdict': says safe, the history judges violated (and 2 more "
                            "fields)"),
            std::string::npos)
      << inv.output;
  html = ReadAll(run + "/report/index.html");
  EXPECT_NE(Headline(html).find("badge violated"), std::string::npos) << Headline(html);
  EXPECT_NE(html.find(overlap_line), std::string::npos);
  EXPECT_NE(html.find("&#x27;mutual_exclusion.episodes&#x27; says 0, the history judges " +
                      std::to_string(episodes)),
            std::string::npos);
}

// Item 10: an interpreter that cannot make the report is 69 with one line naming it, for
// `report` and for `run` (whose verdict line is still printed), never 70 or 1 in silence.
TEST_F(ReportJudgesTest, ABrokenPythonIsExit69WithOneLine) {
  std::string run = dir_ + "/fixture";
  ASSERT_EQ(system(("cp -r " + std::string(LOCKLAB_SOURCE_DIR) +
                    "/reports/tests/fixtures/safe-none " + run)
                       .c_str()),
            0);
  // A Python that cannot see matplotlib: Debian's, without its site directories.
  std::string no_site = dir_ + "/python-without-site";
  std::ofstream(no_site) << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  chmod(no_site.c_str(), 0755);
  std::string text = dir_ + "/a-text-file";
  std::ofstream(text) << "not a program\n";
  chmod(text.c_str(), 0644);
  std::string text_x = dir_ + "/an-executable-text-file";
  std::ofstream(text_x) << "not a program either\n";
  chmod(text_x.c_str(), 0755);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/bin/false", "(it exited with status 1 without a report)"},
      {dir_ + "/no-such-python", "(no such file)"},
      {dir_, "(a directory)"},
      {text, "(not executable)"},
      {text_x, "(exec " + text_x + ": Exec format error)"},
      {no_site, "(ModuleNotFoundError: No module named 'matplotlib')"},
  };
  for (const auto& [python, why] : cases) {
    ScopedEnv env("LOCKLAB_PYTHON", python);
    Invocation inv = RunLocklab({"report", run}, dir_);
    EXPECT_EQ(inv.exit_code, 69) << python << ": " << inv.output;
    EXPECT_EQ(Lines(inv.output),
              std::vector<std::string>{"report: LOCKLAB_PYTHON=" + python +
                                       ": not a Python with matplotlib " + why});
  }
  ScopedEnv env("LOCKLAB_PYTHON", "/bin/false");
  Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "none", "--duration",
                               "1s", "--out", dir_ + "/runs"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 69) << inv.output;
  EXPECT_NE(inv.output.find("verdict: "), std::string::npos) << inv.output;
  EXPECT_NE(inv.output.find("report: LOCKLAB_PYTHON=/bin/false: not a Python with matplotlib"),
            std::string::npos)
      << inv.output;
  EXPECT_EQ(inv.output.find("warning: the report failed"), std::string::npos) << inv.output;
}

// Item 10: a permission error is 70 everywhere: a report directory on a read-only mount for
// `report`, a run directory on one for `run`. A report path through a file stays 65.
TEST_F(ReportJudgesTest, AReadOnlyReportDirectoryIsExit70ForReportAndRun) {
  std::string run = dir_ + "/fixture";
  ASSERT_EQ(system(("cp -r " + std::string(LOCKLAB_SOURCE_DIR) +
                    "/reports/tests/fixtures/safe-none " + run)
                       .c_str()),
            0);
  if (!ReadOnlyMount(run + "/report")) GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  Invocation inv = RunLocklab({"report", run}, dir_);
  EXPECT_EQ(inv.exit_code, 70) << inv.output;
  EXPECT_EQ(Lines(inv.output), std::vector<std::string>{"report: " + run +
                                                        "/report/timeline.png: cannot write "
                                                        "(Read-only file system)"});

  ASSERT_TRUE(ReadOnlyMount(dir_ + "/ro"));
  inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "none", "--duration", "1s",
                    "--out", dir_ + "/ro/runs"},
                   dir_);
  EXPECT_EQ(inv.exit_code, 70) << inv.output;
  EXPECT_EQ(Lines(inv.output).size(), 1u) << inv.output;

  std::string other = dir_ + "/file-report";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  std::ofstream(other + "/history.jsonl") << ReadAll(run + "/history.jsonl");
  std::ofstream(other + "/report") << "a file where the report directory goes\n";
  inv = RunLocklab({"report", other}, dir_);
  EXPECT_EQ(inv.exit_code, 65) << inv.output;
  EXPECT_EQ(Lines(inv.output), std::vector<std::string>{"report: " + other +
                                                        "/report: cannot create (File exists)"});
}

// A run killed by SIGKILL (no results.json, a torn last line) and one interrupted by SIGINT
// (results.json "interrupted") both get a report from their history, with no other line.
TEST_F(ReportJudgesTest, KilledAndInterruptedRunsStillGetTheirReport) {
  for (int sig : {SIGKILL, SIGINT}) {
    std::string out = dir_ + "/runs-" + std::to_string(sig);
    std::string log = dir_ + "/run-" + std::to_string(sig) + ".log";
    pid_t pid = StartLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "none", "--duration",
                              "20s", "--no-report", "--out", out},
                             log);
    ASSERT_GT(pid, 0);
    bool started = false;
    for (Nanos end = MonotonicNow() + Millis(15000); !started && MonotonicNow() < end;
         SleepFor(Millis(50))) {
      started = ReadAll(out + "/latest/history.jsonl").find("\"f\":\"acquire\"") != std::string::npos;
    }
    SleepFor(Millis(500));
    kill(pid, sig);
    Invocation ran = FinishLocklab(pid, log, Millis(10000));
    ASSERT_TRUE(started) << ran.output;
    char buf[4096];
    ssize_t n = readlink((out + "/latest").c_str(), buf, sizeof(buf) - 1);
    ASSERT_GT(n, 0);
    std::string run = out + "/" + std::string(buf, static_cast<size_t>(n));
    if (sig == SIGKILL) {
      std::ofstream(run + "/history.jsonl", std::ios::app) << "{\"index\":99999,\"time_ns\":12";
      EXPECT_FALSE(PathExists(run + "/results.json"));
    } else {
      EXPECT_EQ(Results(run).value("interrupted", false), true);
    }
    Invocation inv = RunLocklab({"report", run}, dir_);
    EXPECT_EQ(inv.exit_code, 0) << inv.output;
    EXPECT_EQ(Lines(inv.output).size(), 1u) << inv.output;
    EXPECT_NE(inv.output.find("report: " + run + "/report/index.html"), std::string::npos)
        << inv.output;
    std::string html = ReadAll(run + "/report/index.html");
    EXPECT_NE(Headline(html).find("badge unknown"), std::string::npos) << Headline(html);
  }
}

}  // namespace
}  // namespace locklab::testing
