#include "checker/check_command.h"

#include <iostream>

#include "checker/history.h"
#include "checker/mutual_exclusion.h"

namespace locklab::checker {

// v0: mutual-exclusion, resource and liveness counts over native histories.
int RunCheckCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << "locklab check: usage: locklab check [--json] FILE...\n";
    return 64;
  }
  int worst = 0;
  for (const auto& path : args) {
    if (path == "--json") continue;
    if (!path.empty() && path[0] == '-') {
      std::cerr << "locklab check: unknown flag '" << path << "'\n";
      return 64;
    }
    History h;
    Status s = ReadJsonlHistory(path, &h);
    if (!s.ok()) {
      std::cerr << "locklab check: " << s.message() << "\n";
      return 65;
    }
    auto j = CheckLockHistory(h, LockCheckOptions());
    std::cout << j.dump(2) << "\n";
    if (j["violated"].get<bool>()) worst = std::max(worst, 1);
  }
  return worst;
}

}  // namespace locklab::checker
