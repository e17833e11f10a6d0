// TrialResult: what one trial came to, as every command carries it (run's exit code and
// junit, a matrix cell, a hunt's search, replay, merge and the reports). The one judge makes
// it (TrialOutcome::Result, checker/trial_outcome.h); results.json and matrix.json carry its
// word and letter; the table behind ResultName is the only place the words, letters and
// colours are spelt (`locklab list --json` exports it for the reports). kNotApplicable is a
// matrix cell's only: a fault that cannot act on the lock. Constants; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace locklab::checker {

enum class TrialResult { kSafe, kViolated, kStuck, kUnknown, kNotRun, kNotApplicable };

struct ResultName {
  TrialResult result;
  std::string_view word;     // "safe", "violated", "stuck", "unknown", "not run", "n/a"
  std::string_view letter;   // matrix.md's letter: S V L ? - n/a
  std::string_view colour;   // the reports' ink for it (#rrggbb)
  std::string_view fill;     // the reports' background for it (#rrggbb)
  std::string_view meaning;  // one phrase for legends
};

// Every result, in enum order.
std::span<const ResultName> ResultTable();
const ResultName& NameOf(TrialResult result);
std::optional<TrialResult> ParseResultWord(std::string_view word);
std::optional<TrialResult> ParseResultLetter(std::string_view letter);

}  // namespace locklab::checker
