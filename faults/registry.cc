// The fault registry: ids, descriptions and parameters (locklab list), and MakeFault, which
// puts each fault's Effect under its Schedule (a ScheduledFault).
#include "faults/clock_effects.h"
#include "faults/network_effects.h"
#include "faults/process_effects.h"
#include "faults/scheduled_fault.h"

namespace locklab::faults {
namespace {

// The common `target` param of the faults that pick a client.
constexpr const char* kTargetHelp =
    "which client a timed window picks when it opens: any (drawn from the seed), holder (one "
    "holding a lock now; the window waits for one) or just-released (the client whose release "
    "completed last; waits for one); an armed fault arms the client it picks so";

class NoFault : public Fault {
 public:
  const char* id() const override { return "none"; }
  Status Setup(LabControl&, Nanos) override { return Status::Ok(); }
  void Tick(LabControl&, Nanos) override {}
  bool OnPausePoint(LabControl&, int, const std::string&, Nanos) override { return false; }
  void Teardown(LabControl&, Nanos) override {}
  Nanos NextWakeup() const override { return Nanos::max(); }
};

}  // namespace

bool IsPausePoint(const std::string& point) {
  // Any well-formed name: which points exist depends on the lock (LockInfo::points, a
  // driver's hello), which the harness checks before a run (scenario/run_checks.cc).
  if (point.empty() || point.size() > 64) return false;
  for (char c : point) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

const std::vector<FaultInfo>& ListFaults() {
  static const std::vector<FaultInfo> kFaults = {
      {"none", "no fault: the baseline every lock must pass", {}},
      {"client-pause",
       "stop-the-world pause (SIGSTOP/SIGCONT) of a whole client process, renewal thread "
       "included; targeted at a pause point or at random times",
       {{"mode", "targeted", "targeted (the client stops itself at `point`) or random"},
        {"point", "after-acquire",
         "after-acquire, before-write, after-release, or a point the lock announces "
         "(redlock-replies-in-flight, a driver's hello points)"},
        {"target", "any", kTargetHelp}}},
      {"slow-cs", "a critical section `duration` longer than usual; the client keeps running",
       {{"point", "after-acquire", "after-acquire, before-write, or a point the lock announces"},
        {"target", "any", kTargetHelp}}},
      {"client-crash", "SIGKILL of a client right after it acquired (it never comes back)",
       {{"point", "after-acquire", "where the client is when it dies"}, {"target", "any", kTargetHelp}}},
      {"server-pause", "SIGSTOP/SIGCONT of lock nodes (default n1)", {}},
      {"memory-full",
       "lock nodes refuse writes with an OOM error reply (maxmemory below use, noeviction)", {}},
      {"restart", "kill -9 of lock nodes, restarted after `duration` (the downtime)",
       {{"restart", "no-persistence", "no-persistence (comes back empty) or aof-always"}}},
      {"clock-jump", "the wall clock of lock nodes stepped through libfaketime while serving",
       {{"offset", "+20s", "signed offset: +20s, -30s, +1.5"},
        {"revert", "true", "step back to +0 when the window closes"}}},
      {"clock-drift", "the wall clock of lock nodes runs at another rate",
       {{"rate", "2.0", "clock speed relative to real time"}}},
      {"client-clock", "the wall clock of client processes stepped (the lock's own timing sees it)",
       {{"offset", "-30s", "signed offset"},
        {"point", "",
         "empty: step at the window's time; a pause point: step the clock of the client that "
         "reaches it, while it stands there (inside an acquire, at a lock's own point), then "
         "let it go on"},
        {"target", "any", kTargetHelp}}},
      {"partition", "cuts (client, node) links in the fault proxy",
       {{"shape", "isolate-clients", "isolate-clients, isolate-node or majorities-ring"},
        {"mode", "hold", "hold (black hole) or reset (RST)"},
        {"direction", "both", "both, up (requests) or down (replies)"},
        {"resource", "false", "cut the target clients from the resource node too"},
        {"target", "any", kTargetHelp}}},
      {"reply-loss", "requests reach the node, replies are dropped: the outcome is unknown",
       {{"target", "any", kTargetHelp}}},
      {"failover",
       "n1 with a replica and three sentinels: replication cut, n1 killed, the replica "
       "promoted; clients find the new master through Sentinel",
       {{"kill_after_ms", "300", "time between cutting replication and killing n1"}}},
      {"delay", "a client's write to the resource is held and delivered late",
       {{"delay_ms", "(duration)", "how long the write is held"}, {"target", "any", kTargetHelp}}},
  };
  return kFaults;
}

const FaultInfo* FindFault(const std::string& id) {
  for (const auto& f : ListFaults()) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

const FaultParamInfo* FindFaultParam(const std::string& id, const std::string& name) {
  const FaultInfo* info = FindFault(id);
  if (info == nullptr) return nullptr;
  for (const auto& p : info->params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string ArmedPoint(const FaultOptions& o) {
  const FaultParamInfo* point = FindFaultParam(o.id, "point");
  if (point == nullptr || o.Param("mode", "targeted") == "random") return "";
  return o.Param("point", point->default_value);
}

bool IsClientSideFault(const std::string& id) {
  // server-pause, restart, clock-jump, clock-drift, memory-full and failover signal, restart,
  // re-clock or reconfigure the redis-server processes (or need a replica and sentinels the lab started).
  static const char* const kClientSide[] = {"none",      "client-pause", "slow-cs",    "client-crash",
                                            "client-clock", "partition", "reply-loss", "delay"};
  for (const char* c : kClientSide) {
    if (id == c) return true;
  }
  return false;
}

bool IsNodeControlFault(const std::string& id) {
  return id == "clock-jump" || id == "clock-drift" || id == "server-pause" || id == "restart";
}

Status CheckFaultParams(const FaultOptions& o, const FaultInfo& info) {
  for (const auto& [name, value] : o.params) {
    bool known = false;
    std::string names;
    for (const auto& p : info.params) {
      known = known || p.name == name;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!known) {
      return Status::Usage("fault " + o.id + " has no param '" + name + "' (" +
                           (names.empty() ? "it takes none" : "its params: " + names) + ")");
    }
  }
  return Status::Ok();
}

Status MakeFault(const FaultOptions& o, uint64_t seed, std::unique_ptr<Fault>* out) {
  const FaultInfo* info = FindFault(o.id);
  if (info == nullptr) {
    return Status::Usage("fault '" + o.id + "': unknown fault id (see `locklab list`)");
  }
  Status s = CheckFaultParams(o, *info);
  if (!s.ok()) return s;
  const std::string& id = o.id;
  if (id == "none") {
    *out = std::make_unique<NoFault>();
    return Status::Ok();
  }
  std::unique_ptr<Effect> effect;
  if (id == "client-pause") effect = std::make_unique<ClientPauseEffect>(o);
  else if (id == "slow-cs") effect = std::make_unique<SlowCsEffect>(o);
  else if (id == "client-crash") effect = std::make_unique<ClientCrashEffect>(o);
  else if (id == "server-pause") effect = std::make_unique<ServerPauseEffect>(o);
  else if (id == "memory-full") effect = std::make_unique<MemoryFullEffect>(o);
  else if (id == "restart") effect = std::make_unique<RestartEffect>(o);
  else if (id == "clock-jump") effect = std::make_unique<ClockJumpEffect>(o);
  else if (id == "clock-drift") effect = std::make_unique<ClockDriftEffect>(o);
  else if (id == "client-clock") effect = std::make_unique<ClientClockEffect>(o);
  else if (id == "partition") effect = std::make_unique<PartitionEffect>(o);
  else if (id == "reply-loss") effect = std::make_unique<ReplyLossEffect>(o);
  else if (id == "delay") effect = std::make_unique<DelayEffect>(o);
  else if (id == "failover") effect = std::make_unique<FailoverEffect>(o);
  else return Status::Usage("fault '" + id + "': listed but not built");
  *out = std::make_unique<ScheduledFault>(std::move(effect), seed);
  return Status::Ok();
}

}  // namespace locklab::faults
