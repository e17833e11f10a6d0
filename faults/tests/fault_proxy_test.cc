// The fault proxy observed from outside, against a real lab node: each link state does what
// it says to real Redis commands, per link.
#include "faults/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "locks/lock.h"
#include "tests/lab_fixture.h"

namespace locklab::faults {
namespace {

using locks::Endpoint;
using locks::Outcome;
using locks::RedisConnection;
using locks::Reply;

class FaultProxyTest : public testing::LabNodeTest {
 protected:
  void SetUp() override {
    LabNodeTest::SetUp();
    node_ = &StartNode();
    ASSERT_TRUE(proxy_.Start().ok());
    ASSERT_TRUE(proxy_.AddLink("c1", {"127.0.0.1", node_->port()}, &port1_).ok());
    ASSERT_TRUE(proxy_.AddLink("c2", {"127.0.0.1", node_->port()}, &port2_).ok());
  }
  void TearDown() override {
    proxy_.Stop();
    LabNodeTest::TearDown();
  }
  Reply Direct(std::vector<std::string> argv) {
    RedisConnection c(node_->endpoint(), Millis(500), Millis(500));
    return c.Command(argv);
  }
  harness::LabNode* node_ = nullptr;
  FaultProxy proxy_;
  int port1_ = 0, port2_ = 0;
};

TEST_F(FaultProxyTest, PassRelaysCommands) {
  RedisConnection c({"127.0.0.1", port1_}, Millis(200), Millis(200));
  EXPECT_EQ(c.Command({"SET", "k", "v"}).str, "OK");
  EXPECT_EQ(c.Command({"GET", "k"}).str, "v");
  EXPECT_GT(proxy_.BytesRelayed(), 0u);
}

TEST_F(FaultProxyTest, HeldLinkTimesOutWhileAnotherClientsLinkWorks) {
  RedisConnection c1({"127.0.0.1", port1_}, Millis(100), Millis(150));
  RedisConnection c2({"127.0.0.1", port2_}, Millis(100), Millis(150));
  ASSERT_EQ(c1.Command({"PING"}).str, "PONG");
  ASSERT_TRUE(proxy_.SetLink("c1", LinkState::BlackHole()).ok());
  Nanos t0 = MonotonicNow();
  Reply r = c1.Command({"SET", "held", "1"});
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << "a black hole is a timeout, never a fail";
  EXPECT_GE(MonotonicNow() - t0, Millis(140));
  EXPECT_EQ(c2.Command({"SET", "other", "1"}).str, "OK") << "c2's link is untouched";
  EXPECT_TRUE(Direct({"GET", "held"}).is_nil) << "held bytes have not reached the node";
  // Healing delivers what was held, as TCP retransmission would.
  ASSERT_TRUE(proxy_.SetLink("c1", LinkState::Pass()).ok());
  Reply got;
  for (int i = 0; i < 50 && (got = Direct({"GET", "held"})).is_nil; ++i) SleepFor(Millis(10));
  EXPECT_EQ(got.str, "1");
}

TEST_F(FaultProxyTest, ReplyLossRunsTheCommandButTheClientSeesUnknown) {
  locks::LockConfig cfg;
  cfg.algorithm = "set-nx-px-lua";
  cfg.nodes = {Endpoint{"127.0.0.1", port1_}};
  cfg.ttl = Millis(10000);
  cfg.command_timeout = Millis(150);
  std::unique_ptr<locks::Lock> lock;
  ASSERT_TRUE(locks::MakeLock(cfg, &lock).ok());
  LinkState st;
  st.down = Direction::kDiscard;
  ASSERT_TRUE(proxy_.SetLink("c1", st).ok());
  locks::LockResult r = lock->Acquire("lock:x", MonotonicNow() + Millis(100));
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.detail;
  Reply v = Direct({"GET", "lock:x"});
  EXPECT_FALSE(v.is_nil) << "the SET ran on the node";
  EXPECT_EQ(v.str.size(), 32u);
}

// A raw pipelined RESP client (as node-redis and ioredis are: replies matched to commands by
// order): a reply lost under reply-loss must never be followed, on the same connection, by
// the next command's reply, which the client would take for the lost one. The connection
// breaks instead, when the window ends; a new one works.
TEST_F(FaultProxyTest, ReplyLossBreaksTheConnectionInsteadOfShiftingReplies) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port1_));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  // What arrives on fd within `ms` ("" when nothing; "<closed>" when the connection broke).
  auto read_for = [&](int ms) {
    std::string got;
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, ms) > 0) {
      char buf[256];
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return got + "<closed>";
      got.append(buf, static_cast<size_t>(n));
      ms = 50;
    }
    return got;
  };
  auto send_all = [&](const std::string& bytes) { return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL); };
  send_all("*2\r\n$4\r\nECHO\r\n$5\r\nfirst\r\n");
  EXPECT_EQ(read_for(1000), "$5\r\nfirst\r\n");
  LinkState st;
  st.down = Direction::kDiscard;
  ASSERT_TRUE(proxy_.SetLink("c1", st).ok());
  send_all("*3\r\n$3\r\nSET\r\n$4\r\nlost\r\n$1\r\n1\r\n");  // runs; its +OK is lost
  EXPECT_EQ(read_for(300), "") << "the reply is lost: the client times out";
  for (int i = 0; i < 50 && Direct({"GET", "lost"}).is_nil; ++i) SleepFor(Millis(10));
  EXPECT_EQ(Direct({"GET", "lost"}).str, "1") << "the request ran on the node";
  const uint64_t resets = proxy_.Counters("c1").resets;
  ASSERT_TRUE(proxy_.SetLink("c1", LinkState::Pass()).ok());
  send_all("*2\r\n$4\r\nECHO\r\n$4\r\nnext\r\n");
  const std::string after = read_for(1000);
  EXPECT_EQ(after.find("next"), std::string::npos) << "the next command's reply came on the gap: " << after;
  EXPECT_NE(after.find("<closed>"), std::string::npos) << after;
  EXPECT_EQ(proxy_.Counters("c1").resets, resets + 1);
  close(fd);
  // A connection that lost nothing goes on, and a new one works.
  RedisConnection fresh({"127.0.0.1", port1_}, Millis(500), Millis(500));
  EXPECT_EQ(fresh.Command({"PING"}).str, "PONG");
}

TEST_F(FaultProxyTest, DelayHoldsEveryChunkThatLong) {
  RedisConnection c({"127.0.0.1", port1_}, Millis(500), Millis(1000));
  ASSERT_EQ(c.Command({"PING"}).str, "PONG");
  LinkState st;
  st.up = Direction::kDelay;
  st.delay = Millis(300);
  ASSERT_TRUE(proxy_.SetLink("c1", st).ok());
  Nanos t0 = MonotonicNow();
  EXPECT_EQ(c.Command({"PING"}).str, "PONG");
  Nanos took = MonotonicNow() - t0;
  EXPECT_GE(took, Millis(290));
  EXPECT_LT(took, Millis(900));
}

TEST_F(FaultProxyTest, DelayedWriteLandsAfterTheClientGaveUp) {
  // The client times out and drops the connection; the write still arrives, late.
  RedisConnection c({"127.0.0.1", port1_}, Millis(200), Millis(100));
  ASSERT_EQ(c.Command({"PING"}).str, "PONG");
  LinkState st;
  st.up = Direction::kDelay;
  st.delay = Millis(300);
  ASSERT_TRUE(proxy_.SetLink("c1", st).ok());
  EXPECT_EQ(c.Command({"SET", "late", "1"}).outcome, Outcome::kUnknown);
  ASSERT_TRUE(proxy_.SetLink("c1", LinkState::Pass()).ok());
  EXPECT_TRUE(Direct({"GET", "late"}).is_nil) << "not yet";
  SleepFor(Millis(400));
  EXPECT_EQ(Direct({"GET", "late"}).str, "1") << "delivered after the delay";
}

TEST_F(FaultProxyTest, ResetClosesConnectionsAndRefusesNewOnes) {
  RedisConnection c({"127.0.0.1", port1_}, Millis(200), Millis(200));
  ASSERT_EQ(c.Command({"PING"}).str, "PONG");
  LinkState st;
  st.reset = true;
  ASSERT_TRUE(proxy_.SetLink("c1", st).ok());
  SleepFor(Millis(20));
  Reply r = c.Command({"PING"});
  EXPECT_NE(r.outcome, Outcome::kOk);
  ASSERT_TRUE(proxy_.SetLink("c1", LinkState::Pass()).ok());
  EXPECT_EQ(c.Command({"PING"}).str, "PONG") << "reconnects after the reset is lifted";
}

TEST_F(FaultProxyTest, SetLinkOnAnUnknownLinkIsNamed) {
  Status s = proxy_.SetLink("c9", LinkState::Pass());
  EXPECT_EQ(s.message(), "fault proxy: no link 'c9'");
}

}  // namespace
}  // namespace locklab::faults
