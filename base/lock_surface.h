// LockSurface: what a lock under test offers the lab's faults to act on, and so what a fault
// needs of a lock. It is the one vocabulary locks/ (SurfacesOf, locks/backend.h) and faults/
// (FaultTraits::needs) share without naming each other (docs/design.md 1): a fault applies
// to a lock when the lock offers every surface the fault needs (faults::FaultFits).
// Adding a surface is one enumerator and one row of LockSurfaceWord.
// Values and constexpr functions only; thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace locklab {

enum class LockSurface : uint8_t {
  kClientProcess,     // client processes the lab stops, slows and kills (every lock)
  kServerProcess,     // lock servers the lab starts, stops, restarts and cuts off (every lock)
  kRequestStream,     // the fault proxy frames the lock's requests and replies (Redis's
                      // RESP, ZooKeeper's packets): it can hold one back or lose a reply
                      // (Redis, ZooKeeper)
  kWallClockExpiry,   // leases expire by wall clocks libfaketime moves: the server's and
                      // the client's (Redis)
  kReplicaFailover,   // a replica and sentinels that promote it (Redis)
  kServerMemoryLimit, // a memory limit the lab can shrink at run time (Redis's maxmemory)
};
inline constexpr int kLockSurfaceCount = 6;

// A set of surfaces.
class LockSurfaces {
 public:
  constexpr LockSurfaces() = default;
  constexpr LockSurfaces(std::initializer_list<LockSurface> surfaces) {
    for (LockSurface s : surfaces) bits_ |= Bit(s);
  }
  static constexpr LockSurfaces All() {
    LockSurfaces all;
    all.bits_ = (1u << kLockSurfaceCount) - 1;
    return all;
  }
  constexpr bool Has(LockSurface s) const { return (bits_ & Bit(s)) != 0; }
  // Whether every surface of `needed` is here.
  constexpr bool Covers(LockSurfaces needed) const { return (needed.bits_ & ~bits_) == 0; }
  // The surfaces here that `other` lacks.
  constexpr LockSurfaces Minus(LockSurfaces other) const {
    LockSurfaces out;
    out.bits_ = bits_ & ~other.bits_;
    return out;
  }
  constexpr bool operator==(const LockSurfaces& o) const { return bits_ == o.bits_; }

 private:
  static constexpr uint32_t Bit(LockSurface s) { return 1u << static_cast<int>(s); }
  uint32_t bits_ = 0;
};

// The surface's word, as `locklab list --json` prints it ("client-process", ...).
inline const char* LockSurfaceWord(LockSurface s) {
  switch (s) {
    case LockSurface::kClientProcess: return "client-process";
    case LockSurface::kServerProcess: return "server-process";
    case LockSurface::kRequestStream: return "request-stream";
    case LockSurface::kWallClockExpiry: return "wall-clock-expiry";
    case LockSurface::kReplicaFailover: return "replica-failover";
    case LockSurface::kServerMemoryLimit: return "server-memory-limit";
  }
  return "?";
}

// The words of a set, in enumerator order.
inline std::vector<std::string> LockSurfaceWords(LockSurfaces set) {
  std::vector<std::string> out;
  for (int i = 0; i < kLockSurfaceCount; ++i) {
    const auto s = static_cast<LockSurface>(i);
    if (set.Has(s)) out.emplace_back(LockSurfaceWord(s));
  }
  return out;
}

}  // namespace locklab
