// Node faults observed from outside: libfaketime clock steps on a serving lab node, and
// kill -9 restarts with and without persistence.
#include "harness/lab/lab_cluster.h"
#include "locks/redis_connection.h"
#include "tests/lab_fixture.h"

namespace locklab::harness {
namespace {

using locks::RedisConnection;

class NodeFaultTest : public testing::LabNodeTest {
 protected:
  locks::Reply Cmd(LabNode& n, std::vector<std::string> argv) {
    RedisConnection c(n.endpoint(), Millis(500), Millis(500));
    return c.Command(argv);
  }
  LabNode& StartWith(const std::string& name, std::vector<std::string> args) {
    NodeOptions o;
    o.name = name;
    o.extra_args = std::move(args);
    nodes_.push_back(std::make_unique<LabNode>(o, dir_ + "/" + name, paths_));
    Status s = nodes_.back()->Start();
    EXPECT_TRUE(s.ok()) << s.message();
    return *nodes_.back();
  }
};

TEST_F(NodeFaultTest, ForwardJumpExpiresAKeyAtOnce) {
  LabNode& n = StartNode();
  ASSERT_EQ(Cmd(n, {"SET", "k", "v", "PX", "10000"}).str, "OK");
  ASSERT_TRUE(n.clock().Set("+20s").ok());
  SleepFor(Millis(20));
  EXPECT_TRUE(Cmd(n, {"GET", "k"}).is_nil) << "the server's clock passed the expiry";
}

TEST_F(NodeFaultTest, BackwardJumpKeepsAKeyLonger) {
  LabNode& n = StartNode();
  ASSERT_EQ(Cmd(n, {"SET", "k", "v", "PX", "300"}).str, "OK");
  ASSERT_TRUE(n.clock().Set("-30s").ok());
  SleepFor(Millis(600));
  EXPECT_EQ(Cmd(n, {"GET", "k"}).str, "v") << "300 ms of real time are -29.7 s on the node";
  long long pttl = Cmd(n, {"PTTL", "k"}).integer;
  EXPECT_GT(pttl, 29000);
  ASSERT_TRUE(n.clock().Set("+0").ok());
  SleepFor(Millis(20));
  EXPECT_TRUE(Cmd(n, {"GET", "k"}).is_nil) << "back at real time the key is long expired";
}

TEST_F(NodeFaultTest, RestartWithoutPersistenceLosesKeys) {
  LabNode& n = StartNode();
  ASSERT_EQ(Cmd(n, {"SET", "k", "v"}).str, "OK");
  int port = n.port();
  Status s = n.Restart();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(n.port(), port);
  EXPECT_TRUE(Cmd(n, {"GET", "k"}).is_nil);
}

TEST_F(NodeFaultTest, RestartWithAppendfsyncAlwaysKeepsKeys) {
  LabNode& n = StartWith("aof", {"--appendonly", "yes", "--appendfsync", "always"});
  ASSERT_EQ(Cmd(n, {"SET", "k", "v"}).str, "OK");
  Status s = n.Restart();  // SIGKILL: no shutdown save, only the AOF survives
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Cmd(n, {"GET", "k"}).str, "v");
}

// What the memory-full fault relies on: with maxmemory below use and noeviction, a lock's
// SET gets a definite error reply, while its release (DEL, the Lua compare-and-delete) and
// renewal (PEXPIRE) still run; and maxmemory 0 lifts it.
TEST_F(NodeFaultTest, MaxmemoryBelowUseRefusesSetsButNotReleases) {
  LabNode& n = StartNode();
  ASSERT_EQ(Cmd(n, {"SET", "held", "t1", "PX", "10000"}).str, "OK");
  ASSERT_EQ(Cmd(n, {"CONFIG", "SET", "maxmemory-policy", "noeviction"}).str, "OK");
  ASSERT_EQ(Cmd(n, {"CONFIG", "SET", "maxmemory", "1"}).str, "OK");
  locks::Reply set = Cmd(n, {"SET", "k", "t2", "NX", "PX", "10000"});
  EXPECT_TRUE(set.is_error);
  EXPECT_EQ(set.str.rfind("OOM", 0), 0u) << set.str;
  EXPECT_EQ(Cmd(n, {"PEXPIRE", "held", "20000"}).integer, 1);
  locks::Reply lua = Cmd(n, {"EVAL",
                              "if redis.call('get', KEYS[1]) == ARGV[1] then "
                              "return redis.call('del', KEYS[1]) else return 0 end",
                              "1", "held", "t1"});
  EXPECT_FALSE(lua.is_error) << lua.str;
  EXPECT_EQ(lua.integer, 1);
  ASSERT_EQ(Cmd(n, {"CONFIG", "SET", "maxmemory", "0"}).str, "OK");
  EXPECT_EQ(Cmd(n, {"SET", "k", "t2", "NX", "PX", "10000"}).str, "OK");
}

}  // namespace
}  // namespace locklab::harness
