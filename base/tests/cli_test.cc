// The help and the completion are made from the flag table (base/cli.h).
#include "base/cli.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

CommandSpec Spec() {
  CommandSpec spec;
  spec.name = "demo";
  spec.summary = "a demo command";
  spec.synopsis = {"locklab demo FILE [FLAG...]", "locklab demo --all"};
  spec.flags = {
      {"--ttl", {}, "DURATION", FlagKind::kDuration, "key lifetime (default 1s)", "lock"},
      {"--pause", {"--fault-duration"}, "DURATION", FlagKind::kDuration, "pause length", "faults"},
      {"--out", {}, "DIR", FlagKind::kPath, "where runs go", "output"},
      {"--json", {}, "", FlagKind::kSwitch, "print JSON", "output"},
  };
  spec.notes = "exit: 0 fine";
  return spec;
}

TEST(CommandSpecTest, HelpListsEveryFlagByGroupWithSynopsisAndDurationRule) {
  std::string help = HelpText(Spec());
  EXPECT_EQ(help.rfind("usage: locklab demo FILE [FLAG...]\n       locklab demo --all\n", 0), 0u) << help;
  for (const char* s : {"lock:\n  --ttl DURATION", "key lifetime (default 1s)", "faults:\n",
                        "--pause, --fault-duration DURATION", "output:\n  --out DIR", "--json ",
                        "-h, --help", "a bare number is milliseconds", "exit: 0 fine"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s << "\n" << help;
  }
  EXPECT_LT(help.find("lock:"), help.find("faults:"));
  EXPECT_LT(help.find("faults:"), help.find("output:"));
}

TEST(CommandSpecTest, HelpWrapsLongLinesUnderTheHelpColumn) {
  CommandSpec spec = Spec();
  // Appended, not `a + " " + b`: gcc 12 warns falsely (-Warray-bounds) on that chain at -O1.
  std::string long_help(30, 'a');
  long_help.append(" ").append(30, 'b').append(" ").append(30, 'c');
  spec.flags[0].help = long_help;
  std::string help = HelpText(spec);
  size_t at = help.find(std::string(30, 'c'));
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(help.substr(at - 31, 31), "\n" + std::string(30, ' ')) << help;
}

TEST(CommandSpecTest, CommandListHasOneLineEachAndSkipsHidden) {
  CommandSpec a = Spec(), b = Spec();
  b.name = "secret";
  b.hidden = true;
  const CommandSpec* all[] = {&a, &b};
  std::string text = CommandListText(all);
  EXPECT_NE(text.find("  demo  a demo command\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("secret"), std::string::npos) << text;
  EXPECT_NE(text.find("locklab <command> --help for its flags"), std::string::npos) << text;
}

TEST(CommandSpecTest, CompletionNamesCommandsFlagsAndSubcommands) {
  CommandSpec a = Spec(), c;
  c.name = "cluster";
  c.flags = {{"--nodes", {}, "N", FlagKind::kInt, "nodes", "", "up"},
             {"--json", {}, "", FlagKind::kSwitch, "json", "", "topology"}};
  c.subcommands = {"up", "down", "topology"};
  const CommandSpec* all[] = {&a, &c};
  std::string script = BashCompletion(all);
  for (const char* s : {"compgen -W \"demo cluster --help --version\"",
                        "flags=\"--ttl --pause --fault-duration --out --json --help\" paths=\"--out\"",
                        "subs=\"up down topology\"", "down) flags=\"--help\" paths=\"\"", "up) flags=\"--nodes --help\"",
                        "complete -F _locklab locklab"}) {
    EXPECT_NE(script.find(s), std::string::npos) << s << "\n" << script;
  }
}

}  // namespace
}  // namespace locklab
