// Clock effects through libfaketime control files: clock-jump and clock-drift on lock nodes
// (the server's wall clock decides key expiry), client-clock on client processes (the lock's
// own time measurements see it; history timestamps, on the raw monotonic clock, do not).
// They act through ClockControl only. Not thread-safe (faults/effect.h).
#pragma once

#include "faults/effect.h"

namespace locklab::faults {

// Offsets: "+20s", "-30s", "+1.5" (seconds), as libfaketime reads them.
bool IsClockOffset(const std::string& s);

// Steps the wall clock of lock nodes (default n1) by `offset` when the window opens; with
// revert=true (default) steps it back to +0 when it closes.
class ClockJumpEffect : public Effect {
 public:
  using Effect::Effect;
  const char* id() const override { return "clock-jump"; }
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;

 protected:
  void Attach(LabControl& lab) override { clocks_ = &lab; }
  Status Validate() override;

 private:
  ClockControl* clocks_ = nullptr;
};

// Runs the wall clock of lock nodes at `rate` x real time while the window is open, by
// stepping the offset every 50 ms (so the error is at most 50 ms x |rate-1|).
class ClockDriftEffect : public Effect {
 public:
  using Effect::Effect;
  const char* id() const override { return "clock-drift"; }
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  void WhileOpen(Nanos now) override;
  Nanos OpenWakeup() const override { return next_step_; }

 protected:
  void Attach(LabControl& lab) override { clocks_ = &lab; }
  Status Validate() override;

 private:
  ClockControl* clocks_ = nullptr;
  double rate_ = 2.0;
  Nanos opened_at_{0};
  Nanos next_step_{0};
};

// Steps the wall clock of client processes (default: one drawn from the seed).
class ClientClockEffect : public Effect {
 public:
  using Effect::Effect;
  const char* id() const override { return "client-clock"; }
  bool NeedsClientClock() const override { return true; }
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;

 protected:
  void Attach(LabControl& lab) override {
    clients_ = &lab;
    clocks_ = &lab;
  }
  Status Validate() override;

 private:
  const ClientControl* clients_ = nullptr;  // to draw a running client
  ClockControl* clocks_ = nullptr;
  std::vector<int> stepped_;
};

}  // namespace locklab::faults
