// Process trees against real processes (base/process_tree.h): a grandchild that ignores
// SIGTERM, one that called setsid, orphans adopted by a subreaper, and marked processes
// wherever they were reparented.
#include "base/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "base/subprocess.h"
#include "base/tests/process_gone.h"

namespace locklab {
namespace {

// /bin/sh running `script`, in a group of its own, with `env` added.
Subprocess Shell(const std::string& script, std::map<std::string, std::string> env = {}) {
  SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.env = std::move(env);
  o.death_signal = 0;
  Subprocess child;
  EXPECT_TRUE(Subprocess::Spawn(o, &child).ok());
  return child;
}

// A sleeper that ignores SIGTERM, and one that also left the session (setsid).
const char kTree[] =
    "trap '' TERM; sleep 300 & setsid sh -c \"trap '' TERM; sleep 300\" & sleep 300";

std::vector<pid_t> WaitForDescendants(pid_t root, size_t n) {
  std::vector<pid_t> d;
  for (Nanos end = MonotonicNow() + Millis(5000); MonotonicNow() < end; SleepFor(Millis(10))) {
    d = DescendantsOf(root);
    if (d.size() >= n) break;
  }
  return d;
}

TEST(ProcessTreeTest, KillTreeTakesSetsidAndSigtermIgnoringDescendants) {
  Subprocess sh = Shell(kTree);
  std::vector<pid_t> d = WaitForDescendants(sh.pid(), 4);  // 2 sleeps, setsid sh, its sleep
  ASSERT_GE(d.size(), 4u);
  EXPECT_GE(KillTree(sh.pid(), /*include_root=*/true), 5);
  EXPECT_TRUE(sh.WaitExit(Millis(2000)));
  for (pid_t p : d) EXPECT_TRUE(GoneWithin(p, Millis(2000))) << "pid " << p;
}

TEST(ProcessTreeTest, ASubreaperKillsTheOrphansItAdopted) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  EXPECT_TRUE(IsChildSubreaper());
  // The shell leaves a setsid sleeper that ignores SIGTERM and exits: the sleeper is
  // reparented here.
  Subprocess sh = Shell("setsid sh -c \"trap '' TERM; sleep 300\" & sleep 0.2; exit 0");
  std::vector<pid_t> d = WaitForDescendants(sh.pid(), 2);
  ASSERT_GE(d.size(), 1u);
  EXPECT_TRUE(sh.WaitExit(Millis(3000)));
  EXPECT_GE(KillChildrenExcept(-1), 1);
  for (pid_t p : d) EXPECT_TRUE(GoneWithin(p, Millis(2000))) << "pid " << p;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "no child is left, not even a zombie";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(ProcessTreeTest, MarkedProcessesAreFoundWhereverTheyWent) {
  const std::string mark = "LOCKLAB_TEST_MARK=" + std::to_string(getpid());
  Subprocess sh = Shell("setsid sh -c \"trap '' TERM; sleep 300\" & sleep 0.2; exit 0",
                        {{"LOCKLAB_TEST_MARK", std::to_string(getpid())}});
  std::vector<pid_t> d = WaitForDescendants(sh.pid(), 2);
  ASSERT_GE(d.size(), 1u);
  EXPECT_TRUE(sh.WaitExit(Millis(3000)));  // the sleeper is now init's
  EXPECT_GE(KillProcessesWithEnv(mark), 1);
  for (pid_t p : d) EXPECT_TRUE(GoneWithin(p, Millis(2000))) << "pid " << p;
  EXPECT_EQ(KillProcessesWithEnv(mark), 0);
}

TEST(ProcessTreeTest, MarkedOrphansASubreaperAdoptedAreReapedToo) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string mark = "LOCKLAB_TEST_MARK=r" + std::to_string(getpid());
  Subprocess sh = Shell("setsid sh -c \"trap '' TERM; sleep 300\" & sleep 0.2; exit 0",
                        {{"LOCKLAB_TEST_MARK", "r" + std::to_string(getpid())}});
  std::vector<pid_t> d = WaitForDescendants(sh.pid(), 2);
  ASSERT_GE(d.size(), 1u);
  EXPECT_TRUE(sh.WaitExit(Millis(3000)));  // the sleeper is now this process's
  EXPECT_GE(KillProcessesWithEnv(mark), 1);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "reaped: no zombie is left here";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace locklab
