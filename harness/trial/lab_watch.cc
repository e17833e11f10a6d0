#include "harness/trial/lab_watch.h"

#include <nlohmann/json.hpp>

#include "harness/lab/backend_server.h"
#include "harness/lab/process.h"

namespace locklab::harness {

std::vector<LabWatch::Watched> LabWatch::Servers(TrialLab& lab) {
  std::vector<Watched> out;
  if (!lab.cluster) return out;  // the user's own servers (--endpoints)
  int n = 0;
  for (auto& node : lab.cluster->nodes()) {
    ++n;
    out.push_back({"node " + node->name(), "node", n, node.get()});
  }
  out.push_back({"resource", "resource", 0, &lab.cluster->resource()});
  if (lab.topology) {
    out.push_back({"replica", "replica", 0, &lab.topology->replica()});
    int s = 0;
    for (const auto& sentinel : lab.topology->sentinel_nodes()) {
      out.push_back({"sentinel s" + std::to_string(++s), "sentinel", 0, sentinel.get()});
    }
  }
  return out;
}

void LabWatch::Check(TrialLab& lab, const std::set<int>& paused_nodes) {
  std::set<pid_t> stopped;
  for (const Watched& w : Servers(lab)) {
    pid_t pid = w.server ? w.server->pid() : -1;
    if (pid <= 0) continue;  // killed by a fault, not started again yet
    std::string how = PeekChildState(pid);
    if (how.empty()) continue;
    if (how == "stopped") {
      if (w.node > 0 && paused_nodes.count(w.node)) continue;  // the schedule's pause
      stopped.insert(pid);
      if (!seen_stopped_.count(pid)) continue;  // seen once: look again next time
    }
    if (!reported_.insert({pid, how}).second) continue;
    Record(w, pid, how);
  }
  seen_stopped_ = std::move(stopped);
}

void LabWatch::Record(const Watched& w, pid_t pid, const std::string& how) {
  nlohmann::json v = {{"what", w.what}};
  if (w.node > 0) v["node"] = w.node;
  v["pid"] = pid;
  v["server"] = w.server->program();
  v["how"] = how;
  // What the server said last about it: the post-mortem when the run directory is gone.
  const std::string said =
      how.rfind("exited with status", 0) == 0 ? TellingLogLine(w.server->log_path()) : "";
  if (!said.empty()) v["log_line"] = said;
  recorder_->WriteLabEvent("harness", "info", "infra", w.subject, v, MonotonicNow());
  recorder_->Progress("lab " + w.subject + " (" + w.server->program() + ", pid " +
                      std::to_string(pid) + ") " + how + ", not by the schedule" +
                      (said.empty() ? "" : "; its log: " + said));
  ++recorded_;
}

void StallMeter::Start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] { Loop(); });
}

void StallMeter::Stop() {
  if (!running_.exchange(false)) return;
  if (thread_.joinable()) thread_.join();
}

std::vector<std::pair<Nanos, Nanos>> StallMeter::Drain() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<Nanos, Nanos>> out;
  out.swap(stalls_);
  return out;
}

void StallMeter::Loop() {
  Nanos last = MonotonicNow();
  while (running_.load()) {
    SleepFor(kTick);
    Nanos now = MonotonicNow();
    if (now - last > kTick + kMinStall) {
      std::lock_guard<std::mutex> lock(mu_);
      stalls_.emplace_back(last, now);
    }
    last = now;
  }
}

void RecordStall(TrialRecorder* recorder, Nanos from, Nanos to) {
  double ms = ToMillis(to - from);
  nlohmann::json v = {{"what", "harness"}, {"pid", static_cast<int64_t>(getpid())},
                      {"how", "stalled"}, {"stalled_ms", static_cast<int64_t>(ms)},
                      {"from_ns", from.count()}};
  recorder->WriteLabEvent("harness", "info", "infra", "harness", v, to);
  recorder->Progress("the harness did not run for " + std::to_string(static_cast<int64_t>(ms)) +
                     " ms: timing is not trusted, and no wait then counts against the lock");
}

}  // namespace locklab::harness
