// A lab node's server kind (NodeOptions::kind, a locks::Backend): a lock's backend word
// becomes a Backend once (ParseServerKind), which refuses any other word before a server
// starts; each kind names the program a message shows.
#include <gtest/gtest.h>

#include <string>

#include "lab/lab_cluster.h"

namespace locklab::harness {
namespace {

TEST(LabClusterKind, AnUnknownWordIsRefusedWithTheNodeAndTheWord) {
  for (const std::string word : {"mongodb", "Redis", ""}) {
    locks::Backend kind = locks::Backend::kEtcd;
    Status s = ParseServerKind(word, &kind);
    EXPECT_EQ(s.code(), Status::Code::kUsage) << "'" << word << "'";
    EXPECT_EQ(s.message(), "node n1: unknown server kind '" + word + "'");
    EXPECT_EQ(kind, locks::Backend::kEtcd) << "a refused word leaves the kind as it was";
  }
}

TEST(LabClusterKind, EveryBackendWordIsAServerKind) {
  for (locks::Backend backend : locks::AllBackends()) {
    locks::Backend kind = backend == locks::Backend::kRedis ? locks::Backend::kEtcd
                                                            : locks::Backend::kRedis;
    Status s = ParseServerKind(locks::BackendName(backend), &kind);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(kind, backend) << locks::BackendName(backend);
  }
}

TEST(LabClusterKind, EachKindNamesItsProgram) {
  const std::pair<locks::Backend, std::string> expected[] = {
      {locks::Backend::kRedis, "redis-server"}, {locks::Backend::kMariadb, "mariadbd"},
      {locks::Backend::kPostgres, "postgres"},  {locks::Backend::kEtcd, "etcd"},
      {locks::Backend::kZookeeper, "zookeeper"},
  };
  for (const auto& [kind, program] : expected) {
    NodeOptions o;
    o.name = "n1";
    o.kind = kind;
    LabNode node(o, "/nonexistent/locklab-kind-test/n1", LabPaths{});
    EXPECT_EQ(node.kind(), kind);
    EXPECT_EQ(node.program(), program);
  }
  NodeOptions sentinel;
  sentinel.sentinel = true;
  EXPECT_EQ(LabNode(sentinel, "/nonexistent/locklab-kind-test/s1", LabPaths{}).program(),
            "redis-sentinel");
  EXPECT_EQ(NodeOptions{}.kind, locks::Backend::kRedis) << "a node is a Redis unless told";
}

}  // namespace
}  // namespace locklab::harness
