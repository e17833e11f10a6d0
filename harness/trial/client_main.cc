#include "harness/trial/client_main.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "base/argv.h"
#include "base/numbers.h"
#include "base/process_tree.h"
#include "base/random.h"
#include "harness/lab/sentinel_topology.h"
#include "harness/scenario/run_fields.h"
#include "harness/scenario/run_options.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"
#include "workloads/counter_workload.h"
#include "workloads/event_sink.h"
#include "workloads/lag_meter.h"

namespace locklab::harness {
namespace {

std::atomic<bool> g_stop{false};

void OnTerm(int) { g_stop.store(true); }

// Stops this client (and its process group, when it leads one: a lock driver with it) and
// returns once it has been continued. Called from whichever thread reached an armed point.
// A stop sent to the process is taken by the main thread, not necessarily by the caller:
// from a lock's renewal thread, kill() returned and that thread ran on (it sent its
// renewal) for as long as the main thread took to stop the group. So the caller also waits
// for the harness's SIGCONT, counted by the LagMeter's handler (installed before the
// workload starts, so before any lock thread can reach a point).
void StopUntilContinued() {
  const uint64_t continues = workloads::LagMeter::Continues();
  // Only when the client leads its group (as the harness starts it): never stop a caller.
  if (getpgrp() == getpid()) kill(0, SIGSTOP);
  else raise(SIGSTOP);
  while (!g_stop.load() && workloads::LagMeter::Continues() == continues) SleepFor(Millis(1));
}

// The client's children are its lock driver and whatever the driver's tree leaves: as a
// child subreaper (set when the client starts), every orphan of that tree is reparented
// here, also a grandchild that called setsid (it left the client's process group, so no
// signal to the group reaches it) or ignores SIGTERM. On every way out of
// RunClientCommand (a normal end, SIGTERM or stdin closed, an error), this kills and reaps
// them all; DriverLock does the same whenever it replaces a driver.
class ChildSweep {
 public:
  ChildSweep() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~ChildSweep() {
    int killed = KillChildrenExcept(-1);
    if (killed > 0) {
      std::cerr << "locklab client: killed " << killed
                << " process(es) the lock driver left behind\n" << std::flush;
    }
  }
  ChildSweep(const ChildSweep&) = delete;
  ChildSweep& operator=(const ChildSweep&) = delete;
};

// Control lines from the harness, read without blocking at pause points.
class ControlChannel {
 public:
  ControlChannel() { fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK); }
  void Poll() {
    char buf[512];
    for (;;) {
      ssize_t n = read(0, buf, sizeof(buf));
      if (n > 0) {
        pending_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) g_stop.store(true);  // the harness closed our stdin: finish up
      break;
    }
    size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      std::istringstream ls(line);
      std::string cmd, arg, action;
      ls >> cmd >> arg >> action;
      if (cmd == "arm") armed_[arg] = action.empty() ? "pause" : action;
      else if (cmd == "disarm") armed_.clear();
      else if (cmd == "stop") g_stop.store(true);
      else if (cmd == "go") go_ = true;
      else if (cmd == "clock") ++clock_asks_;
    }
  }
  // Whether the harness asked for this process's wall clock since the last call (a fault's
  // evidence: the client answers with what libfaketime makes its wall clock read).
  bool TakeClockAsk() {
    bool asked = clock_asks_ > 0;
    clock_asks_ = 0;
    return asked;
  }
  bool IsArmed(const std::string& point) const { return armed_.count(point) > 0; }
  // Blocks until the harness says "go" (every client's lock is ready) or stops us.
  void WaitForGo() {
    while (!go_ && !g_stop.load()) {
      pollfd p{0, POLLIN, 0};
      poll(&p, 1, 100);
      Poll();
    }
  }
  // The action armed at `point` ("pause", "slow:MS"), consumed; empty when none.
  std::string TakeArmed(const std::string& point) {
    auto it = armed_.find(point);
    if (it == armed_.end()) return "";
    std::string action = it->second;
    armed_.erase(it);
    return action;
  }

 private:
  std::string pending_;
  std::map<std::string, std::string> armed_;
  bool go_ = false;
  int clock_asks_ = 0;
};

}  // namespace

int RunClientCommand(const std::vector<std::string>& args) {
  ChildSweep sweep;  // before anything that may start a driver: it outlives the lock
  // The lock's and the workload's settings, by the run's field table (harness/scenario/run_fields.h:
  // the fields marked `client`, as the harness wrote them); the defaults are RunOptions'.
  RunOptions o;
  int64_t process = 0;
  uint64_t seed = 1;
  locks::LockConfig config;
  locks::Endpoint resource;
  std::vector<locks::Endpoint> sentinels;
  std::map<std::string, locks::Endpoint> node_links;
  // The runner passes every flag with a value ("--flag value"). Beside the table's fields,
  // the process's own: its number, lock id, seed (any 64-bit value), servers and the lock's
  // knobs and driver arguments.
  ArgvReader r("client", args);
  while (r.Next()) {
    std::string v;
    Status s = r.AtFlag() ? r.Value(&v) : r.Unknown();
    const RunField* field = s.ok() ? FindClientFlag(r.flag()) : nullptr;
    if (!s.ok()) {
      // a word without a flag, or a flag without its value: reported below
    } else if (field != nullptr) {
      if (Status p = ParseFieldText(*field, v, &o, nullptr); !p.ok()) s = r.Error(p.message());
    } else if (r.Is("--process")) {
      if (Status p = ParseInt(v, 0, kInt64Max, &process); !p.ok()) s = r.Error(p.message());
    } else if (r.Is("--lock")) config.algorithm = v;
    else if (r.Is("--process-seed")) {
      std::optional<uint64_t> n = ParseUint64(v);
      if (n) seed = *n;
      else s = r.Error("expected an integer in 0..18446744073709551615, got '" + v + "'");
    }
    else if (r.Is("--resource")) s = locks::ParseEndpoint(v, &resource);
    else if (r.Is("--node")) {
      locks::Endpoint e;
      s = locks::ParseEndpoint(v, &e);
      config.nodes.push_back(e);
    } else if (r.Is("--sentinel")) {
      locks::Endpoint e;
      s = locks::ParseEndpoint(v, &e);
      sentinels.push_back(e);
    } else if (r.Is("--node-map")) {
      auto eq = v.find('=');
      locks::Endpoint link;
      if (eq == std::string::npos) s = Status::Usage("client: --node-map " + v + ": not REAL=LINK");
      else s = locks::ParseEndpoint(v.substr(eq + 1), &link);
      if (s.ok()) node_links[v.substr(0, eq)] = link;
    } else if (r.Is("--driver-arg")) {
      config.driver_args.push_back(v);
    } else if (r.Is("--knob")) {
      auto eq = v.find('=');
      if (eq == std::string::npos) s = Status::Usage("client: --knob " + v + ": not NAME=VALUE");
      else config.knobs[v.substr(0, eq)] = v.substr(eq + 1);
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return 64;
    }
  }
  if (o.validity != "ignore" && o.validity != "honour") {
    // The harness checked it (ValidateRunOptions); a hand-written command line may not have.
    std::cerr << "locklab client: flag --workload.validity: expected ignore or honour, got '"
              << o.validity << "'\n";
    return 64;
  }
  if (!sentinels.empty()) {
    locks::SetEndpointResolver(
        MakeSentinelResolver(sentinels, SentinelTopology::kMasterName, node_links));
  }
  signal(SIGTERM, OnTerm);
  signal(SIGPIPE, SIG_IGN);
  setenv("LOCKLAB_PROCESS", std::to_string(process).c_str(), 1);  // for lock drivers' logs

  workloads::FdEventSink sink(1, process);
  ControlChannel control;
  config.ttl = o.ttl;
  config.retry_delay = o.retry_delay;
  config.command_timeout = o.command_timeout;
  config.connect_timeout = o.command_timeout;
  // A lock's renewal thread announces points too (watchdog-renewal-due), so the channel is
  // read under a lock; never held across a stop or a slow section.
  std::mutex control_mu;
  // Answers a clock question with the wall clock as this process reads it (through libc:
  // libfaketime's, when the client runs under it).
  auto answer_clock = [&sink](bool asked) {
    if (!asked) return;
    sink.Control({{"ctl", "clock"}, {"wall_ns", LockClockNow(LockClockKind::kWall).count()}});
  };
  config.point_armed = [&](const char* point) {
    bool armed, asked;
    {
      std::lock_guard<std::mutex> l(control_mu);
      control.Poll();
      armed = control.IsArmed(point);
      asked = control.TakeClockAsk();
    }
    answer_clock(asked);
    return armed;
  };
  config.pause_point = [&](const char* point) {
    std::string action;
    bool asked;
    {
      std::lock_guard<std::mutex> l(control_mu);
      control.Poll();
      action = control.TakeArmed(point);
      asked = control.TakeClockAsk();
    }
    answer_clock(asked);
    if (action.empty()) return;
    if (action.rfind("slow:", 0) == 0) {
      // A slow critical section: the process keeps running (its threads too), just late.
      // Its end is reported with how long it lasted (the fault's evidence).
      const Nanos began = MonotonicNow();
      sink.Control({{"ctl", "slowed"}, {"point", point}, {"time_ns", began.count()}});
      SleepFor(Millis(std::atoll(action.c_str() + 5)));
      const int64_t slept_ms = (MonotonicNow() - began).count() / 1000000;
      sink.Control({{"ctl", "slow-done"}, {"point", point}, {"slept_ms", slept_ms}});
      return;
    }
    sink.Control({{"ctl", "paused"}, {"point", point}, {"time_ns", MonotonicNow().count()}});
    // The whole process group stops, the client and any lock driver it started (DriverLock
    // keeps drivers in the client's group); the harness sends SIGCONT to the group.
    StopUntilContinued();
  };
  // Renewal threads (watchdog) record their `renew` events here, each worker as a logical
  // process of its own (process + 1000 * worker: one pending operation per process);
  // FdEventSink is thread-safe and outlives the lock (declared before it).
  config.on_event = [&sink, process](int worker, const char* type, const char* f,
                                     const std::string& key, const nlohmann::json& value) {
    sink.EmitAs(process + 1000 * static_cast<int64_t>(worker), type, f, key, value);
  };
  std::unique_ptr<locks::Lock> lock;
  Status s = locks::MakeLock(config, &lock);
  if (!s.ok()) {
    std::cerr << "locklab client: " << s.message() << "\n";
    return 64;
  }
  // A lock driver starts now and says hello before the run's clock starts: start-up is
  // never charged to the first acquire. The harness starts the run when every client has
  // said ready (or gives up on the run when one failed).
  if (auto* driver = dynamic_cast<locks::DriverLock*>(lock.get())) {
    Status ds = driver->WaitReady();
    if (!ds.ok()) {
      sink.Control({{"ctl", "failed"}, {"reason", ds.message()}});
      std::cerr << "locklab client: " << ds.message() << "\n";
      return 69;
    }
  }
  sink.Control({{"ctl", "ready"}});
  control.WaitForGo();
  locks::RedisConnection resource_conn(resource, o.command_timeout, o.command_timeout);
  Rng rng(seed);
  workloads::CounterWorkloadOptions wo;
  wo.keys = o.keys;
  wo.hold = o.hold;
  wo.think = o.think;
  wo.acquire_timeout = o.acquire_timeout;
  // A lock driver that implements renew (its hello) is renewed while the client holds it
  // longer than a third of the TTL (docs/driver-protocol.md). Built-in locks that renew do it
  // on their own thread (watchdog), so the workload leaves them alone.
  // --renew-every (the scenario's renew_every_ms) overrides that for every lock that can
  // renew; the harness refused it for built-in locks that cannot, so only a driver whose
  // hello says renew:false gets here: it is ignored, with a line in lab.log.
  auto* driver = dynamic_cast<locks::DriverLock*>(lock.get());
  if (o.renew_every > Millis(0) && lock->SupportsRenew()) {
    wo.renew_every = o.renew_every;
  } else if (o.renew_every > Millis(0)) {
    sink.Control({{"ctl", "note"},
                  {"line", "renew_every_ms " + std::to_string(o.renew_every.count()) +
                               " ignored: the lock cannot renew" +
                               (driver ? " (its driver's hello says renew:false)" : "")}});
  } else if (driver && driver->SupportsRenew()) {
    wo.renew_every = std::max(Millis(1), config.ttl / 3);
  }
  wo.honour_validity = o.validity == "honour";
  workloads::LagMeter lag;
  workloads::LagMeter::InstallSigcontCounter();
  workloads::RunCounterWorkload(*lock, resource_conn, sink, config.pause_point, rng, wo, g_stop,
                                &lag);
  // How late this client's own sleeps ended: the harness judges whether the run's timing
  // can be trusted (harness/trial/trial_results.cc, "lab_lag").
  sink.Control({{"ctl", "lag"},
                {"max_us", std::chrono::duration_cast<std::chrono::microseconds>(lag.max()).count()},
                {"sleeps", lag.sleeps()},
                {"over_10ms", lag.over_10ms()},
                {"over_50ms", lag.over_50ms()}});
  return 0;
}

}  // namespace locklab::harness
