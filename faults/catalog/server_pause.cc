// server-pause: SIGSTOP/SIGCONT of lock nodes.
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ServerPauseFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kServerProcess};
  d.info = {"server-pause", "SIGSTOP/SIGCONT of lock nodes (default n1)", {}};
  d.node_control = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ServerPauseEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) { f->nodes = DrawNodes(c, rng); };
  d.hunt.disturbs_commands = true;
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "server-pause stops " + NodeListText(f.nodes, "node n1") + " for " + window;
  };
  d.style.colour = "#8e5fc2";
  d.style.noun = "server pause";
  d.style.label = "server pause {nodes|'n1'} {duration}";
  d.style.story = "the nemesis froze server {nodes|'the lock node'} for {duration}";
  d.traits.node_down = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kServerPauseRegistered(40, &ServerPauseFault);

}  // namespace locklab::faults
