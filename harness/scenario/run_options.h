// RunOptions: one trial as data (a Jepsen-style test map): lock, workload, fault, timing,
// seed. `locklab run` builds it from flags or a scenario file and writes it back as the
// run's scenario.toml, so a run directory replays itself. Defaults are documented here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "checker/verdict.h"
#include "faults/fault.h"
#include "locks/backend.h"
#include "locks/lease_ttl.h"

#include <nlohmann/json.hpp>

namespace locklab::harness {

struct RunOptions {
  std::string name;                 // scenario name; default "<lock>--<fault>"
  uint64_t seed = 0;                // 0: drawn from /dev/urandom and recorded
  Millis duration{10000};           // how long clients run
  // Lock.
  std::string lock = "set-nx-px-lua";
  Millis ttl{locks::kDefaultLeaseTtl};
  Millis retry_delay{20};
  Millis command_timeout{200};
  int nodes = 0;                    // lock nodes; 0: the lock's default
  // The user's own Redis servers ("redis://host:port", --endpoints or [topology] endpoints),
  // used instead of a lab cluster. The first N are the lock nodes n1..nN (N = `nodes`: 5
  // for redlock, 1 for the single-node locks); the guarded counter lives on the endpoint
  // after them when one more is given, else on n1 under its own keys. Every connection
  // still goes through the fault proxy. Only client-side faults run (IsClientSideFault).
  // Empty: the lab starts its own servers.
  std::vector<std::string> endpoints;
  std::string endpoints_origin;     // "flag --endpoints" or "FILE:LINE: field '...'"
  // With endpoints: the control directory the lock nodes share with the harness
  // (docker/node-entrypoint.sh): nN is node N's libfaketime clock file, nN.pid its
  // redis-server pid (same PID namespace), nN.down holds it down after a kill. Given, the
  // node faults (clock-jump, clock-drift, server-pause, restart) run against the endpoints.
  std::string endpoint_control;
  std::map<std::string, std::string> knobs;
  // driver:PATH locks: the program's arguments (--driver-arg, [lock] driver_args).
  std::vector<std::string> driver_args;
  // Workload (counter).
  int clients = 3;
  int keys = 1;
  Millis hold{50};
  Millis think{20};
  Millis acquire_timeout{2000};
  // > 0: each client renews its lease (Lock::Renew) every renew_every while it holds it
  // (workloads/counter_workload.h); a lock that cannot renew is refused (run_checks.cc),
  // except a lock driver, whose hello decides (renew:false: the client ignores it and says
  // so in its log). 0: off (a driver whose hello says renew:true still renews every TTL/3).
  Millis renew_every{0};
  // "ignore" (the naive client: every critical section runs to its end) or "honour" (a
  // client stops using a lease once acquired_at + its validity has passed: no write, an
  // early release; declared to the checker in the run start event).
  std::string validity = "ignore";
  // Faults: each with its own schedule; several compose one trial (Kleppmann's Redlock
  // schedule is a partition plus a clock jump). Empty means none.
  std::vector<faults::FaultOptions> faults;
  // Liveness: a wait with nobody holding longer than this is "stuck"; 0: 2 x TTL + 1 s.
  Millis stuck_after{0};
  // Trials of this scenario (`locklab run` runs them one after the other, seeds seed,
  // seed+1, ...).
  int trials = 1;
  // Optional expectations for regression suites ([expect] in a scenario file): nullopt means
  // none. verdict: any verdict; stuck: yes or no; resource: safe or violated (lost updates or
  // stale writes accepted). ClearExpectations drops them all.
  std::optional<checker::Verdict> expect_verdict;
  std::optional<bool> expect_stuck;
  std::optional<checker::Verdict> expect_resource;
  // Statistical expectations (expect_rate.h): met when at least K of the `trials` trials
  // fail as the keys above say (verdict "violated" when none of verdict and stuck is given);
  // the other trials may end any way. K is expect_violated_at_least, or from
  // expect_violated_rate: the largest K with P(Binomial(trials, rate) >= K) >=
  // expect_confidence (0.99 when not given). At most one of the two; 0 means none. As in a
  // hunt's reruns, a trial whose lab ran late (results.json lab_lag.timing_trusted false)
  // does not count towards K, whatever it showed. With
  // either, every trial replays the same seed (the scenario's; when 0, the one the first
  // trial drew): the rate is that of one schedule, as a hunt's reruns measured it.
  int expect_violated_at_least = 0;
  double expect_violated_rate = 0;
  double expect_confidence = 0;
  // Where the expectations were written (file:line), for messages.
  std::string expect_origin;
  // Where runs go.
  std::string out_dir = "runs";
  // Where a scenario file's values stand, for ValidateRunOptions' messages: field key ->
  // "FILE:LINE: field 'faults[2].targets'". Keys: "lock", "lock.knobs", "knob.NAME" and,
  // for the fault at index i of `faults`, "fault<i>", "fault<i>.targets", "fault<i>.nodes",
  // "fault<i>.first_at_ms". Empty for values from flags.
  std::map<std::string, std::string> origins;
};

// At most this many faults (each [[faults]] table or --fault is its own schedule, ticked
// on every turn of the harness's loop); one fault repeats its window with `windows` and
// `interval_ms`.
inline constexpr size_t kMaxFaults = 256;

// Compares a trial's results.json with the expectations; empty when they hold (or there
// are none), else one line saying what differs. For a statistical expectation this is one
// trial's part of it (verdict "violated" unless the table says otherwise).
std::string CheckExpectations(const RunOptions& o, const nlohmann::ordered_json& results);

// Whether `o` has an [expect] at all, and whether it is statistical (at least K of N).
bool HasExpectations(const RunOptions& o);
bool IsStatisticalExpectation(const RunOptions& o);
// Drops every [expect] key (verdict, stuck, resource and the statistical ones; not the origin).
void ClearExpectations(RunOptions* o);
// K: how many of o.trials must fail (statistical); o.trials for an exact expectation.
int RequiredFailures(const RunOptions& o);
// What one trial must show to count, as written: "verdict violated, resource violated".
std::string PerTrialExpectation(const RunOptions& o);

// The expectation over the trials of one scenario, judged as they end (`locklab run`,
// `locklab replay`). Exact: every trial must meet it, and the first miss decides. Statistical:
// met once K trials met it, missed once too few are left to reach K.
class ExpectationTally {
 public:
  enum class Outcome { kOpen, kMet, kNotMet };
  explicit ExpectationTally(RunOptions o) : o_(std::move(o)) {}
  // One judged trial's results.json.
  void Add(const nlohmann::ordered_json& results);
  // With `remaining` trials still to run (or to come) after those added. Statistical: a trial
  // that met it while the lab itself ran late does not count, and is replaced (TrialsToRun);
  // missed once even counting those the count cannot reach K, open (undecided) otherwise.
  Outcome Decide(int remaining) const;
  // How many trials the scenario gets: its `trials`, plus (statistical) one more for each
  // trial that met it while the lab ran late, at most `trials` more.
  int TrialsToRun() const;
  int judged() const { return judged_; }
  int met() const { return met_; }
  int violated() const { return violated_; }  // trials whose verdict was violated
  // One line: "3 of 4 trials had verdict violated (at least 1 needed)"; when not met, why
  // (the first trial's miss for an exact expectation), with the [expect]'s file:line.
  std::string Describe() const;

 private:
  RunOptions o_;
  int judged_ = 0, met_ = 0, violated_ = 0;
  int untrusted_ = 0;  // statistical: met it, but with the lab's timing not trusted
  std::string first_miss_;
};

// Parses `locklab run` flags (the words after "run"; run_flags.cc): "--flag value" or
// "--flag=value", the plain fields by the table of run_fields.h. Errors are Status::Usage
// (exit 64), one line naming the flag.
Status ParseRunFlags(const std::vector<std::string>& args, RunOptions* out,
                     std::string* scenario_path);

// "redis://host:port" (host a name or IPv4 address, port 1-65535) -> host and port; false
// with `error` saying what is wrong.
bool ParseRedisUrl(const std::string& url, std::string* host, int* port, std::string* error);

// With endpoints: the lock gets enough of them (N or N+1) and every fault is client-side.
// Errors are one line naming endpoints_origin and the refused faults. Ok without endpoints.
Status CheckEndpoints(const RunOptions& o);
// How many lock nodes a run of `o` uses (o.nodes, or the lock's default; 0: unknown lock).
int LockNodes(const RunOptions& o);
// Whether the lock of `o` (with its knobs and TTL) renews on request (Lock::SupportsRenew):
// built once, with placeholder endpoints, to ask. False for a lock that cannot be built
// (its own check says why) and for a driver, whose hello alone says it.
bool LockCanRenew(const RunOptions& o);

// The ids of the faults of `o`, in order.
std::vector<std::string> FaultIdList(const RunOptions& o);
// "none", or the fault ids joined by "+".
std::string FaultIds(const RunOptions& o);

// For a driver:PATH lock id: the program's absolute path. A relative PATH is looked up in
// the current directory, then in the locklab source tree (so `driver:examples/drivers/...`
// works from anywhere). Errors (no such file, not executable) say which; ok and empty for
// other ids.
Status ResolveDriverPath(const std::string& lock_id, std::string* resolved);

// The one spelling of a lock id, for comparing ids written by one command and read by
// another (expectation files, a hunt's --known): a built-in id as it is; for driver:PATH the
// program's path relative to the root of the git repository that holds it (else to the
// locklab source tree, else to `base_dir` when under it, else absolute), with `.` and `..`
// resolved. `./x`, `x` and `/abs/x` of one file are one id, from any working directory and in
// any checkout of the repository. A PATH that resolves to no file (looked up against
// `base_dir`, the current directory when empty) keeps its text, normalised lexically.
std::string CanonicalLockId(const std::string& lock_id, const std::string& base_dir = "");

// A name for a lock id that can be a directory name: the id itself, or for driver:PATH
// "driver-" and the program's file name without its extension.
std::string LockDisplayName(const std::string& lock_id);

// Everything a run can be refused for, checked before a run directory exists or anything
// starts: the lock id and its knobs, each fault's id, params, targets (1..clients) and
// nodes (1..the lock's nodes), whether it applies to the lock, whether its first window
// opens before the run ends, and the number of faults (kMaxFaults). Errors are
// Status::Usage (exit 64), one line naming the scenario file, line and field (origins) or
// the flag.
Status ValidateRunOptions(const RunOptions& o);

// Why fault `fault_id` does not apply to lock `lock` kept by `backend` servers, in one line
// naming what it needs that they do not offer ("fault 'client-clock' does not apply to lock
// 'zk-lock': it needs wall-clock-expiry, which zookeeper servers do not offer (see `locklab
// list`)"); "" when it applies (faults::FaultFits).
std::string FaultMisfit(const std::string& fault_id, const std::string& lock, locks::Backend backend);

// TOML round trip (scenario_writer.cc, scenario_reader.cc). Errors name the file, line and
// field (Status::BadInput, exit 65); a number out of range or of the wrong type is worded
// as a flag's is ("expected an integer in 1..64, got '0'"). A
// scenario names its lock: a file without [lock] id (an empty file too) is refused, and so
// is a path that is a directory.
std::string ScenarioToToml(const RunOptions& o);
Status LoadScenarioFile(const std::string& path, RunOptions* out);
// The same from the file's text; `path` is only used in messages (the fuzz tests feed it).
Status ParseScenario(const std::string& text, const std::string& path, RunOptions* out);

}  // namespace locklab::harness
