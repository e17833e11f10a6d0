// Reports: the harness hands a run or matrix directory to the reports/ package (Debian's
// python3-matplotlib through /usr/bin/python3, or $LOCKLAB_PYTHON; the package reads run
// files only). The package judges each run's history again with this very binary
// (`locklab check --json`, LOCKLAB_BINARY), so a report never shows a verdict or a count
// results.json claims and the history does not (reports/runfiles.py).
//
// Exit codes (docs/design.md 3.5), the same for `report` and for run, matrix, merge and hunt when
// they make a report: 0 written; 64 usage; 65 a run file is malformed; 69 the interpreter
// is missing, not executable or not a Python with matplotlib (one line naming it), or the
// judge failed; 70 a report file could not be written (permission, read-only or full file
// system). Every failure is one line on stderr; library warnings never reach it.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

// Runs `PYTHON -m reports ARGS...` (PYTHONPATH = the source dir, PYTHONSAFEPATH so a
// `reports` folder in the caller's directory is never run instead, LOCKLAB_BINARY = this
// executable) with the caller's stdout; returns an exit code above. The package's own exit
// codes (0, 64, 65, 69, 70, 130 interrupted) pass through with its one line; any other end
// (an interpreter that is not Python, a crash, a signal) is 69 with one line naming
// LOCKLAB_PYTHON and how it ended.
int RunReportScript(const std::vector<std::string>& args);

// A command's exit code once its report was made with exit `report_exit`: a report that
// failed for the machine (69, 70) or its files (65) outranks the verdict (WorseRunExit);
// 0 and an interrupt (130) leave it as it was.
int WithReportExit(int command_exit, int report_exit);

}  // namespace locklab::harness
