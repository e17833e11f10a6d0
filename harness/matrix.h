// `locklab matrix`: every lock against every fault, trials per cell, one table.
// (Until the scenario/matrix issue lands: a fixed set of cells built from flags.)
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunMatrixCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
