// FailureKind: the kinds of failure a run can show, as a hunt looks for them and an [expect]
// states them: violated (the verdict: two holders, or a broken lock), resource (the resource
// verdict: lost updates or stale writes accepted) and stuck (TrialOutcome::Stuck). Read from
// a results.json through checker::TrialOutcome. Pure; thread-compatible.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/scenario/run_options.h"

namespace locklab::harness {

// The kinds of failure a hunt looks for in a run's results.json: violated (its verdict: two
// holders, or a broken lock or resource), resource (resource_verdict violated: lost updates
// or stale writes accepted) and, with `liveness`, stuck (TrialOutcome::Stuck). A kill
// against a baseline is a kind the mutant shows and its reference does not: a fenced lock's
// holders overlap under a pause with or without its bug, and only the resource tells them
// apart.
enum class FailureKind { kViolated, kResource, kStuck };
using FailureKindSet = std::set<FailureKind>;
// hunt.json's words for them: "violated", "resource", "stuck".
const char* FailureKindName(FailureKind kind);
// The names of `kinds`, in alphabetical order (hunt.json's "kinds").
std::vector<std::string> FailureKindNames(const FailureKindSet& kinds);
FailureKindSet FailureKinds(const nlohmann::ordered_json& results, bool liveness);
// The [expect] of a scenario that shows `kinds`: verdict violated for violated; for resource
// alone, verdict and resource violated; for stuck alone, stuck yes.
void ExpectKinds(const FailureKindSet& kinds, RunOptions* o);

}  // namespace locklab::harness
