// Faults ("nemeses"): what breaks locks in production, applied from outside the lock.
//
// A Fault has Setup / Tick / Teardown (DESIGN.md 4). The harness calls Tick from its event
// loop whenever NextWakeup() has passed and OnPausePoint when a client reports that it
// stopped itself at an armed pause point. Teardown heals everything the fault did and is
// called on every exit path, including interrupts. Every start and stop is recorded as a
// nemesis event through LabControl::Record. Faults see the lab only through LabControl, which
// the harness implements, so faults/ depends on nothing in harness/ and locks/ depends on
// nothing here. One seeded Rng per fault: the same seed gives the same schedule.
// Not thread-safe: driven by the harness's single event loop.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/random.h"
#include "base/status.h"

namespace locklab::faults {

// The lab as a fault sees it. Client numbers are history process ids (1..client_count).
class LabControl {
 public:
  virtual ~LabControl() = default;
  virtual int client_count() const = 0;
  virtual bool ClientRunning(int process) const = 0;
  // SIGSTOP / SIGCONT of the client's whole process group (a stop-the-world pause).
  virtual bool PauseClient(int process) = 0;
  virtual bool ResumeClient(int process) = 0;
  // Asks the client to stop itself the next time it reaches `point`.
  virtual void ArmPausePoint(int process, const std::string& point) = 0;
  virtual void DisarmPausePoints(int process) = 0;
  // Appends a nemesis event: f = "start" | "stop", key = fault id.
  virtual void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
                      Nanos time) = 0;
  virtual void Log(const std::string& line) = 0;
};

struct FaultOptions {
  std::string id = "none";
  // client-pause
  std::string mode = "targeted";     // targeted (pause point) | random (SIGSTOP at any time)
  std::string point = "after-acquire";
  Millis pause{1500};                // how long each pause lasts
  Millis first_at{1000};             // first fault this long after the run starts
  Millis interval{2000};             // quiet time between the end of one fault and the next
  std::vector<int> targets;          // empty: any client, drawn from the seed
};

class Fault {
 public:
  virtual ~Fault() = default;
  virtual const char* id() const = 0;
  // `start` is the run's start time (MonotonicNow); `rng` the fault's own seeded source.
  virtual Status Setup(LabControl& lab, Nanos start) = 0;
  virtual void Tick(LabControl& lab, Nanos now) = 0;
  virtual void OnPausePoint(LabControl& lab, int process, const std::string& point, Nanos time) = 0;
  virtual void Teardown(LabControl& lab, Nanos now) = 0;
  // When Tick next has something to do (Nanos::max() for never).
  virtual Nanos NextWakeup() const = 0;
};

struct FaultInfo {
  std::string id;
  std::string description;
};
const std::vector<FaultInfo>& ListFaults();

Status MakeFault(const FaultOptions& options, uint64_t seed, std::unique_ptr<Fault>* out);

}  // namespace locklab::faults
