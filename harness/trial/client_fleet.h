// ClientFleet: a trial's client processes (`locklab client`, one lock each) as the harness
// sees them: their pids, their control pipes (stdin: "arm", "disarm", "go" lines) and their
// event streams (stdout: one JSON line per history event or control report).
//
// Nothing here blocks the trial's loop. Control pipes are non-blocking: what a stopped client
// does not read waits in its outbox (kMaxOutbox bytes at most; beyond that arm/disarm lines
// are dropped and logged) and is flushed when Poll() sees room. Poll() reads every line that
// arrived, updates what it says about its client (ready, failed, paused, the locks it holds,
// the lab-lag reports) and hands the rest to a Listener: history events, pause-point
// reports, exits. A Listener may call back into the fleet (a fault resumes or crashes a
// client from OnPausePoint); the client list never changes after the last Spawn().
// Not thread-safe: one trial's thread owns it. Destroying it kills what still runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "faults/lab_control.h"
#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "harness/trial/trial_recorder.h"

namespace locklab::harness {

// One client process.
struct ClientProc {
  int process = 0;
  pid_t pid = -1;
  std::string log_path;                     // its stderr: RUN_DIR/clients/N.log
  std::unique_ptr<ClockControlFile> clock;  // when clients run under libfaketime
  std::map<std::string, std::string> holding;  // lock key -> token it holds, from its own events
  int to_child = -1;    // its stdin (control lines), non-blocking
  // Control lines not yet taken by the pipe (a stopped client reads nothing): flushed when
  // the pipe has room, so the harness's loop never blocks on a client (SendControl).
  std::string outbox;
  int from_child = -1;  // its stdout (events)
  std::string buffer;   // a partial line read from it
  bool running = false;
  bool paused = false;
  bool ready = false;     // its lock is ready (a driver said hello): it waits for "go"
  std::string failure;    // why its lock could not start (one line), from the client
  // Its last answers to the faults' evidence probes (faults/lab_control.h): its wall clock
  // minus the harness's real one, and an armed slow section's end; `*_at` is when the
  // report arrived (MonotonicNow), 0 for none.
  double clock_offset_s = 0;
  Nanos clock_at{0};
  std::string slow_point;
  Millis slow_slept{0};
  Nanos slow_at{0};
};

// The clients' "lag" reports summed (workloads/lag_meter.h): their hold and think sleeps
// that ended late.
struct LabLagTotals {
  std::chrono::microseconds max{0};  // the latest a sleep ended, over every client
  int64_t sleeps = 0, over_10ms = 0, over_50ms = 0;
  int reports = 0;  // clients that reported
};

class ClientFleet {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // One history event line of a client (what it holds is already updated).
    virtual void OnClientEvent(const std::string& line) = 0;
    // A client reached an armed pause point at `time` and stopped itself ("paused") or only
    // slowed. True when a fault takes charge of it; a paused client nobody takes is resumed.
    virtual bool OnPausePoint(int process, const std::string& point, Nanos time) = 0;
    // A client's event stream ended: it exited. `crashed_by_fault`: Crash() ended it.
    virtual void OnClientExit(int process, bool crashed_by_fault) = 0;
  };

  explicit ClientFleet(TrialRecorder* recorder) : recorder_(recorder) {}
  ~ClientFleet() { KillAll(); }
  ClientFleet(const ClientFleet&) = delete;
  ClientFleet& operator=(const ClientFleet&) = delete;

  // Starts client `process` (1, 2, ... in order) from `spawn`, whose stdin/stdout become its
  // control pipe and event stream; `clock` is its libfaketime control, or null.
  Status Spawn(int process, SpawnOptions spawn, std::unique_ptr<ClockControlFile> clock);

  int size() const { return static_cast<int>(clients_.size()); }
  bool Running(int process) const;
  // Client `process`'s pid (its process group's id), -1 when unknown or reaped.
  pid_t Pid(int process) const;
  bool Pause(int process);   // SIGSTOP its process group
  bool Resume(int process);  // SIGCONT, after its own stop at a pause point took effect
  bool Crash(int process);   // SIGKILL; it holds nothing from now on
  Status SetClock(int process, const std::string& offset);
  // Evidence probes: asks the client for its wall clock (it answers at its next pause
  // point), and its last clock and slow-section reports (false when none arrived).
  void AskClock(int process);
  bool ClockReport(int process, double* offset_s, Nanos* at) const;
  bool SlowReport(int process, std::string* point, Millis* slept, Nanos* at) const;
  void Arm(int process, const std::string& point, const std::string& action);
  void Disarm(int process);
  // Running clients that hold at least one lock, by their own events.
  std::vector<int> Holders() const;
  // What `process` holds right now: each key and the token its acquire got.
  std::vector<faults::HeldLock> HeldLocks(int process) const;
  int64_t acquires_seen() const { return acquires_seen_; }
  // The client whose release completed last (ok, fail or info), from its own events; 0
  // before any release.
  int last_releaser() const { return last_releaser_; }
  const LabLagTotals& lag() const { return lag_; }

  // Every client said ready, reported a failure or exited.
  bool AllSettled() const;
  // One line per client that is not ready ("client N: why"); `waited` is how long it had.
  std::vector<std::string> StartFailures(Millis waited) const;
  void SendGo();  // to every client: start the workload
  // True while some client's event stream is open.
  bool AnyReading() const;

  // Waits up to `timeout` for client lines, control-pipe room or `wake_fd` (a non-blocking
  // pipe's read end, emptied here: the interrupt self-pipe), and handles what came. False
  // when poll itself failed.
  bool Poll(int wake_fd, Millis timeout, Listener* listener);

  // Asks every client to stop (SIGCONT, SIGTERM, control pipe closed); Reap() then kills
  // (and logs) the ones that did not exit within `exit_wait` and closes their streams.
  void AskToStop();
  void Reap(Millis exit_wait);
  void KillAll();

 private:
  static constexpr size_t kMaxOutbox = 4096;  // bytes
  ClientProc* Find(int process);
  const ClientProc* Find(int process) const;
  // Queues one control line ("arm ...", "disarm", "go") and writes what the pipe takes now;
  // never blocks. Beyond kMaxOutbox unsent bytes an arm or disarm is dropped (logged): the
  // client is stopped or stuck and would act on none of them.
  void SendControl(ClientProc& c, const std::string& line);
  void FlushControl(ClientProc& c);
  void ReadLines(ClientProc& c, Listener* listener);
  void HandleLine(ClientProc& c, const std::string& line, Listener* listener);

  TrialRecorder* recorder_;  // lab.log
  // LOCKLAB_RUN_MARK=<random>, in every client's environment and so in its driver's: what a
  // client's tree leaves outside it (a driver's setsid grandchild of a client a fault
  // SIGKILLed, which the client cannot sweep) is found by it and killed in KillAll.
  std::string run_mark_;
  std::vector<ClientProc> clients_;
  int64_t acquires_seen_ = 0;
  int last_releaser_ = 0;
  LabLagTotals lag_;
};

}  // namespace locklab::harness
