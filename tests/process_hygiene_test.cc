// Process hygiene and bad bytes, on real processes through the `locklab` binary:
// a lock driver whose grandchildren ignore SIGTERM or call setsid leaves nothing after a
// run or after the hello probe (the test is the children's subreaper, as
// hostile_user_tests is: an orphan anyone left is reparented here and counted); a driver
// that prints a 0xFF byte, or nests an answer 30,000 arrays deep, makes that operation
// unknown and the run goes on; a hello whose name is not UTF-8 is a failed start with one
// line; a history nested 100,000 arrays deep is exit 65 with one line in check and report;
// two concurrent `cluster up` leave one cluster, `down` leaves nothing, and a stale
// state.json never gets a stranger that reused a pid killed.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

const std::string kDrivers = std::string(LOCKLAB_SOURCE_DIR) + "/tests/drivers/";


class HygieneTest : public TempDirTest {
 protected:
  HygieneTest() : TempDirTest("locklab-hygiene") {}
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    ASSERT_TRUE(LiveChildren().empty()) << "a child of an earlier test is still running";
  }
  // After a locklab exited: within 3 s, nothing it started is left. Returns how many were.
  size_t ExpectNoOrphans() {
    std::vector<pid_t> left;
    for (Nanos end = MonotonicNow() + Millis(3000); MonotonicNow() < end; SleepFor(Millis(50))) {
      left = LiveChildren();
      if (left.empty()) return 0;
    }
    for (pid_t p : left) {
      ADD_FAILURE() << "left behind: pid " << p << " "
                    << ReadAll("/proc/" + std::to_string(p) + "/cmdline");
      kill(p, SIGKILL);
    }
    LiveChildren();  // reaps them
    return left.size();
  }
  // The lines "ROLE PID PPID PGID SID" orphaning_driver.py wrote to `path`.
  std::vector<std::vector<int>> Reported(const std::string& path, const std::string& role) {
    std::vector<std::vector<int>> out;
    for (const auto& l : Lines(ReadAll(path))) {
      std::istringstream in(l);
      std::string r;
      std::vector<int> v(4);
      in >> r >> v[0] >> v[1] >> v[2] >> v[3];
      if (r == role) out.push_back(v);
    }
    return out;
  }
  std::vector<nlohmann::json> History(const std::string& run_dir) {
    std::vector<nlohmann::json> out;
    for (const auto& l : Lines(ReadAll(run_dir + "/history.jsonl"))) {
      out.push_back(nlohmann::json::parse(l, nullptr, false));
    }
    return out;
  }
};

// A 4 s run of 2 clients whose driver starts a child and a grandchild before its hello and
// at each of its first two acquires; the grandchildren ignore SIGTERM (and call setsid).
class DriverTreeTest : public HygieneTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DriverTreeTest, ARunLeavesNoProcessOfTheDriversTree) {
  const std::string report = dir_ + "/tree.txt";
  Invocation inv = RunLocklab(
      {"run", "--lock", "driver:" + kDrivers + "orphaning_driver.py", "--driver-arg",
       "--grandchild", "--driver-arg", GetParam(), "--driver-arg", "--report", "--driver-arg",
       report, "--fault", "none", "--duration", "4s", "--clients", "2", "--ttl", "500",
       "--no-report", "--out", dir_ + "/runs"},
      dir_, Millis(60000));
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  EXPECT_FALSE(RunDirOf(inv).empty()) << inv.output;
  // The probe's driver and the two clients' drivers each started a tree before their hello
  // (and more at their first acquires).
  auto grandchildren = Reported(report, "grandchild");
  EXPECT_GE(grandchildren.size(), 3u) << ReadAll(report);
  if (std::string(GetParam()) == "setsid") {
    for (const auto& g : grandchildren) EXPECT_EQ(g[3], g[0]) << "it leads a session of its own";
  }
  EXPECT_EQ(ExpectNoOrphans(), 0u);
  for (const auto& g : grandchildren) EXPECT_FALSE(PidExists(g[0])) << "grandchild " << g[0];
}

INSTANTIATE_TEST_SUITE_P(Grandchildren, DriverTreeTest, ::testing::Values("sigterm", "setsid"),
                         [](const auto& info) { return std::string(info.param); });

// A client SIGKILLed by the client-crash fault cannot sweep its driver's tree: its setsid
// grandchildren carry the run's mark (LOCKLAB_RUN_MARK), and the harness kills them.
TEST_F(HygieneTest, ACrashedClientsDriverTreeLeavesNothing) {
  const std::string report = dir_ + "/tree.txt";
  Invocation inv = RunLocklab(
      {"run", "--lock", "driver:" + kDrivers + "orphaning_driver.py", "--driver-arg",
       "--grandchild", "--driver-arg", "setsid", "--driver-arg", "--report", "--driver-arg",
       report, "--fault", "client-crash", "--duration", "4s", "--clients", "2", "--ttl", "500",
       "--no-report", "--out", dir_ + "/runs"},
      dir_, Millis(60000));
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  std::string run_dir = RunDirOf(inv);
  ASSERT_FALSE(run_dir.empty()) << inv.output;
  bool crashed = false;
  for (const auto& e : History(run_dir)) {
    crashed = crashed || (e.is_object() && e["process"] == "nemesis" && e.value("f", "") == "start" &&
                          e.value("key", "") == "client-crash");
  }
  EXPECT_TRUE(crashed) << "the fault never crashed a client";
  EXPECT_GE(Reported(report, "grandchild").size(), 3u) << ReadAll(report);
  EXPECT_EQ(ExpectNoOrphans(), 0u);
  for (const auto& g : Reported(report, "grandchild")) EXPECT_FALSE(PidExists(g[0])) << "grandchild " << g[0];
}

// The hello probe alone (its hello is bad, so the run is refused before any client starts):
// the driver ran in a process group of its own, not the harness's, and its tree is gone.
TEST_F(HygieneTest, TheHelloProbeLeavesNothingAndRunsOutsideTheHarnessGroup) {
  const std::string report = dir_ + "/tree.txt";
  Invocation inv = RunLocklab(
      {"run", "--lock", "driver:" + kDrivers + "orphaning_driver.py", "--driver-arg",
       "--grandchild", "--driver-arg", "setsid", "--driver-arg", "--hello", "--driver-arg",
       "bad", "--driver-arg", "--report", "--driver-arg", report, "--no-report", "--out",
       dir_ + "/runs"},
      dir_, Millis(30000));
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(Lines(inv.output).size(), 1u) << inv.output;
  auto drivers = Reported(report, "driver");
  ASSERT_EQ(drivers.size(), 1u) << ReadAll(report);
  EXPECT_EQ(drivers[0][1], inv.pid) << "the harness probed it";
  EXPECT_NE(drivers[0][2], inv.pid) << "not in the harness's process group";
  EXPECT_EQ(drivers[0][2], drivers[0][0]) << "it leads a group of its own";
  auto grandchildren = Reported(report, "grandchild");
  EXPECT_EQ(grandchildren.size(), 1u) << ReadAll(report);
  EXPECT_EQ(ExpectNoOrphans(), 0u);
  for (const auto& g : grandchildren) EXPECT_FALSE(PidExists(g[0])) << "grandchild " << g[0];
}

// A driver that answers every third request with bytes that break the protocol: the
// operation is unknown with a reason, the driver is replaced, the run goes on.
class BadBytesTest : public HygieneTest,
                     public ::testing::WithParamInterface<std::pair<const char*, const char*>> {};

TEST_P(BadBytesTest, TheOperationIsUnknownAndTheRunGoesOn) {
  const auto [mode, reason] = GetParam();
  Invocation inv = RunLocklab(
      {"run", "--lock", "driver:" + kDrivers + "misbehaving_driver.py", "--driver-arg",
       "--every", "--driver-arg", "3", "--driver-arg", "--mode", "--driver-arg", mode,
       "--fault", "none", "--duration", "5s", "--clients", "2", "--ttl", "300",
       "--acquire-timeout", "1000", "--no-report", "--out", dir_ + "/runs"},
      dir_, Millis(60000));
  const std::string run_dir = RunDirOf(inv);
  ASSERT_FALSE(run_dir.empty()) << inv.output;
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  nlohmann::json r = Results(run_dir);
  ASSERT_TRUE(r.is_object()) << "results.json";
  EXPECT_NE(r.value("verdict", ""), "violated") << r.dump(2);
  int broken = 0, ok_after = 0;
  for (const auto& e : History(run_dir)) {
    ASSERT_FALSE(e.is_discarded()) << "every history line is JSON";
    std::string err = e.contains("value") && e["value"].is_object() ? e["value"].value("error", "") : "";
    if (err.find(reason) != std::string::npos) {
      EXPECT_EQ(e["type"], "info") << e.dump();
      ++broken;
    } else if (broken > 0 && e["type"] == "ok" && e["f"] == "acquire") {
      ++ok_after;
    }
  }
  EXPECT_GE(broken, 2) << "operations made unknown by the bad line";
  EXPECT_GE(ok_after, 2) << "the run goes on with a fresh driver";
  // No client aborted: each client log ends without a C++ exception.
  for (int c = 1; c <= 2; ++c) {
    std::string log = ReadAll(run_dir + "/clients/" + std::to_string(c) + ".log");
    EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
    EXPECT_NE(log.find("killed (SIGKILL)"), std::string::npos) << "the driver was replaced";
  }
  EXPECT_EQ(ExpectNoOrphans(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, BadBytesTest,
    ::testing::Values(std::make_pair("not-utf8", "answer line is not UTF-8 (byte 0xff"),
                      std::make_pair("deep", "answer line nested deeper than 64 levels")),
    [](const auto& info) { return std::string(info.param.first) == "deep" ? "Deep" : "NotUtf8"; });

// A hello whose name holds a 0xFF byte: refused by the probe with one line (exit 64); and,
// from a driver that says it only to the clients, each client's start fails with one line
// and the run reads unknown (no client aborts).
TEST_F(HygieneTest, AHelloNameThatIsNotUtf8IsAFailedStartWithOneLine) {
  Invocation probe = RunLocklab({"run", "--lock", "driver:" + kDrivers + "misbehaving_driver.py",
                                 "--driver-arg", "--hello", "--driver-arg", "bad-name",
                                 "--no-report", "--out", dir_ + "/runs"},
                                dir_, Millis(30000));
  EXPECT_EQ(probe.exit_code, 64) << probe.output;
  ASSERT_EQ(Lines(probe.output).size(), 1u) << probe.output;
  EXPECT_NE(probe.output.find("hello: line is not UTF-8 (byte 0xff at offset"), std::string::npos)
      << probe.output;
  EXPECT_NE(probe.output.find("in field 'name'"), std::string::npos) << probe.output;

  Invocation run = RunLocklab({"run", "--lock", "driver:" + kDrivers + "misbehaving_driver.py",
                               "--driver-arg", "--hello", "--driver-arg", "bad-name-in-clients",
                               "--fault", "none", "--duration", "2s", "--clients", "2",
                               "--no-report", "--out", dir_ + "/runs"},
                              dir_, Millis(60000));
  const std::string run_dir = RunDirOf(run);
  ASSERT_FALSE(run_dir.empty()) << run.output;
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(Results(run_dir).value("verdict", ""), "unknown");
  for (int c = 1; c <= 2; ++c) {
    std::string log = ReadAll(run_dir + "/clients/" + std::to_string(c) + ".log");
    EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
    EXPECT_NE(log.find("hello: line is not UTF-8 (byte 0xff"), std::string::npos) << log;
  }
  EXPECT_EQ(ExpectNoOrphans(), 0u);
}

// A history whose value nests 100,000 arrays deep: check and report say so in one line,
// exit 65 (check was exit 139, report "internal error", exit 70).
TEST_F(HygieneTest, ADeepHistoryIsBadInputInCheckAndReport) {
  std::string run = dir_ + "/run";
  mkdir(run.c_str(), 0755);
  std::string path = run + "/history.jsonl";
  std::ofstream(path) << "{\"index\":0,\"time_ns\":1,\"process\":1,\"type\":\"invoke\",\"f\":"
                         "\"acquire\",\"key\":\"lock:0\",\"value\":null}\n"
                      << "{\"index\":1,\"time_ns\":2,\"process\":1,\"type\":\"ok\",\"f\":"
                         "\"acquire\",\"key\":\"lock:0\",\"value\":"
                      << std::string(100000, '[') << std::string(100000, ']') << "}\n";
  Invocation check = RunLocklab({"check", path}, dir_);
  EXPECT_EQ(check.exit_code, 65) << check.output;
  EXPECT_EQ(Lines(check.output),
            std::vector<std::string>{"locklab check: " + path +
                                     ":2: field 'value': nested deeper than 64 levels"});
  std::string edn = dir_ + "/deep.edn";
  std::ofstream(edn) << "[{:process 0 :type :invoke :f :read :value " << std::string(100000, '[')
                     << std::string(100000, ']') << "}]\n";
  Invocation check_edn = RunLocklab({"check", edn}, dir_);
  EXPECT_EQ(check_edn.exit_code, 65) << check_edn.output;
  EXPECT_EQ(Lines(check_edn.output).size(), 1u) << check_edn.output;
  Invocation report = RunLocklab({"report", run}, dir_);
  EXPECT_EQ(report.exit_code, 65) << report.output;
  EXPECT_EQ(Lines(report.output).size(), 1u) << report.output;
  EXPECT_TRUE(report.output.find(":2") != std::string::npos ||
              report.output.find("line 2") != std::string::npos)
      << "names the line: " << report.output;
}

// `locklab cluster`: exclusive up, down that kills only what up started.
class ClusterHygieneTest : public HygieneTest {
 protected:
  void SetUp() override {
    HygieneTest::SetUp();
    setenv("LOCKLAB_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    RunLocklab({"cluster", "down"}, dir_);
    unsetenv("LOCKLAB_HOME");
    HygieneTest::TearDown();
  }
  // Every process whose command line holds `text`.
  static std::vector<pid_t> ProcessesWith(const std::string& text) {
    std::vector<pid_t> out;
    DIR* d = opendir("/proc");
    while (dirent* e = d ? readdir(d) : nullptr) {
      pid_t pid = atoi(e->d_name);
      if (pid <= 0 || !PidExists(pid)) continue;
      std::string cmd = ReadAll("/proc/" + std::string(e->d_name) + "/cmdline");
      if (cmd.find(text) != std::string::npos) out.push_back(pid);
    }
    if (d) closedir(d);
    return out;
  }
};

TEST_F(ClusterHygieneTest, TwoConcurrentUpsLeaveOneClusterAndDownLeavesNothing) {
  const std::string log1 = dir_ + "/up1.out", log2 = dir_ + "/up2.out";
  pid_t a = StartLocklab({"cluster", "up", "--nodes", "2"}, log1);
  pid_t b = StartLocklab({"cluster", "up", "--nodes", "2"}, log2);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  Invocation ia = FinishLocklab(a, log1, Millis(30000));
  Invocation ib = FinishLocklab(b, log2, Millis(30000));
  std::multiset<int> codes = {ia.exit_code, ib.exit_code};
  EXPECT_EQ(codes, (std::multiset<int>{0, 64})) << ia.output << "---\n" << ib.output;
  const Invocation& refused = ia.exit_code == 64 ? ia : ib;
  EXPECT_EQ(Lines(refused.output).size(), 1u) << refused.output;
  auto state = nlohmann::json::parse(ReadAll(dir_ + "/cluster/state.json"), nullptr, false);
  ASSERT_TRUE(state.is_object());
  ASSERT_EQ(state["nodes"].size(), 3u) << state.dump(2);
  // Exactly the servers state.json records run, each marked with its token. The scan looks for
  // this cluster's own mark: other tests on the machine may run clusters of their own.
  std::set<pid_t> recorded;
  for (const auto& n : state["nodes"]) recorded.insert(n["pid"].get<pid_t>());
  ASSERT_TRUE(state["token"].is_string()) << state.dump(2);
  const std::string mark = "locklab-cluster:" + state["token"].get<std::string>();
  auto marked = ProcessesWith(mark);
  EXPECT_EQ(std::set<pid_t>(marked.begin(), marked.end()), recorded);

  Invocation down = RunLocklab({"cluster", "down"}, dir_);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(down.output, "cluster: down\n");
  EXPECT_TRUE(ProcessesWith(mark).empty());
  EXPECT_EQ(ExpectNoOrphans(), 0u);
}

// The lock itself, held by the test: an up or a down meanwhile is refused with one line.
TEST_F(ClusterHygieneTest, UpAndDownAreRefusedWhileTheStateDirectoryIsLocked) {
  mkdir((dir_ + "/cluster").c_str(), 0755);
  int fd = open((dir_ + "/cluster/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  for (const char* cmd : {"up", "down"}) {
    Invocation inv = RunLocklab({"cluster", cmd}, dir_);
    EXPECT_EQ(inv.exit_code, 64) << inv.output;
    EXPECT_EQ(Lines(inv.output),
              std::vector<std::string>{"locklab cluster: another `locklab cluster up` or `down` "
                                       "is running on " + dir_ + "/cluster (" + dir_ +
                                       "/cluster/lock is locked)"});
  }
  EXPECT_FALSE(PathExists(dir_ + "/cluster/state.json"));
  close(fd);
  Invocation up = RunLocklab({"cluster", "up", "--nodes", "1"}, dir_);
  EXPECT_EQ(up.exit_code, 0) << "once the lock is free: " << up.output;
}

TEST_F(ClusterHygieneTest, AStaleStateNeverKillsAStrangerThatReusedAPid) {
  // A stranger (this test's child): once with a start time that differs, once with its own
  // start time but without the cluster's mark.
  harness::SpawnOptions o;
  o.argv = {"/bin/sleep", "300"};
  pid_t stranger = -1;
  ASSERT_TRUE(harness::Spawn(o, &stranger).ok());
  std::string stat = ReadAll("/proc/" + std::to_string(stranger) + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field, start_time;
  for (int i = 3; i <= 22 && rest >> field; ++i) start_time = field;
  mkdir((dir_ + "/cluster").c_str(), 0755);
  nlohmann::json state = {{"token", "0123456789abcdef"},
                          {"nodes",
                           {{{"name", "n1"}, {"pid", stranger}, {"port", 1}, {"start_time", "1"}},
                            {{"name", "n2"}, {"pid", stranger}, {"port", 2},
                             {"start_time", start_time}}}}};
  std::ofstream(dir_ + "/cluster/state.json") << state.dump();
  Invocation down = RunLocklab({"cluster", "down"}, dir_);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(Lines(down.output).size(), 3u) << "two left alone, then down: " << down.output;
  SleepFor(Millis(200));
  EXPECT_TRUE(PidExists(stranger)) << "the stranger was killed: " << down.output;
  EXPECT_FALSE(PathExists(dir_ + "/cluster/state.json"));
  harness::KillAndReap(stranger);
}

}  // namespace
}  // namespace locklab::testing
