// restart: kill -9 of lock nodes, restarted after the window (the downtime).
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor RestartFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kServerProcess};
  d.info = {"restart", "kill -9 of lock nodes, restarted after `duration` (the downtime)",
            {{"restart", "no-persistence", "no-persistence (comes back empty) or aof-always"}}};
  d.node_control = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<RestartEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    f->nodes = DrawNodes(c, rng);
    f->params["restart"] = rng.Unit() < 0.5 ? "no-persistence" : "aof-always";
  };
  d.hunt.simpler_params = {"restart"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "restart kills " + NodeListText(f.nodes, "node n1") + " and starts it again " +
           (f.Param("restart", "no-persistence") == "aof-always" ? "from its AOF" : "empty") + " after " + window;
  };
  d.style.colour = "#8c564b";
  d.style.noun = "restart";
  d.style.label = "restart[ {nodes}] (down {duration})";
  d.style.story = "the nemesis killed server {nodes|'the lock node'} and restarted it after"
      " {duration}";
  d.traits.node_down = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kRestartRegistered(60, &RestartFault);

}  // namespace locklab::faults
