#include "checker/trial_result.h"

#include <iterator>

namespace locklab::checker {
namespace {

constexpr ResultName kResults[] = {
    {TrialResult::kSafe, "safe", "S", "#2b8a3e", "#d9f0d3",
     "no two holders, the resource intact, every fault seen to take effect"},
    {TrialResult::kViolated, "violated", "V", "#c8102e", "#f7c6c9",
     "two holders at once, or the guarded resource broken"},
    {TrialResult::kStuck, "stuck", "L", "#7b3fa0", "#e3d3f0",
     "safe, but a client waited with nobody holding past the liveness bound"},
    {TrialResult::kUnknown, "unknown", "?", "#b7791f", "#fde7b0",
     "the lab could not vouch for a verdict (its reason says why)"},
    {TrialResult::kNotRun, "not run", "-", "#8a8a8a", "#e6e6e6", "the trial never ran to the end"},
    {TrialResult::kNotApplicable, "n/a", "n/a", "#9a9a9a", "#eeeeee",
     "the fault cannot act on this lock"},
};

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kResults); ++i) {
    if (static_cast<size_t>(kResults[i].result) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kResults lists the results in their enum order");

}  // namespace

std::span<const ResultName> ResultTable() { return kResults; }

const ResultName& NameOf(TrialResult result) { return kResults[static_cast<size_t>(result)]; }

std::optional<TrialResult> ParseResultWord(std::string_view word) {
  for (const auto& r : kResults) {
    if (r.word == word) return r.result;
  }
  return std::nullopt;
}

std::optional<TrialResult> ParseResultLetter(std::string_view letter) {
  for (const auto& r : kResults) {
    if (r.letter == letter) return r.result;
  }
  return std::nullopt;
}

}  // namespace locklab::checker
