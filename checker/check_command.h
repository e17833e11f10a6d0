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

#include <string>
#include <vector>

#include "base/cli.h"

namespace locklab::checker {

// Its flag table (base/cli.h): what the parser reads and `--help` prints.
const CommandSpec& CheckCommandSpec();

// `args` are the words after "check". Prints to stdout/stderr, returns the exit code.
int RunCheckCommand(const std::vector<std::string>& args);

}  // namespace locklab::checker
