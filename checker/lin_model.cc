#include "checker/lin_model.h"

namespace locklab::checker::lin {

std::string Dump(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return Dump(v);
}

State InitialState(Model m) {
  State s;
  if (m == Model::kFencedMutex) s.b = kNoFence;
  return s;
}

std::string StateText(Model m, const State& s, const Interner& names) {
  switch (m) {
    case Model::kRegister:
    case Model::kCasRegister: return "value " + names.Name(s.a);
    case Model::kMutex: return s.a ? "held" : "free";
    case Model::kOwnerMutex: return s.a ? "held by " + names.Name(s.a) : "free";
    case Model::kFencedMutex: {
      std::string f = s.b == kNoFence ? "none" : std::to_string(s.b);
      return (s.a ? "held by " + names.Name(s.a) : std::string("free")) + ", last fence " + f;
    }
  }
  return "?";
}

}  // namespace locklab::checker::lin
