#include "harness/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <cstring>

extern char** environ;

namespace locklab::harness {

namespace {
// What a child reports through its error pipe when it fails before execve.
enum : int { kStepChdir = 1, kStepCredentials = 2, kStepExec = 3 };
}  // namespace

Status Spawn(const SpawnOptions& o, pid_t* pid_out) {
  if (o.argv.empty()) return Status::Infrastructure("spawn: empty argv");
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    std::string k = kv.substr(0, kv.find('='));
    if (o.env.count(k)) continue;
    bool drop = false;
    for (const auto& u : o.unset_env) drop = drop || u == k;
    if (!drop) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : o.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = o.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  uid_t run_uid = 0;
  gid_t run_gid = 0;
  if (!o.run_as_user.empty()) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(o.run_as_user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 ||
        found == nullptr) {
      return Status::Infrastructure("spawn " + o.argv[0] + ": no user '" + o.run_as_user + "'");
    }
    run_uid = pw.pw_uid;
    run_gid = pw.pw_gid;
  }

  int log_fd = -1;
  if (!o.log_path.empty()) {
    log_fd = open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return Status::Infrastructure("open " + o.log_path + ": " + strerror(errno));
  }
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t parent = getpid();
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    if (log_fd >= 0) close(log_fd);
    close(null_fd);
    return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    if (log_fd >= 0) close(log_fd);
    close(null_fd);
    close(err_pipe[0]);
    close(err_pipe[1]);
    return Status::Infrastructure(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    // Credentials first: changing the uid clears PDEATHSIG, so it is set afterwards.
    if (!o.run_as_user.empty() &&
        (setgroups(0, nullptr) != 0 || setgid(run_gid) != 0 || setuid(run_uid) != 0)) {
      int e[2] = {kStepCredentials, errno};
      (void)!write(err_pipe[1], e, sizeof(e));
      _exit(127);
    }
    if (!o.detached) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the harness died before prctl took effect
    }
    // Children start with default signal handling and an empty mask.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int in = o.stdin_fd >= 0 ? o.stdin_fd : null_fd;
    int out = o.stdout_fd >= 0 ? o.stdout_fd : (log_fd >= 0 ? log_fd : null_fd);
    int err = log_fd >= 0 ? log_fd : null_fd;
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) {
      int e[2] = {kStepChdir, errno};
      (void)!write(err_pipe[1], e, sizeof(e));
      _exit(127);
    }
    execve(argv[0], argv.data(), envp.data());
    int e[2] = {kStepExec, errno};
    (void)!write(err_pipe[1], e, sizeof(e));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before we signal it
  close(err_pipe[1]);
  int child_error[2] = {0, 0};  // {step, errno}: what the child failed at before exec
  ssize_t n = read(err_pipe[0], child_error, sizeof(child_error));
  close(err_pipe[0]);
  if (log_fd >= 0) close(log_fd);
  close(null_fd);
  if (n == sizeof(child_error)) {
    waitpid(pid, nullptr, 0);
    const std::string what = child_error[0] == kStepChdir ? "chdir " + o.cwd + " for " + o.argv[0]
                             : child_error[0] == kStepCredentials
                                 ? "become user " + o.run_as_user + " for " + o.argv[0]
                                 : "exec " + o.argv[0];
    return Status::Infrastructure(what + ": " + strerror(child_error[1]));
  }
  *pid_out = pid;
  return Status::Ok();
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool WaitExit(pid_t pid, Millis timeout, int* status) {
  Nanos end = MonotonicNow() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      if (status) *status = st;
      return true;
    }
    if (r < 0 && errno == ECHILD) return true;
    if (MonotonicNow() >= end) return false;
    SleepFor(Millis(5));
  }
}

std::string ReadProcFile(pid_t pid, const char* name) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (!ReadStat(static_cast<pid_t>(std::stol(name)), &state, &ppid)) continue;  // gone since
    if (ppid == pid && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

Status FreeLoopbackPort(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Infrastructure(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return Status::Infrastructure(std::string("bind: ") + strerror(errno));
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  close(fd);
  return Status::Ok();
}

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "locklab";
  buf[n] = 0;
  return buf;
}

}  // namespace locklab::harness
