#include "harness/trial/report_script.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>

#include "base/argv.h"
#include "base/exit_code.h"
#include "base/subprocess.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

constexpr const char* kDefaultPython = "/usr/bin/python3";  // Debian's, which has matplotlib
constexpr int kExitInterrupted = 130;                       // the package's KeyboardInterrupt
constexpr size_t kStderrKept = 64 * 1024;                   // bytes of the child's stderr kept

// "LOCKLAB_PYTHON=PATH" when the user chose it, else the default's path: what the one line
// of a failure names.
std::string PythonName(const std::string& python, bool from_env) {
  return from_env ? "LOCKLAB_PYTHON=" + python : python;
}

int NotAPython(const std::string& name, const std::string& why) {
  std::cerr << "report: " << name << ": not a Python with matplotlib (" << why << ")\n";
  return kExitInfrastructure;
}

// Why `path` cannot be the interpreter, or "" when it may be (exec has the last word).
std::string UnusableInterpreter(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno == ENOENT ? "no such file" : strerror(errno);
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (access(path.c_str(), X_OK) != 0) return "not executable";
  return "";
}

// This executable, for the package to judge histories with: the same judge as the command
// that asked for the report. /proc/PID/exe while a rebuild has replaced the file.
std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string path = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  const std::string deleted = " (deleted)";
  if (path.empty() || (path.size() > deleted.size() &&
                       path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)) {
    return "/proc/" + std::to_string(getpid()) + "/exe";
  }
  return path;
}

// The child's stderr until it exits (the tail of it past kStderrKept), and its wait status.
// Polls rather than reading to EOF: a grandchild that kept the pipe open never blocks us.
int CollectUntilExit(Subprocess* child, std::string* err) {
  int fd = child->stderr_pipe();
  char buf[4096];
  auto drain = [&] {
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
      err->append(buf, static_cast<size_t>(n));
      if (err->size() > 2 * kStderrKept) err->erase(0, err->size() - kStderrKept);
    }
  };
  int status = 0;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 100);  // EINTR (a SIGINT the package also gets) just loops
    drain();
    if (child->WaitExit(Millis(0), &status)) break;
  }
  drain();
  return status;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  size_t newline = text.rfind('\n', end);
  size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

bool IsPackageExit(int code) {
  return code == kExitOk || code == kExitUsage || code == kExitBadInput ||
         code == kExitInfrastructure || code == kExitIo || code == kExitInterrupted;
}

}  // namespace

int RunReportScript(const std::vector<std::string>& args) {
  const char* env = getenv("LOCKLAB_PYTHON");
  const bool from_env = env != nullptr && *env != '\0';
  const std::string python = from_env ? env : kDefaultPython;
  const std::string name = PythonName(python, from_env);
  std::string unusable = UnusableInterpreter(python);
  if (!unusable.empty()) return NotAPython(name, unusable);

  SubprocessOptions o;
  o.argv = {python, "-m", "reports"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  // The package is found through PYTHONPATH (the source directory first), not by changing
  // the working directory: RUN_DIR may be relative to the caller's. PYTHONSAFEPATH keeps that
  // working directory off sys.path, so a `reports` there cannot stand in for the lab's.
  const char* old_path = getenv("PYTHONPATH");
  o.env["PYTHONPATH"] = std::string(LOCKLAB_SOURCE_DIR) +
                        (old_path && *old_path ? std::string(":") + old_path : "");
  o.env["PYTHONSAFEPATH"] = "1";
  o.env["LOCKLAB_BINARY"] = SelfExecutable();
  o.stdin_stream = StdStream::DevNull();
  o.stdout_stream = StdStream::Inherit();
  o.stderr_stream = StdStream::Pipe();  // forwarded whole, or replaced by one line (below)
  // In the caller's group: a terminal's Ctrl-C reaches the report as it reaches the command.
  o.own_process_group = false;
  // What the command printed so far goes out first: with stdout a file or a pipe, a buffered
  // table would otherwise land after (or, split at a buffer boundary, around) the report
  // script's own lines.
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  Subprocess child;
  Status spawned = Subprocess::Spawn(o, &child);
  if (!spawned.ok()) return NotAPython(name, spawned.message());
  std::string err;
  int status = CollectUntilExit(&child, &err);
  if (WIFEXITED(status) && IsPackageExit(WEXITSTATUS(status))) {
    std::cerr << err << std::flush;  // the package's own lines (one on failure)
    return WEXITSTATUS(status);
  }
  // Not the package's answer: /bin/false, another program, a Python that could not even
  // start it, a crash. One line, with the last thing it said.
  std::string said = LastLine(err);
  return NotAPython(name, "it " + DescribeWaitStatus(status) +
                              (said.empty() ? " without a report" : ": " + said));
}

int WithReportExit(int command_exit, int report_exit) {
  if (report_exit == kExitOk || report_exit == kExitInterrupted) return command_exit;
  return WorseRunExit(command_exit, IsErrorExit(report_exit) ? report_exit : kExitInfrastructure);
}

}  // namespace locklab::harness
