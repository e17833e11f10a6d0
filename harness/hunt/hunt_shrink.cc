#include "harness/hunt/hunt_shrink.h"

#include <algorithm>
#include <cmath>

#include "faults/fault_descriptor.h"
#include "harness/hunt/hunt_space.h"

namespace locklab::harness {
namespace {

// The simpler value of fault `f`'s param `name`: its default, when the fault's descriptor
// lists it among its simpler params (FaultHuntRules::simpler_params); null otherwise.
const std::string* SimplerValue(const faults::FaultOptions& f, const std::string& name) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f.id);
  if (d == nullptr) return nullptr;
  const auto& simpler = d->hunt.simpler_params;
  if (std::find(simpler.begin(), simpler.end(), name) == simpler.end()) return nullptr;
  const faults::FaultParamInfo* p = faults::FindFaultParam(f.id, name);
  return p == nullptr ? nullptr : &p->default_value;
}

// Sets the params of `f` that hold its window's length (FaultHuntRules::
// params_following_duration, delay's delay_ms) to its duration.
void FollowDuration(faults::FaultOptions* f) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f->id);
  if (d == nullptr) return;
  for (const auto& name : d->hunt.params_following_duration) {
    if (f->params.count(name)) f->params[name] = std::to_string(f->duration.count());
  }
}

// Rounds `t` to a "round" number of ms: 2 significant digits (1234 -> 1200, 87 -> 87).
Millis Round(Millis t) {
  int64_t v = t.count();
  if (v < 100) return t;
  int64_t unit = 1;
  while (v / unit >= 100) unit *= 10;
  return Millis((v + unit / 2) / unit * unit);
}

std::string InMs(Millis t) { return std::to_string(t.count()) + " ms"; }

// The run a shrunk or strengthened scenario keeps after its last window: 2 TTLs, at least
// 500 ms (time for a late second holder to show).
Millis TailAfterWindows(const RunOptions& o) { return std::max(Millis(500), o.ttl * 2); }

std::string FaultName(const RunOptions& o, size_t i) {
  return "fault " + std::to_string(i + 1) + " (" + o.faults[i].id + ")";
}

}  // namespace

double ScenarioSize(const RunOptions& o) {
  double size = 0;
  double ms = static_cast<double>(o.duration.count() + o.hold.count() + o.think.count());
  for (const auto& f : o.faults) {
    size += 1e9;
    size += 1e8 * std::max(1, f.windows);
    size += 1e6 * static_cast<double>(f.nodes.size());
    for (const auto& [k, v] : f.params) {
      const std::string* simpler = SimplerValue(f, k);
      if (simpler != nullptr && *simpler != v) size += 1e6;
    }
    ms += static_cast<double>(f.first_at.count() + f.duration.count() + f.interval.count());
  }
  size += 1e7 * o.clients + 1e7 * o.keys;
  if (o.renew_every > Millis(0)) size += 1e6;
  if (o.validity == "honour") size += 1e6;
  return size + ms;
}

std::vector<ShrinkStep> ShrinkCandidates(const RunOptions& o) {
  std::vector<ShrinkStep> out;
  const Millis tail = TailAfterWindows(o);
  auto add = [&](std::string what, RunOptions c) {
    // A shorter schedule can leave the run longer than it needs: cut it with the step.
    c.duration = std::min(c.duration, DurationFor(c, tail));
    if (ScenarioSize(c) < ScenarioSize(o)) out.push_back({std::move(what), std::move(c)});
  };
  // Whole faults first: the fewer faults, the clearer the story. The last one too: a lock
  // that fails with no fault at all must be told so, not given a fault it does not need.
  if (!o.faults.empty()) {
    for (size_t i = 0; i < o.faults.size(); ++i) {
      RunOptions c = o;
      c.faults.erase(c.faults.begin() + static_cast<std::ptrdiff_t>(i));
      add("drop " + FaultName(o, i), c);
    }
  }
  for (size_t i = 0; i < o.faults.size(); ++i) {
    if (o.faults[i].windows != 1) {
      RunOptions c = o;
      c.faults[i].windows = 1;
      add(FaultName(o, i) + ": one window instead of " +
              (o.faults[i].windows == 0 ? std::string("as many as fit")
                                        : std::to_string(o.faults[i].windows)),
          c);
    }
  }
  if (o.clients > 2) {
    RunOptions c = o;
    c.clients = 2;
    add("2 clients instead of " + std::to_string(o.clients), c);
    if (o.clients > 3) {
      c.clients = o.clients - 1;
      add(std::to_string(c.clients) + " clients instead of " + std::to_string(o.clients), c);
    }
  }
  if (o.keys > 1) {
    RunOptions c = o;
    c.keys = 1;
    add("1 key instead of " + std::to_string(o.keys), c);
  }
  // A step that leaves clients working past a lease that nothing renews fails every lease
  // lock, a correct one too: it is another scenario, not a simpler form of this failure.
  const bool past_lease = o.hold > o.ttl;
  if (o.renew_every > Millis(0) && !(past_lease && o.validity == "ignore")) {
    RunOptions c = o;
    c.renew_every = Millis(0);
    add("no renewal by the workload", c);
  }
  if (o.validity == "honour" && !(past_lease && o.renew_every == Millis(0))) {
    RunOptions c = o;
    c.validity = "ignore";
    add("clients ignore the lease's validity", c);
  }
  {
    RunOptions c = o;
    c.duration = DurationFor(o, tail);
    if (c.duration < o.duration) add("run " + InMs(c.duration) + " instead of " + InMs(o.duration), c);
  }
  for (size_t i = 0; i < o.faults.size(); ++i) {
    const auto& f = o.faults[i];
    for (size_t n = 0; f.nodes.size() > 1 && n < f.nodes.size(); ++n) {
      RunOptions c = o;
      c.faults[i].nodes.erase(c.faults[i].nodes.begin() + static_cast<std::ptrdiff_t>(n));
      add(FaultName(o, i) + ": without node n" + std::to_string(f.nodes[n]), c);
    }
    for (const auto& [k, v] : f.params) {
      const std::string* simpler = SimplerValue(f, k);
      if (simpler == nullptr || *simpler == v) continue;
      RunOptions c = o;
      c.faults[i].params[k] = *simpler;
      add(FaultName(o, i) + ": " + k + " " + *simpler + " instead of " + v, c);
    }
    const Millis shortest = std::max(Millis(10), o.ttl / 10);
    if (f.duration / 2 >= shortest) {
      RunOptions c = o;
      c.faults[i].duration = f.duration / 2;
      FollowDuration(&c.faults[i]);
      add(FaultName(o, i) + ": window " + InMs(c.faults[i].duration) + " instead of " +
              InMs(f.duration),
          c);
      c.faults[i].duration = f.duration * 3 / 4;
      FollowDuration(&c.faults[i]);
      add(FaultName(o, i) + ": window " + InMs(c.faults[i].duration) + " instead of " +
              InMs(f.duration),
          c);
    }
    if (f.first_at > Millis(300)) {
      RunOptions c = o;
      c.faults[i].first_at = std::max(Millis(200), f.first_at / 2);
      add(FaultName(o, i) + ": first window at " + InMs(c.faults[i].first_at) + " instead of " +
              InMs(f.first_at),
          c);
    }
  }
  // Round numbers last: they make the schedule readable, not smaller in kind.
  {
    RunOptions c = o;
    c.hold = Round(o.hold);
    c.think = Round(o.think);
    c.acquire_timeout = Round(o.acquire_timeout);
    for (auto& f : c.faults) {
      f.first_at = Round(f.first_at);
      f.duration = Round(f.duration);
      f.interval = Round(f.interval);
      FollowDuration(&f);
    }
    c.duration = Round(c.duration);
    if (ScenarioSize(c) != ScenarioSize(o) && c.duration >= DurationFor(c, Millis(200))) {
      // Rounding may grow a time by a little; it is a step only when the whole shrinks.
      if (ScenarioSize(c) < ScenarioSize(o)) out.push_back({"round the times", c});
    }
  }
  return out;
}

std::vector<ShrinkStep> StrengthenCandidates(const RunOptions& o, Millis max_duration) {
  std::vector<ShrinkStep> out;
  if (o.faults.empty()) return out;
  const Millis tail = TailAfterWindows(o);
  for (int times : {2, 3}) {
    RunOptions c = o;
    bool fit = false;  // a fault with as many windows as fit
    std::vector<std::string> what;
    for (size_t i = 0; i < c.faults.size(); ++i) {
      auto& f = c.faults[i];
      if (OneWindowOnly(f.id)) continue;
      if (f.windows == 0) {
        fit = true;
        continue;
      }
      what.push_back(FaultName(o, i) + ": " + std::to_string(f.windows * times) +
                     " windows instead of " + std::to_string(f.windows));
      f.windows *= times;
    }
    c.duration = std::max(fit ? o.duration * times : o.duration, DurationFor(c, tail));
    if (what.empty() && !fit) break;  // nothing to repeat
    if (c.duration > max_duration) break;  // the next is longer still
    if (fit) what.push_back("run " + InMs(c.duration) + " instead of " + InMs(o.duration));
    std::string joined;
    for (const auto& w : what) joined += (joined.empty() ? "" : "; ") + w;
    out.push_back({joined, c});
  }
  return out;
}

}  // namespace locklab::harness
