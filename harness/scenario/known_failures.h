// KnownFailures: the failures a team already accounts for (`locklab hunt --known FILE|DIR`),
// so that a hunt in CI fails only on what is new. Two sources, read once before the hunt:
//   an expectation file (harness/scenario/cell_expectations.h, what `matrix --write-expect` writes):
//     a cell of the hunt's lock pinned V accounts for a violation (and a broken resource,
//     unless the entry pins resource = "S") under that cell's fault; pinned L, for stuck;
//   scenario files with an [expect] of a failure (a corpus: a hunt's minimal.toml, a team's
//     own schedules): one of the hunt's lock accounts for its kinds under its set of faults.
// A find is known when some source covers every kind it showed and names a fault of the
// find (a corpus scenario: all of its faults are among the find's; no fault: only a `none`
// cell or a scenario without faults covers it). Lock ids compare canonically
// (CanonicalLockId). Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/scenario/failure_kinds.h"
#include "harness/scenario/cell_expectations.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

class KnownFailures {
 public:
  // Adds FILE (an expectation file when it holds [[cell]] tables, else a scenario file) or
  // every *.toml under DIR (an empty folder, or one holding only dotfiles, adds nothing).
  // A path that is not there is Status::Usage naming the flag; a file that does not read as
  // either kind is its BadInput (file, line and field), exit 65.
  Status Add(const std::string& path);
  // Why a failure of `lock` under `o`'s faults showing `kinds` is known, in one phrase
  // ("ci/expect.toml:12 pins driver:x.py x client-pause V"); "" when it is new.
  std::string Accounts(const std::string& lock, const RunOptions& o, const FailureKindSet& kinds) const;
  // "2 pinned cells, 1 scenario" for the hunt's first line.
  std::string Describe() const;
  bool empty() const { return cells_.empty() && scenarios_.empty(); }

 private:
  struct Scenario {
    std::string file, lock;  // lock: canonical
    std::vector<std::string> faults;
    FailureKindSet kinds;
  };
  Status AddFile(const std::string& path);
  Expectations cells_;
  std::vector<Scenario> scenarios_;
};

}  // namespace locklab::harness
