// The workload's renew_every and validity options, end to end through the `locklab` binary
// with real redis-server nodes and real SIGSTOP: a client that honours validity renews its
// lease while it works, and after a pause longer than the TTL skips its write and releases
// at once; the history declares it, and the checker judges the holds by it.
#include <gtest/gtest.h>

#include <map>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

class WorkloadValidityTest : public TrialTest {
 protected:
  // The honouring run's history: renewals, early releases, skipped writes, no lost update.
  void ExpectHonouringRun(const nlohmann::json& r);
};

// watchdog renews (Lock::Renew), TTL 500 ms; the workload renews every 150 ms during a
// 400 ms hold; client-pause stops a client at before-write (after its renewals) for 1.2 s.
std::vector<std::string> PausedRenewingHolder(const std::string& validity) {
  return {"--hold", "400", "--renew-every", "150", "--validity", validity, "--pause-point",
          "before-write"};
}

// What the clients did around the pauses is timing: judged on runs the lab's timing was
// trusted in (TrustedTrial, tests/trial_retry.h).
TEST_F(WorkloadValidityTest, HonouringClientRenewsThenSkipsItsWriteAfterAPause) {
  TrustedTrial("watchdog", "client-pause", PausedRenewingHolder("honour"),
               [&](const nlohmann::json& r) { ExpectHonouringRun(r); });
}

void WorkloadValidityTest::ExpectHonouringRun(const nlohmann::json& r) {
  ASSERT_TRUE(r.is_object()) << run_dir_;
  auto h = History();
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h[0]["f"], "run");
  EXPECT_EQ(h[0]["value"]["workload"]["validity"], "honour") << h[0].dump();

  int workload_renews_ok = 0, abandoned = 0, paused_writes_skipped = 0;
  // Per client: whether it read since its last acquire ok and has not written since.
  std::map<int64_t, bool> read_unwritten;
  std::map<int64_t, bool> paused_in_hold;
  for (const auto& e : h) {
    if (!e.contains("process") || !e["process"].is_number_integer()) {
      // nemesis: note the paused client
      if (e.value("f", "") == "start" && e.value("key", "") == "client-pause") {
        for (const auto& t : e["value"]["targets"]) paused_in_hold[t.get<int64_t>()] = true;
      }
      continue;
    }
    int64_t p = e["process"];
    std::string f = e.value("f", ""), type = e.value("type", "");
    if (f == "renew" && type == "ok" && p < 1000) ++workload_renews_ok;  // not the watchdog thread
    if (f == "acquire" && type == "ok") read_unwritten[p] = false;
    if (f == "read" && type == "ok") read_unwritten[p] = true;
    if (f == "write" && type == "invoke") read_unwritten[p] = false;
    if (f == "release" && type == "invoke") {
      if (e["value"].value("abandoned", "") == "validity") {
        ++abandoned;
        if (read_unwritten[p] && paused_in_hold[p]) ++paused_writes_skipped;
      }
      paused_in_hold[p] = false;
    }
  }
  EXPECT_GE(workload_renews_ok, 3) << "the workload renewed its leases while it held them";
  EXPECT_GE(abandoned, 1) << "a client released early, its validity over";
  EXPECT_GE(paused_writes_skipped, 1) << "a paused client read, woke past its validity and did not write";
  EXPECT_EQ(r["resource"]["lost_updates"], 0) << r.dump(2);
}

TEST_F(WorkloadValidityTest, TheSameRunIgnoringValidityLosesUpdates) {
  // The contrast that makes the test above mean something: same seed, same pauses.
  TrustedTrial("watchdog", "client-pause", PausedRenewingHolder("ignore"),
               [&](const nlohmann::json& r) {
                 auto h = History();
                 ASSERT_FALSE(h.empty());
                 EXPECT_FALSE(h[0]["value"].contains("workload")) << h[0].dump();
                 EXPECT_EQ(r["verdict"], "violated") << r.dump(2);
                 EXPECT_GE(r["resource"]["lost_updates"].get<int>(), 1) << r.dump(2);
               });
}

TEST_F(WorkloadValidityTest, RenewEveryOnALockThatCannotRenewIsRefused) {
  Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--renew-every", "100",
                               "--duration", "1s", "--no-report", "--out", dir_},
                              dir_);
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_NE(inv.output.find("--renew-every"), std::string::npos) << inv.output;
  EXPECT_NE(inv.output.find("cannot renew"), std::string::npos) << inv.output;

  std::string scenario = dir_ + "/bad.toml";
  {
    std::ofstream out(scenario);
    out << "[lock]\nid = \"set-nx-px-lua\"\n\n[workload]\nrenew_every_ms = 100\nvalidity = \"honour\"\n";
  }
  inv = RunLocklab({"run", scenario, "--no-report", "--out", dir_}, dir_);
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_NE(inv.output.find("bad.toml:5: field 'workload.renew_every_ms'"), std::string::npos) << inv.output;

  inv = RunLocklab({"run", "--lock", "watchdog", "--validity", "sometimes", "--duration", "1s",
                    "--no-report", "--out", dir_},
                   dir_);
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_NE(inv.output.find("--validity"), std::string::npos) << inv.output;
}

TEST_F(WorkloadValidityTest, ScenarioRoundTripKeepsTheOptions) {
  auto r = Trial("watchdog", "none", {"--renew-every", "120", "--validity", "honour", "--duration", "1s"});
  std::string toml = ReadAll(run_dir_ + "/scenario.toml");
  EXPECT_NE(toml.find("renew_every_ms = 120"), std::string::npos) << toml;
  EXPECT_NE(toml.find("validity = \"honour\""), std::string::npos) << toml;
}

// The fault targets in a real run: each window of a random client-pause with target
// just-released stops the client whose release completed last (in the order the harness
// saw the events, which is the history's index order), and with target holder a client
// holding the lock then.
TEST_F(WorkloadValidityTest, FaultTargetsPickTheJustReleasedClientAndTheHolder) {
  for (std::string kind : {"just-released", "holder"}) {
    SCOPED_TRACE(kind);
    Trial("set-nx-px-lua", "client-pause",
          {"--pause-mode", "random", "--param", "target=" + kind, "--pause", "300", "--interval", "300"});
    int64_t last_releaser = 0;
    std::map<int64_t, bool> holding;
    int windows = 0;
    for (const auto& e : History()) {
      std::string f = e.value("f", ""), type = e.value("type", "");
      if (e["process"].is_number_integer()) {
        int64_t p = e["process"];
        if (f == "release" && type != "invoke") {
          last_releaser = p;
          holding[p] = false;
        }
        if (f == "acquire" && type == "ok") holding[p] = true;
        if (f == "acquire" && type == "invoke") holding[p] = false;
        continue;
      }
      if (f != "start" || e.value("key", "") != "client-pause") continue;
      ++windows;
      EXPECT_EQ(e["value"]["target"], kind) << e.dump();
      int64_t target = e["value"]["targets"][0];
      if (kind == "just-released") EXPECT_EQ(target, last_releaser) << e.dump();
      else EXPECT_TRUE(holding[target]) << e.dump();
    }
    EXPECT_GE(windows, 3);
  }
}

}  // namespace
}  // namespace locklab::testing
