#include "checker/trial_outcome.h"

#include <algorithm>

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
  if (r.contains("duration_ms") && r["duration_ms"].is_number()) o.duration_ms = r["duration_ms"].get<double>();
  if (r.contains("client_failures") && r["client_failures"].is_array()) {
    for (const auto& f : r["client_failures"]) {
      if (f.is_string()) o.client_failures.push_back(f.get<std::string>());
    }
  }
  if (r.contains("first_violation") && r["first_violation"].is_object()) {
    const auto& v = r["first_violation"];
    FirstOverlap f;
    f.key = v.value("key", std::string("?"));
    f.overlap_ms = v.value("overlap_ms", 0.0);
    for (const auto& h : v.value("holds", nlohmann::ordered_json::array())) {
      f.holders.push_back(h.value("process", int64_t{0}));
    }
    std::sort(f.holders.begin(), f.holders.end());
    f.holders.erase(std::unique(f.holders.begin(), f.holders.end()), f.holders.end());
    for (const auto& a : v.value("faults_active", nlohmann::ordered_json::array())) {
      f.faults_active.push_back(a.value("fault", std::string("?")));
    }
    o.first_overlap = std::move(f);
  }
  if (r.contains("resource") && r["resource"].is_object()) {
    const auto& res = r["resource"];
    auto count = [&](const char* key) {
      return res.contains(key) && res[key].is_number_integer() ? res[key].get<int64_t>() : int64_t{0};
    };
    o.lost_updates = count("lost_updates");
    o.stale_writes_accepted = count("stale_writes_accepted");
  }
  if (r.contains("coverage") && r["coverage"].is_array()) {
    for (const auto& c : r["coverage"]) {
      if (!c.is_object()) continue;
      Coverage cov;
      cov.fault = c.value("fault", std::string("?"));
      cov.bit = c.value("bit", false);
      cov.effects_seen = c.value("effects_seen", int64_t{0});
      if (c.contains("evidence") && c["evidence"].is_string()) cov.evidence = c["evidence"].get<std::string>();
      o.coverage.push_back(std::move(cov));
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

std::optional<TrialOutcome> TrialOutcome::TryFromJson(const nlohmann::ordered_json& results) {
  try {
    return FromJson(results);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
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
  o.verdict = j.verdict;
  if (!j.reason.empty()) o.verdict_reason = j.reason;
  o.resource_verdict = j.resource_verdict;
  o.liveness_stuck = j.liveness.stuck;
  o.acquires_ok = j.acquires_ok;
  if (!j.first_violation.is_null()) o.first_violation_ms = j.first_violation_ms;
  return o;
}

TrialResult TrialOutcome::Result() const { return ResultOf(verdict, liveness_stuck); }

nlohmann::ordered_json TrialOutcome::ToJson(const TrialResultsParts& parts) const {
  nlohmann::ordered_json r = parts.head;
  // The trial's result first, as word and letter (the reports show them as they are); the
  // judge's report writes them too, and the outcome's replace them (an unknown from
  // history_error).
  const ResultName& result = NameOf(Result());
  r["result"] = result.word;
  r["result_letter"] = result.letter;
  const std::string reason = verdict_reason.value_or("");
  if (parts.judgement != nullptr) {
    r.update(parts.judgement->ToJson());
    r["result"] = result.word;
    r["result_letter"] = result.letter;
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
