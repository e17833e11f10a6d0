// Matrix cells at another TTL: the cell scenarios (scenarios/matrix/<fault>.toml) are tuned
// at their own lock.ttl_ms (500 ms); a row that runs with another TTL (`locklab matrix --ttl
// MS`, or a lock driver whose hello declares "ttl_ms") gets every time of the scenario
// scaled by ttl / preset ttl, so that a pause still outlasts the TTL by the same factor and
// a hold is still the same fraction of it.
//
// Scaled: the run's duration_ms, the workload's hold_ms, think_ms and acquire_timeout_ms,
// each fault's first_at_ms, duration_ms and interval_ms, and every fault param whose name
// ends in _ms (delay_ms, kill_after_ms). Not scaled: retry and command timeouts (the
// network's times, not the lock's), clock offsets. The one rule: the factor is the run's TTL
// over the preset's own ttl_ms (500 ms for most; restart 3000 and failover 4000, whose
// times are written for those), for --ttl and a driver's hello alike. A run is capped at
// kMaxScaledRun, and an acquire timeout must leave room for two lock commands: a cell that
// cannot fit is not run (n/a), and says why.
//
// Locks that do not use the lab's TTL (db-row, pg-advisory, the articles' session locks:
// their LockInfo says "the lab --ttl is not used") are not scaled.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "base/clock.h"
#include "harness/scenario/run_options.h"
#include "locks/lock.h"

namespace locklab::harness {

// The longest run a scaled cell may have (10 minutes).
constexpr Millis kMaxScaledRun{600000};

// Whether the lock's TTL is the lab's --ttl (LockInfo::uses_lab_ttl).
bool UsesLabTtl(const locks::LockInfo& info);

// `preset` (tuned at preset.ttl) scaled to `ttl`: true with *out set (its ttl is `ttl`), or
// false with *why_not ("needs a 1200 s run (the preset's times x 60 for TTL 30000 ms), runs
// are capped at 600 s"). ttl == preset.ttl returns the preset unchanged.
bool ScaleToTtl(const RunOptions& preset, Millis ttl, RunOptions* out, std::string* why_not);

}  // namespace locklab::harness
