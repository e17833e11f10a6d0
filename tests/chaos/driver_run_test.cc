// Whole runs of driver:PATH locks through the `locklab` binary: a driver that misbehaves
// every third request (the run goes on, the history says what happened, nothing hangs, no
// driver is left), and the redis-py example driver under client-pause, judged from the
// history like any other lock.
#include <dirent.h>
#include <sys/stat.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

// Driver pids from the client logs ("(pid N): started").
std::vector<pid_t> DriverPids(const std::string& run_dir) {
  std::vector<pid_t> out;
  DIR* d = opendir((run_dir + "/clients").c_str());
  if (!d) return out;
  static const std::regex re("\\(pid (\\d+)\\): started");
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".log") continue;
    std::string log = ReadAll(run_dir + "/clients/" + e->d_name);
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
         ++it) {
      out.push_back(std::stoi((*it)[1].str()));
    }
  }
  closedir(d);
  return out;
}

using DriverRunTest = TrialTest;

TEST_F(DriverRunTest, MisbehavingDriverRunGoesOnAndItsEventsSayWhatHappened) {
  Nanos t0 = MonotonicNow();
  Invocation inv = RunLocklab({"run",
                               "--lock",
                               "driver:tests/drivers/misbehaving_driver.py",
                               "--driver-arg",
                               "--every",
                               "--driver-arg",
                               "2",
                               "--duration",
                               "8s",
                               "--clients",
                               "1",
                               "--ttl",
                               "300",
                               "--acquire-timeout",
                               "1000",
                               "--seed",
                               "5",
                               "--no-report",
                               "--out",
                               dir_},
                              dir_, Millis(40000));
  double took_s = ToMillis(MonotonicNow() - t0) / 1000;
  run_dir_ = RunDirOf(inv);
  ASSERT_FALSE(run_dir_.empty()) << inv.output;
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  EXPECT_LT(took_s, 8 + 10) << "the run must not hang on a silent driver";
  auto r = Results(run_dir_);
  EXPECT_TRUE(r.contains("verdict")) << r.dump(2);

  // Which protocol breaks the history recorded (as info events with the detail as error).
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"garbage", "not a JSON object"},
      {"silent", "no answer within"},
      {"crash", "exited with status 3"},
      {"huge", "longer than max_line_bytes"},
      {"wrong-id", "answer for id"},
      {"bad-outcome", "'outcome' must be"},
      {"no-token", "without a non-empty string 'token'"},
      {"late", "late answer"},
      {"twice", "unsolicited line"}};
  std::set<std::string> seen;
  int ok_after_first_break = 0;
  bool broken = false;
  for (const auto& e : History()) {
    std::string err =
        e.contains("value") && e["value"].is_object() ? e["value"].value("error", "") : "";
    if (err.find("driver protocol") != std::string::npos) {
      EXPECT_EQ(e["type"], "info") << e.dump();
      broken = true;
      for (const auto& [kind, text] : kinds) {
        if (err.find(text) != std::string::npos) seen.insert(kind);
      }
    } else if (broken && e["type"] == "ok" && e["f"] == "acquire") {
      ++ok_after_first_break;
    }
  }
  EXPECT_GE(seen.size(), 5u) << "kinds seen: " << seen.size();
  EXPECT_GE(ok_after_first_break, 3) << "the run must go on after a driver breaks";
  for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
  auto drivers = DriverPids(run_dir_);
  EXPECT_GE(drivers.size(), 4u) << "broken drivers are replaced";
  for (pid_t p : drivers) EXPECT_FALSE(PidExists(p)) << "driver pid " << p << " left behind";
}

TEST_F(DriverRunTest, LateOkAcquireIsReleasedByItsTokenAndTheHistoryStaysValid) {
  // Every 3rd request is answered 100 ms late, and a lock taken that way is renewed by the
  // driver until released (an auto-renewing library): unreleased, the key would be held for
  // the rest of the run and the other client would never get it.
  Invocation inv = RunLocklab({"run", "--lock", "driver:tests/drivers/misbehaving_driver.py",
                               "--driver-arg", "--every", "--driver-arg", "3", "--driver-arg",
                               "--mode", "--driver-arg", "late-renewing", "--clients", "2",
                               "--ttl", "3000", "--acquire-timeout", "1000", "--duration", "6s",
                               "--seed", "3", "--no-report", "--out", dir_},
                              dir_, Millis(60000));
  run_dir_ = RunDirOf(inv);
  ASSERT_FALSE(run_dir_.empty()) << inv.output;
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  auto r = Results(run_dir_);
  EXPECT_EQ(r["mutual_exclusion"]["overlapping_pairs"], 0) << r.dump(2);
  EXPECT_EQ(r["linearizability"]["lock"]["verdict"], "valid") << r.dump(2);

  auto h = History();
  int late_grants = 0, released = 0, freed_for_the_next = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    const auto& e = h[i];
    if (e["f"] != "acquire" || e["type"] != "info" || !e["value"].is_object() ||
        e["value"].value("error", "").find("late answer 'ok'") == std::string::npos) {
      continue;
    }
    ++late_grants;
    ASSERT_TRUE(e["value"].contains("token")) << "the unknown acquire names its token: " << e;
    // The same client's next events: the release of that token, and its completion.
    std::vector<nlohmann::json> next;
    for (size_t k = i + 1; k < h.size() && next.size() < 2; ++k) {
      if (h[k]["process"] == e["process"]) next.push_back(h[k]);
    }
    ASSERT_EQ(next.size(), 2u) << e;
    EXPECT_EQ(next[0]["f"], "release") << next[0];
    EXPECT_EQ(next[0]["type"], "invoke") << next[0];
    EXPECT_EQ(next[0]["value"]["token"], e["value"]["token"]) << next[0];
    EXPECT_EQ(next[1]["f"], "release") << next[1];
    if (next[1]["type"] != "ok") continue;
    ++released;
    // Someone holds the key again well before its 3 s TTL could have run out.
    int64_t t = next[1]["time_ns"].get<int64_t>();
    for (const auto& o : h) {
      if (o["f"] == "acquire" && o["type"] == "ok" && o["time_ns"].get<int64_t>() > t &&
          o["time_ns"].get<int64_t>() < t + 1500 * 1000000LL) {
        ++freed_for_the_next;
        break;
      }
    }
  }
  EXPECT_GE(late_grants, 2) << inv.output;
  EXPECT_GE(released, 2);
  EXPECT_GE(freed_for_the_next, 2);
  EXPECT_GE(r["acquires"]["ok"].get<int>(), 5) << r.dump(2);
  for (pid_t p : DriverPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "driver pid " << p << " left behind";
}

TEST_F(DriverRunTest, ExpiredGrantsAreCountedAndWarnedAbout) {
  // Every 3rd request, when it is an acquire, is answered ok with validity_ms 0.
  Invocation inv = RunLocklab({"run", "--lock", "driver:tests/drivers/misbehaving_driver.py",
                               "--driver-arg", "--every", "--driver-arg", "3", "--driver-arg",
                               "--mode", "--driver-arg", "expired", "--clients", "2",
                               "--duration", "3s", "--seed", "3", "--no-report", "--out", dir_},
                              dir_, Millis(60000));
  run_dir_ = RunDirOf(inv);
  ASSERT_FALSE(run_dir_.empty()) << inv.output;
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  auto r = Results(run_dir_);
  int expired = 0;
  for (const auto& e : History()) {
    expired += e["f"] == "acquire" && e["type"] == "ok" && e["value"]["validity_ms"] == 0;
  }
  EXPECT_GE(expired, 1);
  EXPECT_EQ(r["acquires"]["expired_grants"], expired) << r.dump(2);
  std::smatch m;
  EXPECT_TRUE(std::regex_search(
      inv.output, m,
      std::regex("locklab run: warning: " + std::to_string(expired) +
                 " acquires? (was|were) granted already expired \\(ok with validity_ms <= 0")))
      << inv.output;
}

// Two clients, each holding 1200 ms under a 500 ms TTL: the history's renew events (count,
// process) and its verdict.
struct RenewRun {
  nlohmann::json results;
  int renew_invoked = 0, renew_ok = 0, acquires_ok = 0;
  double max_gap_ms = 0;  // longest stretch of a hold without an acquire or renewal ok
};

class DriverRenewTest : public TrialTest {
 protected:
  RenewRun LongHolds(const std::string& lock, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run",    "--lock",     lock,    "--clients", "2",
                                     "--ttl",  "500",        "--hold", "1200",     "--duration",
                                     "5s",      "--seed",     "4",     "--no-report", "--out",
                                     dir_};
    args.insert(args.end(), extra.begin(), extra.end());
    Invocation inv = RunLocklab(args, dir_);
    run_dir_ = RunDirOf(inv);
    EXPECT_FALSE(run_dir_.empty()) << inv.output;
    EXPECT_LT(inv.exit_code, 64) << inv.output;
    RenewRun out;
    out.results = Results(run_dir_);
    std::map<int, int64_t> last_ok;  // process -> time of its last acquire/renew ok
    for (const auto& e : History()) {
      if (!e["process"].is_number_integer()) continue;
      int p = e["process"].get<int>();
      int64_t t = e["time_ns"].get<int64_t>();
      if (e["f"] == "renew") {
        EXPECT_LT(p, 1000) << "the client renews itself, not a worker: " << e;
        out.renew_invoked += e["type"] == "invoke";
        out.renew_ok += e["type"] == "ok";
      }
      if ((e["f"] == "renew" || e["f"] == "acquire") && e["type"] == "ok") {
        if (e["f"] == "renew" && last_ok.count(p)) {
          out.max_gap_ms = std::max(out.max_gap_ms, (t - last_ok[p]) / 1e6);
        }
        last_ok[p] = t;
        out.acquires_ok += e["f"] == "acquire";
      }
    }
    return out;
  }
};

// Renewals every 166 ms and their gaps are timing: judged on a run the lab trusted.
TEST_F(DriverRenewTest, DriverThatRenewsIsRenewedEveryThirdOfTheTtlWhileAHoldLasts) {
  RenewRun r;
  CheckWithTrustedTiming(
      [&] {
        r = LongHolds("driver:examples/drivers/redis_py_lock.py");
        return FromResults(r.results);
      },
      [&](const nlohmann::json&) {
        ASSERT_GE(r.acquires_ok, 2) << r.results.dump(2);
        // 1200 ms holds renewed every 166 ms: about 7 renewals a hold.
        EXPECT_GE(r.renew_ok, 5 * r.acquires_ok - 5) << r.results.dump(2);
        EXPECT_EQ(r.renew_ok, r.renew_invoked);
        EXPECT_LT(r.max_gap_ms, 400) << "renewals must come well within the 500 ms TTL";
        EXPECT_EQ(r.results["verdict"], "safe") << r.results.dump(2);
        EXPECT_EQ(r.results["linearizability"]["lock"]["verdict"], "valid");
      });
}

TEST_F(DriverRenewTest, DriverWithoutRenewIsNeverRenewedAndItsLongHoldsOverlap) {
  RenewRun r;
  CheckWithTrustedTiming(
      [&] {
        r = LongHolds("driver:tests/drivers/misbehaving_driver.py",
                      {"--driver-arg", "--hello", "--driver-arg", "no-renew"});
        EXPECT_EQ(r.renew_invoked, 0);  // never renewed, however late the lab ran
        return FromResults(r.results);
      },
      [&](const nlohmann::json&) {
        EXPECT_EQ(r.results["verdict"], "violated") << r.results.dump(2);
      });
}

TEST_F(DriverRunTest, RedisPyDriverUnderAPauseLongerThanTheTtlIsViolatedByItsHistory) {
  TrustedTrial("driver:examples/drivers/redis_py_lock.py", "client-pause", {},
               [](const nlohmann::json& r) {
                 EXPECT_EQ(r["verdict"], "violated") << r.dump(2);
                 EXPECT_GE(r["mutual_exclusion"]["overlapping_pairs"].get<int>(), 1);
               });
  EXPECT_EQ(Results(run_dir_)["algorithm"], "driver:examples/drivers/redis_py_lock.py");
  // The pauses happened to holders (the nemesis recorded them), and every driver is gone.
  int pauses = 0;
  for (const auto& e : History()) {
    pauses += e["process"] == "nemesis" && e["f"] == "start" && e["key"] == "client-pause";
  }
  EXPECT_GE(pauses, 1);
  for (pid_t p : DriverPids(run_dir_))
    EXPECT_FALSE(PidExists(p)) << "driver pid " << p << " left behind";
}

// npm redlock over ioredis, which matches replies to commands by their order on the
// connection, under reply-loss: a lost reply ends in a timeout or a reset of that
// connection, never in the next command's reply taken for it. So no client waits forever on
// a command the fault shifted (the run is not stuck), the fault was seen to drop replies,
// and every acquire the lock granted carries its own token.
TEST_F(DriverRunTest, APipelinedNodeClientUnderReplyLossIsNeverHandedAnotherCommandsReply) {
  TrustedTrial("driver:examples/drivers/node_redlock/redlock_npm.js", "reply-loss", {},
               [&](const nlohmann::json& r) {
                 EXPECT_FALSE(r["liveness"].value("stuck", false)) << r.dump(2);
                 ASSERT_FALSE(r["coverage"].empty()) << r.dump(2);
                 EXPECT_GE(r["coverage"][0].value("effects_seen", 0), 1) << r["coverage"].dump(2);
                 EXPECT_GE(r["acquires"]["ok"].get<int>(), 2) << r.dump(2);
                 for (const auto& e : History()) {
                   if (e["f"] != "acquire" || e["type"] != "ok") continue;
                   ASSERT_TRUE(e["value"].is_object()) << e.dump();
                   EXPECT_TRUE(e["value"].value("token", std::string()).size() > 0) << e.dump();
                 }
               });
}

TEST_F(DriverRunTest, ScenarioFileDriverArgsAreWrittenBackForReplay) {
  std::string path = dir_ + "/s.toml";
  std::ofstream(path)
      << "duration_ms = 3000\n[lock]\nid = \"driver:examples/drivers/redis_py_lock.py\"\n"
         "driver_args = [\"--sleep-ms\", \"5\"]\n[workload]\nclients = 2\n";
  Invocation inv = RunLocklab({"run", path, "--no-report", "--out", dir_}, dir_);
  run_dir_ = RunDirOf(inv);
  ASSERT_FALSE(run_dir_.empty()) << inv.output;
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  EXPECT_NE(ReadAll(run_dir_ + "/scenario.toml").find("driver_args = [\"--sleep-ms\", \"5\"]"),
            std::string::npos);
  EXPECT_GT(Results(run_dir_)["ops"].get<int>(), 5);
}

// A driver that cannot start is not a violated lock. Before the fix, the
// harness's read of the unwritten counter (0, against a register starting at nil) made
// every such run "violated", exit 1, with the reason only in clients/N.log.
class DriverStartFailureTest : public TrialTest {
 protected:
  // A driver program in the test's directory; returns the lock id.
  std::string Driver(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return "driver:" + path;
  }
  void ExpectUnknownNotRun(const std::string& lock, const std::string& why) {
    Invocation inv = RunLocklab({"run", "--lock", lock, "--fault", "none", "--duration", "3s",
                                 "--clients", "3", "--no-report", "--out", dir_,
                                 "--knob", "start_timeout_ms=1500"},
                                dir_, Millis(40000));
    run_dir_ = RunDirOf(inv);
    ASSERT_FALSE(run_dir_.empty()) << inv.output;
    EXPECT_EQ(inv.exit_code, 2) << inv.output;
    // One line on the terminal names the driver and what went wrong.
    EXPECT_NE(inv.output.find("nothing ran, a lock did not start; client "), std::string::npos) << inv.output;
    EXPECT_NE(inv.output.find(why), std::string::npos) << inv.output;
    auto r = Results(run_dir_);
    EXPECT_EQ(r["verdict"], "unknown") << r.dump(2);
    EXPECT_NE(r.value("verdict_reason", "").find(why), std::string::npos) << r.dump(2);
    EXPECT_EQ(r["ops"], 0) << "nothing runs when a lock could not start";
    EXPECT_EQ(r["linearizable"], true) << "the nil final read is no violation";
    for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
    // `locklab check` on the history says the same.
    Invocation c = RunLocklab({"check", run_dir_ + "/history.jsonl"}, dir_);
    EXPECT_EQ(c.exit_code, 2) << c.output;
  }
};

TEST_F(DriverStartFailureTest, ADriverThatExitsAtStartIsUnknownWithItsReason) {
  ExpectUnknownNotRun(Driver("exits.sh", "echo 'cannot import mylock' >&2; exit 3"),
                      "before its hello line");
}

TEST_F(DriverStartFailureTest, ADriverThatNeverSaysHelloIsUnknownWithItsReason) {
  ExpectUnknownNotRun(Driver("silent.sh", "exec sleep 60"), "no hello line within start_timeout_ms 1500");
}

// The servers a driver's hello asks for (backend, nodes): `locklab run` probes the driver
// before it starts anything and starts those nodes; a bad value is refused, exit 64.
class DriverServersTest : public TrialTest {
 protected:
  // redis-py's example driver with a hello that also says `extra` (Python keyword arguments
  // of locklab_driver.run, e.g. backend="redis", nodes=3).
  std::string Driver(const std::string& name, const std::string& extra) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/usr/bin/python3\n"
                           "import sys\n"
                           "sys.path.insert(0, '" LOCKLAB_SOURCE_DIR "/examples/drivers')\n"
                           "import locklab_driver as ld\n"
                           "run = ld.run\n"
                           "ld.run = lambda *a, **k: run(*a, " << extra << ", **k)\n"
                           "import redis_py_lock\n"
                           "redis_py_lock.main()\n";
    chmod(path.c_str(), 0755);
    return "driver:" + path;
  }
};

TEST_F(DriverServersTest, AHelloAskingForThreeRedisNodesGetsThem) {
  Invocation inv = RunLocklab({"run", "--lock", Driver("three.py", "backend='redis', nodes=3"),
                               "--fault", "none", "--duration", "3s", "--clients", "2",
                               "--no-report", "--out", dir_},
                              dir_, Millis(40000));
  run_dir_ = RunDirOf(inv);
  ASSERT_FALSE(run_dir_.empty()) << inv.output;
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  std::string lab = ReadAll(run_dir_ + "/lab.log");
  EXPECT_NE(lab.find("driver asks for 3 redis node(s)"), std::string::npos) << lab;
  EXPECT_NE(lab.find("node n3 on "), std::string::npos) << lab;
  EXPECT_EQ(lab.find("node n4 on "), std::string::npos) << lab;
  EXPECT_NE(ReadAll(run_dir_ + "/scenario.toml").find("nodes = 3"), std::string::npos)
      << "the replayable scenario says how many";
  EXPECT_EQ(Results(run_dir_)["verdict"], "safe");
  for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
}

TEST_F(DriverServersTest, ABadBackendIsRefusedBeforeAnythingStarts) {
  std::string lock = Driver("mongo.py", "backend='mongodb'");
  Invocation inv = RunLocklab({"run", "--lock", lock, "--fault", "none", "--duration", "3s",
                               "--no-report", "--out", dir_},
                              dir_, Millis(20000));
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_NE(inv.output.find("hello: field 'backend' must be one of redis, mariadb, postgres, "
                            "etcd, zookeeper, got \"mongodb\""),
            std::string::npos)
      << inv.output;
  EXPECT_EQ(std::count(inv.output.begin(), inv.output.end(), '\n'), 1) << "one line: " << inv.output;
  // Refused before a run directory exists: the test's directory holds only the scripts and
  // the output of `locklab`.
  DIR* d = opendir(dir_.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    EXPECT_TRUE(name == "." || name == ".." || name == "mongo.py" || name.rfind("locklab-", 0) == 0)
        << "left behind: " << name;
  }
  closedir(d);
  // --nodes given: the run's own choice wins over the hello's (nothing to probe for it), but
  // the backend is still checked.
  inv = RunLocklab({"run", "--lock", lock, "--nodes", "1", "--fault", "none", "--duration", "3s",
                    "--no-report", "--out", dir_},
                   dir_, Millis(20000));
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
}

}  // namespace
}  // namespace locklab::testing
