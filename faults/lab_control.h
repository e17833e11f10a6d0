// LabControl: the lab as a fault sees it, in five small facets, so that each fault effect
// names the part of the lab it acts on (a server pause needs NodeControl and nothing else).
// The harness implements LabControl, which inherits every facet; faults/ depends on nothing
// in harness/. Clients are history process ids 1..client_count(); lock nodes are
// 1..node_count() (named n1..nN); node 0 is the resource node where a call allows it.
// Not thread-safe: called from the harness's single event loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "faults/link_state.h"

namespace locklab::faults {

// Client processes: signals, pause points, and what their own events say.
class ClientControl {
 public:
  virtual ~ClientControl() = default;
  virtual int client_count() const = 0;
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
  // The client that most recently completed a release (ok, fail or info: it is done with
  // that lease), as its own events say; 0 when none has yet.
  virtual int LastReleaser() const { return 0; }
  // How many acquires have completed ok so far (all clients).
  virtual int64_t AcquiresSeen() const = 0;
};

// Lock node processes (and, for failover, n1's replication stream).
class NodeControl {
 public:
  virtual ~NodeControl() = default;
  virtual int node_count() const = 0;
  virtual bool PauseNode(int node) = 0;
  virtual bool ResumeNode(int node) = 0;
  virtual void KillNode(int node) = 0;
  virtual Status RestartNode(int node) = 0;
  // Cuts (true) or heals the replication stream from n1 to its replica (Sentinel setups).
  virtual Status CutReplication(bool cut) = 0;
  // CONFIG SET `name` `value` on the node, over a direct connection (not through the fault
  // proxy, so a partition does not stop it). A node that does not answer in time (paused)
  // still has the command in its socket and runs it when it resumes.
  virtual Status SetNodeConfig(int node, const std::string& name, const std::string& value) = 0;
};

// Wall clocks, through libfaketime control files: offsets "+20s", "-30s", "+0".
class ClockControl {
 public:
  virtual ~ClockControl() = default;
  virtual Status SetNodeClock(int node, const std::string& offset) = 0;
  virtual Status SetClientClock(int process, const std::string& offset) = 0;
};

// The fault proxy's links.
class NetworkControl {
 public:
  virtual ~NetworkControl() = default;
  // The link between a client and a node (0 = the resource node).
  virtual Status SetLink(int process, int node, const LinkState& state) = 0;
};

// The run's record: when it ends, its history's nemesis events, and the lab log.
class RunJournal {
 public:
  virtual ~RunJournal() = default;
  // When the run phase ends (MonotonicNow time); the teardown heals every fault then.
  virtual Nanos run_end() const { return Nanos::max(); }
  // Appends a nemesis event, key = fault id: f = "plan" (the schedule, at setup), "arm" (a
  // pause point armed), "start" / "stop" (a window opened / closed).
  virtual void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
                      Nanos time) = 0;
  virtual void Log(const std::string& line) = 0;
};

class LabControl : public ClientControl,
                   public NodeControl,
                   public ClockControl,
                   public NetworkControl,
                   public RunJournal {};

}  // namespace locklab::faults
