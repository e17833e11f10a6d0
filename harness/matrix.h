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
//                  [--seed N] [--expect FILE] [--out DIR] [--no-report]
//                  [--lock driver:PATH [--driver-arg ARG ...]] ...
//
// Without --locks/--lock the rows are every registry lock plus the example lock drivers
// (examples/drivers/); in quick mode a driver row runs a subset of the faults.
//
// Exit code: 0 when every trial ran (and, with --expect, every covered cell matched), 1 on
// a mismatch, 2 when interrupted, 64+ on bad flags or when trials could not run.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunMatrixCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
