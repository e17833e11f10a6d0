// Network effects through the fault proxy: partition, reply-loss, delay. They set links
// through NetworkControl and read the lab's size (and, to pick a client, its clients) through
// ClientControl and NodeControl. Not thread-safe (faults/effect.h).
#pragma once

#include <utility>

#include "faults/effect.h"

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
// point: "" (timed, default) | a pause point: the window cuts the client that reaches it.
class PartitionEffect : public Effect {
 public:
  using Effect::Effect;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Waiting for a holder: look again soon.
  Millis RetryDelay(Millis) const override { return Millis(20); }
  // Bytes the proxy held or dropped on the cut links, or connections it reset.
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override;
  Status Validate() override;

 private:
  LinkState CutState() const;
  ClientControl* clients_ = nullptr;  // to pick a client, or resume the one at the point
  const NodeControl* nodes_ = nullptr;
  NetworkControl* network_ = nullptr;
  std::vector<std::pair<int, int>> cut_;  // (client, node); node 0 = resource
  LinkBytes base_;                        // the cut links' counters summed, at the cut
};

// Requests reach the node, replies are dropped (the client sees a timeout: unknown); `point`
// as partition's.
class ReplyLossEffect : public Effect {
 public:
  using Effect::Effect;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  // Reply bytes the proxy dropped on the cut links.
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override;
  Status Validate() override { return PointParam(); }

 private:
  ClientControl* clients_ = nullptr;
  const NodeControl* nodes_ = nullptr;
  NetworkControl* network_ = nullptr;
  std::vector<std::pair<int, int>> cut_;
  LinkBytes base_;
};

// A client's write to the resource is held `delay_ms` (default: the window duration) and
// delivered late: armed at before-write, the link to the resource is slowed just for the
// write, then set back to pass (the held write keeps its delivery time).
class DelayEffect : public Effect {
 public:
  using Effect::Effect;
  // Armed at before-write; the window covers the delivery.
  void Shape(Schedule* schedule) const override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  void WhileOpen(Nanos now) override;
  Nanos OpenWakeup() const override { return restored_ ? Nanos::max() : restore_at_; }
  // Bytes of the client's write the proxy delayed on its link to the resource.
  Evidence Probe(Nanos now, ProbeMoment when) override;

 protected:
  void Attach(LabControl& lab) override;
  Status Validate() override;

 private:
  ClientControl* clients_ = nullptr;  // to resume the client stopped at the point
  NetworkControl* network_ = nullptr;
  Millis delay_{0};
  int client_ = 0;
  LinkBytes base_;
  bool restored_ = true;
  Nanos restore_at_{0};
};

}  // namespace locklab::faults
