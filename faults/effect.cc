#include "faults/effect.h"

#include "base/numbers.h"

namespace locklab::faults {

Status Effect::CheckOptions(int clients, int nodes) {
  for (int t : o_.targets) {
    if (t < 1 || t > clients) {
      return Status::Usage(std::string("fault ") + id() + ": target client " + std::to_string(t) +
                           " does not exist (clients are 1.." + std::to_string(clients) + ")");
    }
  }
  for (int n : o_.nodes) {
    if (n < 1 || n > nodes) {
      return Status::Usage(std::string("fault ") + id() + ": node " + std::to_string(n) +
                           " does not exist (lock nodes are n1..n" + std::to_string(nodes) + ")");
    }
  }
  std::string target = target_kind();
  if (!IsTargetKind(target)) {
    return Status::Usage(std::string("fault ") + id() + ": param 'target': '" + target +
                         "': expected any, holder or just-released");
  }
  return Validate();
}

Millis Effect::RetryDelay(Millis interval) const {
  return target_kind() == "any" ? interval : Millis(20);
}

void Effect::Bind(LabControl& lab, TargetDraw& draw) {
  journal_ = &lab;
  draw_ = &draw;
  Attach(lab);
}

std::vector<int> Effect::NodesOr(int default_node) const {
  return o_.nodes.empty() ? std::vector<int>{default_node} : o_.nodes;
}

Status Effect::IntParam(const std::string& key, const std::string& fallback, int64_t lo,
                        int64_t hi, int64_t* out) const {
  Status s = ParseInt(o_.Param(key, fallback), lo, hi, out);
  if (s.ok()) return s;
  return Status::Usage(std::string("fault ") + id() + ": param '" + key + "': " + s.message());
}

Status Effect::DoubleParam(const std::string& key, const std::string& fallback, double lo,
                           double hi, double* out) const {
  Status s = ParseDouble(o_.Param(key, fallback), lo, hi, out);
  if (s.ok()) return s;
  return Status::Usage(std::string("fault ") + id() + ": param '" + key + "': " + s.message());
}

Status Effect::PointParam() const {
  const FaultParamInfo* info = FindFaultParam(id(), "point");
  const std::string fallback = info ? info->default_value : "";
  const std::string point = o_.Param("point", fallback);
  if ((point.empty() && fallback.empty()) || IsPausePoint(point)) return Status::Ok();
  return Status::Usage(std::string("fault ") + id() + ": param 'point': '" + point +
                       "': not a point name ([a-z0-9-]+, at most 64 characters)");
}

Evidence Effect::StoppedEvidence(const std::string& what, const ProcessSeen& p) {
  Evidence e;
  if (!p.visible) {
    e.line = what + ": " + p.why;
    return e;
  }
  const std::string stat = "/proc/" + std::to_string(p.pid) + "/stat";
  e.details = {{"pid", p.pid}, {"state", p.state == 0 ? std::string("gone") : std::string(1, p.state)}};
  e.seen = p.state == 'T' || p.state == 't';
  if (p.state == 0) e.line = what + " (pid " + std::to_string(p.pid) + ") not stopped: no " + stat;
  else e.line = what + " (pid " + std::to_string(p.pid) + ") " + (e.seen ? "stopped" : "not stopped") +
                ": state " + std::string(1, p.state) + " in " + stat;
  return e;
}

Evidence Effect::AllSeen(const std::vector<Evidence>& parts) {
  Evidence out;
  out.seen = !parts.empty();
  for (const auto& e : parts) {
    out.seen = out.seen && e.seen;
    out.line += (out.line.empty() ? "" : "; ") + e.line;
    if (parts.size() == 1) out.details = e.details;
  }
  return out;
}

}  // namespace locklab::faults
