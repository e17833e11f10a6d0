// Reports: the harness hands a run or matrix directory to the reports/ package (Debian's
// python3-matplotlib through /usr/bin/python3; the package reads run files only).
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

// Runs `/usr/bin/python3 -m reports ARGS...` (PYTHONPATH = the source dir, PYTHONSAFEPATH so
// a `reports` folder in the caller's directory is never run instead) with the caller's stdout
// and stderr; returns its exit code (70 when it cannot be started).
int RunReportScript(const std::vector<std::string>& args);

// `locklab report RUN_DIR | --matrix MATRIX_DIR`.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
