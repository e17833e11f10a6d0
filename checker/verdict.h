// Verdict: the one judgement of a lock history (docs/design.md 3.3).
//
// JudgeHistory() is the only function that turns a history into a verdict and the counts
// of results.json: `locklab run`, `locklab matrix`, `locklab check` and the report all read
// its answer, so one history has one verdict whichever command judges it. Everything it
// uses is in the history itself: client events, nemesis events (fault windows, their plans
// and armed pause points, client crashes) and the harness's `run` events, which declare the
// run's facts (the faults it scheduled, the stuck threshold, how the run ended). A history
// without `run` events (another tool's) is judged with the defaults below.
//
// The verdict is evidence, never an expectation:
//   violated  two holders of one key were seen, or the resource was broken (lost updates,
//             stale writes accepted, a non-linearizable lock or register);
//   safe      none of that, the lock granted at least one acquire, every declared fault bit
//             at least once (a window opened while the workload did lock work, and, in a
//             history that declares "effects", that window's effect was seen), the run
//             finished and the linearizability search answered;
//   unknown   anything else, with a one-line reason.
// A death or stop of a lab process that the schedule did not cause (an `infra` event,
// checker/infra.h) makes the verdict unknown, naming it, unless two holders overlapped
// before it: what came after it may be the lab's doing. A dead client's holds end at its
// death. A final read of the resource that got no answer makes lost updates unknown.
// The checker is never told which lock ran. Pure and thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "checker/history.h"
#include "checker/infra.h"
#include "checker/linearizability.h"
#include "checker/mutual_exclusion.h"
#include "checker/trial_result.h"

namespace locklab::checker {

// The verdict's closed set (the words above). Its one name table is VerdictName /
// ParseVerdict: results.json, matrix.json and every reader of them spell it through these.
enum class Verdict { kSafe, kViolated, kUnknown };
// "safe", "violated" or "unknown".
std::string_view VerdictName(Verdict verdict);
// The one result rule (checker/trial_result.h): violated, else stuck (a wait with no holder
// past the bound in a trial judged safe), else safe, else unknown.
TrialResult ResultOf(Verdict verdict, bool liveness_stuck);
// The verdict a word names; nullopt for any other word ("", "error", "Safe").
std::optional<Verdict> ParseVerdict(std::string_view word);
// Every verdict's word, for messages: "safe, violated or unknown".
std::string VerdictWordList();

// The harness's declarations: {"process":"harness","type":"info","f":"run","key":"start",
// "value":{"faults":[...],"stuck_after_ms":N,"lin_time_budget_ms":N,
// "workload":{"validity":"honour"}}} before the first
// client starts, and {"key":"end","value":{"interrupted":B,"client_exits":N,"error":S,
// "client_failures":[S...]}} after the final reads.
struct RunFacts {
  bool declared = false;                // a run start event was seen
  std::vector<std::string> faults;      // scheduled fault ids ("none" left out)
  Millis stuck_after{0};                // 0: no liveness judgement
  Millis lin_time_budget{10000};        // the linearizability search's time budget
  // The clients honoured their leases' validity ("workload":{"validity":"honour"}): each
  // stopped using a lock once acquired_at + validity_ms had passed (workloads/
  // counter_workload.h), so a hold ends there at the latest (ComputeHoldIntervals).
  // false: absent or "ignore" (and every foreign history).
  bool validity_honoured = false;
  // The lab records each fault window's effect evidence ("effects":true in the start
  // event; nemesis "effect" events, faults/scheduled_fault.h): a fault then bites only
  // with its effect seen. false: older and foreign histories, judged as before.
  bool effects_declared = false;
  bool ended = false;                   // a run end event was seen
  bool interrupted = false;
  int64_t client_exits = 0;             // clients that exited during the run, not by a fault
  std::string error;                    // the run's infrastructure error, if any
  std::vector<std::string> client_failures;  // one line per client that failed (driver start)
};
// Reads the run events; malformed values are ignored field by field (a history's own
// parse already checked the event shape).
RunFacts ReadRunFacts(const History& h);
// The events themselves, for the harness to write (no "index"/"time_ns": the writer adds them).
nlohmann::ordered_json RunStartValue(const RunFacts& f);
nlohmann::ordered_json RunEndValue(const RunFacts& f);

// What one fault did in a run, from its nemesis events: `plan` (the schedule, at setup),
// `arm` (a client asked to stop at a pause point), `start` / `stop` (a window opened /
// closed; a stop with "healed":"teardown" was cut by the run's end), `effect` (what a
// window was seen to do: {"seen":B,"evidence":"...","window":N}, N counting the fault's
// windows from 1).
struct FaultCoverage {
  std::string fault;
  bool planned = false;
  int64_t armed = 0;            // pause points armed
  int64_t windows_opened = 0;   // for armed faults: the armed point was reached
  int64_t windows_closed = 0;   // closed by the schedule
  int64_t windows_cut = 0;      // closed by the run's end (teardown)
  int64_t windows_met = 0;      // opened while the workload did lock work (see Judge)
  std::vector<int64_t> clients_hit;  // clients named by opened windows
  std::vector<int64_t> nodes_hit;    // nodes named by opened windows
  // Effect evidence (when the run declared it: RunFacts::effects_declared).
  bool effects_declared = false;
  int64_t effects_seen = 0;      // windows whose effect was seen
  int64_t effects_not_seen = 0;  // windows whose effect was looked for and not seen
  int64_t windows_proven = 0;    // met the workload and showed their effect
  std::string evidence;          // the first seen evidence line, else the first not seen
  // Bit: a window met lock work, and, when effects are declared, showed its effect too.
  bool bit() const { return effects_declared ? windows_proven > 0 : windows_met > 0; }
  // "client-pause: armed 3, opened 0"; with effects: ", effect seen 1: client 2 (pid
  // 1234) stopped: state T in /proc/1234/stat" or ", effect not seen: ...".
  std::string Summary() const;
};
std::vector<FaultCoverage> ComputeFaultCoverage(const History& sorted, const RunFacts& facts,
                                                const std::vector<HoldInterval>& holds);

// A crashed client holds nothing from its crash on: its unreleased leases end with a
// release at the crash instant (for the mutex models; the hold intervals apply the same
// rule). Returns a new sorted history.
History WithCrashReleases(const History& sorted);

struct JudgeOptions {
  // Overrides of the declared facts (`locklab check --time-budget-ms`).
  std::optional<Millis> lin_time_budget;
  size_t memory_budget_bytes = size_t(1) << 30;
  size_t counterexample_events = 40;
};

struct Judgement {
  Verdict verdict = Verdict::kUnknown;
  std::string reason;                        // one line: why violated / why unknown
  Verdict resource_verdict = Verdict::kUnknown;  // the guarded resource alone
  RunFacts facts;
  int64_t ops = 0;                           // client invocations
  int64_t acquires = 0, acquires_ok = 0, acquires_fail = 0, acquires_unknown = 0;
  int64_t expired_grants = 0;                // acquire ok with validity_ms <= 0
  std::vector<HoldInterval> holds;
  MutualExclusionReport mutual_exclusion;
  ResourceReport resource;
  LivenessReport liveness;
  LinearizabilityResult lock_lin, resource_lin;
  std::vector<FaultCoverage> coverage;
  // What the lab saw of its own ground (checker/infra.h): deaths and stops the schedule did
  // not cause, and the harness's stalls.
  std::vector<InfraEvent> infra;
  double longest_lab_stall_ms = 0;           // the longest stall of the harness, 0 when none
  // Not ok when the history is malformed for the checker (a completion with no invocation, a
  // process that invokes twice, a non-integer fence): "LINE: field 'F': ...". The verdict is
  // then unknown; `locklab check` refuses such a file (exit 65) instead of judging it.
  Status bad_input;
  nlohmann::ordered_json first_violation;    // null when no overlap
  double first_violation_ms = -1;            // from the first event; -1 when none

  bool linearizable_known() const;
  // Every judged field of results.json (verdict, counts, checks, coverage, holds, episodes).
  nlohmann::ordered_json ToJson() const;
};

Judgement JudgeHistory(const History& h, const JudgeOptions& o = {});

// The one rule from verdict to exit code (docs/design.md 3.5): 0 safe, 1 violated, 2 unknown.
int VerdictExitCode(Verdict verdict);
// The same for a verdict word; a word that names no verdict is unknown (2).
int VerdictExitCode(const std::string& verdict);

}  // namespace locklab::checker
