#include "faults/client_pause.h"

namespace locklab::faults {

bool IsPausePoint(const std::string& point) {
  return point == "after-acquire" || point == "before-write" ||
         point == "redlock-replies-in-flight";
}

Status ClientPauseFault::Setup(LabControl& lab, Nanos start) {
  if (o_.mode != "targeted" && o_.mode != "random") {
    return Status::Usage("fault client-pause: mode '" + o_.mode + "': expected targeted or random");
  }
  if (o_.mode == "targeted" && !IsPausePoint(o_.point)) {
    return Status::Usage("fault client-pause: point '" + o_.point +
                         "': expected after-acquire, before-write or redlock-replies-in-flight");
  }
  if (o_.pause.count() <= 0) return Status::Usage("fault client-pause: pause must be > 0 ms");
  for (int t : o_.targets) {
    if (t < 1 || t > lab.client_count()) {
      return Status::Usage("fault client-pause: target " + std::to_string(t) +
                           " is not a client (1.." + std::to_string(lab.client_count()) + ")");
    }
  }
  next_at_ = start + o_.first_at;
  return Status::Ok();
}

int ClientPauseFault::PickTarget(LabControl& lab) {
  if (!o_.targets.empty()) {
    return o_.targets[rng_.Uniform(0, static_cast<int64_t>(o_.targets.size()) - 1)];
  }
  return static_cast<int>(rng_.Uniform(1, lab.client_count()));
}

void ClientPauseFault::Begin(LabControl& lab, int process, Nanos time, const std::string& point) {
  state_ = State::kPaused;
  target_ = process;
  resume_at_ = time + o_.pause;
  nlohmann::json v = {{"targets", {process}}, {"mode", o_.mode}, {"duration_ms", o_.pause.count()}};
  if (!point.empty()) v["point"] = point;
  lab.Record("start", id(), v, time);
  lab.Log("client-pause: client " + std::to_string(process) + " stopped" +
          (point.empty() ? "" : " at " + point) + " for " + std::to_string(o_.pause.count()) + " ms");
}

void ClientPauseFault::Tick(LabControl& lab, Nanos now) {
  switch (state_) {
    case State::kIdle:
      if (now < next_at_) return;
      target_ = PickTarget(lab);
      if (!lab.ClientRunning(target_)) {
        next_at_ = now + o_.interval;
        return;
      }
      if (o_.mode == "targeted") {
        lab.ArmPausePoint(target_, o_.point);
        state_ = State::kArmed;
      } else if (lab.PauseClient(target_)) {
        Begin(lab, target_, now, "");
      }
      return;
    case State::kArmed:
      return;  // waiting for the client to reach the point
    case State::kPaused:
      if (now < resume_at_) return;
      lab.ResumeClient(target_);
      lab.Record("stop", id(), {{"targets", {target_}}}, now);
      state_ = State::kIdle;
      next_at_ = now + o_.interval;
      return;
  }
}

void ClientPauseFault::OnPausePoint(LabControl& lab, int process, const std::string& point,
                                    Nanos time) {
  if (state_ != State::kArmed || process != target_) {
    // Not ours (or late): never leave a client stopped.
    lab.ResumeClient(process);
    return;
  }
  Begin(lab, process, time, point);
}

void ClientPauseFault::Teardown(LabControl& lab, Nanos now) {
  if (state_ == State::kArmed) lab.DisarmPausePoints(target_);
  if (state_ == State::kPaused) {
    lab.ResumeClient(target_);
    lab.Record("stop", id(), {{"targets", {target_}}, {"healed", "teardown"}}, now);
  }
  state_ = State::kIdle;
  next_at_ = Nanos::max();
}

Nanos ClientPauseFault::NextWakeup() const {
  switch (state_) {
    case State::kIdle: return next_at_;
    case State::kArmed: return Nanos::max();
    case State::kPaused: return resume_at_;
  }
  return Nanos::max();
}

const std::vector<FaultInfo>& ListFaults() {
  static const std::vector<FaultInfo> kFaults = {
      {"none", "no fault: the baseline every lock must pass"},
      {"client-pause",
       "stop-the-world pause (SIGSTOP/SIGCONT) of a whole client process, targeted at a pause "
       "point (after-acquire, before-write) or at random times"},
  };
  return kFaults;
}

Status MakeFault(const FaultOptions& options, uint64_t seed, std::unique_ptr<Fault>* out) {
  if (options.id == "none") {
    *out = std::make_unique<NoFault>();
  } else if (options.id == "client-pause") {
    *out = std::make_unique<ClientPauseFault>(options, seed);
  } else {
    return Status::Usage("fault '" + options.id + "': unknown fault id (see `locklab list`)");
  }
  return Status::Ok();
}

}  // namespace locklab::faults
