// Linearizability internals, part 4: the search over one key's operations.
//
// A sweep over the partition's entries in time order ("just-in-time linearization", as in
// Lowe's and Horn & Kroening's checkers). The search keeps every configuration a
// linearization of the history so far can be in:
//   * the model state;
//   * which of the *open* operations with a known outcome are already linearized (a bitset
//     over the slots of the operations open now, never over the whole history: its size is
//     the history's concurrency, not its length);
//   * which operations of unknown outcome may still take effect, as a count per class of
//     interchangeable operations (same kind and arguments, so same effect).
// A call opens an operation (or adds an unknown one to every configuration's pool). The return
// of an operation keeps only the configurations that can linearize it by then: each one that
// has not yet does so after linearizing any of the other open operations first (the closure).
// No configuration left = no linearization of this prefix: the history is invalid, and this
// return is the end of the shortest prefix that cannot be linearized. Configurations that are
// the same except for a pool that is a subset of another's are dropped (dominated: every
// continuation of the smaller one is one of the larger one's, by never using the extra ops).
//
// Rules for operations of unknown outcome, each proved in the comment where it is applied and
// checked against a brute-force checker by linearizability_property_test:
//   R1 (owner models) a token whose every operation is unknown is dropped with them all;
//   R2 (owner models) once the last event of a token's operations has passed, its unknown
//      acquires leave the pools, and its unknown releases stay only (once) where it holds;
//   R3 (registers, unless a failed cas is an observation) an unknown write of a value that no
//      later read or cas observes is dropped, and leaves the pools after its last observer.
//
// Wide windows (many ops open at once): of the open ops of one class (same kind and
// arguments), only the one that returns first is ever linearized next, and once one return's
// closure passes options.probe_after_configs configurations a depth-first probe with a memo
// (Wing & Gong, Lowe) searches from the last quiescent point; it decides (valid, or invalid
// at the same shortest prefix) or gives up within its bound, and the sweep replays from there.
// Under the owner models a token's acquire and release open at once are linearized as one
// block whenever the lock is free (a configuration with the block done can go wherever one
// without it can), so configurations no longer differ by which such pairs are done.
//
// Budgets: the sweep stops with kUnknown (never a guess) when `deadline` passes or the
// configurations held at once exceed options.memory_budget_bytes; the reason names the key,
// the event and its line. Internal to checker/. Thread safety: pure function of its arguments.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checker/lin_model.h"
#include "checker/linearizability.h"

namespace locklab::checker::lin {

using Clock = std::chrono::steady_clock;

struct SweepOutcome {
  LinVerdict verdict = LinVerdict::kValid;
  std::string reason;
  uint64_t states = 0;
  size_t peak_bytes = 0;
  size_t dropped_unknown = 0;  // unknown ops that rules R1/R3 showed cannot matter
  // kInvalid: the op whose return could not be placed, and what the search had there.
  int32_t failed_op = -1;
  int64_t prefix_events = 0;
  std::vector<State> dead_states;
  std::vector<int32_t> tail;
  std::vector<int32_t> open_ops;  // open ops (known outcome) and live unknown ones, at the end
};

SweepOutcome RunSweep(Model model, const Partition& part, const LinearizabilityOptions& options,
                      Clock::time_point deadline);

}  // namespace locklab::checker::lin
