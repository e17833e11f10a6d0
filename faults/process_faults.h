// Faults on processes: client-pause, slow-cs, client-crash (clients), server-pause and
// restart (lock nodes). See ListFaults() for their parameters and defaults.
#pragma once

#include "faults/windowed_fault.h"

namespace locklab::faults {

// A stop-the-world pause (SIGSTOP/SIGCONT of the whole client process group): targeted at a
// pause point (the client stops itself there) or at random times.
class ClientPauseFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "client-pause"; }

 protected:
  Status Validate() override;
  std::string ArmedPoint() const override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;

 private:
  int paused_ = 0;
};

// A slow critical section: the client stays in it `duration` longer, fully running (its
// renewal thread too). Unlike a pause, the process is healthy: only slow.
class SlowCsFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "slow-cs"; }

 protected:
  Status Validate() override;
  std::string ArmedPoint() const override { return o_.Param("point", "after-acquire"); }
  std::string ArmedAction() const override {
    return "slow:" + std::to_string(o_.duration.count());
  }
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl&, Nanos) override {}
};

// SIGKILL of a client that just acquired (armed at after-acquire): the liveness case.
class ClientCrashFault : public WindowedFault {
 public:
  ClientCrashFault(FaultOptions o, uint64_t seed);
  const char* id() const override { return "client-crash"; }

 protected:
  std::string ArmedPoint() const override { return o_.Param("point", "after-acquire"); }
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl&, Nanos) override {}
};

// SIGSTOP/SIGCONT of lock nodes (default n1).
class ServerPauseFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "server-pause"; }

 protected:
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
};

// kill -9 of lock nodes, restarted when the window closes (`duration` is the downtime).
// restart = no-persistence (comes back empty) | aof-always (appendfsync always: keeps keys).
class RestartFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "restart"; }
  std::vector<std::string> NodeArgs() const override;

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
};

// Master failover (Redis docs' race): right after a client released the lock (armed at
// after-release), the replication stream from n1 to its replica is cut,
// and once a client has acquired while it is cut (a lock write acknowledged but never
// replicated) and `kill_after_ms` have passed, n1 is killed, Sentinel promotes the replica and clients find it through Sentinel. When the
// window closes the stream is healed and the old master restarts (empty; Sentinel turns it
// into a replica of the new master).
class FailoverFault : public WindowedFault {
 public:
  FailoverFault(FaultOptions o, uint64_t seed);
  const char* id() const override { return "failover"; }
  bool NeedsSentinel() const override { return true; }

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
  void WhileOpen(LabControl& lab, Nanos now) override;
  Nanos OpenWakeup() const override {
    return killed_ ? close_at_ : std::max(opened_at_ + kill_after_, next_check_);
  }
  // Armed at after-release: the window opens the moment a client gave the lock back.
  std::string ArmedPoint() const override { return "after-release"; }
  // The holder: it is the next to release.
  int PickArmedClient(LabControl& lab) override {
    std::vector<int> h = lab.Holders();
    return h.empty() ? PickClient(lab) : h.front();
  }

 public:
  void OnClientEvent(LabControl& lab, Nanos now) override;

 protected:

 private:
  Millis kill_after_{300};
  bool killed_ = false;
  int64_t acquires_at_cut_ = 0;
  Nanos next_check_{0};

};

}  // namespace locklab::faults
