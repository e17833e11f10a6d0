// Subprocess: fork and exec one child program, and the operations on it afterwards (wait,
// kill its process group, reap). The one place in the lab that forks: the harness's servers
// and clients (harness/lab/process.h) and a client's lock driver (locks/driver_lock.h) use it.
//
// Contract. Spawn() prepares everything the child needs (argv and envp arrays, the user's
// uid and gid, the log file and the pipes) before fork(). Between fork() and execve() the
// child calls only async-signal-safe functions (setpgid, setgroups/setgid/setuid, prctl,
// getppid, sigprocmask, signal, dup2, close_range, chdir, execve, write, _exit): the parent
// may have other threads, and one of them may have held a lock (malloc's, stdio's) at the
// moment of the fork, which the child's copy of memory then holds forever. A child that
// fails before execve (chdir, credentials, exec itself) reports {step, errno} through a
// close-on-exec pipe, so Spawn() returns that error and leaves nothing running: a Spawn()
// that succeeded means the program was executed. The error wordings name the step:
// "exec PROGRAM: ...", "chdir DIR for PROGRAM: ...", "become user USER for PROGRAM: ...".
//
// The death signal (PR_SET_PDEATHSIG) is sent when the *thread* that forked ends, not the
// process: spawn children that must die with the parent from a thread that lives as long as
// the process (the main thread). Changing the uid clears the death signal, so the child sets
// it after the credentials, and then checks that its parent is still the one that forked it
// (a parent that died before prctl took effect would never send it).
//
// Thread safety: Spawn() and the free functions may be called from several threads at once;
// Spawn() reads `environ`, so nothing may setenv() meanwhile. A caller-given fd (StdStream::
// Fd) should be close-on-exec, or a child spawned at the same time by another thread inherits
// it too. A Subprocess handle is thread-compatible: one thread at a time.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace locklab {

// Where one of the child's standard streams (0, 1, 2) goes.
struct StdStream {
  enum class Kind {
    kDevNull,  // /dev/null
    kInherit,  // the parent's own stream, untouched
    kPipe,     // a pipe whose other end the Subprocess handle holds (stdin_pipe(), ...)
    kFd,       // `fd`, an fd of the caller's (which keeps and closes it)
    kLogFile,  // SubprocessOptions::log_path (stdout and stderr only); /dev/null when empty
  };
  Kind kind = Kind::kDevNull;
  int fd = -1;  // kFd only

  static StdStream DevNull() { return {Kind::kDevNull, -1}; }
  static StdStream Inherit() { return {Kind::kInherit, -1}; }
  static StdStream Pipe() { return {Kind::kPipe, -1}; }
  static StdStream Fd(int fd) { return {Kind::kFd, fd}; }
  static StdStream LogFile() { return {Kind::kLogFile, -1}; }
};

struct SubprocessOptions {
  std::vector<std::string> argv;           // argv[0] is the program's path (no PATH search)
  std::map<std::string, std::string> env;  // added to (or replacing in) the parent's env
  std::vector<std::string> unset_env;      // names removed from the child's env
  std::string cwd;                         // empty: the parent's
  StdStream stdin_stream = StdStream::DevNull();
  StdStream stdout_stream = StdStream::LogFile();
  StdStream stderr_stream = StdStream::LogFile();
  // Opened by the parent (O_APPEND, created 0644) before fork, so a child that runs as
  // another user can still write it.
  std::string log_path;
  // The child leads a process group of its own (setpgid in the child and in the parent, so
  // the group exists before Spawn returns): KillAndReap then reaches its descendants too,
  // and a terminal's Ctrl-C reaches only the parent. false: it stays in the parent's group,
  // and signals to that group (a pause, a crash fault) reach it with the parent.
  bool own_process_group = true;
  // Sent to the child when the parent (the forking thread) dies, even by SIGKILL, so no
  // orphan outlives it. 0: the child outlives the parent (`locklab cluster up`'s nodes).
  int death_signal = SIGKILL;
  // Close every fd above 2 at exec, also the parent's fds opened without O_CLOEXEC (a
  // library's sockets, a history stream): the child gets exactly its three streams.
  bool close_other_fds = false;
  // Run the child as this user (its uid and primary group, no supplementary groups) instead
  // of the parent's: servers that refuse root (postgres). "" = as the parent. Resolved
  // before fork; an unknown user is an error from Spawn.
  std::string run_as_user;
};

// A spawned child: its pid until it is reaped, and the parent's ends of its pipes
// (close-on-exec and non-blocking: callers poll them). Move-only.
class Subprocess {
 public:
  // Forks and execs options.argv; on error nothing runs and *child is left as it was.
  static Status Spawn(const SubprocessOptions& options, Subprocess* child);

  Subprocess() = default;
  ~Subprocess() { Reset(); }
  Subprocess(Subprocess&& other) noexcept { *this = std::move(other); }
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // The child's pid (also its process group id with own_process_group); -1 when there is no
  // child: never spawned, reaped, or released.
  pid_t pid() const { return pid_; }
  // The parent's end of a StdStream::Pipe() stream (write end for stdin, read end for the
  // others); -1 when that stream is not a pipe or was closed.
  int stdin_pipe() const { return pipes_[0]; }
  int stdout_pipe() const { return pipes_[1]; }
  int stderr_pipe() const { return pipes_[2]; }
  // Closes the stdin pipe: the child reads EOF.
  void CloseStdin();

  // Waits up to `timeout` for the child to exit; true when it exited and was reaped (then
  // pid() is -1 and *status, when given, is its wait status).
  bool WaitExit(Millis timeout, int* status = nullptr);
  // SIGKILL to the child (and to its process group when it leads one), then reaps it.
  void KillAndReap();
  // Forgets the child without killing it: the caller now owns the pid (and must reap it).
  pid_t Release();
  // KillAndReap() when there is a child, and closes the pipes.
  void Reset();

 private:
  pid_t pid_ = -1;
  bool own_process_group_ = true;
  int pipes_[3] = {-1, -1, -1};
};

// The same operations for a bare pid, for callers that keep their children's pids in tables
// (the harness). The child must be ours (waitpid).
//
// SIGKILL to the process group `pid` leads and to `pid`, then reaps it. Safe to call twice.
void KillAndReap(pid_t pid);
// Waits up to `timeout` for the child to exit; true when it exited (and was reaped, or was
// no child of ours).
bool WaitExit(pid_t pid, Millis timeout, int* status = nullptr);
// A wait status in words: "exited with status 3", "was killed by signal Killed".
std::string DescribeWaitStatus(int status);

}  // namespace locklab
