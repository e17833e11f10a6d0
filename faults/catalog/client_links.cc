// What the faults on client links (reply-loss, partition) share: a window armed by the
// client at one of its lock commands (catalog.h).
#include "faults/catalog/catalog.h"

namespace locklab::faults {

const char* const kCommandPointParamHelp =
    "empty: a timed window; else a pause point (before-acquire, after-acquire, before-release, "
    "...): the window opens on the links of the client that reaches it, just before its next "
    "lock command (a renewal, after after-acquire), and the client goes on";

std::vector<std::string> WorkloadPoints() {
  return {"before-acquire", "after-acquire", "before-write", "before-release", "after-release"};
}

std::vector<std::string> CommandPoints() { return {"before-acquire", "after-acquire", "before-release"}; }

bool DrawCommandArm(const FaultDrawContext& c, Rng& rng, FaultOptions* f, double odds) {
  std::string point = c.arm_at;
  if (point.empty()) {
    if (c.command_points.empty() || rng.Unit() >= odds) return false;
    point = c.command_points[WeightedIndex(rng, c.command_points, [&](const std::string& p) {
      return c.weight ? c.weight(f->id + "@" + p) : 1.0;
    })];
  }
  f->params["point"] = point;
  f->params["target"] = "holder";
  f->windows = 1;
  f->duration = TtlTimes(c.ttl, LogUniform(rng, 0.3, 1.5));
  return true;
}

std::string CutClientText(const FaultOptions& f) {
  const std::string point = ArmedPoint(f);
  if (!point.empty()) return "the first client to reach " + point;
  return f.Param("target", "any") == "holder" ? "a client holding the lock" : "a client";
}

}  // namespace locklab::faults
