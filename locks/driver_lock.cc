#include "locks/driver_lock.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "locks/knobs.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char** environ;

namespace locklab::locks {
namespace {

constexpr int kProtocolVersion = 1;

// Text for messages: at most `n` characters of a driver's line, control characters escaped.
std::string Excerpt(const std::string& s, size_t n = 120) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > n) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "ended";
}

int64_t MillisUntil(Nanos t) {
  Nanos left = t - MonotonicNow();
  if (left <= Nanos(0)) return 0;
  return std::chrono::ceil<Millis>(left).count();
}

}  // namespace

bool IsDriverId(const std::string& id) {
  return id.size() > sizeof(kDriverPrefix) - 1 && id.rfind(kDriverPrefix, 0) == 0;
}

const LockInfo& DriverLockInfo() {
  static const LockInfo kInfo = {
      "driver:PATH",
      "a lock implemented by an external program (any language) speaking the JSON Lines "
      "protocol of docs/driver-protocol.md on stdin/stdout; started by each client process in "
      "its process group (pauses and crashes hit it); arguments with --driver-arg",
      {{"answer_grace_ms", "250",
        "how long past a request's deadline the harness waits for a (late, hence unknown) "
        "answer before it kills the driver"},
       {"start_timeout_ms", "5000", "how long a started driver has to print its hello line"},
       {"release_timeout_ms", "0",
        "deadline of a release or renew; 0 = max(1000, 4 x command timeout)"},
       {"max_line_bytes", "65536", "longest answer line accepted; longer is a protocol error"}},
      1};
  return kInfo;
}

Status ParseDriverOptions(const LockConfig& config, DriverOptions* o) {
  if (!IsDriverId(config.algorithm)) {
    return Status::Usage("lock '" + config.algorithm + "': not a driver:PATH id");
  }
  o->path = config.algorithm.substr(sizeof(kDriverPrefix) - 1);
  o->args = config.driver_args;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("answer_grace_ms", Millis(0), Millis(600000), &o->answer_grace);
  k.Duration("start_timeout_ms", Millis(1), Millis(600000), &o->start_timeout);
  k.Duration("release_timeout_ms", Millis(0), Millis(600000), &o->release_timeout);
  k.Int("max_line_bytes", 64, 64 << 20, &o->max_line_bytes);
  if (!k.status().ok()) return k.status();
  if (o->release_timeout == Millis(0)) {
    o->release_timeout = std::max(Millis(1000), 4 * config.command_timeout);
  }
  return Status::Ok();
}

DriverLock::DriverLock(const LockConfig& config, DriverOptions options)
    : config_(config), o_(std::move(options)) {}

DriverLock::~DriverLock() {
  // A polite end first: stdin closes, a driver reads EOF and exits.
  if (to_driver_ >= 0) close(to_driver_);
  to_driver_ = -1;
  Nanos end = MonotonicNow() + Millis(500);
  while (pid_ > 0 && MonotonicNow() < end) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    SleepFor(Millis(5));
  }
  if (pid_ > 0) Kill("still running 500 ms after its stdin closed");
  if (from_driver_ >= 0) close(from_driver_);
  from_driver_ = -1;
}

void DriverLock::LogLine(const std::string& msg) const {
  std::cerr << "locklab client: driver " << o_.path << " (pid " << log_pid_ << "): " << msg << "\n"
            << std::flush;
}

void DriverLock::Kill(const std::string& why) {
  if (pid_ > 0) {
    LogLine(why + "; killed (SIGKILL)");
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  if (to_driver_ >= 0) close(to_driver_);
  if (from_driver_ >= 0) close(from_driver_);
  to_driver_ = from_driver_ = -1;
  buffer_.clear();
}

Status DriverLock::Spawn() {
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (strncmp(*e, "LOCKLAB_", 8) == 0 && strncmp(*e, "LOCKLAB_PROCESS=", 16) != 0) continue;
    env.emplace_back(*e);
  }
  std::string nodes;
  for (const auto& n : config_.nodes) nodes += (nodes.empty() ? "" : ",") + n.ToString();
  env.push_back("LOCKLAB_DRIVER_PROTOCOL=" + std::to_string(kProtocolVersion));
  env.push_back("LOCKLAB_NODES=" + nodes);
  env.push_back("LOCKLAB_TTL_MS=" + std::to_string(config_.ttl.count()));
  env.push_back("LOCKLAB_RETRY_DELAY_MS=" + std::to_string(config_.retry_delay.count()));
  env.push_back("LOCKLAB_CONNECT_TIMEOUT_MS=" + std::to_string(config_.connect_timeout.count()));
  env.push_back("LOCKLAB_COMMAND_TIMEOUT_MS=" + std::to_string(config_.command_timeout.count()));
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {o_.path};
  args.insert(args.end(), o_.args.begin(), o_.args.end());
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0)
    return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    return Status::Infrastructure(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    // Same process group as the client (no setpgid): group signals reach the driver.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the client died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);  // the client ignores it; ignored dispositions survive exec
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    dup2(in[0], 0);
    dup2(out[1], 1);
    // Nothing else of the client's leaks into the driver (its history stream, sockets).
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    execve(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof(e));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  int child_errno = 0;
  ssize_t n = read(err[0], &child_errno, sizeof(child_errno));
  close(err[0]);
  if (n == sizeof(child_errno)) {
    close(in[1]);
    close(out[0]);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Status::Infrastructure("exec " + o_.path + ": " + strerror(child_errno));
  }
  pid_ = log_pid_ = pid;
  to_driver_ = in[1];
  from_driver_ = out[0];
  fcntl(to_driver_, F_SETFL, fcntl(to_driver_, F_GETFL) | O_NONBLOCK);
  fcntl(from_driver_, F_SETFL, fcntl(from_driver_, F_GETFL) | O_NONBLOCK);
  buffer_.clear();
  greeted_ = false;
  spawned_at_ = MonotonicNow();
  LogLine("started");
  return Status::Ok();
}

void DriverLock::Prestart() {
  if (pid_ > 0) return;
  Status s = Spawn();
  if (!s.ok()) LogLine("could not start: " + s.message());
}

Status DriverLock::Start() {
  if (pid_ <= 0) {
    Status s = Spawn();
    if (!s.ok()) return s;
  }
  if (greeted_) return Status::Ok();
  // The hello line: {"hello":"locklab-driver","protocol":1,"renew":true|false}.
  std::string line, why;
  int r = 0;
  Nanos until = spawned_at_ + o_.start_timeout;
  do {
    r = ReadLine(until, &line, &why);
  } while (r == 1 && line.find_first_not_of(" \t\r") == std::string::npos);
  std::string bad;
  if (r == 0) {
    bad = "no hello line within start_timeout_ms " + std::to_string(o_.start_timeout.count());
  } else if (r < 0) {
    bad = "before its hello line: " + why;
  } else {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("hello", nlohmann::json()) != "locklab-driver") {
      bad = "first line is not a hello {\"hello\":\"locklab-driver\",...}: '" + Excerpt(line) + "'";
    } else if (!j.contains("protocol") || !j["protocol"].is_number_integer() ||
               j["protocol"].get<int64_t>() != kProtocolVersion) {
      bad = "hello: field 'protocol' must be " + std::to_string(kProtocolVersion);
    } else if (j.contains("renew") && !j["renew"].is_boolean()) {
      bad = "hello: field 'renew' must be true or false";
    } else {
      renew_ = j.value("renew", false);
      greeted_ = true;
    }
  }
  if (!bad.empty()) {
    Kill(bad);
    return Status::Infrastructure("driver " + o_.path + ": " + bad);
  }
  return Status::Ok();
}

int DriverLock::ReadLine(Nanos until, std::string* line, std::string* why) {
  const size_t max = static_cast<size_t>(o_.max_line_bytes);
  size_t scanned = 0;
  for (;;) {
    size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos && nl <= max) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return 1;
    }
    scanned = buffer_.size();
    // Memory stays bounded: reading stops once a line is longer than the cap.
    if (buffer_.size() > max) {
      *why = "answer line longer than max_line_bytes " + std::to_string(max) + " (starts '" +
             Excerpt(buffer_, 60) + "')";
      return -1;
    }
    int64_t wait_ms = MillisUntil(until);
    pollfd p{from_driver_, POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(std::min<int64_t>(wait_ms, 1000)));
    if (pr < 0 && errno != EINTR) {
      *why = std::string("poll: ") + strerror(errno);
      return -1;
    }
    if (pr <= 0) {
      if (MonotonicNow() >= until) return 0;
      continue;
    }
    char buf[4096];
    ssize_t n = read(from_driver_, buf, sizeof(buf));
    if (n > 0) {
      buffer_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    // EOF: the driver closed its stdout, almost always because it ended. Its exit status
    // (if it ends within 200 ms) says how.
    *why = "the driver closed its stdout";
    Nanos end = MonotonicNow() + Millis(200);
    while (MonotonicNow() < end) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        *why = "the driver " + DescribeExit(st);
        pid_ = -1;
        break;
      }
      SleepFor(Millis(5));
    }
    if (!buffer_.empty()) *why += " after a partial line '" + Excerpt(buffer_, 60) + "'";
    return -1;
  }
}

LockResult DriverLock::Unknown(const std::string& what, const nlohmann::json& request, bool kill) {
  std::string msg =
      "driver protocol: " + what + " (request " + std::to_string(request.value("id", int64_t{0})) +
      " " + request.value("op", std::string()) + " " + request.value("key", std::string()) + ")";
  if (kill && pid_ > 0) {
    Kill(msg);
  } else if (kill) {  // already gone (and reaped): say so, drop the pipes
    LogLine(msg + "; a fresh driver starts now");
    Kill("");
  } else {
    LogLine(msg);
  }
  // The replacement starts now (fork and exec only; its hello is read at the next
  // operation), so an interpreter's start overlaps the workload's think time.
  if (kill) Prestart();
  LockResult r;
  r.outcome = Outcome::kUnknown;
  r.detail = msg;
  return r;
}

LockResult DriverLock::Call(nlohmann::json request, Nanos deadline, nlohmann::json* answer) {
  LockResult r;
  if (pid_ > 0) {
    // Anything the driver printed since its last answer is out of protocol (a second answer,
    // an answer to a request given up on): start over with a fresh driver.
    std::string line, why;
    int got;
    while ((got = ReadLine(MonotonicNow(), &line, &why)) == 1) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Kill("driver protocol: unsolicited line between requests: '" + Excerpt(line) + "'");
      break;
    }
    if (got < 0) {
      if (pid_ <= 0) LogLine("between requests: " + why);  // reaped by ReadLine
      Kill("between requests: " + why);                    // (logs only while it runs)
    }
  }
  if (pid_ <= 0 || !greeted_) {
    Status s = Start();
    if (!s.ok()) {
      r.outcome = Outcome::kFail;  // nothing was sent
      r.detail = "driver did not start: " + s.message();
      LogLine(r.detail);
      return r;
    }
    if (MonotonicNow() >= deadline) {
      r.outcome = Outcome::kFail;
      r.detail = "driver: its start took past the deadline; the request was not sent";
      LogLine(r.detail);
      return r;
    }
  }
  request["id"] = ++next_id_;
  request["timeout_ms"] = MillisUntil(deadline);
  std::string text = request.dump() + "\n";
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = write(to_driver_, text.data() + sent, text.size() - sent);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{to_driver_, POLLOUT, 0};
      if (MonotonicNow() >= deadline + o_.answer_grace) {
        return Unknown("the driver does not read its stdin", request, true);
      }
      poll(&p, 1, 20);
      continue;
    }
    return Unknown(std::string("cannot send the request: ") + strerror(errno), request, true);
  }
  for (;;) {
    std::string line, why;
    int got = ReadLine(deadline + o_.answer_grace, &line, &why);
    if (got == 0) {
      return Unknown("no answer within timeout_ms " +
                         std::to_string(request["timeout_ms"].get<int64_t>()) +
                         " + answer_grace_ms " + std::to_string(o_.answer_grace.count()),
                     request, true);
    }
    if (got < 0) return Unknown(why, request, true);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Unknown("answer is not a JSON object: '" + Excerpt(line) + "'", request, true);
    }
    if (!j.contains("id") || !j["id"].is_number_integer()) {
      return Unknown("answer without an integer 'id': '" + Excerpt(line) + "'", request, true);
    }
    if (j["id"].get<int64_t>() != next_id_) {
      return Unknown("answer for id " + std::to_string(j["id"].get<int64_t>()) + " while id " +
                         std::to_string(next_id_) + " is pending",
                     request, true);
    }
    std::string outcome =
        j.contains("outcome") && j["outcome"].is_string() ? j["outcome"].get<std::string>() : "";
    if (outcome != "ok" && outcome != "fail" && outcome != "unknown") {
      return Unknown(
          "answer field 'outcome' must be \"ok\", \"fail\" or \"unknown\": '" + Excerpt(line) + "'",
          request, true);
    }
    if (j.contains("detail") && !j["detail"].is_string()) {
      return Unknown("answer field 'detail' must be a string", request, true);
    }
    Nanos now = MonotonicNow();
    if (now > deadline) {
      // In sync, just too late: the operation may have taken effect or not, as far as the
      // caller can tell. The driver stays. The answer is still handed back: a late `ok`
      // acquire names the token the lock is now held with (Acquire passes it on).
      *answer = j;
      return Unknown("late answer '" + outcome + "' " +
                         std::to_string(std::chrono::ceil<Millis>(now - deadline).count()) +
                         " ms after the deadline",
                     request, false);
    }
    *answer = j;
    r.outcome = outcome == "ok"     ? Outcome::kOk
                : outcome == "fail" ? Outcome::kFail
                                    : Outcome::kUnknown;
    if (j.contains("detail")) r.detail = "driver: " + j["detail"].get<std::string>();
    return r;
  }
}

LockResult DriverLock::Acquire(const std::string& key, Nanos deadline) {
  nlohmann::json req = {{"op", "acquire"}, {"key", key}, {"ttl_ms", config_.ttl.count()}};
  nlohmann::json a;
  LockResult r = Call(req, deadline, &a);
  // An `ok` with a token that is recorded unknown (it came after the deadline, or a field is
  // malformed) still took the lock: the result names the token (LockResult) so that the
  // caller releases it at once. Left alone it would stay held until its TTL ran out, or for
  // as long as the driver lives when its library renews locks on its own.
  const bool granted = a.is_object() && a.value("outcome", nlohmann::json()) == "ok" &&
                       a.contains("token") && a["token"].is_string() &&
                       !a["token"].get<std::string>().empty();
  auto may_hold = [&](LockResult u) {
    if (granted) {
      u.lease.key = key;
      u.lease.token = a["token"].get<std::string>();
      if (a.contains("fence") && a["fence"].is_number_integer() && a["fence"].get<int64_t>() >= 0) {
        u.lease.fence = a["fence"].get<int64_t>();
      }
    }
    return u;
  };
  if (r.outcome != Outcome::kOk) return may_hold(r);
  req["id"] = next_id_;
  if (!granted) {
    return Unknown("acquire answered ok without a non-empty string 'token'", req, false);
  }
  if (a.contains("fence") && !(a["fence"].is_number_integer() && a["fence"].get<int64_t>() >= 0)) {
    return may_hold(Unknown("answer field 'fence' must be an integer >= 0", req, false));
  }
  if (a.contains("validity_ms") &&
      !(a["validity_ms"].is_number_integer() && a["validity_ms"].get<int64_t>() >= 0)) {
    return may_hold(Unknown("answer field 'validity_ms' must be an integer >= 0", req, false));
  }
  r.lease.key = key;
  r.lease.token = a["token"].get<std::string>();
  r.lease.fence = a.value("fence", int64_t{-1});
  r.lease.validity = Millis(a.value("validity_ms", static_cast<int64_t>(config_.ttl.count())));
  r.lease.acquired_at = MonotonicNow();
  return r;
}

LockResult DriverLock::Release(const Lease& lease) {
  nlohmann::json req = {{"op", "release"}, {"key", lease.key}, {"token", lease.token}};
  if (lease.fence >= 0) req["fence"] = lease.fence;
  nlohmann::json a;
  return Call(req, MonotonicNow() + o_.release_timeout, &a);
}

LockResult DriverLock::Renew(const Lease& lease) {
  if (!renew_) return Lock::Renew(lease);
  nlohmann::json req = {
      {"op", "renew"}, {"key", lease.key}, {"token", lease.token}, {"ttl_ms", config_.ttl.count()}};
  if (lease.fence >= 0) req["fence"] = lease.fence;
  nlohmann::json a;
  LockResult r = Call(req, MonotonicNow() + o_.release_timeout, &a);
  if (r.outcome != Outcome::kOk) return r;
  if (a.contains("validity_ms") &&
      !(a["validity_ms"].is_number_integer() && a["validity_ms"].get<int64_t>() >= 0)) {
    req["id"] = next_id_;
    return Unknown("answer field 'validity_ms' must be an integer >= 0", req, false);
  }
  r.lease = lease;
  r.lease.validity = Millis(a.value("validity_ms", static_cast<int64_t>(config_.ttl.count())));
  r.lease.acquired_at = MonotonicNow();
  return r;
}

}  // namespace locklab::locks
