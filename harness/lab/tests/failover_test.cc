// Failover observed from outside, with real redis-sentinel processes: a write acknowledged
// by the master while the replication link is cut is missing on the promoted replica, and
// a Sentinel-aware client finds the new master through its own proxy link.
#include "harness/lab/sentinel_topology.h"
#include "locks/redis_connection.h"
#include "tests/lab_fixture.h"

namespace locklab::harness {
namespace {

using locks::Endpoint;
using locks::RedisConnection;

class FailoverTest : public testing::LabNodeTest {
 protected:
  void TearDown() override {
    locks::SetEndpointResolver(nullptr);
    topology_.reset();
    proxy_.Stop();
    LabNodeTest::TearDown();
  }
  locks::Reply Get(LabNode& n, const std::string& key) {
    RedisConnection c(n.endpoint(), Millis(300), Millis(300));
    return c.Command({"GET", key});
  }
  faults::FaultProxy proxy_;
  std::unique_ptr<SentinelTopology> topology_;
};

TEST_F(FailoverTest, UnreplicatedWriteIsLostAndClientsFollowTheNewMaster) {
  LabNode& master = StartNode("n1");
  ASSERT_TRUE(proxy_.Start().ok());
  topology_ = std::make_unique<SentinelTopology>(dir_, paths_, &proxy_);
  Status s = topology_->Start(master);
  ASSERT_TRUE(s.ok()) << s.message();
  LabNode& replica = topology_->replica();

  // The client's own links to both nodes, and the Sentinel resolver over them.
  int to_master = 0, to_replica = 0;
  ASSERT_TRUE(proxy_.AddLink("c1-n1", {"127.0.0.1", master.port()}, &to_master).ok());
  ASSERT_TRUE(proxy_.AddLink("c1-r1", {"127.0.0.1", replica.port()}, &to_replica).ok());
  locks::SetEndpointResolver(MakeSentinelResolver(
      topology_->sentinels(), SentinelTopology::kMasterName,
      {{topology_->monitored_master().ToString(), Endpoint{"127.0.0.1", to_master}},
       {replica.endpoint().ToString(), Endpoint{"127.0.0.1", to_replica}}}));
  RedisConnection client({"127.0.0.1", to_master}, Millis(200), Millis(300));

  ASSERT_EQ(client.Command({"SET", "before", "1"}).str, "OK");
  RedisConnection direct_replica(replica.endpoint(), Millis(300), Millis(300));
  locks::Reply r;
  for (int i = 0; i < 100 && (r = direct_replica.Command({"GET", "before"})).is_nil; ++i) {
    SleepFor(Millis(10));
  }
  ASSERT_EQ(r.str, "1") << "replication works before the cut";

  ASSERT_TRUE(topology_->CutReplication(true).ok());
  ASSERT_EQ(client.Command({"SET", "lock:x", "owner-1", "NX", "PX", "30000"}).str, "OK")
      << "the master acknowledges the lock";
  SleepFor(Millis(100));
  master.Kill();

  s = topology_->WaitForMaster(replica.endpoint(), Millis(20000));
  ASSERT_TRUE(s.ok()) << s.message();
  // Fresh connections: the promotion kills normal clients of the replica (CLIENT KILL).
  EXPECT_TRUE(Get(replica, "lock:x").is_nil) << "the acknowledged write never reached the new master";
  EXPECT_EQ(Get(replica, "before").str, "1");

  // The client's connection died with the master; it reconnects through Sentinel.
  locks::Reply w;
  for (int i = 0; i < 20; ++i) {
    w = client.Command({"SET", "lock:x", "owner-2", "NX", "PX", "30000"});
    if (w.outcome == locks::Outcome::kOk && w.str == "OK") break;
    SleepFor(Millis(100));
  }
  EXPECT_EQ(w.str, "OK") << "a second owner takes the same lock on the new master";
  EXPECT_EQ(Get(replica, "lock:x").str, "owner-2");
}

}  // namespace
}  // namespace locklab::harness
