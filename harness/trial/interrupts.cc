#include "harness/trial/interrupts.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace locklab::harness {
namespace {

std::atomic<int> g_signals{0};
int g_signal_pipe[2] = {-1, -1};

void OnInterrupt(int) {
  int n = g_signals.fetch_add(1) + 1;
  if (n >= 3) _exit(130);  // third Ctrl-C: give up at once; children die by PDEATHSIG
  char c = 1;
  (void)!write(g_signal_pipe[1], &c, 1);
}

}  // namespace

void InstallInterruptHandlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // the terminal closed: end the run as for SIGTERM
  signal(SIGPIPE, SIG_IGN);
}

bool Interrupted() { return g_signals.load() > 0; }

int InterruptWakeFd() { return g_signal_pipe[0]; }

void DrainInterruptWakeFd() {
  char buf[16];
  (void)!read(g_signal_pipe[0], buf, sizeof(buf));
}

}  // namespace locklab::harness
