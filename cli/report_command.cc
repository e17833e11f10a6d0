#include "cli/report_command.h"

#include <iostream>
#include <string>
#include <vector>

#include "base/argv.h"
#include "scenario/cli_spec.h"
#include "trial/report_script.h"

namespace locklab::harness {

int RunReportCommand(const std::vector<std::string>& args) {
  // One RUN_DIR or one --matrix MATRIX_DIR, handed to the script as "--matrix DIR".
  std::vector<std::string> script_args;
  ArgvReader r(ReportCommandSpec(), args);
  while (r.Next()) {
    Status s;
    std::string dir;
    if (!r.AtFlag() && script_args.empty()) {
      script_args = {r.word()};
    } else if (r.Is("--matrix") && (s = r.Value(&dir)).ok() && script_args.empty()) {
      script_args = {"--matrix", dir};
    } else if (s.ok()) {
      // A second directory, or an unknown flag.
      s = r.AtFlag() && !r.Is("--matrix") ? r.Unknown()
                                          : Status::Usage("report: one RUN_DIR or one --matrix "
                                                          "MATRIX_DIR, got '" + r.word() + "' too");
    }
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return 64;
    }
  }
  if (script_args.empty()) {
    std::cerr << "locklab report: usage: locklab report RUN_DIR | --matrix MATRIX_DIR\n";
    return 64;
  }
  return RunReportScript(script_args);
}

}  // namespace locklab::harness
