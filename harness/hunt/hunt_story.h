// What a hunt found and did, and how it is told: hunt.json, hunt.md, minimal.toml,
// narrative.md and the terminal summary (hunt.h says what each holds).
//
// The narrative is one paragraph a reader can check against the report: the workload, each
// fault of the minimal scenario in time order with its length relative to the TTL, the
// first violation of a failing rerun (who held what, for how long, under which fault
// windows), and how often it reproduced. Everything it says comes from the scenario and the
// rerun's results.json. Pure apart from WriteHuntOutputs; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "harness/scenario/expect_rate.h"
#include "harness/scenario/failure_kinds.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

// The kinds of failure (FailureKind, FailureKinds, ExpectKinds): harness/scenario/failure_kinds.h.

// A minimal scenario is told as reproducing when it fails at least kReproductionNeeded of
// kReproductionReruns reruns and the baseline (with --baseline) fails none of as many.
inline constexpr int kReproductionReruns = 10;
inline constexpr int kReproductionNeeded = 8;

// What became of a find: counted (a new failure), or why it was not. Told apart in hunt.md,
// hunt.json ("fate") and the summary: a find whose confirmation never ran refutes nothing.
enum class FindFate {
  kCounted,         // a new failure (confirmed against the baseline, if any)
  kBaselineFailed,  // the baseline failed the same scenario too
  kNotConfirmed,    // its confirmation ran and did not reproduce the difference
  kNotRun,          // its confirmation could not run (the lab, not the lock), or the budget ended first
  kKnown,           // --known accounts for it: an expectation or a corpus scenario
};
// hunt.json's word for each: "counted", "baseline-failed", "not-confirmed", "not-run", "known".
const char* FindFateName(FindFate fate);

struct FoundScenario {
  RunOptions options;
  std::string run_dir;
  double at_s = 0;  // seconds into the hunt when it was judged: its trial's end, or its confirmation's
  bool baseline_failed = false;  // not counted (fate says why; the name is hunt.json's history)
  FindFate fate = FindFate::kCounted;
  std::string why;  // the fate's one line: the --known source, why nothing ran
  // The kinds it showed (FailureKinds); with a counted baseline difference, only those the
  // baseline's run did not show.
  FailureKindSet kinds;
  bool shrunk = false;  // its shrinking began (a counted find, one at a time)
};

struct ShrinkTry {
  std::string what;
  int failed = 0, reruns = 0;
  // Of the baseline's runs: one for a shrink step (when the step would be kept), as many as
  // `reruns` for a reproduction.
  int baseline_failures = 0;
  // Runs that could not start or finish (the lab failed, not the lock): of the reruns
  // (counted neither as failed nor as passed) and of the baseline's (counted in
  // baseline_failures, since nothing was seen to pass there, but told apart).
  int not_run = 0, baseline_not_run = 0;
  bool baseline_failed() const { return baseline_failures > 0; }
};

// One counted find shrunk and rerun: which, and how its told reproduction went.
struct ShrunkFind {
  std::string found;  // "found/t0012.toml"
  double at_s = 0;    // when the search found it
  ShrinkTry told;     // its told reproduction (ToldReproduction)
  // Whether that reproduction makes a kill: kReproductionNeeded of kReproductionReruns, the
  // baseline failing none.
  bool reproduced() const {
    return told.failed >= kReproductionNeeded && !told.baseline_failed();
  }
};

struct HuntStory {
  std::string lock, baseline;
  uint64_t seed = 0;
  Millis ttl{0};
  std::vector<Millis> ttls;  // drawn per scenario from these (no --ttl); empty: every one is `ttl`
  std::vector<std::string> faults;  // the space's fault ids
  // search_s and shrink_s: over the whole hunt (every find shrunk, --keep-searching).
  double budget_s = 0, search_s = 0, shrink_s = 0, elapsed_s = 0;
  int64_t trials = 0, untrusted = 0, invalid_draws = 0;
  bool interrupted = false;
  // What the hunt could not do (the lab's failures, never the lock's): trial runs that could
  // not run (no hello, a lab server that failed, a child that exited 64+), of them those run
  // again, the scenarios that never ran at all, and why, by reason, most frequent first.
  int64_t runs_not_run = 0, runs_retried = 0, scenarios_not_run = 0;
  std::vector<std::pair<std::string, int64_t>> not_run_why;
  // Trials at a time: --jobs, the fewest the hunt ran at while the machine was overloaded,
  // and each change ("at 41 s: 2 -> 1 (t0012: no hello line ...)").
  int jobs = 0, lowest_jobs = 0;
  std::vector<std::string> concurrency_changes;
  // Why the hunt is undecided (exit 2), one line; "" when it is not. And what the budget cut
  // short ("the reproduction, after 6 of 10 reruns"), "" when nothing.
  std::string undecided, budget_cut;
  std::string known_sources;  // --known: what was read (KnownFailures::Describe), "" without
  // Every child run, in start order: when it ran (seconds into the hunt) and how it ended,
  // so that a reader can check the concurrency bound.
  struct RunSpan {
    std::string name, phase;
    double start_s = 0, end_s = 0;
    std::string outcome;  // "ran", or "not run: WHY"
  };
  std::vector<RunSpan> runs;
  // hunt --shard I/N: which slice of the seed's draws this hunt ran (1/1: all of them).
  int shard_index = 1, shard_count = 1;
  // The guide (hunt_guide.h): scenarios it kept, and search scenarios built on them.
  int64_t guide_kept = 0, guide_mutations = 0;
  bool guided = true;  // false: --no-guide
  std::vector<FoundScenario> found;
  // Every counted find shrunk, in order: the hunt shrinks the first; when its minimal does
  // not reproduce, it searches on (budget left) and shrinks the next, until one reproduces.
  std::vector<ShrunkFind> shrunk;

  // From here to the end: the shrinking and reproduction of the find the story tells (of
  // `shrunk`, the one that reproduced, else the one whose reproduction is best by
  // ToldReproduction); TellShrinkOf copies them.
  std::string minimal_from;  // "found/t0012.toml"
  double minimal_from_at_s = 0;
  std::vector<ShrinkTry> tried, steps;  // every candidate tried; the steps kept
  std::vector<RunOptions> chain;        // the found scenario, then each kept step
  std::optional<RunOptions> minimal;
  FailureKindSet kinds;  // what minimal.toml fails by (the kinds of the find it came from)
  int reproduced = 0, reruns = 0, undone = 0;
  std::vector<ShrinkTry> reproductions;  // every scenario rerun 10 times, in order
  std::string strengthened;   // minimal.toml's strengthening step (StrengthenCandidates), if any
  int strengthened_from = 0;  // the failures in 10 of the scenario it strengthened
  int baseline_failures = 0;  // of `reruns` runs of minimal.toml on the baseline
  int not_run = 0, baseline_not_run = 0;  // ShrinkTry::not_run of minimal.toml's reruns
  std::string failing_run;
  nlohmann::ordered_json failing_results;

  // The found scenarios that count (new failures: FindFate::kCounted).
  int Counted() const;
  // Those --known accounted for.
  int Known() const;
  // Copies the fields of the find `other` tells (minimal_from to the end) over this one's;
  // TellShrinkOf(HuntStory{}) clears them.
  void TellShrinkOf(const HuntStory& other);
  // The shrink steps kept and not undone, in order.
  std::vector<std::string> KeptSteps() const;
};

// Which reproduction the story tells, of those tried in order (the minimal scenario, then
// with the last kept steps undone, one more each, then strengthened): the one that failed
// most with a baseline that never failed; when none failed with a clean baseline, the most
// failures net of the baseline's; the simplest (earliest) of equals. Not the last tried: an
// undone step that failed less says nothing better. `tries` not empty.
size_t ToldReproduction(const std::vector<ShrinkTry>& tries);

// One sentence per fault: "At 300 ms, client-pause stops the client that reaches
// before-write for 1200 ms (2.4 x TTL)".
std::string DescribeFault(const faults::FaultOptions& f, Millis ttl);
// The paragraph of narrative.md.
std::string Narrative(const HuntStory& story);
// hunt.json's content.
nlohmann::ordered_json HuntJson(const HuntStory& story);
// "TTL 500 ms", or "TTL drawn per scenario: 500, 750 or 1250 ms".
std::string DescribeTtls(const HuntStory& story);
// The lines printed at the end.
std::string HuntSummary(const HuntStory& story, const std::string& dir);
// minimal.toml (with [expect]), narrative.md, hunt.json, hunt.md under `dir`.
Status WriteHuntOutputs(const HuntStory& story, const std::string& dir);

// The replay minimal.toml's [expect] asks for (expect_rate.h), from its told reproduction
// (story.reproduced of story.reruns): `trials` = N and `violated_at_least` = K, which a lock
// failing at the rate's 95% lower bound meets with 99% probability. None when the minimal
// reproduced too rarely for a replay of at most kMaxReplayTrials to promise that (2 or 3
// of 10): minimal.toml then has no [expect], and hunt.json, hunt.md and the summary say so.
std::optional<ReplayPlan> MinimalReplay(const HuntStory& story);
// One line about it: "regression: at least 1 of 4 trials ... (a replay runs 4 x 1.5 s)", or
// "not a regression: ...".
std::string DescribeMinimalReplay(const HuntStory& story);
// minimal.toml's text (`dir`: the hunt's directory, named in its first comment).
std::string MinimalToml(const HuntStory& story, const std::string& dir);
// Whether minimal.toml goes into a regression corpus (hunt --corpus): it reproduced (a kill:
// ShrunkFind::reproduced) and has a statistical [expect] (MinimalReplay).
bool MinimalIsRegression(const HuntStory& story);
// Copies minimal.toml (of the hunt in `hunt_dir`) into `corpus_dir` as
// <lock>--<faults>--<hash>.toml, named <lock>--<faults> inside (the hash is of the scenario
// without its comments, so the same scenario found twice has one name): `path` is the file,
// `existed` whether it was there already (then it is left as it is).
Status CopyToCorpus(const HuntStory& story, const std::string& hunt_dir, const std::string& corpus_dir,
                    std::string* path, bool* existed);

}  // namespace locklab::harness
