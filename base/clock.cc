#include "base/clock.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace locklab {

Nanos MonotonicNow() {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return Nanos(static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
}

double RealClockSeconds() {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Nanos LockClockNow(LockClockKind kind) {
  struct timespec ts;
  clock_gettime(kind == LockClockKind::kWall ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
  return Nanos(static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
}

void SleepFor(Nanos d) {
  if (d.count() <= 0) return;
  Nanos end = MonotonicNow() + d;
  for (;;) {
    Nanos left = end - MonotonicNow();
    if (left.count() <= 0) return;
    struct timespec ts;
    ts.tv_sec = left.count() / 1000000000LL;
    ts.tv_nsec = left.count() % 1000000000LL;
    // Raw syscall: libfaketime must not stretch or shrink the workload's sleeps.
    long rc = syscall(SYS_nanosleep, &ts, nullptr);
    if (rc == 0) return;
    if (errno != EINTR) return;
  }
}

}  // namespace locklab
