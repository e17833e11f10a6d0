// Numbers from text: the one parser behind every flag, knob, scenario value and server
// reply the lab reads as a number.
//
// A number is the whole string in base 10: an optional '-' and digits for an integer (no
// spaces, no '+', no "0x", nothing after the last digit); for a double what strtod reads,
// finite. Out of range (and so overflow) is refused like junk is. A refused number has one
// wording everywhere, which callers prefix with where the text came from:
//   "run: flag --clients: expected an integer in 1..64, got 'soon'"
//   "s.toml:3: field 'lock.ttl_ms': expected an integer in 1..3600000, got 'soon'"
// A duration is a whole number and a unit: "500ms", "6s", "2m", "1h"; a bare number is
// milliseconds, for every time flag of every command (the unit scenario files' _ms keys
// use). Decimals ("1.5s"), signs and spaces are refused, with the whole-unit spelling
// offered where there is one ("write 1500ms?").
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace locklab {

inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// `text` as an integer in [lo, hi]; nullopt for anything else.
std::optional<int64_t> ParseInt(std::string_view text, int64_t lo = kInt64Min,
                                int64_t hi = kInt64Max);
// The same for the full unsigned range (seeds: a 64-bit random value passed as text).
std::optional<uint64_t> ParseUint64(std::string_view text);
// `text` as a finite double in [lo, hi]; nullopt for anything else.
std::optional<double> ParseDouble(std::string_view text, double lo, double hi);

// The wording of a refusal: "expected an integer in 1..64, got 'x'" ("an integer >= 1" when
// hi is kInt64Max), "expected a number in 0.5..2, got 'x'". `got` is echoed as written.
std::string ExpectedInteger(int64_t lo, int64_t hi, std::string_view got);
std::string ExpectedNumber(double lo, double hi, std::string_view got);

// ParseInt / ParseDouble with the refusal as Status::Usage(ExpectedInteger(...)), for
// callers that prefix the message and pass the status on.
Status ParseInt(std::string_view text, int64_t lo, int64_t hi, int64_t* out);
Status ParseDouble(std::string_view text, double lo, double hi, double* out);

// `text` as a duration (see above) in [lo, hi]. Refusals are one line, Status::Usage:
//   "expected a duration like 500ms, 6s, 2m or 1h (a bare number is milliseconds), got 'x'"
//   "expected a duration in 100ms..24h, got '50ms'"
//   "6 means 6 ms (a bare number is milliseconds), below the minimum 100ms; write 6s?"
//   "expected whole units, got '1.5s'; write 1500ms?"
// Overflow (more milliseconds than int64 holds) is out of range like any large value.
Status ParseDuration(std::string_view text, std::chrono::milliseconds lo,
                     std::chrono::milliseconds hi, std::chrono::milliseconds* out);
// A duration as its largest whole unit: "1500ms", "6s", "2m", "24h", "0ms".
std::string FormatDuration(std::chrono::milliseconds d);

// A shard "I/N" (matrix and hunt --shard): 1 <= I <= N <= 10000; false otherwise.
bool ParseShard(std::string_view text, int* index, int* count);

}  // namespace locklab
