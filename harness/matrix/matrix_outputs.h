// The matrix's outputs: cell verdicts judged from the trials' results, then matrix.json,
// matrix.md and junit.xml in the matrix directory, and matrix.md on stdout.
//
// A cell's verdict is the worst its trials found: V (a trial violated), else L (a trial's
// lock got stuck), else `-` when a trial never ran (an interrupted matrix), else S when every
// trial was safe, else ? (unknown). Only the trials of this output count (PlannedTrial::in_slice:
// one shard's, or all of a whole or merged matrix). matrix.json keeps every trial's
// results.json whole, with the plan (its id, rows, columns, trial count) that `locklab merge`
// checks and rebuilds the matrix from; matrix.md is the table a reader reads, ending with the
// measured detection power of a whole matrix (detection_power.h).
//
// A cell regresses when it fails the run: a cell an expectation pins (matrix_plan.h) that
// disagrees with it (verdict or resource), or, under --fail-on, a cell no expectation pins
// whose verdict is in the set (V violated, L stuck, ? unknown); a pinned cell is judged by
// its entry alone. junit.xml has one testcase per applicable cell: a regressed cell is a
// <failure> whose message is its one regression line (expected X, got Y, the deciding
// trial's verdict reason and directory) and whose text lists its trial directories; a cell
// with trials never run is a failure too; a `?` cell nothing judges is <skipped> with its
// reason; every other cell passes (an expected V included). A shard judges no cell against
// expectations or --fail-on (it has only some of a cell's trials; the merge judges them), so
// its junit.xml fails only trials never run, and its cells with no trials of its own are left
// out.
//
// Thread safety: WriteMatrix mutates the plan's cells and writes files; call it from the one
// thread that owns the plan, once per plan.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/matrix/matrix_plan.h"

namespace locklab::harness {

// Where and as what a matrix is written.
struct MatrixOutput {
  std::string dir;  // the matrix directory
  double elapsed_s = 0;
  // shard_count > 1: one shard of a larger matrix; 1: a whole (or merged) one.
  int shard_index = 1, shard_count = 1;
  std::vector<std::string> merged_from;  // a merged matrix: its shards' directories
  bool interrupted = false;
};

// Judges the cells (Cell::verdict, counts, mismatch against the expectation, regressed),
// writes the three files and prints matrix.md. Returns the number of regressed cells. An interrupted matrix says so at the top of matrix.md and in matrix.json; a
// cell with a trial that never ran is `-` (not run), never `?` or S, unless a trial that ran
// found a violation or a stuck lock. `*written` gets the first failed write (a full disk).
int WriteMatrix(Plan* plan, const MatrixOutput& output, Status* written);

// After WriteMatrix, for the end of the command's output: "regressed: N cell(s) (expectations
// FILE, --fail-on ...):" and one line per regressed cell, or "regressed: none (...)"; "" when
// the plan has neither expectations nor --fail-on.
std::string RegressionSummary(const Plan& plan);
// "gate: N of M cells pinned by FILE, K by --fail-on, J unpinned": how much of the run a gate
// judges (M: the applicable cells; J: those neither an entry nor --fail-on watches).
std::string PinSummary(const Plan& plan);

// `--write-expect FILE`, after WriteMatrix: an expectation file (the format of
// matrix_plan.h) pinning every judged cell's verdict (S, V, L) with violated_in (and
// stuck_in for L). The resource letter is not pinned (one run's: whether a stale write
// lands is timing unless the lock fences); a V cell whose resource stayed intact carries
// `# resource = "S"`, commented, to pin by hand. A `?` cell is not pinned (an unknown is no
// baseline) but named in a comment; n/a cells are left out. A cell whose detection power was
// measured (the preset directory's detection-power.json, in the plan's mode) says in a comment
// how often its letter came out there ("# measured: V in 9 of 10 quick matrices ...").
// Read back by --expect with the same flags and seed, it pins what this run found. A failed
// write is Status::Io naming the file (exit 70). *pinned: the number of [[cell]] entries.
Status WriteExpectationFile(const Plan& plan, const std::string& path, int* pinned);

// `--write-expect PATH` of `locklab COMMAND` (matrix, merge), after WriteMatrix: nothing when
// PATH is "", else writes the file and prints "expectations: PATH (N cell(s) pinned)" — unless
// the run is `incomplete` (why, e.g. "the matrix was interrupted"): a partial baseline would
// leave cells out, so none is written and stderr says why. Returns 0, or after its one line
// the exit code of a failed write (70).
int WriteExpectFlag(const Plan& plan, const std::string& path, const std::string& command,
                    const std::string& incomplete);

}  // namespace locklab::harness
