// A driver that finds its master through Sentinel (docs/driver-protocol.md, "Sentinel"): its
// hello's "sentinel" field is read, and a driver started by a client gets the Sentinel
// variables the harness gave that client (and none of the client's other LOCKLAB_ ones).
// No server: the driver here is a few lines of Python that answer with what they were given.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "locks/driver_lock.h"
#include "locks/driver_protocol.h"

namespace locklab::locks {
namespace {

TEST(DriverSentinelTest, HelloSentinelIsReadAndDefaultsToFalse) {
  DriverHello h;
  ASSERT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1})", &h), "");
  EXPECT_FALSE(h.sentinel) << "a driver gets fixed node addresses unless it asks";
  ASSERT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"sentinel":true})", &h), "");
  EXPECT_TRUE(h.sentinel);
  ASSERT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"sentinel":false})", &h), "");
  EXPECT_FALSE(h.sentinel);
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"sentinel":"yes"})", &h),
            "hello: field 'sentinel' must be true or false");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"sentinel":1})", &h),
            "hello: field 'sentinel' must be true or false");
}

// The client's environment as a driver sees it: the harness sets the Sentinel variables on the
// client process (trial_setup.cc), the client starts its driver (DriverLock).
class DriverSentinelEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/locklab-driver-sentinel-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // Every acquire fails with the driver's view of the LOCKLAB_ variables as its detail.
    driver_ = dir_ + "/env_driver.py";
    std::ofstream(driver_) << "#!/usr/bin/python3\n"
                              "import json, os, sys\n"
                              "def send(o):\n"
                              "    sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
                              "send({'hello': 'locklab-driver', 'protocol': 1, 'sentinel': True})\n"
                              "for line in sys.stdin:\n"
                              "    req = json.loads(line)\n"
                              "    env = {k: v for k, v in os.environ.items() if k.startswith('LOCKLAB_')}\n"
                              "    send({'id': req['id'], 'outcome': 'fail', 'detail': json.dumps(env)})\n";
    chmod(driver_.c_str(), 0755);
  }
  void TearDown() override {
    for (const char* name : kDriverSentinelEnv) unsetenv(name);
    unsetenv("LOCKLAB_HARNESS_ONLY");
    std::remove(driver_.c_str());
    rmdir(dir_.c_str());
  }
  // What the driver saw, from one acquire's detail ("driver: {...}").
  nlohmann::json DriverEnvironment() {
    LockConfig c;
    c.algorithm = std::string(kDriverPrefix) + driver_;
    c.nodes = {Endpoint{"127.0.0.1", 6390}};
    DriverOptions o;
    EXPECT_TRUE(ParseDriverOptions(c, &o).ok());
    DriverLock lock(c, o);
    Status ready = lock.WaitReady();
    EXPECT_TRUE(ready.ok()) << ready.message();
    EXPECT_TRUE(lock.hello().sentinel);
    LockResult r = lock.Acquire("lock:0", MonotonicNow() + Millis(5000));
    EXPECT_EQ(r.outcome, Outcome::kFail) << r.detail;
    const std::string prefix = "driver: ";
    EXPECT_EQ(r.detail.rfind(prefix, 0), 0u) << r.detail;
    return nlohmann::json::parse(r.detail.substr(std::min(r.detail.size(), prefix.size())), nullptr,
                                 false);
  }
  std::string dir_, driver_;
};

TEST_F(DriverSentinelEnvTest, TheClientsSentinelVariablesReachItsDriverAndNothingElseOfTheHarness) {
  setenv(kSentinelsEnv, "127.0.0.1:41001,127.0.0.1:41002,127.0.0.1:41003", 1);
  setenv(kSentinelMasterEnv, "locklab", 1);
  setenv(kNodeMapEnv, "127.0.0.1:7001=127.0.0.1:41011,127.0.0.1:7002=127.0.0.1:41012", 1);
  setenv("LOCKLAB_HARNESS_ONLY", "1", 1);  // any other LOCKLAB_ variable of the client's
  nlohmann::json env = DriverEnvironment();
  ASSERT_TRUE(env.is_object()) << env;
  EXPECT_EQ(env.value(kSentinelsEnv, ""), "127.0.0.1:41001,127.0.0.1:41002,127.0.0.1:41003");
  EXPECT_EQ(env.value(kSentinelMasterEnv, ""), "locklab");
  EXPECT_EQ(env.value(kNodeMapEnv, ""), "127.0.0.1:7001=127.0.0.1:41011,127.0.0.1:7002=127.0.0.1:41012");
  EXPECT_FALSE(env.contains("LOCKLAB_HARNESS_ONLY")) << "the client's own variables stay its own";
  EXPECT_EQ(env.value("LOCKLAB_NODES", ""), "127.0.0.1:6390") << "the nodes as always";
}

TEST_F(DriverSentinelEnvTest, WithoutSentinelsTheDriverGetsNone) {
  nlohmann::json env = DriverEnvironment();
  ASSERT_TRUE(env.is_object()) << env;
  for (const char* name : kDriverSentinelEnv) EXPECT_FALSE(env.contains(name)) << name;
  EXPECT_EQ(env.value("LOCKLAB_NODES", ""), "127.0.0.1:6390");
}

// The knob "hello" (a matrix hands each trial the hello it read for the row): a driver that
// still says it starts; one whose hello asks for other servers does not, saying what differs.
TEST_F(DriverSentinelEnvTest, AKnownHelloMustStillBeWhatTheDriverSays) {
  auto start = [&](const std::string& known) {
    LockConfig c;
    c.algorithm = std::string(kDriverPrefix) + driver_;
    c.nodes = {Endpoint{"127.0.0.1", 6390}};
    c.knobs = {{"hello", known}};
    DriverOptions o;
    Status parsed = ParseDriverOptions(c, &o);
    if (!parsed.ok()) return parsed;
    DriverLock lock(c, o);
    return lock.WaitReady();
  };
  EXPECT_TRUE(start(R"({"hello":"locklab-driver","protocol":1,"sentinel":true})").ok());
  Status s = start(R"({"hello":"locklab-driver","protocol":1})");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("its hello asks for other servers than the run was set up for "
                             "(sentinel true; the knob 'hello' is older than the driver: drop it)"),
            std::string::npos)
      << s.message();
  s = start(R"({"hello":"locklab-driver","protocol":1,"sentinel":true,"backend":"zookeeper","nodes":3})");
  EXPECT_NE(s.message().find("backend redis, not zookeeper, nodes unset, not 3"), std::string::npos)
      << s.message();
  s = start("not a hello");
  EXPECT_EQ(s.code(), Status::Code::kUsage) << s.message();
  EXPECT_NE(s.message().find("knob 'hello': first line is not a hello"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace locklab::locks
