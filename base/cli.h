// The command line as data: each command's flags in one table (CommandSpec), read by its
// parser (ArgvReader, base/argv.h, refuses any flag not in the table) and printed by its
// `--help` and the shell completion, so a flag cannot be accepted without being listed.
//
// A FlagSpec names the flag, its other spellings, the word shown for its value ("ID",
// "DURATION", "N"; empty for a switch), its kind and a help line that states the unit and
// the default. Every kDuration flag reads base/numbers.h ParseDuration ("500ms", "6s",
// "2m", "1h"; a bare number is milliseconds); the help says so once, in its footer.
//
// Specs are built once and never change; the functions here are pure and thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

// What a flag's value is: it decides nothing in the parser (the parser reads the value
// its own way), but the help and the completion show it.
enum class FlagKind { kSwitch, kInt, kDuration, kString, kList, kPath };

struct FlagSpec {
  std::string name;                  // "--ttl"
  std::vector<std::string> aliases;  // other spellings of the same flag ("--duration-ms")
  std::string value;                 // shown after the name: "MS", "ID", "N"; empty: a switch
  FlagKind kind = FlagKind::kSwitch;
  std::string help;                  // unit and default included: "... (default 1s)"
  std::string group;                 // the heading it is listed under in --help
  // For a command with sub-commands (cluster): the sub-command the flag follows ("up").
  std::string subcommand;
};

struct CommandSpec {
  std::string name;                    // "run", or "cluster"
  std::string summary;                 // one line (at most 80 characters), for `locklab --help`
  std::string description;             // more, after the summary in its --help; may be empty
  std::vector<std::string> synopsis;   // "locklab run SCENARIO.toml [FLAG...]", ...
  std::vector<FlagSpec> flags;
  // Its sub-commands ("up", "down"), for the completion; a flag names the one it follows.
  std::vector<std::string> subcommands;
  std::string notes;                   // printed after the flags (exit codes, ...)
  bool hidden = false;                 // internal: not in the command list or completion

  // The flag spelt `flag` (its name or an alias); nullptr when the table has none.
  const FlagSpec* Find(std::string_view flag) const;
};

// `locklab CMD --help`: the synopsis, the summary, every flag by group with its value,
// help, aliases; then the duration rule (when a flag takes one) and the notes.
std::string HelpText(const CommandSpec& spec);

// `locklab --help`: one line per visible command, then how to get a command's flags.
std::string CommandListText(std::span<const CommandSpec* const> commands);

// `locklab completion bash`: a script defining and registering `_locklab`, which completes
// the command names, then the flags of the command (of its sub-command for one that has
// them), and files after a flag whose value is a path.
std::string BashCompletion(std::span<const CommandSpec* const> commands);

}  // namespace locklab
