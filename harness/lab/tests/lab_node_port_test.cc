// A lab node is ready only when its own server answers on its port: a stranger that took
// the port between its pick and the server's bind (another test's server, another trial's)
// answers the readiness probe too, while the node's server exits on "address already in
// use". Real redis-server processes on both sides.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "harness/lab/process.h"
#include "tests/lab_fixture.h"

namespace locklab::harness {
namespace {

class LabNodePortTest : public testing::LabNodeTest {
 protected:
  // A node preset on `port` (NodeOptions::port), not started.
  std::unique_ptr<LabNode> NodeOn(const std::string& name, int port) {
    NodeOptions o;
    o.name = name;
    o.port = port;
    return std::make_unique<LabNode>(o, dir_ + "/" + name, paths_);
  }
};

TEST_F(LabNodePortTest, AStartAnsweredByAStrangerOnThePortFailsAndNamesIt) {
  LabNode& stranger = StartNode("stranger");
  ASSERT_GT(stranger.pid(), 0);
  std::unique_ptr<LabNode> node = NodeOn("n1", stranger.port());
  Status s = node->Start();
  ASSERT_FALSE(s.ok()) << "the stranger's PONG was taken for the node's own";
  EXPECT_NE(s.message().find("address already in use"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("pid " + std::to_string(stranger.pid())), std::string::npos)
      << s.message();
  EXPECT_FALSE(node->Running());
  EXPECT_TRUE(stranger.Running());
}

TEST_F(LabNodePortTest, ARestartAnsweredByAStrangerOnThePortFails) {
  LabNode& n1 = StartNode("n1");
  const int port = n1.port();
  n1.Kill();
  std::unique_ptr<LabNode> stranger = NodeOn("stranger", port);
  ASSERT_TRUE(stranger->Start().ok());
  Status s = n1.Restart();
  ASSERT_FALSE(s.ok()) << "the stranger's PONG was taken for the restarted node's own";
  EXPECT_NE(s.message().find("pid " + std::to_string(stranger->pid())), std::string::npos)
      << s.message();
}

TEST_F(LabNodePortTest, AKilledNodesPortStaysItsOwnForTheRestart) {
  LabNode& n1 = StartNode("n1");
  const int port = n1.port();
  n1.Kill();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_NE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
      << "a stranger bound the port of a node that is down";
  close(fd);
  Status s = n1.Restart();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(n1.port(), port);
  EXPECT_EQ(Cmd(n1.endpoint(), {"PING"}).str, "PONG");
}

TEST_F(LabNodePortTest, ANodeOnItsOwnPortIsReadyAndHoldsItsListener) {
  LabNode& n1 = StartNode("n1");
  ASSERT_TRUE(n1.Running());
  std::vector<uint64_t> inodes = ListeningSocketInodes(n1.port());
  ASSERT_FALSE(inodes.empty());
  EXPECT_TRUE(HoldsSocket(n1.pid(), inodes));
  EXPECT_FALSE(HoldsSocket(getpid(), inodes));
  EXPECT_EQ(SocketHolders(inodes), std::vector<pid_t>{n1.pid()});
}

}  // namespace
}  // namespace locklab::harness
