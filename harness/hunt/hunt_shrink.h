// Shrinking a failing scenario (QuickCheck's shrink, on a lock schedule): the simpler
// scenarios to try next, most simplifying first.
//
// Each candidate is one step away from the scenario: drop a fault, drop windows, fewer
// clients or keys, a shorter run, a shorter or earlier window, fewer nodes hit, a parameter
// back to its default (the params its fault's descriptor calls simpler:
// faults/fault_descriptor.h FaultHuntRules::simpler_params), times rounded. The hunt keeps a step only when the simpler scenario
// still fails in enough reruns (hunt.h); a candidate never equals its parent, and every
// step makes a measure of size strictly smaller (ScenarioSize), so shrinking ends.
//
// Pure and thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "harness/scenario/run_options.h"

namespace locklab::harness {

struct ShrinkStep {
  std::string what;    // "drop fault 2 (clock-jump)", "client-pause window 1 200 -> 600 ms"
  RunOptions options;
};

// The candidates one step simpler than `o`, most simplifying first. `ttl` bounds how short
// a window may become (a tenth of it) and the tail kept after the last window.
std::vector<ShrinkStep> ShrinkCandidates(const RunOptions& o);

// The other way, for a minimal scenario that fails too seldom to replay (fewer than 8 of 10
// reruns): `o` with more chances to fail, one candidate per size, smallest first. Every
// fault's windows come twice, then three times as often (the run as long as they need; a
// fault with as many windows as fit gets a run that much longer; OneWindowOnly faults stay
// as they are). The shrink found the kind
// of schedule that fails; a thin failure (a drift that wins one time in two per window)
// comes more often with more windows of it. A candidate whose run would last longer than
// `max_duration` (a hunt trial's longest) is left out: ten reruns of it would cost more than
// the search did (a 5 s pause repeated six times made a 47 s run).
std::vector<ShrinkStep> StrengthenCandidates(const RunOptions& o, Millis max_duration);

// A size that every shrink step decreases: faults, windows, clients, keys, nodes hit,
// non-default params, then milliseconds of run, windows and waits.
double ScenarioSize(const RunOptions& o);

}  // namespace locklab::harness
