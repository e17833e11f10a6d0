// Faults ("nemeses"): what breaks locks in production, applied from outside the lock.
//
// A Fault has Setup / Tick / Teardown (docs/design.md 4). The harness calls Tick from its event
// loop whenever NextWakeup() has passed, and OnPausePoint when a client reports that it
// reached a point the fault armed. Teardown heals everything the fault did and is called on
// every exit path, including interrupts. Every start and stop is recorded as a nemesis event
// through the lab's RunJournal. Faults see the lab only through LabControl
// (faults/lab_control.h), which the harness implements, so faults/ depends on nothing in
// the harness (scenario/, lab/, trial/ ...), and locks/ on nothing here. Every fault but "none" is a ScheduledFault: a
// Schedule (when) driving an Effect (what), with its own seeded target draws: the same seed
// gives the same schedule and the same targets. The several faults of one scenario run side
// by side, each with its own schedule. Not thread-safe: driven by the harness's single
// event loop.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/lock_surface.h"
#include "base/clock.h"
#include "base/status.h"
#include "faults/fault_options.h"
#include "faults/lab_control.h"

namespace locklab::faults {

class Fault {
 public:
  virtual ~Fault() = default;
  virtual const char* id() const = 0;
  // Extra redis-server arguments for the lock nodes (before they start), e.g. AOF.
  virtual std::vector<std::string> NodeArgs() const { return {}; }
  // Whether clients must run under libfaketime with their own control file.
  virtual bool NeedsClientClock() const { return false; }
  // Whether the lab needs a replica of n1 and three sentinels (clients then find the
  // master through Sentinel).
  virtual bool NeedsSentinel() const { return false; }
  // Checks the options against a lab of `clients` clients and `nodes` lock nodes before
  // anything starts (targets, nodes, params); Setup checks the same again. Usage errors
  // name the fault.
  virtual Status CheckOptions(int clients, int nodes) {
    (void)clients;
    (void)nodes;
    return Status::Ok();
  }
  // `start` is the run's start time (MonotonicNow).
  virtual Status Setup(LabControl& lab, Nanos start) = 0;
  virtual void Tick(LabControl& lab, Nanos now) = 0;
  // A client reached an armed point (it stopped itself, or is slowing down). Returns false
  // when this fault did not arm it; the harness then resumes a stopped client.
  virtual bool OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) = 0;
  virtual void Teardown(LabControl& lab, Nanos now) = 0;
  // Called after each client history event, for faults that wait for a moment in the
  // workload (a free lock) rather than for a time.
  virtual void OnClientEvent(LabControl& lab, Nanos now) { (void)lab; (void)now; }
  // When Tick next has something to do (Nanos::max() for never).
  virtual Nanos NextWakeup() const = 0;
};

struct FaultParamInfo {
  std::string name;
  std::string default_value;
  std::string description;
};

struct FaultInfo {
  std::string id;
  std::string description;
  std::vector<FaultParamInfo> params;
};
// The catalog's FaultInfo, in listing order (faults/fault_descriptor.h: each fault's
// descriptor holds its FaultInfo, its effect, its hunt draw, its sentence and its style).
const std::vector<FaultInfo>& ListFaults();
const FaultInfo* FindFault(const std::string& id);
// Fault `id`'s parameter `name` (its default, its description); null when either is unknown.
const FaultParamInfo* FindFaultParam(const std::string& id, const std::string& name);
// Usage error naming the first of `o.params` that `info` (o.id's entry) does not list:
// "fault clock-jump has no param 'ofset' (its params: offset, revert)".
Status CheckFaultParams(const FaultOptions& o, const FaultInfo& info);
// Whether a fault acts from the client side only (client processes, their clocks, the fault
// proxy), so it runs against servers the lab does not control (--endpoints): its
// descriptor's client_side. Unknown ids are treated as needing the servers.
bool IsClientSideFault(const std::string& id);
// Whether a fault acts only on the lock nodes themselves (their clocks, SIGSTOP/SIGCONT,
// kill and restart; not a replica or sentinels): it runs against servers the lab did not
// start when they are under its control (--endpoint-control, docker/node-entrypoint.sh):
// its descriptor's node_control.
bool IsNodeControlFault(const std::string& id);
// Whether fault `id` applies to a lock whose servers offer `offered` (locks::SurfacesOf):
// they offer every surface its descriptor needs (FaultTraits::needs). False for an unknown id.
bool FaultFits(const std::string& id, LockSurfaces offered);

// The named points where a client can act: after-acquire (acquire returned ok),
// before-write (inside the critical section: the counter read, the write not yet sent),
// after-release (the release returned: the lock was just given back),
// redlock-replies-in-flight (Redlock's SETs sent, replies not yet read), and any point a
// lock announces (LockInfo::points, a lock driver's hello). True for any well-formed name
// ([a-z0-9-]+, at most 64 characters): whether the lock has it is the harness's check
// (ValidateRunOptions), as only it knows the lock.
bool IsPausePoint(const std::string& point);
// The point fault `o` arms: its `point` param, or the registry's default for it (client-pause
// in targeted mode, slow-cs, client-crash: after-acquire); "" when it arms none (a timed
// fault, client-pause in random mode, client-clock without a point).
std::string ArmedPoint(const FaultOptions& o);

// Validates options against the fault's FaultInfo (unknown params are errors).
Status MakeFault(const FaultOptions& options, uint64_t seed, std::unique_ptr<Fault>* out);

}  // namespace locklab::faults
