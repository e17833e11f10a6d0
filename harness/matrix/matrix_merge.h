// `locklab merge SHARD_DIR... [--out DIR] [--no-report] [--write-expect FILE]`: one matrix
// from the matrix.json files of its `--shard I/N` runs.
//
// Every shard's matrix.json carries the plan id (matrix_plan.h) and its shard number; merge
// refuses shards of different plans, a shard given twice, a missing shard and a trial that
// no shard or two shards ran (one line, exit 64). It rebuilds the plan from the first shard
// (rows, columns, cells and their expectations), puts every shard's trials back at their
// place in the whole run's order, and writes matrix.json, matrix.md, junit.xml and the
// report as a whole run of the same seed would (only elapsed time, paths and "merged_from"
// differ). The trials' run directories stay where the shards left them. The cells keep the
// expectations the shards resolved (globs included) and the plan its --fail-on, so the
// merge judges regressions as the whole run would; --write-expect writes the merged
// matrix's cells as an expectation file (matrix_outputs.h), which a shard cannot.
//
// Exit code: 0, 1 when a cell regressed (disagrees with its expectation, or hit the shards'
// --fail-on), 69 when a trial did not run, 64 on bad flags or shards, 70 when a file could
// not be written.
//
// Thread safety: reads and writes files; run from one thread.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunMergeCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
