#include "faults/clock_effects.h"

#include <cmath>
#include <cstdio>
#include <regex>

namespace locklab::faults {

bool IsClockOffset(const std::string& s) {
  static const std::regex re("^[+-][0-9]+(\\.[0-9]+)?[smhd]?$");
  return std::regex_match(s, re);
}

namespace {

Status CheckOffset(const char* fault, const std::string& value) {
  if (IsClockOffset(value)) return Status::Ok();
  return Status::Usage(std::string("fault ") + fault + ": param 'offset': '" + value +
                       "': expected a signed offset like +20s, -30s or +1.5");
}

std::string Seconds(double s) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%+.3f", s);
  return buf;
}

}  // namespace

Status ClockJumpEffect::Validate() {
  std::string revert = o_.Param("revert", "true");
  if (revert != "true" && revert != "false") {
    return Status::Usage("fault clock-jump: param 'revert': '" + revert + "': expected true or false");
  }
  return CheckOffset("clock-jump", o_.Param("offset", "+20s"));
}

nlohmann::json ClockJumpEffect::Start(Nanos, int) {
  std::string offset = o_.Param("offset", "+20s");
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) {
    Status s = clocks_->SetNodeClock(n, offset);
    if (!s.ok()) Log("clock-jump: " + s.message());
  }
  Log("clock-jump: node clocks stepped " + offset);
  return {{"nodes", nodes}, {"offset", offset}};
}

void ClockJumpEffect::Stop(Nanos) {
  if (o_.Param("revert", "true") != "true") return;
  for (int n : NodesOr(1)) clocks_->SetNodeClock(n, "+0");
}

Status ClockDriftEffect::Validate() {
  return DoubleParam("rate", "2.0", 0.0, 100.0, &rate_);
}

nlohmann::json ClockDriftEffect::Start(Nanos time, int) {
  opened_at_ = time;
  next_step_ = time + Millis(50);
  Log("clock-drift: node clocks run at " + o_.Param("rate", "2.0") + "x");
  return {{"nodes", NodesOr(1)}, {"rate", rate_}};
}

void ClockDriftEffect::WhileOpen(Nanos now) {
  if (now < next_step_) return;
  double elapsed = ToMillis(now - opened_at_) / 1000.0;
  for (int n : NodesOr(1)) clocks_->SetNodeClock(n, Seconds((rate_ - 1.0) * elapsed));
  next_step_ = now + Millis(50);
}

void ClockDriftEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) clocks_->SetNodeClock(n, "+0");
}

Status ClientClockEffect::Validate() {
  if (Status p = PointParam(); !p.ok()) return p;
  return CheckOffset("client-clock", o_.Param("offset", "-30s"));
}

void ClientClockEffect::Shape(Schedule* schedule) const {
  const std::string point = o_.Param("point", "");
  if (!point.empty()) schedule->armed_point = point;
}

nlohmann::json ClientClockEffect::Start(Nanos, int process) {
  std::string offset = o_.Param("offset", "-30s");
  if (process != 0) {
    // Armed: the client stands stopped at the point. Step its clock, then let it go on;
    // libfaketime rereads the control file on its next clock read (FAKETIME_NO_CACHE).
    stepped_ = {process};
    Status s = clocks_->SetClientClock(process, offset);
    if (!s.ok()) Log("client-clock: " + s.message());
    clients_->ResumeClient(process);
    Log("client-clock: client " + std::to_string(process) + " stepped " + offset + " at " +
        o_.Param("point", ""));
    return {{"targets", stepped_}, {"offset", offset}, {"point", o_.Param("point", "")}};
  }
  // `targets` alone steps them all (as always); with a target kind, one client it picks.
  stepped_ = target_kind() == "any" ? o_.targets : std::vector<int>{};
  if (stepped_.empty()) {
    int p = PickClient(*clients_);
    if (p == 0) return nullptr;
    stepped_ = {p};
  }
  for (int p : stepped_) {
    Status s = clocks_->SetClientClock(p, offset);
    if (!s.ok()) Log("client-clock: " + s.message());
  }
  Log("client-clock: client clocks stepped " + offset);
  return {{"targets", stepped_}, {"offset", offset}};
}

void ClientClockEffect::Stop(Nanos) {
  for (int p : stepped_) clocks_->SetClientClock(p, "+0");
  stepped_.clear();
}

}  // namespace locklab::faults
