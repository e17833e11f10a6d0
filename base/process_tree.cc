#include "base/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <set>

namespace locklab {
std::string ReadProcFile(pid_t pid, const char* name) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/%s", static_cast<int>(pid), name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) out.clear();  // ESRCH: it exited since the open
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

namespace {

// Every process's parent, from one reading of /proc; zombies only when asked for.
std::map<pid_t, pid_t> ParentsOf(bool with_zombies) {
  std::map<pid_t, pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string stat = ReadProcFile(static_cast<pid_t>(pid), "stat");
    size_t close_paren = stat.rfind(')');  // the command may hold ')' and spaces
    if (close_paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
    if (!with_zombies && (state == 'Z' || state == 'X')) continue;
    out[static_cast<pid_t>(pid)] = ppid;
  }
  closedir(d);
  return out;
}

std::vector<pid_t> Descendants(const std::map<pid_t, pid_t>& parents, pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& [pid, ppid] : parents) children[ppid].push_back(pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto it = children.find(p);
    if (it == children.end()) continue;
    for (pid_t c : it->second) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

std::map<pid_t, pid_t> ParentsOfLiveProcesses() { return ParentsOf(false); }

Millis Left(Nanos end) {
  Nanos left = end - MonotonicNow();
  return left > Nanos(0) ? std::chrono::duration_cast<Millis>(left) : Millis(0);
}

// Reaps the child `pid` once it has died (it was sent SIGKILL), polling until `end`.
// `only_if_ours`: `pid` may be no child of this process (ECHILD), or become one only once
// its parent's death reparents it here (a subreaper): poll until it is reaped or gone.
void ReapKilledChild(pid_t pid, Nanos end, bool only_if_ours = false) {
  for (;;) {
    pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid) return;
    if (r < 0 && errno != EINTR) {
      if (!only_if_ours) return;
      const std::string stat = ReadProcFile(pid, "stat");
      const size_t close_paren = stat.rfind(')');
      if (close_paren == std::string::npos) return;  // gone
      char state = 0;
      int ppid = 0;
      if (sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) return;
      if (state == 'Z' && ppid != getpid()) return;  // dead, another parent's to reap
    }
    if (MonotonicNow() >= end) return;
    SleepFor(Millis(2));
  }
}

}  // namespace

std::vector<pid_t> DescendantsOf(pid_t root) {
  return Descendants(ParentsOfLiveProcesses(), root);
}

int KillTree(pid_t root, bool include_root, Millis budget) {
  return static_cast<int>(KillTreePids(root, include_root, budget).size());
}

std::vector<pid_t> KillTreePids(pid_t root, bool include_root, Millis budget) {
  if (root <= 0) return {};
  const Nanos end = MonotonicNow() + budget;
  std::set<pid_t> stopped;
  if (include_root && kill(root, SIGSTOP) == 0) stopped.insert(root);
  // Stop rounds: each reading finds the children forked before their parent stopped.
  for (;;) {
    bool found_new = false;
    for (pid_t p : DescendantsOf(root)) {
      if (stopped.insert(p).second) {
        kill(p, SIGSTOP);
        found_new = true;
      }
    }
    if (!found_new || MonotonicNow() >= end) break;
  }
  for (pid_t p : stopped) {
    kill(p, SIGKILL);
    kill(p, SIGCONT);  // a stopped process dies of SIGKILL anyway; harmless if gone
  }
  return std::vector<pid_t>(stopped.begin(), stopped.end());
}

bool IsChildSubreaper() {
  int on = 0;
  return prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on != 0;
}

int KillChildrenExcept(pid_t keep, Millis budget) {
  const Nanos end = MonotonicNow() + budget;
  const pid_t self = getpid();
  int killed = 0;
  for (;;) {
    // Zombies too: an adopted orphan that died is reaped here (nobody else will).
    const std::map<pid_t, pid_t> all = ParentsOf(true);
    const std::map<pid_t, pid_t> live = ParentsOfLiveProcesses();
    std::vector<pid_t> mine;
    for (const auto& [pid, ppid] : all) {
      if (ppid == self && pid != keep) mine.push_back(pid);
    }
    if (mine.empty()) break;
    for (pid_t p : mine) {
      if (live.count(p)) killed += KillTree(p, true, Left(end));
    }
    for (pid_t p : mine) ReapKilledChild(p, end);
    if (MonotonicNow() >= end) break;
  }
  return killed;
}

int KillProcessesWithEnv(const std::string& entry, Millis budget) {
  const Nanos end = MonotonicNow() + budget;
  const pid_t self = getpid();
  int killed = 0;
  for (const auto& [pid, ppid] : ParentsOfLiveProcesses()) {
    (void)ppid;
    if (pid == self) continue;
    std::string env = ReadProcFile(pid, "environ");  // NUL-separated NAME=VALUE entries
    size_t at = 0;
    bool has = false;
    while (!has && at < env.size()) {
      size_t nul = env.find('\0', at);
      if (nul == std::string::npos) nul = env.size();
      has = env.compare(at, nul - at, entry) == 0;
      at = nul + 1;
    }
    if (!has) continue;
    for (pid_t k : KillTreePids(pid, true, Left(end))) {
      ++killed;
      // One that is (or, its parent killed, became) this process's child is reaped here.
      ReapKilledChild(k, std::min(end, MonotonicNow() + Millis(200)), /*only_if_ours=*/true);
    }
  }
  return killed;
}

}  // namespace locklab
