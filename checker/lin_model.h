// Linearizability internals, part 1: operations and the sequential models they run on.
//
// The checker (linearizability.h) turns each key's events into a Partition of Ops, then
// sweeps it (lin_sweep.h). An Op is one invocation with its outcome: known (ok, or a failed
// cas that Porcupine's reading counts as an observation) or unknown (info / no completion).
// Values and lock tokens are interned per key, so a model state is two integers and Step()
// (the sequential model: may `op` run in state `s`, and what state follows?) is a switch that
// the sweep inlines in its innermost loop. Internal to checker/: include from checker/*.cc
// only. Thread safety: plain values; Interner is not thread-safe (one per partition).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "checker/history.h"
#include "checker/linearizability.h"

namespace locklab::checker::lin {

constexpr int64_t kNoFence = INT64_MIN;

// kNotHeld (owner models only): a release or renew that definitely failed. `fail` means the
// call certainly did not take effect, for one of two reasons the history does not tell
// apart: the lock service answered that the token does not hold the lock (its lease ended,
// expired or its session lost, at the latest there), or the call never reached it (a
// connection refused or reset before sending). So the operation has two readings, and
// Steps() offers both: the token's hold ends here, or nothing happened. Either reading alone
// gives a false "violated": dropping the failure leaves the model holding forever (a holder
// whose session expired while it released blocks the next acquire), and always ending the
// hold makes the holder's later ok release impossible (a renewal refused by a restarting
// member, then the holder's own release).
enum class Kind : uint8_t { kRead, kWrite, kCasOk, kCasFail, kAcquire, kRelease, kRenew, kNotHeld };

// A model state: two integers are enough for every model here (interned values/tokens).
struct State {
  int64_t a = 0;  // register: value id (0 = nil); mutex: 0 free / holder token id
  int64_t b = 0;  // fenced mutex: the largest fence granted so far (kNoFence = none)
  bool operator==(const State& o) const { return a == o.a && b == o.b; }
};

// 48 bytes: one per operation of a long history, so the times are read from its events
// and the positions are 32-bit (a history's lines are counted in an int).
struct Op {
  Kind kind = Kind::kRead;
  bool unknown = false;  // outcome unknown: may take effect after its call, or never
  int32_t call_seq = 0;  // position in the time-sorted history (tie-breaks, reports)
  int32_t ret_seq = 0;
  int64_t x = 0;         // value / expected value / token
  int64_t y = 0;         // cas new value / fence
  const Event* inv = nullptr;   // the invocation (the History outlives the check)
  const Event* comp = nullptr;  // its completion, null when there was none
  Nanos call_time() const { return inv->time; }
  Nanos ret_time() const { return comp != nullptr && !unknown ? comp->time : Nanos(0); }
};

// Each string is held once: `names` points at the map's own keys (a node's key never
// moves), or at `fresh` for names no other can equal (a copy of every lock token beside
// the map's was a sizeable part of a long history's search).
struct Interner {
  std::unordered_map<std::string, int64_t> ids;
  std::deque<std::string> fresh;
  std::vector<const std::string*> names;
  explicit Interner(const char* zero_name) { names.push_back(&fresh.emplace_back(zero_name)); }
  Interner(const Interner&) = delete;  // `names` points into this one's own storage
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;  // the map's nodes and the deque's strings stay put
  Interner& operator=(Interner&&) = default;
  int64_t Id(const std::string& s) {
    auto [it, inserted] = ids.emplace(s, static_cast<int64_t>(names.size()));
    if (inserted) names.push_back(&it->first);
    return it->second;
  }
  int64_t Fresh(const std::string& s) {  // never equal to any other id
    names.push_back(&fresh.emplace_back(s));
    return static_cast<int64_t>(names.size()) - 1;
  }
  const std::string& Name(int64_t id) const {
    static const std::string unknown = "?";
    return id >= 0 && static_cast<size_t>(id) < names.size() ? *names[id] : unknown;
  }
};

struct Partition {
  std::string key;
  std::vector<Op> ops;
  Interner values{"nil"};  // register values, or lock tokens ("free" at 0)
  explicit Partition(std::string k, bool lock)
      : key(std::move(k)), values(lock ? "free" : "nil") {}
};

inline bool IsMutexModel(Model m) {
  return m == Model::kMutex || m == Model::kOwnerMutex || m == Model::kFencedMutex;
}

// dump() that never throws on strings that are not UTF-8 (other tools' histories).
std::string Dump(const nlohmann::json& v);
// A string as itself, anything else as its JSON text (for counterexample lines).
std::string JsonText(const nlohmann::json& v);

// The sequential models: whether `op` may take effect in state `s`, and the state after it.
inline bool Step(Model m, const State& s, const Op& op, State* out) {
  *out = s;
  switch (m) {
    case Model::kRegister:
    case Model::kCasRegister:
      switch (op.kind) {
        case Kind::kRead: return s.a == op.x;
        case Kind::kWrite: out->a = op.x; return true;
        case Kind::kCasOk:
          if (s.a != op.x) return false;
          out->a = op.y;
          return true;
        case Kind::kCasFail: return s.a != op.x;
        default: return false;
      }
    case Model::kMutex:
      switch (op.kind) {
        case Kind::kAcquire:
          if (s.a != 0) return false;
          out->a = 1;
          return true;
        case Kind::kRelease:
          if (s.a == 0) return false;
          out->a = 0;
          return true;
        case Kind::kRenew: return s.a != 0;
        default: return false;
      }
    case Model::kOwnerMutex:
    case Model::kFencedMutex:
      switch (op.kind) {
        case Kind::kAcquire:
          if (s.a != 0) return false;
          if (m == Model::kFencedMutex && op.y != kNoFence) {
            if (s.b != kNoFence && op.y <= s.b) return false;
            out->b = op.y;
          }
          out->a = op.x;
          return true;
        case Kind::kRelease:
          if (s.a != op.x) return false;
          out->a = 0;
          return true;
        case Kind::kRenew: return s.a == op.x;
        case Kind::kNotHeld:
          if (s.a == op.x) out->a = 0;
          return true;
        default: return false;
      }
  }
  return false;
}

// Every state `op` may lead to from `s` (0, 1 or 2 of them, into out[0..]): Step()'s one,
// and for kNotHeld on the token's own hold, both readings (still held, and free).
inline int Steps(Model m, const State& s, const Op& op, State out[2]) {
  if (!Step(m, s, op, &out[0])) return 0;
  if (op.kind != Kind::kNotHeld || out[0] == s) return 1;
  out[1] = s;
  return 2;
}

State InitialState(Model m);
// The state as a reader would say it ("held by <token>, last fence 7").
std::string StateText(Model m, const State& s, const Interner& names);

}  // namespace locklab::checker::lin
