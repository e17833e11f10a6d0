// Trial's start, run and check phases (trial.h), and RunTrial (runner.h).
#include "harness/trial/trial.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>

#include "base/numbers.h"
#include "locks/driver_lock.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "harness/trial/interrupts.h"
#include "harness/trial/trial_results.h"
#include "workloads/counter_workload.h"

namespace locklab::harness {

Trial::Trial(RunOptions options, bool quiet)
    : o_(std::move(options)), recorder_(quiet), live_(!quiet && LiveProgress::StderrIsLiveTerminal()) {
  recorder_.set_live(&live_);
}

void Trial::OnClientEvent(const std::string& line) {
  recorder_.WriteEvent(line);
  if (phase_ == Phase::kRunning) live_.OnClientEvent(line);
  if (fault_started_) {
    Nanos now = MonotonicNow();
    for (auto& f : faults_) f->OnClientEvent(control_, now);
  }
}

bool Trial::OnPausePoint(int process, const std::string& point, Nanos time) {
  if (!fault_started_) return false;
  for (auto& f : faults_) {
    if (f->OnPausePoint(control_, process, point, time)) return true;
  }
  return false;
}

void Trial::OnClientExit(int process, bool crashed_by_fault) {
  if (phase_ != Phase::kRunning || crashed_by_fault) return;
  ++unexpected_exits_;
  // A death the schedule did not cause (the OOM killer, a kill from outside, a client that
  // failed): an infra event, so the judge ends its holds here and says what died.
  pid_t pid = clients_.Pid(process);
  std::string how = PeekChildState(pid, Millis(200));
  if (how.empty() || how == "stopped") how = "exited";  // its stream closed: it is going
  nlohmann::json v = {{"what", "client"}, {"process", process}, {"pid", pid}, {"how", how}};
  recorder_.WriteLabEvent("harness", "info", "infra", "client " + std::to_string(process), v,
                          MonotonicNow());
  recorder_.Progress("client " + std::to_string(process) + " " + how +
                     " during the run, not by the schedule (see clients/" +
                     std::to_string(process) + ".log)");
}

void Trial::WatchLab(bool now_anyway) {
  if (!watching_) return;
  Nanos now = MonotonicNow();
  if (!now_anyway && now < next_watch_) return;
  next_watch_ = now + kWatchEvery;
  for (const auto& [from, to] : stall_meter_.Drain()) RecordStall(&recorder_, from, to);
  watch_.Check(lab_, control_.paused_nodes());
}

void Trial::RestoreScenario() {
  if (run_dir_.empty() || scenario_toml_.empty()) return;
  const std::string path = run_dir_ + "/scenario.toml";
  std::ifstream in(path, std::ios::binary);
  std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (now == scenario_toml_) return;
  if (WriteFile(path, scenario_toml_).ok()) {
    recorder_.Progress("scenario.toml was changed during the run: restored as the run ran it");
  }
}

Nanos Trial::NextFaultWakeup() const {
  Nanos next = Nanos::max();
  for (const auto& f : faults_) next = std::min(next, f->NextWakeup());
  return next;
}

void Trial::EventLoop(Nanos end) {
  const bool stopping = phase_ == Phase::kStopping;
  for (;;) {
    Nanos now = MonotonicNow();
    if (!stopping && Interrupted()) {
      interrupted_ = true;
      return;
    }
    if (!stopping && !recorder_.history_error().ok()) return;
    if (now >= end) return;
    if (phase_ == Phase::kStarting && clients_.AllSettled()) return;
    if (!stopping && fault_started_) {
      for (auto& f : faults_) {
        if (now >= f->NextWakeup()) f->Tick(control_, now);
      }
    }
    WatchLab();
    if (phase_ == Phase::kRunning) live_.Tick(now);
    if (stopping && !clients_.AnyReading()) return;  // every client is gone
    Nanos wake = end;
    if (!stopping && fault_started_) wake = std::min(wake, NextFaultWakeup());
    Millis timeout(std::max<int64_t>(0, std::min<int64_t>(200, (wake - now).count() / 1000000 + 1)));
    if (!clients_.Poll(InterruptWakeFd(), timeout, this)) return;
  }
}

bool Trial::StartWhenReady() {
  // A driver has start_timeout_ms (its knob, 5 s by default) to say hello, and its client
  // reports ready or failed by then; the margin covers the client's own start on a busy
  // machine. Start-up is never charged to the first operation or the fault schedule.
  const Millis limit = locks::DriverStartTimeout(o_.knobs);
  phase_ = Phase::kStarting;
  EventLoop(MonotonicNow() + limit + Millis(10000));
  phase_ = Phase::kRunning;
  if (interrupted_) return false;
  facts_.client_failures = clients_.StartFailures(limit + Millis(10000));
  if (!facts_.client_failures.empty()) {
    std::string more = facts_.client_failures.size() > 1
                           ? " (and " + std::to_string(facts_.client_failures.size() - 1) + " more; see clients/N.log)"
                           : "";
    recorder_.Progress("nothing ran, a lock did not start; " + facts_.client_failures.front() + more);
    return false;
  }
  clients_.SendGo();
  return true;
}

void Trial::StopClients() {
  clients_.AskToStop();
  // A client finishes its cycle: at most an acquire deadline, a hold and a few commands.
  Millis grace = o_.acquire_timeout + o_.hold + 4 * o_.command_timeout + Millis(1000);
  // Interrupted (or the history cannot be written): the run ends within a second of the
  // signal, so a client still waiting in its acquire is not waited for; its open operation
  // stays open in the history (an info outcome for the judge), and the verdict is unknown.
  if (interrupted_ || !recorder_.history_error().ok()) grace = std::min(grace, Millis(500));
  phase_ = Phase::kStopping;
  EventLoop(MonotonicNow() + grace);
  clients_.Reap(interrupted_ ? Millis(0) : Millis(1000));
}

// The guarded counters' final values, read from the resource node into the history (the
// harness's own read operations), for the lost-update and register checks.
void Trial::FinalReads() {
  if (!lab_.cluster && !lab_.endpoints) return;
  locks::DriverHello hello;
  if (lab_.cluster && !driver_path_.empty() &&
      locks::ProbedHello(driver_path_, o_.driver_args, &hello) && hello.resource) {
    FinalReadsThroughDriver();
    return;
  }
  locks::RedisConnection conn(lab_.NodeEndpoint(0), Millis(500), Millis(500));
  for (int k = 0; k < o_.keys; ++k) {
    std::string key = workloads::CounterKey(k);
    auto event = [&](const char* type, const nlohmann::json& v) {
      recorder_.WriteLabEvent("harness", type, "read", key, v, MonotonicNow());
    };
    event("invoke", nullptr);
    locks::Reply r = conn.Command({"GET", key});
    if (r.outcome != locks::Outcome::kOk || r.is_error) {
      event("info", {{"error", r.is_error ? r.str : r.transport_error}});
      continue;
    }
    if (r.is_nil) {
      event("ok", nullptr);  // never written (the register model starts at nil too)
    } else {
      std::optional<int64_t> value = ParseInt(r.str);
      if (value) {
        event("ok", *value);
      } else {
        event("info", {{"error", "not a number: " + r.str}});
      }
    }
  }
}

// A driver whose hello says "resource": true owns the guarded resource: the final values are
// read through one more instance of it (docs/driver-protocol.md, "Your own resource"), straight
// to the lock nodes (the run and its faults are over), its stderr in clients/final-reads.log.
void Trial::FinalReadsThroughDriver() {
  locks::LockConfig config;
  config.algorithm = locks::kDriverPrefix + driver_path_;
  config.driver_args = o_.driver_args;
  config.knobs = o_.knobs;
  config.ttl = o_.ttl;
  config.retry_delay = o_.retry_delay;
  config.command_timeout = o_.command_timeout;
  for (int n = 1; n <= lab_.node_count(); ++n) config.nodes.push_back(lab_.NodeEndpoint(n));
  locks::DriverOptions options;
  Status ready = locks::ParseDriverOptions(config, &options);
  options.log_path = run_dir_ + "/clients/final-reads.log";
  locks::DriverLock driver(config, options);
  if (ready.ok()) ready = driver.WaitReady();
  for (int k = 0; k < o_.keys; ++k) {
    const std::string key = workloads::CounterKey(k);
    auto event = [&](const char* type, const nlohmann::json& v) {
      recorder_.WriteLabEvent("harness", type, "read", key, v, MonotonicNow());
    };
    event("invoke", nullptr);
    if (!ready.ok()) {
      event("info", {{"error", "driver did not start: " + ready.message()}});
      continue;
    }
    locks::DriverLock::ResourceResult r = driver.ReadResource(key, nullptr);
    if (r.outcome != locks::Outcome::kOk) {
      event("info", {{"error", r.detail.empty() ? std::string("read ") + locks::OutcomeName(r.outcome) : r.detail}});
    } else {
      event("ok", r.value ? nlohmann::json(*r.value) : nlohmann::json(nullptr));
    }
  }
}

void Trial::Teardown() {
  if (fault_started_) {
    for (auto& f : faults_) f->Teardown(control_, MonotonicNow());
    fault_started_ = false;
  }
  clients_.KillAll();
  lab_.Stop();
  if (recorder_.history_open() && !run_ended_) {
    facts_.interrupted = interrupted_;
    facts_.client_exits = unexpected_exits_;
    if (!end_status_.ok()) facts_.error = end_status_.message();
    recorder_.WriteRunEvent("end", checker::RunEndValue(facts_));
    run_ended_ = true;
  }
  recorder_.CloseHistory();
}

TrialResult Trial::Run() {
  InstallInterruptHandlers();
  TrialResult result;
  Nanos t0 = MonotonicNow();
  Status s = Setup();
  result.run_dir = run_dir_;
  if (s.ok()) s = StartClients();
  bool ready = s.ok() && StartWhenReady();
  if (ready) {
    Nanos start = MonotonicNow();
    control_.set_run_end(start + o_.duration);
    for (auto& f : faults_) {
      if (s.ok()) s = f->Setup(control_, start);
    }
    fault_started_ = s.ok();
    watching_ = true;
    stall_meter_.Start();
    if (s.ok()) {
      recorder_.Progress("running " + o_.name + " for " +
                         std::to_string(o_.duration.count() / 1000.0).substr(0, 5) + " s with " +
                         std::to_string(o_.clients) + " clients (seed " + std::to_string(o_.seed) + ")");
      live_.Start(MonotonicNow(), o_.duration);
      EventLoop(start + o_.duration);
      live_.Interrupt();
      if (interrupted_) recorder_.Progress("interrupted: healing faults and stopping clients");
      for (auto& f : faults_) f->Teardown(control_, MonotonicNow());
      fault_started_ = false;
      StopClients();
      WatchLab(true);  // a resource that died is named before its final read fails
      FinalReads();
    }
    WatchLab(true);
    stall_meter_.Stop();
    for (const auto& [from, to] : stall_meter_.Drain()) RecordStall(&recorder_, from, to);
    watching_ = false;
  }
  end_status_ = s;
  Teardown();  // writes the history's run end event
  RestoreScenario();
  // A history that could not be written in full is the run's failure (exit 70), whatever
  // else went on; its prefix is still judged, and never judged safe.
  const Status& history_error = recorder_.history_error();
  if (s.ok() && !history_error.ok()) s = history_error;
  TrialRunRecord record;
  record.elapsed = std::chrono::duration<double>(ToMillis(MonotonicNow() - t0) / 1000.0);
  if (run_dir_.empty()) {
    result.status = s;
    result.exit_code = s.ExitCode();
    return result;
  }
  record.options = &o_;
  record.run_dir = run_dir_;
  record.lag = clients_.lag();
  record.interrupted = interrupted_;
  record.unexpected_exits = unexpected_exits_;
  record.facts = facts_;
  record.history_error = history_error;
  JudgedTrial judged = JudgeTrial(record);
  Status written = WriteTrialResults(record, judged.results);
  if (s.ok()) s = written;
  recorder_.Log("verdict " + std::string(checker::VerdictName(judged.outcome.verdict)));
  recorder_.CloseLog();
  result.status = s;
  result.exit_code = TrialExitCode(s, judged.outcome);
  result.results = std::move(judged.results);
  result.summary = std::move(judged.summary);
  return result;
}

TrialResult RunTrial(RunOptions options, bool quiet) {
  Trial t(std::move(options), quiet);
  return t.Run();
}

}  // namespace locklab::harness
