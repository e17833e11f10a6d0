// Mutual exclusion, resource and liveness checks over a recorded history (docs/design.md 3.3).
//
// A HoldInterval of a client on a key runs from the completion (ok) of its acquire to the
// invocation of its release, of its next acquire on that key, its crash (a nemesis
// `client-crash` start naming it), or the end of the history. During it the client
// certainly believed it held the lock. An acquire that ended `info` or `fail` starts none.
// A violation is two hold intervals of different clients on one key that overlap.
//
// When the run declared that its clients honoured validity (HoldOptions, from the run start
// event's "workload":{"validity":"honour"}; checker/verdict.h RunFacts), a hold also ends at
// the latest at its acquire ok's time + the ok value's validity_ms (when > 0), pushed later
// by each ok `renew` of the same client and key to that renew's time + its validity_ms: the
// client stopped using the lock there (no read, write or renewal after it), so it only
// believed it held the lock until then. The checker's times are the events' completion
// times, at or after the client's own acquired_at, so this bound is never earlier than the
// client's. A lease without validity_ms (a lock that reports none) is never cut.
//
// Everything here is computed from the events alone: the checker is never told which
// algorithm ran or what it is expected to do. All functions are pure and thread-compatible;
// the sweep is O(n log n) in the number of events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.h"

namespace locklab::checker {

struct HoldInterval {
  int64_t process = 0;
  std::string key;
  Nanos start{0};  // acquire ok
  Nanos end{0};    // release invoke / next acquire invoke / crash / end of history
  int64_t acquire_index = 0;
  bool open_at_end = false;  // never released before the history ended
  bool validity_cut = false; // ended at acquire (or renew) + validity_ms (HoldOptions)
  nlohmann::json lease;      // the acquire's ok value (token, fence); null without keep_lease
};

struct FaultWindow {
  std::string fault;      // the fault id ("client-pause", ...)
  Nanos start{0};
  Nanos end{0};           // end of history when never stopped
  nlohmann::json detail;  // the start event's value (targets, magnitude)
};

struct OverlapEpisode {
  std::string key;
  Nanos start{0};
  Nanos end{0};
  std::vector<HoldInterval> holds;  // every hold active during the episode
};

struct MutualExclusionReport {
  int64_t holds = 0;
  int64_t overlapping_pairs = 0;
  int64_t episodes = 0;
  double overlap_ms = 0;
  std::vector<OverlapEpisode> episode_list;  // in time order
};

struct ResourceReport {
  int64_t acknowledged_writes = 0;
  int64_t lost_updates = 0;
  int64_t stale_writes_accepted = 0;
  int64_t stale_writes_rejected = 0;
  bool final_value_known = true;
  // The harness tried to read a counter's final value and got no answer (the resource
  // died or did not answer): that key's lost updates are unknown, never counted as 0.
  bool final_read_failed = false;
  std::string final_read_failed_key;  // the first such key
};

struct LivenessOptions {
  // A wait with no holder longer than this is "stuck". 0 disables the judgement.
  Millis stuck_after{0};
  // [from, to) stretches in which the lab itself did not run (a stalled harness: infra
  // events, checker/infra.h): a wait inside them is the lab's lateness, never the lock's.
  std::vector<std::pair<Nanos, Nanos>> lab_stalls;
};

struct LivenessReport {
  // Longest time someone wanted the lock while nobody held it, counting only the time that
  // waiter could reach the lock service (see LockServiceBlocked).
  double longest_wait_ms = 0;
  bool stuck = false;
};

// Whether a fault window kept `process` from the lock service, as its start event says
// (docs/design.md 3.2): a window of a fault that stops or empties lock nodes
// ("node_down": true, written from the fault's descriptor: server-pause, restart, failover,
// memory-full; every client, whichever nodes, so a minority of Redlock's nodes counts too:
// conservative, fewer L), or a window that cut one of that client's links to a lock node
// ({"links":[[client,"nN"],..]}: partition, reply-loss; a link to the resource alone does
// not count). An event without either blocks nobody. A waiter
// starved inside such a window is the fault's doing, not the lock's: stuck (L) counts only
// the wait outside them (a server paused for 4 s is not a lock that never lets anyone in).
// Client-side faults (a crashed or paused holder) never block the others: starving behind
// them is the lock's liveness answer.
bool LockServiceBlocked(const FaultWindow& w, int64_t process);

// The clients a nemesis `client-crash` start event names ({"targets":[..]} or {"process":p}),
// or the client a harness `infra` event says died outside the schedule (checker/infra.h);
// empty for any other event. The one place the crash rule reads its facts from.
std::vector<int64_t> CrashedClients(const Event& e);

struct HoldOptions {
  // The clients honoured their leases' validity (see the top of this file).
  bool validity_honoured = false;
  // Copy each acquire's value into HoldInterval::lease. The judge does not: a lab lease (a
  // token and its validity) copied per hold was a tenth of checking a long history's peak,
  // and only the first overlap's holds are shown with theirs (it looks those up).
  bool keep_lease = true;
};

std::vector<HoldInterval> ComputeHoldIntervals(const History& sorted, const HoldOptions& options = {});
// With validity honoured (HoldOptions; checker/verdict.h RunFacts): each hold the validity rule cut
// (HoldInterval::validity_cut) gets a release of unknown outcome (info) at its end, for the
// lock's linearizability model: from there on the lease may have ended on the server (expired)
// or not (a watchdog kept renewing it). None is added when the client's own release of that
// lease then succeeded (the lock was still its own on the server). Returns a new sorted
// history; `sorted` itself when none is added.
History WithValidityReleases(const History& sorted, const std::vector<HoldInterval>& holds);
// Whether WithValidityReleases would add anything (else it returns a plain copy).
bool HasValidityReleases(const History& sorted, const std::vector<HoldInterval>& holds);

std::vector<FaultWindow> ComputeFaultWindows(const History& sorted);
MutualExclusionReport CheckMutualExclusion(const std::vector<HoldInterval>& holds);
// Counter workload: writes carry the new value (a number, or {"value":n,"fence":k}); the
// final value comes from the last `read` by the harness (null: never written, 0), else from
// the last ok write.
ResourceReport CheckResource(const History& sorted);
// Waits count outside the windows LockServiceBlocked names for the waiter.
LivenessReport CheckLiveness(const History& sorted, const std::vector<HoldInterval>& holds,
                             const LivenessOptions& options);

}  // namespace locklab::checker
