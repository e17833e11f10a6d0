// client-crash: SIGKILL of a client where it stands (it never comes back).
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ClientCrashFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kClientProcess};
  d.info = {"client-crash", "SIGKILL of a client right after it acquired (it never comes back)",
            {{"point", "after-acquire", "where the client is when it dies"}, {"target", "any", kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ClientCrashEffect>(o); };
  // Anywhere a pause may go, the lock's own points included: a client that dies between two
  // of its lock's commands is the classic leftover key.
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) { f->params["point"] = ArmPoint(c, rng, f->id); };
  d.hunt.one_window_only = true;  // a crashed client does not come back
  d.hunt.simpler_params = {"target"};
  d.sentence = [](const FaultOptions& f, const std::string&) {
    return "client-crash kills the first client to reach " + ArmedPoint(f);
  };
  d.style.colour = "#222222";
  d.style.noun = "crash";
  d.style.client_row = true;
  d.style.label = "crash[ {clients}] (SIGKILL)";
  d.style.story = "the nemesis killed {client_words|'a client'} (SIGKILL)[ (armed at pause point"
      " {field:point})]";
  d.traits.kills_client = true;
  d.traits.arm_points = WorkloadPoints();
  d.traits.lock_points = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kClientCrashRegistered(30, &ClientCrashFault);

}  // namespace locklab::faults
