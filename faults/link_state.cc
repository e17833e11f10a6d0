#include "faults/link_state.h"

namespace locklab::faults {

std::string LinkState::ToString() const {
  auto d = [&](Direction x) -> std::string {
    switch (x) {
      case Direction::kPass: return "pass";
      case Direction::kHold: return "hold";
      case Direction::kDiscard: return "discard";
      case Direction::kDelay: return "delay " + std::to_string(delay.count()) + "ms";
    }
    return "?";
  };
  if (reset) return "reset";
  return "up " + d(up) + ", down " + d(down);
}

}  // namespace locklab::faults
