// `locklab matrix`: every lock against every fault, several trials per cell, one table;
// `locklab merge`: one matrix from its shards.
//
//   locklab matrix [--locks a,b] [--faults x,y] [--trials N] [--expect FILE] ...
//   locklab merge SHARD_DIR... [--out DIR] [--write-expect FILE]
//
// The rules (cells as data, rows, shards, --ttl scaling, --endpoints, the CI gate, exit
// codes) are docs/design.md 3.8. The pieces: matrix_plan.h (the cells and trials, decided
// before anything runs), matrix_scheduler.h (the pool of child `locklab run`s),
// matrix_outputs.h (cell verdicts, matrix.json, matrix.md, junit.xml), matrix_merge.h.
// Exit codes: 64+ before anything runs, 70 unwritable output, 2 interrupted, 69 a trial that
// could not run, 1 a regressed cell, else 0.
// Thread safety: a command runs on the main thread and reaps any child of the process.
#pragma once

#include <string>
#include <vector>

#include "harness/matrix/matrix_merge.h"  // RunMergeCommand

namespace locklab::harness {

int RunMatrixCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
