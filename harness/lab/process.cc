#include "harness/lab/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/numbers.h"

namespace locklab::harness {

Status Spawn(const SpawnOptions& o, pid_t* pid) {
  SubprocessOptions so;
  so.argv = o.argv;
  so.env = o.env;
  so.unset_env = o.unset_env;
  so.cwd = o.cwd;
  so.stdin_stream = o.stdin_fd >= 0 ? StdStream::Fd(o.stdin_fd) : StdStream::DevNull();
  so.stdout_stream = o.stdout_fd >= 0 ? StdStream::Fd(o.stdout_fd) : StdStream::LogFile();
  so.stderr_stream = StdStream::LogFile();
  so.log_path = o.log_path;
  so.own_process_group = true;
  so.death_signal = o.detached ? 0 : SIGKILL;
  so.run_as_user = o.run_as_user;
  Subprocess child;
  Status s = Subprocess::Spawn(so, &child);
  if (s.ok()) *pid = child.Release();  // the caller kills and reaps it by pid
  return s;
}

namespace {
// The state letter and parent of a process from /proc/PID/stat; false when it is gone.
bool ReadStat(pid_t pid, char* state, long* ppid) {
  std::string stat = ReadProcFile(pid, "stat");
  // pid (comm) state ppid ...: comm may hold spaces and parentheses, so parse after the last ')'.
  size_t close = stat.rfind(')');
  return close != std::string::npos &&
         sscanf(stat.c_str() + close + 1, " %c %ld", state, ppid) == 2;
}
}  // namespace

bool WaitUntilStopped(pid_t pid, Millis timeout) {
  const Nanos deadline = MonotonicNow() + timeout;
  for (;;) {
    char state = 0;
    long ppid = 0;
    if (!ReadStat(pid, &state, &ppid)) return false;  // gone
    if (state == 'T' || state == 't') return true;
    if (MonotonicNow() >= deadline) return false;
    SleepFor(std::chrono::microseconds(200));
  }
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  int st;
  pid_t r = waitpid(pid, &st, WNOHANG);
  if (r == pid) return false;
  if (r < 0 && errno != ECHILD) return false;
  return kill(pid, 0) == 0;
}

std::string PeekChildState(pid_t pid, Millis wait) {
  if (pid <= 0) return "exited";
  const Nanos deadline = MonotonicNow() + wait;
  for (;;) {
    siginfo_t info{};
    int r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r < 0) return errno == ECHILD ? "exited" : "";
    if (info.si_pid == pid) {
      if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
      return "killed by signal " + std::to_string(info.si_status);
    }
    char state = 0;
    long ppid = 0;
    if (!ReadStat(pid, &state, &ppid)) return "exited";
    if (state == 'T') return "stopped";
    if (MonotonicNow() >= deadline) return "";
    SleepFor(Millis(2));
  }
}

char ProcessState(pid_t pid) {
  char state = 0;
  long ppid = 0;
  return pid > 0 && ReadStat(pid, &state, &ppid) ? state : 0;
}

bool ProcessGone(pid_t pid) {
  char state = 0;
  long ppid = 0;
  return !ReadStat(pid, &state, &ppid) || state == 'Z';
}

std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    std::optional<int64_t> child = ParseInt(name, 1, INT32_MAX);  // other entries: not a pid
    if (!child) continue;
    char state = 0;
    long ppid = 0;
    if (!ReadStat(static_cast<pid_t>(*child), &state, &ppid)) continue;  // gone since
    if (ppid == pid && state != 'Z') out.push_back(static_cast<pid_t>(*child));
  }
  return out;
}

Status FreeLoopbackPort(int* port) {
  PortHold hold;
  Status s = PortHold::Pick(&hold);
  if (s.ok()) *port = hold.port();
  return s;  // the hold ends here: the port is free again
}

PortHold& PortHold::operator=(PortHold&& o) noexcept {
  if (this != &o) {
    Release();
    fd_ = o.fd_;
    port_ = o.port_;
    o.fd_ = -1;
  }
  return *this;
}

void PortHold::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status PortHold::Hold(int port, PortHold* out) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Infrastructure(std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Status s = Status::Infrastructure("hold port " + std::to_string(port) + ": bind: " +
                                      strerror(errno));
    close(fd);
    return s;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  PortHold h;
  h.fd_ = fd;
  h.port_ = ntohs(addr.sin_port);
  *out = std::move(h);
  return Status::Ok();
}

Status PortHold::Pick(PortHold* out) { return Hold(0, out); }

std::vector<uint64_t> ListeningSocketInodes(int port) {
  std::vector<uint64_t> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    FILE* f = fopen(table, "re");
    if (!f) continue;
    char line[512];
    // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout
    // inode ...": local_address is ADDRESS:PORT in hex, st 0A is LISTEN.
    if (!fgets(line, sizeof(line), f)) line[0] = 0;  // the header
    while (fgets(line, sizeof(line), f)) {
      char local[64], state[8];
      unsigned long long inode = 0;
      if (sscanf(line, " %*s %63s %*s %7s %*s %*s %*s %*s %*s %llu", local, state, &inode) != 3)
        continue;
      const char* colon = strrchr(local, ':');
      if (!colon || strcmp(state, "0A") != 0) continue;
      if (strtol(colon + 1, nullptr, 16) == port && inode != 0) out.push_back(inode);
    }
    fclose(f);
  }
  return out;
}

bool HoldsSocket(pid_t pid, const std::vector<uint64_t>& inodes) {
  if (pid <= 0 || inodes.empty()) return false;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    char target[64];
    ssize_t n = readlink(e.path().c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;  // closed since the listing
    target[n] = 0;
    unsigned long long inode = 0;
    if (sscanf(target, "socket:[%llu]", &inode) != 1) continue;
    for (uint64_t i : inodes) {
      if (i == inode) return true;
    }
  }
  return false;
}

std::vector<pid_t> SocketHolders(const std::vector<uint64_t>& inodes) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::optional<int64_t> pid = ParseInt(e.path().filename().string(), 1, INT32_MAX);
    if (pid && HoldsSocket(static_cast<pid_t>(*pid), inodes)) {
      out.push_back(static_cast<pid_t>(*pid));
    }
  }
  return out;
}

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "locklab";
  buf[n] = 0;
  return buf;
}

}  // namespace locklab::harness
