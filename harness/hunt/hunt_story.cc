#include "harness/hunt/hunt_story.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "base/version.h"
#include "checker/trial_outcome.h"
#include "faults/fault_descriptor.h"
#include "harness/trial/child_runs.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {
namespace {

std::string Ms(Millis t) {
  return t.count() >= 10000 && t.count() % 1000 == 0 ? std::to_string(t.count() / 1000) + " s"
                                                     : std::to_string(t.count()) + " ms";
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string TtlRatio(Millis t, Millis ttl) {
  if (ttl.count() <= 0) return "";
  return " (" + Fixed(static_cast<double>(t.count()) / static_cast<double>(ttl.count()), 1) +
         " x TTL)";
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace

int HuntStory::Counted() const {
  int n = 0;
  for (const auto& f : found) n += !f.baseline_failed;
  return n;
}

int HuntStory::Known() const {
  return static_cast<int>(std::count_if(found.begin(), found.end(), [](const FoundScenario& f) { return f.fate == FindFate::kKnown; }));
}

const char* FindFateName(FindFate fate) {
  switch (fate) {
    case FindFate::kCounted: return "counted";
    case FindFate::kBaselineFailed: return "baseline-failed";
    case FindFate::kNotConfirmed: return "not-confirmed";
    case FindFate::kNotRun: return "not-run";
    case FindFate::kKnown: return "known";
  }
  return "counted";
}

// hunt.md's words for a find that is not counted.
static std::string FateText(const FoundScenario& f) {
  switch (f.fate) {
    case FindFate::kCounted: return "";
    case FindFate::kBaselineFailed: return "the baseline failed it too: not counted";
    case FindFate::kNotConfirmed: return "its confirmation did not reproduce the difference: not counted";
    case FindFate::kNotRun: return "not confirmed: " + (f.why.empty() ? std::string("its confirmation could not run") : f.why);
    case FindFate::kKnown: return "already known: " + f.why;
  }
  return "";
}

void HuntStory::TellShrinkOf(const HuntStory& o) {
  minimal_from = o.minimal_from;
  minimal_from_at_s = o.minimal_from_at_s;
  tried = o.tried;
  steps = o.steps;
  chain = o.chain;
  minimal = o.minimal;
  kinds = o.kinds;
  reproduced = o.reproduced;
  reruns = o.reruns;
  undone = o.undone;
  reproductions = o.reproductions;
  strengthened = o.strengthened;
  strengthened_from = o.strengthened_from;
  baseline_failures = o.baseline_failures;
  not_run = o.not_run;
  baseline_not_run = o.baseline_not_run;
  failing_run = o.failing_run;
  failing_results = o.failing_results;
}

std::vector<std::string> HuntStory::KeptSteps() const {
  std::vector<std::string> kept;
  for (size_t i = 0; i + undone < steps.size(); ++i) kept.push_back(steps[i].what);
  return kept;
}

size_t ToldReproduction(const std::vector<ShrinkTry>& tries) {
  size_t told = 0;
  int best = std::numeric_limits<int>::min();
  for (size_t i = 0; i < tries.size(); ++i) {
    // Failures with a clean baseline first; below them, failures net of the baseline's.
    const ShrinkTry& t = tries[i];
    const int score = !t.baseline_failed() && t.failed > 0 ? 1000 + t.failed
                                                          : t.failed - t.baseline_failures;
    if (score > best) {
      best = score;
      told = i;
    }
  }
  return told;
}

std::string DescribeFault(const faults::FaultOptions& f, Millis ttl) {
  const std::string len = Ms(f.duration) + TtlRatio(f.duration, ttl);
  // The fault's own sentence (FaultDescriptor::sentence), or its id and window.
  const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f.id);
  const std::string what = d != nullptr && d->sentence ? d->sentence(f, len) : f.id + " for " + len;
  std::string when = "At " + Ms(f.first_at) + ", " + what;
  if (f.windows != 1) {
    when += ", " + (f.windows == 0 ? std::string("again") : std::to_string(f.windows) + " times") +
            " with " + Ms(f.interval) + " between windows";
  }
  return when + ".";
}


namespace {

// "1 and 2", "1, 2 and 3".
std::string ListWords(const std::vector<std::string>& words) {
  if (words.size() <= 2) return Join(words, " and ");
  std::vector<std::string> head(words.begin(), words.end() - 1);
  return Join(head, ", ") + " and " + words.back();
}

// A moment of the run: "740 ms" below a second, "2.23 s" above.
// When in the run, as a phrase: "at the start of the run", "320 ms into the run",
// "1.95 s into the run".
std::string Moment(double ms) {
  if (ms < 0.5) return "at the start of the run";
  return (ms < 1000 ? Fixed(ms, 0) + " ms" : Fixed(ms / 1000.0, 2) + " s") + " into the run";
}

// The sentence of a minimal with no fault left: what the workload alone does to the lock.
std::string NoFaultNeeded(const RunOptions& o) {
  if (o.hold > o.ttl && o.validity == "honour") {
    return "No fault is needed: the lock fails when its clients work to the end of a lease's "
           "validity (each hold " + Fixed(static_cast<double>(o.hold.count()) / static_cast<double>(o.ttl.count()), 1) +
           " x TTL, cut at the validity).";
  }
  if (o.hold > o.ttl) {
    return "No fault is needed: the lock fails when a critical section outlasts the TTL (each hold " +
           Fixed(static_cast<double>(o.hold.count()) / static_cast<double>(o.ttl.count()), 1) + " x TTL" +
           (o.renew_every > Millis(0) ? ", renewed every " + Ms(o.renew_every) : std::string(", never renewed by the client")) + ").";
  }
  return "No fault is needed: the lock fails under plain contention.";
}

}  // namespace

std::string Narrative(const HuntStory& story) {
  if (!story.minimal) return "";
  const RunOptions& o = *story.minimal;
  std::ostringstream p;
  p << o.clients << " clients take turns on "
    << (o.keys == 1 ? "one key" : std::to_string(o.keys) + " keys") << " of " << o.lock << " (TTL "
    << Ms(o.ttl) << "; each holds it " << Ms(o.hold) << ", thinks up to " << Ms(o.think)
    << "; the run lasts " << Ms(o.duration) << ")"
    << (o.renew_every > Millis(0) ? ", renewing it every " + Ms(o.renew_every) : std::string())
    << (o.validity == "honour" ? ", and stop using a lease once its validity is over" : std::string()) << ".";
  for (const auto& f : o.faults) p << " " << DescribeFault(f, o.ttl);
  if (o.faults.empty()) p << " " << NoFaultNeeded(o);
  // (a failing rerun's results.json of another shape: the narrative says what it can)
  const std::optional<checker::TrialOutcome> failing = checker::TrialOutcome::TryFromJson(story.failing_results);
  if (failing && failing->first_overlap) {
    const auto& v = *failing->first_overlap;
    std::vector<std::string> who;
    for (int64_t h : v.holders) who.push_back(std::to_string(h));
    const auto& active = v.faults_active;
    p << " In a failing rerun, clients " << ListWords(who) << (who.size() > 2 ? " all" : " both") << " held "
      << v.key << " for " << Fixed(v.overlap_ms, 0)
      << " ms, " << Moment(failing->first_violation_ms.value_or(0.0))
      << (active.empty() ? (o.faults.empty() ? std::string() : ", with no fault window open")
                         : ", while " + Join(active, " and ") + (active.size() == 1 ? " was on" : " were on"))
      << ".";
  }
  if (failing && failing->liveness_stuck) {
    p << " In a failing rerun the lock was stuck: clients waited " << Fixed(failing->longest_wait_ms.value_or(0.0), 0)
      << " ms with nobody holding it (the threshold was " << failing->stuck_after_ms << " ms).";
  }
  if (failing) {
    const int64_t lost = failing->lost_updates, stale = failing->stale_writes_accepted;
    if (lost > 0)
      p << " " << lost << " acknowledged counter update" << (lost == 1 ? " was" : "s were")
        << " lost.";
    if (stale > 0)
      p << " " << stale << " write" << (stale == 1 ? "" : "s")
        << " with an old fencing token got in.";
  }
  // What "failed" means here, when it is narrower than a violated verdict.
  const bool resource_only = story.kinds.count(FailureKind::kResource) && !story.kinds.count(FailureKind::kViolated);
  const bool stuck_only = story.kinds == FailureKindSet{FailureKind::kStuck};
  p << " minimal.toml failed"
    << (resource_only ? " (its resource was broken)" : stuck_only ? " (stuck)" : "") << " in "
    << story.reproduced << " of " << story.reruns << " reruns";
  if (story.not_run > 0) p << " (" << story.not_run << " could not run: the lab failed, not the lock)";
  if (!story.baseline.empty()) {
    // A baseline run that could not run counts against the kill, but it did not fail.
    const int base_failed = story.baseline_failures - story.baseline_not_run;
    p << "; the same scenario on " << story.baseline;
    if (base_failed > 0)
      p << " failed in " << base_failed << " of " << story.reruns;
    else
      p << " did not fail";
    if (story.baseline_not_run > 0)
      p << (base_failed > 0 ? " and " : ", but ") << story.baseline_not_run << " of its runs could not run";
  }
  p << ".";
  if (!story.strengthened.empty()) {
    p << " Its windows were repeated to replay it (" << story.strengthened
      << "): without that it failed in only " << story.strengthened_from << " of "
      << kReproductionReruns << ".";
  }
  return p.str();
}

nlohmann::ordered_json HuntJson(const HuntStory& s) {
  nlohmann::ordered_json j;
  j["lock"] = s.lock;
  j["baseline"] =
      s.baseline.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.baseline);
  j["seed"] = s.seed;
  j["locklab_version"] = {{"version", LocklabVersion()}, {"revision", LocklabRevision()}};
  j["ttl_ms"] = s.ttl.count();
  nlohmann::ordered_json ttls = nlohmann::ordered_json::array();
  for (const Millis t : s.ttls) ttls.push_back(t.count());
  j["ttls_ms"] = ttls;  // drawn per scenario from these; empty: every scenario has ttl_ms
  j["faults"] = s.faults;
  j["budget_s"] = s.budget_s;
  j["trials"] = s.trials;
  j["untrusted_violations"] = s.untrusted;
  j["invalid_draws"] = s.invalid_draws;
  j["interrupted"] = s.interrupted;
  j["shard"] = s.shard_count > 1 ? nlohmann::ordered_json{{"index", s.shard_index}, {"count", s.shard_count}}
                                 : nlohmann::ordered_json();
  j["guide"] = s.guided ? nlohmann::ordered_json{{"kept", s.guide_kept}, {"mutations", s.guide_mutations}}
                        : nlohmann::ordered_json();
  nlohmann::ordered_json found = nlohmann::ordered_json::array();
  for (const auto& f : s.found) {
    found.push_back({{"scenario", "found/" + f.options.name + ".toml"},
                     {"run_dir", f.run_dir},
                     {"at_s", f.at_s},
                     {"faults", FaultIdList(f.options)},
                     {"kinds", FailureKindNames(f.kinds)},
                     {"counted", !f.baseline_failed},
                     {"fate", FindFateName(f.fate)},
                     {"why", f.why}});
  }
  j["found"] = found;
  // What the hunt could not do, and how it ran (hunt_story.h).
  nlohmann::ordered_json why = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.not_run_why) why[reason] = n;
  j["not_run"] = {{"runs", s.runs_not_run},
                  {"retried", s.runs_retried},
                  {"scenarios", s.scenarios_not_run},
                  {"why", why}};
  j["concurrency"] = {{"jobs", s.jobs}, {"lowest", s.lowest_jobs}, {"changes", s.concurrency_changes}};
  j["undecided"] = s.undecided.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.undecided);
  j["budget_cut"] = s.budget_cut.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.budget_cut);
  j["known"] = s.known_sources.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.known_sources);
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& r : s.runs) {
    runs.push_back({{"name", r.name}, {"phase", r.phase}, {"start_s", r.start_s}, {"end_s", r.end_s}, {"outcome", r.outcome}});
  }
  j["runs"] = runs;
  double first = -1;
  for (const auto& f : s.found) {
    if (!f.baseline_failed && (first < 0 || f.at_s < first)) first = f.at_s;
  }
  j["time_to_first_s"] = first < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(first);
  j["search_s"] = s.search_s;
  j["shrink_s"] = s.shrink_s;
  j["elapsed_s"] = s.elapsed_s;
  nlohmann::ordered_json tried = nlohmann::ordered_json::array();
  for (const auto& t : s.tried) {
    tried.push_back({{"step", t.what},
                     {"failed", t.failed},
                     {"reruns", t.reruns},
                     {"baseline_failed", t.baseline_failed()}});
  }
  j["shrink_tried"] = tried;
  j["shrink_steps"] = s.KeptSteps();
  j["undone_steps"] = s.undone;
  nlohmann::ordered_json reproductions = nlohmann::ordered_json::array();
  for (const auto& t : s.reproductions) {
    reproductions.push_back({{"scenario", t.what},
                             {"failed", t.failed},
                             {"reruns", t.reruns},
                             {"baseline_failed", t.baseline_failed()},
                             {"baseline_failures", t.baseline_failures},
                             {"not_run", t.not_run},
                             {"baseline_not_run", t.baseline_not_run}});
  }
  j["reproductions"] = reproductions;
  nlohmann::ordered_json shrunk = nlohmann::ordered_json::array();
  for (const auto& f : s.shrunk) {
    shrunk.push_back({{"found", f.found},
                      {"at_s", f.at_s},
                      {"reproduced", f.told.failed},
                      {"reruns", f.told.reruns},
                      {"baseline_failures", f.told.baseline_failures},
                      {"reproduces", f.reproduced()}});
  }
  j["shrunk"] = shrunk;
  if (s.minimal) {
    j["minimal"] = {{"scenario", "minimal.toml"},
                    {"found", s.minimal_from},
                    {"found_at_s", s.minimal_from_at_s},
                    {"faults", FaultIdList(*s.minimal)},
                    {"kinds", FailureKindNames(s.kinds)},
                    {"reproduced", s.reproduced},
                    {"reruns", s.reruns},
                    {"baseline_failed", s.baseline_failures > 0},
                    {"baseline_failures", s.baseline_failures},
                    {"not_run", s.not_run},
                    {"baseline_not_run", s.baseline_not_run},
                    {"strengthened", s.strengthened.empty() ? nlohmann::ordered_json()
                                                            : nlohmann::ordered_json(s.strengthened)},
                    {"failing_run", s.failing_run}};
    // minimal.toml's [expect] (MinimalReplay): the replay it asks for, or why it has none.
    const std::optional<ReplayPlan> plan = MinimalReplay(s);
    j["minimal"]["regression"] =
        plan ? nlohmann::ordered_json{{"trials", plan->trials},
                                      {"violated_at_least", plan->at_least},
                                      {"rate_lower_bound", plan->rate_low},
                                      {"pass_probability", plan->pass_probability},
                                      {"replay_trials_s", plan->trials * static_cast<double>(s.minimal->duration.count()) / 1000.0},
                                      {"corpus", MinimalIsRegression(s)}}
             : nlohmann::ordered_json();
    j["minimal"]["regression_note"] = DescribeMinimalReplay(s);
  } else {
    j["minimal"] = nullptr;
  }
  j["narrative"] = Narrative(s);
  return j;
}

std::string DescribeTtls(const HuntStory& s) {
  if (s.ttls.empty()) return "TTL " + std::to_string(s.ttl.count()) + " ms";
  std::string out = "TTL drawn per scenario: ";
  for (size_t i = 0; i < s.ttls.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == s.ttls.size() ? " or " : ", ") + std::to_string(s.ttls[i].count());
  }
  return out + " ms";
}

std::string HuntSummary(const HuntStory& s, const std::string& dir) {
  std::ostringstream out;
  const int counted = s.Counted();
  out << "\nhunt: " << s.trials << " trials in " << Fixed(s.elapsed_s, 0) << " s ("
      << s.trials - s.runs_not_run << " ran, " << s.runs_not_run << " could not run";
  if (s.runs_retried > 0) out << ", " << s.runs_retried << " run again";
  out << "); " << counted << " new failing scenario" << (counted == 1 ? "" : "s") << " found";
  std::map<FindFate, int> fates;
  for (const auto& f : s.found) ++fates[f.fate];
  for (const auto& [fate, n] : fates) {
    if (fate == FindFate::kCounted) continue;
    out << "; " << n << " " << (fate == FindFate::kBaselineFailed ? "failed the baseline too"
                                : fate == FindFate::kNotConfirmed ? "not confirmed (did not reproduce)"
                                : fate == FindFate::kNotRun       ? "not confirmed (its runs could not run)"
                                                                  : "already known (--known)");
  }
  out << "\n";
  for (const auto& f : s.found) {
    if (f.fate == FindFate::kKnown) out << "known: found/" << f.options.name << ".toml: " << f.why << "\n";
  }
  if (!s.not_run_why.empty()) {
    out << "not run: ";
    for (size_t i = 0; i < s.not_run_why.size() && i < 3; ++i) {
      out << (i ? "; " : "") << s.not_run_why[i].second << " x " << s.not_run_why[i].first;
    }
    out << "\n";
  }
  if (!s.concurrency_changes.empty()) {
    out << "concurrency: " << s.jobs << " trials at a time, as few as " << s.lowest_jobs
        << " while the machine was overloaded (" << s.concurrency_changes.size() << " changes; hunt.json)\n";
  }
  if (!s.budget_cut.empty()) out << "budget: it ended " << s.budget_cut << "\n";
  if (s.minimal) {
    out << "minimal: " << dir << "/minimal.toml (" << s.minimal->faults.size() << " fault"
        << (s.minimal->faults.size() == 1 ? "" : "s") << ", "
        << s.KeptSteps().size() << " shrink steps; failed in "
        << s.reproduced << " of " << s.reruns << " reruns)\n";
    out << Narrative(s) << "\n";
    out << DescribeMinimalReplay(s) << "\n";
  } else if (counted == 0 && s.undecided.empty()) {
    out << (s.Known() > 0 ? "no new failure within the budget (only known ones): this is not a proof that the lock is safe\n"
                          : "no failure within the budget: this is not a proof that the lock is safe\n");
  }
  if (!s.undecided.empty()) out << "undecided: " << s.undecided << "\n";
  if (s.guided && s.guide_mutations > 0) {
    out << "guide: " << s.guide_mutations << " scenarios built on the " << s.guide_kept
        << " kept for showing something new or coming close\n";
  }
  out << "hunt: " << dir << "/hunt.md (hunt.json, found/, trials/)\n";
  return out.str();
}

std::optional<ReplayPlan> MinimalReplay(const HuntStory& s) {
  if (!s.minimal || s.reruns <= 0) return std::nullopt;
  return ReplayExpectation(s.reproduced, s.reruns);
}

std::string DescribeMinimalReplay(const HuntStory& s) {
  if (!s.minimal) return "";
  const std::optional<ReplayPlan> plan = MinimalReplay(s);
  const std::string measured = std::to_string(s.reproduced) + " of " + std::to_string(s.reruns) + " reruns";
  if (s.reruns <= 0) {
    return "not a regression yet: minimal.toml was not rerun (" +
           (s.budget_cut.empty() ? std::string("no rerun could run") : "the budget ended " + s.budget_cut) +
           "), so it has no [expect]";
  }
  if (!plan) {
    return "not a regression: minimal.toml failed in " + measured + "; at " +
           Fixed(100 * kRateBoundConfidence, 0) + "% confidence its rate may be as low as " +
           Fixed(ClopperPearsonLower(s.reproduced, s.reruns, kRateBoundConfidence), 3) +
           ", and no replay of up to " + std::to_string(kMaxReplayTrials) +
           " trials would then fail with " + Fixed(100 * kReplayPassProbability, 0) +
           "% probability, so it has no [expect]";
  }
  const double trial_s = static_cast<double>(s.minimal->duration.count()) / 1000.0;
  return "regression: minimal.toml expects at least " + std::to_string(plan->at_least) + " of " +
         std::to_string(plan->trials) + " trials to fail (it failed in " + measured +
         "; a rate at its " + Fixed(100 * kRateBoundConfidence, 0) + "% lower bound, " +
         Fixed(plan->rate_low, 3) + ", meets that with probability " + Fixed(plan->pass_probability, 3) +
         "); a replay runs " + std::to_string(plan->trials) + " x " + Fixed(trial_s, 1) + " s = " +
         Fixed(plan->trials * trial_s, 0) + " s of trials, plus each trial's setup" +
         (!s.baseline.empty() && s.baseline_failures > 0 ? "; the baseline failed it too, so it is no kill"
                                                         : "");
}

// minimal.toml's text with the scenario named `name` (its runs go to runs/<name>/).
static std::string MinimalTomlNamed(const HuntStory& s, const std::string& dir, const std::string& name) {
  RunOptions m = *s.minimal;
  m.name = name;
  m.out_dir = "runs";
  const std::optional<ReplayPlan> plan = MinimalReplay(s);
  std::string head = "# Found and shrunk by `locklab hunt` (" + dir + "): failed in " +
                     std::to_string(s.reproduced) + " of " + std::to_string(s.reruns) + " reruns.\n";
  if (plan) {
    ExpectKinds(s.kinds.empty() ? FailureKindSet{FailureKind::kViolated} : s.kinds, &m);
    m.trials = plan->trials;
    m.expect_violated_at_least = plan->at_least;
    head += "# [expect]: every trial replays this seed; at least " + std::to_string(plan->at_least) +
            " of " + std::to_string(plan->trials) + " must fail (docs/hunt.md, Outputs).\n";
  } else {
    ExpectKinds({}, &m);
    m.trials = 1;
    head += "# No [expect]: too rare to be a regression (" + DescribeMinimalReplay(s).substr(std::string("not a regression: ").size()) + ").\n";
  }
  return head + ScenarioToToml(m);
}

std::string MinimalToml(const HuntStory& s, const std::string& dir) { return MinimalTomlNamed(s, dir, "minimal"); }

bool MinimalIsRegression(const HuntStory& s) {
  if (!s.minimal || !MinimalReplay(s)) return false;
  return s.reproduced >= kReproductionNeeded && s.baseline_failures == 0;
}

Status CopyToCorpus(const HuntStory& s, const std::string& hunt_dir, const std::string& corpus_dir,
                    std::string* path, bool* existed) {
  std::string name = LockDisplayName(s.minimal->lock) + "--" + FaultIds(*s.minimal);
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '+' && c != '.') c = '-';
  }
  const std::string toml = MinimalTomlNamed(s, hunt_dir, name);  // runs/<name>/, not runs/minimal/
  // The name's hash: the scenario itself (FNV-1a of its lines that are not comments), so the
  // hunt directory in the first comment does not make a second file of the same scenario.
  uint64_t hash = 1469598103934665603ull;
  std::istringstream lines(toml);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '#') continue;
    for (char c : line + "\n") {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%08llx", static_cast<unsigned long long>(hash & 0xffffffffull));
  *path = corpus_dir + "/" + name + "--" + hex + ".toml";
  struct stat st;
  *existed = stat(path->c_str(), &st) == 0;
  if (*existed) return Status::Ok();
  if (Status m = MakeDirs(corpus_dir); !m.ok()) return m;
  return WriteFile(*path, toml);
}

Status WriteHuntOutputs(const HuntStory& s, const std::string& dir) {
  if (s.minimal) {
    if (Status w = WriteFile(dir + "/minimal.toml", MinimalToml(s, dir)); !w.ok()) return w;
    if (Status w = WriteFile(dir + "/narrative.md", Narrative(s) + "\n"); !w.ok()) return w;
  }
  if (Status w = WriteFile(dir + "/hunt.json", HuntJson(s).dump(2) + "\n"); !w.ok()) return w;
  std::ostringstream md;
  md << "# hunt: " << s.lock << "\n\n"
     << "Seed " << s.seed << ", " << DescribeTtls(s) << ", faults " << Join(s.faults, ", ")
     << (s.baseline.empty()
             ? ""
             : "; counted only when " + s.baseline + " does not fail the same scenario")
     << ".\n\n"
     << (s.shard_count > 1 ? "Shard " + std::to_string(s.shard_index) + " of " + std::to_string(s.shard_count) +
                                  ": every " + std::to_string(s.shard_count) + "th of the seed's draws.\n\n"
                            : std::string())
     << s.trials << " trials in " << Fixed(s.elapsed_s, 0) << " s (search " << Fixed(s.search_s, 0)
     << " s, shrink " << Fixed(s.shrink_s, 0) << " s; budget " << Fixed(s.budget_s, 0) << " s)"
     << (s.guided ? "; " + std::to_string(s.guide_mutations) + " scenarios built on the " +
                        std::to_string(s.guide_kept) + " the guide kept"
                  : std::string("; no guide"))
     << ".\n\n";
  md << "## What ran\n\n"
     << s.trials - s.runs_not_run << " of " << s.trials << " trial runs ran; " << s.runs_not_run
     << " could not run (the lab's failure, not the lock's: each was run again, up to twice, and "
     << s.scenarios_not_run << " scenario" << (s.scenarios_not_run == 1 ? "" : "s") << " never ran).\n";
  for (const auto& [reason, n] : s.not_run_why) md << "- " << n << " x " << reason << "\n";
  md << "\nTrials at a time: " << s.jobs;
  if (s.lowest_jobs < s.jobs) md << ", lowered to as few as " << s.lowest_jobs << " while the machine was overloaded";
  md << ".\n";
  for (const auto& c : s.concurrency_changes) md << "- " << c << "\n";
  if (!s.budget_cut.empty()) md << "\nThe budget ended " << s.budget_cut << ".\n";
  if (!s.known_sources.empty()) md << "\nKnown failures (--known): " << s.known_sources << ".\n";
  if (!s.undecided.empty()) md << "\n**Undecided:** " << s.undecided << "\n";
  md << "\n## Failing scenarios found\n\n";
  if (s.found.empty()) md << "None within the budget (not a proof that the lock is safe).\n";
  for (const auto& f : s.found) {
    const std::string fate = FateText(f);
    md << "- `found/" << f.options.name << ".toml` at " << Fixed(f.at_s, 0)
       << " s: " << (f.options.faults.empty() ? std::string("no fault") : Join(FaultIdList(f.options), " + "))
       << (fate.empty() ? "" : " (" + fate + ")") << "\n";
  }
  if (s.shrunk.size() > 1) {
    md << "\n## Finds shrunk\n\nA find whose minimal scenario did not reproduce ("
       << kReproductionNeeded << " of " << kReproductionReruns
       << " reruns, the baseline failing none) is set aside and the search goes on.\n\n";
    for (const auto& f : s.shrunk) {
      md << "- `" << f.found << "` (found at " << Fixed(f.at_s, 0) << " s): failed "
         << f.told.failed << " of " << f.told.reruns;
      if (!s.baseline.empty()) md << ", the baseline " << f.told.baseline_failures << " of " << f.told.reruns;
      md << (f.found == s.minimal_from ? " (told below)" : "") << "\n";
    }
  }
  if (s.minimal) {
    md << "\n## Shrinking `" << s.minimal_from << "`\n\n";
    for (const auto& t : s.tried) {
      md << "- " << t.what << ": failed " << t.failed << " of " << t.reruns
         << (t.baseline_failed() ? ", baseline failed" : "") << "\n";
    }
    const std::vector<std::string> kept = s.KeptSteps();
    md << "\nSteps kept:" << (kept.empty() ? " none" : "") << "\n\n";
    for (size_t i = 0; i < kept.size(); ++i) md << i + 1 << ". " << kept[i] << "\n";
    if (s.undone > 0) {
      md << "\nThe last " << s.undone << " step" << (s.undone == 1 ? " was" : "s were")
         << " undone: the scenario after " << (s.undone == 1 ? "it" : "them")
         << " did not fail " << kReproductionNeeded << " of " << kReproductionReruns
         << " reruns with a baseline that failed none.\n";
    }
    md << "\n## Reproducing (" << kReproductionReruns << " reruns each)\n\n";
    for (const auto& t : s.reproductions) {
      md << "- " << t.what << ": failed " << t.failed << " of " << t.reruns;
      if (!s.baseline.empty()) md << ", the baseline " << t.baseline_failures << " of " << t.reruns;
      md << "\n";
    }
    md << "\n## Minimal scenario (failed in " << s.reproduced << " of " << s.reruns
       << " reruns)\n\n"
       << Narrative(s) << "\n\n" << DescribeMinimalReplay(s) << ".\n\n```toml\n"
       << MinimalToml(s, dir) << "```\n";
  }
  return WriteFile(dir + "/hunt.md", md.str());
}

}  // namespace locklab::harness
