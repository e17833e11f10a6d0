// ScheduledFault: the driver that applies a Schedule to an Effect, as a Fault the harness
// runs. It keeps the window state (idle, armed, open, done), writes the "plan" event at
// setup and the "arm", "start" and "stop" events, opens a window when its time comes (or,
// armed, when the client reports the point), and closes it `duration` later; the next
// opens `interval` after the close it actually saw. Teardown closes an open window
// (healing, recorded with "healed": "teardown") and disarms an armed point. The effect's
// target draws come from the fault's seed (faults/target_draw.h).
// Every window records one "effect" event: the first time the effect's Probe sees its
// effect ("seen": true), else at the close (or the end of the effect's grace after it)
// with what was looked at ("seen": false); the event's "window" is the window's number.
// Not thread-safe: driven by the harness's single event loop.
#pragma once

#include <memory>

#include "faults/effect.h"
#include "faults/fault.h"
#include "faults/fault_descriptor.h"
#include "faults/schedule.h"
#include "faults/target_draw.h"

namespace locklab::faults {

class ScheduledFault : public Fault {
 public:
  // How often an open window's effect is probed until seen.
  static constexpr Millis kProbeEvery{50};

  // `traits`: its descriptor's (faults/fault_descriptor.h); each `start` event carries
  // "node_down": true when traits.node_down (docs/design.md 3.2).
  ScheduledFault(std::unique_ptr<Effect> effect, uint64_t seed, FaultTraits traits = {});

  const char* id() const override { return effect_->id(); }
  std::vector<std::string> NodeArgs() const override { return effect_->NodeArgs(); }
  bool NeedsClientClock() const override { return effect_->NeedsClientClock(); }
  bool NeedsSentinel() const override { return traits_.needs_sentinel; }
  Status CheckOptions(int clients, int nodes) override;
  Status Setup(LabControl& lab, Nanos start) override;
  void Tick(LabControl& lab, Nanos now) override;
  bool OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) override;
  void Teardown(LabControl& lab, Nanos now) override;
  void OnClientEvent(LabControl& lab, Nanos now) override;
  Nanos NextWakeup() const override;

 private:
  enum class State { kIdle, kArmed, kOpen, kDone };
  void OpenWindow(LabControl& lab, Nanos time, int process);
  // False (and the schedule done) when the next window, opened at `time`, would end after
  // the run (Schedule::Fits).
  bool FitsBeforeTheEnd(LabControl& lab, Nanos time);
  void TryOpen(LabControl& lab, Nanos now);
  // Probes the window's effect unless already recorded; records it when seen, or, with
  // `last`, as not seen.
  void ProbeEffect(LabControl& lab, Nanos now, ProbeMoment when, bool last);
  void CloseWindow(LabControl& lab, Nanos now, bool teardown);

  std::unique_ptr<Effect> effect_;
  FaultTraits traits_;
  Schedule schedule_;
  TargetDraw draw_;
  State state_ = State::kIdle;
  int armed_client_ = 0;
  int opened_ = 0;          // windows opened so far
  Nanos opened_at_{0};      // the open window's start
  Nanos close_at_{0};       // and its end
  Nanos next_at_{0};        // when idle: the next Tick with work to do
  // The open (or just closed) window's evidence: recorded yet, the last probe's answer,
  // the next probe while open, the end of the grace after a close (max: none pending).
  bool effect_recorded_ = true;
  Evidence last_evidence_;
  Nanos next_probe_{0};
  Nanos grace_until_ = Nanos::max();
};

}  // namespace locklab::faults
