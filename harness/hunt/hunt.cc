#include "harness/hunt/hunt.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <iostream>
#include <list>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/argv.h"
#include "base/clock.h"
#include "base/exit_code.h"
#include "base/numbers.h"
#include "base/random.h"
#include "checker/trial_outcome.h"
#include "faults/fault.h"
#include "harness/trial/child_runs.h"
#include "locks/lease_ttl.h"
#include "harness/scenario/cli_spec.h"
#include "harness/hunt/hunt_guide.h"
#include "harness/scenario/known_failures.h"
#include "harness/hunt/hunt_plain.h"
#include "harness/hunt/hunt_shrink.h"
#include "harness/hunt/hunt_space.h"
#include "harness/hunt/hunt_story.h"
#include "harness/trial/interrupts.h"
#include "harness/trial/report_script.h"
#include "harness/scenario/run_options.h"
#include "harness/lab/driver_servers.h"
#include "harness/lab/run_store.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {
namespace {

struct HuntFlags {
  std::string lock, baseline, out = "runs";
  std::string corpus;    // --corpus DIR: a confirmed minimal.toml is copied there
  std::string validity;  // --validity honour|ignore: fixed for every scenario ("" = drawn)
  std::map<std::string, std::string> knobs;
  std::vector<std::string> driver_args, faults;
  std::vector<std::string> known;  // --known FILE|DIR: failures already accounted for
  Millis ttl{locks::kDefaultLeaseTtl};  // --ttl; without it, the first of kDrawnTtls
  Millis budget{10 * 60 * 1000}, shrink_budget{5 * 60 * 1000};
  // Trials at a time: the matrix's 6 (a trial mostly waits; docs/matrix-notes.md).
  int jobs = 6, reruns = 4, max_faults = 3;
  uint64_t seed = 0;
  bool liveness = false, keep_searching = false, report = true;
  bool shrink = true;      // --no-shrink: search only (time-to-find benchmarks)
  bool guide = true;       // --no-guide: fresh draws only (to measure what guidance adds)
  int shard_index = 1, shard_count = 1;  // --shard I/N: every Nth of the seed's draws
  bool ttl_given = false;  // --ttl given (else a driver's hello may set it)
  // Whether the workload renews the lock's and the baseline's leases (a lock that renews on
  // request, a driver whose hello says renew: its client renews every TTL/3).
  bool lock_renews = false, baseline_renews = false;
};

// Without --ttl each scenario draws one of these (a search dimension, not a default: a lock's
// safety often changes between a short and a long lease).
const std::vector<Millis> kDrawnTtls = {Millis(500), Millis(750), Millis(1250)};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

Status ParseHuntFlags(const std::vector<std::string>& args, HuntFlags* f) {
  ArgvReader r(HuntCommandSpec(), args);
  while (r.Next()) {
    if (!r.AtFlag()) return r.Unknown();
    Status s;
    std::string v;
    int64_t n = 0;
    if (r.Is("--lock"))
      s = r.Value(&f->lock);
    else if (r.Is("--baseline"))
      s = r.Value(&f->baseline);
    else if (r.Is("--out"))
      s = r.Value(&f->out);
    else if (r.Is("--corpus"))
      s = r.Value(&f->corpus);
    else if (r.Is("--known")) {
      s = r.Value(&v);
      f->known.push_back(v);
    }
    else if (r.Is("--budget"))
      s = r.Duration(kMinHuntBudget, kMaxHuntBudget, &f->budget);
    else if (r.Is("--shrink-budget"))
      s = r.Duration(kMinHuntBudget, kMaxHuntBudget, &f->shrink_budget);
    else if (r.Is("--liveness"))
      s = r.NoValue(), f->liveness = true;
    else if (r.Is("--keep-searching"))
      s = r.NoValue(), f->keep_searching = true;
    else if (r.Is("--no-report"))
      s = r.NoValue(), f->report = false;
    else if (r.Is("--no-guide"))
      s = r.NoValue(), f->guide = false;
    else if (r.Is("--no-shrink"))
      s = r.NoValue(), f->shrink = false;
    else if (r.Is("--validity")) {
      s = r.Value(&f->validity);
      if (s.ok() && f->validity != "honour" && f->validity != "ignore")
        return r.Error("expected honour or ignore, got '" + f->validity + "'");
    }
    else if (r.Is("--ttl")) {
      s = r.Duration(locks::kMinLeaseTtl, locks::kMaxLeaseTtl, &f->ttl);
      f->ttl_given = true;
    } else if (r.Is("--jobs")) {
      s = r.Int(1, 64, &n);
      f->jobs = static_cast<int>(n);
    } else if (r.Is("--reruns")) {
      s = r.Int(1, 20, &n);
      f->reruns = static_cast<int>(n);
    } else if (r.Is("--max-faults")) {
      s = r.Int(1, 3, &n);
      f->max_faults = static_cast<int>(n);
    } else if (r.Is("--seed")) {
      s = r.Int(1, INT64_MAX, &n);
      f->seed = static_cast<uint64_t>(n);
    } else if (r.Is("--shard")) {
      s = r.Value(&v);
      if (s.ok() && !ParseShard(v, &f->shard_index, &f->shard_count))
        return r.Error("'" + v + "' is not I/N with 1 <= I <= N <= 10000");
    } else if (r.Is("--faults")) {
      s = r.Value(&v);
      // An empty list (`--faults "$FAULTS"` with the variable unset) must not mean every fault.
      if (s.ok() && SplitCommas(v).empty()) s = r.Error("expected fault ids, comma-separated; got none");
      for (auto& id : SplitCommas(v)) f->faults.push_back(id);
    } else if (r.Is("--driver-arg")) {
      s = r.Value(&v);
      f->driver_args.push_back(v);
    } else if (r.Is("--knob")) {
      s = r.Value(&v);
      auto eq = v.find('=');
      if (s.ok() && (eq == std::string::npos || eq == 0))
        return r.Error("'" + v + "' is not NAME=VALUE");
      if (s.ok()) f->knobs[v.substr(0, eq)] = v.substr(eq + 1);
    } else
      return r.Unknown();
    if (!s.ok()) return s;
  }
  if (f->lock.empty()) return Status::Usage("hunt: --lock is required (see `locklab list`)");
  // Shards split one seed's draws; a drawn seed would give each shard its own.
  if (f->shard_count > 1 && f->seed == 0)
    return Status::Usage("hunt: flag --shard: needs --seed N (every shard must use the same seed)");
  if (!f->ttl_given) f->ttl = kDrawnTtls.front();
  return Status::Ok();
}

// The space of `flags.lock`: the faults that apply to it (and to the baseline, which runs
// the same scenarios), its nodes and pause points.
Status BuildSpace(const HuntFlags& flags, SearchSpace* space) {
  const locks::LockInfo* info = locks::FindLock(flags.lock);
  if (info == nullptr)
    return Status::Usage("hunt: flag --lock: unknown lock '" + flags.lock +
                         "' (see `locklab list`)");
  const locks::LockInfo* base = nullptr;
  if (!flags.baseline.empty()) {
    base = locks::FindLock(flags.baseline);
    if (base == nullptr)
      return Status::Usage("hunt: flag --baseline: unknown lock '" + flags.baseline + "'");
  }
  space->lock = flags.lock;
  space->knobs = flags.knobs;
  space->driver_args = flags.driver_args;
  space->ttl = flags.ttl;
  space->nodes = info->default_nodes;
  space->max_faults = flags.max_faults;
  space->validity = flags.validity;
  space->lock_points = info->points;
  if (base != nullptr) {
    // Against a baseline, the points only the lock has are where their code differs: a
    // pause armed there is the first place to look.
    std::vector<std::string> own;
    for (const auto& p : info->points) {
      if (std::find(base->points.begin(), base->points.end(), p) == base->points.end()) own.push_back(p);
    }
    if (!own.empty()) {
      space->lock_points = own;
      for (const char* armed : {"client-pause", "slow-cs", "client-crash"}) space->weights[armed] = 3.0;
    }
  }
  // Without --ttl each scenario draws one of these; a lock that renews on request may be
  // renewed by the workload (RunOptions::renew_every).
  if (!flags.ttl_given) space->ttls = kDrawnTtls;
  RunOptions as_run;
  as_run.lock = flags.lock;
  as_run.knobs = flags.knobs;
  as_run.ttl = flags.ttl;
  space->can_renew = LockCanRenew(as_run);
  for (const auto& f : faults::ListFaults()) {
    if (f.id == "none" || !faults::FaultFits(f.id, locks::SurfacesOf(info->backend))) continue;
    if (base != nullptr && !faults::FaultFits(f.id, locks::SurfacesOf(base->backend))) continue;
    if (!flags.faults.empty() &&
        std::find(flags.faults.begin(), flags.faults.end(), f.id) == flags.faults.end())
      continue;
    space->faults.push_back(f.id);
  }
  for (const auto& id : flags.faults) {
    if (faults::FindFault(id) == nullptr)
      return Status::Usage("hunt: flag --faults: unknown fault '" + id + "'");
    if (std::string why = FaultMisfit(id, flags.lock, info->backend); !why.empty())
      return Status::Usage("hunt: flag --faults: " + why);
    if (base != nullptr) {
      if (std::string why = FaultMisfit(id, flags.baseline, base->backend); !why.empty())
        return Status::Usage("hunt: flag --faults: " + why + " (the baseline)");
    }
    if (std::find(space->faults.begin(), space->faults.end(), id) == space->faults.end())
      return Status::Usage("hunt: flag --faults: fault '" + id + "' does not apply to lock '" +
                           flags.lock + "'" +
                           (base ? " or its baseline '" + flags.baseline + "'" : ""));
  }
  if (space->faults.empty())
    return Status::Usage("hunt: no fault applies to lock '" + flags.lock + "'");
  return Status::Ok();
}

class Hunt {
 public:
  Hunt(HuntFlags flags, SearchSpace space, KnownFailures known, std::string dir)
      : f_(std::move(flags)), space_(std::move(space)), known_(std::move(known)), dir_(std::move(dir)), rng_(f_.seed), guide_rng_(f_.seed ^ 0x9e3779b97f4a7c15ULL),
        plain_rng_(f_.seed ^ 0x5851f42d4c957f2dULL), concurrency_(f_.jobs), lowest_concurrency_(f_.jobs) {}

  int Run();

 private:
  // What a run showed of what the hunt looks for (FailureKinds); empty when it did not run.
  FailureKindSet Kinds(const ChildRun& r) const {
    return r.ran ? FailureKinds(r.results, f_.liveness) : FailureKindSet{};
  }
  // Whether a run failed the way the hunt looks for now: it showed a kind of target_.
  bool Failed(const ChildRun& r) const {
    for (const auto& k : Kinds(r)) {
      if (target_.count(k)) return true;
    }
    return false;
  }
  // Every kind the hunt looks for: the target while searching.
  FailureKindSet AllKinds() const {
    FailureKindSet all = {FailureKind::kViolated, FailureKind::kResource};
    if (f_.liveness) all.insert(FailureKind::kStuck);
    return all;
  }
  static bool Trusted(const ChildRun& r) {
    return !r.results.is_object() || checker::TrialOutcome::FromJson(r.results).Trusted();
  }
  ChildRun Make(const RunOptions& o, const std::string& sub, const std::string& name) {
    ChildRun r;
    r.options = o;
    r.options.out_dir = dir_ + "/" + sub;
    r.scenario_path = dir_ + "/" + sub + "/" + name + ".toml";
    return r;
  }
  static bool IsBaseline(const ChildRun& r) {
    const std::string& n = r.options.name;
    return n.size() > 9 && n.compare(n.size() - 9, 9, "-baseline") == 0;
  }
  // The same scenario on the baseline lock (OnBaselineLock: a mutant's own points move to
  // their stand-ins); a point without one leaves a run that is refused, which counts against
  // the difference (see BaselineFailed).
  RunOptions OnBaseline(const RunOptions& o) const {
    RunOptions b = OnBaselineLock(o, f_.baseline);
    b.name += "-baseline";
    return b;
  }
  // Whether a baseline run tells against the difference: it failed, or it could not run
  // (the baseline was not seen to pass, so nothing is confirmed).
  bool BaselineFailed(const ChildRun& r) const { return !NotRunReason(r).empty() || Failed(r); }
  // Why run `r` could not run ("" when it ran): the lab's failure, never the lock's. A run
  // that left no results.json or exited 64+ (a server that would not start, a build that
  // changed), a client whose lock never started (a driver without a hello in time), or a lab
  // server or client that failed not by the schedule, leaving the verdict unknown. Such a
  // run neither fails nor passes anything: it is run again (RunAgain) and counted apart.
  static std::string NotRunReason(const ChildRun& r) {
    if (!r.ran) {
      return r.started ? "the trial exited " + std::to_string(r.exit_code) + " without a verdict (its .log)"
                       : "the trial did not start (its .log)";
    }
    checker::TrialOutcome o;
    try {
      o = checker::TrialOutcome::FromJson(r.results);
    } catch (const nlohmann::json::exception&) {
      return "its results.json did not read";
    }
    if (!o.client_failures.empty()) {
      // "client 2: driver /x.py: no hello line within ..." -> the cause, the same for every client.
      std::string why = o.client_failures.front();
      for (const char* head : {"client ", "driver "}) {
        if (why.rfind(head, 0) == 0 && why.find(": ") != std::string::npos) why = why.substr(why.find(": ") + 2);
      }
      return "a lock did not start: " + why;
    }
    if (o.verdict == checker::Verdict::kUnknown && !o.lab_failure.empty()) return "the lab failed: " + o.lab_failure;
    return "";
  }
  // Counts a run that ended (trials, runs that could not run and why), records when it ran,
  // adapts the concurrency to what it showed, and shows the progress line.
  void CountRun(const ChildRun& r) {
    ++trials_;
    --running_;
    const std::string why = NotRunReason(r);
    if (!why.empty()) {
      ++infra_;
      ++not_run_why_[why];
    } else if (const auto read = checker::TrialOutcome::TryFromJson(r.results);
               read && read->duration_ms && r.reaped_at > r.spawned_at) {
      // What a run costs beyond its own duration (servers, drivers, judging): Fits' estimate.
      const double wall = ToMillis(r.reaped_at - r.spawned_at);
      overheads_ms_.push_back(std::max(0.0, wall - *read->duration_ms));
    }
    story_.runs.push_back({r.options.name, phase_, Seconds(r.spawned_at), Seconds(r.reaped_at),
                           why.empty() ? "ran" : "not run: " + why});
    Adapt(r, why);
    Progress();
  }
  double Seconds(Nanos at) const { return at.count() == 0 ? 0 : ToMillis(at - t0_) / 1000.0; }
  // Admission: the trials at a time (concurrency_, never above --jobs) drop by one for each
  // run that could not run or whose lab ran late (timing untrusted: an overloaded machine),
  // and rise by one after 2 x --jobs runs in a row that were neither. Starting more trials on
  // a machine that cannot start the ones it has is what starves a driver's start.
  void Adapt(const ChildRun& r, const std::string& not_run) {
    const bool overloaded = !not_run.empty() || (r.ran && !Trusted(r));
    if (overloaded) {
      healthy_ = 0;
      if (concurrency_ > 1) {
        SetConcurrency(concurrency_ - 1, r.options.name + ": " + (not_run.empty() ? "the lab ran late (timing untrusted)" : not_run));
      }
    } else if (++healthy_ >= 2 * f_.jobs && concurrency_ < f_.jobs) {
      healthy_ = 0;
      SetConcurrency(concurrency_ + 1, std::to_string(2 * f_.jobs) + " runs in a row ran on time");
    }
  }
  void SetConcurrency(int n, const std::string& why) {
    std::ostringstream line;
    line << "at " << static_cast<int>(ToMillis(Elapsed()) / 1000.0) << " s: " << concurrency_ << " -> " << n
         << " trials at a time (" << why << ")";
    concurrency_ = n;
    lowest_concurrency_ = std::min(lowest_concurrency_, n);
    if (story_.concurrency_changes.size() < 200) story_.concurrency_changes.push_back(line.str());
    if (!isatty(2)) std::cerr << "locklab hunt: " << line.str() << "\n";
  }
  // The same run once more, under a new name (its first try's files stay as they were).
  static ChildRun RunAgain(const ChildRun& r, int attempt) {
    ChildRun again;
    again.options = r.options;
    const std::string stem = r.scenario_path.substr(0, r.scenario_path.size() - 5);
    again.scenario_path = stem + "-again" + std::to_string(attempt) + ".toml";
    again.options.name = r.options.name + "-again" + std::to_string(attempt);
    return again;
  }
  // What a run of `o` takes, start to end: its duration and the median cost of a run beyond
  // it seen so far (3 s until one is seen). Fits: started now, it would end by the deadline.
  Millis ExpectedWall(const RunOptions& o) const {
    double extra = 3000;
    if (!overheads_ms_.empty()) {
      std::vector<double> v = overheads_ms_;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      extra = v[v.size() / 2];
    }
    return o.duration + Millis(static_cast<int64_t>(extra));
  }
  bool Fits(const RunOptions& o) const { return MonotonicNow() + ExpectedWall(o) <= deadline_; }
  bool OutOfTime() const { return budget_spent_ || MonotonicNow() >= deadline_; }
  // What the reproduction of `o` needs: kReproductionReruns runs (and as many of the
  // baseline), concurrency_ at a time. The shrink leaves it that much of the budget.
  Nanos ReproductionReserve(const RunOptions& o) const {
    const int runs = kReproductionReruns * (f_.baseline.empty() ? 1 : 2);
    const int rounds = (runs + concurrency_ - 1) / concurrency_;
    return std::chrono::duration_cast<Nanos>(ExpectedWall(o) * rounds);
  }
  // A search trial that ran and did not fail: what it showed goes to the guide, which keeps
  // its scenario when that was new or closer to failing (a trial the lab ran late shows
  // the machine's timing, not the lock's, and teaches nothing).
  void Observe(const ChildRun& r) {
    if (!f_.guide || !r.ran || r.run_dir.empty() || !Trusted(r)) return;
    checker::TrialSignals signals;
    if (ReadTrialSignals(r.run_dir, r.results, &signals).ok() && guide_.Observe(r.options, signals)) {
      ++story_.guide_kept;
    }
  }
  // RenewalDecides (hunt_space.h) against the baseline: never a find, never a shrink step.
  bool RenewalDecides(const RunOptions& o) const {
    return !f_.baseline.empty() && harness::RenewalDecides(o, f_.lock_renews, f_.baseline_renews);
  }
  // Whether the draw just named (drawn_) is this shard's: every shard_count-th, from its index.
  bool MineToRun() const {
    return f_.shard_count == 1 || (drawn_ - 1) % f_.shard_count == f_.shard_index - 1;
  }
  // A counted find not yet shrunk (ShrinkUntilOneReproduces takes them in order).
  static bool AwaitsShrinking(const FoundScenario& f) { return !f.baseline_failed && !f.shrunk; }
  // Runs `runs`, concurrency_ at a time (so --jobs bounds every phase), none started that
  // would end past the deadline (those stay !started); a run that could not run is run
  // again in its place, up to kRunAttempts in all. Counts trials and the runs not run.
  void RunAll(std::vector<ChildRun>& runs) {
    for (int attempt = 1; attempt <= kRunAttempts && !Stop(); ++attempt) {
      size_t i = 0;
      bool out_of_time = false;
      Status s = RunChildrenFrom(
          f_.jobs,
          [&]() -> ChildRun* {
            if (running_ >= concurrency_ || out_of_time) return nullptr;
            while (i < runs.size() && runs[i].done) ++i;
            if (i >= runs.size()) return nullptr;
            if (!Fits(runs[i].options)) {
              out_of_time = true;
              return nullptr;
            }
            ++running_;
            return &runs[i++];
          },
          [&](const ChildRun& r, size_t) { CountRun(r); });
      if (!s.ok() && io_error_.ok()) io_error_ = s;
      bool again = false;
      for (auto& r : runs) {
        if (!r.done || NotRunReason(r).empty() || attempt == kRunAttempts || Stop() || !Fits(r.options)) continue;
        r = RunAgain(r, attempt);
        ++story_.runs_retried;
        again = true;
      }
      if (!again) break;
    }
    for (const auto& r : runs) story_.scenarios_not_run += r.done && !NotRunReason(r).empty();
  }
  static constexpr int kRunAttempts = 3;
  // How many of `n` reruns of `o` fail, in how many of its runs the baseline (if any) failed
  // too, and how many of either could not run (ShrinkTry; `what` left empty).
  ShrinkTry Reruns(const RunOptions& o, int n, int need, const std::string& sub, const std::string& tag,
                   std::vector<ChildRun>* kept = nullptr);
  // Until the budget is spent, or (stop_at_first) a failure that counts is found.
  void Search(bool stop_at_first);
  // The next scenario of the search (the first pass's, then drawn from the space), redrawing
  // those the lab refuses; nothing when the lab refuses nearly all of them (io_error_ set).
  std::optional<ChildRun> DrawTrial();
  // A trusted failure's confirmation: f_.reruns reruns and three baseline runs, started at
  // once beside the search's trials (a run mostly waits). Judge: the kinds the trial showed
  // that no baseline run did (a fenced mutant's broken resource where the reference's
  // holders overlap too) count when 3 of 4 reruns show them; none left, or a baseline run
  // that could not run (nothing seen to pass there), and the difference is not confirmed.
  struct Confirmation {
    ChildRun* trial;
    std::deque<ChildRun> runs;  // empty until started
    size_t left = 0;
    int attempt = 1;
  };
  // A confirmation whose runs the lab could not see at work runs again, up to this many times
  // in all: an overloaded machine where drivers could not start refutes nothing.
  static constexpr int kConfirmAttempts = 3;
  enum class Judged { kCounted, kNotCounted, kAgain };
  // Confirmations at a time: a third of --jobs, at least one. Failures the baseline shows
  // too wait in line ahead of a real one; a second line keeps them from holding it up long.
  int ConfirmationSlots() const { return std::max(1, f_.jobs / 3); }
  void StartConfirmation(Confirmation& c, std::deque<ChildRun*>* due) {
    const RunOptions& o = c.trial->options;
    const std::string tag = o.name + "-confirm" + (c.attempt > 1 ? std::to_string(c.attempt) : "") + "-";
    for (int i = 1; i <= f_.reruns; ++i) c.runs.push_back(Make(o, "trials", tag + std::to_string(i)));
    for (int i = 1; i <= 3; ++i) c.runs.push_back(Make(OnBaseline(o), "trials", tag + "b" + std::to_string(i)));
    c.left = c.runs.size();
    for (ChildRun& r : c.runs) due->push_back(&r);
  }
  // Whether run `r` showed the lock at work (an acquire granted). One that did not (drivers
  // that could not start in time on an overloaded machine) neither confirms nor refutes.
  static bool Worked(const ChildRun& r) {
    return r.ran && r.results.is_object() && checker::TrialOutcome::FromJson(r.results).acquires_ok > 0;
  }
  // Records c's trial as a find, counted when the difference is confirmed; or, when the lab
  // did not see enough of c's runs at work (every baseline run, and as many reruns as a
  // confirmation needs) and attempts are left, records nothing: it is to run again.
  Judged JudgeConfirmation(const Confirmation& c) {
    const int need = (3 * f_.reruns + 3) / 4;
    int reruns_worked = 0;
    bool baseline_worked = true, baseline_seen = true;
    FailureKindSet kinds = Kinds(*c.trial);
    for (const ChildRun& r : c.runs) {
      if (!IsBaseline(r)) {
        reruns_worked += Worked(r);
        continue;
      }
      baseline_worked = baseline_worked && Worked(r);
      baseline_seen = baseline_seen && r.done && r.ran;
      for (const auto& k : Kinds(r)) kinds.erase(k);
    }
    const bool seen_at_work = baseline_worked && reruns_worked >= need;
    if (!seen_at_work && c.attempt < kConfirmAttempts && !Stop()) return Judged::kAgain;
    int failed = 0;
    target_ = kinds;
    for (const ChildRun& r : c.runs) failed += !IsBaseline(r) && Failed(r) && Trusted(r);
    target_ = AllKinds();
    const bool counts = baseline_seen && !kinds.empty() && failed >= need && !Stop();
    if (counts) {
      const std::string known = known_.Accounts(f_.lock, c.trial->options, kinds);
      RecordFind(*c.trial, known.empty() ? FindFate::kCounted : FindFate::kKnown, kinds, known);
      return known.empty() ? Judged::kCounted : Judged::kNotCounted;
    }
    if (!seen_at_work || !baseline_seen) {
      // Nothing refuted: the lab could not show the lock (or the baseline) at work.
      std::string why;
      for (const ChildRun& r : c.runs) {
        if (why.empty()) why = NotRunReason(r);
      }
      RecordFind(*c.trial, FindFate::kNotRun, Kinds(*c.trial),
                 "its confirmation could not run in " + std::to_string(c.attempt) + " attempts" +
                     (why.empty() ? std::string(" (no acquire granted)") : " (" + why + ")"));
    } else {
      RecordFind(*c.trial, kinds.empty() ? FindFate::kBaselineFailed : FindFate::kNotConfirmed, Kinds(*c.trial));
    }
    return Judged::kNotCounted;
  }
  // Shrinks `find` (a counted find) into story_'s shrink fields.
  void Shrink(const FoundScenario& find);
  void Reproduce();
  // Shrinks and reruns counted finds, the first found first, until one reproduces; between
  // them, while budget is left, the search goes on (Search). The story tells the best.
  void ShrinkUntilOneReproduces();
  // Keeps a failing trial in story_.found and found/NAME.toml (with its [expect] for `kinds`);
  // `fate` says whether it counts (FindFate): one the baseline fails too, or that --known
  // accounts for, has its faults drawn less (the search moves to where something is new).
  void RecordFind(const ChildRun& r, FindFate fate, const FailureKindSet& kinds, const std::string& why = "") {
    // A plain trial both locks fail says nothing about where the faulted draws should go
    // (its workload is the plain pass's own, not one the search draws).
    const bool counted = fate == FindFate::kCounted;
    if (!counted && fate != FindFate::kNotRun && !r.options.faults.empty()) DrawLess(r.options);
    FoundScenario found{r.options, r.run_dir, ToMillis(Elapsed()) / 1000.0, !counted};
    found.fate = fate;
    found.why = why;
    found.kinds = kinds;
    RunOptions saved = r.options;
    ExpectKinds(found.kinds, &saved);
    Status w = WriteFile(dir_ + "/found/" + r.options.name + ".toml", ScenarioToToml(saved));
    if (!w.ok()) io_error_ = w;
    story_.found.push_back(found);
  }
  // Draws the fault kinds of `o` less often (never below a twentieth): both locks fail there.
  void DrawLess(const RunOptions& o) {
    for (const auto& kind : ScenarioKinds(o)) {
      double& w = space_.weights.try_emplace(kind, 1.0).first->second;
      w = std::max(0.05, w * (kind.find('@') == std::string::npos ? 0.7 : 0.5));
    }
  }
  void Progress(bool final_line = false);
  // Why the hunt cannot say "nothing found" (exit 2), one line; "" when it can (hunt_story.h).
  std::string Undecided() const;
  Nanos Elapsed() const { return MonotonicNow() - t0_; }
  bool counted_any() const {
    return std::any_of(story_.found.begin(), story_.found.end(), [](const FoundScenario& s) { return !s.baseline_failed; });
  }
  // More than half the trials (and 3) could not run: the lab, not the lock, is failing.
  bool MostTrialsCouldNotRun() const { return infra_ > 3 + trials_ / 2; }
  bool Stop() const { return Interrupted() || !io_error_.ok() || MostTrialsCouldNotRun(); }

  HuntFlags f_;
  SearchSpace space_;
  KnownFailures known_;  // --known
  std::string dir_;
  Rng rng_;
  // The search's feedback (hunt_guide.h): scenarios that showed something new or came close,
  // and the random source of its choices, apart from rng_ so that the fresh draws stay the
  // seed's in the same order whether or not the guide runs.
  GuidedCorpus guide_;
  Rng guide_rng_;
  // The plain pass (hunt_plain.h): the lock alone, before any fault, with its own random
  // source for the same reason.
  std::vector<PlainWorkload> plain_;
  size_t plain_next_ = 0;
  // The plain trials by name, and how often each untrusted failure of them ran again.
  std::map<std::string, int> plain_tries_;
  std::map<std::string, int> not_run_tries_;  // how often each scenario that could not run ran again
  static constexpr int kPlainRetries = 2;
  Rng plain_rng_;
  Nanos t0_ = MonotonicNow();
  Nanos deadline_ = t0_ + f_.budget;  // the whole command's (--budget): no run starts that would end past it
  bool budget_spent_ = false;         // a search draw no longer fit before the deadline
  Millis first_wall_{0};              // what the first draw would have taken, when none fit
  // Admission (Adapt): the trials at a time now and the fewest so far, the children running
  // (every phase), the runs in a row that ran on time, and what runs cost beyond their own
  // duration (ExpectedWall).
  int concurrency_, lowest_concurrency_, running_ = 0, healthy_ = 0;
  std::vector<double> overheads_ms_;
  std::map<std::string, int64_t> not_run_why_;
  std::string phase_ = "search";
  std::string attempt_prefix_;  // of the shrink and rerun files (ShrinkUntilOneReproduces)
  int64_t trials_ = 0, infra_ = 0, drawn_ = 0, invalid_draws_ = 0, untrusted_ = 0;
  // The search's first pass (Search): single-fault draws, and how far it got.
  std::vector<FirstPassDraw> first_pass_;
  size_t first_pass_next_ = 0;
  int first_pass_refusals_ = 0;  // refused draws of first_pass_[first_pass_next_] so far
  Status io_error_;
  HuntStory story_;
  // The kinds of failure a run must show to count as failed (Failed): every kind while
  // searching; with a baseline, once a failure is found, the kinds it showed that the
  // baseline's run of the same scenario did not (a fenced lock's mutant whose resource
  // breaks where the reference's holders overlap too, but its resource holds: "resource").
  // Confirmation, shrinking and the reruns all judge by it, so a shrunk schedule keeps the
  // difference, not merely a failure both locks share.
  FailureKindSet target_ = AllKinds();
};

ShrinkTry Hunt::Reruns(const RunOptions& o, int n, int need, const std::string& sub, const std::string& tag,
                       std::vector<ChildRun>* kept) {
  // need > 0 (a shrink step): concurrency_ reruns at a time while the count is undecided
  // (`need` failures reached, or out of reach), then the baseline's run only when the step
  // would be kept. need <= 0 (a reproduction rate): all n, and n of the baseline, in one
  // batch (one baseline run is too weak for a rate: a drift near an allowance fails a
  // correct lock now and then). A rerun that could not run (after RunAll's attempts) is no
  // rerun: `reruns` counts those that ran, `not_run` the others; one the budget left
  // unstarted ends the tally there (budget_cut says so).
  std::vector<ChildRun> all;
  ShrinkTry tally;
  int& failed = tally.failed;
  int done = 0, asked = 0;
  bool cut = false;
  auto count = [&](std::vector<ChildRun>& batch) {
    RunAll(batch);
    int ran = 0;
    for (auto& r : batch) {
      if (!r.started) {
        cut = true;
        continue;
      }
      const bool not_run = !NotRunReason(r).empty();
      if (IsBaseline(r)) {
        tally.baseline_failures += BaselineFailed(r);
        tally.baseline_not_run += not_run;
      } else if (not_run) {
        ++tally.not_run;
      } else {
        failed += Failed(r) && Trusted(r);
        ++done;
      }
      ran += !not_run;
      all.push_back(std::move(r));
    }
    return ran;
  };
  while (done < n && !Stop() && !cut) {
    std::vector<ChildRun> batch;
    int slots = need > 0 ? std::max(1, concurrency_) : n - done;
    for (int i = 0; need <= 0 && !f_.baseline.empty() && i < slots; ++i) {
      batch.push_back(Make(OnBaseline(o), sub, tag + "-baseline-" + std::to_string(asked + i + 1)));
    }
    for (int i = 0; i < slots && done + i < n; ++i) {
      batch.push_back(Make(o, sub, tag + "-" + std::to_string(asked + i + 1)));
    }
    asked += slots;
    if (count(batch) == 0) break;  // nothing of it ran, even run again: the lab is failing (Stop)
    if (need > 0 && (failed >= need || failed + (n - done) < need)) break;
  }
  if (need > 0 && failed >= need && !f_.baseline.empty() && !Stop() && !cut) {
    std::vector<ChildRun> batch = {Make(OnBaseline(o), sub, tag + "-baseline")};
    count(batch);
  }
  tally.reruns = done;
  if (cut && story_.budget_cut.empty()) {
    story_.budget_cut = (phase_ == "reproduce" ? std::string("the reproduction") : "the " + phase_) + " of " +
                        o.name + ", after " + std::to_string(done) + " of " + std::to_string(n) + " reruns";
  }
  if (kept) *kept = std::move(all);
  return tally;
}

void Hunt::Progress(bool final_line) {
  bool tty = isatty(2);
  std::ostringstream line;
  double s = ToMillis(Elapsed()) / 1000.0;
  line << "hunt " << LockDisplayName(f_.lock) << ": " << phase_ << ", " << trials_ << " trials, "
       << story_.Counted() << " failing";
  // "failing" means what the summary and hunt.md count: a find the baseline does not fail too.
  if (static_cast<int>(story_.found.size()) > story_.Counted())
    line << " (+" << story_.found.size() - story_.Counted() << " not counted)";
  if (!story_.steps.empty()) line << ", " << story_.steps.size() << " shrink steps kept";
  line << ", " << static_cast<int>(s) << " s";
  if (phase_ == "search") {
    double left = std::max(0.0, static_cast<double>(f_.budget.count()) / 1000.0 - s);
    line << " (" << static_cast<int>(left) << " s left)";
  }
  if (tty)
    std::cerr << "\r\033[K" << line.str() << (final_line ? "\n" : "") << std::flush;
  else if (final_line || trials_ % 10 == 0)
    std::cerr << "locklab " << line.str() << "\n";
}

std::optional<ChildRun> Hunt::DrawTrial() {
  for (;;) {
    char name[32];
    std::snprintf(name, sizeof name, "t%04lld", static_cast<long long>(++drawn_));
    // Small first (QuickCheck's growing size): one fault at a time for the first ten
    // scenarios, up to two for the next ten, then up to --max-faults.
    // (Counted from the first faulted draw: the plain pass is not one of them.)
    const int64_t faulted = drawn_ - static_cast<int64_t>(plain_next_);
    space_.max_faults = std::min<int>(f_.max_faults, 1 + static_cast<int>(std::max<int64_t>(faulted, 1) - 1) / 10);
    // The plain pass (Search's start): the lock alone, no fault. A workload the lab refuses
    // for this lock is skipped.
    if (plain_next_ < plain_.size()) {
      const PlainWorkload w = plain_[plain_next_];
      const auto nth = std::count(plain_.begin(), plain_.begin() + static_cast<std::ptrdiff_t>(plain_next_++), w);
      RunOptions o = DrawPlain(space_, w, static_cast<size_t>(nth), plain_rng_, name);
      if (!ValidateRunOptions(o).ok() || !MineToRun()) continue;
      plain_tries_[o.name] = 0;
      return Make(o, "trials", name);
    }
    // The first pass: one fault alone, maybe armed at a given point.
    const bool first_pass = first_pass_next_ < first_pass_.size();
    SearchSpace one;
    if (first_pass) {
      one = FirstPassSpace(space_, first_pass_[first_pass_next_]);
    }
    // After the first pass, half the trials build on a kept scenario (hunt_guide.h).
    const bool mutate = !first_pass && f_.guide && !guide_.empty() && guide_rng_.Unit() < 0.5;
    RunOptions o = mutate ? guide_.Mutate(space_, guide_rng_, name)
                          : DrawScenario(first_pass ? one : space_, rng_, name);
    Status v = ValidateRunOptions(o);
    if (!v.ok()) {  // a draw the lab refuses (a topology the lock cannot have): draw again
      // Against the accepted draws: drawn_ counts the refused ones too, so compared with
      // it this could never fire, and a space the lab always refused (now also a first-pass
      // entry it always refuses) drew forever.
      ++invalid_draws_;
      // A first-pass entry is redrawn (its nodes, targets and workload are random) a few
      // times, then skipped: one the lab always refuses (a fault whose every draw this
      // lock's topology rejects) must not count against the whole search.
      if (first_pass && ++first_pass_refusals_ >= kFirstPassTries) {
        ++first_pass_next_;
        first_pass_refusals_ = 0;
      }
      if (invalid_draws_ > 1000 && invalid_draws_ > 10 * (drawn_ - invalid_draws_)) {
        io_error_ = Status::Usage("hunt: the lab refuses the drawn scenarios: " + v.message());
        return std::nullopt;
      }
      continue;
    }
    if (first_pass) {
      ++first_pass_next_;
      first_pass_refusals_ = 0;
    }
    // Another shard's draw: drawn like every other (so the sequence stays the seed's), not run.
    if (!MineToRun()) continue;
    if (mutate) ++story_.guide_mutations;
    return Make(o, "trials", name);
  }
}

void Hunt::Search(bool stop_at_first) {
  phase_ = "search";
  const Nanos search_start = MonotonicNow();
  if (drawn_ == 0) {  // --keep-searching resumes
    // Holds past the TTL with the lease ignored compare renewal: run them only where the
    // workload renews the lock, and against a baseline only when it renews the baseline too
    // (else the difference is that one of the two is renewed, not a bug).
    plain_ = PlainPass(space_, f_.baseline.empty() ? f_.lock_renews : f_.lock_renews == f_.baseline_renews);
    first_pass_ = FirstPass(space_, rng_);
  }
  while (!Stop() && !OutOfTime()) {
    // A rolling pool: a new trial starts as soon as one ends, concurrency_ at a time (--jobs
    // at most, every run counted: Adapt). A trusted failure's confirmation takes the next
    // free slots (Confirmation, ConfirmationSlots at a time), while the search goes on; a failure both locks show is recorded and the search goes on. New
    // trials stop once a failure counts (without a baseline: once one is seen, and the
    // running ones' failures count too); with stop_at_first and a baseline, the failures
    // still waiting for confirmation then are left in trials/, unjudged.
    std::deque<ChildRun> runs;                // this pool's trials
    std::deque<ChildRun*> trials_due;         // retries waiting for a slot (plain, not run)
    std::list<Confirmation> confirming;       // in arrival order: the started, then the waiting
    std::list<Confirmation> judged;           // kept: the pool holds its runs' addresses
    std::deque<ChildRun*> confirm_due;        // runs of started ones not yet running
    const size_t found_before = story_.found.size();
    bool stop_drawing = false;
    Status ps = RunChildrenFrom(
        f_.jobs,
        [&]() -> ChildRun* {
          if (Stop() || running_ >= concurrency_) return nullptr;
          ChildRun* t = nullptr;
          if (!confirm_due.empty()) {
            t = confirm_due.front();
            if (!Fits(t->options)) return nullptr;  // left unjudged: the budget ended first
            confirm_due.pop_front();
          } else if (!trials_due.empty()) {
            t = trials_due.front();
            if (!Fits(t->options)) return nullptr;
            trials_due.pop_front();
          } else if (!stop_drawing && !OutOfTime()) {
            std::optional<ChildRun> drawn = DrawTrial();
            if (drawn && !Fits(drawn->options)) {
              budget_spent_ = true;  // no draw starts that would end past the deadline
              if (trials_ == 0) first_wall_ = ExpectedWall(drawn->options);
              return nullptr;
            }
            if (drawn) t = &runs.emplace_back(std::move(*drawn));
          }
          running_ += t != nullptr;
          return t;
        },
        [&](const ChildRun& done, size_t) {
          CountRun(done);
          auto mine = std::find_if(confirming.begin(), confirming.end(), [&](const Confirmation& c) {
            return std::any_of(c.runs.begin(), c.runs.end(), [&](const ChildRun& r) { return &r == &done; });
          });
          if (mine != confirming.end()) {
            if (--mine->left > 0) return;
            const Judged j = JudgeConfirmation(*mine);
            if (j == Judged::kAgain) confirming.push_back({mine->trial, {}, 0, mine->attempt + 1});
            stop_drawing = j == Judged::kCounted || stop_drawing;
            judged.splice(judged.end(), confirming, mine);
            // The first counted find ends the search: those still waiting stay unjudged.
            if (stop_drawing && stop_at_first) std::erase_if(confirming, [](const Confirmation& c) { return c.runs.empty(); });
            for (Confirmation& c : confirming) {
              if (c.runs.empty()) {
                StartConfirmation(c, &confirm_due);
                break;
              }
            }
            return;
          }
          if (const std::string why = NotRunReason(done); !why.empty()) {
            // The lab's failure, not the lock's: the same scenario again, up to twice, ahead of
            // new draws (at the concurrency Adapt just lowered).
            int& tries = not_run_tries_[done.options.name];
            if (tries < kRunAttempts - 1 && !Stop()) {
              ++tries;
              ++story_.runs_retried;
              ChildRun again = RunAgain(done, tries);
              not_run_tries_[again.options.name] = tries;
              runs.push_back(std::move(again));
              trials_due.push_back(&runs.back());
            } else {
              ++story_.scenarios_not_run;
            }
            return;
          }
          if (!Failed(done)) {
            Observe(done);
            return;
          }
          if (!Trusted(done)) {
            ++untrusted_;
            // A plain-pass failure the lab's timing cannot vouch for (a stalled harness on a
            // busy machine) runs again, up to twice, ahead of new draws: those few trials
            // are where a lock that fails without any fault dies in seconds.
            auto again = plain_tries_.find(done.options.name);
            if (again != plain_tries_.end() && again->second < kPlainRetries) {
              const int n = ++again->second;
              runs.push_back(Make(done.options, "trials", done.options.name + "-again" + std::to_string(n)));
              trials_due.push_back(&runs.back());
            }
            return;
          }
          ChildRun* trial = const_cast<ChildRun*>(&done);  // every trial is one of `runs`
          if (RenewalDecides(done.options)) {
            RecordFind(*trial, FindFate::kBaselineFailed, Kinds(done), "renewing one lock and not the other decides it");
          } else if (f_.baseline.empty()) {
            // Counts, as do the running ones' failures, unless --known accounts for it: then
            // the search goes on for a failure that is new.
            const std::string known = known_.Accounts(f_.lock, done.options, Kinds(done));
            RecordFind(*trial, known.empty() ? FindFate::kCounted : FindFate::kKnown, Kinds(done), known);
            stop_drawing = stop_drawing || known.empty();
          } else if (!(stop_drawing && stop_at_first)) {  // else the search has ended
            confirming.push_back({trial, {}, 0});
            if (confirming.size() <= static_cast<size_t>(ConfirmationSlots())) StartConfirmation(confirming.back(), &confirm_due);
          }
        });
    if (!ps.ok() && io_error_.ok()) io_error_ = ps;
    // Confirmations an interrupt, a lab failure or the budget cut short: not confirmed.
    for (const Confirmation& c : confirming) {
      RecordFind(*c.trial, FindFate::kNotRun, Kinds(*c.trial),
                 Interrupted() ? "interrupted before its confirmation"
                 : OutOfTime() ? "the budget ended before its confirmation ran"
                               : "the lab stopped before its confirmation ran");
    }
    // Listed in draw order (trials' names), not in the order their runs ended; the earliest
    // counted is shrunk first (ShrinkUntilOneReproduces).
    std::stable_sort(story_.found.begin() + static_cast<std::ptrdiff_t>(found_before), story_.found.end(),
                     [](const FoundScenario& a, const FoundScenario& b) { return a.options.name < b.options.name; });
    if (stop_at_first && std::any_of(story_.found.begin(), story_.found.end(), AwaitsShrinking)) break;
  }
  story_.search_s += ToMillis(MonotonicNow() - search_start) / 1000.0;
}

void Hunt::Shrink(const FoundScenario& find) {
  phase_ = "shrink";
  target_ = find.kinds;  // shrink, reproduce: keep the failure (difference) found
  story_.kinds = find.kinds;
  story_.minimal_from = "found/" + find.options.name + ".toml";
  story_.minimal_from_at_s = find.at_s;
  RunOptions current = find.options;
  current.name = "minimal";
  story_.chain = {current};
  const Nanos shrink_start = MonotonicNow();
  // Its share of the budget: --shrink-budget at most, and never the time the reproduction
  // after it needs (ReproductionReserve).
  const Nanos shrink_until = std::min(shrink_start + f_.shrink_budget, deadline_ - ReproductionReserve(current));
  auto shrink_left = [&] { return MonotonicNow() < shrink_until && !OutOfTime(); };
  const int need = (3 * f_.reruns + 3) / 4;  // three quarters, rounded up
  int step = 0;
  // Passes over the candidates; within a pass a kind of step that failed to reproduce is not
  // tried again on the simpler scenarios that follow (a new pass tries everything again).
  bool progress = true;
  while (progress && !Stop() && shrink_left()) {
    progress = false;
    std::set<std::string> refused;
    bool pass_kept = true;
    while (pass_kept && !Stop() && shrink_left()) {
      pass_kept = false;
      for (const ShrinkStep& cand : ShrinkCandidates(current)) {
        if (Stop() || !shrink_left()) break;
        if (refused.count(cand.what) || !ValidateRunOptions(cand.options).ok()) continue;
        // --validity holds for every scenario, shrunk ones too.
        if (!f_.validity.empty() && cand.options.validity != f_.validity) continue;
        if (RenewalDecides(cand.options)) continue;
        ShrinkTry tried = Reruns(cand.options, f_.reruns, need, "shrink", attempt_prefix_ + "s" + std::to_string(++step));
        tried.what = cand.what;
        story_.tried.push_back(tried);
        if (tried.failed >= need && !tried.baseline_failed()) {
          story_.steps.push_back({cand.what, tried.failed, f_.reruns, 0});
          current = cand.options;
          story_.chain.push_back(current);
          progress = pass_kept = true;
          break;  // on from the simpler scenario
        }
        refused.insert(cand.what);
      }
    }
  }
  story_.shrink_s += ToMillis(MonotonicNow() - shrink_start) / 1000.0;
}

void Hunt::Reproduce() {
  phase_ = "reproduce";
  // The minimal scenario, else the last kept steps undone, until one reproduces
  // (kReproductionNeeded of kReproductionReruns, the baseline never failing); still short
  // of that, the best of them strengthened (StrengthenCandidates). The story tells the best
  // tried (ToldReproduction).
  struct Tried {
    RunOptions options;
    int undone = 0;
    std::string strengthened;
    std::vector<ChildRun> runs;
  };
  std::vector<Tried> tried;
  auto& tries = story_.reproductions;
  auto rerun = [&](Tried t, const std::string& what, const std::string& tag) {
    ShrinkTry tally = Reruns(t.options, kReproductionReruns, 0, "reruns", tag, &t.runs);
    tally.what = what;
    tries.push_back(tally);
    tried.push_back(std::move(t));
    return tally.failed >= kReproductionNeeded && !tally.baseline_failed();
  };
  bool done = false;
  for (size_t back = 0; back < story_.chain.size() && back < 3 && !done && !Stop() && (back == 0 || !OutOfTime()); ++back) {
    Tried t{story_.chain[story_.chain.size() - 1 - back], static_cast<int>(back), "", {}};
    done = rerun(std::move(t), back == 0 ? "as shrunk" : std::to_string(back) + " kept steps undone",
                 attempt_prefix_ + "r" + std::to_string(back));
  }
  if (tried.empty()) return;
  const size_t best = ToldReproduction(tries);
  if (!done && !tries[best].baseline_failed() && tries[best].failed > 0) {
    const RunOptions base = tried[best].options;
    const int base_undone = tried[best].undone;
    story_.strengthened_from = tries[best].failed;
    int n = 0;
    for (const ShrinkStep& s : StrengthenCandidates(base, space_.max_duration)) {
      if (done || Stop() || OutOfTime() || !ValidateRunOptions(s.options).ok()) continue;
      Tried t{s.options, base_undone, s.what, {}};
      done = rerun(std::move(t), "strengthened: " + s.what, attempt_prefix_ + "g" + std::to_string(++n));
    }
  }
  const size_t told = ToldReproduction(tries);
  const Tried& t = tried[told];
  story_.minimal = t.options;
  story_.reproduced = tries[told].failed;
  story_.reruns = tries[told].reruns;
  story_.baseline_failures = tries[told].baseline_failures;
  story_.not_run = tries[told].not_run;
  story_.baseline_not_run = tries[told].baseline_not_run;
  story_.undone = t.undone;
  story_.strengthened = t.strengthened;
  story_.failing_run.clear();
  story_.failing_results = nlohmann::ordered_json();
  for (const ChildRun& r : t.runs) {
    if (!IsBaseline(r) && Failed(r) && Trusted(r)) {
      story_.failing_run = r.run_dir;
      story_.failing_results = r.results;
      break;
    }
  }
}

void Hunt::ShrinkUntilOneReproduces() {
  // A find whose minimal does not reproduce (or fails the reference) is set aside and the
  // search goes on, rather than ending with most of the budget left and nothing killed.
  std::vector<HuntStory> stories;  // each shrunk find's story, in order
  for (;;) {
    // The earliest counted of those waiting: the find that ended the search is the one its
    // kill time names (a confirmation already running when it counted may count later).
    auto next = story_.found.end();
    for (auto f = story_.found.begin(); f != story_.found.end(); ++f) {
      if (AwaitsShrinking(*f) && (next == story_.found.end() || f->at_s < next->at_s)) next = f;
    }
    if (next == story_.found.end()) {
      if (stories.empty() || Stop() || OutOfTime()) break;
      Search(true);  // on from where the search stopped, for the next counted find
      continue;
    }
    if (Stop()) break;
    // Past the budget no other find starts shrinking (the first is shrunk and rerun with what
    // is left of it, so that the hunt tells it).
    if (!stories.empty() && OutOfTime()) break;
    next->shrunk = true;
    const FoundScenario find = *next;  // Search may grow story_.found
    // The first find's runs are shrink/s1-1.toml, reruns/r0-1.toml, ...; a later one's are
    // named after it (shrink/t0012-s1-1.toml), so none overwrites another's.
    attempt_prefix_ = stories.empty() ? "" : find.options.name + "-";
    Shrink(find);  // into shrink fields that are clear: never set yet, or cleared below
    Reproduce();
    target_ = AllKinds();
    if (!story_.minimal) break;  // stopped before anything was rerun
    const size_t told = ToldReproduction(story_.reproductions);
    story_.shrunk.push_back({story_.minimal_from, find.at_s, story_.reproductions[told]});
    stories.push_back(story_);
    if (story_.shrunk.back().reproduced()) break;
    // The reference fails the minimal too: the search draws its faults less from here on.
    if (story_.shrunk.back().told.baseline_failed()) DrawLess(find.options);
    story_.TellShrinkOf(HuntStory{});  // the progress line counts the next find's steps
  }
  if (!stories.empty()) {  // (also over a shrink an interrupt cut short)
    std::vector<ShrinkTry> each;
    for (const auto& f : story_.shrunk) each.push_back(f.told);
    story_.TellShrinkOf(stories[ToldReproduction(each)]);
  }
}

int Hunt::Run() {
  story_.lock = f_.lock;
  story_.baseline = f_.baseline;
  story_.seed = f_.seed;
  story_.shard_index = f_.shard_index;
  story_.shard_count = f_.shard_count;
  story_.guided = f_.guide;
  story_.ttl = f_.ttl;
  story_.ttls = space_.ttls;
  story_.faults = space_.faults;
  story_.budget_s = static_cast<double>(f_.budget.count()) / 1000.0;
  for (const char* sub : {"/trials", "/found", "/shrink", "/reruns"}) {
    if (Status s = MakeDirs(dir_ + sub); !s.ok()) {
      std::cerr << "locklab hunt: " << s.message() << "\n";
      return s.ExitCode();
    }
  }
  // The budget as read (a bare number is milliseconds, so an old "--budget 1200" shows here),
  // and the latest time the hunt ends: no run starts that would end past it, so only the
  // report comes after it.
  const std::time_t ends = std::time(nullptr) + static_cast<std::time_t>((f_.budget.count() + 999) / 1000);
  char ends_by[16] = "";
  std::tm local{};
  if (localtime_r(&ends, &local) != nullptr) std::strftime(ends_by, sizeof ends_by, "%H:%M:%S", &local);
  story_.known_sources = known_.empty() ? "" : known_.Describe();
  story_.jobs = f_.jobs;
  std::cerr << "locklab hunt: " << f_.lock << " (" << DescribeTtls(story_) << ") under "
            << space_.faults.size() << " faults for " << FormatDuration(f_.budget) << " (ends by " << ends_by
            << "), up to " << f_.jobs << " trials at a time, seed " << f_.seed
            << (f_.baseline.empty() ? "" : ", against " + f_.baseline)
            << (story_.known_sources.empty() ? "" : ", known: " + story_.known_sources) << ": " << dir_ << "\n";
  Search(true);
  if (f_.shrink) {
    ShrinkUntilOneReproduces();
    target_ = AllKinds();
    if (f_.keep_searching && !Stop() && !OutOfTime()) Search(false);
  }
  story_.trials = trials_;
  story_.untrusted = untrusted_;
  story_.invalid_draws = invalid_draws_;
  story_.interrupted = Interrupted();
  story_.elapsed_s = ToMillis(Elapsed()) / 1000.0;
  story_.runs_not_run = infra_;
  story_.lowest_jobs = lowest_concurrency_;
  story_.not_run_why.assign(not_run_why_.begin(), not_run_why_.end());
  std::stable_sort(story_.not_run_why.begin(), story_.not_run_why.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  story_.undecided = Undecided();
  Progress(true);
  if (!io_error_.ok()) {
    std::cerr << "locklab hunt: " << io_error_.message() << "\n";
    return io_error_.ExitCode();
  }
  if (story_.minimal && !story_.failing_run.empty()) {
    std::error_code ec;
    std::filesystem::create_directory_symlink(story_.failing_run, dir_ + "/failing-run", ec);
  }
  Status w = WriteHuntOutputs(story_, dir_);
  if (!w.ok()) {
    std::cerr << "locklab hunt: " << w.message() << "\n";
    return w.ExitCode();
  }
  std::cout << HuntSummary(story_, dir_);
  std::string corpus_entry;  // the corpus file minimal.toml was written to, if any
  if (!f_.corpus.empty() && story_.minimal) {
    // Only a kill with a statistical [expect] is a regression (MinimalIsRegression).
    if (MinimalIsRegression(story_)) {
      bool existed = false;
      Status c = CopyToCorpus(story_, dir_, f_.corpus, &corpus_entry, &existed);
      if (!c.ok()) {
        std::cerr << "locklab hunt: flag --corpus: " << c.message() << "\n";
        return c.ExitCode();
      }
      std::cout << "corpus: " << corpus_entry << (existed ? " (already there, not copied)" : " (added)") << "\n";
    } else {
      std::cout << "corpus: minimal.toml not added to " << f_.corpus << ": "
                << (MinimalReplay(story_) ? "it did not reproduce " + std::to_string(kReproductionNeeded) +
                                                " of " + std::to_string(kReproductionReruns) +
                                                " times with a baseline that never failed"
                                          : std::string("too rare to be a regression"))
                << "\n";
    }
  }
  // The hunt's page (hunt.html: its trials in time, finds, shrink steps, reproductions and
  // the corpus entry), which also makes the failing run's report; an interrupted hunt gets
  // it too. A report that could not be made (69, 70) is the exit code, as for `locklab
  // report`.
  int report_exit = 0;
  if (f_.report) {
    std::vector<std::string> args = {"--hunt", dir_};
    if (!corpus_entry.empty()) args.insert(args.end(), {"--corpus", corpus_entry});
    report_exit = RunReportScript(args);
  }
  if (counted_any()) return WithReportExit(kExitViolated, report_exit);
  if (infra_ > 0 && trials_ == infra_) {
    // Not one trial ran: the lab cannot run this lock here (a driver that never starts, a
    // server that is not installed), which no verdict can hide.
    std::cerr << "locklab hunt: none of the " << trials_ << " trials could run ("
              << (story_.not_run_why.empty() ? std::string("see their logs") : story_.not_run_why.front().first)
              << "; their logs: " << dir_ << "/trials/*.log)\n";
    return kExitInfrastructure;
  }
  if (!story_.undecided.empty()) {
    std::cerr << "locklab hunt: undecided: " << story_.undecided << "\n";
    return kExitUnknown;
  }
  return Interrupted() ? kExitUnknown : WithReportExit(kExitOk, report_exit);
}

std::string Hunt::Undecided() const {
  // Trial runs as scenarios: a run that could not run and ran on a retry ran.
  const int64_t scenarios = trials_ - story_.runs_retried;
  if (Interrupted()) return "";  // the summary says interrupted
  if (trials_ == 0 && budget_spent_) {
    return "the budget (" + FormatDuration(f_.budget) + ") ended before the first trial could run (a trial takes about " +
           std::to_string(first_wall_.count() / 1000) + " s here): nothing was searched";
  }
  if (story_.scenarios_not_run * 5 > scenarios) {
    return std::to_string(story_.scenarios_not_run) + " of " + std::to_string(scenarios) +
           " trials could not run, even run again (" +
           (story_.not_run_why.empty() ? std::string("see trials/*.log") : story_.not_run_why.front().first) +
           "): more than a fifth, so the hunt did not do its work (at " + std::to_string(lowest_concurrency_) +
           " trial(s) at a time at the fewest)";
  }
  if (MostTrialsCouldNotRun()) {
    return std::to_string(infra_) + " of " + std::to_string(trials_) +
           " trial runs could not run, so the hunt stopped early (" +
           (story_.not_run_why.empty() ? std::string("see trials/*.log") : story_.not_run_why.front().first) + ")";
  }
  if (!counted_any()) {
    for (const auto& f : story_.found) {
      if (f.fate == FindFate::kNotRun) {
        return "the find found/" + f.options.name + ".toml (" + FaultIds(f.options) + ") was never confirmed: " + f.why;
      }
    }
  }
  return "";
}

}  // namespace

// The faults of `space` that apply to the servers a driver's hello asked for (as the matrix
// has them n/a: failover needs a driver that finds the master through Sentinel); one named
// in --faults that does not is refused, naming why.
Status DropFaultsTheDriverCannotMeet(const HuntFlags& flags, const DriverServers& servers, SearchSpace* space) {
  std::vector<std::string> kept;
  for (const auto& id : space->faults) {
    const std::string why = DriverFaultWhyNot(servers, id);
    if (why.empty()) {
      kept.push_back(id);
    } else if (std::find(flags.faults.begin(), flags.faults.end(), id) != flags.faults.end()) {
      return Status::Usage("hunt: flag --faults: fault '" + id + "' does not apply to " + flags.lock + ": " + why);
    }
  }
  if (kept.empty()) return Status::Usage("hunt: no fault applies to lock '" + flags.lock + "' on the servers its hello asks for");
  space->faults = kept;
  return Status::Ok();
}

// Whether the workload renews the baseline's leases: a built-in lock that renews on request
// (the plain pass then renews it), a driver whose hello says renew. (The lock's own answer is
// its space's can_renew, or its hello's, read once where the hunt reads them.)
Status BaselineRenews(const HuntFlags& flags, bool* out) {
  std::string driver;
  Status s = ResolveDriverPath(flags.baseline, &driver);
  if (!s.ok()) return s;
  if (driver.empty()) {
    RunOptions as_run;
    as_run.lock = flags.baseline;
    as_run.ttl = flags.ttl;
    *out = LockCanRenew(as_run);
    return Status::Ok();
  }
  locks::DriverHello hello;
  s = locks::ProbeDriver(driver, {}, locks::DriverStartTimeout(flags.knobs), &hello);
  if (s.ok()) *out = hello.renew;
  return s;
}

int RunHuntCommand(const std::vector<std::string>& args) {
  HuntFlags flags;
  Status s = ParseHuntFlags(args, &flags);
  SearchSpace space;
  if (s.ok()) s = BuildSpace(flags, &space);
  std::string resolved;  // a driver:PATH that is not there is refused before anything runs
  if (s.ok()) s = ResolveDriverPath(flags.lock, &resolved);
  flags.lock_renews = space.can_renew;
  if (s.ok() && !resolved.empty()) {
    // A driver says in its hello which points it stops at, the TTL it really sets, whether
    // it renews and how many servers it runs on.
    locks::DriverHello hello;
    s = locks::ProbeDriver(resolved, flags.driver_args, locks::DriverStartTimeout(flags.knobs), &hello);
    if (s.ok()) {
      flags.lock_renews = hello.renew;
      ApplyDriverHello(hello, flags.ttl_given, &space);
      flags.ttl = space.ttl;
      s = DropFaultsTheDriverCannotMeet(flags, ServersFromHello(hello), &space);
    }
  }
  if (s.ok() && !flags.baseline.empty()) s = BaselineRenews(flags, &flags.baseline_renews);
  KnownFailures known;
  for (const auto& path : flags.known) {
    if (s.ok()) s = known.Add(path);
  }
  if (!s.ok()) {
    std::cerr << "locklab " << s.message() << "\n";
    return s.ExitCode();
  }
  if (flags.seed == 0) flags.seed = RandomSeed(48);
  std::string dir;
  const std::string shard = flags.shard_count > 1 ? "-shard-" + std::to_string(flags.shard_index) : "";
  s = CreateRunDir(flags.out, "hunt-" + LockDisplayName(flags.lock) + shard, flags.seed, &dir);
  if (!s.ok()) {
    std::cerr << "locklab hunt: " << s.message() << "\n";
    return s.ExitCode();
  }
  InstallInterruptHandlers();
  return Hunt(std::move(flags), std::move(space), std::move(known), dir).Run();
}

}  // namespace locklab::harness
