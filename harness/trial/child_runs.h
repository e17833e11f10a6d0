// ChildRuns: a pool of child `locklab run SCENARIO --no-report --out DIR` processes, `jobs`
// at a time, each on its own scenario file and its own lab. The matrix (matrix_scheduler.h)
// and hunt (hunt.h) both run their trials through it.
//
// For each ChildRun the pool writes `scenario_path` from `options`, spawns the child with
// stdout and stderr in the .log beside the scenario, and when the child exits reads the run
// directory the child printed (`run: DIR`) and that run's results.json. A run `ran` when it
// left a results.json and exited below 64; any other is an infrastructure failure. On
// SIGINT/SIGTERM (interrupts.h's Interrupted()) no new child starts and every running child
// gets SIGINT, so it heals its faults and keeps its history; runs never started stay
// !done. A scenario file that cannot be written (a full disk) also stops new children, and
// is returned.
//
// Thread safety: reaps any child of the process (waitpid(-1)), so at most one RunChildren
// at a time per process, on the main thread (Spawn's death signal follows the thread).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "checker/verdict.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

struct ChildRun {
  RunOptions options;         // written to scenario_path; options.out_dir is where runs go
  std::string scenario_path;  // FILE.toml; the log is FILE.log
  // Filled by the pool.
  std::string log;
  pid_t pid = -1;
  bool started = false;
  bool interrupted = false;  // sent its one SIGINT (a third makes a trial exit unhealed)
  bool done = false;
  bool ran = false;            // left results.json and exited below 64
  Nanos spawned_at{0}, reaped_at{0};  // MonotonicNow() at its spawn and its reaping (0: not)
  int exit_code = -1;
  std::string run_dir;         // the child's `run: DIR`, "" when it printed none
  nlohmann::ordered_json results;  // results.json, null when none
  // The trial's verdict (checker::TrialOutcome::FromJson; a results.json of another shape is
  // unknown), or nullopt when the run did not run.
  std::optional<checker::Verdict> Verdict() const;
};

// Whether a run's results.json says the lock was stuck (L): liveness.stuck in a trial
// judged safe. A trial that granted no acquire, or could not be judged, is unknown with its
// reason, not a stuck lock (a driver that never started leaves its clients waiting too).
// The one rule for matrix cells, hunt --liveness and reports/matrixcells.py: it is
// checker::TrialOutcome::Stuck (checker/trial_outcome.h) on the results.json.
bool JudgedStuck(const nlohmann::ordered_json& results);

// Runs every run of `runs` not yet done, `jobs` at a time; `on_done(run, finished)` is
// called on the calling thread as each exits (finished counts the runs done so far in this
// call). Returns the first scenario write error (ok otherwise).
Status RunChildren(std::vector<ChildRun*> runs, int jobs,
                   const std::function<void(const ChildRun&, size_t finished)>& on_done);
// The same with the runs supplied as slots free up: `next()` is called whenever fewer than
// `jobs` run (again after each exit), and returns the next run (it must stay at that address
// until the call returns) or null when there is none for now; `on_done` may make more (hunt's
// baseline run of a failed trial). The call returns when `next()` has none and nothing runs.
// A pool that never waits for its slowest run to start the next (hunt's search: one 20 s
// trial no longer holds up the other slots, see hunt.cc).
Status RunChildrenFrom(int jobs, const std::function<ChildRun*()>& next,
                       const std::function<void(const ChildRun&, size_t finished)>& on_done);

}  // namespace locklab::harness
