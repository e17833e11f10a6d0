#include "checker/trial_outcome.h"

namespace locklab::checker {

TrialOutcome TrialOutcome::FromJson(const nlohmann::ordered_json& r) {
  TrialOutcome o;
  // value() throws on a non-object and on a present field of another type: the caller's
  // "malformed results.json" names which.
  o.verdict = ParseVerdict(r.value("verdict", std::string())).value_or(Verdict::kUnknown);
  if (r.contains("verdict_reason")) o.verdict_reason = r["verdict_reason"].get<std::string>();
  o.resource_verdict =
      ParseVerdict(r.value("resource_verdict", std::string())).value_or(Verdict::kUnknown);
  // A "liveness" of another shape says nothing about the lock (as reports/matrixcells.py reads it).
  if (r.contains("liveness") && r["liveness"].is_object()) o.liveness_stuck = r["liveness"].value("stuck", false);
  if (r.contains("first_violation_ms")) o.first_violation_ms = r["first_violation_ms"].get<double>();
  if (r.contains("lab_lag")) {
    o.timing_trusted = r["lab_lag"].value("timing_trusted", true);
    o.lab_lag_max_ms = r["lab_lag"].value("max_ms", 0.0);
  }
  o.interrupted = r.value("interrupted", false);
  if (r.contains("run_dir") && r["run_dir"].is_string()) o.run_dir = r["run_dir"].get<std::string>();
  return o;
}

}  // namespace locklab::checker
