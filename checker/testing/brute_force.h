// A brute-force linearizability checker, written independently of checker/lin_sweep.cc
// (its own sequential specification, no shared model code): it tries every order of every
// subset of the unknown-outcome operations. Exponential; for histories of about a dozen
// operations per key. The property tests and bench/checker_bench judge the real checker by it.
//
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.h"
#include "checker/linearizability.h"

namespace locklab::checker::testing {

// One operation: invocation + completion (or none).
struct GOp {
  int64_t process = 0;
  std::string f;
  std::string key;
  nlohmann::json in;
  nlohmann::json out;
  int64_t call = 0;
  int64_t ret = 0;  // completion time
  EventType outcome = EventType::kOk;
  bool completes = true;  // false: no completion event at all (unknown)
};

// The history of `ops`: each invocation at its call time, each completion at its return, in
// time order (ties in the order of `ops`, invocation first), indexed and numbered by line.
inline History HistoryOf(const std::vector<GOp>& ops) {
  struct Timed { int64_t t; Event e; };
  std::vector<Timed> es;
  for (const GOp& o : ops) {
    Event inv;
    inv.time = Nanos(o.call);
    inv.process = o.process;
    inv.type = EventType::kInvoke;
    inv.f = o.f;
    inv.key = o.key;
    inv.value = o.in;
    es.push_back({o.call, inv});
    if (o.completes) {
      Event c = inv;
      c.time = Nanos(o.ret);
      c.type = o.outcome;
      c.value = o.out;
      es.push_back({o.ret, c});
    }
  }
  std::stable_sort(es.begin(), es.end(), [](const Timed& a, const Timed& b) { return a.t < b.t; });
  History h;
  for (size_t i = 0; i < es.size(); ++i) {
    es[i].e.index = static_cast<int64_t>(i);
    es[i].e.line = static_cast<int>(i) + 1;
    h.push_back(es[i].e);
  }
  return h;
}

struct Spec {
  nlohmann::json value;  // register
  std::string holder;    // mutex ("" = free)
  std::optional<int64_t> fence;
};

inline nlohmann::json RegVal(const nlohmann::json& v) {
  if (v.is_object() && v.contains("value")) return v["value"];
  return v;
}

inline std::string TokenIn(const nlohmann::json& v) {
  if (v.is_object() && v.contains("token") && v["token"].is_string()) {
    return v["token"].get<std::string>();
  }
  return "";
}

// A failed release or renew in an owner model: either the token's hold had ended, or the call
// never reached the lock (lin_model.h, kNotHeld). Apply takes the reading from `end_hold`.
inline bool FailedReleaseOrRenew(Model m, const GOp& o) {
  return m != Model::kMutex && o.completes && o.outcome == EventType::kFail &&
         (o.f == "release" || o.f == "renew");
}

// Applies one op (with its observed outcome) to the spec; false if impossible.
inline bool Apply(Model m, Spec* s, const GOp& o, bool cas_fail_observed, bool end_hold = true) {
  bool fail = o.completes && o.outcome == EventType::kFail;
  if (m == Model::kRegister || m == Model::kCasRegister) {
    if (o.f == "read") return s->value == RegVal(o.out);
    if (o.f == "write") {
      s->value = RegVal(o.in);
      return true;
    }
    if (o.f == "cas") {
      if (fail && cas_fail_observed) return s->value != o.in[0];
      if (s->value != o.in[0]) return false;
      s->value = o.in[1];
      return true;
    }
    return false;
  }
  std::string tok;
  if (o.f == "acquire") {
    tok = TokenIn(o.out);
    if (tok.empty()) tok = TokenIn(o.in);
    if (tok.empty()) tok = "unknown@" + std::to_string(o.call) + "/" + std::to_string(o.process);
  } else {
    tok = TokenIn(o.in);
  }
  if (o.f == "acquire") {
    if (!s->holder.empty()) return false;
    if (m == Model::kFencedMutex && o.out.is_object() && o.out.contains("fence")) {
      int64_t f = o.out["fence"].get<int64_t>();
      if (s->fence && f <= *s->fence) return false;
      s->fence = f;
    }
    s->holder = tok;
    return true;
  }
  if (FailedReleaseOrRenew(m, o)) {
    // Owner models: the token did not hold the lock then (its lease had ended), or the call
    // never reached the lock (nothing happened); `end_hold` picks the reading.
    if (end_hold && s->holder == tok) s->holder.clear();
    return true;
  }
  if (o.f == "release") {
    if (s->holder.empty()) return false;
    if (m != Model::kMutex && s->holder != tok) return false;
    s->holder.clear();
    return true;
  }
  if (o.f == "renew") return !s->holder.empty() && (m == Model::kMutex || s->holder == tok);
  return false;
}

inline bool BruteForce(Model m, const std::vector<GOp>& all, bool cas_fail_observed) {
  std::map<std::string, std::vector<const GOp*>> by_key;
  for (const GOp& o : all) {
    if (ModelHasFunction(m, o.f)) by_key[o.key].push_back(&o);
  }
  for (auto& [key, list] : by_key) {
    std::vector<const GOp*> req, opt;
    for (const GOp* o : list) {
      bool unknown = !o->completes || o->outcome == EventType::kInfo;
      bool fail = !unknown && o->outcome == EventType::kFail;
      if (fail && !FailedReleaseOrRenew(m, *o) && !(o->f == "cas" && cas_fail_observed)) continue;
      if (unknown && (o->f == "read" || o->f == "renew")) continue;
      (unknown ? opt : req).push_back(o);
    }
    std::vector<const GOp*> ops = req;
    ops.insert(ops.end(), opt.begin(), opt.end());
    size_t nreq = req.size();
    std::vector<bool> used(ops.size(), false);
    std::function<bool(Spec, size_t)> dfs = [&](Spec s, size_t placed_req) -> bool {
      if (placed_req == nreq) return true;
      for (size_t c = 0; c < ops.size(); ++c) {
        if (used[c]) continue;
        bool allowed = true;  // no unplaced required op completed before c was called
        for (size_t r = 0; r < nreq && allowed; ++r) {
          if (!used[r] && r != c && ops[r]->ret < ops[c]->call) allowed = false;
        }
        if (!allowed) continue;
        for (bool end_hold : {true, false}) {
          if (!end_hold && !FailedReleaseOrRenew(m, *ops[c])) break;
          Spec n = s;
          if (!Apply(m, &n, *ops[c], cas_fail_observed, end_hold)) continue;
          used[c] = true;
          bool ok = dfs(n, placed_req + (c < nreq ? 1 : 0));
          used[c] = false;
          if (ok) return true;
        }
      }
      return false;
    };
    if (!dfs(Spec{}, 0)) return false;
  }
  return true;
}

// The operations of a well-formed history (each process sequential), for BruteForce. Token
// rules as the lab's: an acquire's token is in its completion's value (ok or info).
inline std::vector<GOp> OperationsOf(const History& h) {
  std::vector<GOp> ops;
  std::unordered_map<int64_t, size_t> open;
  for (const Event& e : h) {
    if (e.process == kNemesisProcess) continue;
    if (e.type == EventType::kInvoke) {
      GOp o;
      o.process = e.process;
      o.f = e.f;
      o.key = e.key;
      o.in = e.value;
      o.call = e.time.count();
      o.completes = false;
      open[e.process] = ops.size();
      ops.push_back(std::move(o));
      continue;
    }
    auto it = open.find(e.process);
    if (it == open.end()) continue;
    GOp& o = ops[it->second];
    o.completes = true;
    o.outcome = e.type;
    o.out = e.value;
    o.ret = e.time.count();
    open.erase(it);
  }
  return ops;
}

}  // namespace locklab::checker::testing
