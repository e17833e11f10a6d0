// TrialOutcome: what one judged trial came to, at results.json's edge both ways.
//
// results.json is written once per trial by TrialOutcome::ToJson, from the outcome and the
// parts it does not hold (the judge's report, Judgement::ToJson beside it here, and what the
// run knows: harness/trial/trial_results.h), and every reader of a trial's outcome (the run's
// [expect], the matrix's cells, merge, hunt's searches and its story) reads it through
// TrialOutcome::FromJson: the keys of the outcome's fields are written in this one file, so
// one results.json means one outcome whoever reads it. The three rules that readers used to
// write each their own live here once:
//   stuck    (L) the judge saw a wait with no holder past the threshold (liveness.stuck) in
//            a trial it judged safe. A violated trial is V (V wins over L); a trial the judge
//            could not vouch for (unknown: no acquire granted, a driver that never started
//            left its clients waiting too) is unknown with its reason, never a stuck lock;
//   trusted  the lab's own lag and the harness's longest stall stayed within a tenth of the
//            TTL (TimingTrusted, decided when the trial is judged and written as
//            lab_lag.timing_trusted; a results.json from before the lab measured it is
//            trusted);
//   exit     the verdict's exit code (VerdictExitCode, checker/verdict.h).
// Pure and thread-compatible.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/trial_result.h"
#include "checker/verdict.h"

namespace locklab::checker {

// What results.json holds beside the outcome's own fields, in the file's order
// (TrialOutcome::ToJson).
struct TrialResultsParts {
  // The run's identity first (scenario, algorithm, faults, seed, locklab_version).
  nlohmann::ordered_json head = nlohmann::ordered_json::object();
  // The judge's report (Judgement::ToJson); null when the history could not be read.
  const Judgement* judgement = nullptr;
  // Why the history could not be read, or was written only in part ("" when whole): the
  // trial is then unknown, and results.json says it as "history_error".
  std::string history_error;
  // lab_lag's numbers but max_ms and timing_trusted, which are the outcome's.
  nlohmann::ordered_json lab_lag = nlohmann::ordered_json::object();
  // What only the run knows, after "interrupted": error, client_exits, client_failures,
  // duration_ms, config.
  nlohmann::ordered_json run = nlohmann::ordered_json::object();
};

struct TrialOutcome {
  Verdict verdict = Verdict::kUnknown;           // "verdict"; absent, or no verdict's word: unknown
  std::optional<std::string> verdict_reason;     // "verdict_reason", when present
  Verdict resource_verdict = Verdict::kUnknown;  // "resource_verdict", the same way
  bool liveness_stuck = false;                   // "liveness": {"stuck"}, the judge's report
  std::optional<double> longest_wait_ms;         // "liveness": {"longest_wait_ms"}, when present
  int64_t stuck_after_ms = 0;                    // "liveness": {"stuck_after_ms"}: the bound
  std::optional<double> first_violation_ms;      // "first_violation_ms", when present
  bool timing_trusted = true;                    // "lab_lag": {"timing_trusted"}
  double lab_lag_max_ms = 0;                     // "lab_lag": {"max_ms"}
  bool interrupted = false;                      // "interrupted"
  int64_t acquires_ok = 0;                       // "acquires": {"ok"}: grants the lock made
  std::string run_dir;                           // "run_dir", "" when absent or not a string
  std::optional<double> duration_ms;             // "duration_ms": how long the clients ran
  // "client_failures": the clients whose lock never started (a driver without a hello);
  // "infra": the first summary of a lab server or client that failed not by the schedule
  // (a stall, which only makes the timing untrusted, is not one). Either is the lab's
  // failure, not the lock's: nothing the lock did was seen.
  std::vector<std::string> client_failures;
  std::string lab_failure;
  // "first_violation": the first overlap (its key and length, who held, the fault windows
  // open then); nullopt when absent or not an object.
  struct FirstOverlap {
    std::string key;
    double overlap_ms = 0;
    std::vector<int64_t> holders;            // client processes, ascending, each once
    std::vector<std::string> faults_active;  // fault ids of the windows open then
  };
  std::optional<FirstOverlap> first_overlap;
  // "resource": {"lost_updates", "stale_writes_accepted"} (null or absent: 0).
  int64_t lost_updates = 0, stale_writes_accepted = 0;
  // "coverage": per fault of the trial, whether it bit and the evidence of its effect.
  struct Coverage {
    std::string fault;
    bool bit = false;
    int64_t effects_seen = 0;
    std::optional<std::string> evidence;
  };
  std::vector<Coverage> coverage;

  // The one stuck rule (above): liveness.stuck in a trial judged safe.
  bool Stuck() const { return Result() == TrialResult::kStuck; }
  // The trial's result (checker/trial_result.h): violated, else stuck, else safe, else
  // unknown. A trial that left no results.json is TrialResult::kNotRun, its reader's to say.
  TrialResult Result() const;
  // The one trusted rule (above), as the trial was judged.
  bool Trusted() const { return timing_trusted; }
  // Where that rule is decided: the clients' latest sleep (`lab_lag_max`) and the harness's
  // longest stall both within LagBound(ttl), a tenth of the TTL. Beyond it a violation may be
  // the lab's doing rather than the fault's: flagged, never hidden (the verdict stays what
  // the history shows).
  static std::chrono::duration<double, std::milli> LagBound(Millis ttl);
  static bool TimingTrusted(std::chrono::duration<double, std::milli> lab_lag_max,
                            std::chrono::duration<double, std::milli> harness_stall, Millis ttl);
  // The one exit code rule: VerdictExitCode(verdict).
  int ExitCode() const { return VerdictExitCode(verdict); }

  // `results` must be a results.json object: anything else, or a field above of the wrong
  // type, throws nlohmann::json::exception (its what() names the field's problem), so a
  // reader can make that trial unknown with the reason. Absent fields keep the defaults, and
  // a "liveness" that is not an object reads as absent (no stuck lock).
  static TrialOutcome FromJson(const nlohmann::ordered_json& results);
  // FromJson, or nullopt for anything it would throw on: for a reader that says nothing of a
  // trial whose results.json is not one.
  static std::optional<TrialOutcome> TryFromJson(const nlohmann::ordered_json& results);

  // The judge's part of the outcome: verdict, reason, resource verdict, liveness.stuck and
  // the first violation's time; the run's part (lab lag, interrupted, run_dir) is the
  // caller's to fill.
  static TrialOutcome FromJudgement(const Judgement& judgement);

  // results.json, whole, in the file's order: parts.head, the judge's report (or, with no
  // judgement, the verdict, its reason, history_error and no checks), "lab_lag" (max_ms,
  // parts.lab_lag, timing_trusted), "interrupted", parts.run, then, for a history written in
  // part, the verdict's reason and history_error, and "run_dir" last. The outcome's fields
  // replace the report's own (the same values, but for an unknown from history_error), so
  // FromJson(ToJson(parts)) reads this outcome back.
  nlohmann::ordered_json ToJson(const TrialResultsParts& parts) const;
};

}  // namespace locklab::checker
