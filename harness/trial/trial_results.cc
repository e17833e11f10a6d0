#include "harness/trial/trial_results.h"

#include "base/version.h"
#include "checker/history.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {
namespace {

// The judged fields main.cc prints, from the judgement results.json is written from.
void SummarizeJudgement(const checker::Judgement& j, TrialSummary* s) {
  s->ops = j.ops;
  s->acquires = {j.acquires, j.acquires_ok, j.acquires_fail, j.acquires_unknown, j.expired_grants};
  s->overlapping_pairs = j.mutual_exclusion.overlapping_pairs;
  s->lost_updates = j.resource.lost_updates;
  s->stale_writes_accepted = j.resource.stale_writes_accepted;
}

// A history that cannot be judged whole: the verdict is unknown, whatever it shows.
void MarkUnknown(const std::string& reason, const std::string& error,
                 checker::TrialOutcome* outcome, checker::TrialResultsParts* parts) {
  outcome->verdict = checker::Verdict::kUnknown;
  outcome->verdict_reason = reason;
  parts->history_error = error;
}

}  // namespace

JudgedTrial JudgeTrial(const TrialRunRecord& run) {
  const RunOptions& o = *run.options;
  JudgedTrial out;
  TrialSummary& s = out.summary;
  checker::TrialResultsParts parts;
  parts.head = {{"scenario", o.name},
                {"algorithm", o.lock},
                {"faults", FaultIdList(o)},
                {"seed", o.seed},
                {"locklab_version", {{"version", LocklabVersion()}, {"revision", LocklabRevision()}}}};
  s.seed = o.seed;
  checker::History h;
  checker::Judgement judgement;
  checker::TrialOutcome& outcome = out.outcome;
  double harness_stall_ms = 0;  // the longest the harness itself did not run
  Status read = run.run_dir.empty()
                    ? Status::BadInput("no run directory")
                    : checker::ReadJsonlHistory(run.run_dir + "/history.jsonl", &h, true);
  if (read.ok()) {
    // The one judge (checker/verdict.h): `locklab check` on this history says the same.
    judgement = checker::JudgeHistory(h);
    parts.judgement = &judgement;
    outcome = checker::TrialOutcome::FromJudgement(judgement);
    SummarizeJudgement(judgement, &s);
    harness_stall_ms = judgement.longest_lab_stall_ms;
  } else {
    MarkUnknown("the history cannot be read: " + read.message(), read.message(), &outcome, &parts);
  }
  // The lab's own lag, judged by the one trusted rule (checker/trial_outcome.h).
  const std::chrono::duration<double, std::milli> lag_max(run.lag.max), stall(harness_stall_ms);
  outcome.lab_lag_max_ms = lag_max.count();
  outcome.timing_trusted = checker::TrialOutcome::TimingTrusted(lag_max, stall, o.ttl);
  parts.lab_lag = {{"bound_ms", checker::TrialOutcome::LagBound(o.ttl).count()},
                   {"sleeps", run.lag.sleeps},
                   {"over_10ms", run.lag.over_10ms},
                   {"over_50ms", run.lag.over_50ms},
                   {"clients_reporting", run.lag.reports},
                   {"harness_stall_ms", harness_stall_ms}};
  outcome.interrupted = run.interrupted;
  nlohmann::ordered_json& r = parts.run;
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
                run.history_error.message(), &outcome, &parts);
  }
  outcome.run_dir = run.run_dir;
  out.results = outcome.ToJson(parts);
  // What main.cc prints says what results.json says, from the same outcome.
  s.verdict = outcome.verdict;
  s.reason = outcome.verdict_reason.value_or("");
  s.lab_lag.max = lag_max;
  s.lab_lag.bound = checker::TrialOutcome::LagBound(o.ttl);
  s.lab_lag.timing_trusted = outcome.Trusted();
  s.interrupted = outcome.interrupted;
  return out;
}

Status WriteTrialResults(const TrialRunRecord& run, const nlohmann::ordered_json& results) {
  Status ws = WriteFile(run.run_dir + "/results.json", results.dump(2) + "\n");
  Status wj = WriteFile(run.run_dir + "/junit.xml",
                        JunitXml(run.options->name, results.at("checks"), run.elapsed.count()));
  return ws.ok() ? wj : ws;
}

int TrialExitCode(const Status& status, const checker::TrialOutcome& outcome) {
  if (!status.ok()) return status.ExitCode();
  return outcome.ExitCode();
}

}  // namespace locklab::harness
