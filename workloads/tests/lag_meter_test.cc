// LagMeter with real sleeps and real signals.
#include "workloads/lag_meter.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace locklab::workloads {
namespace {

TEST(LagMeterTest, MeasuresEachSleepItsOvershootNeverNegative) {
  LagMeter::InstallSigcontCounter();
  LagMeter m;
  for (int i = 0; i < 3; ++i) m.Sleep(Millis(5));
  EXPECT_EQ(m.sleeps(), 3);
  EXPECT_GE(m.max(), Nanos(0));
  EXPECT_EQ(m.over_50ms(), 0) << "a 5 ms sleep 50 ms late: this machine is overloaded";
}

// An injected pause (SIGSTOP, then the harness's SIGCONT) is the fault, not the lab's lag:
// a sleep that saw a SIGCONT must not count, or every client-pause trial would look late.
TEST(LagMeterTest, ASleepInterruptedByAStopAndContinueIsNotCounted) {
  LagMeter::InstallSigcontCounter();
  LagMeter m;
  std::thread resume([] {
    SleepFor(Millis(30));
    kill(getpid(), SIGCONT);  // what the harness sends when a pause ends
  });
  m.Sleep(Millis(100));
  resume.join();
  EXPECT_EQ(m.sleeps(), 0);
  m.Sleep(Millis(1));
  EXPECT_EQ(m.sleeps(), 1) << "later sleeps count again";
}

}  // namespace
}  // namespace locklab::workloads
