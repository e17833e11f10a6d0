#include "faults/scheduled_fault.h"

#include <algorithm>

namespace locklab::faults {

ScheduledFault::ScheduledFault(std::unique_ptr<Effect> effect, uint64_t seed, FaultTraits traits)
    : effect_(std::move(effect)),
      traits_(std::move(traits)),
      schedule_(Schedule::FromOptions(effect_->options())),
      draw_(effect_->options().targets, seed) {}

Status ScheduledFault::CheckOptions(int clients, int nodes) {
  Status s = effect_->CheckOptions(clients, nodes);
  if (s.ok()) effect_->Shape(&schedule_);
  return s;
}

Status ScheduledFault::Setup(LabControl& lab, Nanos start) {
  effect_->Bind(lab, draw_);
  if (schedule_.duration.count() <= 0)
    return Status::Usage(std::string("fault ") + id() + ": duration must be > 0 ms");
  Status s = CheckOptions(lab.client_count(), lab.node_count());
  next_at_ = schedule_.FirstOpenAt(start);
  if (s.ok()) lab.Record("plan", id(), schedule_.Plan(), start);
  return s;
}

bool ScheduledFault::FitsBeforeTheEnd(LabControl& lab, Nanos time) {
  // A later window is a repeat of the first, and one the teardown would cut short is a
  // different, shorter fault (a 2 s pause healed after 0.4 s) with its own outcome: it is
  // not opened, and the schedule ends.
  if (schedule_.Fits(opened_, time, lab.run_end())) return true;
  lab.Log(std::string(id()) + ": no more windows: the next would end after the run");
  state_ = State::kDone;
  return false;
}

void ScheduledFault::OpenWindow(LabControl& lab, Nanos time, int process) {
  if (!FitsBeforeTheEnd(lab, time)) {
    if (process != 0) lab.ResumeClient(process);
    return;
  }
  // The last window's grace ends here, before this window's Start changes what its probe
  // reads (a restart's "who served it before the kill") and while it is still the last one.
  if (!effect_recorded_) ProbeEffect(lab, time, ProbeMoment::kLate, true);
  nlohmann::json v = effect_->Start(time, process);
  if (v.is_null()) {
    if (process != 0) lab.ResumeClient(process);
    state_ = State::kIdle;
    next_at_ = time + effect_->RetryDelay(schedule_.interval);
    return;
  }
  ++opened_;
  opened_at_ = time;
  close_at_ = schedule_.CloseAt(time);
  if (!v.contains("duration_ms")) v["duration_ms"] = schedule_.duration.count();
  // How the client was picked, when not the default draw (faults/target_draw.h).
  if (effect_->target_kind() != "any") v["target"] = effect_->target_kind();
  // What the checker reads of the fault itself, from its descriptor (docs/design.md 3.2).
  if (traits_.node_down) v["node_down"] = true;
  lab.Record("start", id(), v, time);
  state_ = State::kOpen;
  effect_recorded_ = false;
  last_evidence_ = Evidence();
  grace_until_ = Nanos::max();
  ProbeEffect(lab, time, ProbeMoment::kOpened, false);
  next_probe_ = time + kProbeEvery;
}

void ScheduledFault::ProbeEffect(LabControl& lab, Nanos now, ProbeMoment when, bool last) {
  if (effect_recorded_) return;
  Evidence e = effect_->Probe(now, when);
  // A moment the effect does not look at answers an empty line: keep the last real look.
  if (e.seen || !e.line.empty()) last_evidence_ = e;
  if (!e.seen && !last) return;
  nlohmann::json v = last_evidence_.details.is_object() ? last_evidence_.details : nlohmann::json::object();
  v["seen"] = last_evidence_.seen;
  v["evidence"] = last_evidence_.line.empty() ? "nothing was looked at" : last_evidence_.line;
  v["window"] = opened_;
  lab.Record("effect", id(), v, now);
  effect_recorded_ = true;
  grace_until_ = Nanos::max();
}

void ScheduledFault::CloseWindow(LabControl& lab, Nanos now, bool teardown) {
  ProbeEffect(lab, now, ProbeMoment::kBeforeStop, false);
  effect_->Stop(now);
  nlohmann::json v = {{"opened_ns", opened_at_.count()}};
  if (teardown) v["healed"] = "teardown";
  lab.Record("stop", id(), v, now);
  const Millis grace = effect_->EvidenceGrace();
  ProbeEffect(lab, now, ProbeMoment::kAfterStop, teardown || grace.count() <= 0);
  if (!effect_recorded_) {
    grace_until_ = now + grace;
    next_probe_ = now + kProbeEvery;
  }
}

void ScheduledFault::TryOpen(LabControl& lab, Nanos now) {
  if (!schedule_.MayOpenAnother(opened_)) {
    state_ = State::kDone;
    return;
  }
  if (!FitsBeforeTheEnd(lab, now)) return;
  if (!schedule_.armed()) {
    OpenWindow(lab, now, 0);
    return;
  }
  int p = effect_->PickArmedClient(lab);
  if (p == 0) {
    // Nobody to arm now (a holder target and a free key): look again as a declined Start does.
    next_at_ = now + effect_->RetryDelay(schedule_.interval);
    return;
  }
  armed_client_ = p;
  const std::string& point = schedule_.armed_point;
  lab.ArmPoint(p, point, effect_->ArmedAction());
  lab.Record("arm", id(), {{"targets", {p}}, {"point", point}, {"action", effect_->ArmedAction()}},
             now);
  state_ = State::kArmed;
}

void ScheduledFault::Tick(LabControl& lab, Nanos now) {
  if (state_ != State::kOpen && !effect_recorded_) {
    // The grace after a close: the effect may still show (slow-cs's end report).
    if (now >= grace_until_) {
      ProbeEffect(lab, now, ProbeMoment::kLate, true);
    } else if (now >= next_probe_) {
      ProbeEffect(lab, now, ProbeMoment::kLate, false);
      next_probe_ = now + kProbeEvery;
    }
  }
  switch (state_) {
    case State::kIdle:
      if (now >= next_at_) TryOpen(lab, now);
      return;
    case State::kOpen:
      if (now >= close_at_) {
        CloseWindow(lab, now, false);
        state_ = State::kIdle;
        next_at_ = schedule_.NextOpenAt(now);
        return;
      }
      effect_->WhileOpen(now);
      if (!effect_recorded_ && now >= next_probe_) {
        // A probe that waits on a server (a stopped node's TIME times out after 200 ms)
        // runs on the harness's one loop: look again only after four times that long.
        const Nanos began = MonotonicNow();
        ProbeEffect(lab, now, ProbeMoment::kWhileOpen, false);
        next_probe_ = now + std::max<Nanos>(kProbeEvery, 4 * (MonotonicNow() - began));
      }
      return;
    case State::kArmed:
    case State::kDone:
      return;
  }
}

bool ScheduledFault::OnPausePoint(LabControl& lab, int process, const std::string& point,
                                  Nanos time) {
  if (state_ != State::kArmed || process != armed_client_ || point != schedule_.armed_point) {
    return false;
  }
  OpenWindow(lab, time, process);
  return true;
}

void ScheduledFault::OnClientEvent(LabControl&, Nanos now) {
  if (state_ == State::kOpen) effect_->OnClientEventWhileOpen(now);
}

void ScheduledFault::Teardown(LabControl& lab, Nanos now) {
  if (state_ == State::kArmed) lab.DisarmPoints(armed_client_);
  if (state_ == State::kOpen) CloseWindow(lab, now, true);
  else ProbeEffect(lab, now, ProbeMoment::kLate, true);  // a closed window's grace, cut short
  state_ = State::kDone;
}

Nanos ScheduledFault::NextWakeup() const {
  const Nanos probe = effect_recorded_ ? Nanos::max() : next_probe_;
  const Nanos grace = effect_recorded_ ? Nanos::max() : std::min(probe, grace_until_);
  switch (state_) {
    case State::kIdle:
      return std::min(next_at_, grace);
    case State::kOpen:
      return std::min({close_at_, effect_->OpenWakeup(), probe});
    case State::kArmed:
    case State::kDone:
      return grace;
  }
  return Nanos::max();
}

}  // namespace locklab::faults
