// delay: a client's write to the resource is held and delivered late.
#include "faults/catalog/catalog.h"
#include "faults/network_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor DelayFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kRequestStream};
  d.info = {"delay", "a client's write to the resource is held and delivered late",
            {{"delay_ms", "(duration)", "how long the write is held"}, {"target", "any", kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<DelayEffect>(o); };
  d.draw = [](const FaultDrawContext&, Rng&, FaultOptions* f) { f->params["delay_ms"] = std::to_string(f->duration.count()); };
  d.hunt.disturbs_commands = true;
  d.hunt.simpler_params = {"target"};
  d.hunt.params_following_duration = {"delay_ms"};
  d.sentence = [](const FaultOptions&, const std::string& window) {
    return "delay holds a client's write to the resource for " + window;
  };
  d.style.colour = "#6a9a2a";
  d.style.noun = "delayed write";
  d.style.client_row = true;
  d.style.label = "delay[ {clients}] writes[ +{seconds:delay_ms}]";
  d.style.story = "writes of {client_words|'a client'} to the resource were held back[ by"
      " {seconds:delay_ms}]";
  d.style.during = "had its write held back by the network and ";
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kDelayRegistered(130, &DelayFault);

}  // namespace locklab::faults
