// slow-cs: a critical section longer than usual; the client keeps running.
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor SlowCsFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kClientProcess};
  d.info = {"slow-cs", "a critical section `duration` longer than usual; the client keeps running",
            {{"point", "after-acquire", "after-acquire, before-write, or a point the lock announces"},
             {"target", "any", kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<SlowCsEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) { f->params["point"] = ArmPoint(c, rng, f->id); };
  d.hunt.outlasts_lease_when_quiet = true;
  d.hunt.simpler_params = {"target"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "slow-cs keeps the client that reaches " + ArmedPoint(f) + " inside for " + window + " more";
  };
  d.style.colour = "#a39b00";
  d.style.noun = "slow critical section";
  d.style.client_row = true;
  d.style.label = "slow CS[ {clients}] {duration}";
  d.style.story = "{client_words|'a client'} ran a critical section {duration} longer than usual["
      " (armed at pause point {field:point})]";
  d.style.during = "(its critical section stretched {duration} by slow-cs) ";
  d.traits.arm_points = WorkloadPoints();
  d.traits.lock_points = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kSlowCsRegistered(20, &SlowCsFault);

}  // namespace locklab::faults
