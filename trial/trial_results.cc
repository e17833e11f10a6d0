#include "trial/trial_results.h"

#include "base/version.h"
#include "checker/history.h"
#include "lab/run_store.h"

namespace locklab::harness {
namespace {

// The judged fields main.cc prints, from the judgement results.json is written from.
void SummarizeJudgement(const checker::Judgement& j, TrialSummary* s) {
  s->verdict = checker::ParseVerdict(j.verdict).value_or(checker::Verdict::kUnknown);
  s->reason = j.reason;
  s->ops = j.ops;
  s->acquires = {j.acquires, j.acquires_ok, j.acquires_fail, j.acquires_unknown, j.expired_grants};
  s->overlapping_pairs = j.mutual_exclusion.overlapping_pairs;
  s->lost_updates = j.resource.lost_updates;
  s->stale_writes_accepted = j.resource.stale_writes_accepted;
}

// A history that cannot be judged whole: the verdict is unknown, whatever it shows.
void MarkUnknown(const std::string& reason, const std::string& error, JudgedTrial* out) {
  out->results["verdict"] = checker::VerdictName(checker::Verdict::kUnknown);
  out->results["verdict_reason"] = reason;
  out->results["history_error"] = error;
  out->summary.verdict = checker::Verdict::kUnknown;
  out->summary.reason = reason;
}

}  // namespace

JudgedTrial JudgeTrial(const TrialRunRecord& run) {
  const RunOptions& o = *run.options;
  JudgedTrial out;
  nlohmann::ordered_json& r = out.results;
  TrialSummary& s = out.summary;
  r["scenario"] = o.name;
  r["algorithm"] = o.lock;
  r["faults"] = FaultIdList(o);
  r["seed"] = o.seed;
  r["locklab_version"] = {{"version", LocklabVersion()}, {"revision", LocklabRevision()}};
  s.seed = o.seed;
  checker::History h;
  double harness_stall_ms = 0;  // the longest the harness itself did not run
  Status read = run.run_dir.empty()
                    ? Status::BadInput("no run directory")
                    : checker::ReadJsonlHistory(run.run_dir + "/history.jsonl", &h, true);
  if (read.ok()) {
    // The one judge (checker/verdict.h): `locklab check` on this history says the same.
    checker::Judgement judgement = checker::JudgeHistory(h);
    r.update(judgement.ToJson());
    SummarizeJudgement(judgement, &s);
    harness_stall_ms = judgement.longest_lab_stall_ms;
  } else {
    MarkUnknown("the history cannot be read: " + read.message(), read.message(), &out);
    r["checks"] = nlohmann::ordered_json::array();
  }
  // The lab's own lag: beyond a tenth of the TTL, a violation may be the lab's doing rather
  // than the fault's: flagged, never hidden (the verdict stays what the history shows).
  s.lab_lag.max = run.lag.max;
  s.lab_lag.bound = std::chrono::duration<double, std::milli>(o.ttl.count() / 10.0);
  // The harness's own stalls (infra events) count the same: a lab that did not run cannot
  // vouch for the timing of what it scheduled.
  s.lab_lag.timing_trusted = s.lab_lag.max <= s.lab_lag.bound &&
                             harness_stall_ms <= s.lab_lag.bound.count();
  r["lab_lag"] = {{"max_ms", s.lab_lag.max.count()},   {"bound_ms", s.lab_lag.bound.count()},
                  {"sleeps", run.lag.sleeps},          {"over_10ms", run.lag.over_10ms},
                  {"over_50ms", run.lag.over_50ms},    {"clients_reporting", run.lag.reports},
                  {"harness_stall_ms", harness_stall_ms},
                  {"timing_trusted", s.lab_lag.timing_trusted}};
  r["interrupted"] = run.interrupted;
  s.interrupted = run.interrupted;
  if (!run.facts.error.empty()) r["error"] = run.facts.error;
  if (run.unexpected_exits > 0) r["client_exits"] = run.unexpected_exits;
  if (!run.facts.client_failures.empty()) r["client_failures"] = run.facts.client_failures;
  r["duration_ms"] = static_cast<int64_t>(run.elapsed.count() * 1000);
  r["config"] = {{"clients", o.clients}, {"keys", o.keys}, {"ttl_ms", o.ttl.count()},
                 {"hold_ms", o.hold.count()}, {"nodes", o.nodes},
                 {"command_timeout_ms", o.command_timeout.count()}};
  if (!o.endpoints.empty()) r["config"]["endpoints"] = o.endpoints;
  // A history that could not be written in full is judged as a prefix, and never safe.
  if (!run.history_error.ok()) {
    MarkUnknown("the history is incomplete: " + run.history_error.message(),
                run.history_error.message(), &out);
  }
  r["run_dir"] = run.run_dir;
  return out;
}

Status WriteTrialResults(const TrialRunRecord& run, const nlohmann::ordered_json& results) {
  Status ws = WriteFile(run.run_dir + "/results.json", results.dump(2) + "\n");
  Status wj = WriteFile(run.run_dir + "/junit.xml",
                        JunitXml(run.options->name, results.at("checks"), run.elapsed.count()));
  return ws.ok() ? wj : ws;
}

int TrialExitCode(const Status& status, checker::Verdict verdict) {
  if (!status.ok()) return status.ExitCode();
  return checker::VerdictExitCode(verdict);
}

}  // namespace locklab::harness
