// The fault registry: the questions the harness asks of a fault id (its params, where it is
// armed, whether it runs against servers the lab does not control), answered from the
// fault's descriptor (faults/fault_descriptor.h, the catalog in faults/catalog/), and
// MakeFault, which puts the descriptor's Effect under its Schedule (a ScheduledFault).
#include "faults/fault_descriptor.h"
#include "faults/scheduled_fault.h"

namespace locklab::faults {
namespace {

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
  // driver's hello), which the harness checks before a run (harness/scenario/run_checks.cc).
  if (point.empty() || point.size() > 64) return false;
  for (char c : point) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
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
  const FaultDescriptor* d = FindFaultDescriptor(id);
  return d != nullptr && d->client_side;
}

bool FaultFits(const std::string& id, LockSurfaces offered) {
  const FaultDescriptor* d = FindFaultDescriptor(id);
  return d != nullptr && offered.Covers(d->traits.needs);
}

bool IsNodeControlFault(const std::string& id) {
  const FaultDescriptor* d = FindFaultDescriptor(id);
  return d != nullptr && d->node_control;
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
  const FaultDescriptor* d = FindFaultDescriptor(o.id);
  if (!d->make_effect) {  // "none": nothing to schedule
    *out = std::make_unique<NoFault>();
    return Status::Ok();
  }
  std::unique_ptr<Effect> effect = d->make_effect(o);
  if (effect == nullptr) return Status::Usage("fault '" + o.id + "': listed but not built");
  *out = std::make_unique<ScheduledFault>(std::move(effect), seed, d->traits);
  return Status::Ok();
}

}  // namespace locklab::faults
