// How a fault's options are drawn for a search (`locklab hunt`): the facts of the search
// space a draw may read (FaultDrawContext) and the draws the faults share (nodes, a pause
// point, a clock offset, a length relative to the TTL).
//
// A fault's own draw (FaultDescriptor::draw, faults/fault_descriptor.h) reads the context
// and consumes the seeded Rng it is given; nothing else. The hunt (harness/hunt/hunt_space.cc) fills
// the context from its SearchSpace and calls the draw in a fixed order, so a hunt seed
// replays its draws: a draw must consume the Rng the same way for the same context, and a
// change to the order of its calls changes every later draw of that seed
// (harness/hunt/tests/testdata/hunt_draws.txt pins them). Pure; thread-compatible.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"

namespace locklab::faults {

// What a fault's draw may know of the search: the lock's declared facts and the hunt's
// settings for this draw (harness/hunt/hunt_space.h SearchSpace says what each means there).
struct FaultDrawContext {
  Millis ttl{500};  // this scenario's TTL: every length scales with it
  int nodes = 1;    // the lock's nodes (1-based ids 1..nodes)
  // The workload's pause points (never empty) and the points the lock itself announces
  // (LockInfo::points, a driver's hello; may be empty).
  std::vector<std::string> points;
  std::vector<std::string> lock_points;
  // The workload's points at its lock commands (workloads::CommandPoints; catalog.h
  // DrawCommandArm).
  std::vector<std::string> command_points;
  std::string arm_at;       // when set: a fault that can be armed is armed at this point
  bool quiet = false;       // the workload is quiet (the first pass's quiet tries)
  bool fine_drift = false;  // the first pass's fine-drift try (clock-drift's second entry)
  // The first pass's try that steps a clock back at a lock's own point: the direction in
  // which the time a lock measures shrinks and a lease claims too much (DrawOffset).
  bool clock_back = false;
  Millis max_duration{20000};  // the longest trial
  Millis tail{1000};           // the run kept after a trial's last window
  // The weight of a kind ("client-pause@before-write"); 1 when the search gives none.
  std::function<double(const std::string& kind)> weight;
};

double LogUniform(Rng& rng, double lo, double hi);

// `x` times `ttl`, in whole milliseconds, at least `floor`.
Millis TtlTimes(Millis ttl, double x, Millis floor = Millis(10));

template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(v.size()) - 1))];
}

// One of `v` (not empty) with probability proportional to weight(v[i]).
template <typename T, typename W>
size_t WeightedIndex(Rng& rng, const std::vector<T>& v, W weight) {
  double total = 0;
  for (const auto& x : v) total += weight(x);
  double r = rng.Unit() * total;
  for (size_t i = 0; i < v.size(); ++i) {
    r -= weight(v[i]);
    if (r < 0) return i;
  }
  return v.size() - 1;
}

// One node, a minority or a majority of the lock's nodes, in increasing order: a majority
// with probability `majority_odds`, else one node or a minority, half each (the default
// gives each of the three a third).
std::vector<int> DrawNodes(const FaultDrawContext& c, Rng& rng, double majority_odds = 1.0 / 3);

// A signed wall-clock offset of 0.5 to 10 TTLs, in seconds with millisecond digits; a step
// back with probability `back` (always with c.clock_back).
std::string DrawOffset(const FaultDrawContext& c, Rng& rng, double back = 0.5);

// A pause point for fault `id`: one the lock announces half the time (when it has any),
// else the workload's; within each, by the weights of "id@point".
std::string DrawPoint(const FaultDrawContext& c, Rng& rng, const std::string& id);

// The point an armed fault `id` waits at: FaultDrawContext::arm_at when set (no draw), else
// DrawPoint.
std::string ArmPoint(const FaultDrawContext& c, Rng& rng, const std::string& id);

}  // namespace locklab::faults
