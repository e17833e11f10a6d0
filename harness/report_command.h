// Reports: the harness hands a run or matrix directory to reports/report.py (Debian's
// python3-matplotlib through /usr/bin/python3; the script reads run files only).
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

// Runs `/usr/bin/python3 <source>/reports/report.py ARGS...` with the caller's stdout and
// stderr; returns its exit code (70 when it cannot be started).
int RunReportScript(const std::vector<std::string>& args);

// `locklab report RUN_DIR | --matrix MATRIX_DIR`.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
