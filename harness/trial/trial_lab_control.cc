#include "harness/trial/trial_lab_control.h"

#include <signal.h>

#include <cstdlib>

#include "locks/redis_connection.h"

namespace locklab::harness {

int TrialLab::node_count() const {
  if (endpoints) return endpoints->node_count();
  return cluster ? static_cast<int>(cluster->nodes().size()) : 0;
}

locks::Endpoint TrialLab::NodeEndpoint(int n) const {
  if (endpoints) return endpoints->endpoint(n);
  return n == 0 ? cluster->resource().endpoint() : Node(n)->endpoint();
}

LabNode* TrialLab::Node(int n) const {
  if (!cluster || n < 1 || n > node_count()) return nullptr;
  return cluster->nodes()[n - 1].get();
}

void TrialLab::Stop() {
  if (topology) topology->Stop();
  proxy.Stop();
  if (cluster) cluster->Stop();
}

bool TrialLabControl::PauseNode(int n) {
  if (lab_->endpoints) return lab_->endpoints->Pause(n);
  LabNode* node = lab_->Node(n);
  paused_nodes_.insert(n);  // before the signal: the watch may look at once
  return node && node->Signal(SIGSTOP);
}

bool TrialLabControl::ResumeNode(int n) {
  paused_nodes_.erase(n);
  if (lab_->endpoints) return lab_->endpoints->Resume(n);
  LabNode* node = lab_->Node(n);
  return node && node->Signal(SIGCONT);
}

void TrialLabControl::KillNode(int n) {
  if (lab_->endpoints) return lab_->endpoints->Kill(n);
  if (LabNode* node = lab_->Node(n)) node->Kill();
}

Status TrialLabControl::RestartNode(int n) {
  if (lab_->endpoints) return lab_->endpoints->Restart(n);
  LabNode* node = lab_->Node(n);
  if (!node) return Status::Usage("no node n" + std::to_string(n));
  Status s = node->Restart();
  if (s.ok()) recorder_->Log("node " + node->name() + " restarted pid " + std::to_string(node->pid()));
  return s;
}

Status TrialLabControl::SetNodeClock(int n, const std::string& offset) {
  if (lab_->endpoints) return lab_->endpoints->SetClock(n, offset);
  LabNode* node = lab_->Node(n);
  if (!node) return Status::Usage("no node n" + std::to_string(n));
  return node->clock().Set(offset);
}

Status TrialLabControl::CutReplication(bool cut) {
  if (!lab_->topology) return Status::Usage("no replica: this trial has no failover topology");
  return lab_->topology->CutReplication(cut);
}

Status TrialLabControl::SetNodeConfig(int n, const std::string& name, const std::string& value) {
  if (lab_->endpoints) return Status::Usage("CONFIG SET needs lab-started nodes, not --endpoints");
  LabNode* node = lab_->Node(n);
  if (!node) return Status::Usage("no node n" + std::to_string(n));
  // Short timeouts: this runs on the event loop. A paused node runs the command on SIGCONT.
  locks::RedisConnection c(node->endpoint(), Millis(200), Millis(200));
  locks::Reply r = c.Command({"CONFIG", "SET", name, value});
  if (r.outcome != locks::Outcome::kOk) return Status::Infrastructure("CONFIG SET " + name + ": " + r.transport_error);
  if (r.is_error) return Status::Infrastructure("CONFIG SET " + name + ": " + r.str);
  return Status::Ok();
}

// ---- evidence probes -------------------------------------------------------------------

namespace {

// Whether node n is a Redis (its protocol answers TIME, INFO, SET): lab Redis nodes and
// every --endpoints node.
bool IsRedisNode(const TrialLab& lab, int n) {
  if (lab.endpoints) return true;
  LabNode* node = lab.Node(n);
  return node && node->kind() == locks::Backend::kRedis;
}

std::string Addr(const locks::Endpoint& e) { return e.host + ":" + std::to_string(e.port); }

// The value of `field` in an INFO reply ("process_id:1234\r\n"), "" when absent.
std::string InfoField(const std::string& info, const std::string& field) {
  size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  at += field.size() + 1;
  return info.substr(at, info.find_first_of("\r\n", at) - at);
}

}  // namespace

faults::ProcessSeen TrialLabControl::ClientProcess(int p) const {
  pid_t pid = clients_->Pid(p);
  if (pid <= 0) return {false, 0, 0, "client " + std::to_string(p) + " has no process the lab knows"};
  return {true, pid, ProcessState(pid), ""};
}

faults::ProcessSeen TrialLabControl::NodeProcess(int n) const {
  if (lab_->endpoints) {
    pid_t pid = lab_->endpoints->ControlledPid(n);
    if (pid <= 0) {
      return {false, 0, 0, "--endpoints: the lab sees no process of n" + std::to_string(n) +
                               " (no --endpoint-control pid file for it on this machine)"};
    }
    return {true, pid, ProcessState(pid), ""};
  }
  LabNode* node = lab_->Node(n);
  if (!node) return {false, 0, 0, "no node n" + std::to_string(n)};
  return {true, node->pid(), ProcessState(node->pid()), ""};
}

faults::ServingSeen TrialLabControl::NodeServing(int n) {
  faults::ServingSeen out;
  if (!IsRedisNode(*lab_, n)) {
    // Other servers answered their readiness probe when they (re)started (LabNode::Restart
    // kills a node that does not): a running process is one that answered.
    LabNode* node = lab_->Node(n);
    out.answered = node && node->Running();
    out.pid = node ? node->pid() : 0;
    if (!out.answered) out.error = "node n" + std::to_string(n) + " is not running";
    return out;
  }
  locks::RedisConnection c(lab_->NodeEndpoint(n), Millis(200), Millis(200));
  locks::Reply r = c.Command({"INFO", "server"});
  if (r.outcome != locks::Outcome::kOk || r.is_error) {
    out.error = "INFO server: " + (r.is_error ? r.str : r.transport_error);
    return out;
  }
  out.answered = true;
  out.pid = std::atoi(InfoField(r.str, "process_id").c_str());
  out.run_id = InfoField(r.str, "run_id");
  return out;
}

Status TrialLabControl::NodeWriteProbe(int n, std::string* reply) {
  if (!IsRedisNode(*lab_, n)) return Status::Usage("node n" + std::to_string(n) + " is not a Redis");
  // XX: set only if the key exists, and it never does, so the write changes nothing; a node
  // out of memory refuses it before looking (SET may grow the dataset).
  locks::RedisConnection c(lab_->NodeEndpoint(n), Millis(200), Millis(200));
  locks::Reply r = c.Command({"SET", "locklab:evidence-probe", "1", "XX"});
  if (r.outcome != locks::Outcome::kOk) return Status::Infrastructure("SET: " + r.transport_error);
  *reply = r.is_error ? r.str : r.is_nil ? "nil" : r.str;
  return Status::Ok();
}

Status TrialLabControl::ProbeFailover(const std::vector<std::string>& keys, faults::FailoverSeen* out) {
  if (!lab_->topology) return Status::Usage("no replica: this trial has no failover topology");
  const locks::Endpoint replica = lab_->topology->replica().endpoint();
  out->replica = Addr(replica);
  locks::RedisConnection c(replica, Millis(200), Millis(200));
  locks::Reply r = c.Command({"ROLE"});
  if (r.outcome == locks::Outcome::kOk && !r.is_error && !r.elements.empty()) {
    out->replica_role = r.elements[0].str;
  }
  // The lost write itself: is the lock key the old master acknowledged on the replica?
  for (const auto& key : keys) {
    locks::Reply g = c.Command({"GET", key});
    if (g.outcome == locks::Outcome::kOk && !g.is_error) out->replica_keys[key] = g.is_nil ? "" : g.str;
  }
  locks::Endpoint master = lab_->topology->CurrentMaster();
  if (!master.host.empty()) out->sentinel_master = Addr(master);
  return Status::Ok();
}

Status TrialLabControl::ReadNodeClock(int n, double* node_s, double* real_s, double* rtt_s) {
  if (!IsRedisNode(*lab_, n)) return Status::Usage("node n" + std::to_string(n) + " has no clock probe (not a Redis)");
  // A direct connection, not the proxy: a partition must not hide the clock.
  locks::RedisConnection c(lab_->NodeEndpoint(n), Millis(200), Millis(200));
  const double before = RealClockSeconds();
  locks::Reply r = c.Command({"TIME"});
  const double after = RealClockSeconds();
  if (r.outcome != locks::Outcome::kOk || r.is_error || r.elements.size() != 2) {
    return Status::Infrastructure(r.is_error ? r.str : r.outcome != locks::Outcome::kOk ? r.transport_error
                                                                                         : "no answer");
  }
  *node_s = std::atof(r.elements[0].str.c_str()) + std::atof(r.elements[1].str.c_str()) / 1e6;
  *real_s = (before + after) / 2;
  *rtt_s = after - before;
  return Status::Ok();
}

}  // namespace locklab::harness
