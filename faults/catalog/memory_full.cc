// memory-full: lock nodes refuse writes with an OOM error reply.
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor MemoryFullFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kServerMemoryLimit};
  d.info = {"memory-full", "lock nodes refuse writes with an OOM error reply (maxmemory below use, noeviction)", {}};
  // Reconfigures the redis-server processes (CONFIG SET maxmemory): servers the lab runs.
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<MemoryFullEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) { f->nodes = DrawNodes(c, rng); };
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "memory-full makes " + NodeListText(f.nodes, "node n1") + " refuse writes (OOM error) for " + window;
  };
  d.style.colour = "#b5405a";
  d.style.noun = "memory full";
  d.style.label = "memory full {nodes|'n1'} {duration}";
  d.style.story = "server {nodes|'the lock node'} refused writes with OOM errors for {duration}";
  d.traits.node_down = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kMemoryFullRegistered(50, &MemoryFullFault);

}  // namespace locklab::faults
