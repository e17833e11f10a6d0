// Runs the real `locklab` binary as a user would, for whole-stack tests.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/process.h"
#include "tests/lab_fixture.h"

namespace locklab::testing {

struct Invocation {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  pid_t pid = -1;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
  if (pid < 0) return Invocation{};
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

inline bool PidExists(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || stat.size() < close + 2 || stat[close + 2] != 'Z';
}

}  // namespace locklab::testing
