// Child-process helpers against real processes and real signals.
#include "harness/process.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace locklab::harness {
namespace {

// Regression (delay cell, 2026-11-22): a client reports "paused" and then raises SIGSTOP;
// the harness answered at once with SIGCONT, which overtook the stop and was lost, so the
// client stayed stopped until teardown and half the delay trials saw no late write.
TEST(ProcessTest, WaitUntilStoppedSeesASelfStopThatComesLate) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 0.2; kill -STOP $$; exit 0"};
  pid_t pid = -1;
  ASSERT_TRUE(Spawn(o, &pid).ok());
  EXPECT_FALSE(WaitUntilStopped(pid, Millis(50))) << "still sleeping, not stopped";
  EXPECT_TRUE(WaitUntilStopped(pid, Millis(2000)));
  kill(-pid, SIGCONT);
  int status = 0;
  EXPECT_TRUE(WaitExit(pid, Millis(2000), &status)) << "SIGCONT after the stop resumes it";
  KillAndReap(pid);
}

TEST(ProcessTest, WaitUntilStoppedIsFalseForAGoneProcess) {
  SpawnOptions o;
  o.argv = {"/bin/true"};
  pid_t pid = -1;
  ASSERT_TRUE(Spawn(o, &pid).ok());
  ASSERT_TRUE(WaitExit(pid, Millis(2000)));
  EXPECT_FALSE(WaitUntilStopped(pid, Millis(50)));
}

}  // namespace
}  // namespace locklab::harness
