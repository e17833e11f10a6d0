// client-pause: a stop-the-world pause (SIGSTOP/SIGCONT) of a whole client process.
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ClientPauseFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kClientProcess};
  d.info = {"client-pause",
            "stop-the-world pause (SIGSTOP/SIGCONT) of a whole client process, renewal thread "
            "included; targeted at a pause point or at random times",
            {{"mode", "targeted", "targeted (the client stops itself at `point`) or random"},
             {"point", "after-acquire",
              "before-acquire, after-acquire, before-write, before-release, after-release, or a point "
              "the lock announces "
              "(redlock-replies-in-flight, a driver's hello points)"},
             {"target", "any", kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ClientPauseEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    if (!c.arm_at.empty() || rng.Unit() < 0.6) {
      f->params["point"] = ArmPoint(c, rng, f->id);  // targeted: the client that reaches it stops
    } else {
      f->params["mode"] = "random";  // timed: a stop-the-world pause wherever the client is
    }
  };
  d.hunt.outlasts_lease_when_quiet = true;
  // A random pause shrinks to a targeted one at the default point (mode's default).
  d.hunt.simpler_params = {"mode", "target"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return f.Param("mode", "targeted") == "random"
               ? "client-pause stops a client (drawn from the seed) wherever it is for " + window
               : "client-pause stops the first client to reach " + ArmedPoint(f) + " for " + window;
  };
  d.style.colour = "#6b6b6b";
  d.style.noun = "pause";
  d.style.client_row = true;
  d.style.label = "pause[ {clients}] {duration}";
  d.style.story = "the nemesis froze {client_words|'a client'} (SIGSTOP) for {duration}[ (armed at"
      " pause point {field:point})]";
  d.style.after = "resumed from a {duration} pause and ";
  d.style.over = "{noun} over[ ({client_words} runs again)]";
  d.traits.arm_points = WorkloadPoints();
  d.traits.lock_points = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kClientPauseRegistered(10, &ClientPauseFault);

}  // namespace locklab::faults
