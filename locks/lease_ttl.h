#pragma once

// The lock's lease (its TTL, the key lifetime of PX / EXPIRE): the one bound and default
// that run, matrix, hunt, driver-check, scenario files (ttl_ms) and a driver's hello
// (ttl_ms) all use. A value outside [kMinLeaseTtl, kMaxLeaseTtl] is refused where it is
// read, with the reader's usual one-line error. Constants only; safe from any thread.

#include <chrono>

namespace locklab::locks {

inline constexpr std::chrono::milliseconds kMinLeaseTtl{1};
inline constexpr std::chrono::milliseconds kMaxLeaseTtl{std::chrono::hours(1)};
// The TTL of a run, a lock and a driver-check when nothing sets one (a hunt without --ttl
// draws its own per scenario: harness/hunt/hunt.cc).
inline constexpr std::chrono::milliseconds kDefaultLeaseTtl{1000};

inline constexpr bool LeaseTtlInRange(std::chrono::milliseconds ttl) {
  return ttl >= kMinLeaseTtl && ttl <= kMaxLeaseTtl;
}

}  // namespace locklab::locks
