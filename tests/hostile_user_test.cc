// Tried as a hostile new user would: a full disk, a scenario of tens of thousands
// of windows, signals while a client is stopped, directories and bad paths, bad input that
// used to be found after the run directory existed, torn and duplicate histories. Real
// files (a tmpfs mounted by the test), real signals, the real binary and servers. Each case
// ends in its documented exit code with one line, leaves no process behind (the test is
// the children's subreaper: an orphan would be reparented to it) and reports nothing safe
// that was not observed.
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {


class HostileUserTest : public TempDirTest {
 protected:
  HostileUserTest() : TempDirTest("locklab-hostile") {}
  void SetUp() override {
    TempDirTest::SetUp();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  void TearDown() override {
    if (!mount_.empty()) umount2(mount_.c_str(), MNT_DETACH);
    TempDirTest::TearDown();
  }
  // After a locklab exited: within 3 s, nothing it started is left (children get
  // PDEATHSIG and a reaper; this waits for them to be gone).
  void ExpectNoOrphans() {
    std::vector<pid_t> left;
    for (Nanos end = MonotonicNow() + Millis(3000); MonotonicNow() < end; SleepFor(Millis(50))) {
      left = LiveChildren();
      if (left.empty()) return;
    }
    for (pid_t p : left) {
      ADD_FAILURE() << "left behind: pid " << p << " " << ReadAll("/proc/" + std::to_string(p) + "/cmdline");
      kill(p, SIGKILL);
    }
  }
  // A `size` tmpfs at dir_/fs, filled with a file until `leave` bytes are free.
  std::string FullDisk(const std::string& size, size_t leave) {
    mount_ = dir_ + "/fs";
    mkdir(mount_.c_str(), 0755);
    if (mount("tmpfs", mount_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      mount_.clear();
      return "";
    }
    std::string fill = mount_ + "/fill";
    (void)!system(("dd if=/dev/zero of=" + fill + " bs=4k 2>/dev/null; truncate -s -" +
                   std::to_string(leave) + " " + fill).c_str());
    return mount_;
  }
  // Starts `args`, waits (up to 15 s) until the history shows a fault window opened, waits
  // `settle` more, sends `sig`, and waits for the exit: *ms is the time from the signal.
  void SignalOnceAWindowOpened(const std::vector<std::string>& args, Millis settle, int sig,
                               Invocation* inv, double* ms) {
    std::string log = dir_ + "/out.log";
    pid_t pid = StartLocklab(args, log);
    ASSERT_GT(pid, 0);
    bool opened = false;
    for (Nanos end = MonotonicNow() + Millis(15000); !opened && MonotonicNow() < end;
         SleepFor(Millis(20))) {
      opened = ReadAll(dir_ + "/runs/latest/history.jsonl").find("\"f\":\"start\"") !=
               std::string::npos;
    }
    if (!opened) kill(pid, SIGKILL);
    ASSERT_TRUE(opened) << ReadAll(log);
    SleepFor(settle);
    Nanos sent = MonotonicNow();
    kill(pid, sig);
    *inv = FinishLocklab(pid, log, Millis(10000));
    *ms = ToMillis(MonotonicNow() - sent);
  }
  std::string WriteScenario(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Expects exactly `code` and one line of output, equal to `line`; nothing started.
  void ExpectRefused(const std::vector<std::string>& args, int code, const std::string& line) {
    Invocation inv = RunLocklab(args, dir_);
    EXPECT_EQ(inv.exit_code, code) << inv.output;
    EXPECT_EQ(Lines(inv.output), std::vector<std::string>{line});
    EXPECT_FALSE(PathExists(dir_ + "/runs")) << "a run directory was made: " << inv.output;
    ExpectNoOrphans();
  }
  std::string mount_;
};

// 15.1: nothing can be written. The first file the run must keep is named, exit 70, and no
// verdict is printed.
TEST_F(HostileUserTest, AFullDiskEndsTheRunWithExit70NamingTheFile) {
  std::string fs = FullDisk("5m", 0);
  if (fs.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "client-pause", "--ttl",
                               "500", "--pause", "1200", "--duration", "3s", "--no-report", "--out",
                               fs + "/runs"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 70) << inv.output;
  std::vector<std::string> lines = Lines(inv.output);
  ASSERT_EQ(lines.size(), 1u) << inv.output;
  EXPECT_EQ(lines[0].rfind("locklab run: write " + fs + "/runs/", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("/scenario.toml: No space left on device"), std::string::npos) << lines[0];
  EXPECT_EQ(inv.output.find("safe"), std::string::npos);
  ExpectNoOrphans();
}

// 15.1: the disk fills while the run records. The run stops there with exit 70 naming the
// file; whatever results.json made it to disk is not "safe"; nothing .tmp is left.
TEST_F(HostileUserTest, ADiskThatFillsDuringTheRunEndsItWithExit70) {
  // About 100 KiB free: the run starts (scenario, logs, the first events) and the history,
  // some 30 KiB a second with three clients, fills the rest within the 4 s run.
  std::string fs = FullDisk("5m", 100 * 1024);
  if (fs.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  Nanos t0 = MonotonicNow();
  Invocation inv = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "client-pause", "--ttl",
                               "500", "--pause", "1200", "--hold", "5", "--think", "0", "--duration",
                               "4s", "--no-report", "--out", fs + "/runs"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 70) << inv.output;
  EXPECT_LT(ToMillis(MonotonicNow() - t0), 15000.0);
  int errors = 0;
  for (const auto& l : Lines(inv.output)) {
    if (l.rfind("locklab run: ", 0) != 0) continue;
    ++errors;
    EXPECT_EQ(l.rfind("locklab run: write " + fs + "/runs/", 0), 0u) << l;
    EXPECT_NE(l.find(": No space left on device"), std::string::npos) << l;
    std::cout << "disk full mid-run: " << l.substr(l.rfind('/') + 1) << "\n";
  }
  EXPECT_EQ(errors, 1) << inv.output;
  EXPECT_EQ(inv.output.find("verdict: safe"), std::string::npos) << inv.output;
  std::string latest = fs + "/runs/latest";
  nlohmann::json r = Results(latest);
  if (r.is_object()) {
    EXPECT_NE(r["verdict"], "safe") << r.dump();
  }
  EXPECT_FALSE(PathExists(latest + "/results.json.tmp"));
  EXPECT_FALSE(PathExists(latest + "/junit.xml.tmp"));
  ExpectNoOrphans();
}

// 15.1, bad paths: an --out that cannot be made is an I/O error (70) in one line.
TEST_F(HostileUserTest, AnOutDirectoryThatCannotBeMadeIsExit70) {
  ExpectRefused({"run", "--lock", "setnx", "--duration", "1s", "--no-report", "--out", "/dev/null/runs"},
                70, "locklab run: mkdir /dev/null/runs: Not a directory");
  mount_ = dir_ + "/ro";
  mkdir(mount_.c_str(), 0755);
  if (mount("tmpfs", mount_.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    mount_.clear();
    GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  }
  ExpectRefused({"run", "--lock", "setnx", "--duration", "1s", "--no-report", "--out", mount_ + "/runs"},
                70, "locklab run: mkdir " + mount_ + "/runs: Read-only file system");
}

// 15.1 for the matrix: the first cell scenario that cannot be written ends it, exit 70.
TEST_F(HostileUserTest, AFullDiskEndsTheMatrixWithExit70NamingTheFile) {
  std::string fs = FullDisk("1m", 0);
  if (fs.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  Invocation inv = RunLocklab({"matrix", "--locks", "setnx", "--faults", "none,client-pause",
                               "--no-report", "--out", fs + "/m"},
                              dir_);
  EXPECT_EQ(inv.exit_code, 70) << inv.output;
  std::vector<std::string> lines = Lines(inv.output);
  ASSERT_EQ(lines.size(), 1u) << inv.output;
  EXPECT_EQ(lines[0].rfind("locklab matrix: write " + fs + "/m/matrix/", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(".toml: No space left on device"), std::string::npos) << lines[0];
  ExpectNoOrphans();
}

// 15.2 and 15.5: SIGTERM, SIGINT and SIGHUP while a client is SIGSTOPped by the fault end
// the run within a second (one turn of the event loop, then the teardown), with
// results.json written and marked interrupted.
class SignalTest : public HostileUserTest, public ::testing::WithParamInterface<int> {};

TEST_P(SignalTest, ASignalWhileAClientIsStoppedEndsTheRunWithinASecond) {
  int sig = GetParam();
  Invocation inv;
  double ms = 0;
  // Once the pause window is open a client is stopped.
  ASSERT_NO_FATAL_FAILURE(SignalOnceAWindowOpened(
      {"run", "--lock", "set-nx-px-lua", "--fault", "client-pause", "--ttl", "500", "--pause",
       "5000", "--first-at", "200", "--duration", "20s", "--no-report", "--out", dir_ + "/runs"},
      Millis(100), sig, &inv, &ms));
  std::cout << strsignal(sig) << ": run ended " << ms << " ms after the signal\n";
  EXPECT_EQ(inv.exit_code, 2) << inv.output;
  EXPECT_LT(ms, 1000.0) << inv.output;
  nlohmann::json r = Results(RunDirOf(inv));
  ASSERT_TRUE(r.is_object()) << inv.output;
  EXPECT_EQ(r["interrupted"], true);
  EXPECT_EQ(r["verdict"], "unknown");
  ExpectNoOrphans();
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalTest, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

std::string ManyFaults(int tables, const std::string& table) {
  std::string s = "name = \"many\"\nduration_ms = 3000\n[lock]\nid = \"set-nx-px-lua\"\nttl_ms = 300\n"
                  "[workload]\nclients = 2\nhold_ms = 5\nthink_ms = 0\n";
  for (int i = 0; i < tables; ++i) s += table;
  return s;
}

// 15.2: the 4.7 MB scenario of 60,000 [[faults]] tables is refused at once, with the line
// of the first table past the bound; a 20 MiB file by its size.
TEST_F(HostileUserTest, SixtyThousandFaultTablesAreRefusedWithOneLine) {
  std::string table = "[[faults]]\nid = \"client-pause\"\nfirst_at_ms = 100\nduration_ms = 1\n"
                      "interval_ms = 0\ntargets = [1]\n\n";
  std::string path = WriteScenario("huge.toml", ManyFaults(60000, table));
  Nanos t0 = MonotonicNow();
  ExpectRefused({"run", path, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + path + ":" + std::to_string(10 + 7 * 256) +
                    ": field 'faults': 60000 [[faults]] tables, at most 256 (one table repeats its "
                    "window: windows, interval_ms)");
  std::cout << "60,000 tables refused in " << ToMillis(MonotonicNow() - t0) << " ms\n";
  // A file far beyond any scenario is refused by its size, before it is parsed.
  std::string big = WriteScenario("big.toml", std::string(20 << 20, '#'));
  ExpectRefused({"run", big, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + big + ": 20971520 bytes; a scenario file is at most 16 MiB");
}

// 15.2: tens of thousands of windows within the bound (256 tables of 200 one-millisecond
// pauses, all on client 1) run without a hang, and a SIGTERM in the middle still ends the
// run within a second with results.json.
TEST_F(HostileUserTest, TensOfThousandsOfWindowsNeverBlockTheHarness) {
  std::string table = "[[faults]]\nid = \"client-pause\"\nfirst_at_ms = 100\nduration_ms = 1\n"
                      "interval_ms = 0\nwindows = 200\ntargets = [1]\n\n";
  std::string path = WriteScenario("many.toml", ManyFaults(256, table));
  Invocation inv;
  double ms = 0;
  ASSERT_NO_FATAL_FAILURE(SignalOnceAWindowOpened(
      {"run", path, "--no-report", "--out", dir_ + "/runs"}, Millis(1000), SIGTERM, &inv, &ms));
  std::string history = ReadAll(RunDirOf(inv) + "/history.jsonl");
  size_t windows = 0;
  for (size_t at = 0; (at = history.find("\"f\":\"start\"", at)) != std::string::npos; ++at) ++windows;
  std::cout << "256 fault tables: " << windows << " windows opened in 1 s; ended " << ms
            << " ms after SIGTERM\n";
  EXPECT_EQ(inv.exit_code, 2) << inv.output;
  EXPECT_LT(ms, 1000.0);
  // Windows kept opening after the first: the schedule was busy when the signal came. (How
  // many depends on the machine: 17 to 150 in 1 s here with busy cores beside the test; it
  // was "more than 10", and failed once with the unit and integration tests beside it.)
  EXPECT_GE(windows, 2u);
  nlohmann::json r = Results(RunDirOf(inv));
  ASSERT_TRUE(r.is_object()) << inv.output;
  EXPECT_EQ(r["interrupted"], true);
  ExpectNoOrphans();
}

// 15.3: a directory is no scenario and no history.
TEST_F(HostileUserTest, ADirectoryIsRefusedAsScenarioAndAsHistory) {
  std::string d = dir_ + "/some-dir.toml";
  mkdir(d.c_str(), 0755);
  ExpectRefused({"run", d, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + d + ": is a directory, not a scenario file");
  ExpectRefused({"check", d}, 65, "locklab check: " + d + ": is a directory, not a history file");
  ExpectRefused({"run", dir_ + "/nothing.toml", "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + dir_ + "/nothing.toml: cannot open: No such file or directory");
}

// 15.4: bad flags and scenario values are refused before a run directory exists, in one
// line naming the flag or the file, line and field; runs/latest is not touched.
TEST_F(HostileUserTest, BadInputIsRefusedBeforeAnythingStarts) {
  std::vector<std::string> base = {"run", "--lock", "set-nx-px-lua", "--no-report", "--out", dir_ + "/runs"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ExpectRefused(with({"--fault", "meteor"}), 64, "locklab run: flag --fault: unknown fault 'meteor' (see `locklab list`)");
  ExpectRefused(with({"--knob", "bogus=1"}), 64,
                "locklab run: flag --knob: lock 'set-nx-px-lua': unknown knob 'bogus'");
  std::string targets = WriteScenario("targets.toml",
                                      "[lock]\nid = \"setnx\"\n[workload]\nclients = 2\n"
                                      "[[faults]]\nid = \"client-pause\"\ntargets = [7]\n");
  ExpectRefused({"run", targets, "--no-report", "--out", dir_ + "/runs"}, 64,
                "locklab " + targets + ":7: field 'faults[0].targets': fault client-pause: target "
                "client 7 does not exist (clients are 1..2)");
  std::string nodes = WriteScenario("nodes.toml",
                                    "[lock]\nid = \"redlock\"\n[[faults]]\nid = \"server-pause\"\n"
                                    "nodes = [9]\n");
  ExpectRefused({"run", nodes, "--no-report", "--out", dir_ + "/runs"}, 64,
                "locklab " + nodes + ":5: field 'faults[0].nodes': fault server-pause: node 9 does "
                "not exist (lock redlock has n1..n5)");
  std::string knob = WriteScenario("knob.toml", "[lock]\nid = \"redlock\"\n[lock.knobs]\nretries = \"x\"\nbogus = \"1\"\n");
  Invocation inv = RunLocklab({"run", knob, "--no-report", "--out", dir_ + "/runs"}, dir_);
  EXPECT_EQ(inv.exit_code, 64) << inv.output;
  ASSERT_EQ(Lines(inv.output).size(), 1u) << inv.output;
  EXPECT_EQ(inv.output.rfind("locklab " + knob + ":5: field 'lock.knobs.bogus': ", 0), 0u) << inv.output;
  EXPECT_FALSE(PathExists(dir_ + "/runs"));
}

// 15.5: a fault whose first window is past the run's end would never run.
TEST_F(HostileUserTest, AFaultPastTheEndOfTheRunIsRefused) {
  ExpectRefused({"run", "--lock", "setnx", "--fault", "client-pause", "--first-at", "3600000",
                 "--no-report", "--out", dir_ + "/runs"},
                64,
                "locklab run: flag --first-at: fault client-pause would first open at 3600000 ms, "
                "at or after the run's end (10000 ms)");
  std::string late = WriteScenario("late.toml",
                                   "duration_ms = 2000\n[lock]\nid = \"setnx\"\n[[faults]]\n"
                                   "id = \"client-pause\"\nfirst_at_ms = 2000\n");
  ExpectRefused({"run", late, "--no-report", "--out", dir_ + "/runs"}, 64,
                "locklab " + late + ":6: field 'faults[0].first_at_ms': fault client-pause would "
                "first open at 2000 ms, at or after the run's end (2000 ms)");
}

// 15.5: a scenario that names no lock runs nothing.
TEST_F(HostileUserTest, AnEmptyScenarioOrOneWithoutItsLockIsRefused) {
  std::string empty = WriteScenario("empty.toml", "");
  ExpectRefused({"run", empty, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + empty + ":1: field 'lock': missing: a scenario needs [lock] with its id "
                "(see `locklab list`)");
  std::string nolock = WriteScenario("nolock.toml", "[workload]\nclients = 2\n");
  ExpectRefused({"run", nolock, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + nolock + ":1: field 'lock': missing: a scenario needs [lock] with its id "
                "(see `locklab list`)");
  std::string noid = WriteScenario("noid.toml", "seed = 3\n\n[lock]\nttl_ms = 300\n");
  ExpectRefused({"run", noid, "--no-report", "--out", dir_ + "/runs"}, 65,
                "locklab " + noid + ":3: field 'lock.id': missing (see `locklab list`)");
}

// 15.5: two events with one index are bad input (65), named by file, line and field.
TEST_F(HostileUserTest, DuplicateHistoryIndexesAreBadInput) {
  std::string h = WriteScenario("dup.jsonl",
      "{\"index\":0,\"time_ns\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"L\",\"value\":null}\n"
      "{\"index\":1,\"time_ns\":2,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"L\",\"value\":{\"token\":\"a\"}}\n"
      "{\"index\":1,\"time_ns\":3,\"process\":1,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"L\",\"value\":{\"token\":\"a\"}}\n");
  ExpectRefused({"check", h}, 65,
                "locklab check: " + h + ":3: field 'index': duplicate index 1 (also on line 2)");
}

// 15.5: a real run's history with its last line torn (as a kill mid-write leaves it) is
// checked as the prefix before it, says so in one line, and is not safe: the run's end
// event was the torn line.
TEST_F(HostileUserTest, ATornLastLineIsDroppedAndTheRestChecked) {
  Invocation run = RunLocklab({"run", "--lock", "set-nx-px-lua", "--fault", "none", "--duration", "1s",
                               "--no-report", "--out", dir_ + "/runs"},
                              dir_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::string history = ReadAll(RunDirOf(run) + "/history.jsonl");
  Invocation whole = RunLocklab({"check", RunDirOf(run) + "/history.jsonl"}, dir_);
  EXPECT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_NE(whole.output.find("verdict: safe"), std::string::npos) << whole.output;
  size_t last = history.rfind('\n', history.size() - 2) + 1;
  int lines = static_cast<int>(std::count(history.begin(), history.end(), '\n'));
  std::string torn = WriteScenario("torn.jsonl", history.substr(0, last + (history.size() - last) / 2));
  Invocation inv = RunLocklab({"check", torn}, dir_);
  EXPECT_EQ(inv.exit_code, 2) << inv.output;
  EXPECT_NE(inv.output.find("locklab check: " + torn + ":" + std::to_string(lines) +
                            ": torn last line dropped (a killed run?); checking the " +
                            std::to_string(lines - 1) + " events before it\n"),
            std::string::npos)
      << inv.output;
  EXPECT_NE(inv.output.find("verdict: unknown"), std::string::npos) << inv.output;
  EXPECT_EQ(inv.output.find("verdict: safe"), std::string::npos) << inv.output;
  ExpectNoOrphans();
}

// 15.5: an interrupted matrix says so; its unrun cells are `-`, not `?`.
TEST_F(HostileUserTest, AnInterruptedMatrixSaysSo) {
  std::string log = dir_ + "/matrix.log";
  pid_t pid = StartLocklab({"matrix", "--locks", "setnx", "--faults", "none,client-pause,slow-cs",
                            "--jobs", "1", "--no-report", "--out", dir_ + "/m"},
                           log);
  ASSERT_GT(pid, 0);
  bool started = false;
  for (Nanos end = MonotonicNow() + Millis(15000); !started && MonotonicNow() < end; SleepFor(Millis(20))) {
    // The first trial is running once its history exists.
    started = system(("find " + dir_ + "/m -name history.jsonl 2>/dev/null | grep -q .").c_str()) == 0;
  }
  ASSERT_TRUE(started) << ReadAll(log);
  SleepFor(Millis(500));
  kill(pid, SIGINT);
  Invocation inv = FinishLocklab(pid, log, Millis(15000));
  EXPECT_EQ(inv.exit_code, 2) << inv.output;
  std::string dir = MatrixDirOf(inv);
  ASSERT_FALSE(dir.empty()) << inv.output;
  std::string md = ReadAll(dir + "/matrix.md");
  EXPECT_NE(md.find("**Interrupted**: 2 of 3 trials never ran"), std::string::npos) << md;
  EXPECT_NE(md.find("**-** 0/1 (1 not run)"), std::string::npos) << md;
  nlohmann::json j = nlohmann::json::parse(ReadAll(dir + "/matrix.json"), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["trials_not_run"], 2);
  int not_run_cells = 0;
  for (const auto& c : j["cells"]) {
    EXPECT_NE(c["verdict"], "S") << c.dump();
    not_run_cells += c.value("not_run", 0) > 0;
  }
  EXPECT_EQ(not_run_cells, 2);
  ExpectNoOrphans();
}

}  // namespace
}  // namespace locklab::testing
