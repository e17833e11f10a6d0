// The field table (run_fields.h) drives the run flags and the scenario reader: one range,
// one wording for both.
#include "harness/run_fields.h"

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
    EXPECT_EQ(s.message(), "run: flag " + std::string(f.flag) + ": " + expected);

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

TEST(RunFieldsTest, SecondsFlagTakesTheRangeInWholeSeconds) {
  RunOptions o;
  std::string scenario;
  EXPECT_EQ(ParseRunFlags({"--duration", "0"}, &o, &scenario).message(),
            "run: flag --duration: expected an integer in 1..86400, got '0'");
  ASSERT_TRUE(ParseRunFlags({"--duration", "3"}, &o, &scenario).ok());
  EXPECT_EQ(o.duration, Millis(3000));
}

TEST(RunFieldsTest, FlagTakesAnInlineValue) {
  RunOptions o;
  std::string scenario;
  ASSERT_TRUE(ParseRunFlags({"--ttl=250", "--clients", "4"}, &o, &scenario).ok());
  EXPECT_EQ(o.ttl, Millis(250));
  EXPECT_EQ(o.clients, 4);
}

}  // namespace
}  // namespace locklab::harness
