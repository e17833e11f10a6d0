// Effect: what a fault does to the lab while one of its windows is open (Jepsen's nemesis:
// start and stop), apart from when windows open (faults/schedule.h). A ScheduledFault
// (faults/scheduled_fault.h) drives one Effect by one Schedule: it calls Start when a window
// opens, WhileOpen on its ticks, and Stop when the window closes or the run tears down, so
// Stop must heal everything Start did. An effect acts through the narrowest facets of the
// lab it needs (faults/lab_control.h), taken in Attach; every effect logs through the
// RunJournal. Not thread-safe: driven by the harness's single event loop.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "faults/fault.h"
#include "faults/schedule.h"
#include "faults/target_draw.h"

namespace locklab::faults {

// When a window's effect is probed (ScheduledFault): right after Start, on ticks while the
// window is open (every kProbeEvery until seen), just before Stop, just after it (a restart
// is seen only once the node is back), and in the grace after the close (EvidenceGrace).
enum class ProbeMoment { kOpened, kWhileOpen, kBeforeStop, kAfterStop, kLate };

// What one probe saw of the effect: `seen` with the observation, or not yet seen with what
// was looked at ("node n1 TIME +0.000 s off the real clock after +20s"). `details` are
// added to the "effect" event's value.
struct Evidence {
  bool seen = false;
  std::string line;
  nlohmann::json details = nlohmann::json::object();
};

// The run an effect needs to show what it is for, taken for the values no flag gave (zero:
// the default or the given value stands; a scenario file is taken as written, see
// harness/scenario/run_flags.cc; the run's scenario.toml records them). Failover needs a holder still
// within its lease when Sentinel has promoted the replica, which a 50 ms hold never is.
struct RunShape {
  Millis ttl{0};
  Millis hold{0};
  Millis acquire_timeout{0};
  Millis duration{0};  // how long the clients run
  Millis first_at{0};  // the fault's own schedule: its first window
  Millis window{0};    // and each window's length
  Millis lease_over_hold{0};  // set: a TTL no flag gave is at least the run's hold plus this
};

class Effect {
 public:
  explicit Effect(FaultOptions options) : o_(std::move(options)) {}
  virtual ~Effect() = default;
  Effect(const Effect&) = delete;
  Effect& operator=(const Effect&) = delete;

  // The id of the fault it is the effect of: its options' (MakeFault builds an effect through
  // the descriptor of the options' id, so the id is written once, in the descriptor).
  const char* id() const { return o_.id.c_str(); }
  // What the lab must provide before it starts (Fault's methods of the same names; whether
  // it needs sentinels is its descriptor's trait, FaultTraits::needs_sentinel).
  virtual std::vector<std::string> NodeArgs() const { return {}; }
  virtual bool NeedsClientClock() const { return false; }
  const FaultOptions& options() const { return o_; }

  // Checks the targets and nodes against a lab of `clients` clients and `nodes` lock nodes,
  // then the effect's own params. Usage errors name the fault.
  Status CheckOptions(int clients, int nodes);
  // What the effect asks of its schedule, once its options checked out: the point it arms,
  // a window long enough for it, one window by default. Idempotent. By default: armed at its
  // `point` param when it has one and it is set (ArmedPoint), else timed.
  virtual void Shape(Schedule* schedule) const { schedule->armed_point = ArmedPoint(o_); }
  // What the effect asks of the run around it when no flag gave those values (RunShape);
  // reads its own params as given (before CheckOptions: a bad param is refused there).
  virtual RunShape ShapeRun() const { return {}; }
  // Takes the lab it acts on and the draw it picks clients from, once, at setup, before any
  // Start; both outlive the effect's use.
  void Bind(LabControl& lab, TargetDraw& draw);

  // For an armed schedule: what the client does at the point ("pause", "slow:MS"), and
  // which client to arm (0: none now; the schedule retries after its interval).
  virtual std::string ArmedAction() const { return "pause"; }
  virtual int PickArmedClient(const ClientControl& clients) { return PickClient(clients); }

  // Opens a window at `time`; returns the "start" event's value, or null when it cannot open
  // now (retried after RetryDelay). `process` is the client that reported the armed point
  // (0 for a timed schedule); with action "pause" it is stopped there.
  virtual nlohmann::json Start(Nanos time, int process) = 0;
  // Closes the window: heals what Start (and WhileOpen) did.
  virtual void Stop(Nanos time) = 0;
  // While a window is open: on each tick (clock drift steps its offset), and after each
  // client history event (failover notes the acquires it waits for).
  virtual void WhileOpen(Nanos now) { (void)now; }
  virtual void OnClientEventWhileOpen(Nanos now) { (void)now; }
  // When WhileOpen next has work (Nanos::max(): nothing before the close).
  virtual Nanos OpenWakeup() const { return Nanos::max(); }
  // How long to wait before trying again when Start declined: the interval, or 20 ms while
  // a `target` of holder / just-released waits for such a client.
  virtual Millis RetryDelay(Millis interval) const;
  // Looks for the effect of the open window in the lab itself (a stopped process, a stepped
  // clock, bytes the proxy held, a new pid serving): docs/design.md 3.3, coverage. Called
  // until it returns seen, at the moments above; never changes the lab.
  virtual Evidence Probe(Nanos now, ProbeMoment when) = 0;
  // How long after the close the effect may still show (a slow section's end is reported
  // by the client just after the window's time is up); 0: the close is the last look.
  virtual Millis EvidenceGrace() const { return Millis(0); }
  // The `target` param ("any" when absent or the fault has none).
  std::string target_kind() const { return o_.Param("target", "any"); }

 protected:
  // Takes the facets of `lab` the effect acts through.
  virtual void Attach(LabControl& lab) = 0;
  // Checks the fault-specific params; targets and nodes are checked by CheckOptions.
  virtual Status Validate() { return Status::Ok(); }
  void Log(const std::string& line) const { journal_->Log(line); }
  TargetDraw& draw() { return *draw_; }
  // The client a window acts on, by the `target` param (faults/target_draw.h): any (drawn
  // from the seed among the targets or all clients, exactly the draws of before the param
  // existed), holder (one of the clients holding a lock now, among the targets when given)
  // or just-released (the client whose release completed last, when it is among the
  // targets, if given, and running). 0 when there is none now: the window waits (Start
  // returns null and is retried; nothing is recorded, so no coverage is counted).
  int PickClient(const ClientControl& clients) { return draw().Pick(target_kind(), clients); }
  // The nodes option, or {default_node} when empty.
  std::vector<int> NodesOr(int default_node) const;
  // Param `key` (or `fallback` when absent) as a number in [lo, hi] (base/numbers.h), refused
  // as "fault ID: param 'KEY': expected an integer in LO..HI, got 'X'".
  Status IntParam(const std::string& key, const std::string& fallback, int64_t lo, int64_t hi,
                  int64_t* out) const;
  Status DoubleParam(const std::string& key, const std::string& fallback, double lo, double hi,
                     double* out) const;
  // Param `point` (or the registry's default for it) checked as a pause point name
  // (IsPausePoint), refused as "fault ID: param 'point': 'X': not a point name (...)". An
  // empty value passes when the default is empty (a fault that arms only when given a point).
  Status PointParam() const;
  // Evidence that `what` ("client 2", "node n1") is stopped (state T in /proc/PID/stat).
  static Evidence StoppedEvidence(const std::string& what, const ProcessSeen& p);
  // Joins per-target evidence: seen only when every part is.
  static Evidence AllSeen(const std::vector<Evidence>& parts);

  FaultOptions o_;

 private:
  RunJournal* journal_ = nullptr;
  TargetDraw* draw_ = nullptr;
};

}  // namespace locklab::faults
