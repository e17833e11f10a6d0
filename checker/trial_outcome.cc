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
  if (r.contains("liveness") && r["liveness"].is_object()) {
    const auto& l = r["liveness"];
    o.liveness_stuck = l.value("stuck", false);
    if (l.contains("longest_wait_ms")) o.longest_wait_ms = l["longest_wait_ms"].get<double>();
    o.stuck_after_ms = l.value("stuck_after_ms", int64_t{0});
  }
  if (r.contains("first_violation_ms")) o.first_violation_ms = r["first_violation_ms"].get<double>();
  if (r.contains("lab_lag")) {
    o.timing_trusted = r["lab_lag"].value("timing_trusted", true);
    o.lab_lag_max_ms = r["lab_lag"].value("max_ms", 0.0);
  }
  o.interrupted = r.value("interrupted", false);
  if (r.contains("acquires") && r["acquires"].is_object()) o.acquires_ok = r["acquires"].value("ok", int64_t{0});
  if (r.contains("run_dir") && r["run_dir"].is_string()) o.run_dir = r["run_dir"].get<std::string>();
  if (r.contains("client_failures") && r["client_failures"].is_array()) {
    for (const auto& f : r["client_failures"]) {
      if (f.is_string()) o.client_failures.push_back(f.get<std::string>());
    }
  }
  if (r.contains("infra") && r["infra"].is_array()) {
    for (const auto& e : r["infra"]) {
      if (e.is_object() && !e.contains("stalled_ms") && e.contains("summary") && e["summary"].is_string()) {
        o.lab_failure = e["summary"].get<std::string>();
        break;
      }
    }
  }
  return o;
}

std::chrono::duration<double, std::milli> TrialOutcome::LagBound(Millis ttl) {
  return std::chrono::duration<double, std::milli>(ttl.count() / 10.0);
}

bool TrialOutcome::TimingTrusted(std::chrono::duration<double, std::milli> lab_lag_max,
                                 std::chrono::duration<double, std::milli> harness_stall,
                                 Millis ttl) {
  // The harness's own stalls (infra events) count the same: a lab that did not run cannot
  // vouch for the timing of what it scheduled.
  return lab_lag_max <= LagBound(ttl) && harness_stall <= LagBound(ttl);
}

TrialOutcome TrialOutcome::FromJudgement(const Judgement& j) {
  TrialOutcome o;
  o.verdict = ParseVerdict(j.verdict).value_or(Verdict::kUnknown);
  if (!j.reason.empty()) o.verdict_reason = j.reason;
  o.resource_verdict = ParseVerdict(j.resource_verdict).value_or(Verdict::kUnknown);
  o.liveness_stuck = j.liveness.stuck;
  o.acquires_ok = j.acquires_ok;
  if (!j.first_violation.is_null()) o.first_violation_ms = j.first_violation_ms;
  return o;
}

nlohmann::ordered_json TrialOutcome::ToJson(const TrialResultsParts& parts) const {
  nlohmann::ordered_json r = parts.head;
  const std::string reason = verdict_reason.value_or("");
  if (parts.judgement != nullptr) {
    r.update(parts.judgement->ToJson());
    // The outcome's fields over the report's own, each in its place.
    r["verdict"] = VerdictName(verdict);
    // A reason the report did not give (history_error's) goes beside history_error below.
    if (verdict_reason && (r.contains("verdict_reason") || parts.history_error.empty())) {
      r["verdict_reason"] = reason;
    }
    if (!verdict_reason) r.erase("verdict_reason");
    r["resource_verdict"] = VerdictName(resource_verdict);
    r["liveness"]["stuck"] = liveness_stuck;
    if (first_violation_ms) r["first_violation_ms"] = *first_violation_ms;
    else r.erase("first_violation_ms");
  } else {
    r["verdict"] = VerdictName(verdict);
    if (verdict_reason) r["verdict_reason"] = reason;
    r["history_error"] = parts.history_error;
    r["checks"] = nlohmann::ordered_json::array();
  }
  nlohmann::ordered_json lag = {{"max_ms", lab_lag_max_ms}};
  lag.update(parts.lab_lag);
  lag["timing_trusted"] = timing_trusted;
  r["lab_lag"] = std::move(lag);
  r["interrupted"] = interrupted;
  r.update(parts.run);
  if (parts.judgement != nullptr && !parts.history_error.empty()) {
    // A history written in part: judged as a prefix, and never safe (the caller's outcome).
    if (verdict_reason) r["verdict_reason"] = reason;
    r["history_error"] = parts.history_error;
  }
  r["run_dir"] = run_dir;
  return r;
}

}  // namespace locklab::checker
