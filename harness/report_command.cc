#include "harness/report_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "base/argv.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {

int RunReportScript(const std::vector<std::string>& args) {
  const char* env = getenv("LOCKLAB_PYTHON");
  std::string python = env ? env : "/usr/bin/python3";  // Debian's, which has matplotlib
  std::vector<std::string> argv = {python, "-m", "reports"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // The package is found through PYTHONPATH (the source directory first), not by changing
  // the working directory: RUN_DIR may be relative to the caller's. PYTHONSAFEPATH keeps that
  // working directory off sys.path, so a `reports` there cannot stand in for the lab's.
  // Built before fork: the child only execs.
  const char* old_path = getenv("PYTHONPATH");
  std::vector<std::string> child_env = {
      std::string("PYTHONPATH=") + LOCKLAB_SOURCE_DIR +
          (old_path && *old_path ? std::string(":") + old_path : ""),
      "PYTHONSAFEPATH=1"};
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("PYTHONPATH=", 0) != 0 && kv.rfind("PYTHONSAFEPATH=", 0) != 0) {
      child_env.emplace_back(kv);
    }
  }
  std::vector<char*> cenv;
  for (auto& e : child_env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  // What the command printed so far goes out first: with stdout a file or a pipe, a buffered
  // table would otherwise land after (or, split at a buffer boundary, around) the report
  // script's own lines.
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 70;
  if (pid == 0) {
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return 70;
  return WEXITSTATUS(status) == 127 ? 70 : WEXITSTATUS(status);
}

int RunReportCommand(const std::vector<std::string>& args) {
  // One RUN_DIR or one --matrix MATRIX_DIR, handed to the script as "--matrix DIR".
  std::vector<std::string> script_args;
  ArgvReader r("report", args);
  while (r.Next()) {
    std::string dir;
    bool one = script_args.empty();
    if (one && !r.AtFlag()) {
      script_args = {r.word()};
    } else if (one && r.Is("--matrix") && r.Value(&dir).ok()) {
      script_args = {"--matrix", dir};
    } else {
      script_args.clear();
      break;
    }
  }
  if (script_args.empty()) {
    std::cerr << "locklab report: usage: locklab report RUN_DIR | --matrix MATRIX_DIR\n";
    return 64;
  }
  return RunReportScript(script_args);
}

}  // namespace locklab::harness
