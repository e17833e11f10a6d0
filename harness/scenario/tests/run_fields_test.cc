// The field table (run_fields.h) drives the run flags and the scenario reader: one range,
// one wording for both.
#include "harness/scenario/run_fields.h"

#include <gtest/gtest.h>

#include "base/numbers.h"

namespace locklab::harness {
namespace {

const char* SectionHeader(FieldSection s) {
  switch (s) {
    case FieldSection::kTop: return "";
    case FieldSection::kLock: return "[lock]\n";
    case FieldSection::kWorkload: return "[workload]\n";
    case FieldSection::kTopology: return "[topology]\n";
    case FieldSection::kFault: return "[[faults]]\nid = \"client-pause\"\n";
  }
  return "";
}

// A number the range refuses: the same words after the flag as in the file; a time's flag
// takes a duration, so it says so in a duration's words.
TEST(RunFieldsTest, FlagAndFileRefuseTheSameValueInTheSameWords) {
  for (const RunField& f : RunFields()) {
    if (f.type != RunField::Type::kInteger || f.flag.empty()) continue;
    const std::string over = std::to_string(f.hi == kInt64Max ? -1 : f.hi + 1);
    const std::string expected = ExpectedInteger(f.lo, f.hi, over);
    RunOptions from_flags;
    std::string scenario;
    std::vector<std::string> args = {"--fault", "client-pause", std::string(f.flag), over};
    Status s = ParseRunFlags(args, &from_flags, &scenario);
    EXPECT_EQ(s.code(), Status::Code::kUsage) << f.flag;
    Millis unused{0};
    const std::string flag_words =
        f.IsDuration() ? ParseDuration(over, Millis(f.lo), Millis(f.hi), &unused).message() : expected;
    EXPECT_EQ(s.message(), "run: flag " + std::string(f.flag) + ": " + flag_words);

    std::string text = std::string(SectionHeader(f.section)) + std::string(f.key) + " = " + over + "\n";
    if (f.section != FieldSection::kLock) text += "[lock]\nid = \"setnx\"\n";
    RunOptions from_file;
    s = ParseScenario(text, "s.toml", &from_file);
    EXPECT_EQ(s.code(), Status::Code::kBadInput) << text;
    EXPECT_NE(s.message().find("field '"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().substr(s.message().find(expected)), expected) << s.message();
  }
}

TEST(RunFieldsTest, FlagAndFileSetTheSamePlace) {
  for (const RunField& f : RunFields()) {
    if (f.type != RunField::Type::kInteger || f.flag.empty()) continue;
    const std::string value = std::to_string(f.hi);
    RunOptions from_flags;
    std::string scenario;
    ASSERT_TRUE(ParseRunFlags({"--lock", "setnx", "--fault", "client-pause", std::string(f.flag), value},
                              &from_flags, &scenario).ok()) << f.flag;
    const std::string line = std::string(f.key) + " = " + value + "\n";
    auto in = [&](FieldSection s) { return f.section == s ? line : std::string(); };
    std::string text = in(FieldSection::kTop) + "[lock]\nid = \"setnx\"\n" + in(FieldSection::kLock) +
                       "[workload]\n" + in(FieldSection::kWorkload) + SectionHeader(FieldSection::kFault) +
                       in(FieldSection::kFault);
    RunOptions from_file;
    ASSERT_TRUE(ParseScenario(text, "s.toml", &from_file).ok()) << text;
    from_flags.name = from_file.name;
    from_file.origins.clear();
    EXPECT_EQ(ScenarioToToml(from_flags), ScenarioToToml(from_file)) << f.flag;
  }
}

// Every time flag takes a duration; a bare number is milliseconds, so the old seconds
// spelling "--duration 6" is refused with what it now means and what was meant.
TEST(RunFieldsTest, TimeFlagsTakeDurationsAndABareNumberIsMilliseconds) {
  RunOptions o;
  std::string scenario;
  EXPECT_EQ(ParseRunFlags({"--duration", "6"}, &o, &scenario).message(),
            "run: flag --duration: 6 means 6 ms (a bare number is milliseconds), below the minimum "
            "100ms; write 6s?");
  ASSERT_TRUE(ParseRunFlags({"--duration", "6s", "--ttl", "1500ms", "--fault", "client-pause",
                             "--pause", "2s", "--first-at", "500", "--interval", "1m"},
                            &o, &scenario).ok());
  EXPECT_EQ(o.duration, Millis(6000));
  EXPECT_EQ(o.ttl, Millis(1500));
  ASSERT_EQ(o.faults.size(), 1u);
  EXPECT_EQ(o.faults[0].duration, Millis(2000));
  EXPECT_EQ(o.faults[0].first_at, Millis(500));
  EXPECT_EQ(o.faults[0].interval, Millis(60000));
  // The other spellings of the same fields.
  RunOptions p;
  ASSERT_TRUE(ParseRunFlags({"--duration-ms", "2500", "--fault", "client-pause", "--fault-duration", "1s"},
                            &p, &scenario).ok());
  EXPECT_EQ(p.duration, Millis(2500));
  EXPECT_EQ(p.faults[0].duration, Millis(1000));
}

// A time field's flag is a duration exactly when its key is in ms.
TEST(RunFieldsTest, TheTimeFieldsAreTheMillisecondKeys) {
  std::vector<std::string> times;
  for (const RunField& f : RunFields()) {
    if (f.IsDuration() && !f.flag.empty()) times.emplace_back(f.flag);
  }
  EXPECT_EQ(times, (std::vector<std::string>{"--duration", "--ttl", "--timeout", "--hold", "--think",
                                             "--acquire-timeout", "--renew-every", "--first-at",
                                             "--pause", "--interval"}));
}

TEST(RunFieldsTest, FlagTakesAnInlineValue) {
  RunOptions o;
  std::string scenario;
  ASSERT_TRUE(ParseRunFlags({"--ttl=250", "--clients", "4"}, &o, &scenario).ok());
  EXPECT_EQ(o.ttl, Millis(250));
  EXPECT_EQ(o.clients, 4);
}

// What a trial passes to its clients is read back by the same table into the same fields:
// every client field, set away from its default, arrives with its value, and no other.
TEST(RunFieldsTest, ClientFieldsTravelByTheTable) {
  RunOptions sent;
  std::vector<std::string> paths;
  for (const RunField& f : RunFields()) {
    if (!f.client) continue;
    EXPECT_NE(f.section, FieldSection::kFault) << f.key;
    paths.push_back(FieldPath(f));
    // A value away from the default (and within the range) shows where the field lands.
    const std::string moved = f.type == RunField::Type::kString
                                  ? std::string("honour")
                                  : std::to_string(f.get_integer(RunOptions(), {}) == f.lo ? f.lo + 1 : f.lo);
    ASSERT_TRUE(ParseFieldText(f, moved, &sent, nullptr).ok()) << FieldPath(f);
    EXPECT_NE(FormatFieldText(f, sent), FormatFieldText(f, RunOptions())) << FieldPath(f);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"lock.ttl_ms", "lock.retry_delay_ms",
                                             "lock.command_timeout_ms", "workload.keys",
                                             "workload.hold_ms", "workload.think_ms",
                                             "workload.acquire_timeout_ms",
                                             "workload.renew_every_ms", "workload.validity"}));
  const std::vector<std::string> args = ClientFieldArgs(sent);
  ASSERT_EQ(args.size(), 2 * paths.size());
  RunOptions received;
  for (size_t i = 0; i < args.size(); i += 2) {
    const RunField* f = FindClientFlag(args[i]);
    ASSERT_NE(f, nullptr) << args[i];
    ASSERT_TRUE(ParseFieldText(*f, args[i + 1], &received, nullptr).ok()) << args[i];
  }
  for (const RunField& f : RunFields()) {
    if (f.section == FieldSection::kFault) continue;
    if (f.client) {
      EXPECT_EQ(FormatFieldText(f, received), FormatFieldText(f, sent)) << FieldPath(f);
    } else {
      EXPECT_EQ(FormatFieldText(f, received), FormatFieldText(f, RunOptions())) << FieldPath(f);
    }
  }
  EXPECT_EQ(FindClientFlag("--ttl"), nullptr) << "a client flag is the field's path";
  EXPECT_EQ(FindClientFlag("--seed"), nullptr) << "the run's seed is no client field";
  EXPECT_EQ(FindClientFlag("lock.ttl_ms"), nullptr);
}

// A fault's run shape (faults/effect.h, RunShape) fills what no flag gave: a bare
// `--fault failover` gets a holder that outlasts the promotion; a given flag stands, and a
// scenario file is taken as written.
TEST(RunFieldsTest, FailoverShapesTheValuesNoFlagGave) {
  RunOptions bare;
  std::string scenario;
  ASSERT_TRUE(ParseRunFlags({"--lock", "set-nx-px-lua", "--fault", "failover"}, &bare, &scenario).ok());
  EXPECT_EQ(bare.hold, Millis(3000));
  EXPECT_EQ(bare.ttl, Millis(4000));
  EXPECT_EQ(bare.acquire_timeout, Millis(1000));
  EXPECT_EQ(bare.duration, Millis(11000));
  ASSERT_EQ(bare.faults.size(), 1u);
  EXPECT_EQ(bare.faults[0].first_at, Millis(500));
  EXPECT_EQ(bare.faults[0].duration, Millis(6000));

  RunOptions given;
  ASSERT_TRUE(ParseRunFlags({"--lock", "set-nx-px-lua", "--hold", "50", "--fault", "failover", "--pause", "2s",
                             "--param", "kill_after_ms=1000"},
                            &given, &scenario)
                  .ok());
  EXPECT_EQ(given.hold, Millis(50));
  EXPECT_EQ(given.ttl, Millis(4700));  // kill_after_ms + 2.7 s + 1 s
  EXPECT_EQ(given.faults[0].duration, Millis(2000));
  EXPECT_EQ(given.faults[0].first_at, Millis(500));

  RunOptions long_hold;  // a hold given longer than the shape's still ends inside its lease
  ASSERT_TRUE(ParseRunFlags({"--lock", "set-nx-px-lua", "--fault", "failover", "--hold", "5000"}, &long_hold,
                            &scenario)
                  .ok());
  EXPECT_EQ(long_hold.ttl, Millis(6000));

  RunOptions other;
  ASSERT_TRUE(ParseRunFlags({"--lock", "set-nx-px-lua", "--fault", "client-pause"}, &other, &scenario).ok());
  EXPECT_EQ(other.hold, RunOptions().hold);
  EXPECT_EQ(other.ttl, RunOptions().ttl);

  RunOptions with_file;
  ASSERT_TRUE(ParseRunFlags({"some.toml", "--fault", "failover"}, &with_file, &scenario).ok());
  EXPECT_EQ(with_file.hold, RunOptions().hold);
}

}  // namespace
}  // namespace locklab::harness
