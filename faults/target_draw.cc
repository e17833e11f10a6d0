#include "faults/target_draw.h"

#include <algorithm>

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

bool IsTargetKind(const std::string& kind) {
  return kind == "any" || kind == "holder" || kind == "just-released";
}

int TargetDraw::Pick(const std::string& kind, const ClientControl& clients) {
  auto allowed = [&](int p) {
    return targets_.empty() || std::find(targets_.begin(), targets_.end(), p) != targets_.end();
  };
  if (kind == "holder") {
    std::vector<int> holders;
    for (int p : clients.Holders()) {
      if (allowed(p)) holders.push_back(p);
    }
    return holders.empty() ? 0 : OneOf(holders);
  }
  if (kind == "just-released") {
    int p = clients.LastReleaser();
    return p != 0 && allowed(p) && clients.ClientRunning(p) ? p : 0;
  }
  return Client(clients);
}

}  // namespace locklab::faults
