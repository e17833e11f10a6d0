#include "faults/windowed_fault.h"

namespace locklab::faults {

Status WindowedFault::Setup(LabControl &lab, Nanos start) {
  if (o_.duration.count() <= 0)
    return Status::Usage(std::string("fault ") + id() + ": duration must be > 0 ms");
  Status s = CheckOptions(lab.client_count(), lab.node_count());
  next_at_ = start + o_.first_at;
  // The schedule goes into the history, so that the judge can tell a fault that never bit
  // (an armed point never reached, no window before the end) from one that did.
  if (s.ok()) {
    lab.Record("plan", id(),
               {{"first_at_ms", o_.first_at.count()}, {"duration_ms", o_.duration.count()},
                {"interval_ms", o_.interval.count()}, {"windows", o_.windows},
                {"point", ArmedPoint()}},
               start);
  }
  return s;
}

Status WindowedFault::CheckOptions(int clients, int nodes) {
  Status s = CheckClients(clients);
  if (s.ok()) s = CheckNodes(nodes);
  if (s.ok()) s = Validate();
  return s;
}

Status WindowedFault::CheckClients(int clients) const {
  for (int t : o_.targets) {
    if (t < 1 || t > clients) {
      return Status::Usage(std::string("fault ") + id() + ": target client " + std::to_string(t) +
                           " does not exist (clients are 1.." + std::to_string(clients) +
                           ")");
    }
  }
  return Status::Ok();
}

Status WindowedFault::CheckNodes(int nodes) const {
  for (int n : o_.nodes) {
    if (n < 1 || n > nodes) {
      return Status::Usage(std::string("fault ") + id() + ": node " + std::to_string(n) +
                           " does not exist (lock nodes are n1..n" +
                           std::to_string(nodes) + ")");
    }
  }
  return Status::Ok();
}

std::vector<int> WindowedFault::NodesOr(int default_node) const {
  return o_.nodes.empty() ? std::vector<int>{default_node} : o_.nodes;
}

int WindowedFault::PickClient(LabControl &lab) {
  std::vector<int> pool;
  if (o_.targets.empty()) {
    for (int p = 1; p <= lab.client_count(); ++p) pool.push_back(p);
  } else {
    pool = o_.targets;
  }
  // Draw first, then check: the draw sequence stays the same whatever the lab
  // state.
  int p = pool[rng_.Uniform(0, static_cast<int64_t>(pool.size()) - 1)];
  return lab.ClientRunning(p) ? p : 0;
}

bool WindowedFault::FitsBeforeTheEnd(LabControl &lab, Nanos time) {
  // The first window always opens: a duration longer than the run means "until the end"
  // (the known-answers partitions). A later window is a repeat of the first, and one the
  // teardown would cut short is a different, shorter fault (a 2 s pause healed after 0.4 s)
  // with its own outcome: it is not opened, and the schedule ends.
  if (opened_ == 0 || time + o_.duration <= lab.run_end()) return true;
  lab.Log(std::string(id()) + ": no more windows: the next would end after the run");
  state_ = State::kDone;
  return false;
}

void WindowedFault::OpenWindow(LabControl &lab, Nanos time, int process) {
  if (!FitsBeforeTheEnd(lab, time)) {
    if (process != 0) lab.ResumeClient(process);
    return;
  }
  nlohmann::json v = Open(lab, time, process);
  if (v.is_null()) {
    if (process != 0) lab.ResumeClient(process);
    state_ = State::kIdle;
    next_at_ = time + RetryDelay();
    return;
  }
  ++opened_;
  opened_at_ = time;
  close_at_ = time + o_.duration;
  if (!v.contains("duration_ms")) v["duration_ms"] = o_.duration.count();
  lab.Record("start", id(), v, time);
  state_ = State::kOpen;
}

void WindowedFault::TryOpen(LabControl &lab, Nanos now) {
  if (o_.windows > 0 && opened_ >= o_.windows) {
    state_ = State::kDone;
    return;
  }
  if (!FitsBeforeTheEnd(lab, now)) return;
  std::string point = ArmedPoint();
  if (point.empty()) {
    OpenWindow(lab, now, 0);
    return;
  }
  int p = PickArmedClient(lab);
  if (p == 0) {
    next_at_ = now + o_.interval;
    return;
  }
  armed_client_ = p;
  lab.ArmPoint(p, point, ArmedAction());
  lab.Record("arm", id(), {{"targets", {p}}, {"point", point}, {"action", ArmedAction()}}, now);
  state_ = State::kArmed;
}

void WindowedFault::Tick(LabControl &lab, Nanos now) {
  switch (state_) {
    case State::kIdle:
      if (now >= next_at_) TryOpen(lab, now);
      return;
    case State::kArmed:
      return;
    case State::kOpen:
      if (now >= close_at_) {
        Close(lab, now);
        lab.Record("stop", id(), {{"opened_ns", opened_at_.count()}}, now);
        state_ = State::kIdle;
        next_at_ = now + o_.interval;
        return;
      }
      WhileOpen(lab, now);
      return;
    case State::kDone:
      return;
  }
}

bool WindowedFault::OnPausePoint(LabControl &lab, int process, const std::string &point,
                                 Nanos time) {
  if (state_ != State::kArmed || process != armed_client_ || point != ArmedPoint()) return false;
  OpenWindow(lab, time, process);
  return true;
}

void WindowedFault::Teardown(LabControl &lab, Nanos now) {
  if (state_ == State::kArmed) lab.DisarmPoints(armed_client_);
  if (state_ == State::kOpen) {
    Close(lab, now);
    lab.Record("stop", id(), {{"opened_ns", opened_at_.count()}, {"healed", "teardown"}}, now);
  }
  state_ = State::kDone;
}

Nanos WindowedFault::NextWakeup() const {
  switch (state_) {
    case State::kIdle:
      return next_at_;
    case State::kArmed:
      return Nanos::max();
    case State::kOpen:
      return std::min(close_at_, OpenWakeup());
    case State::kDone:
      return Nanos::max();
  }
  return Nanos::max();
}

}  // namespace locklab::faults
