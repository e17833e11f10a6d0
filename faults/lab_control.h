// LabControl: the lab as a fault sees it, in five small facets, so that each fault effect
// names the part of the lab it acts on (a server pause needs NodeControl and nothing else).
// The harness implements LabControl, which inherits every facet; faults/ depends on nothing
// in the harness (harness/trial/trial_lab_control.h implements it). Clients are history process ids 1..client_count(); lock nodes are
// 1..node_count() (named n1..nN); node 0 is the resource node where a call allows it.
// Not thread-safe: called from the harness's single event loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "faults/link_state.h"

namespace locklab::faults {

// What the lab sees of one process, for a fault's evidence: its pid and the state letter of
// /proc/PID/stat ('R', 'S', 'T' stopped, 'Z' dead, not yet reaped; 0: no such process).
// `visible` false: the lab cannot look at it (a server it did not start), `why` says so.
struct ProcessSeen {
  bool visible = false;
  int pid = 0;
  char state = 0;
  std::string why;
};

// A client's report of its own wall clock (libfaketime's, when it runs under it), taken
// against the harness's real CLOCK_REALTIME when the report arrived.
struct ClockSeen {
  double offset_s = 0;  // the client's wall clock minus the real one, in seconds
  Nanos at{0};          // when the report arrived (MonotonicNow)
};

// A client's report that an armed slow:MS section ended.
struct SlowSeen {
  std::string point;
  Millis slept{0};  // how long it stayed, measured on its monotonic clock
  Nanos at{0};      // when the report arrived (MonotonicNow)
};

// A node's own answer about who serves: its pid and, for Redis, its run_id (new at every
// start). `answered` false: `error` says why.
struct ServingSeen {
  bool answered = false;
  int pid = 0;
  std::string run_id;
  std::string error;
};

// Failover as the servers tell it: the replica's own ROLE and the master the sentinels name.
struct FailoverSeen {
  std::string replica_role;    // "master", "slave", or "" when it did not answer
  std::string replica;         // its address "127.0.0.1:P"
  std::string sentinel_master;  // the master the sentinels name, "" when none answered
  // The keys asked for, read on the replica over a direct connection: their value, "" for
  // none (nil). A key the replica did not answer for is not in the map.
  std::map<std::string, std::string> replica_keys;
};

// A lock a client holds now, as its own events say: the key and the token its acquire got.
struct HeldLock {
  std::string key, token;
};

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
  // What client `process` holds right now (key and token), as its own events say.
  virtual std::vector<HeldLock> HeldLocks(int process) const {
    (void)process;
    return {};
  }
  // The client that most recently completed a release (ok, fail or info: it is done with
  // that lease), as its own events say; 0 when none has yet.
  virtual int LastReleaser() const { return 0; }
  // How many acquires have completed ok so far (all clients).
  virtual int64_t AcquiresSeen() const = 0;
  // Evidence probes (faults/effect.h, Probe). Defaults: nothing to see.
  // The client's process as /proc shows it now.
  virtual ProcessSeen ClientProcess(int process) const {
    (void)process;
    return {false, 0, 0, "the lab does not see client processes here"};
  }
  // Asks the client for its wall clock; it answers at its next pause point (ClientClock).
  virtual void AskClientClock(int process) { (void)process; }
  // The client's last clock report; false when none arrived.
  virtual bool ClientClock(int process, ClockSeen* out) const {
    (void)process;
    (void)out;
    return false;
  }
  // The client's last report of an armed slow section's end; false when none arrived.
  virtual bool ClientSlowEnded(int process, SlowSeen* out) const {
    (void)process;
    (void)out;
    return false;
  }
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
  // Evidence probes: short direct connections (not the proxy), at most ~200 ms each.
  // The node's server process as /proc shows it now.
  virtual ProcessSeen NodeProcess(int node) const {
    (void)node;
    return {false, 0, 0, "the lab does not see node processes here"};
  }
  // Who serves on the node now (Redis: INFO server; other servers: the lab's process and
  // its readiness probe).
  virtual ServingSeen NodeServing(int node) {
    (void)node;
    return {false, 0, "", "no probe for this node"};
  }
  // The reply of a write that changes nothing ("SET <probe key> 1 XX": the key never
  // exists), so a node out of memory answers "OOM ..." and any other node "nil".
  virtual Status NodeWriteProbe(int node, std::string* reply) {
    (void)node;
    (void)reply;
    return Status::Usage("no write probe for this node");
  }
  // The failover topology's replica and sentinels, now.
  // The replica's role, the sentinels' master, and `keys` as the replica has them.
  virtual Status ProbeFailover(const std::vector<std::string>& keys, FailoverSeen* out) {
    (void)keys;
    (void)out;
    return Status::Usage("no failover topology");
  }
};

// Wall clocks, through libfaketime control files: offsets "+20s", "-30s", "+0".
class ClockControl {
 public:
  virtual ~ClockControl() = default;
  virtual Status SetNodeClock(int node, const std::string& offset) = 0;
  virtual Status SetClientClock(int process, const std::string& offset) = 0;
  // The node's own clock through its protocol (Redis TIME over a direct connection), in
  // seconds since the epoch, and the real CLOCK_REALTIME at the middle of the round trip;
  // `rtt_s` is the round trip (the reading's uncertainty).
  virtual Status ReadNodeClock(int node, double* node_s, double* real_s, double* rtt_s) {
    (void)node;
    (void)node_s;
    (void)real_s;
    (void)rtt_s;
    return Status::Usage("no clock probe for this node");
  }
};

// The fault proxy's links.
class NetworkControl {
 public:
  virtual ~NetworkControl() = default;
  // The link between a client and a node (0 = the resource node).
  virtual Status SetLink(int process, int node, const LinkState& state) = 0;
  // What the proxy did to the link's bytes so far (evidence probe).
  virtual LinkBytes LinkCounters(int process, int node) const {
    (void)process;
    (void)node;
    return {};
  }
};

// The run's record: when it ends, its history's nemesis events, and the lab log.
class RunJournal {
 public:
  virtual ~RunJournal() = default;
  // When the run phase ends (MonotonicNow time); the teardown heals every fault then.
  virtual Nanos run_end() const { return Nanos::max(); }
  // Appends a nemesis event, key = fault id: f = "plan" (the schedule, at setup), "arm" (a
  // pause point armed), "start" / "stop" (a window opened / closed), "effect" (what the
  // window was seen to do: {"seen":B,"evidence":"one line","window":N,...}).
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
