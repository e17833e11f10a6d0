// TrialSignals: how close one trial came to failing, read from its history, so the hunt can
// keep the scenarios that came closest (or did something not seen before) and mutate them
// (harness/hunt/hunt_guide.h), the way a coverage-guided fuzzer keeps the inputs that reached new code.
//
// Every signal comes from the recorded events alone (the checker's hold intervals over
// history.jsonl, and results.json's liveness), never from what the lock is expected to do,
// so it works on a black-box driver that announces nothing:
//   - outcome kinds: each (operation, outcome) pair a client completed (renew:fail,
//     release:info, write:fail ...): a new kind is a behaviour not seen before;
//   - holds that outlived their validity (the client was still in its critical section
//     after the lease it was granted had run out), and writes made in the last tenth of a
//     lease's validity or after it;
//   - renewals that failed, came back unknown, or landed after the lease they extended had
//     already run out;
//   - unknown outcomes of any operation;
//   - the longest wait for a free lock against the liveness bound.
// Features() turns them into words with counts in coarse buckets (AFL's hit-count buckets:
// 1, 2, 3, 4-7, 8+), so "two late renewals" and "five" are different news but 5 and 6 are
// not. Pure functions; thread-compatible.
#pragma once

#include <set>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "checker/history.h"

#include <nlohmann/json.hpp>

namespace locklab::checker {

struct TrialSignals {
  std::set<std::string> outcome_kinds;  // "acquire:ok", "renew:fail", "release:info", ...
  int holds = 0;
  int holds_past_validity = 0;   // the hold went on after acquire (or last renew) + validity
  int writes_near_lease_end = 0; // a write completed in the last tenth of the validity
  int writes_after_lease_end = 0;// a write completed after the validity had run out
  int renew_failures = 0;        // renew completed fail
  int renew_unknown = 0;         // renew completed info
  int renew_late = 0;            // renew ok that landed after the lease it extended ran out
  int unknown_outcomes = 0;      // any client operation that completed info
  // The longest wait for a free lock as a fraction of the liveness bound (0 when unknown).
  double wait_fraction = 0;
};

// Signals of one history (sorted or not). `stuck_after`: the run's liveness bound; with
// `longest_wait_ms` from its results.json (negative: unknown).
TrialSignals SignalsOf(const checker::History& history, double longest_wait_ms,
                       Millis stuck_after);
// The same from a run directory's history.jsonl and its results.json as read
// (checker::TrialOutcome: the liveness bound and the longest wait).
Status ReadTrialSignals(const std::string& run_dir, const nlohmann::ordered_json& results, TrialSignals* out);

// The signals as feature words with bucketed counts: {"kind:renew:fail",
// "holds_past_validity:2", "wait:0.75", ...}. A feature a hunt has not seen before is news.
std::set<std::string> Features(const TrialSignals& s);

// How close to failing, for ordering kept scenarios: higher is closer. Weighs what precedes
// a violation of a lease lock most (a hold or a write past its lease), then late or failed
// renewals and unknown outcomes, then a long wait.
double Closeness(const TrialSignals& s);

}  // namespace locklab::checker
