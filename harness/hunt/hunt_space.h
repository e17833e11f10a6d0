// The hunt's search space: every scenario `locklab hunt` may draw for one lock, and the
// draw itself (FoundationDB's random workloads, Jepsen's mixed nemeses).
//
// A drawn scenario is an ordinary RunOptions (every trial is a scenario file that `locklab
// run` replays): one to `max_faults` faults, windows at a random time or armed at a pause
// point, every time relative to the lock's TTL; 2 to 6 clients. Nothing here knows what a
// lock is expected to do: the space is the lock's declared facts only (its TTL, node
// count, the faults that apply, its pause points).
//
// Each fault's own options are drawn by its descriptor (faults/fault_descriptor.h
// FaultDescriptor::draw, given a FaultDrawContext made from the space): nothing here compares
// fault ids. Pure: DrawScenario is a function of the space and the Rng, so a hunt seed
// replays its draws (harness/hunt/tests/testdata/hunt_draws.txt pins them). Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "locks/driver_protocol.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

struct SearchSpace {
  std::string lock;                           // lock id, as `locklab run --lock`
  std::map<std::string, std::string> knobs;   // the lock's knobs, fixed for the hunt
  std::vector<std::string> driver_args;
  Millis ttl{500};                            // the lock's TTL: every time scales with it
  // When not empty, each scenario draws its TTL from these instead (a lock's bugs can hide
  // at one TTL: whole seconds look right at 500 ms and break at 1250 ms).
  std::vector<Millis> ttls;
  bool can_renew = false;  // the lock renews on request: scenarios may set renew_every
  int nodes = 1;                              // lock nodes
  std::vector<std::string> faults;            // fault ids to draw from (applicable, not none)
  std::vector<std::string> points;  // the workload's pause points; empty: workloads::HoldPausePoints()
  // The points the lock itself announces (LockInfo::points, a driver's hello): between its
  // own commands, where a stop is most telling. A pause armed at a point picks one of these
  // half the time when there are any.
  std::vector<std::string> lock_points;
  // When set, every fault that can be armed is armed at this point (the first pass: FirstPass).
  std::string arm_at;
  // Every scenario's workload is quiet (two clients that think one to three holds between
  // turns, so the key is mostly free); else a quarter of the workloads are quiet.
  bool quiet = false;
  // A client-pause or slow-cs stop outlasts the lease (1 to 5 TTLs); with `quiet` unset, on
  // a busy key (ShapeForCommandArm): the holder comes back to a key that changed hands.
  bool stop_past_lease = false;
  // Every scenario's workload is a busy key (3 clients at least, one key, thinks under 0.2
  // TTL): a fault alone in the first pass meets acquires and releases while its window is
  // open (a server that answers errors for 300 ms says nothing to two clients that think a
  // second between turns).
  bool busy_key = false;
  // Every clock drift is fine (1%: the common allowance of 1% of the TTL, which Redlock's
  // reference implementation uses) on a majority of the nodes, as long as
  // the trial allows, and the clients honour validity and work to its end: drift in its
  // subtlest form, where a lock that misjudges drift and one that does not differ by a few
  // milliseconds per lease (the first pass tries it once).
  bool fine_drift = false;
  // A clock stepped at a lock's point steps back, on a busy key, with clients that honour
  // validity and work to its end: where a lock that times itself on the wall clock claims
  // more validity than its keys have, and the next holder is there (FaultDrawContext).
  bool clock_back = false;
  int max_faults = 3;                         // faults at once: 1..max_faults
  int min_clients = 2, max_clients = 6;
  // "honour" or "ignore": every scenario's clients do that with a lease's validity (hunt
  // --validity: a correct lock used correctly, for false-alarm hunts); "" = drawn.
  std::string validity;
  // Weights of kinds: a fault id ("clock-jump"), an armed fault at a point
  // ("client-pause@before-write"), or the workload's validity choice ("validity=honour",
  // "validity=ignore"); 1 when absent. With a baseline, a kind whose scenarios also break
  // the baseline is drawn less often (ScenarioKinds, hunt.cc), so the search moves to where
  // the two locks differ: a lock that breaks while its clients ignore validity usually
  // breaks the baseline too, and the draws move to clients that honour it.
  std::map<std::string, double> weights;
  // The share of scenarios drawn as two events (DrawScenario): first a window shorter than
  // the TTL of a fault that disturbs commands (FaultHuntRules::disturbs_commands) on the
  // holder, where its renewal or release is in flight; then holds that outlast the TTL for
  // the rest of the run (renewed by the workload for a lock that renews on request) or a
  // later stop of the holder past the TTL: a renewal or release path broken by one error
  // shows only at the second event. 0: never (the first pass: one fault each).
  double two_event_share = 0.2;
  // The longest trial hunt draws: a trial whose windows do not fit is cut to this.
  Millis max_duration{20000};
};

// What a driver's hello tells the space: the points it stops at (added to lock_points), the
// servers it asks for (nodes: subsets, quorum-sized partitions and per-node faults are drawn
// over them), and unless `ttl_given` (hunt --ttl) the TTL it really sets (that TTL only).
void ApplyDriverHello(const locks::DriverHello& hello, bool ttl_given, SearchSpace* space);

// Whether fault `id` can be armed at a pause point (it has a `point` parameter).
bool CanBeArmed(const std::string& id);
// Whether fault `id` takes a `target` kind (any, holder, just-released).
bool TakesTarget(const std::string& id);
// A drawn scenario's seed: 48 bits, like every seed the lab draws (base/random.h
// RandomSeed), since a scenario file holds a signed 64-bit TOML integer and 0 means "draw
// one". Consumes one Fork of `rng`.
uint64_t DrawSeed(Rng& rng);
// The run kept after a trial's last window at TTL `ttl`: enough for the leases it left to
// end and the waiters to be seen (at least 1 s, 3 TTLs).
Millis TailFor(Millis ttl);

// The search's first pass (docs/hunt.md "First pass"): single faults, in three tiers each
// shuffled by `rng`: (1) every armable fault twice at each of the lock's own points (once
// quiet), each stop past the lease once late at before-release on a busy key, and, for a lock
// without points, once quiet at before-write; (2) each fault that disturbs commands at each of
// a client's lock commands (workloads::CommandPoints); (3) every fault alone on a busy key
// (clock-drift also fine). Draws with replacement would leave a fault at a point untried
// within a budget. A fault whose armed form bends lease time (client-clock) has, instead of
// its quiet try at a lock's point, one that steps the clock back (SearchSpace::clock_back).
struct FirstPassDraw {
  std::string fault;
  std::string point;        // SearchSpace::arm_at for this draw; "" = drawn as usual
  bool quiet = false;       // SearchSpace::quiet (and stop_past_lease) for this draw
  bool fine_drift = false;  // SearchSpace::fine_drift for this draw (clock-drift's second entry)
  bool late = false;        // SearchSpace::stop_past_lease on a busy key
  bool busy = false;        // SearchSpace::busy_key for this draw
  bool clock_back = false;  // SearchSpace::clock_back (and busy_key) for this draw
};
std::vector<FirstPassDraw> FirstPass(const SearchSpace& space, Rng& rng);
// Refused draws of one first-pass entry before the search skips it (hunt.cc Search).
inline constexpr int kFirstPassTries = 20;
// The space one first-pass draw is drawn from: `space` with that fault alone, armed at its
// point, and when quiet or late with clients that honour validity (unless --validity says
// otherwise): the workload in which a correct lease lock stays safe under any stop, so what
// fails is the lock's own code at that point.
SearchSpace FirstPassSpace(const SearchSpace& space, const FirstPassDraw& draw);

// Whether a difference between two locks in `o` may be only that the workload renews one of
// them (`lock_renews`, `baseline_renews`: each renews on request): its clients ask for
// renewals (renew_every) and hold past the TTL, so the renewed key lives on while the other
// runs to its end (taken by the next client, or expired a little early under a fast node
// clock), whatever either's code. Without renewals asked for, neither is renewed.
bool RenewalDecides(const RunOptions& o, bool lock_renews, bool baseline_renews);

// One scenario named `name`, with a seed drawn from `rng`.
RunOptions DrawScenario(const SearchSpace& space, Rng& rng, const std::string& name);

// The kinds of `f` that SearchSpace::weights names: its id, and for a fault armed at a pause
// point also "id@point".
std::vector<std::string> FaultKinds(const faults::FaultOptions& f);
// Every kind of `o`: its faults' kinds, its validity choice, and kHoldPastTtl when its
// clients ignore validity and hold past the TTL.
std::vector<std::string> ScenarioKinds(const RunOptions& o);
inline constexpr char kHoldPastTtl[] = "hold>ttl";

// `o` as it runs on the lock `baseline` (hunt --baseline, and the replays of shipped hunt
// schedules): the same scenario without the lock's knobs, and a fault armed at a point the
// baseline does not have moved to that point's stand-in (LockInfo::stand_in_points of
// o.lock: a mutant's point inside its acquire or release). A point without a stand-in is
// left as it is; the baseline's run is then refused.
RunOptions OnBaselineLock(RunOptions o, const std::string& baseline);

// When the last window of `f` closes, from the run's start (first_at + windows x duration
// + (windows - 1) x interval); windows = 0 counts as one window.
Millis WindowsEnd(const faults::FaultOptions& f);
// The latest WindowsEnd of `o`'s faults.
Millis LastWindowEnd(const RunOptions& o);

// Faults the hunt draws with one window only, and never repeats (their descriptor's
// FaultHuntRules::one_window_only): a crashed client does not come back, and a failover's
// window is stretched to its kill plus the promotion.
bool OneWindowOnly(const std::string& fault_id);

// The run length that leaves `tail` after the last window: at least 1 s.
Millis DurationFor(const RunOptions& o, Millis tail);
// Takes windows off `o`'s faults, one at a time off the fault whose windows end last, until
// DurationFor(o, tail) fits `max_duration` or that fault is down to one window: a window
// cut by the run's end says less about the lock, and a fault that fits keeps its repeats
// (trimming every fault in turn took them off a partition because of a long drift).
void TrimWindowsToFit(RunOptions* o, Millis tail, Millis max_duration);

}  // namespace locklab::harness
