// client-pause: a stop-the-world pause of a whole client process (GC-style).
//
// targeted: the harness arms one client's pause point ("after-acquire", "before-write"); the
//   client raises SIGSTOP on itself when it reaches it and reports the instant; the fault
//   resumes it (SIGCONT) `pause` later. This hits the dangerous moment every time.
// random:   SIGSTOP of a client chosen by the seed at a time chosen by the seed.
// Schedule: the first pause `first_at` after the start, then `interval` after each resume.
#pragma once

#include "faults/fault.h"

namespace locklab::faults {

// The named points where a client can stop itself: after-acquire (acquire returned ok),
// before-write (inside the critical section, the counter read, the write not yet sent),
// redlock-replies-in-flight (Redlock's SETs sent, replies not yet read).
bool IsPausePoint(const std::string& point);

class ClientPauseFault : public Fault {
 public:
  ClientPauseFault(FaultOptions options, uint64_t seed) : o_(std::move(options)), rng_(seed) {}
  const char* id() const override { return "client-pause"; }
  Status Setup(LabControl& lab, Nanos start) override;
  void Tick(LabControl& lab, Nanos now) override;
  void OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) override;
  void Teardown(LabControl& lab, Nanos now) override;
  Nanos NextWakeup() const override;

 private:
  enum class State { kIdle, kArmed, kPaused };
  int PickTarget(LabControl& lab);
  void Begin(LabControl& lab, int process, Nanos time, const std::string& point);
  FaultOptions o_;
  Rng rng_;
  State state_ = State::kIdle;
  int target_ = 0;
  Nanos next_at_{0};
  Nanos resume_at_{0};
};

class NoFault : public Fault {
 public:
  const char* id() const override { return "none"; }
  Status Setup(LabControl&, Nanos) override { return Status::Ok(); }
  void Tick(LabControl&, Nanos) override {}
  void OnPausePoint(LabControl&, int, const std::string&, Nanos) override {}
  void Teardown(LabControl&, Nanos) override {}
  Nanos NextWakeup() const override { return Nanos::max(); }
};

}  // namespace locklab::faults
