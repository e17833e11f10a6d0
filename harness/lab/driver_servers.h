// The servers a driver:PATH lock asks for: its hello may say "backend" (a LabCluster kind:
// "redis", "mariadb", "postgres", "etcd", "zookeeper"), "nodes" and "sentinel"
// (docs/driver-protocol.md). The harness learns them by starting the driver once
// (locks::ProbeDriver) before it starts any server: `locklab matrix` once per driver row
// (matrix.cc), which writes the row's node count and the hello itself (the knob "hello")
// into its cells' scenarios; `locklab run` in Trial::Setup (trial_setup.cc) unless its
// scenario carries that knob (DriverServersOf).
//
// A driver that cannot say anything (it cannot start, exits, no line in time) gets the
// defaults (Redis): its clients then fail to start it and the run says why, as before. A
// hello with a bad field is refused: Status::Usage (exit 64), one line naming the field.
//
// Thread safety: the functions are thread-safe (ProbeDriver is); they block for up to the
// driver's start_timeout_ms + 500 ms.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "locks/backend.h"
#include "locks/driver_protocol.h"

namespace locklab::harness {

struct DriverServers {
  locks::Backend backend = locks::Backend::kRedis;  // the lock nodes' kind (LabCluster::Start's)
  std::optional<int> nodes;       // how many the hello asked for; unset: the run decides
  // The hello's "sentinel": under the failover fault the driver gets the sentinels and finds
  // the master itself (the client environment of trial_setup.cc), so failover applies.
  bool sentinel = false;
  bool probed = false;            // false: the driver said nothing (the defaults above)
  std::string why_not_probed;     // then: what the probe saw (for a log line)
  std::string hello_line;         // the hello they come from, as the driver printed it
  bool from_knob = false;         // read from the run's knob "hello", not from the driver
};

// What a hello asks of the lab (probed = true).
DriverServers ServersFromHello(const locks::DriverHello& hello);

// Probes the driver at `path` (absolute) with `args`; see above for what an error means.
Status ProbeDriverServers(const std::string& path, const std::vector<std::string>& args,
                          Millis timeout, DriverServers* out);

// The servers of a run's driver: from its knob "hello" when the run has one (the hello a
// matrix read once for the row, handed to each of its trials: no start of the driver, an
// interpreter or a JVM, per trial; the hello is remembered as if probed, for
// locks::ProbedHello), else the hello already read in this process (locks::ProbedHello:
// the run's checks read it, or an earlier trial did), else ProbeDriverServers. A knob that
// is not a hello is the run's bad input (Status::Usage, naming the knob).
Status DriverServersOf(const std::string& path, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& knobs, DriverServers* out);

// Whether fault `fault_id` applies to a driver whose nodes are `backend` servers: a fact of
// the fault and the servers, never of "a driver", the same as for the lab's own locks on
// those servers (faults::FaultFits with locks::SurfacesOf(backend)).
bool DriverFaultApplies(locks::Backend backend, const std::string& fault_id);

// The same for the servers a driver's hello asked for, and why not ("" when it applies):
// besides the backend, failover needs a driver that finds the master through Sentinel (its
// hello's "sentinel": a driver with fixed node addresses would keep talking to the dead
// master's address, which tells nothing about its lock).
std::string DriverFaultWhyNot(const DriverServers& servers, const std::string& fault_id);

}  // namespace locklab::harness
