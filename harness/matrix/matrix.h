// `locklab matrix`: every lock against every fault, several trials per cell, one table.
//
// The cells are data: scenarios/matrix/<fault>.toml is one scenario per fault, and every
// lock of the registry runs it (fault node lists are cut to the nodes the lock has; a
// fault that needs a topology the lock cannot have, like failover for a 5-node Redlock, is
// "n/a"). Trials run as child `locklab run` processes, `--jobs` at a time, each with its own
// lab on its own ports; their run directories sit under the matrix directory, whose
// matrix.json, matrix.md and junit.xml summarise them. Seeds derive from one matrix seed.
//
//   locklab matrix [--quick | --full] [--locks a,b] [--faults x,y] [--trials N] [--jobs N]
//                  [--seed N] [--expect FILE] [--write-expect FILE]
//                  [--fail-on violated,stuck,unknown] [--out DIR] [--no-report] [--shard I/N]
//                  [--endpoints redis://host:port,...] [--ttl DURATION]
//                  [--lock driver:PATH [--driver-arg ARG ...]] ...
//   locklab merge SHARD_DIR... [--out DIR] [--no-report] [--write-expect FILE]
//
// Without --locks/--lock the rows are every registry lock plus the example lock drivers
// (examples/drivers/); a driver row runs every fault that applies to its servers, as any row.
//
// Sharding: every trial's seed is drawn from the matrix seed for the whole matrix before any
// slicing, so trial n has the same seed in a whole run and in any shard. `--shard I/N` (needs
// --seed) runs trials I-1, I-1+N, ... of the whole run's order and writes a partial
// matrix.json with the plan id (a hash of every trial's scenario and the expectations) and
// its shard number. `merge` refuses shards of different plans, duplicates and missing
// shards (one line, exit 64), then writes matrix.json, matrix.md, junit.xml and the report
// as a whole run of the same seed would (only elapsed time, paths and "merged_from" differ).
//
// --ttl DURATION: every row whose lock uses the lab's TTL runs with it, each cell's times scaled
// by DURATION / the preset's ttl_ms (a driver row whose hello declares ttl_ms scales to that);
// a cell whose run would pass 600 s is n/a and says why (matrix_scaling.h).
//
// --endpoints: every trial runs against the user's servers (lock nodes first, the resource
// last; a lock takes its first N and the last), one trial at a time, client-side faults only
// (named server-side faults are refused; by default their columns are left out).
//
// A CI gate: --expect FILE pins cells (exact ids or globs, `lock = "driver:*"`, `fault =
// "*"`; the most specific entry pins a cell, matrix_plan.h has the rule), --fail-on judges
// the cells no entry pins (a pinned cell is judged by its entry alone; without --fail-on an
// unpinned cell never fails), and a cell that fails either regresses: a <failure> in
// junit.xml with its reason and trial directories, and one line at the end of the output.
// --write-expect FILE writes the run's judged cells (S, V, L; `?` is not pinned) as such a
// file: read back by --expect with the same flags and seed, it passes (matrix_outputs.h).
//
// Exit code, the first that applies: 64+ before anything runs (64 bad flags, 65 a bad
// expectation file, 70 an unwritable --write-expect); 70 a file that could not be written;
// 2 interrupted; 69 a trial that could not run; 1 any regressed cell; else 0. A shard
// judges nothing (exit 0 when its trials ran) and cannot --write-expect: the merge does
// both, with the shards' expectations and --fail-on.
//
// The pieces: matrix_plan.h (the cells and trials, decided before anything runs),
// matrix_scheduler.h (the job pool of child `locklab run`s), matrix_outputs.h (cell verdicts,
// matrix.json, matrix.md, junit.xml) and matrix_merge.h (`locklab merge`); matrix.cc reads
// the flags and composes them. Thread safety: a command runs on the main thread and reaps
// any child of the process.
#pragma once

#include <string>
#include <vector>

#include "harness/matrix/matrix_merge.h"  // RunMergeCommand

namespace locklab::harness {

int RunMatrixCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
