#include "faults/fault_descriptor.h"

#include <algorithm>
#include <utility>

#include <deque>


namespace locklab::faults {

namespace {


std::vector<std::pair<int, FaultDescriptor (*)()>>& Registered() {
  static std::vector<std::pair<int, FaultDescriptor (*)()>> registered;  // built on first use
  return registered;
}

}  // namespace

BuiltInFault::BuiltInFault(int order, FaultDescriptor (*make)()) { Registered().emplace_back(order, make); }

std::vector<FaultDescriptor> BuiltInFaultDescriptors() {
  std::vector<FaultDescriptor> all;
  for (const auto& [order, make] : Registered()) all.push_back(make());
  std::vector<size_t> by(all.size());
  for (size_t i = 0; i < by.size(); ++i) by[i] = i;
  std::stable_sort(by.begin(), by.end(), [&](size_t a, size_t b) {
    const int oa = Registered()[a].first, ob = Registered()[b].first;
    return oa != ob ? oa < ob : all[a].info.id < all[b].info.id;
  });
  std::vector<FaultDescriptor> sorted;
  for (size_t i : by) sorted.push_back(std::move(all[i]));
  return sorted;
}

const char* const kTargetParamHelp =
    "which client a timed window picks when it opens: any (drawn from the seed), holder (one "
    "holding a lock now; the window waits for one) or just-released (the client whose release "
    "completed last; waits for one); an armed fault arms the client it picks so";

namespace {

// The descriptors (a deque: a registration leaves earlier ones where they are, so the
// pointers of FaultCatalog and FindFault stay valid), their order, and their FaultInfo as
// ListFaults returns them (rebuilt on registration).
struct Catalog {
  std::deque<FaultDescriptor> descriptors;
  std::vector<const FaultDescriptor*> order;
  std::vector<FaultInfo> infos;
  void Add(FaultDescriptor d) {
    descriptors.push_back(std::move(d));
    order.push_back(&descriptors.back());
    infos.push_back(descriptors.back().info);
  }
};

Catalog& TheCatalog() {
  static Catalog catalog = [] {
    Catalog c;
    for (auto& d : BuiltInFaultDescriptors()) c.Add(std::move(d));
    return c;
  }();
  return catalog;
}

}  // namespace

const std::vector<const FaultDescriptor*>& FaultCatalog() { return TheCatalog().order; }

const FaultDescriptor* FindFaultDescriptor(const std::string& id) {
  for (const FaultDescriptor* d : FaultCatalog()) {
    if (d->info.id == id) return d;
  }
  return nullptr;
}

Status RegisterFaultDescriptor(FaultDescriptor descriptor) {
  if (descriptor.info.id.empty()) return Status::Usage("fault descriptor: empty id");
  if (FindFaultDescriptor(descriptor.info.id) != nullptr) {
    return Status::Usage("fault descriptor '" + descriptor.info.id + "': id already listed");
  }
  TheCatalog().Add(std::move(descriptor));
  return Status::Ok();
}

const std::vector<FaultInfo>& ListFaults() { return TheCatalog().infos; }

const FaultInfo* FindFault(const std::string& id) {
  const FaultDescriptor* d = FindFaultDescriptor(id);
  return d == nullptr ? nullptr : &d->info;
}

nlohmann::ordered_json FaultCatalogJson() {
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const FaultDescriptor* d : FaultCatalog()) {
    // client_side: runs against servers the lab does not control (--endpoints).
    // params: the fault's own keys in a [[faults]] table (or --param K=V), beside the
    // schedule keys every fault shares (first_at_ms, duration_ms, interval_ms, windows,
    // targets, nodes; README "Scenario files").
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& p : d->info.params) {
      params.push_back({{"name", p.name}, {"default", p.default_value}, {"description", p.description}});
    }
    // node_control: runs against servers the lab did not start but controls
    // (--endpoint-control). style, label, story, phrases: how the report draws, names and
    // tells its windows (templates: FaultStyle). traits: FaultTraits (disturbs_commands is
    // the hunt's rule of that name).
    faults.push_back({{"id", d->info.id},
                      {"description", d->info.description},
                      {"client_side", d->client_side},
                      {"params", params},
                      {"node_control", d->node_control},
                      {"style",
                       {{"colour", d->style.colour}, {"noun", d->style.noun}, {"client_row", d->style.client_row}}},
                      {"label", d->style.label},
                      {"story", d->style.story},
                      {"phrases", {{"during", d->style.during}, {"after", d->style.after}, {"over", d->style.over}}},
                      {"traits",
                       {{"needs", LockSurfaceWords(d->traits.needs)},
                        {"node_down", d->traits.node_down},
                        {"needs_sentinel", d->traits.needs_sentinel},
                        {"disturbs_commands", d->hunt.disturbs_commands},
                        {"kills_client", d->traits.kills_client},
                        {"promotes_replica", d->traits.promotes_replica},
                        {"arm_points", d->traits.arm_points},
                        {"lock_points", d->traits.lock_points},
                        {"no_effect", !d->make_effect}}}});
  }
  return faults;
}

std::string NodeListText(const std::vector<int>& nodes, const std::string& fallback) {
  if (nodes.empty()) return fallback;
  std::string s = nodes.size() == 1 ? "node " : "nodes ";
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? "," : "") + std::string("n") + std::to_string(nodes[i]);
  return s;
}

}  // namespace locklab::faults
