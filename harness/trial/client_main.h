// `locklab client ...`: one simulated application instance, run by the harness as a child
// process (never by hand). It builds one lock and runs the workload loop, streaming history
// events as JSON Lines on stdout. It reads control lines on stdin at its pause points:
//   arm POINT   stop yourself (SIGSTOP) the next time POINT is reached
//   disarm      forget armed points
// and reports {"ctl":"paused","point":..,"time_ns":..} just before stopping. SIGTERM (or
// stdin closing) ends the loop after the current cycle; anything held is released first.
// The client is a child subreaper (PR_SET_CHILD_SUBREAPER): a lock driver's orphans are
// reparented to it, and on every way out (a normal end, SIGTERM, stdin closing, an error)
// it kills and reaps every child it has, so nothing a driver started outlives the client
// (a grandchild that called setsid or ignores SIGTERM included). Only a SIGKILL of the
// client itself (client-crash) skips that: its driver dies of PR_SET_PDEATHSIG and of the
// group kill, a setsid grandchild does not.
//
// Its command line: the run's lock and workload settings as the field table writes them
// (`--lock.ttl_ms 1000 --workload.keys 1 ...`: ClientFieldArgs, harness/scenario/run_fields.h; what
// is not given keeps RunOptions' default), and the process's own: --process N, --lock ID,
// --process-seed N, --resource and --node HOST:PORT, --sentinel, --node-map REAL=LINK,
// --driver-arg, --knob NAME=VALUE (trial_setup.cc builds it). A bad one is one line, exit 64.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunClientCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
