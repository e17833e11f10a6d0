// Hand-written histories for checker tests: one event per line, "t process type f key
// [value-json]" with t in milliseconds, process a client id, "nemesis" or "harness".
#pragma once

#include <sstream>
#include <string>

#include "checker/history.h"

namespace locklab::checker {

inline History H(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  History h;
  int64_t index = 0;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(' ') == std::string::npos) continue;
    std::istringstream ls(line);
    double t_ms;
    std::string process, type, f, key, rest;
    ls >> t_ms >> process >> type >> f >> key;
    std::getline(ls, rest);
    Event e;
    e.index = index++;
    e.time = Nanos(static_cast<int64_t>(t_ms * 1e6));
    e.process = process == "nemesis" ? kNemesisProcess
                : process == "harness" ? kHarnessProcess
                                       : std::stoll(process);
    e.type = type == "invoke" ? EventType::kInvoke
             : type == "ok"   ? EventType::kOk
             : type == "fail" ? EventType::kFail
                              : EventType::kInfo;
    e.f = f;
    e.key = key;
    if (rest.find_first_not_of(' ') != std::string::npos) e.value = nlohmann::json::parse(rest);
    h.push_back(e);
  }
  return h;
}

}  // namespace locklab::checker
