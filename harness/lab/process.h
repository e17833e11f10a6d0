// Child processes of the harness: spawned in their own process group, killed with it; and
// what the harness reads about processes from /proc.
//
// Spawn is a thin layer over base/subprocess.h with the harness's defaults: every child is
// started with PR_SET_PDEATHSIG(SIGKILL), so it dies when the harness dies (even by
// SIGKILL), and in a process group of its own, so that a terminal's Ctrl-C reaches only the
// harness, which then stops everything in order. `detached` children (the nodes of
// `locklab cluster up`) skip the death signal and outlive the command.
// Spawn from the harness's main thread only: the death signal follows the thread that forked.
// The other functions are thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/process_tree.h"
#include "base/status.h"
#include "base/subprocess.h"

namespace locklab::harness {

struct SpawnOptions {
  std::vector<std::string> argv;            // argv[0] is the program path
  std::map<std::string, std::string> env;   // added to (or replacing in) the harness's env
  std::vector<std::string> unset_env;       // removed from the child's env
  std::string cwd;                          // empty: inherit
  // The caller's fds (close-on-exec; the caller closes its copies after Spawn).
  int stdin_fd = -1;                        // -1: /dev/null
  int stdout_fd = -1;                       // -1: the log file (or /dev/null)
  std::string log_path;                     // stdout (when stdout_fd < 0) and stderr
  bool detached = false;
  // Run the child as this user (and its primary group, no supplementary groups) instead of
  // the harness's own: servers that refuse root (postgres). "" = as the harness. Resolved
  // before fork; an unknown user is an error from Spawn.
  std::string run_as_user;
};

// Returns the child's pid (also its process group id) or an error.
Status Spawn(const SpawnOptions& options, pid_t* pid);

// SIGKILL to the child's process group, then reaps it; waiting for a child's exit.
using locklab::KillAndReap;
using locklab::WaitExit;
// True while the process exists (and is not a zombie of ours).
bool ProcessAlive(pid_t pid);
// Waits up to `timeout` until the process is in the stopped state ('T' in /proc/PID/stat).
// A process that stops itself (raise(SIGSTOP)) right after telling us so may not have
// stopped yet when we read its message, and a SIGCONT sent before the stop is lost: the
// process then stays stopped. Call this before resuming a self-stopped process.
bool WaitUntilStopped(pid_t pid, Millis timeout);

// The contents of /proc/PID/NAME (base/process_tree.h).
using locklab::ReadProcFile;

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), 0 when the process is gone.
char ProcessState(pid_t pid);

// True when `pid` runs no more: no such process, or a zombie (for processes that are not our
// children, which ProcessAlive cannot reap: they linger as zombies until init reaps them).
bool ProcessGone(pid_t pid);

// What became of a child of ours, without reaping it (waitid with WNOWAIT, so the caller that
// reaps it later still can): "killed by signal 9", "exited with status 1", "exited" (gone,
// already reaped), "stopped" (in the stopped state now), or "" while it runs. `wait` is how
// long to give a child whose streams closed to become a zombie.
std::string PeekChildState(pid_t pid, Millis wait = Millis(0));

// The live processes whose parent is `pid` (from /proc; a child forked after the scan is
// missed, so stop the parent first when that matters).
std::vector<pid_t> ChildrenOf(pid_t pid);

// A loopback TCP port that was free a moment ago.
Status FreeLoopbackPort(int* port);

// A loopback TCP port held for a server of ours: a socket bound to 127.0.0.1:PORT with
// SO_REUSEADDR that never listens. While it is held the kernel gives the port to no other
// bind(0) and to no outgoing connection's source port, so a port picked for a server, or
// left by a server a fault killed, is still free when the server binds it; and a server that
// sets SO_REUSEADDR (Redis, the JVM's, Go's, MariaDB's and Postgres's listeners all do) can
// bind and listen on it all the same. A connection to a held port with no server is refused,
// as to a free one. Move-only; the port is let go on destruction or Release().
class PortHold {
 public:
  PortHold() = default;
  ~PortHold() { Release(); }
  PortHold(PortHold&& o) noexcept : fd_(o.fd_), port_(o.port_) { o.fd_ = -1; }
  PortHold& operator=(PortHold&& o) noexcept;
  PortHold(const PortHold&) = delete;
  PortHold& operator=(const PortHold&) = delete;

  // Holds a port the kernel picks among the free ones.
  static Status Pick(PortHold* out);
  // Holds `port`; fails when a socket that SO_REUSEADDR cannot share (a listener, or one
  // bound without it) has it.
  static Status Hold(int port, PortHold* out);

  int port() const { return port_; }
  bool held() const { return fd_ >= 0; }
  void Release();

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The inodes of this network namespace's listening TCP sockets on `port`, IPv4 and IPv6, any
// local address (from /proc/net/tcp and /proc/net/tcp6); empty when none is listed.
std::vector<uint64_t> ListeningSocketInodes(int port);

// True when `pid` holds one of the sockets `inodes` (its /proc/PID/fd links "socket:[N]").
bool HoldsSocket(pid_t pid, const std::vector<uint64_t>& inodes);

// Every live process holding one of the sockets `inodes` (reads all of /proc: slower than
// HoldsSocket, for naming a stranger in an error).
std::vector<pid_t> SocketHolders(const std::vector<uint64_t>& inodes);

// The harness binary itself (for spawning `locklab client`).
std::string SelfExe();

}  // namespace locklab::harness
