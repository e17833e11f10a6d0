// `locklab cluster up|down|status`: a lab cluster that outlives the command, for exploring
// by hand with redis-cli. Its state (ports, pids, start times, dirs) lives in
// .lab/cluster/state.json. `up` and `down` hold a lock on that directory (flock on
// .lab/cluster/lock): a second one at the same moment is refused, exit 64. `up` marks each
// server with a random token (in its process title, "locklab-cluster:TOKEN"); `down`
// signals a recorded pid only when it still has the recorded start time (field 22 of
// /proc/PID/stat) and the mark, so a pid reused by another process is never signalled.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunClusterCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
