// LagMeter: how late the lab itself runs.
//
// The workload sleeps for durations it chose (the hold inside the critical section, the think
// time between cycles). A sleep that ends later than asked measures the scheduling delay of
// the lab machine (CPU starved by too many parallel trials, a noisy neighbour): to the lock
// under test that is a short process pause nobody injected, and it can let two holders in on
// its own. The meter records the overshoot of every such sleep so that each run can say how
// far its own timing was from the schedule, and a violation that may owe to the lab is
// flagged instead of trusted blindly.
//
// Sleeps during which the process was stopped and continued (an injected pause: SIGSTOP then
// SIGCONT) are not counted: InstallSigcontCounter() counts SIGCONTs process-wide with an
// async-signal-safe atomic, and a sleep that saw one is skipped.
//
// Thread-compatible: one meter per workload thread; InstallSigcontCounter once per process.
#pragma once

#include <cstdint>

#include "base/clock.h"

namespace locklab::workloads {

class LagMeter {
 public:
  // Counts SIGCONTs from now on (replaces any SIGCONT handler; SA_RESTART).
  static void InstallSigcontCounter();
  // SIGCONTs counted so far (async-signal-safe to read): a thread that stopped its process
  // waits for this to change (harness/trial/client_main.cc).
  static uint64_t Continues();

  // Sleeps `d` and records how much longer it took (0 when not longer).
  void Sleep(Millis d);

  Nanos max() const { return max_; }      // the largest overshoot seen
  int64_t sleeps() const { return sleeps_; }  // sleeps measured (stopped ones excluded)
  int64_t over_10ms() const { return over_10ms_; }  // sleeps more than 10 ms late
  int64_t over_50ms() const { return over_50ms_; }  // sleeps more than 50 ms late

 private:
  Nanos max_{0};
  int64_t sleeps_ = 0;
  int64_t over_10ms_ = 0, over_50ms_ = 0;
};

}  // namespace locklab::workloads
