// Clock faults through libfaketime control files: clock-jump and clock-drift on lock nodes
// (the server's wall clock decides key expiry), client-clock on client processes (the lock's
// own time measurements see it; history timestamps, on the raw monotonic clock, do not).
#pragma once

#include "faults/windowed_fault.h"

namespace locklab::faults {

// Offsets: "+20s", "-30s", "+1.5" (seconds), as libfaketime reads them.
bool IsClockOffset(const std::string& s);

// Steps the wall clock of lock nodes (default n1) by `offset` when the window opens; with
// revert=true (default) steps it back to +0 when it closes.
class ClockJumpFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "clock-jump"; }

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
};

// Runs the wall clock of lock nodes at `rate` x real time while the window is open, by
// stepping the offset every 50 ms (so the error is at most 50 ms x |rate-1|).
class ClockDriftFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "clock-drift"; }

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
  void WhileOpen(LabControl& lab, Nanos now) override;
  Nanos OpenWakeup() const override { return next_step_; }

 private:
  double rate_ = 2.0;
  Nanos next_step_{0};
};

// Steps the wall clock of client processes (default: one drawn from the seed).
class ClientClockFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "client-clock"; }
  bool NeedsClientClock() const override { return true; }

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;

 private:
  std::vector<int> stepped_;
};

}  // namespace locklab::faults
