// `locklab client ...`: one simulated application instance, run by the harness as a child
// process (never by hand). It builds one lock and runs the workload loop, streaming history
// events as JSON Lines on stdout. It reads control lines on stdin at its pause points:
//   arm POINT   stop yourself (SIGSTOP) the next time POINT is reached
//   disarm      forget armed points
// and reports {"ctl":"paused","point":..,"time_ns":..} just before stopping. SIGTERM (or
// stdin closing) ends the loop after the current cycle; anything held is released first.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunClientCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
