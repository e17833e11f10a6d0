// Runner: one trial, end to end (Jepsen's test lifecycle, FoundationDB's phases).
//
//   setup:  run directory, lab cluster (real redis-server nodes + resource node), client
//           processes, the fault;
//   run:    an event loop that streams client events into history.jsonl (append, flushed),
//           drives the fault's schedule and forwards pause-point reports;
//   check:  heal the fault, stop the clients, read the final counters, then judge the
//           recorded history only (checker/), write results.json and junit.xml.
// SIGINT/SIGTERM/SIGHUP end the run phase early; everything is still torn down, the history
// kept and results.json written with "interrupted": true. Nothing in the event loop blocks
// (control lines to clients are non-blocking), so a signal is seen within one poll (200 ms
// at most). A failed write of history.jsonl ends the run phase the same way, and the trial
// fails with Status::Io (exit 70) naming the file; so does a failed write of results.json or
// junit.xml. Not thread-safe: one trial at a time per process (it installs signal handlers).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "harness/run_options.h"

namespace locklab::harness {

struct TrialResult {
  Status status;                      // infrastructure / usage problems
  std::string run_dir;                // always set once the directory exists
  nlohmann::ordered_json results;     // results.json content
  int exit_code = 0;                  // DESIGN.md 3.5
};

// `quiet`: no progress lines on stderr.
TrialResult RunTrial(RunOptions options, bool quiet = false);

// Installs the SIGINT/SIGTERM/SIGHUP handlers the runner relies on (idempotent).
void InstallInterruptHandlers();
bool Interrupted();

}  // namespace locklab::harness
