// Test fixture: a private lab node (the real lab Redis) on a free loopback port in a temp
// directory, killed when the test ends (hiredis/redis habit: integration tests start their
// own server). Tests fail, never skip, when the lab Redis is missing.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <iostream>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "locks/lock.h"

namespace locklab::testing {

inline bool PathExists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

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
    return StartServer(locks::Backend::kRedis, name);
  }
  // A lab node of another server kind (MariaDB, Postgres; harness/lab/lab_servers.h), with its
  // start-up time on stderr.
  harness::LabNode& StartServer(locks::Backend kind, const std::string& name) {
    harness::NodeOptions o;
    o.name = name;
    o.kind = kind;
    nodes_.push_back(std::make_unique<harness::LabNode>(o, dir_ + "/" + name, paths_));
    Nanos t0 = MonotonicNow();
    auto st = nodes_.back()->Start();
    EXPECT_TRUE(st.ok()) << st.message();
    if (kind != locks::Backend::kRedis) {
      std::cerr << locks::BackendName(kind) << " ready in " << ToMillis(MonotonicNow() - t0)
                << " ms\n";
    }
    return *nodes_.back();
  }
  // The config of lock `algorithm` on node `n` alone, with 1 s connect and statement bounds:
  // a database session is a new server process or thread, and a loaded machine must not
  // turn a test's grant or refusal into an unknown.
  static locks::LockConfig ConfigOn(const std::string& algorithm, const harness::LabNode& n) {
    locks::LockConfig c;
    c.algorithm = algorithm;
    c.nodes = {n.endpoint()};
    c.connect_timeout = c.command_timeout = Millis(1000);
    return c;
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
