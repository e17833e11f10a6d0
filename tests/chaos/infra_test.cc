// The lab watches its own ground (docs/design.md 3.3, checker/infra.h): a death or stop that
// the schedule did not cause is the lab's failure, never the lock's. Each case kills or
// stops a real process of a running trial from outside, as the OOM killer or an operator
// would, and checks the verdict the run and `locklab check` give: unknown, naming what died
// (never violated by a dead holder's hold that "never ends", never safe).
#include <signal.h>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

class InfraTest : public TempDirTest {
 protected:
  InfraTest() : TempDirTest("locklab-infra") {}

  // Starts `locklab run ARGS --out DIR --no-report` in the background.
  void Start(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    for (const char* a : {"--no-report", "--out"}) args.push_back(a);
    args.push_back(dir_);
    log_ = dir_ + "/run.out";
    pid_ = StartLocklab(args, log_);
    ASSERT_GT(pid_, 0);
  }

  // Waits (up to 60 s) until the trial's run phase started; returns its run directory.
  std::string WaitUntilRunning() {
    Nanos end = MonotonicNow() + Millis(60000);
    while (MonotonicNow() < end) {
      std::string found = FindRunDir(dir_);
      if (!found.empty() && ReadAll(found + "/lab.log").find("running ") != std::string::npos) {
        return run_dir_ = found;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

  // The pid the harness logged for `what` ("client 2", "node n1", "node resource").
  pid_t LoggedPid(const std::string& what) const {
    std::smatch m;
    std::string log = ReadAll(run_dir_ + "/lab.log");
    std::regex re(what + "( on \\S+)? pid (\\d+)");
    return std::regex_search(log, m, re) ? std::stoi(m[2].str()) : -1;
  }

  // Waits until client `p`'s last lock operation in the history is an acquire ok: it holds.
  bool WaitUntilHolding(int p, Millis timeout) const {
    Nanos end = MonotonicNow() + timeout;
    while (MonotonicNow() < end) {
      std::istringstream in(ReadAll(run_dir_ + "/history.jsonl"));
      std::string line, last;
      while (std::getline(in, line)) {
        nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
        if (!e.is_object() || e.value("process", nlohmann::json()) != p) continue;
        std::string f = e.value("f", "");
        if (f == "acquire" || f == "release") last = line;  // its lock operations only
      }
      nlohmann::json e = nlohmann::json::parse(last, nullptr, false);
      if (e.is_object() && e.value("f", "") == "acquire" && e.value("type", "") == "ok") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Waits for the run to end; checks that it left no process behind and that `locklab
  // check` gives its history the same verdict. Returns results.json.
  nlohmann::json Finish(int* exit_code) {
    Invocation inv = FinishLocklab(pid_, log_, Millis(120000));
    *exit_code = inv.exit_code;
    output_ = inv.output;
    EXPECT_NE(inv.exit_code, -2) << "the run hung:\n" << inv.output;
    for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
    nlohmann::json r = Results(run_dir_);
    Invocation check = RunLocklab({"check", "--json", run_dir_ + "/history.jsonl"}, dir_);
    EXPECT_EQ(check.exit_code, *exit_code) << check.output;
    nlohmann::json judged = nlohmann::json::parse(check.output, nullptr, false);
    EXPECT_EQ(judged.is_object() ? judged.value("verdict", "") : "", r.value("verdict", std::string("?")))
        << check.output;
    return r;
  }

  // Runs `args` (with --fault none), sends `sig` to the process the harness logged as
  // `subject` (LoggedPid) `after` into the run phase, and SIGCONT `stopped_for` later when
  // that is not zero; then waits for the end, which must be unknown, exit 2, whatever the
  // lock. Returns results.json; `*pid` is the process signalled.
  nlohmann::json SignalDuringRun(std::vector<std::string> args, const std::string& subject,
                                 Millis after, int sig, pid_t* pid, Millis stopped_for = Millis(0)) {
    args.insert(args.end(), {"--fault", "none", "--clients", "2"});
    Start(args);
    if (WaitUntilRunning().empty()) {
      ADD_FAILURE() << "the run never started";
      return nlohmann::json();
    }
    *pid = LoggedPid(subject);
    EXPECT_GT(*pid, 0) << subject << " not in lab.log";
    std::this_thread::sleep_for(after);
    EXPECT_EQ(kill(*pid, sig), 0);
    if (stopped_for.count() > 0) {
      std::this_thread::sleep_for(stopped_for);
      kill(*pid, SIGCONT);
    }
    int code = 0;
    nlohmann::json r = Finish(&code);
    EXPECT_EQ(code, 2) << output_;
    EXPECT_EQ(r.value("verdict", ""), "unknown");
    return r;
  }

  static std::string FindRunDir(const std::string& root) {
    std::string found;
    std::vector<std::string> stack = {root};
    while (!stack.empty() && found.empty()) {
      std::string d = stack.back();
      stack.pop_back();
      DIR* dir = opendir(d.c_str());
      while (dirent* e = dir ? readdir(dir) : nullptr) {
        std::string name = e->d_name;
        if (name == "." || name == ".." || name == "latest") continue;
        if (name == "history.jsonl") found = d;
        if (e->d_type == DT_DIR) stack.push_back(d + "/" + name);
      }
      if (dir) closedir(dir);
    }
    return found;
  }

  pid_t pid_ = -1;
  std::string log_, run_dir_, output_;
};

// The OOM killer's kill of a client that holds the lock: before the lab watched its ground,
// the dead client's hold never ended and every later holder "overlapped" it (exit 1).
TEST_F(InfraTest, AClientKilledFromOutsideWhileHoldingReadsUnknownNamingIt) {
  Start({"--lock", "set-nx-px-lua", "--fault", "none", "--duration", "6s", "--clients", "3",
         "--keys", "1", "--ttl", "500", "--hold", "200", "--seed", "5"});
  ASSERT_FALSE(WaitUntilRunning().empty());
  pid_t client = LoggedPid("client 2");
  ASSERT_GT(client, 0);
  ASSERT_TRUE(WaitUntilHolding(2, Millis(5000))) << "client 2 never held the lock";
  ASSERT_EQ(kill(client, SIGKILL), 0);
  int code = 0;
  nlohmann::json r = Finish(&code);
  EXPECT_EQ(code, 2) << output_;
  EXPECT_EQ(r.value("verdict", ""), "unknown");
  std::string reason = r.value("verdict_reason", "");
  EXPECT_NE(reason.find("client 2"), std::string::npos) << reason;
  EXPECT_NE(reason.find("killed by signal 9"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not by the schedule"), std::string::npos) << reason;
  EXPECT_EQ(r["mutual_exclusion"].value("overlapping_pairs", -1), 0) << "a dead holder's hold must end at its death";
  ASSERT_TRUE(r["infra"].is_array());
  ASSERT_EQ(r["infra"].size(), 1u) << r["infra"].dump();
  EXPECT_EQ(r["infra"][0].value("pid", 0), client);
}

// A lock node's redis-server killed mid-run: liveness alone said "stuck" and the run read
// safe. Now it is unknown, and says which server died.
TEST_F(InfraTest, ALabNodeKilledFromOutsideReadsUnknownNamingIt) {
  pid_t node = 0;
  nlohmann::json r = SignalDuringRun({"--lock", "set-nx-px-lua", "--duration", "5s", "--ttl", "500", "--seed", "6"},
                                     "node n1", Millis(1000), SIGKILL, &node);
  std::string reason = r.value("verdict_reason", "");
  EXPECT_NE(reason.find("lab node n1 (redis-server, pid " + std::to_string(node) + ") killed by signal 9"),
            std::string::npos)
      << reason;
}

// A server that exits on its own (here a Redis asked to shut down by SIGTERM, exit status 0)
// is named with the line of its log that says why: the post-mortem when the run directory
// is gone, as on a CI machine.
TEST_F(InfraTest, ALabNodeThatExitsIsNamedWithItsLogsLastWord) {
  pid_t node = 0;
  nlohmann::json r = SignalDuringRun({"--lock", "set-nx-px-lua", "--duration", "4s", "--ttl", "500", "--seed", "9"},
                                     "node n1", Millis(800), SIGTERM, &node);
  EXPECT_NE(r.value("verdict_reason", "").find("exited with status 0"), std::string::npos)
      << r.value("verdict_reason", "");
  ASSERT_TRUE(r["infra"].is_array() && !r["infra"].empty()) << r.dump();
  const std::string said = r["infra"][0].value("log_line", "");
  EXPECT_NE(said.find("ready to exit"), std::string::npos) << r["infra"][0].dump();
  EXPECT_NE(ReadAll(run_dir_ + "/nodes/n1.log").find(said), std::string::npos) << said;
  EXPECT_NE(output_.find("its log: " + said), std::string::npos) << output_;
}

// The resource Redis killed: the final read fails, so lost updates are unknown (null),
// never 0, and the verdict names the resource.
TEST_F(InfraTest, TheResourceKilledReadsUnknownAndLostUpdatesUnknown) {
  pid_t resource = 0;
  nlohmann::json r = SignalDuringRun({"--lock", "set-nx-px-lua", "--duration", "4s", "--ttl", "500", "--seed", "7"},
                                     "node resource", Millis(1500), SIGKILL, &resource);
  EXPECT_NE(r.value("verdict_reason", "").find("lab resource (redis-server, pid " + std::to_string(resource)),
            std::string::npos)
      << r.value("verdict_reason", "");
  EXPECT_TRUE(r["resource"]["lost_updates"].is_null()) << r["resource"].dump();
  EXPECT_EQ(r["resource"].value("final_value_known", true), false);
}

// A server stopped from outside (SIGSTOP) is a stop the schedule did not cause.
TEST_F(InfraTest, ALabNodeStoppedFromOutsideReadsUnknownNamingTheStop) {
  pid_t node = 0;
  nlohmann::json r = SignalDuringRun({"--lock", "set-nx-px-lua", "--duration", "5s", "--ttl", "500", "--seed", "8"},
                                     "node n1", Millis(800), SIGSTOP, &node, Millis(1500));
  EXPECT_NE(r.value("verdict_reason", "").find("lab node n1 (redis-server, pid " + std::to_string(node) + ") stopped"),
            std::string::npos)
      << r.value("verdict_reason", "");
}

// mariadbd killed under db-row: the lab's database is lab ground like a Redis node.
TEST_F(InfraTest, MariadbKilledFromOutsideReadsUnknownNamingIt) {
  pid_t node = 0;
  nlohmann::json r = SignalDuringRun({"--lock", "db-row", "--duration", "5s", "--seed", "9"}, "node n1",
                                     Millis(1000), SIGKILL, &node);
  EXPECT_NE(r.value("verdict_reason", "").find("lab node n1 (mariadbd, pid " + std::to_string(node) + ") killed"),
            std::string::npos)
      << r.value("verdict_reason", "");
}

// The harness stopped for 3 s (SIGSTOP, SIGCONT): its clients blocked on their event pipes
// meanwhile, which liveness read as a lock that let nobody in. The stall is the lab's: no
// "stuck", and the run's timing is not trusted.
TEST_F(InfraTest, AStalledHarnessIsNotALockThatIsStuck) {
  Start({"--lock", "set-nx-px-lua", "--fault", "none", "--duration", "7s", "--clients", "3",
         "--keys", "1", "--ttl", "500", "--seed", "10"});
  ASSERT_FALSE(WaitUntilRunning().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ASSERT_EQ(kill(pid_, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  ASSERT_EQ(kill(pid_, SIGCONT), 0);
  int code = 0;
  nlohmann::json r = Finish(&code);
  EXPECT_EQ(r["liveness"].value("stuck", true), false) << r["liveness"].dump();
  EXPECT_EQ(r["lab_lag"].value("timing_trusted", true), false) << r["lab_lag"].dump();
  EXPECT_GE(r.value("longest_lab_stall_ms", 0.0), 2500.0);
  bool stall = false;
  for (const auto& i : r["infra"]) stall = stall || i.value("how", "") == "stalled";
  EXPECT_TRUE(stall) << r["infra"].dump();
  EXPECT_NE(r.value("verdict", ""), "violated") << r.value("verdict_reason", "");
}

// A run directory replays its run: scenario.toml changed during the run (a driver writing
// where it should not) is restored as the run ran it.
TEST_F(InfraTest, AScenarioChangedDuringTheRunIsRestored) {
  Start({"--lock", "set-nx-px-lua", "--fault", "none", "--duration", "2s", "--clients", "2",
         "--seed", "12"});
  ASSERT_FALSE(WaitUntilRunning().empty());
  std::string written = ReadAll(run_dir_ + "/scenario.toml");
  ASSERT_FALSE(written.empty());
  {
    std::ofstream out(run_dir_ + "/scenario.toml", std::ios::trunc);
    out << "[lock]\nid = \"setnx\"\n";
  }
  int code = 0;
  Finish(&code);
  EXPECT_EQ(ReadAll(run_dir_ + "/scenario.toml"), written);
  EXPECT_NE(output_.find("scenario.toml was changed during the run"), std::string::npos) << output_;
}

}  // namespace
}  // namespace locklab::testing
