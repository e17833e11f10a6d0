// Wide lock histories: windows of k acquires and k releases all open at once, for the
// checker's benchmark (bench/checker_bench --wide) and the tests of its depth-first probe.
//
// Each window invokes k acquires (processes 0..k-1, tokens "w<window>-t<i>") and k releases
// (processes k..2k-1, the release of process k+i naming token i), all before any of them
// returns; every one returns ok, in an order drawn from the seed, and the next window starts
// after the last return. Any order of such a window is allowed by real time, so the window
// is linearizable (acquire t0, release t0, acquire t1, ...) under the mutex, owner-mutex and
// fenced-mutex models (no fences are written). `invalid` turns the last release of the
// middle window into an acquire of a token nobody releases: k+1 acquires and k-1 releases,
// two of which must then follow each other with no release between them, under every mutex
// model. `unknown_per_window` acquires of each window end `info` instead (naming their token,
// as the lab records a timed-out acquire whose late answer it saw): taking effect is then
// optional, which keeps a valid window valid.
//
// Deterministic for a given spec. Thread safety: pure function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.h"

namespace locklab::checker::testing {

struct WideHistorySpec {
  int windows = 10;
  int k = 8;
  bool invalid = false;
  int unknown_per_window = 0;
  uint64_t seed = 1;
  std::string key = "lock:0";
};

inline History GenerateWideHistory(const WideHistorySpec& spec) {
  std::mt19937_64 rng(spec.seed);
  History h;
  int64_t t = 1000;
  auto emit = [&](int64_t time, int64_t process, EventType type, const std::string& f,
                  nlohmann::json value) {
    Event e;
    e.index = static_cast<int64_t>(h.size());
    e.line = static_cast<int>(h.size()) + 1;
    e.time = Nanos(time);
    e.process = process;
    e.type = type;
    e.f = f;
    e.key = spec.key;
    e.value = std::move(value);
    h.push_back(std::move(e));
  };
  const int k = std::max(1, spec.k);
  for (int w = 0; w < spec.windows; ++w) {
    const bool bad = spec.invalid && w == spec.windows / 2;
    struct Op {
      int64_t process;
      std::string f;
      std::string token;
      bool unknown;
    };
    std::vector<Op> ops;
    for (int i = 0; i < k; ++i) {
      ops.push_back({i, "acquire", "w" + std::to_string(w) + "-t" + std::to_string(i),
                     i < spec.unknown_per_window});
    }
    for (int i = 0; i < k; ++i) {
      bool as_acquire = bad && i == k - 1;
      std::string token = "w" + std::to_string(w) + "-t" + std::to_string(as_acquire ? k : i);
      ops.push_back({k + i, as_acquire ? "acquire" : "release", token, false});
    }
    std::shuffle(ops.begin(), ops.end(), rng);  // call order
    for (const Op& op : ops) {
      t += 1000;
      nlohmann::json in = op.f == "release" ? nlohmann::json{{"token", op.token}} : nlohmann::json();
      emit(t, op.process, EventType::kInvoke, op.f, in);
    }
    std::shuffle(ops.begin(), ops.end(), rng);  // return order
    for (const Op& op : ops) {
      t += 1000;
      nlohmann::json out = op.f == "acquire" ? nlohmann::json{{"token", op.token}} : nlohmann::json();
      emit(t, op.process, op.unknown ? EventType::kInfo : EventType::kOk, op.f, out);
    }
    t += 1000;
  }
  return h;
}

}  // namespace locklab::checker::testing
