#include "harness/hunt/hunt_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "faults/fault_descriptor.h"
#include "locks/lock.h"
#include "workloads/counter_workload.h"

namespace locklab::harness {
namespace {

using faults::LogUniform;
using faults::Pick;
using faults::WeightedIndex;

// `x` times the TTL, in whole milliseconds, at least `floor`.
Millis TtlTimes(const SearchSpace& s, double x, Millis floor = Millis(10)) { return faults::TtlTimes(s.ttl, x, floor); }

double Weight(const SearchSpace& s, const std::string& kind) {
  auto it = s.weights.find(kind);
  return it == s.weights.end() ? 1.0 : it->second;
}

// Whether fault `f` bends the time a lease is measured in (FaultHuntRules::bends_lease_time):
// what those break shows only in a lease's last milliseconds, when the client uses it to the
// end.
bool BendsLeaseTime(const faults::FaultOptions& f) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f.id);
  return d != nullptr && d->hunt.bends_lease_time && d->hunt.bends_lease_time(f);
}

// What a fault's draw may read of the space (faults/fault_draw.h).
faults::FaultDrawContext DrawContext(const SearchSpace& s) {
  faults::FaultDrawContext c;
  c.ttl = s.ttl;
  c.nodes = s.nodes;
  c.points = s.points.empty() ? workloads::HoldPausePoints() : s.points;
  c.command_points = workloads::CommandPoints();
  c.lock_points = s.lock_points;
  c.arm_at = s.arm_at;
  c.quiet = s.quiet;
  c.fine_drift = s.fine_drift;
  c.clock_back = s.clock_back;
  c.max_duration = s.max_duration;
  c.tail = TailFor(s.ttl);
  c.weight = [&s](const std::string& kind) { return Weight(s, kind); };
  return c;
}

faults::FaultOptions DrawFault(const SearchSpace& s, Rng& rng, const std::string& id) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(id);
  faults::FaultOptions f;
  f.id = id;
  f.first_at = Millis(rng.Uniform(200, std::max<int64_t>(1000, 3 * s.ttl.count())));
  f.duration = TtlTimes(s, LogUniform(rng, 0.3, 5));
  f.interval = TtlTimes(s, LogUniform(rng, 0.5, 4));
  f.windows = static_cast<int>(rng.Uniform(1, 3));
  if (OneWindowOnly(id)) f.windows = 1;  // drawn all the same: a seed replays its draws
  // The fault's own options (its params, nodes, targets), by its descriptor; a fault that can
  // be armed is armed at SearchSpace::arm_at when set (FaultDrawContext::arm_at).
  if (d != nullptr && d->draw) d->draw(DrawContext(s), rng, &f);
  // SearchSpace::stop_past_lease: 1 to 5 TTLs. A shorter stop on a free key changes nothing a
  // lock can get wrong; a longer one lets the key expire under the stopped client, and what
  // its next command does then is what the try is for. Drawn after the point and before the
  // target: the order a seed replays.
  if (s.stop_past_lease && d != nullptr && d->hunt.outlasts_lease_when_quiet) {
    f.duration = TtlTimes(s, LogUniform(rng, 1, 5));
  }
  if (TakesTarget(id) && !f.params.count("target")) {
    // Whom the window hits: anyone, the client holding the lock now, or the one that just
    // released it (a late message of a former holder).
    double u = rng.Unit();
    f.params["target"] = u < 0.5 ? "any" : u < 0.8 ? "holder" : "just-released";
  }
  return f;
}

// A busy key: 3 clients at least, one key, thinks of 0.2 TTL at most (a waiter is there
// when the lease or the holder goes wrong).
void MakeKeyBusy(const SearchSpace& s, RunOptions* o) {
  o->clients = std::max(o->clients, std::min(3, s.max_clients));
  o->keys = 1;
  o->think = std::min(o->think, TtlTimes(s, 0.2, Millis(0)));
}

// A window armed at a client's lock command (DrawCommandArm), and a late stop
// (SearchSpace::stop_past_lease, not quiet) at before-release, land on a busy key (3 clients
// at least, one key, short thinks, holds of 0.4 TTL at least): a waiter is there, and the next
// holder still holds, when the disturbed acquire or release goes wrong. At after-acquire the
// hold outlasts the TTL (validity ignored, renewed every TTL/3 by a lock that renews on
// request), where a renewal path the disturbed renewal broke shows. Returns the run the armed
// holder needs after first_at to come back to its point and through that hold.
Millis ShapeForCommandArm(const SearchSpace& s, Rng& rng, RunOptions* o) {
  const auto& cp = workloads::CommandPoints();
  std::string point = s.stop_past_lease && !s.quiet ? workloads::kPointBeforeRelease : "";
  for (const auto& f : o->faults) {
    const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f.id);
    const std::string p = f.Param("point", "");
    if (d != nullptr && d->hunt.disturbs_commands && std::count(cp.begin(), cp.end(), p)) point = p;
  }
  if (point.empty()) return Millis(0);
  MakeKeyBusy(s, o);
  o->hold = std::max(o->hold, TtlTimes(s, 0.4 + 0.4 * rng.Unit(), Millis(1)));
  const Millis turn = o->hold + o->think;
  if (point != workloads::kPointAfterAcquire) return point == workloads::kPointBeforeRelease ? o->hold : turn;
  if (s.validity != "honour") {
    o->validity = "ignore";
    o->hold = TtlTimes(s, 1.2 + 1.8 * rng.Unit(), Millis(1));
    o->renew_every = s.can_renew ? TtlTimes(s, 1.0 / 3, Millis(1)) : Millis(0);
  }
  return o->clients * (o->hold + o->think) + o->hold;
}

// The rest of DrawScenario, once the scenario's TTL is chosen (`s.ttl` is it).
RunOptions DrawWithTtl(const SearchSpace& s, Rng& rng, RunOptions o);

// The faults of `s` that disturb commands (FaultHuntRules::disturbs_commands).
std::vector<std::string> DisturbingFaults(const SearchSpace& s) {
  std::vector<std::string> out;
  for (const auto& id : s.faults) {
    const faults::FaultDescriptor* d = faults::FindFaultDescriptor(id);
    if (d != nullptr && d->hunt.disturbs_commands) out.push_back(id);
  }
  return out;
}

// SearchSpace::two_event_share: replaces the faults and workload drawn in `o` by two
// events, and returns the run kept after the last window (the tail) they need: with holds
// past the TTL, one more turn of every client after the first event.
Millis DrawTwoEvents(const SearchSpace& s, Rng& rng, const std::vector<std::string>& disturbing,
                     RunOptions* o) {
  faults::FaultOptions first = DrawFault(s, rng, Pick(rng, disturbing));
  first.windows = 1;
  first.first_at = TtlTimes(s, 0.5 + 1.5 * rng.Unit(), Millis(200));
  first.duration = TtlTimes(s, 0.3 + 0.6 * rng.Unit(), Millis(1));
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(first.id);
  if (d != nullptr) {
    for (const auto& p : d->hunt.params_following_duration) first.params[p] = std::to_string(first.duration.count());
  }
  if (TakesTarget(first.id)) first.params["target"] = "holder";
  o->faults = {first};
  // A busy key: two to four clients that take turns quickly, so a waiter is there when a
  // lease runs out.
  o->clients = std::min(o->clients, 4);
  o->think = TtlTimes(s, 0.3 * rng.Unit(), Millis(0));
  const bool can_stop = std::find(s.faults.begin(), s.faults.end(), "client-pause") != s.faults.end();
  // Clients that honour validity (--validity honour) stop at a lease's end whatever its
  // hold: only a later stop can make a difference there.
  // Two times in three, less once holds past the TTL failed the baseline too (DrawLess).
  const double past_ttl = 2 * Weight(s, kHoldPastTtl);
  const bool long_holds = s.validity != "honour" && (!can_stop || rng.Unit() * (past_ttl + 1) < past_ttl);
  if (long_holds) {
    o->validity = "ignore";
    o->hold = TtlTimes(s, 1.2 + 1.8 * rng.Unit(), Millis(1));
    o->renew_every = s.can_renew ? TtlTimes(s, 1.0 / 3, Millis(1)) : Millis(0);
    return TailFor(s.ttl) + o->clients * (o->hold + o->think);
  }
  faults::FaultOptions stop = DrawFault(s, rng, "client-pause");
  stop.params.erase("point");
  stop.params["target"] = "holder";
  stop.windows = 1;
  stop.first_at = WindowsEnd(first) + TtlTimes(s, 0.5 + 1.5 * rng.Unit(), Millis(1));
  stop.duration = TtlTimes(s, 1 + 2 * rng.Unit(), Millis(1));
  o->faults.push_back(stop);
  return TailFor(s.ttl);
}

}  // namespace

void ApplyDriverHello(const locks::DriverHello& hello, bool ttl_given, SearchSpace* space) {
  for (const auto& p : hello.points) space->lock_points.push_back(p);
  if (hello.nodes) space->nodes = *hello.nodes;
  if (hello.ttl && !ttl_given) {
    space->ttl = *hello.ttl;
    space->ttls.clear();
  }
}

bool CanBeArmed(const std::string& id) { return faults::FindFaultParam(id, "point") != nullptr; }

std::vector<FirstPassDraw> FirstPass(const SearchSpace& s, Rng& rng) {
  std::vector<FirstPassDraw> tiers[3];
  for (const auto& id : s.faults) {
    const faults::FaultDescriptor* d = faults::FindFaultDescriptor(id);
    tiers[2].push_back({.fault = id, .busy = true});
    if (d != nullptr && d->hunt.fine_first_pass_try) tiers[2].push_back({.fault = id, .fine_drift = true});
    if (!CanBeArmed(id) || d == nullptr) continue;
    if (d->hunt.outlasts_lease_when_quiet) {
      tiers[0].push_back({.fault = id, .point = workloads::kPointBeforeRelease, .late = true});
      if (s.lock_points.empty()) tiers[0].push_back({.fault = id, .point = workloads::kPointBeforeWrite, .quiet = true});
    }
    if (d->hunt.disturbs_commands) {
      for (const auto& p : workloads::CommandPoints()) tiers[1].push_back({.fault = id, .point = p});
      continue;
    }
    for (const auto& p : s.lock_points) {
      tiers[0].push_back({.fault = id, .point = p});
      faults::FaultOptions armed;
      armed.id = id;
      armed.params["point"] = p;
      if (d->hunt.bends_lease_time && d->hunt.bends_lease_time(armed)) {
        tiers[0].push_back({.fault = id, .point = p, .clock_back = true});
      } else {
        tiers[0].push_back({.fault = id, .point = p, .quiet = true});
      }
    }
  }
  std::vector<FirstPassDraw> pass;
  for (auto& tier : tiers) {
    for (size_t i = tier.size(); i > 1; --i) {  // Fisher-Yates
      std::swap(tier[i - 1], tier[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(i) - 1))]);
    }
    pass.insert(pass.end(), tier.begin(), tier.end());
  }
  return pass;
}

SearchSpace FirstPassSpace(const SearchSpace& space, const FirstPassDraw& draw) {
  SearchSpace one = space;
  one.faults = {draw.fault};
  one.arm_at = draw.point;
  one.quiet = draw.quiet;
  one.stop_past_lease = draw.quiet || draw.late;
  one.fine_drift = draw.fine_drift;
  one.busy_key = draw.busy || draw.clock_back;
  one.clock_back = draw.clock_back;
  if (one.stop_past_lease && one.validity.empty()) one.validity = "honour";
  one.max_faults = 1;
  one.two_event_share = 0;
  return one;
}

bool RenewalDecides(const RunOptions& o, bool lock_renews, bool baseline_renews) {
  return lock_renews != baseline_renews && o.renew_every > Millis(0) && o.hold > o.ttl;
}

std::vector<std::string> FaultKinds(const faults::FaultOptions& f) {
  std::vector<std::string> kinds = {f.id};
  auto point = f.params.find("point");
  if (point != f.params.end() && f.Param("mode", "targeted") != "random") kinds.push_back(f.id + "@" + point->second);
  return kinds;
}

std::vector<std::string> ScenarioKinds(const RunOptions& o) {
  std::vector<std::string> kinds = {"validity=" + o.validity};
  if (o.validity == "ignore" && o.hold > o.ttl) kinds.push_back(kHoldPastTtl);
  for (const auto& f : o.faults) {
    for (auto& k : FaultKinds(f)) kinds.push_back(std::move(k));
  }
  return kinds;
}

RunOptions OnBaselineLock(RunOptions o, const std::string& baseline) {
  const locks::LockInfo* info = locks::FindLock(o.lock);
  const locks::LockInfo* base = locks::FindLock(baseline);
  if (info != nullptr && base != nullptr) {
    for (auto& f : o.faults) {
      auto point = f.params.find("point");
      if (point == f.params.end()) continue;
      bool base_has = std::find(base->points.begin(), base->points.end(), point->second) != base->points.end();
      auto stand_in = info->stand_in_points.find(point->second);
      if (!base_has && stand_in != info->stand_in_points.end()) point->second = stand_in->second;
    }
  }
  o.lock = baseline;
  o.knobs.clear();
  return o;
}

bool OneWindowOnly(const std::string& fault_id) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(fault_id);
  return d != nullptr && d->hunt.one_window_only;
}

Millis WindowsEnd(const faults::FaultOptions& f) {
  const int w = std::max(1, f.windows);
  return f.first_at + w * f.duration + (w - 1) * f.interval;
}

Millis LastWindowEnd(const RunOptions& o) {
  Millis end{0};
  for (const auto& f : o.faults) end = std::max(end, WindowsEnd(f));
  return end;
}

void TrimWindowsToFit(RunOptions* o, Millis tail, Millis max_duration) {
  while (DurationFor(*o, tail) > max_duration) {
    faults::FaultOptions* last = nullptr;
    for (auto& f : o->faults) {
      if (last == nullptr || WindowsEnd(f) > WindowsEnd(*last)) last = &f;
    }
    // One window that does not fit: the others' windows would not shorten the run.
    if (last == nullptr || last->windows <= 1) return;
    --last->windows;
  }
}

Millis DurationFor(const RunOptions& o, Millis tail) {
  return std::max(Millis(1000), LastWindowEnd(o) + tail);
}

bool TakesTarget(const std::string& id) { return faults::FindFaultParam(id, "target") != nullptr; }

uint64_t DrawSeed(Rng& rng) { return (rng.Fork() & ((uint64_t{1} << 48) - 1)) | 1; }

Millis TailFor(Millis ttl) { return std::max(Millis(1000), 3 * ttl); }

RunOptions DrawScenario(const SearchSpace& s, Rng& rng, const std::string& name) {
  RunOptions o;
  o.name = name;
  o.seed = DrawSeed(rng);
  o.lock = s.lock;
  o.knobs = s.knobs;
  o.driver_args = s.driver_args;
  o.ttl = s.ttls.empty() ? s.ttl : Pick(rng, s.ttls);
  SearchSpace scaled = s;  // every time below is relative to this scenario's TTL
  scaled.ttl = o.ttl;
  return DrawWithTtl(scaled, rng, std::move(o));
}

namespace {

RunOptions DrawWithTtl(const SearchSpace& s, Rng& rng, RunOptions o) {
  o.clients = static_cast<int>(rng.Uniform(s.min_clients, s.max_clients));
  o.keys = rng.Unit() < 0.75 ? 1 : 2;
  o.hold = TtlTimes(s, 0.05 + 0.55 * rng.Unit(), Millis(1));
  // Up to 0.6 TTL: with shorter pauses the key is hardly ever free, and a lock that re-takes
  // a free key (a renewal that re-SETs an expired key) shows it only then.
  o.think = TtlTimes(s, 0.6 * rng.Unit(), Millis(0));
  // A quiet workload a quarter of the time: two clients that think one to three holds
  // between turns, so the key is mostly free. With more clients or shorter thinks a
  // waiter takes it the moment it is released, and what needs a free key (a renewal that
  // re-takes a key that is gone) never sees one.
  // (Its think time is set below, once the hold is final.)
  const bool quiet = (rng.Unit() < 0.25 || s.quiet) && !s.busy_key;
  const double quiet_thinks = 1 + 2 * rng.Unit();
  if (quiet) o.clients = s.min_clients;
  if (s.busy_key) MakeKeyBusy(s, &o);
  o.acquire_timeout = TtlTimes(s, 1 + 3 * rng.Unit(), Millis(100));
  // The client stops using a lease when its validity says so, or ignores it: half each, by
  // the weights of the two kinds.
  const double honour = Weight(s, "validity=honour"), ignore = Weight(s, "validity=ignore");
  o.validity = !s.validity.empty() ? s.validity : rng.Unit() * (honour + ignore) < honour ? "honour" : "ignore";
  // A client that honours validity may work until its validity ends (a hold of 1 to 1.5
  // TTLs, cut there), a third of the time: the lease's last milliseconds, where a lock
  // that claims more validity than its keys have shows it.
  if (o.validity == "honour" && rng.Unit() < 1.0 / 3) o.hold = TtlTimes(s, 1 + 0.5 * rng.Unit(), Millis(1));
  if (s.can_renew && rng.Unit() < 0.3) o.renew_every = TtlTimes(s, 1.0 / 3, Millis(1));
  std::vector<std::string> pool = s.faults;
  int n = static_cast<int>(
      rng.Uniform(1, std::min<int64_t>(s.max_faults, static_cast<int64_t>(pool.size()))));
  for (int i = 0; i < n && !pool.empty(); ++i) {
    size_t k = WeightedIndex(rng, pool, [&](const std::string& id) { return Weight(s, id); });
    o.faults.push_back(DrawFault(s, rng, pool[k]));
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
  }
  // A fault that bends lease time (BendsLeaseTime) comes with clients that honour validity
  // and work to its end two times in three (else one in six), unless --validity fixed it.
  if (std::any_of(o.faults.begin(), o.faults.end(), BendsLeaseTime) && (s.fine_drift || s.clock_back || rng.Unit() < 2.0 / 3) &&
      (s.validity.empty() || s.validity == "honour")) {
    o.validity = "honour";
    o.hold = TtlTimes(s, 1 + 0.5 * rng.Unit(), Millis(1));
  }
  // A fault armed at one of the lock's own points needs turns that reach it, and a point in
  // a renewal thread (watchdog-renewal-due, every TTL/3) is reached only by a hold longer
  // than the renewal period: such a draw holds 0.4 to 0.8 TTL at least (below the TTL, so a
  // client that ignores validity still stops in time).
  const bool at_lock_point = std::any_of(o.faults.begin(), o.faults.end(), [&](const faults::FaultOptions& f) {
    auto p = f.params.find("point");
    return p != f.params.end() && std::find(s.lock_points.begin(), s.lock_points.end(), p->second) != s.lock_points.end();
  });
  if (at_lock_point) o.hold = std::max(o.hold, TtlTimes(s, 0.4 + 0.4 * rng.Unit(), Millis(1)));
  if (quiet) o.think = Millis(static_cast<int64_t>(std::llround(quiet_thinks * static_cast<double>(o.hold.count()))));
  Millis tail = TailFor(s.ttl) + ShapeForCommandArm(s, rng, &o);
  const std::vector<std::string> disturbing = DisturbingFaults(s);
  if (!disturbing.empty() && s.two_event_share > 0 && !s.quiet && rng.Unit() < s.two_event_share) {
    tail = DrawTwoEvents(s, rng, disturbing, &o);
  }
  TrimWindowsToFit(&o, tail, s.max_duration);
  o.duration = std::min(s.max_duration, DurationFor(o, tail));
  return o;
}

}  // namespace

}  // namespace locklab::harness
