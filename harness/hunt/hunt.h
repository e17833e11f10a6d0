// `locklab hunt`: search one lock's fault space for a failure, shrink the first find to a
// minimal scenario that replays it, and rerun that 10 times for its reproduction rate; a find
// whose minimal does not reproduce is set aside and the search goes on for the next. With a
// baseline lock, only what fails the lock and not the baseline counts. The rules are stated
// here and in docs/hunt.md; what they were measured on is in bench/results/.
//
//   locklab hunt --lock L [--budget 10m] [--baseline LOCK] ...   (flags: locklab hunt --help)
//
// Budget and admission: --budget bounds the whole command (no run starts that would end past
// t0 + budget: its duration plus the median cost of a run beyond it; the shrink leaves the
// reproduction its share); the first line says when it ends. --jobs bounds every run going,
// of every phase; the hunt runs fewer while the machine is overloaded (a run that could not
// run, or whose lab ran late, lowers it by one; 2 x jobs on time raise it). A run that could
// not run (no hello, a lab that failed, exit 64+) is the lab's failure: run again (up to
// twice), counted apart, never a failure, a pass or "did not reproduce" (docs/hunt.md).
//
// Search: scenarios drawn from the lock's space (hunt_space.h), each run as an ordinary
// child `locklab run` (child_runs.h) in a rolling pool (a new trial starts as soon as one
// ends), until one fails or the budget is spent. A trial fails when its
// verdict is violated (or, with --liveness, it was stuck); a violation seen while the lab
// itself ran late (results.json lab_lag.timing_trusted false) is kept but not counted, since
// the machine, not the lock, may have paused the clients. With --baseline, a failure counts
// only when the same scenario (same seed) run on the baseline lock does not fail, and the
// difference is confirmed (3 of 4 reruns fail, the baseline fails none of 3 more runs): what
// a mutant does that its reference does not. Each fault kind of a scenario that both locks
// fail is then drawn less often (SearchSpace::weights), so the search moves to where they
// differ; the draws then depend on the trials' outcomes as well as the seed, so a seed
// replays a baseline hunt's draws only while its trials end the same way (every trial's
// scenario file replays exactly, as always).
//
// Guide: after the first pass, half the search's scenarios are mutations of earlier ones that
// showed something new or came closer to failing (hunt_guide.h, checker/trial_signals.h); the other
// half are fresh draws, the seed's in the same order. --no-guide draws every scenario fresh.
//
// Shrink: candidates one step simpler (hunt_shrink.h), each run up to `reruns` times
// (default 4, `jobs` at a time, stopping once decided); a step is kept when at least three
// quarters of them fail (and, with --baseline, one run of the baseline then does not), until
// no step is kept or the shrink budget is spent (three of four, not two of three, so that a
// minimal seldom needs steps undone to fail 8 of 10 reruns). The minimal scenario is then
// rerun 10 times; when it fails fewer than 8 times the last kept steps are undone, up to 3,
// until one that does; the story tells the one that failed most (ToldReproduction).
// A find whose told reproduction still falls short (or fails the baseline) is set aside and
// the search goes on with the budget left, until one reproduces; the story tells the best
// (hunt.json "shrunk", "minimal.found"). Each find shrunk gets its own --shrink-budget, within
// the budget; past the budget no other find starts shrinking. With --known, a find that an
// expectation file or a corpus already accounts for (hunt_known.h) is recorded as known and
// the search goes on, as for one the baseline fails too.
//
// --shard I/N (with --seed) runs every Nth of the seed's draws, from the Ith (the plain pass,
// the first pass and the search numbered once for the whole hunt; trial names are the draws'
// indices), each shard shrinking and rerunning its own finds; `locklab merge` joins the
// shards (harness/cli/hunt_merge.h).
//
// --no-shrink stops after the search (for time-to-find measurements: bench/hunt_timing).
// --corpus DIR: a minimal.toml that reproduced (a kill) with a statistical [expect] is
// copied into DIR (hunt_story.h CopyToCorpus), for `locklab replay DIR`.
//
// Outputs, in the run store (runs/hunt-<lock>/<time>-<seed>/): trials/ (every scenario and
// run), found/ (every failing scenario found, with its [expect]), shrink/ (the candidates'
// runs; a later find's named after it, shrink/t0012-s1-1.toml), reruns/ (the
// reproduction), minimal.toml (with a statistical [expect] from its reproduction rate, or
// none when it reproduced too rarely: hunt_story.h MinimalReplay), narrative.md (the
// schedule in a paragraph), hunt.json and hunt.md (the summary, the shrink steps, the
// reproduction rate, the time to the first find), failing-run (a link to one failing rerun,
// with its HTML report).
//
// Exit codes: 1 a new failure was found, 0 none within the budget (not a proof of safety) or
// only known ones, 2 undecided (interrupted; more than a fifth of the trials could not run
// even run again; every confirmation of a find could not run; the budget shorter than one
// trial), 64+ bad flags, 69 not one trial could run.
// Thread safety: runs on the main thread and reaps any child of the process.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunHuntCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
