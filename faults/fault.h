// Faults ("nemeses"): what breaks locks in production, applied from outside the lock.
//
// A Fault has Setup / Tick / Teardown (DESIGN.md 4). The harness calls Tick from its event
// loop whenever NextWakeup() has passed, and OnPausePoint when a client reports that it
// reached a point the fault armed. Teardown heals everything the fault did and is called on
// every exit path, including interrupts. Every start and stop is recorded as a nemesis event
// through LabControl::Record. Faults see the lab only through LabControl, which the harness
// implements, so faults/ depends on nothing in harness/, and locks/ on nothing here. Each
// fault draws from its own seeded Rng: the same seed gives the same schedule.
// Not thread-safe: driven by the harness's single event loop.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/random.h"
#include "base/status.h"
#include "faults/fault_proxy.h"

namespace locklab::faults {

// The lab as a fault sees it. Clients are history process ids 1..client_count(); lock nodes
// are 1..node_count() (named n1..nN); node 0 is the resource node where a call allows it.
class LabControl {
 public:
  virtual ~LabControl() = default;
  virtual int client_count() const = 0;
  virtual int node_count() const = 0;
  // When the run phase ends (MonotonicNow time); the teardown heals every fault then.
  virtual Nanos run_end() const { return Nanos::max(); }
  virtual bool ClientRunning(int process) const = 0;
  // SIGSTOP / SIGCONT of the client's whole process group (a stop-the-world pause).
  virtual bool PauseClient(int process) = 0;
  virtual bool ResumeClient(int process) = 0;
  // SIGKILL of the client's process group; it does not come back.
  virtual bool CrashClient(int process) = 0;
  // Asks the client to act the next time it reaches `point`: action "pause" (stop itself,
  // the fault resumes it) or "slow:MS" (stay inside for MS more, running).
  virtual void ArmPoint(int process, const std::string& point, const std::string& action) = 0;
  virtual void DisarmPoints(int process) = 0;
  // Clients that hold a lock right now, as their own events say.
  virtual std::vector<int> Holders() const = 0;
  // How many acquires have completed ok so far (all clients).
  virtual int64_t AcquiresSeen() const = 0;
  // Lock nodes.
  virtual bool PauseNode(int node) = 0;
  virtual bool ResumeNode(int node) = 0;
  virtual void KillNode(int node) = 0;
  virtual Status RestartNode(int node) = 0;
  // libfaketime control files: "+20s", "-30s", "+0".
  virtual Status SetNodeClock(int node, const std::string& offset) = 0;
  virtual Status SetClientClock(int process, const std::string& offset) = 0;
  // Cuts (true) or heals the replication stream from n1 to its replica (Sentinel setups).
  virtual Status CutReplication(bool cut) = 0;
  // The fault proxy link between a client and a node (0 = the resource node).
  virtual Status SetLink(int process, int node, const LinkState& state) = 0;
  // Appends a nemesis event, key = fault id: f = "plan" (the schedule, at setup), "arm" (a
  // pause point armed), "start" / "stop" (a window opened / closed).
  virtual void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
                      Nanos time) = 0;
  virtual void Log(const std::string& line) = 0;
};

struct FaultOptions {
  std::string id = "none";
  Millis first_at{1000};             // the first window opens this long after the start
  Millis duration{1500};             // how long each window lasts (pause length, partition...)
  Millis interval{2000};             // quiet time between the end of one window and the next
  int windows = 0;                   // how many windows at most; 0: as many as fit
  std::vector<int> targets;          // clients; empty: drawn from the seed (or all)
  std::vector<int> nodes;            // lock nodes (1-based); empty: the fault's default
  // Fault-specific parameters, validated by the fault ("mode", "point", "offset", "rate",
  // "delay_ms", "shape", "restart", ...). FaultInfo lists them with their defaults.
  std::map<std::string, std::string> params;
  std::string Param(const std::string& key, const std::string& fallback) const {
    auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
  }
};

class Fault {
 public:
  virtual ~Fault() = default;
  virtual const char* id() const = 0;
  // Extra redis-server arguments for the lock nodes (before they start), e.g. AOF.
  virtual std::vector<std::string> NodeArgs() const { return {}; }
  // Whether clients must run under libfaketime with their own control file.
  virtual bool NeedsClientClock() const { return false; }
  // Whether the lab needs a replica of n1 and three sentinels (clients then find the
  // master through Sentinel).
  virtual bool NeedsSentinel() const { return false; }
  // Checks the options against a lab of `clients` clients and `nodes` lock nodes before
  // anything starts (targets, nodes, params); Setup checks the same again. Usage errors
  // name the fault.
  virtual Status CheckOptions(int clients, int nodes) {
    (void)clients;
    (void)nodes;
    return Status::Ok();
  }
  // `start` is the run's start time (MonotonicNow).
  virtual Status Setup(LabControl& lab, Nanos start) = 0;
  virtual void Tick(LabControl& lab, Nanos now) = 0;
  // A client reached an armed point (it stopped itself, or is slowing down). Returns false
  // when this fault did not arm it; the harness then resumes a stopped client.
  virtual bool OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) = 0;
  virtual void Teardown(LabControl& lab, Nanos now) = 0;
  // Called after each client history event, for faults that wait for a moment in the
  // workload (a free lock) rather than for a time.
  virtual void OnClientEvent(LabControl& lab, Nanos now) { (void)lab; (void)now; }
  // When Tick next has something to do (Nanos::max() for never).
  virtual Nanos NextWakeup() const = 0;
};

struct FaultParamInfo {
  std::string name;
  std::string default_value;
  std::string description;
};

struct FaultInfo {
  std::string id;
  std::string description;
  std::vector<FaultParamInfo> params;
};
const std::vector<FaultInfo>& ListFaults();
const FaultInfo* FindFault(const std::string& id);
// Usage error naming the first of `o.params` that `info` (o.id's entry) does not list:
// "fault clock-jump has no param 'ofset' (its params: offset, revert)".
Status CheckFaultParams(const FaultOptions& o, const FaultInfo& info);
// Whether a fault acts from the client side only (client processes, their clocks, the fault
// proxy), so it runs against servers the lab does not control (--endpoints). Faults not
// listed as client-side (new ones included) are treated as needing the servers.
bool IsClientSideFault(const std::string& id);
// Whether a fault acts only on the lock nodes themselves (their clocks, SIGSTOP/SIGCONT,
// kill and restart; not a replica or sentinels): it runs against servers the lab did not
// start when they are under its control (--endpoint-control, docker/node-entrypoint.sh).
bool IsNodeControlFault(const std::string& id);

// The named points where a client can act: after-acquire (acquire returned ok),
// before-write (inside the critical section: the counter read, the write not yet sent),
// after-release (the release returned: the lock was just given back),
// redlock-replies-in-flight (Redlock's SETs sent, replies not yet read).
bool IsPausePoint(const std::string& point);

// Validates options against the fault's FaultInfo (unknown params are errors).
Status MakeFault(const FaultOptions& options, uint64_t seed, std::unique_ptr<Fault>* out);

}  // namespace locklab::faults
