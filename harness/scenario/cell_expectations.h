// Cell expectations: what a matrix cell (lock x fault) must come out as, pinned in an
// expectation file (`locklab matrix --expect FILE`, what --write-expect writes, and a hunt's
// --known FILE). The format, the matching rule and the loader live here, below matrix/ and
// hunt/, so that both read one file one way. Pure apart from LoadExpectations (reads the
// file); thread-compatible.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace locklab::harness {

// Literature answers / pinned expectations: an expectation file is TOML, one [[cell]] per
// entry, in this shape (scenarios/matrix/expected.toml, or what --write-expect writes):
//
//   [[cell]]
//   lock = "driver:*"      # an exact lock id, or a glob: `*` matches any run of characters
//   fault = "*"            # an exact fault (column) id, or a glob
//   verdict = "S"          # S safe, V violated, L stuck; and/or
//   resource = "S"         # S or V: what the guarded resource saw (fenced locks)
//   violated_in = "3/3"    # optional, shown and kept, never judged: the violated trials /
//   stuck_in = "0/3"       #   trials (stuck_in: stuck ones) of the run that wrote the entry
//
// Which entry pins a cell: of the entries whose lock and fault patterns both match it, the
// most specific: first the one with more exact fields (exact lock and fault, then one exact,
// then none), then the one whose glob fields have more literal characters (those not `*`,
// summed over its glob fields: "driver:*" and "*-lua" beat "*"), and between entries equal on
// both the later in the file (as a repeated exact entry always did). A glob that matches no
// cell of a run is fine (one file serves many runs); an exact lock or fault id that the lab
// does not know is refused, as is any other field or table. A file without [[cell]] pins
// nothing (what --write-expect writes when no cell was judged).
//
// Lock ids compare in their one spelling (CanonicalLockId): `driver:./x`, `driver:x` and an
// absolute path of one file are one id, and --write-expect writes that spelling (relative to
// the driver's repository), so a file pins the same cells from any working directory and in
// any checkout. A glob matches either the id as the run spells it or its canonical one. An
// entry that matches no cell of the run is an error (UnmatchedExpectation) unless it names
// cells of the default matrix that this run did not select: a typo must not disarm a gate.
struct Expectation {
  std::string lock, fault;        // patterns: an exact id, or a glob with `*`
  std::string lock_key;           // an exact lock's CanonicalLockId; a glob's own text
  std::string verdict, resource;  // "" when the entry does not pin it
  std::string violated_in, stuck_in;  // "N/M" or "": informational
  std::string origin;             // "FILE:LINE" of its [[cell]]
  int lock_line = 0;              // the line of its lock field
};
using Expectations = std::vector<Expectation>;  // in file order

// `*` matches any run of characters (none included); every other character only itself.
bool GlobMatches(std::string_view pattern, std::string_view id);

// The entry that pins the cell `lock` x `fault` (the rule above), nullptr when none matches.
const Expectation* FindExpectation(const Expectations& expectations, const std::string& lock,
                                   const std::string& fault);

// Appends the file's entries to *out. A file that cannot be opened (or is a directory), does
// not parse, has a top-level key other than `cell`, an entry without lock and fault or
// without verdict and resource, an unknown field or letter, an exact lock id unknown to the
// registry (locks::FindLock) or an exact fault id not in `known_faults` is Status::BadInput
// (exit 65), one line naming the file, line and field.
Status LoadExpectations(const std::string& path, const std::set<std::string>& known_faults,
                        Expectations* out);

// Whether entry `e` matches the cell `lock` x `fault`; `canonical` is CanonicalLockId(lock),
// computed once by a caller that asks of one lock many times (each is file-system work).
bool ExpectationMatches(const Expectation& e, const std::string& lock, const std::string& canonical,
                        const std::string& fault);

}  // namespace locklab::harness
