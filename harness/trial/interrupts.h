// Interrupts: SIGINT, SIGTERM and SIGHUP end a trial's run phase early instead of killing
// the process (the history is kept, everything torn down, results.json says "interrupted").
//
// InstallInterruptHandlers() installs the handlers once per process and ignores SIGPIPE (a
// client that died must not kill the harness through its control pipe). A signal bumps a
// counter and writes a byte to a self-pipe, so an event loop polling InterruptWakeFd() wakes
// within one poll; the third signal exits at once (130), children dying by PDEATHSIG.
// Interrupted() is async-signal-safe to read and may be called from any thread; installing
// is not thread-safe (call it from the main thread before starting trials).
#pragma once

namespace locklab::harness {

// Installs the SIGINT/SIGTERM/SIGHUP handlers the runner relies on (idempotent).
void InstallInterruptHandlers();
// True once any of those signals arrived.
bool Interrupted();
// The self-pipe's read end (non-blocking; -1 before InstallInterruptHandlers): readable after
// a signal. DrainInterruptWakeFd() empties it so the next poll sleeps again.
int InterruptWakeFd();
void DrainInterruptWakeFd();

}  // namespace locklab::harness
