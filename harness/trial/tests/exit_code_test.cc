// base/exit_code.h: the two rankings of several exit codes into one, in every order.
#include "base/exit_code.h"

#include <gtest/gtest.h>

#include <vector>

namespace locklab {
namespace {

// `worst` must win against every code of `below`, whichever comes first.
template <typename Worse>
void ExpectOutranks(Worse worse, int worst, const std::vector<int>& below) {
  for (int c : below) {
    EXPECT_EQ(worse(worst, c), worst) << worst << " vs " << c;
    EXPECT_EQ(worse(c, worst), worst) << c << " vs " << worst;
  }
}

TEST(ExitCode, RunRanksAnErrorAboveAViolation) {
  auto worse = [](int a, int b) { return WorseRunExit(a, b); };
  ExpectOutranks(worse, kExitInfrastructure, {kExitViolated, kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitIo, {kExitViolated, kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitBadInput, {kExitViolated, kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitViolated, {kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitUnknown, {kExitOk});
  // Two errors: the first one stays (the first trial that failed says why).
  EXPECT_EQ(WorseRunExit(kExitInfrastructure, kExitIo), kExitInfrastructure);
  EXPECT_EQ(WorseRunExit(kExitIo, kExitInfrastructure), kExitIo);
  EXPECT_EQ(WorseRunExit(kExitOk, kExitOk), kExitOk);
}

TEST(ExitCode, CheckRanksAViolationAboveAnUnreadableFile) {
  auto worse = [](int a, int b) { return WorseCheckExit(a, b); };
  ExpectOutranks(worse, kExitViolated, {kExitBadInput, kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitBadInput, {kExitUnknown, kExitOk});
  ExpectOutranks(worse, kExitUnknown, {kExitOk});
  EXPECT_EQ(WorseCheckExit(kExitOk, kExitOk), kExitOk);
}

TEST(ExitCode, ErrorsStartAt64) {
  EXPECT_FALSE(IsErrorExit(kExitOk));
  EXPECT_FALSE(IsErrorExit(kExitViolated));
  EXPECT_FALSE(IsErrorExit(kExitUnknown));
  EXPECT_TRUE(IsErrorExit(kExitUsage));
  EXPECT_TRUE(IsErrorExit(kExitBadInput));
  EXPECT_TRUE(IsErrorExit(kExitInfrastructure));
  EXPECT_TRUE(IsErrorExit(kExitIo));
  // Constants and rankers are usable at compile time.
  static_assert(WorseRunExit(kExitViolated, kExitInfrastructure) == kExitInfrastructure);
  static_assert(WorseCheckExit(kExitViolated, kExitBadInput) == kExitViolated);
}

}  // namespace
}  // namespace locklab
