// Test helpers: whether a process is gone (no such process, or a zombie: a killed grandchild
// lingers until init reaps it), and waiting for it, polling /proc every 5 ms.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <string>

#include "base/clock.h"

namespace locklab {

inline bool Gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  return close == std::string::npos || stat.compare(close, 3, ") Z") == 0;
}

inline bool GoneWithin(pid_t pid, Millis timeout) {
  const Nanos end = MonotonicNow() + timeout;
  while (!Gone(pid)) {
    if (MonotonicNow() >= end) return false;
    SleepFor(Millis(5));
  }
  return true;
}

}  // namespace locklab
