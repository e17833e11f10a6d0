// Clocks. Two kinds of time exist in the lab and they must never be mixed up:
//
// * MonotonicNow(): CLOCK_MONOTONIC read with the raw clock_gettime syscall, so libfaketime
//   (which interposes the libc function) cannot fake it. Every history timestamp uses it;
//   all processes of a run share it, so their events merge on one timeline even while their
//   wall clocks are skewed (docs/design.md 2).
// * LockClock: the time a lock algorithm itself measures (elapsed time, validity). It goes
//   through libc, so a client clock fault (libfaketime in the client process) is seen by the
//   algorithm the way a production process would see it. Monotonic or wall, by choice.
//
// All functions are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace locklab {

using Nanos = std::chrono::nanoseconds;
using Millis = std::chrono::milliseconds;

// CLOCK_MONOTONIC via the raw syscall: immune to libfaketime.
Nanos MonotonicNow();

// The real CLOCK_REALTIME in seconds since the epoch, via the raw syscall: what a faked
// clock is compared with (a fault's evidence that the fake took).
double RealClockSeconds();

// Time as the lock algorithm sees it (libc, so libfaketime applies in faulted clients).
enum class LockClockKind { kMonotonic, kWall };
Nanos LockClockNow(LockClockKind kind);

// Sleeps for `d` (restarting after signals, e.g. after a SIGSTOP/SIGCONT pair the sleep
// simply continues until its monotonic end).
void SleepFor(Nanos d);

inline double ToMillis(Nanos d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace locklab
