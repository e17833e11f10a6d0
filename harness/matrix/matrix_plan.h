// The matrix plan: everything a `locklab matrix` will run, decided before anything runs.
//
// A plan is data: the rows (lock ids), the columns (one cell scenario per fault, read from
// a preset directory such as scenarios/matrix/), one Cell per lock x fault with its
// expectation, and every PlannedTrial of every cell in the order of a whole run, each with its
// own scenario (RunOptions) and seed. The seeds are drawn from the matrix seed for the whole
// matrix before any slicing, so trial n has the same seed in a whole run and in any shard,
// and the plan id (a hash of every trial's scenario, the cells, their expectations and the
// --fail-on set) is equal exactly when two shards belong to one matrix. Expectation globs are
// resolved here, per cell, so a shard and `locklab merge` judge the cells the same way. The
// scheduler (matrix_scheduler.h) fills in the trials' outcomes, the outputs
// (matrix_outputs.h) judge the cells from them, and `locklab merge` (matrix_merge.h)
// rebuilds a plan from shard files.
//
// Thread safety: plain values and pure functions (the loaders read files); a Plan is owned
// and mutated by one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "checker/trial_result.h"
#include "harness/lab/driver_servers.h"
#include "harness/scenario/cell_expectations.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

// The default matrix: one cell scenario per fault, and their measured detection power.
extern const std::string kDefaultPresetDir;

// One column: a cell scenario, scenarios/matrix/<fault>.toml.
struct Preset {
  std::string fault;  // the file's stem: the column name
  std::string path;
  RunOptions options;
};

// Every *.toml of `dir` but expected.toml, in the order of the fault registry, then the
// others by name. An unreadable directory is Status::Infrastructure ("cannot read DIR: why");
// a bad scenario, its error.
Status LoadPresets(const std::string& dir, std::vector<Preset>* out);

// Expectation files ([[cell]] entries, --expect, --write-expect): harness/scenario/cell_expectations.h.

// --fail-on: the results that fail a cell no expectation pins (violated, stuck, unknown).
struct FailOn {
  std::set<checker::TrialResult> outcomes;
  bool empty() const { return outcomes.empty(); }
  // Does a cell with this result hit the set? Safe, not run and n/a never do.
  bool Hits(checker::TrialResult result) const { return outcomes.count(result) > 0; }
  // "violated,stuck,unknown" (that order, the ones in the set), "" when empty.
  std::string ToString() const;
};
// "violated,stuck" (any subset of violated, stuck, unknown; comma-separated, each once at
// most) into *out. Returns "" or what is wrong with it (one phrase, for the flag's error).
std::string ParseFailOn(const std::string& words, FailOn* out);

// One child `locklab run` of one cell. `results` is the trial's results.json as written
// (matrix.json keeps it whole), null when the trial left none.
struct PlannedTrial {
  size_t cell = 0;  // index into Plan::cells
  int index = 0;    // 0-based trial number within its cell
  RunOptions options;
  pid_t pid = -1;
  std::string log;
  nlohmann::ordered_json results;
  bool done = false;
  bool ran = false;
  bool in_slice = true;  // false: another shard runs it (--shard)
  bool not_run = false;  // never started: the matrix was interrupted first
};

// One lock x fault cell: its trials, and once judged (JudgeCells), its verdict and counts.
// A result's letter (S V L ? - n/a), as matrix.md, matrix.json and expectation files spell it.
inline std::string Letter(checker::TrialResult r) { return std::string(checker::NameOf(r).letter); }

struct Cell {
  std::string lock, fault;
  bool applicable = true;
  std::string why_not;
  std::vector<size_t> trials;    // indices into Plan::all
  // The cell's result (its letter in matrix.md: checker/trial_result.h): not run when a
  // trial never started (an interrupted matrix), n/a when the fault cannot act on the lock.
  checker::TrialResult result = checker::TrialResult::kUnknown;
  checker::TrialResult resource = checker::TrialResult::kUnknown;  // safe, violated, unknown, not run
  int violated = 0, stuck = 0, safe = 0, unknown = 0;
  int not_run = 0;    // trials never started (an interrupted matrix)
  int untrusted = 0;  // trials whose lab ran late by more than a tenth of the TTL (lab_lag)
  double median_first_violation_ms = -1;
  int fault_bit = 0;          // trials whose fault bit (results.json coverage)
  std::string unknown_reason; // the first unknown trial's verdict_reason
  // Which evidence the cell's faults produced: per fault, the first trial's coverage
  // evidence ("client-pause: client 2 (pid 1234) stopped: state T in /proc/1234/stat"),
  // "; "-joined; "" when no trial recorded any (older results, fault none).
  std::string evidence;
  // The entry that pins the cell (FindExpectation): origin "" when none does.
  std::string expected, expected_resource, origin;
  std::string expected_violated_in, expected_stuck_in;  // the entry's, informational
  bool mismatch = false;  // disagrees with its pinned verdict or resource
  // A regression (JudgeCells): a pinned cell that disagrees with its entry, or an unpinned one
  // whose verdict is in Plan::fail_on. `regression` is its one line ("LOCK x FAULT: expected
  // S, got V (1/1 violated; FILE:LINE): <the trial's verdict reason>; trial DIR").
  bool regressed = false;
  std::string regression;
  // Every trial's run directory (results.json run_dir), in trial order; "" when it left none.
  std::vector<std::string> trial_dirs;
};

// Everything a matrix will run, before it runs: the same for every shard of one matrix.
struct Plan {
  uint64_t seed = 0;
  bool full = false;
  int trials = 0;  // per cell
  int jobs = 6;
  std::vector<std::string> lock_ids, cols;
  std::string expect_path;  // empty: no expectations
  FailOn fail_on;           // --fail-on: what fails an unpinned cell
  std::string preset_dir;   // the cell scenarios (--scenarios), and their detection-power.json
  std::vector<Cell> cells;
  std::vector<PlannedTrial> all;  // every trial of every shard, in the order of a whole run
  // Hash of every trial's scenario, the cells, their expectations and fail_on: two shards
  // belong to one matrix exactly when their ids are equal.
  std::string id;
};

// What the command line decided, for BuildPlan.
struct PlanRequest {
  uint64_t seed = 0;
  bool full = false;
  int trials = 1;  // per cell
  int jobs = 6;
  std::vector<std::string> lock_ids;  // every one known to the registry (locks::FindLock)
  std::map<std::string, std::vector<std::string>> driver_args;  // per driver:PATH lock
  std::vector<Preset> presets;  // the columns, already filtered
  Expectations expectations;
  FailOn fail_on;
  std::string expect_path, preset_dir;
  std::vector<std::string> all_columns;  // every column of preset_dir, before --faults
  std::vector<std::string> endpoints;  // --endpoints: lock nodes first, the resource last
  std::string endpoint_control;
  // --ttl DURATION: every row whose lock uses the lab's TTL runs with it, its cells' times scaled
  // from each preset's ttl_ms (matrix_scaling.h). Unset: the presets' own TTL.
  std::optional<Millis> ttl;
  // The TTL a driver row's hello declared (ttl_ms; probed once per plan, ProbeDriver): the
  // row's cells are scaled to it, --ttl or not.
  std::map<std::string, Millis> driver_ttls;
  // The servers a driver row's hello asked for (backend, nodes, sentinel; driver_servers.h),
  // from the same probe: the row's cells start those nodes, and faults that do not apply to
  // them (DriverFaultWhyNot) are n/a; every other fault runs, in quick mode too. A row not
  // listed runs on Redis with the lock's default (failover n/a: no Sentinel asked for).
  std::map<std::string, DriverServers> driver_servers;
};

// The example lock drivers (examples/drivers/, other languages through the driver protocol)
// are rows of the default matrix after the registry's locks.
extern const std::vector<std::string> kExampleDrivers;

// The cells (lock-major), their trials with seeds drawn from request.seed, and the plan id.
Plan BuildPlan(const PlanRequest& request);

// The first entry of `expectations` that matches no cell of `plan` and no cell of the default
// matrix (every registry lock, mutant and example driver under every column of `columns`):
// Status::BadInput naming its file, line and field, exit 65. Ok when every entry matches.
Status UnmatchedExpectation(const Plan& plan, const Expectations& expectations,
                            const std::vector<std::string>& columns);

// Shard I of N (1-based) runs trials I-1, I-1+N, I-1+2N, ... of the whole run's order:
// marks PlannedTrial::in_slice and returns the indices of the shard's trials.
std::vector<size_t> SliceForShard(Plan* plan, int shard_index, int shard_count);

}  // namespace locklab::harness
