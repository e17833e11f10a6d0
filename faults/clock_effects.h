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
  // With `point`: armed there. The client stops itself at the point (action "pause"), its
  // clock is stepped while it stands still, and it is let go at once: the step lands at a
  // known place of the lock's code (between an acquire's start and its end, where a lock
  // that times itself on the wall clock reads it), which a timed window hits by luck alone.
  // The window's duration is how long the clock stays stepped.
  void Shape(Schedule* schedule) const override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;

 protected:
  void Attach(LabControl& lab) override {
    clients_ = &lab;
    clocks_ = &lab;
  }
  Status Validate() override;

 private:
  ClientControl* clients_ = nullptr;  // to draw a running client; to let an armed one go
  ClockControl* clocks_ = nullptr;
  std::vector<int> stepped_;
};

}  // namespace locklab::faults
