// Clock effects through libfaketime control files: clock-jump and clock-drift on lock nodes
// (the server's wall clock decides key expiry), client-clock on client processes (the lock's
// own time measurements see it; history timestamps, on the raw monotonic clock, do not).
// They act through ClockControl only. Not thread-safe (faults/effect.h).
#pragma once

#include "faults/effect.h"

namespace locklab::faults {

// Offsets: "+20s", "-30s", "+1.5" (seconds), as libfaketime reads them.
bool IsClockOffset(const std::string& s);
// A well-formed offset in seconds ("-1.5m" is -90); 0 when malformed.
double OffsetSeconds(const std::string& s);
// Whether a clock read `seen_s` off the real one shows a step of `expected_s` (both in
// seconds; `noise_s` is the reading's own uncertainty): the same sign, within a quarter of
// the step plus the noise, and never within half the step of no step at all.
bool ClockShows(double seen_s, double expected_s, double noise_s);

// Steps the wall clock of lock nodes (default n1) by `offset` when the window opens; with
// revert=true (default) steps it back to +0 when it closes.
class ClockJumpEffect : public Effect {
 public:
  using Effect::Effect;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Each node's own clock (Redis TIME) off the real one by the step.
  Evidence Probe(Nanos now, ProbeMoment when) override;

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
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  void WhileOpen(Nanos now) override;
  Nanos OpenWakeup() const override { return next_step_; }
  // Each node's own clock off the real one by the offset the drift has reached.
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override { clocks_ = &lab; }
  Status Validate() override;

 private:
  ClockControl* clocks_ = nullptr;
  double rate_ = 2.0;
  double offset_s_ = 0;  // the offset last written, in seconds
  Nanos opened_at_{0};
  Nanos next_step_{0};
};

// Steps the wall clock of client processes (default: one drawn from the seed).
class ClientClockEffect : public Effect {
 public:
  using Effect::Effect;
  bool NeedsClientClock() const override { return true; }
  // With `point`: armed there. The client stops itself at the point (action "pause"), its
  // clock is stepped while it stands still, and it is let go at once: the step lands at a
  // known place of the lock's code (between an acquire's start and its end, where a lock
  // that times itself on the wall clock reads it), which a timed window hits by luck alone.
  // The window's duration is how long the clock stays stepped.
  void Shape(Schedule* schedule) const override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Each stepped client's own report of its wall clock, asked after the step.
  Evidence Probe(Nanos now, ProbeMoment when) override;

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
  Nanos asked_at_{0};  // when the clients were last asked for their clocks
};

}  // namespace locklab::faults
