#include "base/argv.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(ArgvReaderTest, FlagsValuesAndPositionalWords) {
  ArgvReader r("run", {"a.toml", "--ttl", "5", "--clients=3", "--json", "b"});
  std::vector<std::string> seen;
  while (r.Next()) {
    if (!r.AtFlag()) {
      seen.push_back("pos:" + r.word());
    } else if (r.Is("--json")) {
      ASSERT_TRUE(r.NoValue().ok());
      seen.push_back("json");
    } else {
      int64_t n = 0;
      ASSERT_TRUE(r.Int(1, 100, &n).ok());
      seen.push_back(r.flag() + "=" + std::to_string(n));
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"pos:a.toml", "--ttl=5", "--clients=3", "json", "pos:b"}));
}

TEST(ArgvReaderTest, RepeatedFlagIsSeenEachTime) {
  ArgvReader r("run", {"--driver-arg", "-v", "--driver-arg=--x=1"});
  std::vector<std::string> values;
  while (r.Next()) {
    std::string v;
    ASSERT_TRUE(r.Value(&v).ok());
    values.push_back(v);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"-v", "--x=1"}));
}

TEST(ArgvReaderTest, OneLineErrors) {
  ArgvReader r("run", {"--ttl", "soon", "--bogus", "--json=1", "--out"});
  std::string v;
  int64_t n = 0;
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Int(1, 3600000, &n).message(),
            "run: flag --ttl: expected an integer in 1..3600000, got 'soon'");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Unknown().message(), "run: unknown flag --bogus");
  EXPECT_EQ(r.Unknown().ExitCode(), 64);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.NoValue().message(), "run: flag --json takes no value");
  ASSERT_TRUE(r.Next());
  Status s = r.Value(&v);
  EXPECT_EQ(s.message(), "run: flag --out needs a value");
  EXPECT_EQ(s.ExitCode(), 64);
  EXPECT_FALSE(r.Next());
}

TEST(ArgvReaderTest, DoubleDashEndsFlags) {
  ArgvReader r("check", {"--json", "--", "--odd-name", "x"});
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.AtFlag());
  ASSERT_TRUE(r.Next());
  EXPECT_FALSE(r.AtFlag());
  EXPECT_EQ(r.word(), "--odd-name");
  EXPECT_EQ(r.Rest(), std::vector<std::string>{"x"});
  EXPECT_EQ(r.Unknown().message(), "check: unexpected argument '--odd-name'");
}

CommandSpec TwoFlagSpec() {
  CommandSpec spec;
  spec.name = "run";
  spec.flags = {{"--ttl", {}, "DURATION", FlagKind::kDuration, "key lifetime"},
                {"--pause", {"--fault-duration"}, "DURATION", FlagKind::kDuration, "pause length"}};
  return spec;
}

// The structural half of "help lists every flag the parser takes": with its table, the
// reader answers no for any flag the table lacks, so the parser's last branch refuses it.
TEST(ArgvReaderTest, WithASpecOnlyItsFlagsAreSeen) {
  CommandSpec spec = TwoFlagSpec();
  ArgvReader r(spec, {"--bogus", "--ttl=5", "--fault-duration", "3", "--help"});
  ASSERT_TRUE(r.Next());
  EXPECT_FALSE(r.Is("--bogus"));
  EXPECT_EQ(r.Unknown().message(), "run: unknown flag --bogus");
  EXPECT_EQ(r.Unknown().ExitCode(), 64);
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.Is("--ttl"));
  EXPECT_FALSE(r.Is("--pause"));
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.Is("--pause")) << "an alias is its row's flag";
  EXPECT_TRUE(r.Is("--fault-duration"));
  EXPECT_EQ(r.flag(), "--fault-duration") << "messages echo the spelling used";
  std::chrono::milliseconds d{0};
  ASSERT_TRUE(r.Duration(std::chrono::milliseconds(1), std::chrono::milliseconds(60000), &d).ok());
  EXPECT_EQ(d, std::chrono::milliseconds(3));
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.AtHelp());
  EXPECT_FALSE(r.Is("--help"));
}

TEST(ArgvReaderTest, DurationErrorsNameTheFlag) {
  CommandSpec spec = TwoFlagSpec();
  ArgvReader r(spec, {"--ttl", "6", "--ttl", "soon", "--ttl"}, "run");
  std::chrono::milliseconds d{0};
  const std::chrono::milliseconds lo{100}, hi{86400000};
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Duration(lo, hi, &d).message(),
            "run: flag --ttl: 6 means 6 ms (a bare number is milliseconds), below the minimum 100ms; "
            "write 6s?");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Duration(lo, hi, &d).message(),
            "run: flag --ttl: expected a duration like 500ms, 6s, 2m or 1h (a bare number is "
            "milliseconds), got 'soon'");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Duration(lo, hi, &d).message(), "run: flag --ttl needs a value");
}

}  // namespace
}  // namespace locklab
