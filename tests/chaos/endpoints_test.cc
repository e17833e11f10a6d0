// `--endpoints`: locks run against servers the lab did not start. The test starts plain
// redis-server processes itself (the lab Redis binary, private loopback ports, a temp dir, no
// LabCluster and no libfaketime), as a user's servers would be, and kills them at the end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

// A plain redis-server the test owns: the "user's" server.
struct UserServer {
  pid_t pid = -1;
  int port = 0;
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port); }
  locks::Endpoint endpoint() const { return {"127.0.0.1", port}; }
};

class EndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(harness::LabPaths::Discover(&paths_).ok())
        << "lab Redis missing: run ./locklab setup";
    dir_ = MakeTempDir("locklab-endpoints");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    for (auto& s : servers_) harness::KillAndReap(s.pid);
    if (!HasFailure()) (void)!system(("rm -rf " + dir_).c_str());
  }
  void StartServers(int n) {
    for (int i = 0; i < n; ++i) {
      UserServer s;
      ASSERT_TRUE(harness::FreeLoopbackPort(&s.port).ok());
      std::string d = dir_ + "/server" + std::to_string(i);
      harness::MakeDirs(d);
      harness::SpawnOptions o;
      o.argv = {paths_.redis_server,
                "--port",
                std::to_string(s.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                d,
                "--save",
                "",
                "--appendonly",
                "no"};
      o.log_path = d + "/redis.log";
      ASSERT_TRUE(harness::Spawn(o, &s.pid).ok());
      servers_.push_back(s);
      ASSERT_TRUE(harness::WaitForPing(s.endpoint(), Millis(5000), s.pid).ok())
          << ReadAll(o.log_path);
    }
  }
  locks::Reply Cmd(const UserServer& s, std::vector<std::string> argv) {
    locks::RedisConnection c(s.endpoint(), Millis(500), Millis(500));
    return c.Command(argv);
  }
  // Calls of one command on a server since it started (INFO commandstats).
  int64_t Calls(const UserServer& s, const std::string& cmd) {
    std::string info = Cmd(s, {"INFO", "commandstats"}).str;
    std::smatch m;
    if (!std::regex_search(info, m, std::regex("cmdstat_" + cmd + ":calls=(\\d+)"))) return 0;
    return std::stoll(m[1].str());
  }
  std::string Urls(size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i) out += (out.empty() ? "" : ",") + servers_[i].url();
    return out;
  }
  harness::LabPaths paths_;
  std::string dir_;
  std::vector<UserServer> servers_;
};

TEST_F(EndpointsTest, ClientPauseAgainstUserServersIsJudgedFromTheHistory) {
  StartServers(2);  // n1, then the resource
  // What an earlier run left behind: the run must start its counter from 0 again.
  ASSERT_EQ(Cmd(servers_[1], {"SET", "counter:0", "999"}).str, "OK");
  // The verdict is judged on a run whose timing the lab trusted (tests/trial_retry.h); each
  // rerun starts from the leftover counter again (the harness resets it).
  std::string run_dir;
  CheckWithTrustedTiming(
      [&] {
        EXPECT_EQ(Cmd(servers_[1], {"SET", "counter:0", "999"}).str, "OK");
        Invocation inv = RunLocklab({"run",
                                     "--lock",
                                     "set-nx-px-lua",
                                     "--fault",
                                     "client-pause",
                                     "--endpoints",
                                     Urls(0, 2),
                                     "--duration",
                                     "4s",
                                     "--ttl",
                                     "500",
                                     "--pause",
                                     "1200",
                                     "--first-at",
                                     "500",
                                     "--interval",
                                     "800",
                                     "--hold",
                                     "100",
                                     "--clients",
                                     "3",
                                     "--seed",
                                     "11",
                                     "--no-report",
                                     "--out",
                                     dir_},
                                    dir_);
        EXPECT_LT(inv.exit_code, 64) << inv.output;
        run_dir = RunDirOf(inv);
        EXPECT_FALSE(run_dir.empty()) << inv.output;
        return FromResults(Results(run_dir));
      },
      [](const nlohmann::json& r) {
        // A pause longer than the TTL lets a second client in: the history shows the overlap.
        EXPECT_EQ(r["verdict"], "violated") << r.dump();
        EXPECT_GT(r["mutual_exclusion"]["overlapping_pairs"].get<int>(), 0);
      });
  if (run_dir.empty()) return;
  auto r = Results(run_dir);
  EXPECT_EQ(r["config"]["endpoints"].size(), 2u);
  // The lab started no server of its own and left the user's running.
  EXPECT_EQ(ReadAll(run_dir + "/lab.log").find("node n1 on"), std::string::npos);
  for (const auto& s : servers_) EXPECT_TRUE(PidExists(s.pid));
  // The lock lived on n1, the counter on the resource server, and the history's final read
  // is what the resource server holds now (from 0, not from the leftover 999).
  EXPECT_GT(Calls(servers_[0], "set"), 0);
  EXPECT_EQ(Cmd(servers_[0], {"EXISTS", "counter:0"}).integer, 0);
  int64_t counter = std::stoll(Cmd(servers_[1], {"GET", "counter:0"}).str);
  EXPECT_GT(counter, 0);
  EXPECT_LT(counter, 999);
  std::string history = ReadAll(run_dir + "/history.jsonl");
  EXPECT_NE(history.find("\"process\":\"harness\",\"type\":\"ok\",\"f\":\"read\",\"key\":\"counter:"
                         "0\",\"value\":" +
                         std::to_string(counter)),
            std::string::npos);
}

TEST_F(EndpointsTest, RedlockTakesFiveNodesAndThePartitionRunsInTheProxy) {
  StartServers(6);  // n1..n5, then the resource
  Invocation inv = RunLocklab(
      {"run",        "--lock", "redlock", "--fault",     "partition",  "--endpoints", Urls(0, 6),
       "--duration", "3s",      "--ttl",   "500",         "--first-at", "500",         "--pause",
       "800",        "--seed", "5",       "--no-report", "--out",      dir_},
      dir_);
  ASSERT_LT(inv.exit_code, 64) << inv.output;
  std::string run_dir = RunDirOf(inv);
  auto r = Results(run_dir);
  EXPECT_TRUE(r["verdict"] == "safe" || r["verdict"] == "violated") << r.dump();
  EXPECT_GT(r["ops"].get<int>(), 0);
  std::string history = ReadAll(run_dir + "/history.jsonl");
  EXPECT_NE(history.find("\"key\":\"partition\""), std::string::npos);
  for (int i = 0; i < 5; ++i) EXPECT_GT(Calls(servers_[i], "set"), 0) << "n" << i + 1 << " unused";
  EXPECT_GT(Calls(servers_[5], "get"), 0);  // the counter
}

TEST_F(EndpointsTest, ServerFaultsAndBadEndpointsAreRefused) {
  StartServers(1);
  Invocation inv = RunLocklab({"run", "--lock", "setnx", "--fault", "server-pause", "--endpoints",
                               Urls(0, 1), "--no-report", "--out", dir_ + "/runs"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab run: flag --endpoints: fault(s) server-pause need control of the servers; "
            "against your own servers only client-side faults run (client-pause, slow-cs, "
            "client-crash, client-clock, partition, reply-loss, delay), and node faults with "
            "--endpoint-control DIR\n");
  EXPECT_NE(access((dir_ + "/runs").c_str(), F_OK), 0);  // refused before any run directory

  inv = RunLocklab(
      {"run", "--lock", "redlock", "--endpoints", Urls(0, 1), "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab run: flag --endpoints: lock redlock needs 5 endpoint(s) (n1..n5, then "
            "optionally one for the resource), got 1\n");

  // A database or etcd lock cannot use Redis servers (it used to try, and ran 0 operations).
  inv = RunLocklab({"run", "--lock", "pg-advisory", "--endpoints", Urls(0, 1), "--no-report",
                    "--out", dir_ + "/runs"},
                   dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab run: flag --endpoints: lock pg-advisory runs on postgres servers the lab "
            "starts; --endpoints takes Redis servers only\n");
  EXPECT_NE(access((dir_ + "/runs").c_str(), F_OK), 0);

  inv = RunLocklab(
      {"run", "--lock", "setnx", "--endpoints", "http://127.0.0.1:6379", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab run: flag --endpoints: 'http://127.0.0.1:6379' is not redis://host:port\n");

  std::string path = dir_ + "/bad.toml";
  std::ofstream(path) << "[lock]\nid = \"setnx\"\n[topology]\nendpoints = [\"redis://h:99999\"]\n";
  inv = RunLocklab({"run", path, "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 65);
  EXPECT_EQ(inv.output,
            "locklab " + path +
                ":4: field 'topology.endpoints': 'redis://h:99999' is not redis://host:port "
                "(port 1-65535)\n");

  std::ofstream(path)
      << "[lock]\nid = \"setnx\"\n[[faults]]\nid = \"restart\"\n[topology]\nendpoints = [\""
      << servers_[0].url() << "\"]\n";
  inv = RunLocklab({"run", path, "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_NE(inv.output.find(path + ":6: field 'topology.endpoints': fault(s) restart need control"),
            std::string::npos)
      << inv.output;

  // A server that does not answer is an infrastructure error naming it, and a run directory.
  int dead_port = 0;
  ASSERT_TRUE(harness::FreeLoopbackPort(&dead_port).ok());
  inv = RunLocklab(
      {"run", "--lock", "setnx", "--endpoints", "redis://127.0.0.1:" + std::to_string(dead_port),
       "--duration", "1s", "--no-report", "--out", dir_},
      dir_);
  EXPECT_GE(inv.exit_code, 64);
  EXPECT_NE(inv.output.find("endpoint redis://127.0.0.1:" + std::to_string(dead_port)),
            std::string::npos)
      << inv.output;
}

TEST_F(EndpointsTest, MatrixAgainstUserServersKeepsClientSideColumns) {
  StartServers(2);
  Invocation inv =
      RunLocklab({"matrix", "--locks", "setnx,redlock", "--faults", "none,server-pause",
                  "--endpoints", Urls(0, 2), "--seed", "3", "--no-report", "--out", dir_},
                 dir_);
  EXPECT_EQ(inv.exit_code, 64);
  EXPECT_EQ(inv.output,
            "locklab matrix: flag --endpoints: fault(s) server-pause need control of the servers; "
            "against your own servers only client-side faults run\n");
  inv = RunLocklab({"matrix", "--locks", "setnx,redlock,db-row", "--faults", "none",
                    "--endpoints", Urls(0, 2), "--seed", "3", "--no-report", "--out", dir_},
                   dir_, Millis(60000));
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  const std::string mdir = MatrixDirOf(inv);
  ASSERT_FALSE(mdir.empty()) << inv.output;
  auto j = nlohmann::json::parse(ReadAll(mdir + "/matrix.json"));
  ASSERT_EQ(j["cells"].size(), 3u);
  EXPECT_EQ(j["cells"][0]["verdict"], "S");  // setnx, no fault, on the user's n1
  EXPECT_EQ(j["cells"][1]["verdict"], "n/a");
  EXPECT_EQ(j["cells"][1]["why_not"], "redlock needs 5 endpoints, --endpoints gives 2");
  EXPECT_EQ(j["cells"][2]["verdict"], "n/a");
  EXPECT_EQ(j["cells"][2]["why_not"],
            "db-row runs on mariadb servers the lab starts; --endpoints gives Redis servers");
}

// A lock node supervised by docker/node-entrypoint.sh, as compose.yaml runs n1..n5: the
// harness controls it only through the shared control directory (--endpoint-control).
class ControlledNodeTest : public EndpointsTest {
 protected:
  void StartControlledNode() {
    control_ = dir_ + "/control";
    ASSERT_TRUE(harness::FreeLoopbackPort(&node_.port).ok());
    harness::SpawnOptions o;
    o.argv = {std::string(LOCKLAB_SOURCE_DIR) + "/docker/node-entrypoint.sh",
              "n1",
              "--port",
              std::to_string(node_.port),
              "--bind",
              "127.0.0.1",
              "--dir",
              dir_,
              "--save",
              "",
              "--appendonly",
              "no"};
    o.env = {{"LOCKLAB_CONTROL_DIR", control_},
             {"LOCKLAB_REDIS_SERVER", paths_.redis_server},
             {"LOCKLAB_LIBFAKETIME", paths_.libfaketime}};
    o.log_path = dir_ + "/n1.log";
    ASSERT_TRUE(harness::Spawn(o, &node_.pid).ok());
    servers_.push_back(node_);
    Nanos end = MonotonicNow() + Millis(5000);
    while (Cmd(node_, {"PING"}).str != "PONG") {
      ASSERT_LT(MonotonicNow(), end) << ReadAll(o.log_path);
      SleepFor(Millis(20));
    }
    StartServers(1);  // the resource, plain
    resource_ = servers_.back();
  }
  long ServerPid() {
    std::ifstream in(control_ + "/n1.pid");
    long pid = 0;
    in >> pid;
    return pid;
  }
  // Runs `locklab ARGS` while `probe` is called every 50 ms; returns the run's results.
  nlohmann::json RunWhile(std::vector<std::string> args, const std::function<void()>& probe,
                          Invocation* inv) {
    std::string log = dir_ + "/run-" + std::to_string(MonotonicNow().count()) + ".out";
    pid_t pid = StartLocklab(args, log);
    EXPECT_GT(pid, 0);
    int status = 0;
    Nanos deadline = MonotonicNow() + Millis(30000);
    while (!harness::WaitExit(pid, Millis(50), &status)) {
      probe();
      if (MonotonicNow() > deadline) {
        harness::KillAndReap(pid);
        ADD_FAILURE() << "run hung";
        break;
      }
    }
    *inv = Invocation{WIFEXITED(status) ? WEXITSTATUS(status) : 128, ReadAll(log), pid};
    EXPECT_LT(inv->exit_code, 64) << inv->output;
    return Results(RunDirOf(*inv));
  }
  std::string Urls() { return node_.url() + "," + resource_.url(); }
  UserServer node_, resource_;
  std::string control_;
};

// clock-jump steps the user's node's clock, seen from outside through TIME during the run,
// and heals it afterwards.
TEST_F(ControlledNodeTest, ClockJumpReachesTheNodeThroughItsClockFile) {
  StartControlledNode();
  // Without the control directory, the fault is refused, and the message says what allows it.
  Invocation refused = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "clock-jump",
                                   "--endpoints", Urls(), "--out", dir_},
                                  dir_);
  EXPECT_EQ(refused.exit_code, 64);
  EXPECT_NE(refused.output.find("and node faults with --endpoint-control DIR"), std::string::npos)
      << refused.output;

  // Server time minus real time, in seconds.
  auto skew = [&]() {
    locks::Reply r = Cmd(node_, {"TIME"});
    if (r.elements.size() != 2) return -1000.0;
    double server = std::stod(r.elements[0].str) + std::stod(r.elements[1].str) / 1e6;
    return server - static_cast<double>(time(nullptr));
  };
  EXPECT_LT(std::abs(skew()), 2.0);
  double max_skew = -1000;
  Invocation inv;
  auto r = RunWhile(
      {"run",
       "--lock",
       "set-nx-px-lua",
       "--fault",
       "clock-jump",
       "--param",
       "offset=+30s",
       "--first-at",
       "500",
       "--pause",
       "1500",
       "--endpoints",
       Urls(),
       "--endpoint-control",
       control_,
       "--duration",
       "3s",
       "--seed",
       "4",
       "--no-report",
       "--out",
       dir_},
      [&] { max_skew = std::max(max_skew, skew()); }, &inv);
  EXPECT_GT(max_skew, 25.0);         // the jump reached the user's server
  EXPECT_LT(std::abs(skew()), 2.0);  // and was healed
  EXPECT_TRUE(r["verdict"] == "safe" || r["verdict"] == "violated") << r.dump();
  EXPECT_NE(ReadAll(RunDirOf(inv) + "/history.jsonl").find("\"key\":\"clock-jump\""),
            std::string::npos);
  EXPECT_NE(
      ReadAll(RunDirOf(inv) + "/scenario.toml").find("endpoint_control = \"" + control_ + "\""),
      std::string::npos);
}

// Regression guard: a pid file that names some other process (here this test) is not a
// node under control: the run stops at setup, and nothing is signalled.
TEST_F(EndpointsTest, StalePidFileIsNotSignalled) {
  StartServers(1);
  std::string control = dir_ + "/control";
  harness::MakeDirs(control);
  std::ofstream(control + "/n1.pid") << getpid() << "\n";
  Invocation inv = RunLocklab(
      {"run", "--lock", "setnx", "--fault", "server-pause", "--endpoints", servers_[0].url(),
       "--endpoint-control", control, "--duration", "2s", "--no-report", "--out", dir_},
      dir_);
  EXPECT_EQ(inv.exit_code, 69) << inv.output;
  EXPECT_NE(inv.output.find("--endpoint-control: no " + control + "/n1.pid"), std::string::npos)
      << inv.output;
}

// server-pause stops the user's server (PING goes unanswered during the window) and
// restart kills it, keeps it down, and brings a new server process back.
TEST_F(ControlledNodeTest, ServerPauseAndRestartReachTheNodeThroughItsPidFile) {
  StartControlledNode();
  bool unanswered = false;
  Invocation inv;
  auto r = RunWhile(
      {"run",
       "--lock",
       "setnx",
       "--fault",
       "server-pause",
       "--first-at",
       "500",
       "--pause",
       "1000",
       "--windows",
       "1",
       "--endpoints",
       Urls(),
       "--endpoint-control",
       control_,
       "--duration",
       "3s",
       "--seed",
       "4",
       "--no-report",
       "--out",
       dir_},
      [&] {
        locks::RedisConnection c(node_.endpoint(), Millis(100), Millis(100));
        unanswered = unanswered || c.Command({"PING"}).str != "PONG";
      },
      &inv);
  EXPECT_TRUE(unanswered) << "the server answered throughout the pause window";
  EXPECT_EQ(Cmd(node_, {"PING"}).str, "PONG");  // resumed
  EXPECT_TRUE(r["verdict"] == "safe" || r["verdict"] == "violated") << r.dump();

  long before = ServerPid();
  ASSERT_GT(before, 0);
  bool down = false;
  r = RunWhile(
      {"run",     "--lock",
       "setnx",   "--fault",
       "restart", "--first-at",
       "500",     "--pause",
       "800",     "--windows",
       "1",       "--endpoints",
       Urls(),    "--endpoint-control",
       control_,  "--duration",
       "3s",       "--seed",
       "4",       "--no-report",
       "--out",   dir_},
      [&] { down = down || ServerPid() == 0; }, &inv);
  EXPECT_TRUE(down) << "no window without a server process";
  EXPECT_GT(ServerPid(), 0);
  EXPECT_NE(ServerPid(), before);
  EXPECT_EQ(Cmd(node_, {"PING"}).str, "PONG");
  EXPECT_TRUE(r["verdict"] == "safe" || r["verdict"] == "violated") << r.dump();
  EXPECT_NE(ReadAll(RunDirOf(inv) + "/lab.log").find("node n1 restarted (server process"),
            std::string::npos)
      << ReadAll(RunDirOf(inv) + "/lab.log");
}

}  // namespace
}  // namespace locklab::testing
