// `locklab replay DIR|FILE... [--out DIR] [--jobs N]`: a regression corpus replayed.
//
// Every *.toml under each DIR (recursively, in sorted order) and each FILE is a scenario
// with an [expect]; a corpus folder holds only scenarios, so a file there that does not read
// as one, or a scenario without [expect] (a corpus entry must say what it expects), is bad
// input. Every file is read and checked (ValidateRunOptions, CheckEndpoints) before any
// trial runs: a typo in the ninth scenario refuses the replay with one line naming its file,
// line and field (exit 64 or 65), not after eight scenarios ran.
//
// Each scenario's trials run as child `locklab run`s (child_runs.h), `--jobs` at a time
// (default 2), trials of different scenarios side by side (round robin: every scenario's
// first trial before any second, so early decisions save the most); each trial is the scenario with
// trials = 1, its seed as `locklab run` would give it (seed + t, or the scenario's one seed
// for a statistical [expect]; a scenario without a seed gets one drawn here), and no
// [expect]: the replay judges each results.json against the scenario's [expect]
// (ExpectationTally, run_options.h). A scenario is decided as soon as its trials decide it
// (at least K failed; too few left to reach K; an exact expectation missed once), and its
// trials not yet started then do not run.
//
// Output: one line per scenario as it is decided ("replay: met|NOT met|undecided|error
// FILE: ..., runs: DIR"), a summary line naming every regression, and under the output
// directory (default runs/replay/<time>-0/, --out DIR for another root) one folder per
// scenario with its trials' runs, and junit.xml (one testcase per scenario, a regression a
// <failure> with its reason).
//
// Exit codes (README, base/exit_code.h WorseRunExit): 64+ an error (bad input before
// anything ran; a trial the lab could not run, 69; a file not written, 70), else 1 when a
// scenario's expectation was not met, else 2 when one was not decided (interrupted), else 0.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

int RunReplayCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
