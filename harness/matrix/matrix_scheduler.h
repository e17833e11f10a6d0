// The matrix's job pool: runs a plan's trials `jobs` at a time, each as a child
// `locklab run SCENARIO --no-report --out DIR` on its own scenario file and its own lab.
//
// For each trial it writes <dir>/cells/<name>-<n>.toml, spawns the child with its output in
// the .log beside it, and when the child exits reads the run directory the child printed
// (`run: DIR`) and that run's results.json into PlannedTrial::results. A trial ran when it left a
// results.json and exited below 64; any other is an infrastructure failure. Progress goes to
// stderr, one line per finished trial (rewritten in place on a terminal). On SIGINT/SIGTERM
// (interrupts.h's Interrupted()) no new trial starts and every running child gets SIGINT, so it
// heals its faults and keeps its history; trials that never started are marked not_run.
// A scenario file that cannot be written (a full disk) also stops new trials.
//
// Thread safety: reaps any child of the process (waitpid(-1)), so at most one RunTrials at a
// time per process, on the thread that owns the plan; the plan's trials are mutated.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/matrix/matrix_plan.h"

namespace locklab::harness {

struct ScheduleResult {
  int infra_failures = 0;  // trials that could not start or did not run (exit 64+, no results)
  Status io_error;         // a trial's scenario could not be written: the trials stopped there
};

// Runs plan->all[n] for every n of `slice` (SliceForShard's, in order), `jobs` at a time,
// with their scenario files and logs under matrix_dir/cells.
ScheduleResult RunTrials(Plan* plan, const std::vector<size_t>& slice, const std::string& matrix_dir,
                         int jobs);

}  // namespace locklab::harness
