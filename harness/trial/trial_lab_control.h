// TrialLab and TrialLabControl: what a trial's faults act on.
//
// TrialLab holds one trial's servers: the lock nodes and the resource node, either started
// by the lab (LabCluster, with a Sentinel topology for the failover fault) or the user's own
// (ExternalEndpoints), and the fault proxy every client connection goes through (link
// "cP-nN", "cP-resource"). The trial's setup fills it in; its teardown stops it.
//
// TrialLabControl implements faults::LabControl over a TrialLab, the ClientFleet and the
// TrialRecorder: a fault pauses, crashes or arms clients, pauses, kills, restarts or skews
// nodes (lab-started or, with --endpoint-control, the user's), cuts proxy links, and records
// its windows as nemesis events in the history. It owns none of them. Not thread-safe:
// faults run on the trial's one thread (its event loop).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/fault_proxy.h"
#include "harness/trial/client_fleet.h"
#include "harness/trial/endpoints.h"
#include "harness/lab/lab_cluster.h"
#include "harness/lab/sentinel_topology.h"
#include "harness/trial/trial_recorder.h"
#include "locks/lock.h"

namespace locklab::harness {

struct TrialLab {
  std::unique_ptr<LabCluster> cluster;           // lab-started nodes; null with --endpoints
  std::unique_ptr<ExternalEndpoints> endpoints;  // --endpoints: the user's servers
  faults::FaultProxy proxy;
  std::unique_ptr<SentinelTopology> topology;    // the failover fault: n1's replica, sentinels

  int node_count() const;
  // Lock node n (1-based) or the resource node (0), lab-started or the user's.
  locks::Endpoint NodeEndpoint(int n) const;
  // Lab-started lock node n, null when none.
  LabNode* Node(int n) const;
  // The proxy link between client p and node n (0: the resource node).
  static std::string LinkName(int p, int node) {
    return "c" + std::to_string(p) + (node == 0 ? "-resource" : "-n" + std::to_string(node));
  }
  void Stop();
};

class TrialLabControl : public faults::LabControl {
 public:
  TrialLabControl(TrialLab* lab, ClientFleet* clients, TrialRecorder* recorder)
      : lab_(lab), clients_(clients), recorder_(recorder) {}

  // The run phase's end; Nanos::max() until the run starts.
  void set_run_end(Nanos end) { run_end_ = end; }
  // The lock nodes a fault holds stopped now (PauseNode until ResumeNode), for LabWatch.
  const std::set<int>& paused_nodes() const { return paused_nodes_; }

  int client_count() const override { return clients_->size(); }
  Nanos run_end() const override { return run_end_; }
  int node_count() const override { return lab_->node_count(); }
  bool ClientRunning(int p) const override { return clients_->Running(p); }
  bool PauseClient(int p) override { return clients_->Pause(p); }
  bool ResumeClient(int p) override { return clients_->Resume(p); }
  bool CrashClient(int p) override { return clients_->Crash(p); }
  void ArmPoint(int p, const std::string& point, const std::string& action) override {
    clients_->Arm(p, point, action);
  }
  void DisarmPoints(int p) override { clients_->Disarm(p); }
  std::vector<int> Holders() const override { return clients_->Holders(); }
  std::vector<faults::HeldLock> HeldLocks(int process) const override { return clients_->HeldLocks(process); }
  int64_t AcquiresSeen() const override { return clients_->acquires_seen(); }
  int LastReleaser() const override { return clients_->last_releaser(); }
  bool PauseNode(int n) override;
  bool ResumeNode(int n) override;
  void KillNode(int n) override;
  Status RestartNode(int n) override;
  Status SetNodeClock(int n, const std::string& offset) override;
  Status SetClientClock(int p, const std::string& offset) override {
    return clients_->SetClock(p, offset);
  }
  Status SetLink(int p, int node, const faults::LinkState& state) override {
    return lab_->proxy.SetLink(TrialLab::LinkName(p, node), state);
  }
  Status CutReplication(bool cut) override;
  Status SetNodeConfig(int n, const std::string& name, const std::string& value) override;
  // Evidence probes (faults/lab_control.h): /proc for processes the lab started (or, with
  // --endpoint-control, the pid file names), short direct connections to Redis nodes (the
  // user's too), the proxy's counters, the clients' own reports.
  faults::ProcessSeen ClientProcess(int p) const override;
  void AskClientClock(int p) override { clients_->AskClock(p); }
  bool ClientClock(int p, faults::ClockSeen* out) const override {
    return clients_->ClockReport(p, &out->offset_s, &out->at);
  }
  bool ClientSlowEnded(int p, faults::SlowSeen* out) const override {
    return clients_->SlowReport(p, &out->point, &out->slept, &out->at);
  }
  faults::ProcessSeen NodeProcess(int n) const override;
  faults::ServingSeen NodeServing(int n) override;
  Status NodeWriteProbe(int n, std::string* reply) override;
  Status ProbeFailover(const std::vector<std::string>& keys, faults::FailoverSeen* out) override;
  Status ReadNodeClock(int n, double* node_s, double* real_s, double* rtt_s) override;
  faults::LinkBytes LinkCounters(int p, int node) const override {
    return lab_->proxy.Counters(TrialLab::LinkName(p, node));
  }
  void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
              Nanos time) override {
    recorder_->WriteLabEvent("nemesis", "info", f, fault, value, time);
  }
  void Log(const std::string& line) override { recorder_->Log(line); }

 private:
  TrialLab* lab_;
  ClientFleet* clients_;
  TrialRecorder* recorder_;
  Nanos run_end_ = Nanos::max();
  std::set<int> paused_nodes_;
};

}  // namespace locklab::harness
