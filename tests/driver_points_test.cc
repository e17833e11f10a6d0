// Pause points a lock (or a lock driver's hello) announces, through
// the `locklab` binary. A fault armed at a point nobody announces is refused before anything
// starts (the one-line error names the file, line and field, or the flag); a client-pause
// armed at a driver's own point really stops the client there (the deliberately broken
// examples/drivers/get_compare_del.py, between its GET and its DEL); `locklab matrix --ttl`
// is checked and says why a cell too long to run is n/a.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

const char kGcd[] = "driver:examples/drivers/get_compare_del.py";

class DriverPointsTest : public TrialTest {
 protected:
  Invocation Locklab(std::vector<std::string> args, Millis timeout = Millis(60000)) {
    return RunLocklab(args, dir_, timeout);
  }
  std::string WriteScenario(const std::string& text) {
    std::string path = dir_ + "/s.toml";
    std::ofstream(path) << text;
    return path;
  }
  // The first window a fault opened (the nemesis `start` event) in a run, and its history.
  struct Window {
    bool seen = false;  // the window opened at the expected point, on one client
    nlohmann::json target, start;
    int64_t opened = 0, closed = 0;  // time_ns
    std::vector<nlohmann::json> history;
  };
  // Runs the scenario `text` (it must run: exit below 64) and finds its first window, which
  // must be at `point` on one client.
  Window RunToFirstWindow(const std::string& text, const std::string& point) {
    Window w;
    Invocation inv = Locklab({"run", WriteScenario(text), "--no-report", "--out", dir_});
    run_dir_ = RunDirOf(inv);
    EXPECT_FALSE(run_dir_.empty()) << inv.output;
    EXPECT_LT(inv.exit_code, 64) << inv.output;
    if (run_dir_.empty()) return w;
    w.history = History();
    for (const auto& e : w.history) {
      if (e.value("process", nlohmann::json()) == "nemesis" && e.value("f", "") == "start") {
        w.start = e;
        break;
      }
    }
    EXPECT_FALSE(w.start.is_null()) << "no nemesis start in " << run_dir_ << "/history.jsonl";
    if (w.start.is_null()) return w;
    const nlohmann::json& v = w.start["value"];
    EXPECT_EQ(v.value("point", ""), point) << w.start.dump();
    EXPECT_TRUE(v.contains("targets") && v["targets"].size() == 1u) << w.start.dump();
    if (v.value("point", "") != point || !v.contains("targets") || v["targets"].size() != 1u) return w;
    w.target = v["targets"][0];
    w.opened = w.start["time_ns"].get<int64_t>();
    w.closed = w.opened + v.value("duration_ms", int64_t{0}) * 1000000;
    w.seen = true;
    return w;
  }
};

TEST_F(DriverPointsTest, AFlagPointTheLockDoesNotAnnounceIsRefused) {
  Invocation inv = Locklab({"run", "--lock", "setnx", "--fault", "client-pause", "--param",
                            "point=x", "--no-report", "--out", dir_});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(inv.output,
            "locklab run: flag --param: lock 'setnx' has no pause point 'x' (it has: before-acquire, "
            "after-acquire, before-write, before-release, after-release)\n");
}

TEST_F(DriverPointsTest, AScenarioPointTheLockDoesNotAnnounceNamesItsLine) {
  std::string path = WriteScenario(
      "duration_ms = 2000\n"
      "[lock]\n"
      "id = \"redlock\"\n"
      "[[faults]]\n"
      "id = \"client-pause\"\n"
      "point = \"between-get-and-del\"\n");
  Invocation inv = Locklab({"run", path, "--no-report", "--out", dir_});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(inv.output, "locklab " + path +
                            ":6: field 'faults[0].point': lock 'redlock' has no pause point "
                            "'between-get-and-del' (it has: before-acquire, after-acquire, before-write, before-release, "
                            "after-release, redlock-replies-in-flight)\n");
}

TEST_F(DriverPointsTest, ADriversPointsComeFromItsHello) {
  Invocation inv = Locklab({"run", "--lock", kGcd, "--fault", "client-pause", "--param",
                            "point=nope", "--no-report", "--out", dir_});
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  EXPECT_EQ(inv.output, std::string("locklab run: flag --param: lock '") + kGcd +
                            "' has no pause point 'nope' (it has: before-acquire, after-acquire, "
                            "before-write, before-release, after-release, between-get-and-del)\n");
}

// A driver's nodes come from its hello too ("nodes": 5 here): a fault's nodes are checked
// against them without --nodes. n5 passes the node check (the run is then refused for its
// window, which is checked after the nodes); n6 is refused naming the hello's n1..n5.
TEST_F(DriverPointsTest, ADriversNodesComeFromItsHello) {
  const std::string lock = "driver:bench/drivers/redlock_quorum.py";
  Invocation five = Locklab({"run", "--lock", lock, "--fault", "partition", "--param",
                             "shape=isolate-node", "--fault-nodes", "n2,n5", "--duration", "2s",
                             "--first-at", "3000", "--no-report", "--out", dir_});
  EXPECT_EQ(five.exit_code, 64) << five.output;
  EXPECT_NE(five.output.find("would first open at 3000 ms"), std::string::npos) << five.output;
  Invocation six = Locklab({"run", "--lock", lock, "--fault", "partition", "--param",
                            "shape=isolate-node", "--fault-nodes", "n6", "--no-report", "--out", dir_});
  EXPECT_EQ(six.exit_code, 64) << six.output;
  EXPECT_EQ(six.output, "locklab run: flag --fault-nodes: fault partition: node 6 does not exist (lock " +
                            lock + " has n1..n5)\n");
}

// The pause lands between the driver's GET and DEL: the nemesis opens the window at the
// point, on the client whose release is then in flight, and that release completes only
// after the window closed (the whole process group, driver included, was stopped).
TEST_F(DriverPointsTest, ClientPauseAtADriversPointStopsTheClientThere) {
  const std::string text =
      "name = \"gcd-pause\"\n"
      "duration_ms = 4000\n"
      "seed = 3\n"
      "[lock]\n"
      "id = \"" + std::string(kGcd) + "\"\n"
      "ttl_ms = 500\n"
      "[workload]\n"
      "clients = 2\n"
      "hold_ms = 50\n"
      "think_ms = 20\n"
      "acquire_timeout_ms = 1000\n"
      "[[faults]]\n"
      "id = \"client-pause\"\n"
      "point = \"between-get-and-del\"\n"
      "first_at_ms = 300\n"
      "duration_ms = 1200\n"
      "windows = 1\n";
  Window w = RunToFirstWindow(text, "between-get-and-del");
  ASSERT_TRUE(w.seen);
  const auto& h = w.history;
  const nlohmann::json& target = w.target;
  const int64_t opened = w.opened, closed = w.closed;
  EXPECT_EQ(w.start["value"].value("duration_ms", int64_t{0}), 1200);
  // The target's last invoke before the window is a release, and it completes after it.
  const nlohmann::json* invoke = nullptr;
  const nlohmann::json* completion = nullptr;
  for (const auto& e : h) {
    if (e.value("process", nlohmann::json()) != target) continue;
    int64_t t = e["time_ns"].get<int64_t>();
    if (e["type"] == "invoke" && t <= opened) {
      invoke = &e;
    } else if (invoke != nullptr && e["type"] != "invoke" && completion == nullptr &&
               (*invoke)["f"] == e["f"] && t > opened) {
      completion = &e;
    }
  }
  ASSERT_NE(invoke, nullptr);
  EXPECT_EQ((*invoke)["f"], "release") << invoke->dump();
  ASSERT_NE(completion, nullptr) << "the release never completed";
  EXPECT_GE((*completion)["time_ns"].get<int64_t>(), closed) << completion->dump();
  auto r = Results(run_dir_);
  ASSERT_TRUE(r.contains("coverage")) << r.dump(2);
  EXPECT_EQ(r["coverage"][0]["windows_opened"], 1) << r.dump(2);
  for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
}

// Regression: a stop armed at a point that a lock's own thread announces (watchdog's
// renewal thread, watchdog-renewal-due) stops that thread there. The stop was sent to the
// process, the main thread took it, and the renewal thread ran on past its point: the
// renewal it was about to send went out in the window's first 40 us, before the stop landed.
TEST_F(DriverPointsTest, ClientPauseAtTheWatchdogsRenewalPointStopsTheRenewalThreadThere) {
  const std::string text =
      "name = \"renewal-due-pause\"\n"
      "duration_ms = 3000\n"
      "seed = 5\n"
      "[lock]\n"
      "id = \"watchdog\"\n"
      "ttl_ms = 500\n"
      "[workload]\n"
      "clients = 2\n"
      "hold_ms = 400\n"
      "think_ms = 100\n"
      "acquire_timeout_ms = 1000\n"
      "[[faults]]\n"
      "id = \"client-pause\"\n"
      "point = \"watchdog-renewal-due\"\n"
      "first_at_ms = 300\n"
      "duration_ms = 800\n"
      "windows = 1\n";
  Window w = RunToFirstWindow(text, "watchdog-renewal-due");
  ASSERT_TRUE(w.seen);
  const auto& h = w.history;
  const int64_t renewer = w.target.get<int64_t>() + 1000;  // its renewal worker
  const int64_t opened = w.opened, closed = w.closed;
  const nlohmann::json* next = nullptr;  // the renewal worker's first event in the window
  for (const auto& e : h) {
    if (e.value("process", nlohmann::json()) == renewer && e["time_ns"].get<int64_t>() > opened) {
      next = &e;
      break;
    }
  }
  ASSERT_NE(next, nullptr) << "the renewal never ran after the stop, in " << run_dir_;
  EXPECT_EQ((*next)["type"], "invoke") << next->dump();
  EXPECT_GE((*next)["time_ns"].get<int64_t>(), closed)
      << "renewed inside the window: " << next->dump();
  for (pid_t p : LoggedPids(run_dir_)) EXPECT_FALSE(PidExists(p)) << "pid " << p << " left behind";
}

// A driver's hello declares the TTL it really sets (get_compare_del.py --ttl-ms): every
// scenario hunt draws uses it, not the TTLs hunt draws from without --ttl (a hunt drew
// 500, 750 and 1250 ms for a driver that had declared another).
TEST_F(DriverPointsTest, HuntDrawsAtTheTtlADriverDeclares) {
  Invocation inv = Locklab({"hunt", "--lock", kGcd, "--driver-arg", "--ttl-ms", "--driver-arg", "900", "--faults",
                            "client-pause", "--budget", "25s", "--jobs", "2", "--no-shrink", "--seed", "4",
                            "--no-report", "--out", dir_},
                           Millis(120000));
  EXPECT_LT(inv.exit_code, 64) << inv.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(inv.output, m, std::regex("hunt: (\\S+)/hunt\\.md"))) << inv.output;
  int scenarios = 0;
  for (const auto& e : std::filesystem::directory_iterator(m[1].str() + "/trials")) {
    if (e.path().extension() != ".toml") continue;
    ++scenarios;
    std::string toml = ReadAll(e.path());
    EXPECT_NE(toml.find("ttl_ms = 900\n"), std::string::npos) << e.path() << ":\n" << toml;
  }
  EXPECT_GE(scenarios, 2);
}

TEST_F(DriverPointsTest, MatrixTtlFlagIsChecked) {
  Invocation a = Locklab({"matrix", "--ttl", "0", "--no-report", "--out", dir_});
  EXPECT_EQ(a.exit_code, 64) << a.output;
  EXPECT_EQ(a.output.rfind("locklab matrix: flag --ttl: ", 0), 0u) << a.output;
  EXPECT_EQ(a.output.find('\n'), a.output.size() - 1) << "one line: " << a.output;
  Invocation b = Locklab({"matrix", "--ttl", "soon", "--no-report", "--out", dir_});
  EXPECT_EQ(b.exit_code, 64) << b.output;
  EXPECT_EQ(b.output.rfind("locklab matrix: flag --ttl: ", 0), 0u) << b.output;
  Invocation c = Locklab({"matrix", "--ttl", "--no-report"});
  EXPECT_EQ(c.exit_code, 64) << c.output;
}

TEST_F(DriverPointsTest, MatrixTtlTooLongACellIsNaAndSaysWhy) {
  // x200: client-pause's 3.5 s run would take 700 s. Nothing runs.
  Invocation inv = Locklab({"matrix", "--ttl", "100000", "--locks", "set-nx-px-lua", "--faults",
                            "client-pause", "--seed", "7", "--no-report", "--out", dir_});
  EXPECT_EQ(inv.exit_code, 0) << inv.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(inv.output, m, std::regex("matrix: (\\S+)/matrix.md"))) << inv.output;
  auto j = nlohmann::json::parse(ReadAll(m[1].str() + "/matrix.json"), nullptr, false);
  ASSERT_TRUE(j.is_object()) << inv.output;
  std::string all = j.dump();
  EXPECT_NE(all.find("needs a 700 s run (the preset's times x 200 for TTL 100000 ms), runs are "
                     "capped at 600 s"),
            std::string::npos)
      << all.substr(0, 2000);
}

}  // namespace
}  // namespace locklab::testing
