// Network faults through the fault proxy: partition, reply-loss, delay.
#pragma once

#include <utility>

#include "faults/windowed_fault.h"

namespace locklab::faults {

// Cuts (client, node) links. shape:
//   isolate-clients  the target clients (default: one drawn from the seed) lose the chosen
//                    nodes (default: all lock nodes)                          [default]
//   isolate-node     the chosen nodes (default n1) lose every client
//   majorities-ring  client i keeps nodes i..i+N/2 (mod N), a different majority each
// mode: hold (black hole, default) | reset (RST). direction: both (default) | up | down.
// resource: false (default) | true — whether the target clients lose the resource node too.
// target: any (default: drawn from the seed) | holder (a client holding a lock; the window
// waits for one).
class PartitionFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "partition"; }

 protected:
  Status Validate() override;
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;

 private:
  LinkState CutState() const;
  Millis RetryDelay() const override { return Millis(20); }
  std::vector<std::pair<int, int>> cut_;  // (client, node); node 0 = resource
};

// Requests reach the node, replies are dropped (the client sees a timeout: unknown).
class ReplyLossFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "reply-loss"; }

 protected:
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;

 private:
  std::vector<std::pair<int, int>> cut_;
};

// A client's write to the resource is held `delay_ms` (default: the window duration) and
// delivered late: armed at before-write, the link to the resource is slowed just for the
// write, then set back to pass (the held write keeps its delivery time).
class DelayFault : public WindowedFault {
 public:
  using WindowedFault::WindowedFault;
  const char* id() const override { return "delay"; }

 protected:
  Status Validate() override;
  std::string ArmedPoint() const override { return "before-write"; }
  nlohmann::json Open(LabControl& lab, Nanos time, int process) override;
  void Close(LabControl& lab, Nanos time) override;
  void WhileOpen(LabControl& lab, Nanos now) override;
  Nanos OpenWakeup() const override { return restored_ ? close_at_ : restore_at_; }

 private:
  Millis delay_{0};
  int client_ = 0;
  bool restored_ = true;
  Nanos restore_at_{0};
};

}  // namespace locklab::faults
