// A fault's descriptor: everything the lab knows about one fault, in one place (as Jepsen's
// nemesis/combined.clj bundles a nemesis with its generator and its plot colour), and the
// catalog that lists them.
//
// One descriptor per fault, each in its own file under faults/catalog/: its id, description
// and params (`locklab list`), whether it runs against servers the lab does not control,
// the Effect it builds, how the hunt draws its options (from a FaultDrawContext and the
// seeded Rng it is given: faults/fault_draw.h), what the hunt's schedule rules and shrink
// need to know of it, its sentence in the hunt's narrative, its style, label and story in
// the report, and its traits (what the checker and the report need to know of it). The registry (faults/registry.cc), the hunt (harness/hunt/hunt_space.cc,
// hunt_shrink.cc, hunt_story.cc), `locklab list --json` (FaultCatalogJson) and through it
// the report (reports/faultstyle.py) read the descriptor and compare no fault ids; the
// checker reads the traits each window's start event carries (FaultTraits::node_down).
//
// The catalog holds the built-in faults in listing order (each file of faults/catalog/
// registers itself: BuiltInFault below), then
// whatever RegisterFaultDescriptor added. Register before the catalog is read by anything
// that keeps references into it (at the start of main or of a test): registering rebuilds
// the ListFaults vector. Reading is thread-compatible; registering is not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/lock_surface.h"
#include "base/random.h"
#include "base/status.h"
#include "faults/effect.h"
#include "faults/fault.h"
#include "faults/fault_draw.h"

namespace locklab::faults {

// How the report draws, names and tells a fault's windows (reports/faultstyle.py reads it
// from `locklab list --json` and fills the templates from the window's `start` event).
//
// A template is text with placeholders the report fills from the event's detail:
//   {duration}        the window's length, "1.20 s"
//   {clients}         the clients it names (targets, process): "c1,c3"
//   {client_words}    its targets in words: "client 1 and client 3"
//   {nodes}           its nodes: "n1", "n1..n5", "n1,n3"
//   {links} {links:N} its cut links, per client, at most N clients (3): "c3<->n1..n3"
//   {noun} {id}       the style's noun, the fault's id
//   {label}           the window's label (in the other templates)
//   {field:NAME}      the detail's field NAME as written ("+20s", 2.0)
//   {seconds:NAME}    the detail's field NAME, milliseconds, as "1.50 s"
// `{a|b|'text'}` takes the first alternative that is not empty ('text' is literal), and
// `[...]` is left out unless every placeholder inside it filled: "pause[ {clients}] {duration}".
struct FaultStyle {
  std::string colour = "#7a7a9a";  // "#rrggbb": its windows in the timeline and the plots
  std::string noun;                // one window in words: "pause", "clock drift"
  // It acts on one client process: that client's row is hatched during the window.
  bool client_row = false;
  // A window's short label on the timeline: "pause c2 1.20 s". Empty: the id and the first
  // two fields of the detail.
  std::string label;
  // A window in the run's story, after its time: "the nemesis froze client 2 (SIGSTOP) for
  // 1.20 s". Empty: "fault {label} was active".
  std::string story;
  // What a client the window hit went through, before what it did next ("... and wrote"):
  // while the window is still open (`during`) and once it closed (`after`). Empty: "during
  // {label}, "; `after` empty: as `during`.
  std::string during;
  std::string after;
  // The window's end among the story's events. Empty: "{noun} over".
  std::string over;
};

// What a fault is, as the rest of the lab needs to know it without naming it.
struct FaultTraits {
  // What the fault acts on (base/lock_surface.h): it applies to a lock whose servers offer
  // all of it (FaultFits). Empty: it needs nothing ("none").
  LockSurfaces needs;
  // Its windows stop or empty lock nodes (a stopped, killed or full server, a promoted
  // replica): every client is cut from the lock service meanwhile. Written into each window's
  // `start` event ("node_down": true), where the checker's liveness rule reads it
  // (checker::LockServiceBlocked, docs/design.md 3.2).
  bool node_down = false;
  // Needs a replica of n1 and sentinels the lab starts (Fault::NeedsSentinel).
  bool needs_sentinel = false;
  // Its window kills the client it hits: the report draws the window's start as the moment.
  bool kills_client = false;
  // Its window promotes a replica: the report tells the race from its effect event
  // (killed_ns, lost_lock_holders).
  bool promotes_replica = false;
  // The workload's points its window can be armed at (`point` param or a fixed point;
  // faults/schedule.h), and whether a lock's own announced points are accepted too.
  std::vector<std::string> arm_points;
  bool lock_points = false;
};

// What the hunt's search and shrink need to know of a fault beyond its draw.
struct FaultHuntRules {
  // Drawn with one window only and never repeated (a crashed client does not come back;
  // a failover's window is stretched to its kill and the promotion).
  bool one_window_only = false;
  // In a quiet try (FaultDrawContext::quiet) its window outlasts the lease, 1 to 5 TTLs:
  // a stop on a free key that ends before the key expires changes nothing.
  bool outlasts_lease_when_quiet = false;
  // The first pass tries it a second time with FaultDrawContext::fine_drift set.
  bool fine_first_pass_try = false;
  // Whether options `f` bend the time a lease is measured in (a node clock that jumps or
  // drifts, a client clock stepped inside the lock's own code): the hunt then has clients
  // work to their lease's end. Null: never.
  std::function<bool(const FaultOptions& f)> bends_lease_time;
  // A short window of it makes the commands sent meanwhile time out or fail and then leaves
  // the lab as it was (a cut link, a lost reply, a stopped server, a late network): the
  // first event of the hunt's two-event schedules, landing on a holder's renewal or release
  // (hunt_space.h, SearchSpace::two_event_share).
  bool disturbs_commands = false;
  // Params whose default is the simpler scenario: the shrink sets each back to its default
  // (FaultInfo::params) and counts a value off the default in a scenario's size.
  std::vector<std::string> simpler_params;
  // Params that hold the window's length in milliseconds: the shrink keeps them equal to the
  // duration it shortens or rounds (delay's delay_ms).
  std::vector<std::string> params_following_duration;
};

struct FaultDescriptor {
  FaultInfo info;  // id, description, params: `locklab list`
  // Acts from the client side only (client processes, their clocks, the fault proxy), so it
  // runs against servers the lab does not control (--endpoints); IsClientSideFault.
  bool client_side = false;
  // Acts only on the lock nodes themselves (their clocks, SIGSTOP/SIGCONT, kill and restart;
  // not a replica or sentinels): it runs with --endpoint-control; IsNodeControlFault.
  bool node_control = false;
  // The effect its windows have (MakeFault puts it under a Schedule); null: a fault that
  // does nothing ("none").
  std::function<std::unique_ptr<Effect>(const FaultOptions&)> make_effect;
  // The hunt's draw of its own options: `f` comes with id, first_at, duration, interval and
  // windows drawn; the draw sets its params, nodes and targets (and may redraw the times),
  // consuming `rng` in a fixed order. A `target` it leaves unset is drawn by the hunt after
  // it. Null: nothing of its own to draw.
  std::function<void(const FaultDrawContext& c, Rng& rng, FaultOptions* f)> draw;
  FaultHuntRules hunt;
  // Its sentence in the hunt's narrative, without the time it starts: "client-pause stops
  // the first client to reach before-write for 1200 ms (2.4 x TTL)". `window` is the window's
  // length in words ("1200 ms (2.4 x TTL)"). Null: "<id> for <window>".
  std::function<std::string(const FaultOptions& f, const std::string& window)> sentence;
  FaultStyle style;
  FaultTraits traits;
};

// The catalog, in listing order (`locklab list`): the built-in faults, then the registered.
const std::vector<const FaultDescriptor*>& FaultCatalog();
// Null when no fault has that id.
const FaultDescriptor* FindFaultDescriptor(const std::string& id);
// Adds a fault to the catalog (a test's fault, an extension's): it is listed, built, drawn,
// told and styled like a built-in one. A usage error when its id is empty or already listed.
Status RegisterFaultDescriptor(FaultDescriptor descriptor);

// The "faults" array of `locklab list --json`: per fault its id, description, client_side,
// params, node_control, style {colour, noun, client_row}, label, story, phrases {during,
// after, over} and traits {needs (surface words), node_down, needs_sentinel, disturbs_commands, kills_client,
// promotes_replica, arm_points, lock_points, and no_effect: its windows do nothing, "none"}.
nlohmann::ordered_json FaultCatalogJson();

// Words shared by the sentences: "node n1", "nodes n1,n3", or `fallback` when `nodes` is
// empty (the fault's default).
std::string NodeListText(const std::vector<int>& nodes, const std::string& fallback);

// The `target` param's help, shared by the faults that pick a client.
extern const char* const kTargetParamHelp;

// A built-in fault's file (catalog/) registers its descriptor at namespace scope:
//   const BuiltInFault kDelayRegistered(130, &DelayFault);
// Each file's names are its own (kDelayRegistered, DelayFault): a unity build compiles several
// catalog files as one translation unit.
// `order` is its place in the order `locklab list` shows (lower first; two at one place: by id).
// Registers `make` (called once, when the catalog is first read) at place `order`.
class BuiltInFault {
 public:
  BuiltInFault(int order, FaultDescriptor (*make)());
};

// The built-in faults in listing order (two at one place: by id).
std::vector<FaultDescriptor> BuiltInFaultDescriptors();

}  // namespace locklab::faults
