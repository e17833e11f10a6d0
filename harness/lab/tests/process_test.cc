// Child-process helpers against real processes and real signals.
#include "harness/lab/process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

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

// Regression (CI, 2026-11-22): `locklab run --endpoint-control` died with "terminate called
// after throwing std::__ios_failure ... error reading the file: No such process". It read
// /proc/PID/cmdline through std::ifstream while the supervisor restarted the server: a
// process that exits between the open and the read makes read(2) fail with ESRCH, and
// libstdc++'s filebuf throws that through istreambuf_iterator.
TEST(ProcessTest, ProcFileOfAProcessThatExitedAfterTheOpen) {
  SpawnOptions o;
  o.argv = {"/bin/sleep", "10"};
  pid_t pid = -1;
  ASSERT_TRUE(Spawn(o, &pid).ok());
  EXPECT_NE(ReadProcFile(pid, "cmdline").find("sleep"), std::string::npos);
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");  // opened while it runs
  KillAndReap(pid);
  bool threw = false;
  try {
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    threw = true;
  }
  EXPECT_TRUE(threw) << "the old way no longer throws here (a libstdc++ change?)";
  EXPECT_EQ(ReadProcFile(pid, "cmdline"), "");
  EXPECT_TRUE(ProcessGone(pid));
}

// postgres refuses root; the lab runs it as another user (SpawnOptions::run_as_user).
TEST(ProcessTest, RunAsUserRunsTheChildUnderThatUidWithNoExtraGroups) {
  passwd* pw = getpwnam("nobody");
  ASSERT_NE(pw, nullptr);
  char tmpl[] = "/tmp/locklab-runas-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo $(id -u) $(id -g) $(id -G)"};
  o.run_as_user = "nobody";
  o.log_path = tmpl;  // opened by the harness (root) before the child drops its rights
  pid_t pid = -1;
  ASSERT_TRUE(Spawn(o, &pid).ok());
  ASSERT_TRUE(WaitExit(pid, Millis(2000)));
  std::ifstream in(tmpl);
  std::string uid, gid, groups;
  in >> uid >> gid >> groups;
  unlink(tmpl);
  EXPECT_EQ(uid, std::to_string(pw->pw_uid));
  EXPECT_EQ(gid, std::to_string(pw->pw_gid));
  EXPECT_EQ(groups, std::to_string(pw->pw_gid)) << "supplementary groups were kept";
}

TEST(ProcessTest, RunAsAnUnknownUserIsAnErrorNotAChildRunningAsRoot) {
  SpawnOptions o;
  o.argv = {"/bin/true"};
  o.run_as_user = "no-such-user-locklab";
  pid_t pid = -1;
  Status s = Spawn(o, &pid);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-user-locklab"), std::string::npos) << s.message();
}

// A plain socket on 127.0.0.1:port, bound (with SO_REUSEADDR when `reuse`); -1 on failure.
int BindLoopback(int port, bool reuse) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (reuse) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

TEST(ProcessTest, AListeningSocketIsFoundByItsPortAndItsHolder) {
  int fd = BindLoopback(0, /*reuse=*/false);
  ASSERT_GE(fd, 0) << strerror(errno);
  const int port = BoundPort(fd);
  EXPECT_TRUE(ListeningSocketInodes(port).empty()) << "bound, not listening yet";
  ASSERT_EQ(listen(fd, 1), 0);
  std::vector<uint64_t> inodes = ListeningSocketInodes(port);
  ASSERT_EQ(inodes.size(), 1u);
  EXPECT_TRUE(HoldsSocket(getpid(), inodes));
  EXPECT_FALSE(HoldsSocket(getppid(), inodes));
  EXPECT_EQ(SocketHolders(inodes), std::vector<pid_t>{getpid()});
  close(fd);
  EXPECT_TRUE(ListeningSocketInodes(port).empty());
}

TEST(PortHoldTest, AHeldPortIsRefusedToOthersYetAServerWithReuseAddrListensOnIt) {
  PortHold hold;
  ASSERT_TRUE(PortHold::Pick(&hold).ok());
  ASSERT_TRUE(hold.held());
  const int port = hold.port();
  ASSERT_GT(port, 0);

  EXPECT_EQ(BindLoopback(port, /*reuse=*/false), -1) << "a stranger's plain bind got it";
  // The kernel's own picks (bind to port 0, as every "free port" helper does) pass it by.
  std::vector<int> picked;
  for (int i = 0; i < 3000; ++i) {
    int fd = BindLoopback(0, /*reuse=*/true);
    if (fd < 0) continue;
    EXPECT_NE(BoundPort(fd), port) << "bind(0) handed out the held port";
    picked.push_back(fd);
    if (picked.size() >= 500) {
      for (int f : picked) close(f);
      picked.clear();
    }
  }
  for (int f : picked) close(f);

  // A connection to it is refused while no server listens ...
  auto connect_to = [&]() {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    int r = connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    int err = r == 0 ? 0 : errno;
    close(c);
    return err;
  };
  EXPECT_EQ(connect_to(), ECONNREFUSED);
  // ... and a server that sets SO_REUSEADDR binds, listens and is reached.
  int server = BindLoopback(port, /*reuse=*/true);
  ASSERT_GE(server, 0) << strerror(errno);
  ASSERT_EQ(listen(server, 4), 0) << strerror(errno);
  EXPECT_EQ(connect_to(), 0);
  close(server);

  hold.Release();
  EXPECT_FALSE(hold.held());
  int after = BindLoopback(port, /*reuse=*/false);
  EXPECT_GE(after, 0) << "a released port is free again";
  if (after >= 0) close(after);
}

}  // namespace
}  // namespace locklab::harness
