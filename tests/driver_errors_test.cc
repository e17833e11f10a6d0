// driver:PATH locks at the edges: bad input names the flag or file:line:field and exits 64+
// before any server starts; and the client process's driver really is in its process group
// (a group SIGSTOP freezes it, a pause point stops it with the client, a group SIGKILL or
// the client's own death kills it, SIGTERM ends it cleanly).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

const std::string kPyDriver =
    std::string(LOCKLAB_SOURCE_DIR) + "/examples/drivers/redis_py_lock.py";

class DriverInputTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("locklab-drv"); }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }
  Invocation Locklab(std::vector<std::string> args) {
    args.push_back("--out");
    args.push_back(dir_ + "/runs");
    return RunLocklab(args, dir_);
  }
  void ExpectNoRun() {
    EXPECT_EQ(access((dir_ + "/runs").c_str(), F_OK), -1) << "no run was started";
  }
  std::string dir_;
};

TEST_F(DriverInputTest, MissingDriverProgramIsAUsageErrorNamingTheFlag) {
  Invocation inv = Locklab({"run", "--lock", "driver:/nonexistent/drv.py", "--no-report"});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(inv.output,
            "locklab run: flag --lock: lock driver '/nonexistent/drv.py': no such file "
            "(looked in the current directory)\n");
  ExpectNoRun();
}

TEST_F(DriverInputTest, NonExecutableDriverIsAUsageError) {
  std::string path = dir_ + "/drv.py";
  std::ofstream(path) << "print('hi')\n";
  chmod(path.c_str(), 0644);
  Invocation inv = Locklab({"run", "--lock", "driver:" + path, "--no-report"});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_NE(inv.output.find("flag --lock: lock driver '" + path + "': not executable"),
            std::string::npos)
      << inv.output;
  ExpectNoRun();
}

TEST_F(DriverInputTest, DriverArgWithoutADriverLockIsAUsageError) {
  Invocation inv = Locklab({"run", "--lock", "setnx", "--driver-arg", "x", "--no-report"});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(inv.output, "locklab run: flag --driver-arg: only with --lock driver:PATH\n");
}

TEST_F(DriverInputTest, ScenarioFileWithAMissingDriverNamesFileLineAndField) {
  std::string path = dir_ + "/s.toml";
  std::ofstream(path) << "name = \"x\"\n[lock]\nid = \"driver:examples/drivers/nope.py\"\n";
  Invocation inv = Locklab({"run", path, "--no-report"});
  EXPECT_EQ(inv.exit_code, 65) << inv.output;
  EXPECT_NE(inv.output.find("locklab " + path +
                            ":3: field 'lock.id': lock driver "
                            "'examples/drivers/nope.py': no such file"),
            std::string::npos)
      << inv.output;
  ExpectNoRun();
}

TEST_F(DriverInputTest, ScenarioDriverArgsMustBeStrings) {
  std::string path = dir_ + "/s.toml";
  std::ofstream(path) << "[lock]\nid = \"driver:examples/drivers/redis_py_lock.py\"\n"
                         "driver_args = [\"--sleep-ms\", 10]\n";
  Invocation inv = Locklab({"run", path, "--no-report"});
  EXPECT_EQ(inv.exit_code, 65) << inv.output;
  EXPECT_EQ(inv.output,
            "locklab " + path + ":3: field 'lock.driver_args': expected an array of strings\n");
}

TEST_F(DriverInputTest, MatrixRefusesAMissingDriverAndAStrayDriverArg) {
  Invocation a = Locklab({"matrix", "--lock", "driver:/nonexistent/x", "--no-report"});
  EXPECT_EQ(a.exit_code, 64) << a.output;
  EXPECT_NE(
      a.output.find("locklab matrix: flag --lock: lock driver '/nonexistent/x': no such file"),
      std::string::npos)
      << a.output;
  Invocation b = Locklab({"matrix", "--driver-arg", "x", "--no-report"});
  EXPECT_EQ(b.exit_code, 64) << b.output;
  EXPECT_EQ(b.output, "locklab matrix: flag --driver-arg: must follow --lock driver:PATH\n");
  ExpectNoRun();
}

// /proc/PID/stat: state (field 3) and process group (field 5).
char StateOf(pid_t pid) {
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || stat.size() < close + 2 ? '?' : stat[close + 2];
}
pid_t GroupOf(pid_t pid) {
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t ppid = 0, pgrp = 0;
  in >> state >> ppid >> pgrp;
  return pgrp;
}
bool WaitFor(const std::function<bool()>& cond, Millis timeout = Millis(5000)) {
  Nanos end = MonotonicNow() + timeout;
  while (MonotonicNow() < end) {
    if (cond()) return true;
    SleepFor(Millis(10));
  }
  return cond();
}

// A `locklab client` with the redis-py example driver, started the way the harness starts
// clients (own process group, control pipe on stdin).
class DriverProcessTest : public LabNodeTest {
 protected:
  void SetUp() override {
    LabNodeTest::SetUp();
    node_ = &StartNode();
    int in[2];
    ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
    harness::SpawnOptions so;
    std::string ep = node_->endpoint().ToString();
    so.argv = {LOCKLAB_BINARY, "client", "--process", "1", "--lock", "driver:" + kPyDriver,
               "--node", ep, "--resource", ep, "--workload.hold_ms", "30",
               "--workload.think_ms", "10", "--lock.ttl_ms", "2000"};
    so.stdin_fd = in[0];
    so.log_path = dir_ + "/client.log";
    ASSERT_TRUE(harness::Spawn(so, &client_).ok());
    close(in[0]);
    control_ = in[1];
    // The harness's start signal, sent once the client said its lock is ready (its driver's
    // hello came): the tests' own waits below then never include python3's start-up (seconds
    // on a loaded machine).
    ASSERT_TRUE(WaitFor(
        [&] {
          return ReadAll(dir_ + "/client.log").find("\"ctl\":\"ready\"") != std::string::npos;
        },
        Millis(60000)))
        << ReadAll(dir_ + "/client.log");
    ASSERT_EQ(write(control_, "go\n", 3), 3);
    std::string children =
        "/proc/" + std::to_string(client_) + "/task/" + std::to_string(client_) + "/children";
    ASSERT_TRUE(WaitFor([&] { return !ReadAll(children).empty(); }))
        << ReadAll(dir_ + "/client.log");
    driver_ = std::stoi(ReadAll(children));
    ASSERT_GT(driver_, 0);
  }
  void TearDown() override {
    if (client_ > 0) harness::KillAndReap(client_);
    if (control_ >= 0) close(control_);
    LabNodeTest::TearDown();
  }
  harness::LabNode* node_ = nullptr;
  pid_t client_ = -1, driver_ = -1;
  int control_ = -1;
};

TEST_F(DriverProcessTest, DriverIsInTheClientsGroupAndAGroupStopFreezesIt) {
  EXPECT_EQ(GroupOf(driver_), client_);
  kill(-client_, SIGSTOP);
  EXPECT_TRUE(WaitFor([&] { return StateOf(driver_) == 'T'; })) << StateOf(driver_);
  kill(-client_, SIGCONT);
  EXPECT_TRUE(WaitFor([&] { return StateOf(driver_) != 'T'; }));
}

TEST_F(DriverProcessTest, PausePointStopsTheDriverWithTheClient) {
  std::string arm = "arm after-acquire pause\n";
  ASSERT_EQ(write(control_, arm.data(), arm.size()), static_cast<ssize_t>(arm.size()));
  EXPECT_TRUE(WaitFor([&] { return StateOf(client_) == 'T'; }));
  EXPECT_TRUE(WaitFor([&] { return StateOf(driver_) == 'T'; })) << StateOf(driver_);
  kill(-client_, SIGCONT);
}

TEST_F(DriverProcessTest, GroupKillKillsTheDriver) {
  kill(-client_, SIGKILL);
  harness::KillAndReap(client_);
  client_ = -1;
  EXPECT_TRUE(WaitFor([&] { return !PidExists(driver_); }))
      << "driver " << driver_ << " left behind";
}

TEST_F(DriverProcessTest, ClientDeathAloneKillsTheDriver) {
  kill(client_, SIGKILL);  // not the group: PR_SET_PDEATHSIG must do it
  EXPECT_TRUE(WaitFor([&] { return !PidExists(driver_); }))
      << "driver " << driver_ << " left behind";
}

TEST_F(DriverProcessTest, SigtermEndsClientAndDriverCleanly) {
  kill(client_, SIGTERM);
  int status = 0;
  EXPECT_TRUE(harness::WaitExit(client_, Millis(5000), &status));
  client_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(WaitFor([&] { return !PidExists(driver_); }, Millis(2000)));
  EXPECT_NE(ReadAll(dir_ + "/client.log").find("stdin closed: exiting"), std::string::npos)
      << "the driver should end on EOF, not be killed";
}

}  // namespace
}  // namespace locklab::testing
