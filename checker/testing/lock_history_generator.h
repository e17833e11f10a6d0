// Lock histories of any length from a simulated lock service, whose verdict is known by
// construction: for the checker's scale benchmark (bench/checker_bench --scale) and tests.
//
// `clients` processes loop acquire -> (renew) -> release on one key against one sequential
// lock. Each operation takes effect at one instant between its invocation and completion;
// the simulation applies them in that order, so the history is linearizable for the mutex,
// owner-mutex and fenced-mutex models. A fraction of acquires end `info` (a timeout): half of
// those took effect anyway, and then, as the lab's workload does with a driver's late `ok`,
// the info value names the token and the client releases it; the others never took effect
// and name no token. `violation` adds one intruder whose acquire and release both happen
// while another client certainly holds the lock (its hold spans them, and no release can be
// placed inside it): two holders, invalid under every mutex model whatever the unknown
// acquires did.
//
// Deterministic for a given spec (one seeded generator). Thread safety: pure function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.h"

namespace locklab::checker::testing {

struct LockHistorySpec {
  int64_t events = 10000;      // stop once at least this many events were made
  int clients = 8;
  double indeterminate = 0.0;  // fraction of acquires whose completion is `info`
  bool violation = false;      // add an intruder that makes the history invalid
  uint64_t seed = 1;
  std::string key = "lock:0";
};

inline History GenerateLockHistory(const LockHistorySpec& spec) {
  std::mt19937_64 rng(spec.seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  History h;
  auto emit = [&](int64_t t, int64_t process, EventType type, const std::string& f,
                  nlohmann::json value) {
    Event e;
    e.time = Nanos(t);
    e.process = process;
    e.type = type;
    e.f = f;
    e.key = spec.key;
    e.value = std::move(value);
    h.push_back(std::move(e));
  };
  enum class Next { kAcquire, kRenew, kRelease };
  struct Client {
    Next next = Next::kAcquire;
    std::string token;
    int64_t call = 0, lin = 0;
    bool late_release = false;  // releasing a grant whose acquire ended `info`
  };
  std::vector<Client> clients(static_cast<size_t>(spec.clients));
  // Operations in flight, by the instant they take effect (microsecond units, then ns).
  using Item = std::pair<int64_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> in_flight;
  auto start_op = [&](int c, int64_t t) {
    clients[c].call = t;
    clients[c].lin = t + uniform(20, 400);
    in_flight.push({clients[c].lin, c});
  };
  for (int c = 0; c < spec.clients; ++c) start_op(c, uniform(0, 1000));
  std::string holder;  // the lock service's state
  int64_t next_token = 1, fence = 0;
  // Known held: acquire returned .. release invoked. A hold is `clean` when every earlier
  // release had returned before its acquire was invoked: then no release can be placed after
  // that acquire and before the holder's own release, so (even with the mutex model, where
  // anyone's release frees the lock, and unknown acquires that may take effect late) nothing
  // can free it for an intruder.
  struct Hold { int64_t from, to; bool clean; };
  std::vector<Hold> holds;
  std::vector<int64_t> hold_start(static_cast<size_t>(spec.clients), 0);
  std::vector<bool> hold_clean(static_cast<size_t>(spec.clients), false);
  int64_t last_release_return = -1;
  constexpr int64_t kNs = 1000;
  while (static_cast<int64_t>(h.size()) < spec.events && !in_flight.empty()) {
    auto [lin, c] = in_flight.top();
    in_flight.pop();
    Client& cl = clients[c];
    int64_t ret = lin + uniform(20, 400);
    int64_t think = uniform(0, 2000);
    if (cl.next == Next::kAcquire) {
      emit(cl.call * kNs, c, EventType::kInvoke, "acquire", nullptr);
      bool free = holder.empty();
      if (chance(spec.indeterminate)) {
        if (free && chance(0.5)) {  // took effect; the late answer names the token
          cl.token = "t" + std::to_string(next_token++);
          holder = cl.token;
          ++fence;
          emit(ret * kNs, c, EventType::kInfo, "acquire", {{"token", cl.token}});
          cl.next = Next::kRelease;
          cl.late_release = true;
        } else {
          emit(ret * kNs, c, EventType::kInfo, "acquire", {{"error", "timeout"}});
        }
      } else if (free) {
        cl.token = "t" + std::to_string(next_token++);
        holder = cl.token;
        emit(ret * kNs, c, EventType::kOk, "acquire", {{"token", cl.token}, {"fence", ++fence}});
        cl.next = chance(0.2) ? Next::kRenew : Next::kRelease;
        cl.late_release = false;
        hold_start[c] = ret;
        hold_clean[c] = last_release_return < cl.call;
        think = uniform(200, 3000);  // the critical section
      } else {
        emit(ret * kNs, c, EventType::kFail, "acquire", {{"error", "held"}});
      }
    } else if (cl.next == Next::kRenew) {
      emit(cl.call * kNs, c, EventType::kInvoke, "renew", {{"token", cl.token}});
      emit(ret * kNs, c, EventType::kOk, "renew", nullptr);
      cl.next = Next::kRelease;
      think = uniform(200, 2000);
    } else {
      emit(cl.call * kNs, c, EventType::kInvoke, "release", {{"token", cl.token}});
      holder.clear();
      emit(ret * kNs, c, EventType::kOk, "release", nullptr);
      last_release_return = std::max(last_release_return, ret);
      if (!cl.late_release) holds.push_back({hold_start[c], cl.call, hold_clean[c]});
      cl.next = Next::kAcquire;
    }
    start_op(c, ret + think);
  }
  if (spec.violation) {
    // The intruder: inside the longest known hold of the middle half of the history.
    size_t lo = holds.size() / 4, hi = std::max(lo + 1, holds.size() * 3 / 4);
    const Hold* best = nullptr;
    for (size_t i = lo; i < hi && i < holds.size(); ++i) {
      if (!holds[i].clean) continue;
      if (!best || holds[i].to - holds[i].from > best->to - best->from) best = &holds[i];
    }
    if (best && best->to - best->from >= 8) {
      int64_t t = best->from + 1, step = (best->to - best->from - 2) / 4;
      int64_t p = spec.clients;
      emit(t * kNs, p, EventType::kInvoke, "acquire", nullptr);
      emit((t + step) * kNs, p, EventType::kOk, "acquire",
           {{"token", "intruder"}, {"fence", fence + 1000}});
      emit((t + 2 * step) * kNs, p, EventType::kInvoke, "release", {{"token", "intruder"}});
      emit((t + 3 * step) * kNs, p, EventType::kOk, "release", nullptr);
    }
  }
  std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
  for (size_t i = 0; i < h.size(); ++i) {
    h[i].index = static_cast<int64_t>(i);
    h[i].line = static_cast<int>(i) + 1;
  }
  return h;
}

}  // namespace locklab::checker::testing
