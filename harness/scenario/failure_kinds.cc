#include "harness/scenario/failure_kinds.h"

#include <algorithm>

#include "checker/trial_outcome.h"
#include "checker/verdict.h"

namespace locklab::harness {

const char* FailureKindName(FailureKind kind) {
  // violated and stuck are spelt as the trial results they are (checker/trial_result.h);
  // resource (the guarded resource broken) is a hunt's own kind.
  switch (kind) {
    case FailureKind::kViolated: return checker::NameOf(checker::TrialResult::kViolated).word.data();
    case FailureKind::kResource: return "resource";
    case FailureKind::kStuck: return checker::NameOf(checker::TrialResult::kStuck).word.data();
  }
  return checker::NameOf(checker::TrialResult::kViolated).word.data();
}

std::vector<std::string> FailureKindNames(const FailureKindSet& kinds) {
  std::vector<std::string> names;
  for (FailureKind k : kinds) names.push_back(FailureKindName(k));
  std::sort(names.begin(), names.end());
  return names;
}

FailureKindSet FailureKinds(const nlohmann::ordered_json& results, bool liveness) {
  FailureKindSet kinds;
  if (!results.is_object()) return kinds;
  const checker::TrialOutcome outcome = checker::TrialOutcome::FromJson(results);
  if (outcome.verdict == checker::Verdict::kViolated) kinds.insert(FailureKind::kViolated);
  if (outcome.resource_verdict == checker::Verdict::kViolated) kinds.insert(FailureKind::kResource);
  if (liveness && outcome.Stuck()) kinds.insert(FailureKind::kStuck);
  return kinds;
}

void ExpectKinds(const FailureKindSet& kinds, RunOptions* o) {
  o->expect_verdict.reset();
  o->expect_resource.reset();
  o->expect_stuck.reset();
  if (kinds.count(FailureKind::kViolated)) {
    o->expect_verdict = checker::Verdict::kViolated;
  } else if (kinds.count(FailureKind::kResource)) {
    o->expect_verdict = o->expect_resource = checker::Verdict::kViolated;
  } else if (kinds.count(FailureKind::kStuck)) {
    o->expect_stuck = true;
  }
}

}  // namespace locklab::harness
