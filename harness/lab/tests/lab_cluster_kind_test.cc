// A lab node's server kind (NodeOptions::kind, a locks::Backend; the word a lock or a
// driver's hello gives becomes one where it is read, locks/backend.h): each kind names the
// program a message shows.
#include <gtest/gtest.h>

#include <string>

#include "harness/lab/lab_cluster.h"

namespace locklab::harness {
namespace {

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
