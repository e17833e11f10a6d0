// The flag table of every `locklab` command (base/cli.h CommandSpec): what each command's
// parser reads with ArgvReader(spec, args), what `locklab CMD --help` prints, what
// `locklab completion bash` completes. A parser can only see the flags of its table
// (ArgvReader refuses any other as "CMD: unknown flag --x", exit 64), so the help lists every
// flag a command accepts; tests/cli_test.cc checks the other way, that each listed flag is
// read by its parser.
//
// `run`'s table is made from the field table (run_fields.h: ranges and defaults from
// RunOptions, so they cannot drift) plus the flags run_flags.cc reads by hand. The time
// limits of matrix and hunt are here, beside the help that states them.
//
// Specs are built once on first use and never change; thread-safe after that.
#pragma once

#include <chrono>
#include <vector>

#include "base/cli.h"

namespace locklab::harness {

// hunt --budget and --shrink-budget: at least a second (a trial takes longer; a bare 120
// would be 120 ms), at most a day.
inline constexpr std::chrono::milliseconds kMinHuntBudget{1000};
inline constexpr std::chrono::milliseconds kMaxHuntBudget{24 * 3600 * 1000};

const CommandSpec& RunCommandSpec();
const CommandSpec& MatrixCommandSpec();
const CommandSpec& HuntCommandSpec();
const CommandSpec& ReplayCommandSpec();
const CommandSpec& MergeCommandSpec();
const CommandSpec& ReportCommandSpec();
const CommandSpec& ListCommandSpec();
const CommandSpec& ClusterCommandSpec();
const CommandSpec& VersionCommandSpec();
const CommandSpec& CompletionCommandSpec();
const CommandSpec& DriverCheckCommandSpec();

// Every command, in the order `locklab --help` lists them (check's table is
// checker/check_command.h's; `test` is the entry script's, listed for completeness).
const std::vector<const CommandSpec*>& AllCommandSpecs();
// The command named `name`; nullptr when there is none.
const CommandSpec* FindCommandSpec(const std::string& name);

}  // namespace locklab::harness
