// Process trees: finding and killing every descendant of a process, including those that
// left its process group (setsid) or ignore SIGTERM, and the orphans a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER) adopts when their parents die. Used by the client process
// for its lock driver's tree (locks/driver_lock.h) and by the hello probe.
//
// How a tree dies: the tree is read from /proc (parent links) and every member is stopped
// (SIGSTOP, which cannot be caught or ignored: a stopped process forks no more), then read
// again, until a reading finds no new member; then every member gets SIGKILL. A process
// forked between a reading and its parent's stop is found by the next reading. What was
// killed is reaped by its parent, by init, or, for a subreaper, by KillChildrenExcept.
//
// Only pids that a reading of /proc showed as descendants a moment before are signalled; a
// stopped parent reaps no child, so its children's pids cannot be reused meanwhile.
// Thread safety: thread-safe (the kernel is the only shared state); the functions that reap
// (KillChildrenExcept) must not race another thread's waitpid(-1).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/clock.h"

namespace locklab {

// The contents of /proc/PID/NAME ("stat", "cmdline", "environ"), or "" when the process is
// gone. Plain read(2): a process that exits between the open and the read makes read fail
// with ESRCH, and std::ifstream read through istreambuf_iterator then throws
// std::ios_base::failure (which once killed a harness with `terminate called`).
std::string ReadProcFile(pid_t pid, const char* name);

// The live (not zombie) descendants of `root`, from one reading of /proc; root excluded.
std::vector<pid_t> DescendantsOf(pid_t root);

// Stops, then SIGKILLs `root` (when `include_root`) and all its descendants, as above, for
// at most `budget`. Reaps nothing. Returns how many processes were killed.
int KillTree(pid_t root, bool include_root, Millis budget = Millis(2000));
// The same, returning the pids it killed.
std::vector<pid_t> KillTreePids(pid_t root, bool include_root, Millis budget = Millis(2000));

// True when this process is a child subreaper (PR_SET_CHILD_SUBREAPER).
bool IsChildSubreaper();

// Kills (KillTree) and reaps every child of this process but `keep` (-1: none kept), again
// and again while new ones appear (a killed process's orphans are reparented here when this
// process is a subreaper), for at most `budget`. Returns how many processes were killed.
// For a process whose only own child is `keep`: every other child is an orphan it adopted.
int KillChildrenExcept(pid_t keep, Millis budget = Millis(2000));

// Kills (KillTree) every process but this one whose environment holds the entry `entry`
// ("NAME=VALUE"), with its descendants: what a program started with that entry left
// behind, wherever it was reparented. Those that are, or become, this process's children
// (it is a subreaper) are reaped (200 ms at most each). Returns how many were killed.
int KillProcessesWithEnv(const std::string& entry, Millis budget = Millis(2000));

}  // namespace locklab
