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

using std::chrono::milliseconds;

// Every time flag reads its value here: a whole number and a unit, a bare number in ms.
TEST(ParseDurationTest, UnitsAndBareMilliseconds) {
  milliseconds d{-1};
  const milliseconds lo{0}, hi{milliseconds::max()};
  ASSERT_TRUE(ParseDuration("500ms", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(500));
  ASSERT_TRUE(ParseDuration("6s", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(6000));
  ASSERT_TRUE(ParseDuration("2m", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(120000));
  ASSERT_TRUE(ParseDuration("1h", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(3600000));
  ASSERT_TRUE(ParseDuration("250", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(250));
  ASSERT_TRUE(ParseDuration("0", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(0));
  ASSERT_TRUE(ParseDuration("0s", lo, hi, &d).ok());
  EXPECT_EQ(d, milliseconds(0));
}

TEST(ParseDurationTest, RefusesJunkNegativeEmptyAndUnknownSuffix) {
  const std::string syntax =
      "expected a duration like 500ms, 6s, 2m or 1h (a bare number is milliseconds), got '";
  for (const char* bad : {"", "s", "ms", "-5s", "-1", "+5s", " 5s", "5s ", "5 s", "5d", "5sec",
                          "5S", "soon", "0x10", "1e3", ".5s", "1.s", "5ms5"}) {
    milliseconds d{7};
    Status s = ParseDuration(bad, milliseconds(0), milliseconds(86400000), &d);
    EXPECT_EQ(s.code(), Status::Code::kUsage) << bad;
    EXPECT_EQ(s.message(), syntax + bad + "'") << bad;
    EXPECT_EQ(d, milliseconds(7)) << "untouched: " << bad;
  }
}

TEST(ParseDurationTest, DecimalsAreRefusedWithTheirWholeSpelling) {
  milliseconds d{7};
  const milliseconds lo{0}, hi{86400000};
  EXPECT_EQ(ParseDuration("1.5s", lo, hi, &d).message(), "expected whole units, got '1.5s'; write 1500ms?");
  EXPECT_EQ(ParseDuration("0.25m", lo, hi, &d).message(), "expected whole units, got '0.25m'; write 15s?");
  EXPECT_EQ(ParseDuration("1.5", lo, hi, &d).message(), "expected whole units, got '1.5'");
  EXPECT_EQ(ParseDuration("1.0001s", lo, hi, &d).message(),
            "expected a duration like 500ms, 6s, 2m or 1h (a bare number is milliseconds), got '1.0001s'");
  EXPECT_EQ(d, milliseconds(7));
}

TEST(ParseDurationTest, RangeAndOverflowNameTheBoundsInUnits) {
  milliseconds d{7};
  const milliseconds lo{100}, hi{86400000};
  EXPECT_EQ(ParseDuration("50ms", lo, hi, &d).message(), "expected a duration in 100ms..24h, got '50ms'");
  EXPECT_EQ(ParseDuration("25h", lo, hi, &d).message(), "expected a duration in 100ms..24h, got '25h'");
  EXPECT_EQ(ParseDuration("86400001", lo, hi, &d).message(),
            "expected a duration in 100ms..24h, got '86400001'");
  // More milliseconds than int64 holds, and more digits than it holds: out of range.
  EXPECT_EQ(ParseDuration("9223372036854775807h", lo, hi, &d).message(),
            "expected a duration in 100ms..24h, got '9223372036854775807h'");
  EXPECT_EQ(ParseDuration("99999999999999999999", lo, milliseconds::max(), &d).message(),
            "expected a duration >= 100ms, got '99999999999999999999'");
  ASSERT_TRUE(ParseDuration("9223372036854775807", milliseconds(0), milliseconds::max(), &d).ok());
  EXPECT_EQ(d.count(), kInt64Max);
  ASSERT_TRUE(ParseDuration("24h", lo, hi, &d).ok());
  EXPECT_EQ(d, hi);
}

// The old seconds flags (--duration 6, --budget 120) now mean milliseconds: said, with the
// spelling that was meant.
TEST(ParseDurationTest, BareNumberBelowTheMinimumSuggestsSeconds) {
  milliseconds d{7};
  EXPECT_EQ(ParseDuration("6", milliseconds(100), milliseconds(86400000), &d).message(),
            "6 means 6 ms (a bare number is milliseconds), below the minimum 100ms; write 6s?");
  EXPECT_EQ(ParseDuration("120", milliseconds(1000), milliseconds(86400000), &d).message(),
            "120 means 120 ms (a bare number is milliseconds), below the minimum 1s; write 120s?");
  // No hint when the seconds would not fit either.
  EXPECT_EQ(ParseDuration("0", milliseconds(1), milliseconds(3600000), &d).message(),
            "0 means 0 ms (a bare number is milliseconds), below the minimum 1ms");
  EXPECT_EQ(ParseDuration("5", milliseconds(10000), milliseconds(60000), &d).message(),
            "5 means 5 ms (a bare number is milliseconds), below the minimum 10s");
  EXPECT_EQ(d, milliseconds(7));
}

TEST(FormatDurationTest, LargestWholeUnit) {
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(milliseconds(6000)), "6s");
  EXPECT_EQ(FormatDuration(milliseconds(90000)), "90s");
  EXPECT_EQ(FormatDuration(milliseconds(120000)), "2m");
  EXPECT_EQ(FormatDuration(milliseconds(86400000)), "24h");
}

}  // namespace
}  // namespace locklab
