// Runner: one trial, end to end (Jepsen's test lifecycle, FoundationDB's phases); the
// harness's public entry. The trial itself is harness/trial/trial.h, which says how the phases go.
//
//   setup:  run directory, lab cluster (real redis-server nodes + resource node) or the
//           user's servers (--endpoints), client processes, the fault;
//   run:    an event loop that streams client events into history.jsonl (append, flushed),
//           drives the fault's schedule and forwards pause-point reports;
//   check:  heal the fault, stop the clients, read the final counters, then judge the
//           recorded history only (checker/), write results.json and junit.xml.
// SIGINT/SIGTERM/SIGHUP end the run phase early (harness/trial/interrupts.h); everything is still
// torn down, the history kept and results.json written with "interrupted": true. A failed
// write of history.jsonl ends the run phase the same way, and the trial fails with
// Status::Io (exit 70) naming the file; so does a failed write of results.json or junit.xml.
// Not thread-safe: one trial at a time per process (it installs signal handlers).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "checker/verdict.h"
#include "harness/trial/interrupts.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

// A judged trial in types: what `locklab run` prints and decides on. It says what
// results.json says under the same names (verdict, verdict_reason, seed, ops, acquires,
// mutual_exclusion, resource, lab_lag, interrupted), from the same judgement.
struct TrialSummary {
  checker::Verdict verdict = checker::Verdict::kUnknown;  // checker/verdict.h
  std::string reason;               // why violated or unknown, one line; empty when safe
  uint64_t seed = 0;                // the seed the trial ran with (drawn when none was given)
  int64_t ops = 0;                  // client invocations
  struct Acquires {
    int64_t invoked = 0, ok = 0, refused = 0, unknown = 0;
    int64_t expired_grants = 0;  // ok with validity_ms <= 0: a lease already over
  } acquires;
  int64_t overlapping_pairs = 0;      // hold pairs of one key that overlapped
  int64_t lost_updates = 0;           // acknowledged counter writes the final value lost
  int64_t stale_writes_accepted = 0;  // writes accepted with an older fencing token
  // The lab's own lag (workloads/lag_meter.h): the clients' sleeps that ended late. Beyond a
  // tenth of the TTL the machine itself paused the clients long enough to matter.
  struct LabLag {
    std::chrono::duration<double, std::milli> max{0};
    std::chrono::duration<double, std::milli> bound{0};  // ttl / 10
    bool timing_trusted = true;  // the one trusted rule (checker::TrialOutcome::Trusted)
  } lab_lag;
  bool interrupted = false;  // a signal ended the run phase early
};

struct TrialResult {
  Status status;                      // infrastructure / usage problems
  std::string run_dir;                // always set once the directory exists
  // Both set once the trial was judged (it has a run directory), else null / empty.
  nlohmann::ordered_json results;     // results.json content
  std::optional<TrialSummary> summary;
  int exit_code = 0;                  // docs/design.md 3.5
};

// `quiet`: no progress lines on stderr.
TrialResult RunTrial(RunOptions options, bool quiet = false);

}  // namespace locklab::harness
