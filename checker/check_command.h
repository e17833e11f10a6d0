// `locklab check`: judge history files from any tool (docs/design.md 3.5).
//
//   locklab check [--model M] [--format jsonl|edn|porcupine-etcd] [--json] FILE...
//
// A native (jsonl) history without --model is judged by checker::JudgeHistory, the judge of
// `locklab run`: the same verdict and counts as the run's results.json.
// Exit codes: 0 valid, 1 invalid, 2 unknown (budget exhausted), 64+ usage or bad input
// (one line naming the file, line and field). Lives in checker/ so the checker stays usable
// without the harness.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cli.h"
#include "checker/history.h"
#include "checker/history_formats.h"
#include "checker/linearizability.h"

namespace locklab::checker {

// Its flag table (base/cli.h): what the parser reads and `--help` prints.
const CommandSpec& CheckCommandSpec();

// `args` are the words after "check". Prints to stdout/stderr, returns the exit code.
int RunCheckCommand(const std::vector<std::string>& args);

// One history file judged exactly as `check` judges it, for another command to show
// (`locklab report FILE`): one history gets one verdict, one reason and one sentence
// whichever command judges it.
struct HistoryCheckOptions {
  std::optional<Model> model;           // --model; none: the format's (a lab history: the judge)
  std::optional<HistoryFormat> format;  // --format; none: from the file
  LinearizabilityOptions lin;           // the budgets
  bool has_time_budget = false;         // lin.time_budget was given (the judge has its own)
  bool keep_lists = false;              // holds and episodes in `json` (what --json prints)
};
struct HistoryCheck {
  int exit = 0;        // 0 safe/valid, 1 violated/invalid, 2 unknown, 65 bad input
  std::string error;   // exit 65: one line naming the file, line and field
  HistoryFormat format = HistoryFormat::kJsonl;
  History history;     // as judged (a lab history judged without --model: sorted by time)
  nlohmann::ordered_json json;  // `check --json`'s object for this file
  std::string text;             // `check`'s lines for this file
};
// A torn last line of a lab history is dropped with one line on stderr, as `check` does.
HistoryCheck CheckHistoryFile(const std::string& path, const HistoryCheckOptions& o);

}  // namespace locklab::checker
