#include "harness/hunt/hunt_guide.h"

#include <algorithm>
#include <cmath>

#include "faults/fault.h"
#include "faults/fault_draw.h"

namespace locklab::harness {
namespace {

// A fresh fault of the space, drawn as the search draws one (its params, nodes and targets).
faults::FaultOptions FreshFault(const SearchSpace& space, Rng& rng) {
  SearchSpace one = space;
  one.max_faults = 1;
  RunOptions drawn = DrawScenario(one, rng, "fresh");
  if (drawn.faults.empty()) return faults::FaultOptions{};  // a space without faults: none
  return drawn.faults.front();
}

}  // namespace

bool GuidedCorpus::Observe(const RunOptions& scenario, const checker::TrialSignals& signals) {
  bool news = false;
  for (const std::string& f : Features(signals)) news = seen_.insert(f).second || news;
  const double closeness = Closeness(signals);
  const bool closer = closeness > closest_;
  closest_ = std::max(closest_, closeness);
  if (!news && !closer) return false;
  kept_.push_back({scenario, closeness, 0});
  if (kept_.size() > kMaxKept) {
    auto least = std::min_element(kept_.begin(), kept_.end(),
                                  [](const Kept& a, const Kept& b) { return a.closeness < b.closeness; });
    kept_.erase(least);
  }
  return true;
}

RunOptions GuidedCorpus::Mutate(const SearchSpace& space, Rng& rng, const std::string& name) {
  // Pick in proportion to (1 + closeness) / (1 + times picked).
  double total = 0;
  for (const Kept& k : kept_) total += (1 + k.closeness) / (1 + k.picked);
  double u = rng.Unit() * total;
  size_t pick = 0;
  for (; pick + 1 < kept_.size(); ++pick) {
    u -= (1 + kept_[pick].closeness) / (1 + kept_[pick].picked);
    if (u <= 0) break;
  }
  ++kept_[pick].picked;
  RunOptions o = kept_[pick].scenario;
  o.name = name;
  const Millis ttl = o.ttl;

  // One or two operators; the last three need a fault to act on.
  const int steps = rng.Unit() < 0.3 ? 2 : 1;
  for (int step = 0; step < steps; ++step) {
    const bool has_fault = !o.faults.empty();
    const bool can_add = !space.faults.empty() && static_cast<int>(o.faults.size()) < space.max_faults;
    switch (rng.Uniform(0, 7)) {
      case 0:  // another interleaving of the same schedule
        o.seed = DrawSeed(rng);
        break;
      case 1:  // longer holds: a critical section that outlasts the lease
        o.hold = faults::TtlTimes(o.hold, 1.2 + 1.3 * rng.Unit(), Millis(1));
        break;
      case 2:  // a client more or fewer
        o.clients = std::clamp(o.clients + (rng.Unit() < 0.5 ? -1 : 1), space.min_clients, space.max_clients);
        break;
      case 3:  // a second event long after the first
        if (can_add) {
          faults::FaultOptions f = FreshFault(space, rng);
          if (f.id != "none") {
            f.first_at = has_fault ? WindowsEnd(o.faults.back()) + faults::TtlTimes(ttl, 0.5 + 2.5 * rng.Unit(), Millis(1))
                                   : f.first_at;
            f.windows = 1;
            o.faults.push_back(f);
          }
        }
        break;
      case 4:  // a second event anywhere
        if (can_add) {
          faults::FaultOptions f = FreshFault(space, rng);
          if (f.id != "none") o.faults.push_back(f);
        }
        break;
      case 5:  // a window shifted by up to half a TTL
        if (has_fault) {
          faults::FaultOptions& f = o.faults[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(o.faults.size()) - 1))];
          const int64_t shift = static_cast<int64_t>(std::llround((rng.Unit() - 0.5) * static_cast<double>(ttl.count())));
          f.first_at = std::max(Millis(0), f.first_at + Millis(shift));
        }
        break;
      case 6:  // a window lengthened or shortened
        if (has_fault) {
          faults::FaultOptions& f = o.faults[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(o.faults.size()) - 1))];
          f.duration = faults::TtlTimes(f.duration, std::pow(2.0, 2 * rng.Unit() - 1), Millis(10));
        }
        break;
      default:  // aimed at the holder
        for (faults::FaultOptions& f : o.faults) {
          if (TakesTarget(f.id) && f.targets.empty()) f.params["target"] = "holder";
        }
        break;
    }
  }
  const Millis tail = TailFor(ttl);
  TrimWindowsToFit(&o, tail, space.max_duration);
  o.duration = std::min(space.max_duration, DurationFor(o, tail));
  return o;
}

}  // namespace locklab::harness
