// LabWatch and StallMeter: the lab watching its own ground (docs/design.md 3.3).
//
// A trial's verdict is evidence only when the lab itself held: a lab server that died or
// stopped although no fault scheduled it, or a harness that did not run for a while, is
// the lab's failure, not the lock's. LabWatch checks every lab-started server of a trial
// (lock nodes of every backend, the resource node, n1's replica and the sentinels) each
// time the trial's loop asks, and records each death or stop that no fault caused as an
// `infra` event in the history (checker/infra.h), once per process and state. It reads
// /proc and peeks at exit statuses without reaping (PeekChildState), so the servers' own
// Kill/Restart paths work as before. The user's own servers (--endpoints) are not ours to
// watch. Not thread-safe: the trial's loop owns it.
//
// StallMeter is a thread that wakes every kTick and measures how late it woke: a gap over
// kMinStall means the harness process did not run (SIGSTOP, a swapped or starved machine).
// The trial's loop drains the stalls and records each as an infra event ("how":"stalled").
// Its methods are thread-safe.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "harness/trial/trial_lab_control.h"
#include "harness/trial/trial_recorder.h"

namespace locklab::harness {

class LabWatch {
 public:
  explicit LabWatch(TrialRecorder* recorder) : recorder_(recorder) {}

  // Checks the servers of `lab` now. `paused_nodes`: the lock nodes a fault holds stopped
  // (their 'T' state is the schedule's). A node a fault killed has no pid until it is
  // started again, so it is not looked at meanwhile.
  void Check(TrialLab& lab, const std::set<int>& paused_nodes);
  // How many deaths and stops were recorded.
  int recorded() const { return recorded_; }

 private:
  struct Watched {
    std::string subject;  // "node n1", "resource", "replica", "sentinel s1"
    std::string what;     // node | resource | replica | sentinel
    int node = 0;         // lock node number, 0 for the others
    LabNode* server = nullptr;
  };
  static std::vector<Watched> Servers(TrialLab& lab);
  void Record(const Watched& w, pid_t pid, const std::string& how);

  TrialRecorder* recorder_;
  std::set<std::pair<pid_t, std::string>> reported_;  // (pid, how) already recorded
  // Stopped at the last check: a stop is recorded when two checks in a row see it, so a
  // fault's SIGCONT that has not taken effect yet is not taken for a stop.
  std::set<pid_t> seen_stopped_;
  int recorded_ = 0;
};

class StallMeter {
 public:
  static constexpr Millis kTick{20};
  // A wake-up later than this past its tick is a stall of the harness.
  static constexpr Millis kMinStall{200};

  StallMeter() = default;
  ~StallMeter() { Stop(); }
  StallMeter(const StallMeter&) = delete;
  StallMeter& operator=(const StallMeter&) = delete;

  void Start();
  void Stop();
  // The stalls seen since the last call: [from, to) in MonotonicNow time.
  std::vector<std::pair<Nanos, Nanos>> Drain();

 private:
  void Loop();
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::pair<Nanos, Nanos>> stalls_;  // guarded by mu_
};

// Records one stall of the harness as an infra event.
void RecordStall(TrialRecorder* recorder, Nanos from, Nanos to);

}  // namespace locklab::harness
