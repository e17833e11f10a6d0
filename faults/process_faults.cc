#include "faults/process_faults.h"

namespace locklab::faults {

Status ClientPauseFault::Validate() {
  std::string mode = o_.Param("mode", "targeted");
  if (mode != "targeted" && mode != "random") {
    return Status::Usage("fault client-pause: param 'mode': '" + mode + "': expected targeted or random");
  }
  std::string point = o_.Param("point", "after-acquire");
  if (!IsPausePoint(point)) {
    return Status::Usage("fault client-pause: param 'point': '" + point +
                         "': expected after-acquire, before-write or redlock-replies-in-flight");
  }
  return Status::Ok();
}

std::string ClientPauseFault::ArmedPoint() const {
  return o_.Param("mode", "targeted") == "targeted" ? o_.Param("point", "after-acquire") : "";
}

nlohmann::json ClientPauseFault::Open(LabControl& lab, Nanos, int process) {
  std::string mode = o_.Param("mode", "targeted");
  nlohmann::json v = {{"mode", mode}};
  if (process != 0) {
    // Targeted: the client already stopped itself at the point.
    v["point"] = o_.Param("point", "after-acquire");
  } else {
    process = PickClient(lab);
    if (process == 0 || !lab.PauseClient(process)) return nullptr;
  }
  paused_ = process;
  v["targets"] = {process};
  lab.Log("client-pause: client " + std::to_string(process) + " stopped for " +
          std::to_string(o_.duration.count()) + " ms");
  return v;
}

void ClientPauseFault::Close(LabControl& lab, Nanos) {
  if (paused_ != 0) lab.ResumeClient(paused_);
  paused_ = 0;
}

Status SlowCsFault::Validate() {
  std::string point = o_.Param("point", "after-acquire");
  if (point != "after-acquire" && point != "before-write") {
    return Status::Usage("fault slow-cs: param 'point': '" + point +
                         "': expected after-acquire or before-write");
  }
  return Status::Ok();
}

nlohmann::json SlowCsFault::Open(LabControl& lab, Nanos, int process) {
  lab.Log("slow-cs: client " + std::to_string(process) + " stays in its critical section " +
          std::to_string(o_.duration.count()) + " ms longer");
  return {{"targets", {process}}, {"point", ArmedPoint()}};
}

ClientCrashFault::ClientCrashFault(FaultOptions o, uint64_t seed)
    : WindowedFault(std::move(o), seed) {
  if (o_.windows == 0) o_.windows = 1;  // a crashed client stays dead: one by default
}

Status ClientCrashFault::Validate() {
  std::string point = o_.Param("point", "after-acquire");
  if (!IsPausePoint(point)) {
    return Status::Usage("fault client-crash: param 'point': '" + point + "' is not a pause point");
  }
  return Status::Ok();
}

nlohmann::json ClientCrashFault::Open(LabControl& lab, Nanos, int process) {
  if (!lab.CrashClient(process)) return nullptr;
  lab.Log("client-crash: client " + std::to_string(process) + " killed (SIGKILL) at " + ArmedPoint());
  return {{"targets", {process}}, {"point", ArmedPoint()}};
}

nlohmann::json ServerPauseFault::Open(LabControl& lab, Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) lab.PauseNode(n);
  lab.Log("server-pause: nodes stopped for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
}

void ServerPauseFault::Close(LabControl& lab, Nanos) {
  for (int n : NodesOr(1)) lab.ResumeNode(n);
}

std::vector<std::string> RestartFault::NodeArgs() const {
  if (o_.Param("restart", "no-persistence") == "aof-always") {
    return {"--appendonly", "yes", "--appendfsync", "always"};
  }
  return {};
}

Status RestartFault::Validate() {
  std::string mode = o_.Param("restart", "no-persistence");
  if (mode != "no-persistence" && mode != "aof-always") {
    return Status::Usage("fault restart: param 'restart': '" + mode +
                         "': expected no-persistence or aof-always");
  }
  return Status::Ok();
}

nlohmann::json RestartFault::Open(LabControl& lab, Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) lab.KillNode(n);
  lab.Log("restart: nodes killed (SIGKILL), down for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}, {"restart", o_.Param("restart", "no-persistence")}};
}

void RestartFault::Close(LabControl& lab, Nanos) {
  for (int n : NodesOr(1)) {
    Status s = lab.RestartNode(n);
    if (!s.ok()) lab.Log("restart: node n" + std::to_string(n) + " did not come back: " + s.message());
  }
}

FailoverFault::FailoverFault(FaultOptions o, uint64_t seed) : WindowedFault(std::move(o), seed) {
  if (o_.windows == 0) o_.windows = 1;  // one failover per trial unless asked for more
}

Status FailoverFault::Validate() {
  std::string v = o_.Param("kill_after_ms", "300");
  try {
    size_t used = 0;
    long long ms = std::stoll(v, &used);
    if (used != v.size() || ms < 0 || ms > 3600000) throw 1;
    kill_after_ = Millis(ms);
  } catch (...) {
    return Status::Usage("fault failover: param 'kill_after_ms': '" + v + "': expected 0..3600000");
  }
  if (o_.duration <= kill_after_) o_.duration = kill_after_ + Millis(5000);
  return Status::Ok();
}

nlohmann::json FailoverFault::Open(LabControl& lab, Nanos, int process) {
  // The race of the Redis docs starts from a free lock: the armed client stopped itself
  // right after its release (the delete has run and replicated), the stream is cut, and
  // the next lock written is the one that never reaches the replica.
  Status s = lab.CutReplication(true);
  lab.ResumeClient(process);
  if (!s.ok()) {
    lab.Log("failover: " + s.message());
    return nullptr;  // (the window code resumes the client)
  }
  killed_ = false;
  acquires_at_cut_ = lab.AcquiresSeen();
  lab.Log("failover: client " + std::to_string(process) + " released; replication n1 -> r1 cut; n1 dies " +
          std::to_string(kill_after_.count()) + " ms after the next acquire");
  return {{"nodes", {1}}, {"replica", "r1"}, {"kill_after_ms", kill_after_.count()},
          {"released_by", process}};
}

void FailoverFault::OnClientEvent(LabControl& lab, Nanos now) {
  if (IsOpen()) {
    // An acquire reported within the first millisecond may have run before the cut (its
    // event was on its way); a wrong guess here costs a missed detection, never a false one.
    if (now < opened_at_ + Millis(1)) acquires_at_cut_ = lab.AcquiresSeen();
  }
}

void FailoverFault::WhileOpen(LabControl& lab, Nanos now) {
  if (killed_ || now < opened_at_ + kill_after_) return;
  next_check_ = now + Millis(10);
  if (lab.AcquiresSeen() == acquires_at_cut_) return;  // no unreplicated lock yet
  lab.KillNode(1);
  killed_ = true;
  lab.Log("failover: n1 killed (SIGKILL); Sentinel promotes r1");
}

void FailoverFault::Close(LabControl& lab, Nanos) {
  lab.CutReplication(false);
  if (killed_) {
    Status s = lab.RestartNode(1);
    if (!s.ok()) lab.Log("failover: old master did not restart: " + s.message());
  }
  killed_ = false;
}

}  // namespace locklab::faults
