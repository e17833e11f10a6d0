// GuidedCorpus: the hunt's memory of the scenarios worth building on. After each trial the
// hunt hands it the trial's signals (checker/trial_signals.h); a scenario is kept when it showed a
// feature no earlier trial of the hunt showed (a new outcome kind, a late renewal, a write
// past its lease, a longer wait) or came closer to failing than any kept one. Mutate() then
// makes a new scenario from a kept one, the way a coverage-guided fuzzer mutates the inputs
// that reached new code and Mallory (greybox fuzzing of distributed systems) steers its
// faults by what it observed:
//   - the same schedule with another seed (another interleaving);
//   - a window shifted by up to half a TTL, or lengthened / shortened (x0.5 to x2);
//   - a second fault added after the last window closed, 0.5 to 3 TTLs later (two events
//     in one run: a transient fault on a renewal, then a hold that outlasts the lease), or
//     one added anywhere in the run;
//   - a fault that picks its client aimed at the holder;
//   - longer holds (x1.2 to x2.5: a critical section that outlasts the TTL), or a client
//     more or fewer.
// Kept scenarios are picked in proportion to how close they came, less often the more they
// were mutated already. The corpus holds at most kMaxKept scenarios (the least close go).
//
// Deterministic for a given sequence of Observe calls and Rng; the hunt's draws then depend
// on the trials' outcomes as well as the seed (as its baseline weights already do): every
// trial's scenario file still replays exactly. Thread-compatible.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "base/random.h"
#include "checker/trial_signals.h"
#include "harness/hunt/hunt_space.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

class GuidedCorpus {
 public:
  static constexpr size_t kMaxKept = 64;

  // One ended trial of `scenario` (which did not fail) and what it showed. Returns true when
  // the scenario was kept.
  bool Observe(const RunOptions& scenario, const checker::TrialSignals& signals);
  bool empty() const { return kept_.empty(); }
  size_t size() const { return kept_.size(); }
  // The features seen so far, over every observed trial.
  const std::set<std::string>& seen() const { return seen_; }

  // A new scenario named `name` from a kept one (the corpus must not be empty), drawn
  // within `space` (its TTL, clients, faults, longest trial).
  RunOptions Mutate(const SearchSpace& space, Rng& rng, const std::string& name);

 private:
  struct Kept {
    RunOptions scenario;
    double closeness = 0;
    int picked = 0;
  };
  std::vector<Kept> kept_;
  std::set<std::string> seen_;
  double closest_ = 0;
};

}  // namespace locklab::harness
