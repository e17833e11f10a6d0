#include "faults/clock_effects.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace locklab::faults {

bool IsClockOffset(const std::string& s) {
  static const std::regex re("^[+-][0-9]+(\\.[0-9]+)?[smhd]?$");
  return std::regex_match(s, re);
}

double OffsetSeconds(const std::string& s) {
  if (!IsClockOffset(s)) return 0;
  double v = std::strtod(s.c_str(), nullptr);
  switch (s.back()) {
    case 'm': return v * 60;
    case 'h': return v * 3600;
    case 'd': return v * 86400;
    default: return v;
  }
}

bool ClockShows(double seen_s, double expected_s, double noise_s) {
  if (expected_s == 0 || (seen_s > 0) != (expected_s > 0)) return false;
  const double tolerance = std::min(0.5 * std::fabs(expected_s), 0.25 * std::fabs(expected_s) + noise_s);
  return std::fabs(seen_s - expected_s) <= tolerance;
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

// Reads node n's own clock and says whether it is `expected_s` off the real one; `after`
// names the cause ("after +20s", "after 1.0 s at 2.0x").
Evidence NodeClockEvidence(ClockControl& clocks, int n, double expected_s, const std::string& after) {
  Evidence e;
  const std::string node = "node n" + std::to_string(n);
  double node_s = 0, real_s = 0, rtt_s = 0;
  Status s = clocks.ReadNodeClock(n, &node_s, &real_s, &rtt_s);
  if (!s.ok()) {
    e.line = node + " TIME: " + s.message();
    return e;
  }
  const double off = node_s - real_s;
  const double noise = rtt_s + 0.01;  // TIME's round trip, and the node's 1 us resolution
  e.seen = ClockShows(off, expected_s, noise);
  e.details = {{"offset_s", std::round(off * 1000) / 1000}};
  e.line = node + " TIME " + Seconds(off) + " s off the real clock " + after;
  // Far from the step and near no step at all: the preload never took.
  if (!e.seen && std::fabs(off) <= noise + 0.05 && std::fabs(expected_s) > 2 * (noise + 0.05)) {
    e.line += " (libfaketime not loaded?)";
  }
  return e;
}

}  // namespace

Status ClockJumpEffect::Validate() {
  std::string revert = o_.Param("revert", "true");
  if (revert != "true" && revert != "false") {
    return Status::Usage(std::string("fault ") + id() + ": param 'revert': '" + revert + "': expected true or false");
  }
  return CheckOffset(id(), o_.Param("offset", "+20s"));
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

Evidence ClockJumpEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  const std::string offset = o_.Param("offset", "+20s");
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) parts.push_back(NodeClockEvidence(*clocks_, n, OffsetSeconds(offset), "after " + offset));
  return AllSeen(parts);
}

Status ClockDriftEffect::Validate() {
  return DoubleParam("rate", "2.0", 0.0, 100.0, &rate_);
}

nlohmann::json ClockDriftEffect::Start(Nanos time, int) {
  opened_at_ = time;
  offset_s_ = 0;
  next_step_ = time + Millis(50);
  Log("clock-drift: node clocks run at " + o_.Param("rate", "2.0") + "x");
  return {{"nodes", NodesOr(1)}, {"rate", rate_}};
}

void ClockDriftEffect::WhileOpen(Nanos now) {
  if (now < next_step_) return;
  double elapsed = ToMillis(now - opened_at_) / 1000.0;
  offset_s_ = (rate_ - 1.0) * elapsed;
  for (int n : NodesOr(1)) clocks_->SetNodeClock(n, Seconds(offset_s_));
  next_step_ = now + Millis(50);
}

Evidence ClockDriftEffect::Probe(Nanos now, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  char after[96];
  snprintf(after, sizeof(after), "after %.1f s at %sx (stepped %+.3f s)", ToMillis(now - opened_at_) / 1000.0,
           o_.Param("rate", "2.0").c_str(), offset_s_);
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) parts.push_back(NodeClockEvidence(*clocks_, n, offset_s_, after));
  return AllSeen(parts);
}

void ClockDriftEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) clocks_->SetNodeClock(n, "+0");
}

Status ClientClockEffect::Validate() {
  if (Status p = PointParam(); !p.ok()) return p;
  return CheckOffset(id(), o_.Param("offset", "-30s"));
}

void ClientClockEffect::Shape(Schedule* schedule) const {
  const std::string point = o_.Param("point", "");
  if (!point.empty()) schedule->armed_point = point;
}

nlohmann::json ClientClockEffect::Start(Nanos time, int process) {
  std::string offset = o_.Param("offset", "-30s");
  if (process != 0) {
    // Armed: the client stands stopped at the point. Step its clock, then let it go on;
    // libfaketime rereads the control file on its next clock read (FAKETIME_NO_CACHE).
    stepped_ = {process};
    Status s = clocks_->SetClientClock(process, offset);
    if (!s.ok()) Log("client-clock: " + s.message());
    clients_->ResumeClient(process);
    clients_->AskClientClock(process);  // answered at its next pause point
    asked_at_ = time;
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
    clients_->AskClientClock(p);
  }
  asked_at_ = time;
  Log("client-clock: client clocks stepped " + offset);
  return {{"targets", stepped_}, {"offset", offset}};
}

Evidence ClientClockEffect::Probe(Nanos now, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  const std::string offset = o_.Param("offset", "-30s");
  std::vector<Evidence> parts;
  bool ask_again = false;
  for (int p : stepped_) {
    Evidence e;
    const std::string who = "client " + std::to_string(p);
    ClockSeen c;
    if (!clients_->ClientClock(p, &c) || c.at < asked_at_) {
      e.line = who + " did not report its clock after " + offset + " (it answers at a pause point)";
    } else {
      // The report travels through the client's event pipe: allow it 200 ms on its way.
      e.seen = ClockShows(c.offset_s, OffsetSeconds(offset), 0.2);
      e.details = {{"offset_s", std::round(c.offset_s * 1000) / 1000}};
      e.line = who + "'s wall clock " + Seconds(c.offset_s) + " s off the real clock after " + offset +
               " (its own report)" + (e.seen || std::fabs(c.offset_s) > 0.25 || std::fabs(OffsetSeconds(offset)) <= 0.5
                    ? ""
                    : " (libfaketime not loaded?)");
      ask_again = ask_again || !e.seen;
    }
    parts.push_back(e);
  }
  if (ask_again) {  // a report from before the step took: ask once more
    for (int p : stepped_) clients_->AskClientClock(p);
    asked_at_ = now;
  }
  return AllSeen(parts);
}

void ClientClockEffect::Stop(Nanos) {
  for (int p : stepped_) clocks_->SetClientClock(p, "+0");
  stepped_.clear();
}

}  // namespace locklab::faults
