#include "harness/trial_lab_control.h"

#include <signal.h>

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
  return node && node->Signal(SIGSTOP);
}

bool TrialLabControl::ResumeNode(int n) {
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

}  // namespace locklab::harness
