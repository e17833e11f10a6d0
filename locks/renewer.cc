#include "locks/renewer.h"

#include <chrono>

namespace locklab::locks {

Renewer::Renewer(Millis initial_delay, Millis period, RenewSchedule schedule,
                 std::function<bool()> task)
    : period_(period),
      schedule_(schedule),
      task_(std::move(task)),
      // The first deadline is taken here, on the owner's thread, not when the new thread
      // first runs: a process stopped right after Acquire (before the thread was scheduled)
      // must find its renewal overdue on SIGCONT, as a timer armed at acquire time would.
      thread_([this, first = std::chrono::steady_clock::now() + initial_delay] { Loop(first); }) {}

Renewer::~Renewer() { Stop(); }

void Renewer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Renewer::Loop(std::chrono::steady_clock::time_point first) {
  // steady_clock is CLOCK_MONOTONIC: a client wall-clock fault does not move the schedule,
  // as with Java's nanoTime-based executors. A SIGSTOP does, since the whole process stops.
  auto next = first;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (cv_.wait_until(lock, next, [this] { return stop_; })) return;
    lock.unlock();
    bool more = task_();
    lock.lock();
    if (!more || stop_) return;
    next = schedule_ == RenewSchedule::kFixedRate ? next + period_
                                                  : std::chrono::steady_clock::now() + period_;
  }
}

}  // namespace locklab::locks
