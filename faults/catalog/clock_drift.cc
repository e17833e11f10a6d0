// clock-drift: the wall clock of lock nodes runs at another rate.
#include "faults/catalog/catalog.h"
#include "faults/clock_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ClockDriftFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kWallClockExpiry};
  d.info = {"clock-drift", "the wall clock of lock nodes runs at another rate",
            {{"rate", "2.0", "clock speed relative to real time"}}};
  d.node_control = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ClockDriftEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    // A drift acts through the leases granted while it lasts: a window shorter than the TTL
    // moves a clock by less than the rate's share of one lease, and a fine drift beats a
    // lease by a few milliseconds, which only a waiter asking in them sees. So 1.5 to 20
    // TTLs, within the longest trial: real drift lasts (bench/results/mutation-score-history.md
    // has the runs that chose the range).
    const Millis room = c.max_duration - f->first_at - c.tail;
    f->duration = std::min(TtlTimes(c.ttl, LogUniform(rng, 1.5, 20)), std::max(TtlTimes(c.ttl, 1.5), room));
    // Half the time a fine drift of half a percent to five percent: the size a lock's drift
    // allowance (Redlock's is 1% of the TTL + 2 ms) is there to absorb, where a lock that
    // forgot it and one that did not come apart; at 2x every lease fails alike. Half of
    // the fine ones at or below 1%, the common allowance: beyond it a correct lock fails too.
    const bool fine = rng.Unit() < 0.5;
    f->params["rate"] = fine ? Pick(rng, std::vector<std::string>{"1.005", "1.01", "1.02", "1.05"})
                             : Pick(rng, std::vector<std::string>{"0.25", "0.5", "2.0", "4.0", "10.0"});
    // A fine drift moves each lease by about a percent, and a quorum lock feels it only when
    // a majority of its nodes drift: then two times in three.
    f->nodes = DrawNodes(c, rng, fine ? 2.0 / 3 : 1.0 / 3);
    if (c.fine_drift) {  // the first pass's fine try: one window, the longest that fits
      // 1%: the most a lock with Redlock's 1% drift allowance is meant to survive; 0.5% fails
      // a lock without the allowance too rarely to confirm (bench/results/mutation-score-history.md,
      // "The fine drift"). The draw between
      // 0.5% and 1% is still made, so the rest of a seed's draws stay as they were.
      Pick(rng, std::vector<std::string>{"1.005", "1.01"});
      f->params["rate"] = "1.01";
      f->nodes = DrawNodes(c, rng, 1.0);
      f->windows = 1;
      f->duration = std::max(TtlTimes(c.ttl, 1.5), room);
    }
  };
  d.hunt.fine_first_pass_try = true;
  // A node clock that runs at another rate moves the key's life on it.
  d.hunt.bends_lease_time = [](const FaultOptions&) { return true; };
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "clock-drift runs the wall clock of " + NodeListText(f.nodes, "node n1") + " at " +
           f.Param("rate", "2.0") + "x for " + window;
  };
  d.style.colour = "#e07b00";
  d.style.noun = "clock drift";
  d.style.label = "clock drift[ {nodes}][ {field:rate}]";
  d.style.story = "the wall clock of server {nodes|'the lock node'} drifted ({label})";
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kClockDriftRegistered(80, &ClockDriftFault);

}  // namespace locklab::faults
