// Runs the real `locklab` binary as a user would, for whole-stack tests.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/lab/process.h"
#include "tests/lab_fixture.h"
#include "tests/trial_retry.h"

namespace locklab::testing {

struct Invocation {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  pid_t pid = -1;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  try {
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    return "";  // a /proc file of a process that exited after the open (read fails ESRCH)
  }
}

// The non-empty lines of `text`.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

// Processes whose parent is this test and that still run (zombies are reaped here). A test
// that is the children's subreaper (PR_SET_CHILD_SUBREAPER) inherits whatever a locklab it
// ran left behind, so this lists the orphans too.
inline std::vector<pid_t> LiveChildren() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0) continue;
    std::string stat = ReadAll("/proc/" + std::string(e->d_name) + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid == getpid() && state != 'Z') out.push_back(pid);
  }
  if (d) closedir(d);
  return out;
}

// Starts `locklab ARGS` with its output in `log`; returns the pid.
inline pid_t StartLocklab(const std::vector<std::string>& args, const std::string& log) {
  harness::SpawnOptions o;
  o.argv = {LOCKLAB_BINARY};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.log_path = log;
  pid_t pid = -1;
  Status s = harness::Spawn(o, &pid);
  return s.ok() ? pid : -1;
}

inline Invocation FinishLocklab(pid_t pid, const std::string& log, Millis timeout) {
  Invocation inv;
  inv.pid = pid;
  int status = 0;
  if (!harness::WaitExit(pid, timeout, &status)) {
    harness::KillAndReap(pid);
    inv.exit_code = -2;  // hung
  } else {
    inv.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  inv.output = ReadAll(log);
  return inv;
}

inline Invocation RunLocklab(const std::vector<std::string>& args, const std::string& dir,
                             Millis timeout = Millis(60000)) {
  std::string log = dir + "/locklab-" + std::to_string(getpid()) + "-" +
                    std::to_string(MonotonicNow().count()) + ".out";
  pid_t pid = StartLocklab(args, log);
  if (pid < 0) {
    ADD_FAILURE() << "cannot start " << LOCKLAB_BINARY;  // e.g. relinked at this moment
    return Invocation{};
  }
  return FinishLocklab(pid, log, timeout);
}

inline nlohmann::json Results(const std::string& run_dir) {
  return nlohmann::json::parse(ReadAll(run_dir + "/results.json"), nullptr, false);
}

// The run directory printed by `locklab run` ("run: DIR").
inline std::string RunDirOf(const Invocation& inv) {
  std::smatch m;
  static const std::regex re("run: (\\S+)");
  return std::regex_search(inv.output, m, re) ? m[1].str() : std::string();
}

// The matrix directory a `locklab matrix` or `locklab merge` printed ("matrix: DIR/matrix.md").
inline std::string MatrixDirOf(const Invocation& inv) {
  std::smatch m;
  static const std::regex re("matrix: (\\S+)/matrix.md");
  return std::regex_search(inv.output, m, re) ? m[1].str() : std::string();
}

// Pids the harness logged for its nodes and clients ("... pid N").
inline std::vector<pid_t> LoggedPids(const std::string& run_dir) {
  std::vector<pid_t> out;
  std::string log = ReadAll(run_dir + "/lab.log");
  static const std::regex re(" pid (\\d+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(std::stoi((*it)[1].str()));
  }
  return out;
}

inline bool PidExists(pid_t pid) { return pid > 0 && !harness::ProcessGone(pid); }

// A short trial through the binary: TTL 500 ms, pauses of 1200 ms (> TTL) first at 500 ms
// then every 800 ms, hold 100 ms, 3 clients, seed 11, 5 s; `extra` flags are appended.
// Checks that the run left no process behind and returns its results.json.
// A private temp dir per test, kept when the test failed (to look at its runs).
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix = "locklab-chaos") : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = MakeTempDir(prefix_);
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    if (!HasFailure()) (void)!system(("rm -rf " + dir_).c_str());
  }
  std::string prefix_;
  std::string dir_;
};

class TrialTest : public TempDirTest {
 protected:
  nlohmann::json Trial(const std::string& lock, const std::string& fault,
                       std::vector<std::string> extra = {}, int* exit_code = nullptr) {
    std::vector<std::string> args = {"run", "--lock", lock, "--fault", fault,
                                     "--duration", "5s", "--ttl", "500", "--pause", "1200",
                                     "--first-at", "500", "--interval", "800",
                                     "--hold", "100", "--clients", "3", "--seed", "11",
                                     "--no-report", "--out", dir_};
    args.insert(args.end(), extra.begin(), extra.end());
    Invocation inv = RunLocklab(args, dir_);
    if (exit_code) *exit_code = inv.exit_code;
    run_dir_ = RunDirOf(inv);
    EXPECT_FALSE(run_dir_.empty()) << inv.output;
    EXPECT_LT(inv.exit_code, 64) << inv.output;
    for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
    return Results(run_dir_);
  }
  // Trial() again until a run's timing is trusted, then `checks` on that run's results.json
  // (History() and run_dir_ are that run's): the one way a test asserts a verdict that
  // depends on timing (tests/trial_retry.h; skipped when no run was trusted).
  void TrustedTrial(const std::string& lock, const std::string& fault,
                    const std::vector<std::string>& extra,
                    const std::function<void(const nlohmann::json&)>& checks,
                    int* exit_code = nullptr) {
    CheckWithTrustedTiming([&] { return FromResults(Trial(lock, fault, extra, exit_code)); },
                           checks);
  }
  // The last trial's history.jsonl, one event per line.
  std::vector<nlohmann::json> History() const {
    std::vector<nlohmann::json> out;
    std::istringstream in(ReadAll(run_dir_ + "/history.jsonl"));
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line, nullptr, false));
    return out;
  }
  std::string run_dir_;
};

}  // namespace locklab::testing
