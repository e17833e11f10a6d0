// Trial: one run of one scenario (harness/trial/runner.h is the entry; RunTrial makes one of these).
//
// Run() goes through the phases in order, on the calling thread:
//   setup  (trial_setup.cc): the run directory with scenario.toml, lab.log and history.jsonl
//          (whose first event declares the run's facts to the judge), the lock config
//          checked, the faults made, the lab's nodes started or the user's endpoints opened,
//          the fault proxy, one client process per --clients, each connection through its
//          own proxy link;
//   start:  wait until every client's lock is ready (or failed), then "go" to all; a lock
//          that cannot start ends the trial before anything ran;
//   run:    the event loop (below) until the duration is over, a signal or a failed write;
//   check:  heal the faults, stop the clients (a grace period to finish their cycle), read
//          the final counters into the history, tear everything down (the history's run end
//          event), judge the history and write results.json and junit.xml.
// The event loop never blocks for more than 200 ms (signals), nor on a client (ClientFleet).
// Teardown also runs from the destructor, so an early return leaves nothing running.
// Not thread-safe; one trial at a time per process (InstallInterruptHandlers).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "checker/verdict.h"
#include "faults/fault.h"
#include "harness/trial/client_fleet.h"
#include "harness/lab/lab_cluster.h"
#include "harness/trial/lab_watch.h"
#include "harness/trial/live_progress.h"
#include "harness/scenario/run_options.h"
#include "harness/trial/runner.h"
#include "harness/trial/trial_lab_control.h"
#include "harness/trial/trial_recorder.h"

namespace locklab::harness {

class Trial : private ClientFleet::Listener {
 public:
  Trial(RunOptions options, bool quiet);
  ~Trial() override { Teardown(); }

  TrialResult Run();

 private:
  // What the event loop is waiting for.
  enum class Phase { kStarting, kRunning, kStopping };

  // trial_setup.cc
  Status Setup();
  Status StartLab(const locks::LockInfo& info, const std::vector<std::string>& node_args);
  Status StartClients();
  Status ClientSpawnOptions(int process, uint64_t seed, SpawnOptions* so);

  // trial.cc
  // Waits until every client's lock is ready (or failed, or its process exited), then
  // tells the ready ones to go. False when any client could not start: nothing is run.
  bool StartWhenReady();
  // Streams events until `end`: in kStarting until every client settled, in kRunning until a
  // signal or a failed history write too, in kStopping until every client exited.
  void EventLoop(Nanos end);
  Nanos NextFaultWakeup() const;
  void StopClients();
  void FinalReads();
  void FinalReadsThroughDriver();  // FinalReads of a driver that owns the resource
  void Teardown();
  // The lab's watch over its own ground (lab_watch.h): servers that died or stopped outside
  // the schedule and the harness's own stalls, recorded as infra events. At most every
  // kWatchEvery, unless `now_anyway`.
  void WatchLab(bool now_anyway = false);
  static constexpr Millis kWatchEvery{100};
  // scenario.toml as written at setup; a run that changed it (a driver writing its run
  // directory) gets it back at the end, so the run directory still replays the run.
  void RestoreScenario();

  // ClientFleet::Listener
  void OnClientEvent(const std::string& line) override;
  bool OnPausePoint(int process, const std::string& point, Nanos time) override;
  void OnClientExit(int process, bool crashed_by_fault) override;

  RunOptions o_;
  std::string driver_path_;  // driver:PATH locks: the program's absolute path; else empty
  std::string run_dir_;
  LabPaths paths_;
  // Declared in this order so that the lab and clients go before the files they log to.
  TrialRecorder recorder_;
  LiveProgress live_;  // the terminal's updating line while the run runs (not quiet only)
  TrialLab lab_;
  ClientFleet clients_{&recorder_};
  TrialLabControl control_{&lab_, &clients_, &recorder_};
  LabWatch watch_{&recorder_};
  StallMeter stall_meter_;
  Nanos next_watch_{0};
  bool watching_ = false;   // from the run's start until the final reads are done
  std::string scenario_toml_;  // what Setup wrote to scenario.toml
  std::vector<std::unique_ptr<faults::Fault>> faults_;
  Phase phase_ = Phase::kStarting;
  bool fault_started_ = false;
  bool interrupted_ = false;
  int unexpected_exits_ = 0;
  checker::RunFacts facts_;  // declared in the history's run start / end events
  bool run_ended_ = false;   // the run end event is written
  Status end_status_;        // the run's infrastructure status, for the end event
};

}  // namespace locklab::harness
