// FaultOptions: one fault of a scenario as the user wrote it (a fault entry of the scenario
// file, or the --fault flags): its id, its schedule (first_at, duration, interval,
// windows) and what it acts on (targets, nodes, params). Plain data: thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"

namespace locklab::faults {

struct FaultOptions {
  std::string id = "none";
  Millis first_at{1000};             // the first window opens this long after the start
  Millis duration{1500};             // how long each window lasts (pause length, partition...)
  Millis interval{2000};             // quiet time between the end of one window and the next
  int windows = 0;                   // how many windows at most; 0: as many as fit
  std::vector<int> targets;          // clients; empty: drawn from the seed (or all)
  std::vector<int> nodes;            // lock nodes (1-based); empty: the fault's default
  // Fault-specific parameters, validated by the fault ("mode", "point", "offset", "rate",
  // "delay_ms", "shape", "restart", ...). FaultInfo lists them with their defaults.
  std::map<std::string, std::string> params;
  std::string Param(const std::string& key, const std::string& fallback) const {
    auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
  }
};

}  // namespace locklab::faults
