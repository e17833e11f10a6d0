// `locklab cluster up|down|status`: a lab cluster that outlives the command, for exploring
// by hand with redis-cli. Its state (ports, pids, dirs) lives in .lab/cluster/state.json.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunClusterCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
