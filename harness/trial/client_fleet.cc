#include "harness/trial/client_fleet.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/process_tree.h"
#include "base/random.h"

namespace locklab::harness {
namespace {

// The last non-blank line of a log (at most 300 bytes of it), "" when none.
std::string LastLogLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 300) + "..." : last;
}

}  // namespace

Status ClientFleet::Spawn(int process, SpawnOptions spawn, std::unique_ptr<ClockControlFile> clock) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
  }
  spawn.stdin_fd = in_pipe[0];
  spawn.stdout_fd = out_pipe[1];
  if (run_mark_.empty()) run_mark_ = "LOCKLAB_RUN_MARK=" + std::to_string(RandomSeed(62));
  spawn.env["LOCKLAB_RUN_MARK"] = run_mark_.substr(run_mark_.find('=') + 1);
  pid_t pid;
  Status s = harness::Spawn(spawn, &pid);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (!s.ok()) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    return s;
  }
  ClientProc c;
  c.process = process;
  c.pid = pid;
  c.log_path = spawn.log_path;
  c.clock = std::move(clock);
  c.to_child = in_pipe[1];
  c.from_child = out_pipe[0];
  c.running = true;
  fcntl(c.from_child, F_SETFL, fcntl(c.from_child, F_GETFL) | O_NONBLOCK);
  // A SIGSTOPped client reads no control lines: a blocking write would stop the harness
  // with it, signals included (SendControl keeps what the pipe does not take).
  fcntl(c.to_child, F_SETFL, fcntl(c.to_child, F_GETFL) | O_NONBLOCK);
  clients_.push_back(std::move(c));
  recorder_->Log("client " + std::to_string(process) + " pid " + std::to_string(pid));
  return Status::Ok();
}

ClientProc* ClientFleet::Find(int process) {
  if (process < 1 || process > size()) return nullptr;
  return &clients_[process - 1];
}

const ClientProc* ClientFleet::Find(int process) const {
  return const_cast<ClientFleet*>(this)->Find(process);
}

bool ClientFleet::Running(int process) const {
  const ClientProc* c = Find(process);
  return c && c->running;
}

pid_t ClientFleet::Pid(int process) const {
  const ClientProc* c = Find(process);
  return c ? c->pid : -1;
}

bool ClientFleet::Pause(int process) {
  ClientProc* c = Find(process);
  if (!c || !c->running) return false;
  c->paused = kill(-c->pid, SIGSTOP) == 0;
  return c->paused;
}

bool ClientFleet::Resume(int process) {
  ClientProc* c = Find(process);
  if (!c || c->pid <= 0) return false;
  // A client that reported "paused" at a point stops itself just after the report; a SIGCONT
  // that overtakes that stop is lost and the client would stay stopped until teardown.
  if (c->paused) WaitUntilStopped(c->pid, Millis(500));
  c->paused = false;
  return kill(-c->pid, SIGCONT) == 0;
}

bool ClientFleet::Crash(int process) {
  ClientProc* c = Find(process);
  if (!c || c->pid <= 0) return false;
  kill(-c->pid, SIGKILL);
  c->running = false;
  c->paused = false;
  c->holding.clear();
  return true;
}

Status ClientFleet::SetClock(int process, const std::string& offset) {
  ClientProc* c = Find(process);
  if (!c || !c->clock) return Status::Usage("client " + std::to_string(process) + " has no clock control");
  return c->clock->Set(offset);
}

void ClientFleet::AskClock(int process) {
  ClientProc* c = Find(process);
  if (c && c->to_child >= 0) SendControl(*c, "clock\n");
}

bool ClientFleet::ClockReport(int process, double* offset_s, Nanos* at) const {
  const ClientProc* c = Find(process);
  if (!c || c->clock_at.count() == 0) return false;
  *offset_s = c->clock_offset_s;
  *at = c->clock_at;
  return true;
}

bool ClientFleet::SlowReport(int process, std::string* point, Millis* slept, Nanos* at) const {
  const ClientProc* c = Find(process);
  if (!c || c->slow_at.count() == 0) return false;
  *point = c->slow_point;
  *slept = c->slow_slept;
  *at = c->slow_at;
  return true;
}

void ClientFleet::Arm(int process, const std::string& point, const std::string& action) {
  ClientProc* c = Find(process);
  if (!c || c->to_child < 0) return;
  SendControl(*c, "arm " + point + " " + action + "\n");
}

void ClientFleet::Disarm(int process) {
  ClientProc* c = Find(process);
  if (!c || c->to_child < 0) return;
  SendControl(*c, "disarm\n");
}

std::vector<int> ClientFleet::Holders() const {
  std::vector<int> out;
  for (const auto& c : clients_) {
    if (c.running && !c.holding.empty()) out.push_back(c.process);
  }
  return out;
}

std::vector<faults::HeldLock> ClientFleet::HeldLocks(int process) const {
  std::vector<faults::HeldLock> out;
  for (const auto& c : clients_) {
    if (c.process != process || !c.running) continue;
    for (const auto& [key, token] : c.holding) out.push_back({key, token});
  }
  return out;
}

bool ClientFleet::AllSettled() const {
  return std::all_of(clients_.begin(), clients_.end(), [](const ClientProc& c) {
    return c.ready || !c.failure.empty() || c.from_child < 0;
  });
}

std::vector<std::string> ClientFleet::StartFailures(Millis waited) const {
  std::vector<std::string> out;
  for (const auto& c : clients_) {
    if (c.ready) continue;
    std::string why = c.failure;
    if (why.empty() && c.from_child < 0) {
      why = "exited before its lock was ready";
      std::string last = LastLogLine(c.log_path);
      if (!last.empty()) why += ": " + last;
    } else if (why.empty()) {
      why = "its lock was not ready within " + std::to_string(waited.count()) + " ms";
    }
    out.push_back("client " + std::to_string(c.process) + ": " + why);
  }
  return out;
}

void ClientFleet::SendGo() {
  for (auto& c : clients_) SendControl(c, "go\n");
}

bool ClientFleet::AnyReading() const {
  return std::any_of(clients_.begin(), clients_.end(),
                     [](const ClientProc& c) { return c.from_child >= 0; });
}

void ClientFleet::SendControl(ClientProc& c, const std::string& line) {
  if (c.to_child < 0) return;
  if (c.outbox.size() + line.size() > kMaxOutbox && line != "go\n") {
    recorder_->Log("client " + std::to_string(c.process) +
                   " reads no control lines (stopped?): dropped " + line.substr(0, line.size() - 1));
    return;
  }
  c.outbox += line;
  FlushControl(c);
}

void ClientFleet::FlushControl(ClientProc& c) {
  while (c.to_child >= 0 && !c.outbox.empty()) {
    ssize_t n = write(c.to_child, c.outbox.data(), c.outbox.size());
    if (n > 0) {
      c.outbox.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN) c.outbox.clear();  // EPIPE: the client is gone
      return;
    }
  }
}

bool ClientFleet::Poll(int wake_fd, Millis timeout, Listener* listener) {
  std::vector<pollfd> fds;
  std::vector<ClientProc*> owners;
  fds.push_back({wake_fd, POLLIN, 0});
  owners.push_back(nullptr);
  for (auto& c : clients_) {
    if (c.from_child >= 0) {
      fds.push_back({c.from_child, POLLIN, 0});
      owners.push_back(&c);
    }
  }
  for (auto& c : clients_) {
    if (c.to_child >= 0 && !c.outbox.empty()) {
      fds.push_back({c.to_child, POLLOUT, 0});
      owners.push_back(&c);
    }
  }
  int n = poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  if (n < 0 && errno != EINTR) return false;
  if (n <= 0) return true;
  if (fds[0].revents & POLLIN) {
    char buf[16];
    (void)!read(wake_fd, buf, sizeof(buf));
  }
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].events == POLLOUT) {
      if (fds[i].revents != 0) FlushControl(*owners[i]);
    } else if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      ReadLines(*owners[i], listener);
    }
  }
  return true;
}

void ClientFleet::ReadLines(ClientProc& c, Listener* listener) {
  char buf[65536];
  ssize_t got;
  while ((got = read(c.from_child, buf, sizeof(buf))) > 0) {
    c.buffer.append(buf, static_cast<size_t>(got));
    size_t nl;
    while ((nl = c.buffer.find('\n')) != std::string::npos) {
      std::string line = c.buffer.substr(0, nl);
      c.buffer.erase(0, nl + 1);
      HandleLine(c, line, listener);
    }
  }
  if (got == 0) {  // EOF: the client exited
    close(c.from_child);
    c.from_child = -1;
    bool crashed_by_fault = !c.running;
    c.running = false;
    listener->OnClientExit(c.process, crashed_by_fault);
  }
}

void ClientFleet::HandleLine(ClientProc& c, const std::string& line, Listener* listener) {
  if (line.rfind("{\"ctl\"", 0) == 0) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return;
    std::string ctl = j.value("ctl", "");
    if (ctl == "lag") {
      lag_.reports++;
      lag_.max = std::max(lag_.max, std::chrono::microseconds(j.value("max_us", int64_t{0})));
      lag_.sleeps += j.value("sleeps", int64_t{0});
      lag_.over_10ms += j.value("over_10ms", int64_t{0});
      lag_.over_50ms += j.value("over_50ms", int64_t{0});
    } else if (ctl == "note") {
      // A line the client wants in lab.log (an option it could not follow).
      recorder_->Log("client " + std::to_string(c.process) + ": " + j.value("line", std::string()));
    } else if (ctl == "clock") {
      // The client's wall clock (libfaketime's, under it) against the real one now: the
      // line's trip through the pipe is the reading's error (milliseconds).
      c.clock_offset_s = j.value("wall_ns", int64_t{0}) / 1e9 - RealClockSeconds();
      c.clock_at = MonotonicNow();
    } else if (ctl == "slow-done") {
      c.slow_point = j.value("point", std::string());
      c.slow_slept = Millis(j.value("slept_ms", int64_t{0}));
      c.slow_at = MonotonicNow();
    } else if (ctl == "ready") {
      c.ready = true;
    } else if (ctl == "failed") {
      c.failure = j.value("reason", std::string("its lock could not start"));
    } else if (ctl == "paused" || ctl == "slowed") {
      c.paused = ctl == "paused";
      Nanos t(j.value("time_ns", MonotonicNow().count()));
      bool taken = listener->OnPausePoint(c.process, j.value("point", ""), t);
      if (!taken && c.paused) Resume(c.process);
    }
    return;
  }
  // Track what each client holds (for faults that target holders).
  if (line.find("\"acquire\"") != std::string::npos || line.find("\"release\"") != std::string::npos) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) {
      std::string type = j.value("type", ""), f = j.value("f", ""), key = j.value("key", "");
      // A client holds from its acquire's ok until its release completes (the delete has
      // then run on the server) or it asks again.
      if (f == "acquire" && type == "ok") {
        const auto& v = j.contains("value") ? j["value"] : nlohmann::json();
        c.holding[key] = v.is_object() && v.contains("token") && v["token"].is_string() ? v["token"].get<std::string>() : "";
        ++acquires_seen_;
      } else if ((f == "release" && type != "invoke") || (f == "acquire" && type == "invoke")) {
        c.holding.erase(key);
      }
      // Any completion (ok, fail, info): the client is done with that lease.
      if (f == "release" && type != "invoke") last_releaser_ = c.process;
    }
  }
  listener->OnClientEvent(line);
}

void ClientFleet::AskToStop() {
  for (auto& c : clients_) {
    if (c.pid <= 0) continue;
    kill(-c.pid, SIGCONT);
    kill(c.pid, SIGTERM);
    if (c.to_child >= 0) {
      close(c.to_child);
      c.to_child = -1;
      c.outbox.clear();
    }
  }
}

void ClientFleet::Reap(Millis exit_wait) {
  // A client that closed its output may still be tearing its lock down (a driver is given
  // 500 ms to exit on its closed stdin): the clients share `exit_wait` to exit before the
  // ones left are killed.
  const Nanos exit_by = MonotonicNow() + exit_wait;
  for (auto& c : clients_) {
    if (c.pid <= 0) continue;
    const Millis left = std::max(Millis(0), std::chrono::duration_cast<Millis>(exit_by - MonotonicNow()));
    if (!WaitExit(c.pid, left)) {
      recorder_->Log("client " + std::to_string(c.process) + " did not stop in time: killed");
      KillAndReap(c.pid);
    }
    c.pid = -1;
    c.running = false;
    if (c.from_child >= 0) {
      close(c.from_child);
      c.from_child = -1;
    }
  }
}

void ClientFleet::KillAll() {
  for (auto& c : clients_) {
    if (c.pid > 0) KillAndReap(c.pid);
    c.pid = -1;
    if (c.to_child >= 0) close(c.to_child);
    if (c.from_child >= 0) close(c.from_child);
    c.to_child = c.from_child = -1;
  }
  if (!run_mark_.empty()) {
    int left = KillProcessesWithEnv(run_mark_);
    if (left > 0) recorder_->Log("killed " + std::to_string(left) + " process(es) the clients' trees left behind");
    run_mark_.clear();
  }
}

}  // namespace locklab::harness
