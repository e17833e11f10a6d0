// What can refuse a run before anything starts (ValidateRunOptions, CheckEndpoints) and
// what a finished trial is held to (CheckExpectations); run_options.h says what each checks.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include <cstdio>

#include "base/numbers.h"
#include "checker/trial_outcome.h"
#include "faults/fault_descriptor.h"
#include "harness/scenario/expect_rate.h"
#include "harness/scenario/run_fields.h"
#include "harness/scenario/run_options.h"
#include "locks/backend.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"
#include "workloads/counter_workload.h"

namespace locklab::harness {

Status CheckEndpoints(const RunOptions& o) {
  if (o.endpoints.empty()) {
    if (o.endpoint_control.empty()) return Status::Ok();
    return Status::Usage("run: flag --endpoint-control (or topology.endpoint_control): needs --endpoints");
  }
  std::string where = o.endpoints_origin.empty() ? "endpoints" : o.endpoints_origin;
  for (const auto& e : o.endpoints) {
    std::string host, error;
    int port = 0;
    if (!ParseRedisUrl(e, &host, &port, &error)) return Status::Usage("run: " + where + ": " + error);
  }
  const locks::LockInfo* info = locks::FindLock(o.lock);
  if (info != nullptr && info->backend != locks::Backend::kRedis) {
    return Status::Usage("run: " + where + ": lock " + o.lock + " runs on " +
                         locks::BackendName(info->backend) +
                         " servers the lab starts; --endpoints takes Redis servers only");
  }
  std::string refused;
  bool clocks_would_help = false;
  for (const auto& f : o.faults) {
    bool clock_ok = faults::IsNodeControlFault(f.id) && !o.endpoint_control.empty();
    if (!faults::IsClientSideFault(f.id) && !clock_ok) {
      refused += (refused.empty() ? "" : ", ") + f.id;
      clocks_would_help = clocks_would_help || faults::IsNodeControlFault(f.id);
    }
  }
  if (!refused.empty()) {
    std::string allowed;
    for (const auto& f : faults::ListFaults()) {
      if (faults::IsClientSideFault(f.id) && f.id != "none") allowed += (allowed.empty() ? "" : ", ") + f.id;
    }
    return Status::Usage("run: " + where + ": fault(s) " + refused +
                         " need control of the servers; against your own servers only client-side "
                         "faults run (" + allowed + ")" +
                         (clocks_would_help ? ", and node faults with --endpoint-control DIR" : ""));
  }
  int n = LockNodes(o);
  int given = static_cast<int>(o.endpoints.size());
  if (n > 0 && (given < n || given > n + 1)) {
    return Status::Usage("run: " + where + ": lock " + o.lock + " needs " + std::to_string(n) +
                         " endpoint(s) (n1..n" + std::to_string(n) +
                         ", then optionally one for the resource), got " + std::to_string(given));
  }
  return Status::Ok();
}

// The lock of `o` as a config with placeholder endpoints and no knobs: built to ask the
// lock's own checks (its knobs) and abilities (renewal) before anything starts.
static locks::LockConfig ProbeConfig(const RunOptions& o) {
  locks::LockConfig probe;
  probe.algorithm = o.lock;
  probe.nodes.assign(std::max(LockNodes(o), 1), locks::Endpoint{});
  probe.ttl = o.ttl;
  probe.driver_args = o.driver_args;
  return probe;
}

bool LockCanRenew(const RunOptions& o) {
  if (locks::IsDriverId(o.lock)) return false;
  locks::LockConfig probe = ProbeConfig(o);
  probe.knobs = o.knobs;
  std::unique_ptr<locks::Lock> lock;
  return locks::MakeLock(probe, &lock).ok() && lock->SupportsRenew();
}

namespace {

// A driver's hello, read at most once per validation and only when a check needs it (its
// pause points, its node count): reading it starts the driver, an interpreter for most.
class LazyHello {
 public:
  explicit LazyHello(const RunOptions& o) : o_(o) {}
  Status Get(const locks::DriverHello** out) {
    if (!asked_) {
      asked_ = true;
      std::string path;
      status_ = ResolveDriverPath(o_.lock, &path);
      if (status_.ok()) {
        status_ = locks::ProbeDriver(path, o_.driver_args, locks::DriverStartTimeout(o_.knobs), &hello_);
      }
    }
    *out = &hello_;
    return status_;
  }

 private:
  const RunOptions& o_;
  bool asked_ = false;
  Status status_;
  locks::DriverHello hello_;
};

// The nodes the lock runs on: --nodes, else for a driver its hello's "nodes" (read only when
// a fault cares about nodes: it names some, or it acts on servers), else the lock's default.
Status RunNodes(const RunOptions& o, LazyHello& hello,
                const std::function<std::string(const std::string&, const std::string&)>& where,
                int* nodes) {
  *nodes = LockNodes(o);
  if (o.nodes > 0 || !locks::IsDriverId(o.lock)) return Status::Ok();
  bool cares = false;
  for (const auto& f : o.faults) cares = cares || !f.nodes.empty() || !faults::IsClientSideFault(f.id);
  if (!cares) return Status::Ok();
  const locks::DriverHello* h = nullptr;
  Status s = hello.Get(&h);
  if (!s.ok()) {
    return Status::Usage(where("lock", "--lock") + ": cannot learn the driver's nodes from its hello: " +
                         s.message());
  }
  *nodes = h->nodes.value_or(1);
  return Status::Ok();
}

// Refuses a fault armed at a point that neither the workload nor the lock has. A driver's
// points are in its hello, read only when a fault names a point the workload does not have.
Status CheckFaultPoints(const RunOptions& o, const locks::LockInfo& info, LazyHello& hello,
                        const std::function<std::string(const std::string&, const std::string&)>& where) {
  std::vector<std::string> lock_points;
  bool probed = false;
  for (size_t i = 0; i < o.faults.size(); ++i) {
    std::string point = faults::ArmedPoint(o.faults[i]);
    const auto& wp = workloads::WorkloadPausePoints();
    if (point.empty() || std::find(wp.begin(), wp.end(), point) != wp.end()) continue;
    if (!probed) {
      probed = true;
      lock_points = info.points;
      if (locks::IsDriverId(o.lock)) {
        const locks::DriverHello* h = nullptr;
        Status s = hello.Get(&h);
        if (!s.ok()) {
          return Status::Usage(where("lock", "--lock") + ": cannot learn the driver's pause points: " +
                               s.message());
        }
        lock_points.insert(lock_points.end(), h->points.begin(), h->points.end());
      }
    }
    if (std::find(lock_points.begin(), lock_points.end(), point) != lock_points.end()) continue;
    std::string has;
    for (const auto& p : wp) has += (has.empty() ? "" : ", ") + p;
    for (const auto& p : lock_points) has += ", " + p;
    const std::string key = "fault" + std::to_string(i);
    return Status::Usage(where(key + ".point", "--param") + ": lock '" + o.lock +
                         "' has no pause point '" + point + "' (it has: " + has + ")");
  }
  return Status::Ok();
}

// The workload's renewal and validity options against the lock: validity is "ignore" or
// "honour"; renew_every > 0 needs a lock that can renew (Lock::SupportsRenew, which may
// depend on its knobs: redlock's max_extensions), except a lock driver, whose hello alone
// says whether it renews (the client then ignores the option, with a line in its log).
Status CheckWorkloadRenewal(const RunOptions& o,
                            const std::function<std::string(const std::string&, const std::string&)>& where) {
  if (o.validity != "ignore" && o.validity != "honour") {
    return Status::Usage(where("workload.validity", "--validity") + ": '" + o.validity +
                         "': expected ignore or honour");
  }
  if (o.renew_every <= Millis(0) || o.lock.rfind(locks::kDriverPrefix, 0) == 0) return Status::Ok();
  if (LockCanRenew(o)) return Status::Ok();
  return Status::Usage(where("workload.renew_every_ms", "--renew-every") + ": renew_every_ms " +
                       std::to_string(o.renew_every.count()) + ": lock '" + o.lock +
                       "' cannot renew (with these knobs); set it to 0");
}

Status ValidateRunOptionsMultiLine(const RunOptions& o) {
  // The scenario file's place for a field, or the flag that sets it.
  // A field the file left out (a default) is named by its table: "fault0.first_at_ms"
  // falls back to "fault0".
  auto where = [&](const std::string& key, const std::string& flag) {
    auto it = o.origins.find(key);
    if (it == o.origins.end() && key.find('.') != std::string::npos) {
      it = o.origins.find(key.substr(0, key.find('.')));
    }
    return it != o.origins.end() ? it->second : "run: flag " + flag;
  };
  if (IsStatisticalExpectation(o)) {
    // The reader checked K against the file's trials; trials may have changed since.
    const int need = RequiredFailures(o);
    if (need < 1 || need > o.trials) {
      return Status::Usage((o.expect_origin.empty() ? "run: [expect]" : o.expect_origin + ": [expect]") +
                           ": at least " + std::to_string(need) + " failing trials of " +
                           std::to_string(o.trials) + " cannot be an expectation (1.." +
                           std::to_string(o.trials) + ")");
    }
  }
  const locks::LockInfo* info = locks::FindLock(o.lock);
  if (info == nullptr) {
    return Status::Usage(where("lock", "--lock") + ": lock '" + o.lock + "': unknown lock id (see `locklab list`)");
  }
  if (o.faults.size() > kMaxFaults) {
    return Status::Usage("run: " + std::to_string(o.faults.size()) + " faults, at most " +
                         std::to_string(kMaxFaults) + " (one fault repeats its window: --windows, --interval)");
  }
  // Knobs one at a time first, so that the message names the knob's own line.
  locks::LockConfig probe = ProbeConfig(o);
  std::unique_ptr<locks::Lock> unused;
  for (const auto& [k, v] : o.knobs) {
    probe.knobs = {{k, v}};
    Status s = locks::MakeLock(probe, &unused);
    if (!s.ok()) return Status::Usage(where("knob." + k, "--knob") + ": " + s.message());
  }
  probe.knobs = o.knobs;
  Status s = locks::MakeLock(probe, &unused);
  if (!s.ok()) return Status::Usage(where(o.knobs.empty() ? "lock" : "lock.knobs", "--knob") + ": " + s.message());
  s = CheckWorkloadRenewal(o, where);
  if (!s.ok()) return s;
  LazyHello hello(o);
  int nodes = 0;
  s = RunNodes(o, hello, where, &nodes);
  if (!s.ok()) return s;
  for (size_t i = 0; i < o.faults.size(); ++i) {
    const faults::FaultOptions& f = o.faults[i];
    const std::string key = "fault" + std::to_string(i);
    if (faults::FindFault(f.id) == nullptr) {
      return Status::Usage(where(key, "--fault") + ": unknown fault '" + f.id + "' (see `locklab list`)");
    }
    if (std::string why = FaultMisfit(f.id, o.lock, info->backend); !why.empty()) {
      return Status::Usage(where(key, "--fault") + ": " + why);
    }
    for (int t : f.targets) {
      if (t < 1 || t > o.clients) {
        return Status::Usage(where(key + ".targets", "--targets") + ": fault " + f.id + ": target client " +
                             std::to_string(t) + " does not exist (clients are 1.." +
                             std::to_string(o.clients) + ")");
      }
    }
    for (int n : f.nodes) {
      if (n < 1 || n > nodes) {
        return Status::Usage(where(key + ".nodes", "--fault-nodes") + ": fault " + f.id + ": node " +
                             std::to_string(n) + " does not exist (lock " + o.lock + " has n1..n" +
                             std::to_string(nodes) + ")");
      }
    }
    // A first window at or past the end never opens: the fault would run silently not at all.
    if (f.first_at >= o.duration) {
      return Status::Usage(where(key + ".first_at_ms", "--first-at") + ": fault " + f.id + " would first open at " +
                           std::to_string(f.first_at.count()) + " ms, at or after the run's end (" +
                           std::to_string(o.duration.count()) + " ms)");
    }
    std::unique_ptr<faults::Fault> fault;
    s = faults::MakeFault(f, 1, &fault);
    if (s.ok()) s = fault->CheckOptions(o.clients, nodes);
    if (!s.ok()) return Status::Usage(where(key, "--fault") + ": " + s.message());
  }
  return CheckFaultPoints(o, *info, hello, where);
}

}  // namespace

std::string FaultMisfit(const std::string& fault_id, const std::string& lock, locks::Backend backend) {
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(fault_id);
  const LockSurfaces offered = locks::SurfacesOf(backend);
  if (d == nullptr) return "unknown fault '" + fault_id + "' (see `locklab list`)";
  if (offered.Covers(d->traits.needs)) return "";
  std::string missing;
  for (const std::string& w : LockSurfaceWords(d->traits.needs.Minus(offered))) {
    missing += (missing.empty() ? "" : ", ") + w;
  }
  return "fault '" + fault_id + "' does not apply to lock '" + lock + "': it needs " + missing + ", which " +
         locks::BackendName(backend) + " servers do not offer (see `locklab list`)";
}

Status ValidateRunOptions(const RunOptions& o) { return OneLine(ValidateRunOptionsMultiLine(o)); }

bool HasExpectations(const RunOptions& o) {
  return o.expect_verdict || o.expect_stuck || o.expect_resource || IsStatisticalExpectation(o);
}

void ClearExpectations(RunOptions* o) {
  o->expect_verdict.reset();
  o->expect_stuck.reset();
  o->expect_resource.reset();
  o->expect_violated_at_least = 0;
  o->expect_violated_rate = o->expect_confidence = 0;
}

bool IsStatisticalExpectation(const RunOptions& o) {
  return o.expect_violated_at_least > 0 || o.expect_violated_rate > 0;
}

int RequiredFailures(const RunOptions& o) {
  if (o.expect_violated_at_least > 0) return o.expect_violated_at_least;
  if (o.expect_violated_rate > 0) {
    const double confidence = o.expect_confidence > 0 ? o.expect_confidence : kDefaultExpectConfidence;
    return KForRate(o.trials, o.expect_violated_rate, confidence);
  }
  return o.trials;
}

// The verdict one trial must have: the table's (the scenario reader let only a verdict's word
// through), for a statistical expectation violated unless the table names a verdict or asks
// for a stuck lock (whose verdict is safe: JudgedStuck); nullopt when none is asked for.
static std::optional<checker::Verdict> TrialVerdict(const RunOptions& o) {
  if (o.expect_verdict || !IsStatisticalExpectation(o) || o.expect_stuck == true) return o.expect_verdict;
  return checker::Verdict::kViolated;
}

static std::string YesNo(bool b) { return b ? "yes" : "no"; }

// "" for none, else the verdict's word.
static std::string VerdictWord(const std::optional<checker::Verdict>& v) {
  return v ? std::string(checker::VerdictName(*v)) : std::string();
}

std::string PerTrialExpectation(const RunOptions& o) {
  std::string out;
  auto add = [&](const std::string& what, const std::string& v) {
    if (!v.empty()) out += (out.empty() ? "" : ", ") + what + " " + v;
  };
  add("verdict", VerdictWord(TrialVerdict(o)));
  if (o.expect_stuck) add("stuck", YesNo(*o.expect_stuck));
  add("resource", VerdictWord(o.expect_resource));
  return out;
}

// What one trial's outcome misses of `o`'s [expect] (CheckExpectations, read once).
static std::string CheckOutcome(const RunOptions& o, const checker::TrialOutcome& outcome);

void ExpectationTally::Add(const nlohmann::ordered_json& results) {
  ++judged_;
  const checker::TrialOutcome outcome = checker::TrialOutcome::FromJson(results);
  violated_ += outcome.verdict == checker::Verdict::kViolated;
  std::string miss = CheckOutcome(o_, outcome);
  // As in a hunt's reruns, a failure seen while the lab itself ran late does not count
  // towards K: the machine, not the lock, may have stopped the clients (a correct lock's
  // replay beside a busy build was violated with the lab 285 ms late).
  if (miss.empty() && IsStatisticalExpectation(o_) && !outcome.Trusted()) {
    ++untrusted_;
  } else if (miss.empty()) {
    ++met_;
  } else if (first_miss_.empty()) {
    first_miss_ = "trial " + std::to_string(judged_) + ": " + miss;
  }
}

ExpectationTally::Outcome ExpectationTally::Decide(int remaining) const {
  const int need = RequiredFailures(o_);
  if (!IsStatisticalExpectation(o_)) {
    if (met_ < judged_) return Outcome::kNotMet;
    return remaining <= 0 && judged_ > 0 ? Outcome::kMet : Outcome::kOpen;
  }
  if (met_ >= need) return Outcome::kMet;
  if (met_ + untrusted_ + remaining < need) return Outcome::kNotMet;
  return Outcome::kOpen;
}

int ExpectationTally::TrialsToRun() const {
  if (!IsStatisticalExpectation(o_)) return o_.trials;
  return o_.trials + std::min(untrusted_, o_.trials);
}

std::string ExpectationTally::Describe() const {
  const std::string where = o_.expect_origin.empty() ? "" : " (expectation at " + o_.expect_origin + ")";
  if (!IsStatisticalExpectation(o_)) {
    if (met_ < judged_) return first_miss_;  // CheckExpectations names the [expect] itself
    return std::to_string(met_) + " of " + std::to_string(judged_) + " trials met it";
  }
  const int need = RequiredFailures(o_);
  std::string line = std::to_string(met_) + " of " + std::to_string(judged_) + " trials had " +
                     PerTrialExpectation(o_) + ", at least " + std::to_string(need) + " of " +
                     std::to_string(o_.trials) + " needed";
  if (untrusted_ > 0) {
    line += " (" + std::to_string(untrusted_) + " more while the lab itself ran late: not counted)";
  }
  if (o_.expect_violated_rate > 0) {
    char rate[64];
    snprintf(rate, sizeof rate, " (violated_rate %g at confidence %g)", o_.expect_violated_rate,
             o_.expect_confidence > 0 ? o_.expect_confidence : kDefaultExpectConfidence);
    line += rate;
  }
  return met_ >= need ? line : line + where;
}

std::string CheckExpectations(const RunOptions& o, const nlohmann::ordered_json& r) {
  // One reading of results.json, and its one stuck rule: stuck only in a trial judged safe
  // (checker/trial_outcome.h), as the hunt that wrote a stuck = "yes" counted it.
  return CheckOutcome(o, checker::TrialOutcome::FromJson(r));
}

static std::string CheckOutcome(const RunOptions& o, const checker::TrialOutcome& outcome) {
  std::string out;
  const std::optional<checker::Verdict> expect_verdict = TrialVerdict(o);
  if (expect_verdict && outcome.verdict != *expect_verdict) {
    out = "expected verdict " + VerdictWord(expect_verdict) + ", got " +
          VerdictWord(outcome.verdict);
  }
  if (o.expect_stuck && *o.expect_stuck != outcome.Stuck()) {
    out += std::string(out.empty() ? "" : "; ") + "expected stuck " + YesNo(*o.expect_stuck) + ", got " +
           YesNo(outcome.Stuck());
  }
  if (o.expect_resource && *o.expect_resource != outcome.resource_verdict) {
    out += std::string(out.empty() ? "" : "; ") + "expected resource " + VerdictWord(o.expect_resource) +
           ", got " + VerdictWord(outcome.resource_verdict);
  }
  if (!out.empty() && !o.expect_origin.empty()) out += " (expectation at " + o.expect_origin + ")";
  return out;
}


}  // namespace locklab::harness
