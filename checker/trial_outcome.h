// TrialOutcome: what one judged trial came to, read from its results.json at the file's edge.
//
// results.json is written once per trial from the judge's answer (Judgement::ToJson, beside
// it here) and what the run knows (trial/trial_results.h). Every reader of a trial's
// outcome (the run's [expect], the matrix's cells, merge, hunt's searches and its story)
// reads it through TrialOutcome::FromJson, so one results.json means one outcome whoever
// reads it, and the three rules that readers used to write each their own live here once:
//   stuck    (L) the judge saw a wait with no holder past the threshold (liveness.stuck) in
//            a trial it judged safe. A violated trial is V (V wins over L); a trial the judge
//            could not vouch for (unknown: no acquire granted, a driver that never started
//            left its clients waiting too) is unknown with its reason, never a stuck lock;
//   trusted  the lab's own lag stayed within a tenth of the TTL (lab_lag.timing_trusted; a
//            results.json from before the lab measured it is trusted);
//   exit     the verdict's exit code (VerdictExitCode, checker/verdict.h).
// Pure and thread-compatible.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checker/verdict.h"

namespace locklab::checker {

struct TrialOutcome {
  Verdict verdict = Verdict::kUnknown;           // "verdict"; absent, or no verdict's word: unknown
  std::optional<std::string> verdict_reason;     // "verdict_reason", when present
  Verdict resource_verdict = Verdict::kUnknown;  // "resource_verdict", the same way
  bool liveness_stuck = false;                   // "liveness": {"stuck"}, the judge's report
  std::optional<double> first_violation_ms;      // "first_violation_ms", when present
  bool timing_trusted = true;                    // "lab_lag": {"timing_trusted"}
  double lab_lag_max_ms = 0;                     // "lab_lag": {"max_ms"}
  bool interrupted = false;                      // "interrupted"
  std::string run_dir;                           // "run_dir", "" when absent or not a string

  // The one stuck rule (above): liveness.stuck in a trial judged safe.
  bool Stuck() const { return verdict == Verdict::kSafe && liveness_stuck; }
  // The one trusted rule (above).
  bool Trusted() const { return timing_trusted; }
  // The one exit code rule: VerdictExitCode(verdict).
  int ExitCode() const { return VerdictExitCode(verdict); }

  // `results` must be a results.json object: anything else, or a field above of the wrong
  // type, throws nlohmann::json::exception (its what() names the field's problem), so a
  // reader can make that trial unknown with the reason. Absent fields keep the defaults, and
  // a "liveness" that is not an object reads as absent (no stuck lock).
  static TrialOutcome FromJson(const nlohmann::ordered_json& results);
};

}  // namespace locklab::checker
