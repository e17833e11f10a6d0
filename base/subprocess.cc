#include "base/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char** environ;

namespace locklab {
namespace {

// What a child reports through its error pipe when it fails before execve.
enum : int { kStepChdir = 1, kStepCredentials = 2, kStepExec = 3 };

// An fd closed when it goes out of scope, unless released: Spawn's error paths.
class ScopedFd {
 public:
  ScopedFd() = default;
  ~ScopedFd() { Close(); }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int* out() { return &fd_; }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A pipe, both ends close-on-exec (the child's end becomes 0, 1 or 2 by dup2, which clears
// the flag on the copy).
struct ScopedPipe {
  ScopedFd read, write;
  Status Open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
    }
    *read.out() = fds[0];
    *write.out() = fds[1];
    return Status::Ok();
  }
};

// The child's environment: the parent's, minus what is unset or replaced, plus `env`.
std::vector<std::string> ChildEnv(const SubprocessOptions& o) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    std::string k = kv.substr(0, kv.find('='));
    if (o.env.count(k)) continue;
    bool drop = false;
    for (const auto& u : o.unset_env) drop = drop || u == k;
    if (!drop) out.push_back(kv);
  }
  for (const auto& [k, v] : o.env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child: report the failed step and its errno, then end.
[[noreturn]] void ChildFail(int error_pipe, int step) {
  int e[2] = {step, errno};
  (void)!write(error_pipe, e, sizeof(e));
  _exit(127);
}

void Reap(pid_t pid) {
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Status Subprocess::Spawn(const SubprocessOptions& o, Subprocess* child) {
  if (o.argv.empty()) return Status::Infrastructure("spawn: empty argv");
  if (o.stdin_stream.kind == StdStream::Kind::kLogFile) {
    return Status::Infrastructure("spawn " + o.argv[0] + ": stdin cannot be the log file");
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<std::string> env_strings = ChildEnv(o);
  std::vector<std::string> args = o.argv;
  std::vector<char*> envp = Pointers(env_strings);
  std::vector<char*> argv = Pointers(args);

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

  const StdStream* streams[3] = {&o.stdin_stream, &o.stdout_stream, &o.stderr_stream};
  ScopedFd log_file, dev_null;
  ScopedPipe pipes[3];
  int child_fds[3] = {-1, -1, -1};  // what becomes fd 0, 1, 2 in the child; -1: inherited
  for (int i = 0; i < 3; ++i) {
    StdStream::Kind kind = streams[i]->kind;
    if (kind == StdStream::Kind::kLogFile && !o.log_path.empty()) {
      if (log_file.get() < 0) {
        *log_file.out() = open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_file.get() < 0) {
          return Status::Infrastructure("open " + o.log_path + ": " + strerror(errno));
        }
      }
      child_fds[i] = log_file.get();
    } else if (kind == StdStream::Kind::kDevNull || kind == StdStream::Kind::kLogFile) {
      if (dev_null.get() < 0) *dev_null.out() = open("/dev/null", O_RDWR | O_CLOEXEC);
      child_fds[i] = dev_null.get();
    } else if (kind == StdStream::Kind::kPipe) {
      Status s = pipes[i].Open();
      if (!s.ok()) return s;
      child_fds[i] = i == 0 ? pipes[i].read.get() : pipes[i].write.get();
    } else if (kind == StdStream::Kind::kFd) {
      child_fds[i] = streams[i]->fd;
    }
  }
  ScopedPipe error_pipe;
  Status s = error_pipe.Open();
  if (!s.ok()) return s;

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return Status::Infrastructure(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    const int report = error_pipe.write.get();
    if (o.own_process_group) setpgid(0, 0);
    // Credentials first: changing the uid clears the death signal, so it is set afterwards.
    if (!o.run_as_user.empty() &&
        (setgroups(0, nullptr) != 0 || setgid(run_gid) != 0 || setuid(run_uid) != 0)) {
      ChildFail(report, kStepCredentials);
    }
    if (o.death_signal != 0) {
      prctl(PR_SET_PDEATHSIG, o.death_signal);
      if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    }
    // Children start with default signal handling and an empty mask: the parent blocks or
    // handles some, and an ignored disposition (SIGPIPE in the lab's processes) survives exec.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    for (int i = 0; i < 3; ++i) {
      if (child_fds[i] >= 0) dup2(child_fds[i], i);
    }
    if (o.close_other_fds) syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) ChildFail(report, kStepChdir);
    execve(argv[0], argv.data(), envp.data());
    ChildFail(report, kStepExec);
  }
  // Also from the parent, so the group exists before anyone signals it.
  if (o.own_process_group) setpgid(pid, pid);
  error_pipe.write.Close();
  int child_error[2] = {0, 0};  // {step, errno}: what the child failed at before exec
  ssize_t n;
  while ((n = read(error_pipe.read.get(), child_error, sizeof(child_error))) < 0 &&
         errno == EINTR) {
  }
  if (n == sizeof(child_error)) {
    Reap(pid);
    const std::string what = child_error[0] == kStepChdir ? "chdir " + o.cwd + " for " + o.argv[0]
                             : child_error[0] == kStepCredentials
                                 ? "become user " + o.run_as_user + " for " + o.argv[0]
                                 : "exec " + o.argv[0];
    return Status::Infrastructure(what + ": " + strerror(child_error[1]));
  }
  Subprocess started;
  started.pid_ = pid;
  started.own_process_group_ = o.own_process_group;
  for (int i = 0; i < 3; ++i) {
    if (streams[i]->kind != StdStream::Kind::kPipe) continue;
    int fd = i == 0 ? pipes[i].write.Release() : pipes[i].read.Release();
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    started.pipes_[i] = fd;
  }
  *child = std::move(started);
  return Status::Ok();
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  pid_ = std::exchange(other.pid_, -1);
  own_process_group_ = other.own_process_group_;
  for (int i = 0; i < 3; ++i) pipes_[i] = std::exchange(other.pipes_[i], -1);
  return *this;
}

void Subprocess::CloseStdin() {
  if (pipes_[0] >= 0) close(pipes_[0]);
  pipes_[0] = -1;
}

bool Subprocess::WaitExit(Millis timeout, int* status) {
  if (pid_ <= 0) return true;
  if (!locklab::WaitExit(pid_, timeout, status)) return false;
  pid_ = -1;
  return true;
}

void Subprocess::KillAndReap() {
  if (pid_ <= 0) return;
  if (own_process_group_) {
    locklab::KillAndReap(pid_);
  } else {
    // Not a group leader: its pid names no group, or (recycled) someone else's.
    kill(pid_, SIGKILL);
    Reap(pid_);
  }
  pid_ = -1;
}

pid_t Subprocess::Release() { return std::exchange(pid_, -1); }

void Subprocess::Reset() {
  KillAndReap();
  for (int& fd : pipes_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  Reap(pid);
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

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  }
  return "ended";
}

}  // namespace locklab
