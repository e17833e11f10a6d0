#include "faults/fault_draw.h"

#include <algorithm>
#include <cstdio>

namespace locklab::faults {

double LogUniform(Rng& rng, double lo, double hi) {
  return std::exp(std::log(lo) + rng.Unit() * (std::log(hi) - std::log(lo)));
}

Millis TtlTimes(Millis ttl, double x, Millis floor) {
  return std::max(floor, Millis(static_cast<int64_t>(std::llround(x * static_cast<double>(ttl.count())))));
}

std::vector<int> DrawNodes(const FaultDrawContext& c, Rng& rng, double majority_odds) {
  std::vector<int> all;
  for (int n = 1; n <= c.nodes; ++n) all.push_back(n);
  int size = 1;
  if (c.nodes >= 3) {
    int minority = std::max(1, (c.nodes - 1) / 2), majority = c.nodes / 2 + 1;
    size = rng.Unit() < majority_odds ? majority : Pick(rng, std::vector<int>{1, minority});
  }
  // A partial Fisher-Yates shuffle: the first `size` are the draw.
  for (int i = 0; i < size; ++i) {
    int j = static_cast<int>(rng.Uniform(i, c.nodes - 1));
    std::swap(all[static_cast<size_t>(i)], all[static_cast<size_t>(j)]);
  }
  std::vector<int> nodes(all.begin(), all.begin() + size);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::string DrawOffset(const FaultDrawContext& c, Rng& rng, double back) {
  double seconds = LogUniform(rng, 0.5, 10) * static_cast<double>(c.ttl.count()) / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%.3f", rng.Unit() < back || c.clock_back ? '-' : '+', std::max(seconds, 0.001));
  return buf;
}

std::string DrawPoint(const FaultDrawContext& c, Rng& rng, const std::string& id) {
  const auto& among = !c.lock_points.empty() && rng.Unit() < 0.5 ? c.lock_points : c.points;
  return among[WeightedIndex(rng, among, [&](const std::string& p) {
    return c.weight ? c.weight(id + "@" + p) : 1.0;
  })];
}

std::string ArmPoint(const FaultDrawContext& c, Rng& rng, const std::string& id) {
  return !c.arm_at.empty() ? c.arm_at : DrawPoint(c, rng, id);
}

}  // namespace locklab::faults
