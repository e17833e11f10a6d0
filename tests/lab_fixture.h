// Test fixture: a private lab node (the real lab Redis) on a free loopback port in a temp
// directory, killed when the test ends (hiredis/redis habit: integration tests start their
// own server). Tests fail, never skip, when the lab Redis is missing.
#pragma once

#include <stdlib.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/lab_cluster.h"
#include "harness/process.h"
#include "locks/lock.h"

namespace locklab::testing {

inline std::string MakeTempDir(const std::string& prefix = "locklab-test") {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  char* d = mkdtemp(tmpl.data());
  return d ? std::string(d) : std::string();
}

class LabNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(harness::LabPaths::Discover(&paths_).ok())
        << "lab Redis missing: run ./locklab setup";
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    nodes_.clear();  // kills them
    // LOCKLAB_KEEP_TEST_DIRS=1 keeps the nodes' directories and logs for a post-mortem.
    if (!dir_.empty() && getenv("LOCKLAB_KEEP_TEST_DIRS") == nullptr) {
      (void)!system(("rm -rf " + dir_).c_str());
    }
  }
  harness::LabNode& StartNode(const std::string& name = "n1") {
    harness::NodeOptions o;
    o.name = name;
    nodes_.push_back(std::make_unique<harness::LabNode>(o, dir_ + "/" + name, paths_));
    auto st = nodes_.back()->Start();
    EXPECT_TRUE(st.ok()) << st.message();
    return *nodes_.back();
  }

  // A lock built from `config`; the test fails (not crashes) when the config is refused.
  std::unique_ptr<locks::Lock> BuildLock(const locks::LockConfig& config) {
    std::unique_ptr<locks::Lock> lock;
    Status s = locks::MakeLock(config, &lock);
    EXPECT_TRUE(s.ok()) << s.message();
    return lock;
  }
  // One command on a fresh connection to `e` (500 ms timeouts).
  locks::Reply Cmd(const locks::Endpoint& e, std::vector<std::string> argv) {
    locks::RedisConnection c(e, Millis(500), Millis(500));
    return c.Command(argv);
  }

  harness::LabPaths paths_;
  std::string dir_;
  std::vector<std::unique_ptr<harness::LabNode>> nodes_;
};

}  // namespace locklab::testing
