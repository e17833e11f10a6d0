// The matrix's outputs: cell verdicts judged from the trials' results, then matrix.json,
// matrix.md and junit.xml in the matrix directory, and matrix.md on stdout.
//
// A cell's verdict is the worst its trials found: V (a trial violated), else L (a trial's
// lock got stuck), else `-` when a trial never ran (an interrupted matrix), else S when every
// trial was safe, else ? (unknown). Only the trials of this output count (Trial::in_slice:
// one shard's, or all of a whole or merged matrix). matrix.json keeps every trial's
// results.json whole, with the plan (its id, rows, columns, trial count) that `locklab merge`
// checks and rebuilds the matrix from; matrix.md is the table a reader reads, ending with the
// measured detection power of a whole matrix (detection_power.h).
//
// Thread safety: WriteMatrix mutates the plan's cells and writes files; call it from the one
// thread that owns the plan, once per plan.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/matrix_plan.h"

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

// Judges the cells (Cell::verdict, counts, mismatch against the expectation), writes the
// three files and prints matrix.md. Returns the number of cells that disagree with their
// expectation. An interrupted matrix says so at the top of matrix.md and in matrix.json; a
// cell with a trial that never ran is `-` (not run), never `?` or S, unless a trial that ran
// found a violation or a stuck lock. `*written` gets the first failed write (a full disk).
int WriteMatrix(Plan* plan, const MatrixOutput& output, Status* written);

}  // namespace locklab::harness
