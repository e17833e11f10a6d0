#include "faults/effect.h"

namespace locklab::faults {

Status Effect::CheckOptions(int clients, int nodes) {
  for (int t : o_.targets) {
    if (t < 1 || t > clients) {
      return Status::Usage(std::string("fault ") + id() + ": target client " + std::to_string(t) +
                           " does not exist (clients are 1.." + std::to_string(clients) + ")");
    }
  }
  for (int n : o_.nodes) {
    if (n < 1 || n > nodes) {
      return Status::Usage(std::string("fault ") + id() + ": node " + std::to_string(n) +
                           " does not exist (lock nodes are n1..n" + std::to_string(nodes) + ")");
    }
  }
  return Validate();
}

void Effect::Bind(LabControl& lab, TargetDraw& draw) {
  journal_ = &lab;
  draw_ = &draw;
  Attach(lab);
}

std::vector<int> Effect::NodesOr(int default_node) const {
  return o_.nodes.empty() ? std::vector<int>{default_node} : o_.nodes;
}

}  // namespace locklab::faults
