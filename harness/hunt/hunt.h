// `locklab hunt`: search one lock's fault space for a failure, shrink the first find to a
// minimal scenario that replays it, and rerun that 10 times for its reproduction rate; with
// --baseline, only what fails the lock and not the baseline counts.
//
//   locklab hunt --lock L [--budget 10m] [--baseline LOCK] ...   (flags: locklab hunt --help)
//
// The rules (budget and admission, search, guide, shrink, shards, outputs, exit codes) are
// docs/design.md 3.7; hunt_space.h, hunt_guide.h, hunt_shrink.h and hunt_story.h are its parts.
// Exit codes: 1 a new failure, 0 none within the budget (not a proof of safety), 2 undecided,
// 64+ bad flags, 69 not one trial could run.
// Thread safety: runs on the main thread and reaps any child of the process.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunHuntCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
