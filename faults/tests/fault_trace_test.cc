// Pins what every fault does to the lab, call by call, on a simulated clock: the "plan"
// event at setup, each arm / start / stop, the lab calls that open and heal a window, and
// the target draws from the seed, and each window's "effect" evidence from the lab's probes
// (simulated below: the lab answers what it was told to do, so every effect is seen). The
// traces in testdata/fault_traces.txt were first produced by the code before faults/ was
// split into schedules and effects, then rewritten when windows began to record their
// evidence; LOCKLAB_WRITE_TRACES=1 rewrites the file (only for an intended change of
// behaviour: read the diff).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "faults/clock_effects.h"
#include "faults/fault.h"

namespace locklab::faults {
namespace {

// A lab of 3 clients and 3 nodes that writes every call it gets as one line, at the
// simulated time. Clients hold a lock in alternate 100 ms slices; a client reaches an
// armed point 30 ms after it is armed; the last releaser turns every 100 ms from 500 ms.
class TracingLab : public LabControl {
 public:
  explicit TracingLab(Nanos end) : end_(end) {}
  std::string trace;
  Nanos now{0};
  int pending_process = 0;  // armed, reports its point at pending_at
  std::string pending_point;
  std::string pending_action;
  Nanos pending_at{0};
  // What the simulated lab did, for its probes: clients and nodes stopped, killed,
  // restarted; clock offsets; slow sections; link states; node config.
  std::set<int> stopped_clients, paused_nodes, killed_nodes;
  std::map<int, int> restarts;
  std::map<int, std::string> node_clock, client_clock, maxmemory;
  std::map<int, Nanos> clock_asked;
  std::map<int, SlowSeen> slow;
  std::map<std::pair<int, int>, LinkState> links;
  mutable std::map<std::pair<int, int>, LinkBytes> counters;
  bool n1_killed = false;
  std::map<std::string, std::string> replica_has;  // keys the replica holds (ProbeFailover)
  int failing_restarts = 0;  // this many RestartNode calls fail first (the node stays down)

  // The armed client reached its point: it stops itself, or starts its slow sleep.
  void ReachPoint(int p) {
    if (pending_action == "pause") stopped_clients.insert(p);
    if (pending_action.rfind("slow:", 0) == 0) {
      Millis ms(std::stoll(pending_action.substr(5)));
      slow[p] = {pending_point, ms, now + ms};
    }
  }

  int client_count() const override { return 3; }
  int node_count() const override { return 3; }
  Nanos run_end() const override { return end_; }
  bool ClientRunning(int p) const override { return p != crashed_; }
  bool PauseClient(int p) override {
    stopped_clients.insert(p);
    return Line("PauseClient " + std::to_string(p)), true;
  }
  bool ResumeClient(int p) override {
    stopped_clients.erase(p);
    return Line("ResumeClient " + std::to_string(p)), true;
  }
  bool CrashClient(int p) override {
    crashed_ = p;
    return Line("CrashClient " + std::to_string(p)), true;
  }
  void ArmPoint(int p, const std::string& point, const std::string& action) override {
    Line("ArmPoint " + std::to_string(p) + " " + point + " " + action);
    pending_process = p;
    pending_point = point;
    pending_action = action;
    pending_at = now + Millis(30);
  }
  void DisarmPoints(int p) override { Line("DisarmPoints " + std::to_string(p)); }
  std::vector<int> Holders() const override {
    if ((now / Millis(100)) % 2 == 0) return {};
    return {2, 3};
  }
  std::vector<HeldLock> HeldLocks(int p) const override {
    const std::vector<int> h = Holders();
    if (std::find(h.begin(), h.end(), p) == h.end()) return {};
    return {{"lock:" + std::to_string(p - 2), "token-" + std::to_string(p)}};
  }
  int64_t AcquiresSeen() const override { return now / Millis(100); }
  // Nobody has released before 500 ms; then clients 1, 2, 3 in turn, 100 ms each.
  int LastReleaser() const override {
    if (now < Millis(500)) return 0;
    return static_cast<int>((now / Millis(100)) % 3) + 1;
  }
  bool PauseNode(int n) override {
    paused_nodes.insert(n);
    return Line("PauseNode " + std::to_string(n)), true;
  }
  bool ResumeNode(int n) override {
    paused_nodes.erase(n);
    return Line("ResumeNode " + std::to_string(n)), true;
  }
  void KillNode(int n) override {
    killed_nodes.insert(n);
    n1_killed = n1_killed || n == 1;
    Line("KillNode " + std::to_string(n));
  }
  Status RestartNode(int n) override {
    if (failing_restarts > 0) {
      --failing_restarts;
      Line("RestartNode " + std::to_string(n) + " (fails)");
      return Status::Infrastructure("address already in use");
    }
    killed_nodes.erase(n);
    ++restarts[n];
    Line("RestartNode " + std::to_string(n));
    return Status::Ok();
  }
  Status SetNodeClock(int n, const std::string& offset) override {
    node_clock[n] = offset;
    Line("SetNodeClock " + std::to_string(n) + " " + offset);
    return Status::Ok();
  }
  Status SetNodeConfig(int n, const std::string& name, const std::string& value) override {
    if (name == "maxmemory") maxmemory[n] = value;
    Line("SetNodeConfig " + std::to_string(n) + " " + name + " " + value);
    return Status::Ok();
  }
  Status SetClientClock(int p, const std::string& offset) override {
    client_clock[p] = offset;
    Line("SetClientClock " + std::to_string(p) + " " + offset);
    return Status::Ok();
  }
  // Probes: pids 100 + client, 200 + node (+ 10 per restart); a client answers a clock
  // question 20 ms after it is asked; a link not passing holds (drops, delays, resets) 64
  // bytes per look.
  ProcessSeen ClientProcess(int p) const override {
    char state = p == crashed_ ? 0 : stopped_clients.count(p) ? 'T' : 'S';
    return {true, 100 + p, state, ""};
  }
  void AskClientClock(int p) override { clock_asked[p] = now; }
  bool ClientClock(int p, ClockSeen* out) const override {
    auto it = clock_asked.find(p);
    if (it == clock_asked.end() || now < it->second + Millis(20)) return false;
    auto c = client_clock.find(p);
    *out = {c == client_clock.end() ? 0.0 : OffsetSeconds(c->second), it->second + Millis(20)};
    return true;
  }
  bool ClientSlowEnded(int p, SlowSeen* out) const override {
    auto it = slow.find(p);
    if (it == slow.end() || now < it->second.at) return false;
    *out = it->second;
    return true;
  }
  ProcessSeen NodeProcess(int n) const override {
    char state = killed_nodes.count(n) ? 0 : paused_nodes.count(n) ? 'T' : 'S';
    return {true, 200 + n, state, ""};
  }
  ServingSeen NodeServing(int n) override {
    if (killed_nodes.count(n)) return {false, 0, "", "connection refused"};
    int r = restarts[n];
    return {true, 200 + n + 10 * r, "run" + std::to_string(r), ""};
  }
  Status NodeWriteProbe(int n, std::string* reply) override {
    *reply = maxmemory[n] == "1" ? "OOM command not allowed when used memory > 'maxmemory'." : "nil";
    return Status::Ok();
  }
  Status ProbeFailover(const std::vector<std::string>& keys, FailoverSeen* out) override {
    *out = {n1_killed ? "master" : "slave", "127.0.0.1:7001", n1_killed ? "127.0.0.1:7001" : "127.0.0.1:7000", {}};
    for (const auto& k : keys) out->replica_keys[k] = replica_has.count(k) ? replica_has.at(k) : "";
    return Status::Ok();
  }
  Status ReadNodeClock(int n, double* node_s, double* real_s, double* rtt_s) override {
    auto c = node_clock.find(n);
    *real_s = 1000;
    *node_s = 1000 + (c == node_clock.end() ? 0.0 : OffsetSeconds(c->second));
    *rtt_s = 0.001;
    return Status::Ok();
  }
  LinkBytes LinkCounters(int p, int n) const override {
    LinkBytes& b = counters[{p, n}];
    auto it = links.find({p, n});
    if (it == links.end()) return b;
    const LinkState& st = it->second;
    if (st.reset) b.resets += 1;
    for (Direction d : {st.up, st.down}) {
      if (d == Direction::kHold) b.held += 64;
      if (d == Direction::kDiscard) b.discarded += 64;
      if (d == Direction::kDelay) b.delayed += 64;
    }
    return b;
  }
  Status CutReplication(bool cut) override {
    Line(std::string("CutReplication ") + (cut ? "true" : "false"));
    return Status::Ok();
  }
  Status SetLink(int p, int node, const LinkState& state) override {
    links[{p, node}] = state;
    Line("SetLink " + std::to_string(p) + " " + std::to_string(node) + " " + state.ToString());
    return Status::Ok();
  }
  void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
              Nanos time) override {
    Line("Record " + f + " " + fault + " " + value.dump() + " at " + std::to_string(time / Millis(1)));
  }
  void Log(const std::string& line) override { Line("Log " + line); }

 private:
  void Line(const std::string& s) { trace += std::to_string(now / Millis(1)) + " " + s + "\n"; }
  Nanos end_;
  int crashed_ = 0;
};

// Runs one fault over a simulated run of `run` (ticks every 10 ms, client events every
// 50 ms), then tears it down `teardown_late` after the end.
std::string Trace(const FaultOptions& o, uint64_t seed, Millis run, Millis teardown_late,
                  int failing_restarts = 0, std::map<std::string, std::string> replica_has = {}) {
  std::unique_ptr<Fault> fault;
  Status s = MakeFault(o, seed, &fault);
  if (!s.ok()) return "MakeFault: " + s.message() + "\n";
  TracingLab lab{Nanos(run)};
  lab.failing_restarts = failing_restarts;
  lab.replica_has = std::move(replica_has);
  s = fault->Setup(lab, Nanos(0));
  if (!s.ok()) return lab.trace + "Setup: " + s.message() + "\n";
  for (lab.now = Nanos(0); lab.now < Nanos(run); lab.now += Millis(10)) {
    if (lab.pending_process != 0 && lab.now >= lab.pending_at) {
      int p = lab.pending_process;
      lab.pending_process = 0;
      lab.ReachPoint(p);
      bool mine = fault->OnPausePoint(lab, p, lab.pending_point, lab.now);
      if (!mine) lab.trace += "(point not this fault's)\n";
    }
    if ((lab.now / Millis(10)) % 5 == 0) fault->OnClientEvent(lab, lab.now);
    if (lab.now >= fault->NextWakeup()) fault->Tick(lab, lab.now);
  }
  lab.now = Nanos(run) + Nanos(teardown_late);
  fault->Teardown(lab, lab.now);
  return lab.trace;
}

struct Case {
  std::string name;
  FaultOptions options;
  uint64_t seed;
  Millis run;
  int failing_restarts = 0;  // TracingLab::failing_restarts
};

FaultOptions Options(const std::string& id, std::map<std::string, std::string> params = {}) {
  FaultOptions o;
  o.id = id;
  o.params = std::move(params);
  return o;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const auto& info : ListFaults()) {
    cases.push_back({info.id + " defaults", Options(info.id), 7, Millis(9000)});
  }
  FaultOptions short_windows = Options("server-pause");
  short_windows.first_at = Millis(200);
  short_windows.duration = Millis(300);
  short_windows.interval = Millis(100);
  short_windows.windows = 3;
  short_windows.nodes = {2, 3};
  cases.push_back({"server-pause three short windows", short_windows, 1, Millis(3000)});
  FaultOptions long_window = Options("partition");
  long_window.duration = Millis(60000);
  cases.push_back({"partition longer than the run (cut at teardown)", long_window, 3, Millis(4000)});
  cases.push_back({"client-pause random", Options("client-pause", {{"mode", "random"}}), 11, Millis(9000)});
  cases.push_back({"client-pause random other seed", Options("client-pause", {{"mode", "random"}}), 12,
                   Millis(9000)});
  cases.push_back({"partition holder reset up",
                   Options("partition", {{"target", "holder"}, {"mode", "reset"}, {"resource", "true"}}), 5,
                   Millis(6000)});
  cases.push_back({"partition majorities-ring", Options("partition", {{"shape", "majorities-ring"}}), 5,
                   Millis(6000)});
  cases.push_back({"partition isolate-node up",
                   Options("partition", {{"shape", "isolate-node"}, {"direction", "up"}}), 5, Millis(6000)});
  cases.push_back({"delay 2500", Options("delay", {{"delay_ms", "2500"}}), 9, Millis(9000)});
  cases.push_back({"failover kill_after 100", Options("failover", {{"kill_after_ms", "100"}}), 9,
                   Millis(9000)});
  FaultOptions targeted = Options("client-clock", {{"offset", "+5s"}});
  targeted.targets = {1, 3};
  cases.push_back({"client-clock targets", targeted, 2, Millis(9000)});
  cases.push_back({"clock-drift 0.5", Options("clock-drift", {{"rate", "0.5"}}), 2, Millis(3000)});
  cases.push_back({"clock-jump no revert", Options("clock-jump", {{"revert", "false"}}), 2, Millis(6000)});
  // A step of nothing shows nothing: the window records "seen": false at its close.
  cases.push_back({"clock-jump +0 not seen", Options("clock-jump", {{"offset", "+0"}}), 2, Millis(3000)});
  cases.push_back({"slow-cs before-write", Options("slow-cs", {{"point", "before-write"}}), 4, Millis(6000)});
  FaultOptions full_majority = Options("memory-full");
  full_majority.nodes = {1, 3};
  cases.push_back({"memory-full two nodes", full_majority, 4, Millis(6000)});
  cases.push_back({"restart aof", Options("restart", {{"restart", "aof-always"}}), 4, Millis(6000)});
  cases.push_back({"client-pause torn down while armed", Options("client-pause"), 7, Millis(1010)});
  FaultOptions bad_node = Options("server-pause");
  bad_node.nodes = {4};
  cases.push_back({"server-pause bad node", bad_node, 1, Millis(1000)});
  FaultOptions zero = Options("client-pause");
  zero.duration = Millis(0);
  cases.push_back({"client-pause zero duration", zero, 1, Millis(1000)});
  cases.push_back({"partition bad shape", Options("partition", {{"shape", "ring"}}), 1, Millis(1000)});
  // The `target` kinds (holder: waits through the slices nobody holds; just-released: waits
  // for the first release at 500 ms).
  FaultOptions early = Options("client-pause", {{"mode", "random"}, {"target", "holder"}});
  early.first_at = Millis(0);
  cases.push_back({"client-pause random holder from 0", early, 11, Millis(9000)});
  early.params["target"] = "just-released";
  cases.push_back({"client-pause random just-released from 0", early, 11, Millis(9000)});
  cases.push_back({"client-clock holder", Options("client-clock", {{"target", "holder"}}), 2, Millis(9000)});
  FaultOptions released_among = Options("client-clock", {{"target", "just-released"}});
  released_among.targets = {2};
  released_among.first_at = Millis(0);
  cases.push_back({"client-clock just-released among targets", released_among, 2, Millis(3000)});
  cases.push_back({"reply-loss holder", Options("reply-loss", {{"target", "holder"}}), 3, Millis(6000)});
  cases.push_back({"partition just-released", Options("partition", {{"target", "just-released"}}), 5,
                   Millis(6000)});
  FaultOptions armed_holder = Options("slow-cs", {{"target", "holder"}});
  armed_holder.first_at = Millis(1100);  // inside a slice where clients 2 and 3 hold
  cases.push_back({"slow-cs armed holder", armed_holder, 4, Millis(6000)});
  cases.push_back({"client-crash armed just-released",
                   Options("client-crash", {{"target", "just-released"}}), 4, Millis(6000)});
  cases.push_back({"client-pause bad target", Options("client-pause", {{"target", "leader"}}), 1,
                   Millis(1000)});
  // Armed: the client stopped at the point is stepped, then let go at once (ResumeClient
  // right after SetClientClock); the window keeps the step until it closes.
  cases.push_back({"client-clock armed in an acquire",
                   Options("client-clock", {{"offset", "-1s"}, {"point", "redlock-replies-in-flight"}}), 3,
                   Millis(6000)});
  cases.push_back({"client-clock bad point", Options("client-clock", {{"point", "Bad Point"}}), 1,
                   Millis(1000)});
  // A window on client links armed at a lock command: the client stopped at the point has its
  // links cut (only its own, on every node), then goes on (ResumeClient after the SetLinks).
  cases.push_back({"reply-loss armed before-release",
                   Options("reply-loss", {{"point", "before-release"}, {"target", "holder"}}), 3, Millis(6000)});
  cases.push_back({"partition armed after-acquire", Options("partition", {{"point", "after-acquire"}}), 5,
                   Millis(6000)});
  cases.push_back({"partition armed needs isolate-clients",
                   Options("partition", {{"point", "before-acquire"}, {"shape", "isolate-node"}}), 1, Millis(1000)});
  // The first restart fails and the next window opens within its evidence grace: that
  // window's effect is judged before the next kill, on what it saw itself.
  FaultOptions quick_restarts = Options("restart");
  quick_restarts.interval = Millis(500);
  cases.push_back({"restart failing once, next window within the grace", quick_restarts, 7,
                   Millis(6000), 1});
  return cases;
}

std::string AllTraces() {
  std::string out;
  for (const auto& c : Cases()) {
    out += "== " + c.name + " (seed " + std::to_string(c.seed) + ")\n";
    out += Trace(c.options, c.seed, c.run, Millis(5), c.failing_restarts);
  }
  return out;
}

// The lost write of a failover is read on the promoted replica: one whose replica has the
// lock keys the holders got (their own tokens) lost nothing, however the timing looked.
TEST(FaultTraceTest, AFailoverWhoseReplicaHasTheLockIsNotALoss) {
  const std::string lost = Trace(Options("failover", {{"kill_after_ms", "100"}}), 9, Millis(9000), Millis(0));
  EXPECT_NE(lost.find("and r1 does not have it (GET lock:0 on r1: nil): lost"), std::string::npos) << lost;
  const std::string kept = Trace(Options("failover", {{"kill_after_ms", "100"}}), 9, Millis(9000), Millis(0), 0,
                                 {{"lock:0", "token-2"}, {"lock:1", "token-3"}});
  const size_t at = kept.find("Record effect failover ");
  ASSERT_NE(at, std::string::npos) << kept;
  const std::string line = kept.substr(at, kept.find('\n', at) - at);
  EXPECT_NE(line.find("the write reached it, nothing was lost"), std::string::npos) << line;
  EXPECT_NE(line.find("\"seen\":false"), std::string::npos) << line;
  EXPECT_NE(line.find("\"replicated_lock_holders\":[2,3]"), std::string::npos) << line;
}

TEST(FaultTraceTest, EveryFaultActsAsPinned) {
  const std::string path = std::string(LOCKLAB_FAULTS_TESTDATA) + "/fault_traces.txt";
  std::string actual = AllTraces();
  if (getenv("LOCKLAB_WRITE_TRACES") != nullptr) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream expected;
  expected << in.rdbuf();
  // Line by line, so that a failure names the first line that differs.
  std::istringstream a(actual), e(expected.str());
  std::string al, el;
  int line = 0;
  while (true) {
    bool more_a = static_cast<bool>(std::getline(a, al));
    bool more_e = static_cast<bool>(std::getline(e, el));
    ++line;
    if (!more_a && !more_e) break;
    ASSERT_EQ(more_a ? al : "(end)", more_e ? el : "(end)") << path << ":" << line;
  }
}

}  // namespace
}  // namespace locklab::faults
