// locklab-check: `locklab check` without the harness (same exit codes, same output).
#include <string>
#include <vector>

#include "checker/check_command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return locklab::checker::RunCheckCommand(args);
}
