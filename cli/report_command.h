// `locklab report RUN_DIR | --matrix MATRIX_DIR`: the command line of the report script
// (trial/report_script.h), with its exit codes.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunReportCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
