// WindowedFault: the schedule every fault shares. Windows open `first_at` after the start,
// last `duration`, and reopen `interval` after each close, at most `windows` times (0: no
// limit). A window opens either at its time (Open) or, for an armed fault, when the client
// reaches the armed point (the fault arms it at the window's time and opens on the report).
// Subclasses say what opening and closing do; Teardown closes an open window (healing) and
// disarms. Not thread-safe (the harness's event loop drives it).
#pragma once

#include "faults/fault.h"

namespace locklab::faults {

class WindowedFault : public Fault {
 public:
  WindowedFault(FaultOptions options, uint64_t seed) : o_(std::move(options)), rng_(seed) {}

  Status CheckOptions(int clients, int nodes) override;
  Status Setup(LabControl& lab, Nanos start) override;
  void Tick(LabControl& lab, Nanos now) override;
  bool OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) override;
  void Teardown(LabControl& lab, Nanos now) override;
  Nanos NextWakeup() const override;

 protected:
  // Checks fault-specific options (params); node and client numbers are checked by
  // CheckOptions.
  virtual Status Validate() { return Status::Ok(); }
  // For armed faults: the point to arm and the action ("pause", "slow:MS"); empty: none.
  virtual std::string ArmedPoint() const { return ""; }
  virtual std::string ArmedAction() const { return "pause"; }
  // Opens a window at `time`; returns the event value describing it (null: did not open).
  // `process` is the client that reached the armed point (0 for scheduled faults).
  virtual nlohmann::json Open(LabControl& lab, Nanos time, int process) = 0;
  virtual void Close(LabControl& lab, Nanos time) = 0;
  // Called on every Tick while the window is open (clock drift steps its offset here).
  virtual void WhileOpen(LabControl& lab, Nanos now) {
    (void)lab;
    (void)now;
  }
  virtual Nanos OpenWakeup() const { return close_at_; }
  // How long to wait before trying again when Open declined (returned null).
  virtual Millis RetryDelay() const { return o_.interval; }

  bool IsOpen() const { return state_ == State::kOpen; }

  // A client drawn from the seed among `targets` (or all running clients); 0 if none.
  int PickClient(LabControl& lab);
  // The client an armed fault arms (default: PickClient).
  virtual int PickArmedClient(LabControl& lab) { return PickClient(lab); }
  // The nodes option, or {default_node} when empty.
  std::vector<int> NodesOr(int default_node) const;
  Status CheckNodes(int nodes) const;
  Status CheckClients(int clients) const;

  FaultOptions o_;
  Rng rng_;
  Nanos opened_at_{0};
  Nanos close_at_{0};

 private:
  enum class State { kIdle, kArmed, kOpen, kDone };
  void OpenWindow(LabControl& lab, Nanos time, int process);
  // False (and the schedule done) when a window after the first, opened at `time`, would
  // end after the run.
  bool FitsBeforeTheEnd(LabControl& lab, Nanos time);
  void TryOpen(LabControl& lab, Nanos now);
  State state_ = State::kIdle;
  int armed_client_ = 0;
  int opened_ = 0;
  Nanos next_at_{0};  // next Tick with work to do
};

}  // namespace locklab::faults
