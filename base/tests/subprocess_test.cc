// Subprocess against real programs and real signals: exit statuses, the errors of a child
// that never ran, streams, the process group, and the death signal.
#include "base/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/tests/process_gone.h"

namespace locklab {
namespace {

// One line from a non-blocking pipe, within 5 s.
std::string ReadLineFrom(int fd) {
  std::string out;
  const Nanos end = MonotonicNow() + Millis(5000);
  while (MonotonicNow() < end) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 100);
    char c;
    while (read(fd, &c, 1) == 1) {
      if (c == '\n') return out;
      out.push_back(c);
    }
  }
  return out;
}

int ExitCodeOf(const std::vector<std::string>& argv) {
  SubprocessOptions o;
  o.argv = argv;
  Subprocess child;
  Status s = Subprocess::Spawn(o, &child);
  EXPECT_TRUE(s.ok()) << s.message();
  int status = 0;
  EXPECT_TRUE(child.WaitExit(Millis(5000), &status));
  EXPECT_EQ(child.pid(), -1) << "reaped";
  EXPECT_TRUE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST(SubprocessTest, ExitStatuses) {
  EXPECT_EQ(ExitCodeOf({"/bin/true"}), 0);
  EXPECT_EQ(ExitCodeOf({"/bin/sh", "-c", "exit 3"}), 3);
}

TEST(SubprocessTest, DescribeWaitStatusInWords) {
  SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", "exit 3"};
  Subprocess child;
  ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
  int status = 0;
  ASSERT_TRUE(child.WaitExit(Millis(5000), &status));
  EXPECT_EQ(DescribeWaitStatus(status), "exited with status 3");
  o.argv = {"/bin/sleep", "100"};
  ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
  kill(child.pid(), SIGKILL);
  ASSERT_TRUE(child.WaitExit(Millis(5000), &status));
  EXPECT_EQ(DescribeWaitStatus(status), "was killed by signal Killed");
}

// A child that fails before execve is an error from Spawn naming the step, not a child
// exiting 127 later.
TEST(SubprocessTest, FailuresBeforeExecAreErrorsFromSpawn) {
  SubprocessOptions o;
  o.argv = {"/nonexistent/program"};
  Subprocess child;
  Status s = Subprocess::Spawn(o, &child);
  EXPECT_EQ(s.message(), "exec /nonexistent/program: No such file or directory");
  EXPECT_EQ(child.pid(), -1);

  o.argv = {"/bin/true"};
  o.cwd = "/nonexistent/dir";
  s = Subprocess::Spawn(o, &child);
  EXPECT_EQ(s.message(), "chdir /nonexistent/dir for /bin/true: No such file or directory");

  o.cwd = "";
  o.argv = {};
  EXPECT_EQ(Subprocess::Spawn(o, &child).message(), "spawn: empty argv");
}

TEST(SubprocessTest, PipesBothWays) {
  SubprocessOptions o;
  o.argv = {"/bin/cat"};
  o.stdin_stream = StdStream::Pipe();
  o.stdout_stream = StdStream::Pipe();
  Subprocess child;
  ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
  ASSERT_GE(child.stdin_pipe(), 0);
  ASSERT_GE(child.stdout_pipe(), 0);
  EXPECT_EQ(child.stderr_pipe(), -1);
  EXPECT_TRUE(fcntl(child.stdout_pipe(), F_GETFL) & O_NONBLOCK);
  ASSERT_EQ(write(child.stdin_pipe(), "hello\n", 6), 6);
  EXPECT_EQ(ReadLineFrom(child.stdout_pipe()), "hello");
  child.CloseStdin();  // cat reads EOF and exits
  int status = -1;
  EXPECT_TRUE(child.WaitExit(Millis(5000), &status));
  EXPECT_EQ(status, 0);
}

TEST(SubprocessTest, LogFileTakesStdoutAndStderrAndEnvIsEdited) {
  char tmpl[] = "/tmp/locklab-subprocess-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  setenv("LOCKLAB_SUBPROCESS_TEST_DROP", "dropped", 1);
  SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", "echo out $A $LOCKLAB_SUBPROCESS_TEST_DROP; echo err >&2"};
  o.env["A"] = "added";
  o.unset_env = {"LOCKLAB_SUBPROCESS_TEST_DROP"};
  o.log_path = tmpl;
  Subprocess child;
  ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
  ASSERT_TRUE(child.WaitExit(Millis(5000)));
  unsetenv("LOCKLAB_SUBPROCESS_TEST_DROP");
  std::ifstream in(tmpl);
  std::stringstream text;
  text << in.rdbuf();
  unlink(tmpl);
  EXPECT_EQ(text.str(), "out added\nerr\n");
}

// The parent's fds without O_CLOEXEC reach the child unless close_other_fds.
TEST(SubprocessTest, CloseOtherFds) {
  int fd = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, 57), 57);
  close(fd);
  for (bool close_others : {false, true}) {
    SubprocessOptions o;
    o.argv = {"/bin/sh", "-c", "test -e /proc/self/fd/57"};
    o.close_other_fds = close_others;
    Subprocess child;
    ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
    int status = 0;
    ASSERT_TRUE(child.WaitExit(Millis(5000), &status));
    EXPECT_EQ(WEXITSTATUS(status), close_others ? 1 : 0) << "close_other_fds " << close_others;
  }
  close(57);
}

// A child that leads its group takes its own children with it; one in the parent's group is
// killed alone (the lock driver: killing its "group" would kill the client).
TEST(SubprocessTest, KillAndReapReachesTheGroupOnlyWhenTheChildLeadsOne) {
  for (bool own_group : {true, false}) {
    SubprocessOptions o;
    o.argv = {"/bin/sh", "-c", "sleep 100 & echo $!; wait"};
    o.stdout_stream = StdStream::Pipe();
    o.own_process_group = own_group;
    Subprocess child;
    ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
    EXPECT_EQ(getpgid(child.pid()), own_group ? child.pid() : getpgrp());
    const std::string line = ReadLineFrom(child.stdout_pipe());
    ASSERT_FALSE(line.empty()) << "the shell printed its background child's pid";
    const pid_t grandchild = static_cast<pid_t>(std::stol(line));
    child.KillAndReap();
    EXPECT_EQ(child.pid(), -1);
    EXPECT_EQ(GoneWithin(grandchild, Millis(own_group ? 2000 : 200)), own_group)
        << "own group " << own_group;
    kill(grandchild, SIGKILL);
  }
}

// The death signal: a child dies with its parent, even when the parent is SIGKILLed (no
// orphaned redis-server); death_signal 0 lets it live on (`locklab cluster up`).
TEST(SubprocessTest, ChildDiesWithItsParentUnlessDetached) {
  for (int death_signal : {SIGKILL, 0}) {
    for (bool own_group : {true, false}) {
      int report[2];
      ASSERT_EQ(pipe(report), 0);
      pid_t parent = fork();
      ASSERT_GE(parent, 0);
      if (parent == 0) {  // the parent of the child under test, killed below
        close(report[0]);
        SubprocessOptions o;
        o.argv = {"/bin/sleep", "100"};
        o.own_process_group = own_group;
        o.death_signal = death_signal;
        Subprocess child;
        if (!Subprocess::Spawn(o, &child).ok()) _exit(1);
        pid_t pid = child.Release();
        (void)!write(report[1], &pid, sizeof(pid));
        for (;;) pause();
      }
      close(report[1]);
      pid_t child = -1;
      ASSERT_EQ(read(report[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
      close(report[0]);
      ASSERT_FALSE(Gone(child));
      kill(parent, SIGKILL);
      waitpid(parent, nullptr, 0);
      const bool dies = death_signal != 0;
      EXPECT_EQ(GoneWithin(child, Millis(dies ? 2000 : 200)), dies)
          << "death signal " << death_signal << ", own group " << own_group;
      kill(child, SIGKILL);
    }
  }
}

TEST(SubprocessTest, ResetAndDestructionKillTheChild) {
  SubprocessOptions o;
  o.argv = {"/bin/sleep", "100"};
  pid_t pid = -1;
  {
    Subprocess child;
    ASSERT_TRUE(Subprocess::Spawn(o, &child).ok());
    pid = child.pid();
    Subprocess moved = std::move(child);
    EXPECT_EQ(child.pid(), -1);
    EXPECT_EQ(moved.pid(), pid);
  }
  EXPECT_TRUE(Gone(pid));
}

}  // namespace
}  // namespace locklab
