// `locklab report RUN_DIR | --matrix MATRIX_DIR | HISTORY_FILE`: the command line of the
// report script (harness/trial/report_script.h), with its exit codes.
//
// A history file (any that `locklab check` reads: a lab jsonl, Knossos/Jepsen EDN, a
// Porcupine etcd log; --format and --model as check's) is judged here, in this process, by
// check's own code (checker/check_command.h CheckHistoryFile): the page shows the verdict,
// its reason and the sentence about the operation no order can place exactly as `check`
// prints them. The script gets the judgement and the events as files in a scratch directory
// and writes one self-contained page beside the history (FILE.html) or at --out.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunReportCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
