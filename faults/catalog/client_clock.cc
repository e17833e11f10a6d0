// client-clock: the wall clock of client processes stepped (the lock's own timing sees it).
#include "faults/catalog/catalog.h"
#include "faults/clock_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ClientClockFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kWallClockExpiry};
  d.info = {"client-clock", "the wall clock of client processes stepped (the lock's own timing sees it)",
            {{"offset", "-30s", "signed offset"},
             {"point", "",
              "empty: step at the window's time; a pause point: step the clock of the client that "
              "reaches it, while it stands there (inside an acquire, at a lock's own point), then "
              "let it go on"},
             {"target", "any", kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ClientClockEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    // Half the time armed at a point (the lock's own half the time: inside an acquire, where
    // a lock timing itself on the wall clock reads it); a timed step lands inside a 1 ms
    // acquire by luck alone. Armed, a step back two times in three: it shortens the time
    // the lock measures there, the direction in which a lease claims too much.
    const bool armed = !c.arm_at.empty() || rng.Unit() < 0.5;
    if (armed) f->params["point"] = ArmPoint(c, rng, f->id);
    f->params["offset"] = DrawOffset(c, rng, armed ? 2.0 / 3 : 0.5);
  };
  // Stepped inside a lock's own code (armed at a point), the validity the lock computes
  // from its clock bends; a timed step lands there by luck alone.
  d.hunt.bends_lease_time = [](const FaultOptions& f) { return f.params.count("point") > 0; };
  d.hunt.simpler_params = {"target"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    const std::string point = ArmedPoint(f);
    return (point.empty() ? "client-clock steps a client's wall clock by "
                          : "client-clock steps the wall clock of the first client to reach " + point + " by ") +
           f.Param("offset", "-30s") + " s for " + window;
  };
  d.style.colour = "#c75f00";
  d.style.noun = "client clock step";
  d.style.client_row = true;
  d.style.label = "clock step[ {clients}][ {field:offset}]";
  d.style.story = "the wall clock of {client_words|'a client'} stepped {field:offset|'?'}";
  d.style.during = "with its wall clock stepped {field:offset} ";
  d.traits.arm_points = WorkloadPoints();
  d.traits.lock_points = true;
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kClientClockRegistered(90, &ClientClockFault);

}  // namespace locklab::faults
