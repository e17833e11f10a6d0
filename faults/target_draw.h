// TargetDraw: which client a fault acts on, drawn from the fault's own seed (one Rng per
// fault, forked from the run's seed), so a seed replays the same targets. Draws come first
// and lab checks after, so the sequence of draws does not depend on the lab's state.
// The `target` param of client-side faults picks by kind (Pick): "any" draws among the
// targets (or all clients) exactly as Client does; "holder" draws one of the clients that
// hold a lock now (ClientControl::Holders, among the targets when given); "just-released"
// takes the client whose release completed last (ClientControl::LastReleaser), no draw.
// Not thread-safe: one per fault, driven by the harness's event loop.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/random.h"
#include "faults/lab_control.h"

namespace locklab::faults {

// any | holder | just-released.
bool IsTargetKind(const std::string& kind);

class TargetDraw {
 public:
  // `targets`: the clients the user named (empty: any client).
  TargetDraw(std::vector<int> targets, uint64_t seed) : targets_(std::move(targets)), rng_(seed) {}
  // A client among the targets (or all clients); 0 when the one drawn is not running.
  int Client(const ClientControl& clients);
  // One of `among` (not empty), e.g. one of the clients holding a lock.
  int OneOf(const std::vector<int>& among);
  // A client by target kind (any | holder | just-released); 0 when there is none now (no
  // holder, no release yet, or the one drawn is not running).
  int Pick(const std::string& kind, const ClientControl& clients);

 private:
  std::vector<int> targets_;
  Rng rng_;
};

}  // namespace locklab::faults
