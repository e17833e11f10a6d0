// failover: n1 with a replica and three sentinels; replication cut, n1 killed, the replica
// promoted. The run it needs around it (a holder that still holds when the replica is
// promoted) is FailoverEffect::ShapeRun's, taken for every value no flag gave.
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor FailoverFault() {
  FaultDescriptor d;
  d.info = {"failover",
            "n1 with a replica and three sentinels: replication cut, n1 killed, the replica "
            "promoted; clients find the new master through Sentinel (with no timing flag the "
            "run gets a holder that outlasts the promotion: hold kill_after_ms + 2.7 s, TTL 1 s "
            "longer)",
            {{"kill_after_ms", "300", "time between cutting replication and killing n1"}}};
  // Needs a replica and sentinels the lab started: neither client-side nor node control.
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<FailoverEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    f->params["kill_after_ms"] = std::to_string(TtlTimes(c.ttl, LogUniform(rng, 0.2, 2)).count());
  };
  d.hunt.one_window_only = true;  // its window is stretched to its kill plus the promotion
  d.sentence = [](const FaultOptions& f, const std::string&) {
    return "failover cuts n1's replication and kills n1 " + f.Param("kill_after_ms", "300") +
           " ms later; Sentinel promotes the replica";
  };
  d.style = {"#d94fa8", "failover", false};
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kRegistered(120, &FailoverFault);

}  // namespace locklab::faults
