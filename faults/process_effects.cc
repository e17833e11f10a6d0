#include "faults/process_effects.h"

#include <algorithm>
#include <optional>

#include "base/numbers.h"

namespace locklab::faults {

Status ClientPauseEffect::Validate() {
  std::string mode = o_.Param("mode", "targeted");
  if (mode != "targeted" && mode != "random") {
    return Status::Usage(std::string("fault ") + id() + ": param 'mode': '" + mode + "': expected targeted or random");
  }
  return PointParam();
}

nlohmann::json ClientPauseEffect::Start(Nanos, int process) {
  std::string mode = o_.Param("mode", "targeted");
  nlohmann::json v = {{"mode", mode}};
  if (process != 0) {
    // Targeted: the client already stopped itself at the point.
    v["point"] = ArmedPoint(o_);
  } else {
    process = PickClient(*clients_);
    if (process == 0 || !clients_->PauseClient(process)) return nullptr;
  }
  paused_ = process;
  v["targets"] = {process};
  Log("client-pause: client " + std::to_string(process) + " stopped for " +
      std::to_string(o_.duration.count()) + " ms");
  return v;
}

Evidence ClientPauseEffect::Probe(Nanos, ProbeMoment when) {
  // After the stop the client runs again: nothing more to see.
  if (paused_ == 0 || when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  return StoppedEvidence("client " + std::to_string(paused_), clients_->ClientProcess(paused_));
}

void ClientPauseEffect::Stop(Nanos) {
  if (paused_ != 0) clients_->ResumeClient(paused_);
  paused_ = 0;
}

Status SlowCsEffect::Validate() { return PointParam(); }

nlohmann::json SlowCsEffect::Start(Nanos time, int process) {
  process_ = process;
  opened_at_ = time;
  Log("slow-cs: client " + std::to_string(process) + " stays in its critical section " +
      std::to_string(o_.duration.count()) + " ms longer");
  return {{"targets", {process}}, {"point", ArmedPoint(o_)}};
}

Evidence SlowCsEffect::Probe(Nanos, ProbeMoment) {
  Evidence e;
  const std::string who = "client " + std::to_string(process_);
  const int64_t ms = o_.duration.count();
  SlowSeen slow;
  // The report must be of this window's section (it arrived after the window opened) and
  // of the whole sleep (1 ms of slack for the clock's rounding).
  if (!clients_->ClientSlowEnded(process_, &slow) || slow.at < opened_at_) {
    e.line = who + " reported no end of its " + std::to_string(ms) + " ms slow section at " +
             ArmedPoint(o_);
    return e;
  }
  e.details = {{"slept_ms", slow.slept.count()}, {"point", slow.point}};
  e.seen = slow.slept.count() + 1 >= ms;
  e.line = who + " stayed " + std::to_string(slow.slept.count()) + " ms longer in its critical section at " +
           slow.point + " (its own report when the slow sleep ended" +
           (e.seen ? ")" : "; " + std::to_string(ms) + " ms were asked)");
  return e;
}

Status ClientCrashEffect::Validate() { return PointParam(); }

void ClientCrashEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = ArmedPoint(o_);
  if (schedule->max_windows == 0) schedule->max_windows = 1;
}

nlohmann::json ClientCrashEffect::Start(Nanos, int process) {
  std::string point = ArmedPoint(o_);
  if (!clients_->CrashClient(process)) return nullptr;
  crashed_ = process;
  Log("client-crash: client " + std::to_string(process) + " killed (SIGKILL) at " + point);
  return {{"targets", {process}}, {"point", point}};
}

Evidence ClientCrashEffect::Probe(Nanos, ProbeMoment) {
  Evidence e;
  const std::string who = "client " + std::to_string(crashed_);
  ProcessSeen p = clients_->ClientProcess(crashed_);
  if (!p.visible) {
    e.line = who + ": " + p.why;
    return e;
  }
  const std::string stat = "/proc/" + std::to_string(p.pid) + "/stat";
  e.details = {{"pid", p.pid}, {"state", p.state == 0 ? std::string("gone") : std::string(1, p.state)}};
  e.seen = p.state == 0 || p.state == 'Z' || p.state == 'X';
  if (p.state == 0) e.line = who + " (pid " + std::to_string(p.pid) + ") gone after SIGKILL: no " + stat;
  else e.line = who + " (pid " + std::to_string(p.pid) + ") " + (e.seen ? "dead after SIGKILL" : "still running") +
                ": state " + std::string(1, p.state) + " in " + stat;
  return e;
}

nlohmann::json ServerPauseEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) nodes_->PauseNode(n);
  Log("server-pause: nodes stopped for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
}

Evidence ServerPauseEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) parts.push_back(StoppedEvidence("node n" + std::to_string(n), nodes_->NodeProcess(n)));
  return AllSeen(parts);
}

void ServerPauseEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) nodes_->ResumeNode(n);
}

nlohmann::json MemoryFullEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) {
    // The policy first: with an evicting policy a full node would drop keys (other
    // clients' locks) instead of refusing writes. One byte is below any node's use.
    Status s = nodes_->SetNodeConfig(n, "maxmemory-policy", "noeviction");
    if (s.ok()) s = nodes_->SetNodeConfig(n, "maxmemory", "1");
    if (!s.ok()) Log("memory-full: n" + std::to_string(n) + ": " + s.message());
  }
  Log("memory-full: nodes refuse writes (OOM) for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
}

Evidence MemoryFullEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) {
    Evidence e;
    std::string reply;
    Status s = nodes_->NodeWriteProbe(n, &reply);
    const std::string node = "node n" + std::to_string(n);
    if (!s.ok()) {
      e.line = node + " write probe: " + s.message();
    } else {
      e.seen = reply.rfind("OOM", 0) == 0;
      e.line = node + " answered a write with " + (e.seen ? "-" : "") + reply + (e.seen ? "" : " (no OOM error)");
    }
    parts.push_back(e);
  }
  return AllSeen(parts);
}

void MemoryFullEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) {
    Status s = nodes_->SetNodeConfig(n, "maxmemory", "0");
    if (!s.ok()) Log("memory-full: n" + std::to_string(n) + " did not confirm maxmemory 0: " + s.message());
  }
}

std::vector<std::string> RestartEffect::NodeArgs() const {
  if (o_.Param("restart", "no-persistence") == "aof-always") {
    return {"--appendonly", "yes", "--appendfsync", "always"};
  }
  return {};
}

Status RestartEffect::Validate() {
  std::string mode = o_.Param("restart", "no-persistence");
  if (mode != "no-persistence" && mode != "aof-always") {
    return Status::Usage(std::string("fault ") + id() + ": param 'restart': '" + mode +
                         "': expected no-persistence or aof-always");
  }
  return Status::Ok();
}

nlohmann::json RestartEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  before_.clear();
  for (int n : nodes) before_[n] = nodes_->NodeServing(n);  // to tell the restarted one apart
  for (int n : nodes) nodes_->KillNode(n);
  Log("restart: nodes killed (SIGKILL), down for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}, {"restart", o_.Param("restart", "no-persistence")}};
}

void RestartEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) {
    Status s = nodes_->RestartNode(n);
    if (!s.ok()) Log("restart: node n" + std::to_string(n) + " did not come back: " + s.message());
  }
}

Evidence RestartEffect::Probe(Nanos, ProbeMoment when) {
  if (when != ProbeMoment::kAfterStop && when != ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) {
    Evidence e;
    const std::string node = "node n" + std::to_string(n);
    const ServingSeen& old = before_[n];
    ServingSeen now = nodes_->NodeServing(n);
    if (!old.answered) {
      e.line = node + " did not say who served it before the kill: " + old.error;
    } else if (!now.answered) {
      e.line = node + " does not answer after its restart: " + now.error;
    } else {
      // Redis names each start (run_id); other servers are told apart by their pid.
      bool by_run_id = !old.run_id.empty() && !now.run_id.empty();
      e.seen = by_run_id ? old.run_id != now.run_id : old.pid != now.pid;
      e.details = {{"pid_before", old.pid}, {"pid_after", now.pid}};
      e.line = node + " answers after its restart as pid " + std::to_string(now.pid) + " (was " +
               std::to_string(old.pid) + ")" +
               (by_run_id ? std::string(", run_id ") + (e.seen ? "new" : "unchanged") : std::string()) +
               (e.seen ? "" : ": the same server, not restarted");
    }
    parts.push_back(e);
  }
  return AllSeen(parts);
}


}  // namespace locklab::faults
