// Trial results: the judging phase of a trial. JudgeTrial() reads the trial's history.jsonl
// back, judges it with the one judge (checker::JudgeHistory, so `locklab check` on the same
// file says the same) and adds what only the run knows (its options, the lab's lag, signals,
// client exits, a history that could not be written), giving the trial's outcome, results.json
// written from it (checker::TrialOutcome::ToJson, where FromJson reads it back) and the
// TrialSummary of it from the same values. WriteTrialResults() writes results.json and
// junit.xml. Pure but for reading and writing those files; thread-compatible.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "checker/trial_outcome.h"
#include "checker/verdict.h"
#include "harness/trial/client_fleet.h"
#include "harness/scenario/run_options.h"
#include "harness/trial/runner.h"

namespace locklab::harness {

// What the run itself knows beyond its history.
struct TrialRunRecord {
  const RunOptions* options = nullptr;  // as run: seed and nodes filled in
  std::string run_dir;
  LabLagTotals lag;
  bool interrupted = false;
  int unexpected_exits = 0;             // clients that exited during the run, not by a fault
  checker::RunFacts facts;              // as declared in the history (error, client failures)
  Status history_error;                 // the history is a prefix: the verdict is unknown
  std::chrono::duration<double> elapsed{0};  // the whole trial, setup included
};

struct JudgedTrial {
  checker::TrialOutcome outcome;   // what results.json is written from
  nlohmann::ordered_json results;  // results.json (outcome.ToJson)
  TrialSummary summary;
};
JudgedTrial JudgeTrial(const TrialRunRecord& run);

// RUN_DIR/results.json and RUN_DIR/junit.xml; the first failure.
Status WriteTrialResults(const TrialRunRecord& run, const nlohmann::ordered_json& results);

// docs/design.md 3.5: the status's code when it failed, else the outcome's (the one exit
// code rule, checker::TrialOutcome::ExitCode: 1 violated, 2 unknown, 0 safe).
int TrialExitCode(const Status& status, const checker::TrialOutcome& outcome);

}  // namespace locklab::harness
