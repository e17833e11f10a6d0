#include "workloads/lag_meter.h"

#include <signal.h>

#include <atomic>

namespace locklab::workloads {
namespace {

std::atomic<uint64_t> g_sigconts{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "used from a signal handler");

void OnSigcont(int) { g_sigconts.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

void LagMeter::InstallSigcontCounter() {
  struct sigaction sa = {};
  sa.sa_handler = OnSigcont;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCONT, &sa, nullptr);
}

uint64_t LagMeter::Continues() { return g_sigconts.load(std::memory_order_relaxed); }

void LagMeter::Sleep(Millis d) {
  const uint64_t conts = g_sigconts.load(std::memory_order_relaxed);
  const Nanos start = MonotonicNow();
  SleepFor(d);
  const Nanos late = MonotonicNow() - start - d;
  if (g_sigconts.load(std::memory_order_relaxed) != conts) return;  // stopped meanwhile
  ++sleeps_;
  if (late > max_) max_ = late;
  over_10ms_ += late > Millis(10);
  over_50ms_ += late > Millis(50);
}

}  // namespace locklab::workloads
