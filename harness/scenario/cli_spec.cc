#include "harness/scenario/cli_spec.h"

#include "base/numbers.h"
#include "checker/check_command.h"
#include "faults/fault_options.h"
#include "harness/scenario/run_fields.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

using K = FlagKind;

FlagSpec Flag(std::string name, std::string value, K kind, std::string help, std::string group) {
  return FlagSpec{std::move(name), {}, std::move(value), kind, std::move(help), std::move(group), ""};
}

const char kExitCodes[] =
    "exit: 0 as expected (safe / valid, or every expectation met), 1 a violation or an unmet\n"
    "expectation, 2 unknown or interrupted, 64 usage, 65 bad data, 69 a server failed, 70 a file\n"
    "could not be written.\n";

// A field of run_fields.h as a flag row: its value word, range and default in the help.
FlagSpec FieldFlag(const RunField& field, const std::string& group) {
  FlagSpec f;
  f.name = std::string(field.flag);
  if (!field.flag_alias.empty()) f.aliases.push_back(std::string(field.flag_alias));
  f.group = group;
  f.help = std::string(field.help);
  if (field.type == RunField::Type::kString) {
    f.kind = field.value_name == "DIR" ? K::kPath : K::kString;
    f.value = std::string(field.value_name);
    return f;
  }
  const RunOptions defaults;
  const faults::FaultOptions fault_defaults;
  std::string range, dflt;
  if (field.IsDuration()) {
    f.kind = K::kDuration;
    f.value = "DURATION";
    range = FormatDuration(Millis(field.lo)) + ".." + FormatDuration(Millis(field.hi));
    if (field.get_integer) dflt = FormatDuration(Millis(field.get_integer(defaults, fault_defaults)));
  } else {
    f.kind = K::kInt;
    f.value = "N";
    if (field.hi != kInt64Max) range = std::to_string(field.lo) + ".." + std::to_string(field.hi);
    if (field.get_integer) dflt = std::to_string(field.get_integer(defaults, fault_defaults));
  }
  std::string paren = range;
  if (!dflt.empty()) paren += (paren.empty() ? "" : ", ") + std::string("default ") + dflt;
  if (!paren.empty()) f.help += " (" + paren + ")";
  return f;
}

CommandSpec MakeRunSpec() {
  CommandSpec s;
  s.name = "run";
  s.summary = "one trial: a lock under faults, judged from its recorded history";
  s.description = "Flags given with a scenario file override it; runs/latest/scenario.toml replays "
                  "a run (same seed, same schedule).";
  s.synopsis = {"locklab run --lock ID --fault ID [FLAG...]",
                "locklab run SCENARIO.toml [FLAG...]"};
  const std::string lock = "lock", workload = "workload",
                    faults = "faults (a schedule flag applies to the most recent --fault)",
                    run = "run", servers = "your own servers", output = "output";
  auto fields = [&](FieldSection section, const std::string& group) {
    for (const RunField& field : RunFields()) {
      if (field.section == section && !field.flag.empty()) s.flags.push_back(FieldFlag(field, group));
    }
  };
  s.flags.push_back(Flag("--lock", "ID", K::kString,
                         "the lock: an id of `locklab list`, mutant:NAME or driver:PATH (a program "
                         "speaking docs/driver-protocol.md) (default set-nx-px-lua)", lock));
  fields(FieldSection::kLock, lock);
  s.flags.push_back(Flag("--knob", "NAME=VALUE", K::kString,
                         "a knob of the lock (`locklab list` has each lock's); repeatable", lock));
  s.flags.push_back(Flag("--driver-arg", "ARG", K::kString,
                         "an argument for the driver:PATH program; repeatable", lock));
  fields(FieldSection::kWorkload, workload);
  s.flags.push_back(Flag("--fault", "ID", K::kString,
                         "a fault (`locklab list`); repeat for several, each with its own schedule "
                         "(default none)", faults));
  fields(FieldSection::kFault, faults);
  s.flags.push_back(Flag("--targets", "I,J", K::kList,
                         "the clients the fault hits, by number (default drawn from the seed, or all)",
                         faults));
  s.flags.push_back(Flag("--fault-nodes", "nI,nJ", K::kList,
                         "the lock nodes the fault hits (default the fault's own)", faults));
  s.flags.push_back(Flag("--param", "NAME=VALUE", K::kString,
                         "a parameter of the fault (`locklab list` has each fault's); repeatable",
                         faults));
  s.flags.push_back(Flag("--pause-mode", "MODE", K::kString, "the same as --param mode=MODE", faults));
  s.flags.push_back(Flag("--pause-point", "POINT", K::kString,
                         "the same as --param point=POINT: the window opens when a client reaches "
                         "the lock's pause point", faults));
  fields(FieldSection::kTop, run);
  s.flags.push_back(Flag("--endpoints", "URL,...", K::kList,
                         "your own Redis servers, redis://host:port,...: the lock nodes first, the "
                         "guarded counter's last (client-side faults only)", servers));
  fields(FieldSection::kTopology, servers);
  s.flags.push_back(Flag("--out", "DIR", K::kPath, "where run directories go (default runs)", output));
  s.flags.push_back(Flag("--no-report", "", K::kSwitch, "skip the HTML report", output));
  s.notes = kExitCodes;
  return s;
}

CommandSpec MakeMatrixSpec() {
  CommandSpec s;
  s.name = "matrix";
  s.summary = "every lock under every fault that applies to it, trials per cell, one table";
  s.description = "Writes matrix.md, matrix.json, junit.xml and the HTML report; --expect and "
                  "--fail-on make it a gate.";
  s.synopsis = {"locklab matrix [--quick|--full] [--locks A,B] [--faults X,Y] [FLAG...]"};
  const std::string cells = "cells", how = "how it runs", out = "expectations and output";
  s.flags = {
      Flag("--quick", "", K::kSwitch, "one trial per cell (the default)", cells),
      Flag("--full", "", K::kSwitch, "3 trials per cell", cells),
      Flag("--trials", "N", K::kInt, "trials per cell (1..1000, default 1; 3 with --full)", cells),
      Flag("--locks", "A,B", K::kList, "the rows: these locks (default every lock of `locklab "
                                       "list` and the example drivers)", cells),
      Flag("--lock", "ID", K::kString, "one more row; repeatable (a driver:PATH may hold commas)",
           cells),
      Flag("--driver-arg", "ARG", K::kString, "an argument for the driver:PATH --lock just before; "
                                              "repeatable", cells),
      Flag("--faults", "X,Y", K::kList, "the columns: these cell scenarios (default every one in "
                                        "--scenarios)", cells),
      Flag("--scenarios", "DIR", K::kPath, "the cell scenarios, one FAULT.toml each (default "
                                           "scenarios/matrix)", cells),
      Flag("--ttl", "DURATION", K::kDuration, "the rows' TTL, every cell's times scaled from its "
                                              "own (1ms..1h, default each cell's, 500ms)", cells),
      Flag("--jobs", "N", K::kInt, "trials at a time (1..64, default 6; 1 with --endpoints)", how),
      Flag("--seed", "N", K::kInt, "the matrix seed every trial's seed derives from (default drawn)",
           how),
      Flag("--shard", "I/N", K::kString, "run the I-th of N slices of the trials (needs --seed); "
                                         "`locklab merge` joins the shards", how),
      Flag("--endpoints", "URL,...", K::kList, "your own Redis servers, redis://host:port,... "
                                               "(client-side faults only, one trial at a time)", how),
      Flag("--endpoint-control", "DIR", K::kPath, "with --endpoints: the nodes' control directory, "
                                                  "so node faults run too", how),
      Flag("--expect", "FILE", K::kPath, "the cells' expected outcomes, globs allowed "
                                         "(scenarios/matrix/expected.toml); an unmet one exits 1 "
                                         "(default none)", out),
      Flag("--write-expect", "FILE", K::kPath, "after the run, write its judged cells (S, V, L; "
                                               "not ?) as an expectation file for --expect "
                                               "(default none)", out),
      Flag("--fail-on", "LIST", K::kList, "violated,stuck,unknown: a cell no --expect entry pins "
                                          "with one of these outcomes fails the run (exit 1); "
                                          "default none", out),
      Flag("--out", "DIR", K::kPath, "where the matrix directory goes (default runs)", out),
      Flag("--no-report", "", K::kSwitch, "skip the HTML report", out),
  };
  s.notes = "exit: 0 every trial ran and no cell regressed, 1 a regressed cell (an unmet "
            "expectation, or\n--fail-on), 2 interrupted, 64+ bad flags or trials that could not "
            "run.\n";
  return s;
}

CommandSpec MakeHuntSpec() {
  CommandSpec s;
  s.name = "hunt";
  s.summary = "search a lock's fault space for a failure, shrink it to a minimal.toml";
  s.description = "`locklab run minimal.toml` replays what it found (docs/hunt.md).";
  s.synopsis = {"locklab hunt --lock ID [--budget DURATION] [FLAG...]"};
  const std::string what = "what to search", how = "how long and how", out = "output";
  s.flags = {
      Flag("--lock", "ID", K::kString, "the lock to search (required; `locklab list`)", what),
      Flag("--baseline", "ID", K::kString, "a reference lock run on the same scenarios: only what "
                                           "fails the lock and not the baseline counts", what),
      Flag("--faults", "A,B", K::kList, "draw only these faults (default every fault that applies)",
           what),
      Flag("--max-faults", "N", K::kInt, "faults at once in a scenario, at most (1..3, default 3)",
           what),
      Flag("--ttl", "DURATION", K::kDuration, "a fixed TTL (1ms..1h; default drawn per scenario: "
                                              "500ms, 750ms or 1250ms)", what),
      Flag("--knob", "NAME=VALUE", K::kString, "a knob of the lock for every scenario; repeatable",
           what),
      Flag("--driver-arg", "ARG", K::kString, "an argument for a driver:PATH lock; repeatable", what),
      Flag("--validity", "honour|ignore", K::kString, "fixed for every scenario (default drawn per "
                                                      "scenario)", what),
      Flag("--liveness", "", K::kSwitch, "a stuck trial is a failure too (default only violated)",
           what),
      Flag("--known", "FILE|DIR", K::kPath, "failures already accounted for: an expectation file "
                                            "(its V and L cells) or scenario files that expect a "
                                            "failure (a corpus); a find they cover is reported, not "
                                            "failed; repeatable", what),
      Flag("--budget", "DURATION", K::kDuration, "the whole hunt's time: search, shrink and "
                                                 "reproduction (1s..24h, default 10m)", how),
      Flag("--shrink-budget", "DURATION", K::kDuration, "shrink time for each find, at most, within "
                                                        "the budget (1s..24h, default 5m)", how),
      Flag("--reruns", "N", K::kInt, "runs of each shrink candidate, at most (1..20, default 4)", how),
      Flag("--keep-searching", "", K::kSwitch, "search on with the budget left after a find is "
                                               "shrunk", how),
      Flag("--shard", "I/N", K::kString, "search every Nth of the seed's draws, from the Ith (needs --seed; `locklab merge` joins the shards)", how),
      Flag("--no-guide", "", K::kSwitch, "fresh draws only: no scenario built on what earlier trials showed (to measure the guide)", how),
      Flag("--no-shrink", "", K::kSwitch, "search only, no shrinking (time-to-find benchmarks)", how),
      Flag("--jobs", "N", K::kInt, "trials at a time (1..64, default 6)", how),
      Flag("--seed", "N", K::kInt, "the hunt's seed (default drawn)", how),
      Flag("--out", "DIR", K::kPath, "where the hunt directory goes (default runs)", out),
      Flag("--corpus", "DIR", K::kPath, "copy each confirmed minimal scenario into DIR", out),
      Flag("--no-report", "", K::kSwitch, "skip the HTML report of the failing run", out),
  };
  s.notes = "exit: 1 a new failure was found, 0 none within the budget (not a proof of safety) or only\n"
            "known ones, 2 undecided: interrupted, or more than a fifth of the trials (or every\n"
            "confirmation of a find) could not run; 64+ bad flags or a lab that could not run any trial.\n";
  return s;
}

CommandSpec MakeReplaySpec() {
  CommandSpec s;
  s.name = "replay";
  s.summary = "rerun saved scenarios (a hunt corpus) and check each one's [expect]";
  s.synopsis = {"locklab replay DIR|FILE... [--out DIR] [--jobs N]"};
  s.flags = {
      Flag("--jobs", "N", K::kInt, "trials at a time, of different scenarios side by side (1..64, "
                                   "default 2)", ""),
      Flag("--out", "DIR", K::kPath, "where the runs go (default runs)", ""),
  };
  s.notes = "exit: 0 every scenario's [expect] met, 1 one not met, 2 one undecided (interrupted, or the lab ran late for the trials that would decide it), 64+\n"
            "bad input before anything ran, 69 a trial the lab could not run, 70 a file not written.\n";
  return s;
}

CommandSpec MakeMergeSpec() {
  CommandSpec s;
  s.name = "merge";
  s.summary = "one matrix from the directories of its --shard runs";
  s.synopsis = {"locklab merge SHARD_DIR... [--out DIR] [--no-report] [--write-expect FILE]"};
  s.flags = {
      Flag("--out", "DIR", K::kPath, "where the merged matrix directory goes (default runs)", ""),
      Flag("--write-expect", "FILE", K::kPath, "write the merged matrix's judged cells as an "
                                               "expectation file (default none)", ""),
      Flag("--no-report", "", K::kSwitch, "skip the HTML report", ""),
  };
  s.notes = "exit: 0 no cell regressed, 1 a regressed cell (by the --expect and --fail-on the shards\n"
            "ran with), 64 directories that are not every shard of one matrix once, 69 a trial that\n"
            "did not run, 70 a file that could not be written.\n";
  return s;
}

CommandSpec MakeReportSpec() {
  CommandSpec s;
  s.name = "report";
  s.summary = "(re)make the HTML report of a run or of a matrix, or make one of any history file";
  s.synopsis = {"locklab report RUN_DIR", "locklab report --matrix MATRIX_DIR",
                "locklab report [--format F] [--model M] [--out FILE.html] HISTORY_FILE"};
  s.description = "A HISTORY_FILE (what `locklab check` reads: lab jsonl, Jepsen/Knossos EDN, "
                  "Porcupine etcd logs) is judged as check judges it, with the same --format and "
                  "--model; its page (FILE.html beside it, or --out) shows that verdict and reason, "
                  "the timeline of its operations and the one no order can place, with its conflicts.";
  s.flags = {Flag("--matrix", "MATRIX_DIR", K::kPath, "a matrix directory instead of a run's", ""),
             Flag("--format", "F", K::kString,
                  "a history file's format: jsonl, edn or porcupine-etcd (default from the file)",
                  "history file"),
             Flag("--model", "M", K::kString,
                  "a history file's linearizability model, as check's (default the format's: a "
                  "lab history gets the run's judge)", "history file"),
             Flag("--out", "FILE.html", K::kPath, "where the page goes (default HISTORY_FILE.html)",
                  "history file")};
  return s;
}

CommandSpec MakeListSpec() {
  CommandSpec s;
  s.name = "list";
  s.summary = "the locks and their knobs, the faults and their parameters, workloads, mutants";
  s.synopsis = {"locklab list [--json]"};
  s.flags = {Flag("--json", "", K::kSwitch, "as JSON", "")};
  return s;
}

CommandSpec MakeClusterSpec() {
  CommandSpec s;
  s.name = "cluster";
  s.summary = "a lab cluster to poke at with redis-cli; the lab's topology as data";
  s.synopsis = {"locklab cluster up [--nodes N]", "locklab cluster down|status",
                "locklab cluster topology [--json]"};
  FlagSpec nodes = Flag("--nodes", "N", K::kInt, "Redis nodes to start (1..15, default 5)", "up");
  nodes.subcommand = "up";
  FlagSpec json = Flag("--json", "", K::kSwitch, "as JSON", "topology");
  json.subcommand = "topology";
  s.flags = {nodes, json};
  s.subcommands = {"up", "down", "status", "topology"};
  return s;
}

CommandSpec MakeVersionSpec() {
  CommandSpec s;
  s.name = "version";
  s.summary = "the version and the git revision it was built from (also --version)";
  s.synopsis = {"locklab version", "locklab --version"};
  return s;
}

CommandSpec MakeCompletionSpec() {
  CommandSpec s;
  s.name = "completion";
  s.summary = "a bash completion script: source <(./locklab completion bash)";
  s.synopsis = {"locklab completion bash"};
  s.subcommands = {"bash"};
  return s;
}

CommandSpec MakeDriverCheckSpec() {
  return {
    "driver-check",
    "check a lock driver against the driver protocol, case by case",
    "Starts the servers the driver's hello asks for and drives the driver through every "
    "request, answer, error, point and timeout case of docs/driver-protocol.md; prints one "
    "line per failed case.",
    {"locklab driver-check --lock driver:PATH [--driver-arg ARG]... [FLAG...]"},
    {{"--lock", {}, "driver:PATH", FlagKind::kString, "the driver to check (required)", ""},
     {"--driver-arg", {}, "ARG", FlagKind::kList, "one argument for the driver (repeatable)", ""},
     {"--ttl", {}, "DURATION", FlagKind::kDuration,
      "the lock TTL the driver is given (LOCKLAB_TTL_MS; default 1s)", ""},
     {"--start-timeout", {}, "DURATION", FlagKind::kDuration,
      "how long a started driver has to say hello (default 20s)", ""},
     {"--answer-grace", {}, "DURATION", FlagKind::kDuration,
      "how late past its timeout_ms an answer may come before it fails (the lab's answer_grace_ms; "
      "default 250ms)", ""},
     {"--verbose", {}, "", FlagKind::kSwitch, "also print the cases that passed", ""},
     {"--trace", {}, "", FlagKind::kSwitch,
      "print every line exchanged on stderr ('> ' from the driver, '< ' to it)", ""}},
    {},
    "Exit: 0 every case passed, 1 a case failed, 64 bad flags or a driver that cannot run, "
    "69 a lab server did not start.",
    false};
}

CommandSpec MakeTestSpec() {
  CommandSpec s;
  s.name = "test";
  s.summary = "(the ./locklab script) set up, build and run every test; ARGS go to ctest";
  s.synopsis = {"./locklab test [CTEST_ARGS...]"};
  return s;
}

}  // namespace

const CommandSpec& RunCommandSpec() {
  static const CommandSpec spec = MakeRunSpec();
  return spec;
}
const CommandSpec& MatrixCommandSpec() {
  static const CommandSpec spec = MakeMatrixSpec();
  return spec;
}
const CommandSpec& HuntCommandSpec() {
  static const CommandSpec spec = MakeHuntSpec();
  return spec;
}
const CommandSpec& ReplayCommandSpec() {
  static const CommandSpec spec = MakeReplaySpec();
  return spec;
}
const CommandSpec& MergeCommandSpec() {
  static const CommandSpec spec = MakeMergeSpec();
  return spec;
}
const CommandSpec& ReportCommandSpec() {
  static const CommandSpec spec = MakeReportSpec();
  return spec;
}
const CommandSpec& ListCommandSpec() {
  static const CommandSpec spec = MakeListSpec();
  return spec;
}
const CommandSpec& ClusterCommandSpec() {
  static const CommandSpec spec = MakeClusterSpec();
  return spec;
}
const CommandSpec& VersionCommandSpec() {
  static const CommandSpec spec = MakeVersionSpec();
  return spec;
}
const CommandSpec& CompletionCommandSpec() {
  static const CommandSpec spec = MakeCompletionSpec();
  return spec;
}
const CommandSpec& DriverCheckCommandSpec() {
  static const CommandSpec spec = MakeDriverCheckSpec();
  return spec;
}

const std::vector<const CommandSpec*>& AllCommandSpecs() {
  static const CommandSpec test = MakeTestSpec();
  static const std::vector<const CommandSpec*> all = {
      &RunCommandSpec(),     &MatrixCommandSpec(),     &HuntCommandSpec(),
      &ReplayCommandSpec(),  &MergeCommandSpec(),      &checker::CheckCommandSpec(),
      &DriverCheckCommandSpec(),
      &ReportCommandSpec(),  &ListCommandSpec(),       &ClusterCommandSpec(),
      &VersionCommandSpec(), &CompletionCommandSpec(), &test};
  return all;
}

const CommandSpec* FindCommandSpec(const std::string& name) {
  for (const CommandSpec* c : AllCommandSpecs()) {
    if (c->name == name) return c;
  }
  return nullptr;
}

}  // namespace locklab::harness
