// The lab's checks on outside bytes before the JSON library sees them (base/json_limits.h).
#include "base/json_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace locklab {
namespace {

TEST(JsonLimitsTest, Utf8) {
  EXPECT_EQ(FirstInvalidUtf8("plain ascii"), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("\xc0\x80"), 0u) << "overlong";
  EXPECT_EQ(FirstInvalidUtf8("x\xed\xa0\x80"), 1u) << "surrogate";
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u) << "past U+10FFFF";
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x82"), 0u) << "cut short";
  EXPECT_EQ(EscapeInvalidUtf8("a\xff\xc3\xa9\xc3"), "a\\xff\xc3\xa9\\xc3");
}

TEST(JsonLimitsTest, Depth) {
  auto nested = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_EQ(FirstTooDeep(nested(64), 64), std::string::npos);
  EXPECT_EQ(FirstTooDeep(nested(65), 64), 64u);
  EXPECT_EQ(FirstTooDeep(nested(100000), 64), 64u);
  std::string field;
  EXPECT_EQ(FirstTooDeep("{\"a\":[1],\"value\":" + nested(70) + "}", 64, &field), 80u);
  EXPECT_EQ(field, "value");
  EXPECT_EQ(FirstTooDeep("{\"s\":\"[[[[[[\\\"[[[[\"}", 2), std::string::npos) << "strings";
  EXPECT_EQ(TopLevelFieldAt("{\"a\":1,\"name\":\"x\xff\"}", 16), "name");
  EXPECT_EQ(TopLevelFieldAt("{\"a\":1,\"name\":\"x\xff\"}", 3), "");
}

}  // namespace
}  // namespace locklab
