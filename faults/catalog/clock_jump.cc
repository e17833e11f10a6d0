// clock-jump: the wall clock of lock nodes stepped (libfaketime) while they serve.
#include "faults/catalog/catalog.h"
#include "faults/clock_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ClockJumpFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kWallClockExpiry};
  d.info = {"clock-jump", "the wall clock of lock nodes stepped through libfaketime while serving",
            {{"offset", "+20s", "signed offset: +20s, -30s, +1.5"},
             {"revert", "true", "step back to +0 when the window closes"}}};
  d.node_control = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ClockJumpEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    f->nodes = DrawNodes(c, rng);
    f->params["offset"] = DrawOffset(c, rng);
    f->params["revert"] = rng.Unit() < 0.7 ? "true" : "false";
  };
  // A node clock that jumps moves the key's life on it.
  d.hunt.bends_lease_time = [](const FaultOptions&) { return true; };
  d.hunt.simpler_params = {"revert"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "clock-jump steps the wall clock of " + NodeListText(f.nodes, "node n1") + " by " +
           f.Param("offset", "+20s") + " s" +
           (f.Param("revert", "true") == "true" ? " for " + window : " and leaves it there");
  };
  d.style.colour = "#e07b00";
  d.style.noun = "clock jump";
  d.style.label = "clock jump[ {nodes}][ {field:offset}]";
  d.style.story = "the wall clock of server {nodes|'the lock node'} jumped {field:offset|'?'}";
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kClockJumpRegistered(70, &ClockJumpFault);

}  // namespace locklab::faults
