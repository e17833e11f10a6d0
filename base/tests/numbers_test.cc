#include "base/numbers.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(ParseIntTest, WholeStringInRange) {
  EXPECT_EQ(ParseInt("42"), 42);
  EXPECT_EQ(ParseInt("-7"), -7);
  EXPECT_EQ(ParseInt("0", 0, 0), 0);
  EXPECT_EQ(ParseInt("9223372036854775807"), kInt64Max);
  EXPECT_EQ(ParseInt("-9223372036854775808"), kInt64Min);
}

TEST(ParseIntTest, RefusesJunkSignsSpacesAndOverflow) {
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1x", "0x10", "1.0", "1e3", "soon",
                          "9223372036854775808", "-9223372036854775809"}) {
    EXPECT_EQ(ParseInt(bad), std::nullopt) << bad;
  }
}

TEST(ParseIntTest, RefusesOutOfRange) {
  EXPECT_EQ(ParseInt("0", 1, 64), std::nullopt);
  EXPECT_EQ(ParseInt("65", 1, 64), std::nullopt);
  EXPECT_EQ(ParseInt("64", 1, 64), 64);
}

TEST(ParseIntTest, StatusNamesRangeAndText) {
  int64_t v = 5;
  Status s = ParseInt("soon", 1, 3600000, &v);
  EXPECT_EQ(s.code(), Status::Code::kUsage);
  EXPECT_EQ(s.message(), "expected an integer in 1..3600000, got 'soon'");
  EXPECT_EQ(v, 5);  // untouched
  EXPECT_EQ(ParseInt("-1", 0, kInt64Max, &v).message(), "expected an integer >= 0, got '-1'");
  ASSERT_TRUE(ParseInt("17", 1, 64, &v).ok());
  EXPECT_EQ(v, 17);
}

TEST(ParseUint64Test, FullRange) {
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseUint64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseUint64("-1"), std::nullopt);
  EXPECT_EQ(ParseUint64(""), std::nullopt);
}

TEST(ParseDoubleTest, FiniteInRange) {
  EXPECT_EQ(ParseDouble("0.5", 0, 1), 0.5);
  EXPECT_EQ(ParseDouble("1e-3", 0, 1), 0.001);
  EXPECT_EQ(ParseDouble("2", 0, 1), std::nullopt);
  for (const char* bad : {"", " 1", "1 ", "nan", "inf", "1x", "x"}) {
    EXPECT_EQ(ParseDouble(bad, -1e300, 1e300), std::nullopt) << bad;
  }
  double d = 0;
  EXPECT_EQ(ParseDouble("3", 0.5, 2, &d).message(), "expected a number in 0.5..2, got '3'");
}

}  // namespace
}  // namespace locklab
