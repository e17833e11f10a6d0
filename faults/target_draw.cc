#include "faults/target_draw.h"

namespace locklab::faults {

int TargetDraw::Client(const ClientControl& clients) {
  std::vector<int> pool = targets_;
  if (pool.empty()) {
    for (int p = 1; p <= clients.client_count(); ++p) pool.push_back(p);
  }
  int p = OneOf(pool);
  return clients.ClientRunning(p) ? p : 0;
}

int TargetDraw::OneOf(const std::vector<int>& among) {
  return among[rng_.Uniform(0, static_cast<int64_t>(among.size()) - 1)];
}

}  // namespace locklab::faults
