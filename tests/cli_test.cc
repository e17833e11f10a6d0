// The command line against its flag tables (harness/scenario/cli_spec.h), through the real binary.
//
// Accepted ⊆ listed holds by construction: every parser reads its words with
// ArgvReader(spec, ...), whose Is() is false for a flag its table lacks (base/tests/
// argv_test.cc), so the parser's last branch refuses it. What is left to check:
//   - every listed flag is read by its parser: `locklab CMD FLAG [x] --zzz-not-a-flag` fails
//     on the value or on the sentinel, never with "unknown flag FLAG" (nothing runs: the
//     sentinel is refused before anything starts);
//   - every flag literal a parser source tests (Is("--x")) is in its table, and every
//     parser builds its reader from its table;
//   - --help prints the command's own usage (exit 0), `locklab --help` the command list,
//     --version a revision; every time flag reads a duration; the bash completion works.
#include <stdio.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/cli.h"
#include "base/version.h"
#include "harness/scenario/cli_spec.h"
#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

using harness::AllCommandSpecs;

constexpr char kSentinel[] = "--zzz-not-a-flag";

class CliTest : public TempDirTest {
 protected:
  CliTest() : TempDirTest("locklab-cli") {}

  // `locklab CMD [SUB] FLAG [VALUE] --zzz-not-a-flag`.
  Invocation Probe(const CommandSpec& c, const FlagSpec& f, const std::string& spelling,
                   const std::string& value) {
    std::vector<std::string> args = {c.name};
    if (!f.subcommand.empty()) args.push_back(f.subcommand);
    args.push_back(spelling);
    if (f.kind != FlagKind::kSwitch) args.push_back(value);
    args.push_back(kSentinel);
    return RunLocklab(args, dir_, Millis(30000));
  }

  static std::vector<std::string> Spellings(const FlagSpec& f) {
    std::vector<std::string> all = {f.name};
    all.insert(all.end(), f.aliases.begin(), f.aliases.end());
    return all;
  }
};

TEST_F(CliTest, EveryListedFlagIsReadByItsParser) {
  int probed = 0;
  for (const CommandSpec* c : AllCommandSpecs()) {
    for (const FlagSpec& f : c->flags) {
      for (const std::string& spelling : Spellings(f)) {
        Invocation inv = Probe(*c, f, spelling, "x");
        ++probed;
        const std::string where = c->name + " " + spelling + ": " + inv.output;
        EXPECT_EQ(inv.exit_code, 64) << where;
        EXPECT_EQ(inv.output.find("unknown flag " + spelling + "\n"), std::string::npos) << where;
        // Refused for its value (the message names the flag) or read, and then the sentinel.
        bool read = inv.output.find(std::string("unknown flag ") + kSentinel) != std::string::npos;
        bool value_refused = inv.output.find("flag " + spelling) != std::string::npos;
        EXPECT_TRUE(read || value_refused) << where;
      }
    }
  }
  EXPECT_GE(probed, 80) << "every command's flags";
}

// One duration syntax for every time flag: "2s" is read, "1.5s" refused in a duration's words.
TEST_F(CliTest, EveryTimeFlagReadsADuration) {
  int durations = 0;
  for (const CommandSpec* c : AllCommandSpecs()) {
    for (const FlagSpec& f : c->flags) {
      if (f.kind != FlagKind::kDuration) continue;
      ++durations;
      EXPECT_NE(f.help.find("default"), std::string::npos) << c->name << " " << f.name << ": " << f.help;
      for (const std::string& spelling : Spellings(f)) {
        Invocation ok = Probe(*c, f, spelling, "2s");
        EXPECT_NE(ok.output.find(std::string("unknown flag ") + kSentinel), std::string::npos)
            << c->name << " " << spelling << " 2s: " << ok.output;
        Invocation bad = Probe(*c, f, spelling, "1.5s");
        EXPECT_EQ(bad.exit_code, 64) << bad.output;
        EXPECT_NE(bad.output.find("flag " + spelling + ": expected whole units, got '1.5s'; write 1500ms?"),
                  std::string::npos)
            << c->name << " " << spelling << ": " << bad.output;
      }
    }
  }
  EXPECT_GE(durations, 15);
}

// The one-line error contract: an unknown flag is one line naming it (not the usage after
// it), exit 64, for every command and every command's sub-command.
TEST_F(CliTest, AnUnknownFlagIsOneLineNamingIt) {
  for (const CommandSpec* c : AllCommandSpecs()) {
    if (c->name == "test") continue;  // the entry script's
    std::vector<std::vector<std::string>> words;
    if (c->subcommands.empty()) words.push_back({c->name});
    for (const std::string& sub : c->subcommands) words.push_back({c->name, sub});
    for (std::vector<std::string> args : words) {
      args.push_back(kSentinel);
      Invocation inv = RunLocklab(args, dir_);
      std::string command;
      for (size_t i = 0; i + 1 < args.size(); ++i) command += (i ? " " : "") + args[i];
      EXPECT_EQ(inv.exit_code, 64) << command << ": " << inv.output;
      EXPECT_EQ(Lines(inv.output).size(), 1u) << command << ": " << inv.output;
      EXPECT_NE(inv.output.find(kSentinel), std::string::npos) << command << ": " << inv.output;
    }
  }
  Invocation check = RunLocklab({"check"}, dir_);
  EXPECT_EQ(check.exit_code, 64);
  EXPECT_EQ(check.output, "locklab check: no FILE given (locklab check --help)\n");
}

// A flag's empty list is refused, not read as no flag: `--locks "$LOCKS"` with LOCKS unset
// would otherwise run every lock's row. A --scenarios directory that is not there is the
// flag's error (64), said once. Nothing here runs a trial.
TEST_F(CliTest, MatrixRefusesEmptyValuesDuplicatesAndAMissingScenarioDirectory) {
  // --faults names no column, so that nothing runs even if --locks "" were the default.
  Invocation locks = RunLocklab({"matrix", "--locks", "", "--faults", "no-such-column"}, dir_);
  EXPECT_EQ(locks.exit_code, 64);
  EXPECT_EQ(locks.output, "locklab matrix: flag --locks: expected lock ids, comma-separated; got none\n");
  Invocation faults = RunLocklab({"matrix", "--locks", "setnx", "--faults", ",", "--scenarios", dir_ + "/none"}, dir_);
  EXPECT_EQ(faults.exit_code, 64);
  EXPECT_EQ(faults.output, "locklab matrix: flag --faults: expected fault ids, comma-separated; got none\n");
  // A path flag's empty value (`--expect "$EXPECT"`, EXPECT unset) is refused, not read as
  // no flag (which turns the gate off).
  for (const char* flag : {"--expect", "--write-expect", "--out", "--scenarios", "--endpoint-control"}) {
    Invocation empty = RunLocklab({"matrix", flag, "", "--faults", "no-such-column"}, dir_);
    EXPECT_EQ(empty.exit_code, 64) << flag;
    EXPECT_EQ(empty.output, std::string("locklab matrix: flag ") + flag + ": expected a path, got ''\n");
  }
  for (const char* flag : {"--write-expect", "--out"}) {
    Invocation empty = RunLocklab({"merge", dir_ + "/no-shard", flag, ""}, dir_);
    EXPECT_EQ(empty.output, std::string("locklab merge: flag ") + flag + ": expected a path, got ''\n");
  }
  // A row or a column twice: two cells of one name.
  Invocation twice =
      RunLocklab({"matrix", "--locks", "setnx,redlock", "--lock", "setnx", "--faults", "no-such-column"}, dir_);
  EXPECT_EQ(twice.exit_code, 64);
  EXPECT_EQ(twice.output, "locklab matrix: flag --locks/--lock: 'setnx' given twice\n");
  twice = RunLocklab({"matrix", "--locks", "setnx", "--faults", "none,none", "--scenarios", dir_ + "/none"}, dir_);
  EXPECT_EQ(twice.output, "locklab matrix: flag --faults: 'none' given twice\n");
  // A flag that would be ignored is refused: --endpoint-control without --endpoints.
  Invocation control = RunLocklab({"matrix", "--endpoint-control", dir_, "--faults", "no-such-column"}, dir_);
  EXPECT_EQ(control.exit_code, 64);
  EXPECT_EQ(control.output, "locklab matrix: flag --endpoint-control: needs --endpoints\n");
  Invocation scenarios = RunLocklab({"matrix", "--locks", "setnx", "--scenarios", dir_ + "/none"}, dir_);
  EXPECT_EQ(scenarios.exit_code, 64);
  EXPECT_EQ(scenarios.output, "locklab matrix: flag --scenarios: cannot read " + dir_ +
                                  "/none: No such file or directory\n");
}

TEST_F(CliTest, OldSecondsSpellingsSayWhatTheyNowMean) {
  Invocation run = RunLocklab({"run", "--duration", "6"}, dir_);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_EQ(run.output,
            "locklab run: flag --duration: 6 means 6 ms (a bare number is milliseconds), below the "
            "minimum 100ms; write 6s?\n");
  Invocation hunt = RunLocklab({"hunt", "--lock", "setnx", "--budget", "120"}, dir_);
  EXPECT_EQ(hunt.exit_code, 64);
  EXPECT_EQ(hunt.output,
            "locklab hunt: flag --budget: 120 means 120 ms (a bare number is milliseconds), below "
            "the minimum 1s; write 120s?\n");
}

// One lease bound (locks/lease_ttl.h) for every command that takes a TTL: the same value is
// refused by each with the same words.
TEST_F(CliTest, EveryCommandRefusesTheSameTtlTheSameWay) {
  const std::vector<std::vector<std::string>> commands = {
      {"run", "--lock", "set-nx-px-lua"},
      {"matrix", "--lock", "set-nx-px-lua"},
      {"hunt", "--lock", "set-nx-px-lua"},
      {"driver-check", "--lock", "driver:examples/drivers/redis_py_lock.py"}};
  for (const char* ttl : {"2h", "0"}) {
    std::string expected_rest;
    for (auto args : commands) {
      const std::string command = args[0];
      args.push_back("--ttl");
      args.push_back(ttl);
      Invocation inv = RunLocklab(args, dir_);
      EXPECT_EQ(inv.exit_code, 64) << command << " --ttl " << ttl << ": " << inv.output;
      const std::string prefix = "locklab " + command + ": flag --ttl: ";
      ASSERT_EQ(inv.output.rfind(prefix, 0), 0u) << inv.output;
      const std::string rest = inv.output.substr(prefix.size());
      if (expected_rest.empty()) expected_rest = rest;
      EXPECT_EQ(rest, expected_rest) << command << " --ttl " << ttl;
    }
  }
}

// `check`'s text says its counts in words, rounded: no number with more than three decimals
// (the JSON of --json keeps every digit).
TEST_F(CliTest, CheckTextRoundsItsNumbers) {
  Invocation inv = RunLocklab({"check", std::string(LOCKLAB_SOURCE_DIR) +
                                            "/reports/tests/fixtures/violated-client-pause/history.jsonl"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 1) << inv.output;
  EXPECT_NE(inv.output.find("  mutual exclusion: 52 holds, 16 overlapping pairs in 16 episodes, 1515.9 ms of overlap\n"),
            std::string::npos) << inv.output;
  EXPECT_NE(inv.output.find("  resource: 52 acknowledged writes, 2 lost updates"), std::string::npos) << inv.output;
  EXPECT_FALSE(std::regex_search(inv.output, std::regex("[0-9][.][0-9]{4,}"))) << inv.output;
}

// The source half: a flag a parser tests is in its table (else it is dead code that users
// cannot reach), and every parser reads through its table.
TEST_F(CliTest, EveryFlagAParserTestsIsInItsTable) {
  const std::map<std::string, std::string> parser_of = {
      {"harness/scenario/run_flags.cc", "run"},      {"harness/matrix/matrix.cc", "matrix"},
      {"harness/hunt/hunt.cc", "hunt"},                {"harness/cli/replay_command.cc", "replay"},
      {"harness/matrix/matrix_merge.cc", "merge"},     {"checker/check_command.cc", "check"},
      {"harness/cli/report_command.cc", "report"},     {"harness/cli/cluster_command.cc", "cluster"},
      {"harness/cli/hunt_merge.cc", "merge"},
      {"harness/cli/main.cc", "list"},
  };
  const std::regex is_flag(R"re(\bIs\("(-[-a-z0-9]+)"\))re");
  const std::regex nameless_reader(R"re(\bArgvReader\s+\w+\s*\(\s*")re");
  for (const auto& [file, command] : parser_of) {
    std::string text = ReadAll(std::string(LOCKLAB_SOURCE_DIR) + "/" + file);
    ASSERT_FALSE(text.empty()) << file;
    const CommandSpec* spec = harness::FindCommandSpec(command);
    ASSERT_NE(spec, nullptr) << command;
    int seen = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), is_flag), end; it != end; ++it) {
      ++seen;
      EXPECT_NE(spec->Find((*it)[1].str()), nullptr)
          << file << " tests " << (*it)[1] << ", which `locklab " << command << " --help` does not list";
    }
    EXPECT_GT(seen, 0) << file;
    EXPECT_FALSE(std::regex_search(text, nameless_reader))
        << file << ": an ArgvReader without its command's table";
  }
}

TEST_F(CliTest, HelpPrintsTheCommandsOwnUsage) {
  for (const CommandSpec* c : AllCommandSpecs()) {
    for (const char* help : {"--help", "-h"}) {
      Invocation inv = RunLocklab({c->name, help}, dir_);
      EXPECT_EQ(inv.exit_code, 0) << c->name << " " << help << ": " << inv.output;
      EXPECT_EQ(inv.output, HelpText(*c)) << c->name;
      EXPECT_EQ(inv.output.rfind("usage: " + c->synopsis.at(0) + "\n", 0), 0u) << inv.output;
      EXPECT_EQ(inv.output.find("commands:"), std::string::npos) << "not the global usage";
      for (const FlagSpec& f : c->flags) {
        EXPECT_NE(inv.output.find(f.name), std::string::npos) << c->name << " " << f.name;
      }
    }
  }
  // After other words too, and `locklab help CMD`.
  Invocation late = RunLocklab({"run", "--lock", "setnx", "--help"}, dir_);
  EXPECT_EQ(late.exit_code, 0);
  EXPECT_EQ(late.output, HelpText(harness::RunCommandSpec()));
  Invocation help_run = RunLocklab({"help", "hunt"}, dir_);
  EXPECT_EQ(help_run.output, HelpText(harness::HuntCommandSpec()));
}

// A command that can fail a build says how in its --help: its exit codes.
TEST_F(CliTest, EveryGateCommandsHelpGivesItsExitCodes) {
  for (const char* name : {"run", "matrix", "merge", "hunt", "replay", "check"}) {
    const CommandSpec* c = harness::FindCommandSpec(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->notes.find("exit: "), 0u) << name << ": " << c->notes;
    EXPECT_NE(c->notes.find(" 0 "), std::string::npos) << name << ": " << c->notes;
    EXPECT_NE(c->notes.find(" 1 "), std::string::npos) << name << ": " << c->notes;
  }
}

TEST_F(CliTest, RunHelpListsTheFieldTableAndTheHandReadFlags) {
  std::string help = HelpText(harness::RunCommandSpec());
  for (const char* flag : {"--param", "--knob", "--validity", "--targets", "--fault-nodes", "--keys",
                           "--duration, --duration-ms DURATION", "--pause, --fault-duration DURATION",
                           "--lock", "--driver-arg", "--fault ", "--out", "--endpoints", "--pause-mode",
                           "--pause-point", "--no-report", "--endpoint-control", "--renew-every"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag << "\n" << help;
  }
  // Defaults come from RunOptions: a default run's TTL is 1 s, its duration 10 s.
  EXPECT_NE(help.find("(1ms..1h, default 1s)"), std::string::npos) << help;
  EXPECT_NE(help.find("(100ms..24h, default 10s)"), std::string::npos) << help;
}

TEST_F(CliTest, GlobalHelpListsEveryCommandOnOneLine) {
  Invocation inv = RunLocklab({"--help"}, dir_);
  EXPECT_EQ(inv.exit_code, 0);
  for (const CommandSpec* c : AllCommandSpecs()) {
    if (c->hidden) continue;
    EXPECT_NE(inv.output.find("\n  " + c->name + " "), std::string::npos) << c->name << "\n" << inv.output;
  }
  EXPECT_NE(inv.output.find("locklab <command> --help for its flags"), std::string::npos);
  // One line each: the command list is as long as the visible commands.
  std::string list = inv.output.substr(inv.output.find("commands:\n") + 10);
  list = list.substr(0, list.find("\n\n") + 1);
  int visible = 0;
  for (const CommandSpec* c : AllCommandSpecs()) visible += c->hidden ? 0 : 1;
  EXPECT_EQ(static_cast<int>(Lines(list).size()), visible) << list;
  Invocation none = RunLocklab({}, dir_);
  EXPECT_EQ(none.exit_code, 64);
  Invocation unknown = RunLocklab({"frobnicate"}, dir_);
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_EQ(unknown.output, "locklab: unknown command 'frobnicate' (locklab --help lists them)\n");
}

TEST_F(CliTest, VersionNamesTheRevision) {
  Invocation inv = RunLocklab({"--version"}, dir_);
  EXPECT_EQ(inv.exit_code, 0);
  EXPECT_EQ(inv.output, LocklabVersionLine() + "\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(inv.output, m,
                               std::regex(R"(locklab \d+\.\d+\.\d+ \(git ([0-9a-f]{7,}(-dirty)?|unknown)\)\n)")))
      << inv.output;
  // Built from a git checkout: the hash, not "unknown".
  if (access((std::string(LOCKLAB_SOURCE_DIR) + "/.git").c_str(), F_OK) == 0) {
    EXPECT_NE(m[1].str(), "unknown") << inv.output;
  }
  EXPECT_EQ(RunLocklab({"version"}, dir_).output, inv.output);
}

// The completion script is bash, and completes commands, flags and sub-commands.
TEST_F(CliTest, BashCompletionCompletesFromTheTables) {
  auto complete = [&](const std::string& words, int cword) {
    std::string script = dir_ + "/complete.sh";
    std::ofstream(script) << "source <(" << LOCKLAB_BINARY << " completion bash) || exit 3\n"
                          << "COMP_WORDS=(" << words << "); COMP_CWORD=" << cword << "\n"
                          << "_locklab; printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    std::string out;
    FILE* p = popen(("bash " + script + " 2>&1").c_str(), "r");
    char buf[4096];
    for (size_t n; p && (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    if (p) pclose(p);
    std::vector<std::string> lines = Lines(out);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_EQ(complete("locklab r", 1), (std::vector<std::string>{"replay", "report", "run"}));
  EXPECT_EQ(complete("locklab run --tt", 2), (std::vector<std::string>{"--ttl"}));
  EXPECT_EQ(complete("locklab hunt --bu", 2), (std::vector<std::string>{"--budget"}));
  EXPECT_EQ(complete("locklab cluster u", 2), (std::vector<std::string>{"up"}));
  EXPECT_EQ(complete("locklab cluster up --n", 3), (std::vector<std::string>{"--nodes"}));
  EXPECT_EQ(complete("locklab run --ttl ''", 3), std::vector<std::string>{}) << "a value: nothing";
  Invocation inv = RunLocklab({"completion", "bash"}, dir_);
  EXPECT_EQ(inv.exit_code, 0);
  EXPECT_EQ(RunLocklab({"completion", "zsh"}, dir_).exit_code, 64);
  EXPECT_EQ(RunLocklab({"completion", "bash", "--zsh"}, dir_).output,
            "locklab completion: expected `locklab completion bash`, got '--zsh'\n");
}

}  // namespace
}  // namespace locklab::testing
