#include "faults/process_effects.h"

#include <algorithm>

namespace locklab::faults {

Status ClientPauseEffect::Validate() {
  std::string mode = o_.Param("mode", "targeted");
  if (mode != "targeted" && mode != "random") {
    return Status::Usage("fault client-pause: param 'mode': '" + mode + "': expected targeted or random");
  }
  return PointParam();
}

void ClientPauseEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = ArmedPoint(o_);  // "" in random mode: a timed schedule
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

void ClientPauseEffect::Stop(Nanos) {
  if (paused_ != 0) clients_->ResumeClient(paused_);
  paused_ = 0;
}

Status SlowCsEffect::Validate() { return PointParam(); }

void SlowCsEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = ArmedPoint(o_);
}

nlohmann::json SlowCsEffect::Start(Nanos, int process) {
  Log("slow-cs: client " + std::to_string(process) + " stays in its critical section " +
      std::to_string(o_.duration.count()) + " ms longer");
  return {{"targets", {process}}, {"point", ArmedPoint(o_)}};
}

Status ClientCrashEffect::Validate() { return PointParam(); }

void ClientCrashEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = ArmedPoint(o_);
  if (schedule->max_windows == 0) schedule->max_windows = 1;
}

nlohmann::json ClientCrashEffect::Start(Nanos, int process) {
  std::string point = ArmedPoint(o_);
  if (!clients_->CrashClient(process)) return nullptr;
  Log("client-crash: client " + std::to_string(process) + " killed (SIGKILL) at " + point);
  return {{"targets", {process}}, {"point", point}};
}

nlohmann::json ServerPauseEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) nodes_->PauseNode(n);
  Log("server-pause: nodes stopped for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
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
    return Status::Usage("fault restart: param 'restart': '" + mode +
                         "': expected no-persistence or aof-always");
  }
  return Status::Ok();
}

nlohmann::json RestartEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
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

Status FailoverEffect::Validate() {
  int64_t ms = 0;
  Status s = IntParam("kill_after_ms", "300", 0, 3600000, &ms);
  kill_after_ = Millis(ms);
  return s;
}

void FailoverEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = "after-release";
  if (schedule->max_windows == 0) schedule->max_windows = 1;
  if (schedule->duration <= kill_after_) schedule->duration = kill_after_ + Millis(5000);
}

int FailoverEffect::PickArmedClient(const ClientControl& clients) {
  std::vector<int> h = clients.Holders();
  return h.empty() ? draw().Client(clients) : h.front();
}

nlohmann::json FailoverEffect::Start(Nanos time, int process) {
  // The race of the Redis docs starts from a free lock: the armed client stopped itself
  // right after its release (the delete has run and replicated), the stream is cut, and
  // the next lock written is the one that never reaches the replica.
  Status s = nodes_->CutReplication(true);
  clients_->ResumeClient(process);
  if (!s.ok()) {
    Log("failover: " + s.message());
    return nullptr;  // (the driver resumes the client)
  }
  killed_ = false;
  opened_at_ = time;
  acquires_at_cut_ = clients_->AcquiresSeen();
  Log("failover: client " + std::to_string(process) + " released; replication n1 -> r1 cut; n1 dies " +
      std::to_string(kill_after_.count()) + " ms after the next acquire");
  return {{"nodes", {1}}, {"replica", "r1"}, {"kill_after_ms", kill_after_.count()},
          {"released_by", process}};
}

void FailoverEffect::OnClientEventWhileOpen(Nanos now) {
  // An acquire reported within the first millisecond may have run before the cut (its
  // event was on its way); a wrong guess here costs a missed detection, never a false one.
  if (now < opened_at_ + Millis(1)) acquires_at_cut_ = clients_->AcquiresSeen();
}

void FailoverEffect::WhileOpen(Nanos now) {
  if (killed_ || now < opened_at_ + kill_after_) return;
  next_check_ = now + Millis(10);
  if (clients_->AcquiresSeen() == acquires_at_cut_) return;  // no unreplicated lock yet
  nodes_->KillNode(1);
  killed_ = true;
  Log("failover: n1 killed (SIGKILL); Sentinel promotes r1");
}

void FailoverEffect::Stop(Nanos) {
  nodes_->CutReplication(false);
  if (killed_) {
    Status s = nodes_->RestartNode(1);
    if (!s.ok()) Log("failover: old master did not restart: " + s.message());
  }
  killed_ = false;
}

}  // namespace locklab::faults
