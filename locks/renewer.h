// Renewer: a background thread that runs a task periodically until stopped, or until the
// task itself returns false (a renewal that failed stops renewing, as Redisson's watchdog
// does).
//
// This is the only place in locks/ with a thread. It lives inside the client process on
// purpose: a stop-the-world pause (SIGSTOP of the process) freezes it along with the
// application, which is exactly why a watchdog does not survive a GC pause longer than the
// TTL (docs/design.md 2, docs/known-answers.md).
//
// Thread safety: the constructor starts the thread; Stop() and the destructor must be called
// from the owning thread (not from the task). Stop() returns after any task run in progress
// has finished, so the owner may reuse what the task used once Stop() returned. The task runs
// only on the renewer's thread, never concurrently with itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "base/clock.h"

namespace locklab::locks {

enum class RenewSchedule {
  kFixedDelay,  // next run = end of the previous run + period (Redisson's re-armed timeout)
  kFixedRate,   // next run = previous scheduled time + period; runs missed while the process
                // was stopped happen back to back (Java's scheduleAtFixedRate)
};

class Renewer {
 public:
  Renewer(Millis initial_delay, Millis period, RenewSchedule schedule,
          std::function<bool()> task);
  ~Renewer();
  Renewer(const Renewer&) = delete;
  Renewer& operator=(const Renewer&) = delete;

  // Wakes the thread and joins it. Idempotent.
  void Stop();

 private:
  void Loop(std::chrono::steady_clock::time_point first);
  const Millis period_;
  const RenewSchedule schedule_;
  const std::function<bool()> task_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;  // last member: started once everything above is initialised
};

}  // namespace locklab::locks
