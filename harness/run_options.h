// RunOptions: one trial as data (a Jepsen-style test map): lock, workload, fault, timing,
// seed. `locklab run` builds it from flags or a scenario file and writes it back as the
// run's scenario.toml, so a run directory replays itself. Defaults are documented here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "faults/fault.h"

namespace locklab::harness {

struct RunOptions {
  std::string name;                 // scenario name; default "<lock>--<fault>"
  uint64_t seed = 0;                // 0: drawn from /dev/urandom and recorded
  Millis duration{10000};           // how long clients run
  // Lock.
  std::string lock = "set-nx-px-lua";
  Millis ttl{1000};
  Millis retry_delay{20};
  Millis command_timeout{200};
  int nodes = 0;                    // lock nodes; 0: the lock's default
  std::map<std::string, std::string> knobs;
  // Workload (counter).
  int clients = 3;
  int keys = 1;
  Millis hold{50};
  Millis think{20};
  Millis acquire_timeout{2000};
  // Faults: each with its own schedule; several compose one trial (Kleppmann's Redlock
  // schedule is a partition plus a clock jump). Empty means none.
  std::vector<faults::FaultOptions> faults;
  // Liveness: a wait with nobody holding longer than this is "stuck"; 0: 2 x TTL + 1 s.
  Millis stuck_after{0};
  // Where runs go.
  std::string out_dir = "runs";
};

// Parses `locklab run` flags (the words after "run"). Errors name the flag.
Status ParseRunFlags(const std::vector<std::string>& args, RunOptions* out,
                     std::string* scenario_path);

// "none", or the fault ids joined by "+".
std::string FaultIds(const RunOptions& o);

// TOML round trip. Errors name the file, line and field.
std::string ScenarioToToml(const RunOptions& o);
Status LoadScenarioFile(const std::string& path, RunOptions* out);

}  // namespace locklab::harness
