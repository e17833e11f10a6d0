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

}  // namespace
}  // namespace locklab
