// `locklab driver-check --lock driver:PATH [--driver-arg ARG]...`: a conformance check of a
// lock driver against docs/driver-protocol.md, before it is trusted in a run.
//
// It starts the servers the driver's hello asks for (harness/lab/lab_cluster.h: a lab Redis unless
// the hello says `backend`), starts the driver as a client would (the same environment, its
// own process group, stderr to a log file), and drives it through every case of the
// protocol: the hello (also under LOCKLAB_PROBE), acquire / release / renew answered ok,
// fail and unknown where each is the only right answer, tokens, fences, a fresh driver
// releasing another's lock (statelessness), a holder paused past its TTL, a stopped lock
// server (a timeout is unknown, never fail), unknown ops and unreadable lines, pause points
// (announced, well-formed, waiting for the go), answers in time, nothing but protocol lines on
// stdout, exit on stdin EOF; and for a hello with "resource": true, read and work. Each case
// is named; a failed case prints one line "FAIL NAME: what the driver did" on stdout.
//
// Exit codes (base/exit_code.h): 0 every case passed; 1 some case failed; 64 bad flags or a
// driver path that cannot run; 69 a lab server did not start. Timing rules are the lab's
// own (an answer within timeout_ms + answer_grace_ms 250 ms is not late enough to fail; the
// waits for expiry leave whole seconds of margin), so the verdict holds on a busy machine.
//
// Not thread-safe (one command per process).
#pragma once

#include <string>
#include <vector>

#include "base/cli.h"

namespace locklab::harness {

int RunDriverCheckCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
