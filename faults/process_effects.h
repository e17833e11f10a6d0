// Effects on processes: client-pause, slow-cs, client-crash (clients, through
// ClientControl), server-pause and restart (lock nodes, through NodeControl); failover's effect
// lives with its descriptor (catalog/failover.cc).
// See ListFaults() for their parameters and defaults. Not thread-safe (faults/effect.h).
#pragma once

#include <algorithm>
#include <map>

#include "faults/effect.h"

namespace locklab::faults {

// A stop-the-world pause (SIGSTOP/SIGCONT of the whole client process group): targeted at a
// pause point (the client stops itself there) or at random times.
class ClientPauseEffect : public Effect {
 public:
  using Effect::Effect;
  // mode=targeted arms `point`; mode=random pauses at the window's time (ArmedPoint gives ""
  // in random mode, so Effect's Shape makes the schedule timed).
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // The client's process in state T.
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override { clients_ = &lab; }
  Status Validate() override;

 private:
  ClientControl* clients_ = nullptr;
  int paused_ = 0;
};

// A slow critical section: the client stays in it `duration` longer, fully running (its
// renewal thread too). Unlike a pause, the process is healthy: only slow.
class SlowCsEffect : public Effect {
 public:
  using Effect::Effect;
  std::string ArmedAction() const override {
    return "slow:" + std::to_string(o_.duration.count());
  }
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos) override {}
  // The client's own report that its slow sleep ended after the whole `duration` (it comes
  // as the window's time is up, hence the grace).
  Evidence Probe(Nanos now, ProbeMoment when) override;
  Millis EvidenceGrace() const override { return Millis(1000); }

 protected:
  void Attach(LabControl& lab) override { clients_ = &lab; }
  Status Validate() override;

 private:
  const ClientControl* clients_ = nullptr;
  int process_ = 0;
  Nanos opened_at_{0};
};

// SIGKILL of a client that just acquired (armed at after-acquire): the liveness case.
class ClientCrashEffect : public Effect {
 public:
  using Effect::Effect;
  // Armed at `point`; a crashed client stays dead: one window unless asked for more.
  void Shape(Schedule* schedule) const override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos) override {}
  // The client's process gone (or dead, not yet reaped: state Z).
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override { clients_ = &lab; }
  Status Validate() override;

 private:
  ClientControl* clients_ = nullptr;
  int crashed_ = 0;
};

// An effect that acts on lock node processes only (NodeControl).
class NodeEffect : public Effect {
 public:
  using Effect::Effect;

 protected:
  void Attach(LabControl& lab) override { nodes_ = &lab; }
  NodeControl* nodes_ = nullptr;
};

// SIGSTOP/SIGCONT of lock nodes (default n1).
class ServerPauseEffect : public NodeEffect {
 public:
  using NodeEffect::NodeEffect;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Every paused node's server process in state T.
  Evidence Probe(Nanos now, ProbeMoment when) override;
};

// Lock nodes out of memory: maxmemory is set far below what the node uses, with the
// noeviction policy, so every write that may grow the dataset (SET, SETNX, INCR, ...) gets
// the error reply "-OOM command not allowed when used memory > 'maxmemory'" while reads,
// DEL and EXPIRE still work. An error reply is a definite answer, unlike a timeout: a lock
// must take it as "not acquired". The window's close sets maxmemory back to 0 (no limit).
class MemoryFullEffect : public NodeEffect {
 public:
  using NodeEffect::NodeEffect;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Every node answers a write (one that changes nothing) with an OOM error.
  Evidence Probe(Nanos now, ProbeMoment when) override;
};

// kill -9 of lock nodes, restarted when the window closes (`duration` is the downtime).
// restart = no-persistence (comes back empty) | aof-always (appendfsync always: keeps keys).
class RestartEffect : public NodeEffect {
 public:
  using NodeEffect::NodeEffect;
  std::vector<std::string> NodeArgs() const override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // After the restart: every node answers, served by another process than before the kill
  // (a new pid, or for Redis a new run_id).
  Evidence Probe(Nanos now, ProbeMoment when) override;
  Millis EvidenceGrace() const override { return Millis(2000); }

 protected:
  Status Validate() override;

 private:
  std::map<int, ServingSeen> before_;  // node -> who served it before the kill
};

}  // namespace locklab::faults
