#include "checker/linearizability.h"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace locklab::checker {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kNoFence = INT64_MIN;

enum class Kind : uint8_t { kRead, kWrite, kCasOk, kCasFail, kAcquire, kRelease, kRenew };

// A model state: two integers are enough for every model here (interned values/tokens).
struct State {
  int64_t a = 0;  // register: value id (0 = nil); mutex: 0 free / holder token id
  int64_t b = 0;  // fenced mutex: the largest fence granted so far (kNoFence = none)
  bool operator==(const State& o) const { return a == o.a && b == o.b; }
};

struct Op {
  Kind kind = Kind::kRead;
  bool unknown = false;  // outcome unknown: may take effect after its call, or never
  int64_t x = 0;         // value / expected value / token
  int64_t y = 0;         // cas new value / fence
  Nanos call_time{0};
  Nanos ret_time{0};
  int64_t call_seq = 0;  // position in the time-sorted history (tie-breaks, reports)
  int64_t ret_seq = 0;
  const Event* inv = nullptr;   // the invocation (for reports; the History outlives the check)
  const Event* comp = nullptr;  // its completion, null when there was none
};

struct Interner {
  std::unordered_map<std::string, int64_t> ids;
  std::vector<std::string> names;
  explicit Interner(const char* zero_name) { names.push_back(zero_name); }
  int64_t Id(const std::string& s) {
    auto [it, inserted] = ids.emplace(s, static_cast<int64_t>(names.size()));
    if (inserted) names.push_back(s);
    return it->second;
  }
  int64_t Fresh(const std::string& s) {  // never equal to any other id
    names.push_back(s);
    return static_cast<int64_t>(names.size()) - 1;
  }
  const std::string& Name(int64_t id) const {
    static const std::string unknown = "?";
    return id >= 0 && static_cast<size_t>(id) < names.size() ? names[id] : unknown;
  }
};

struct Partition {
  std::string key;
  std::vector<Op> ops;
  Interner values{"nil"};  // register values, or lock tokens ("free" at 0)
  explicit Partition(std::string k, bool lock)
      : key(std::move(k)), values(lock ? "free" : "nil") {}
};

bool IsMutexModel(Model m) {
  return m == Model::kMutex || m == Model::kOwnerMutex || m == Model::kFencedMutex;
}

// dump() that never throws on strings that are not UTF-8 (other tools' histories).
std::string Dump(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return Dump(v);
}

// ---- Sequential models ---------------------------------------------------------------------

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
        default: return false;
      }
  }
  return false;
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

// ---- Building operations from events --------------------------------------------------------

Status Bad(const std::string& name, const Event& e, const std::string& field,
           const std::string& what) {
  std::string where = (name.empty() ? "" : name + ":") + std::to_string(e.line);
  return Status::BadInput(where + ": field '" + field + "': " + what);
}

// Register values: integers, null, or {"value":n,...} (a fenced write); anything else is
// compared by its JSON text.
int64_t RegisterValue(Interner* in, const nlohmann::json& v) {
  if (v.is_null()) return 0;
  if (v.is_object()) {
    auto it = v.find("value");
    if (it != v.end()) return RegisterValue(in, *it);
  }
  return in->Id(Dump(v));
}

std::string TokenOf(const nlohmann::json& v) {
  if (!v.is_object()) return "";
  auto it = v.find("token");
  if (it == v.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : Dump(*it);
}

struct Builder {
  Model model;
  const LinearizabilityOptions& options;
  const std::string& name;
  std::map<std::string, Partition> partitions;
  std::unordered_map<int64_t, std::string> last_token;  // per process, last acquired token

  Partition& Part(const std::string& key) {
    auto it = partitions.find(key);
    if (it == partitions.end()) {
      it = partitions.emplace(key, Partition(key, IsMutexModel(model))).first;
    }
    return it->second;
  }

  // `c` is null when the operation never completed.
  Status Add(const Event& inv, int64_t inv_seq, const Event* c, int64_t c_seq) {
    EventType t = c ? c->type : EventType::kInfo;
    bool unknown = t == EventType::kInfo;
    Op op;
    op.unknown = unknown;
    op.call_time = inv.time;
    op.call_seq = inv_seq;
    if (!unknown) {
      op.ret_time = c->time;
      op.ret_seq = c_seq;
    }
    const std::string& f = inv.f;
    Partition& p = Part(inv.key);
    static const nlohmann::json kNull;
    const nlohmann::json& out = c ? c->value : kNull;
    if (t == EventType::kFail) {
      if (!(f == "cas" && options.cas_fail_is_observation)) return Status::Ok();  // no effect
    }
    if (f == "read") {
      if (unknown) return Status::Ok();  // constrains nothing
      op.kind = Kind::kRead;
      op.x = RegisterValue(&p.values, out);
    } else if (f == "write") {
      op.kind = Kind::kWrite;
      const nlohmann::json& v = inv.value.is_null() ? out : inv.value;
      op.x = RegisterValue(&p.values, v);
    } else if (f == "cas") {
      const nlohmann::json* v = &inv.value;
      if (!(v->is_array() && v->size() == 2)) v = &out;
      if (!(v->is_array() && v->size() == 2)) {
        return Bad(name, inv, "value", "a cas needs [expected new]");
      }
      op.x = RegisterValue(&p.values, (*v)[0]);
      op.y = RegisterValue(&p.values, (*v)[1]);
      op.kind = t == EventType::kFail ? Kind::kCasFail : Kind::kCasOk;
    } else if (f == "acquire") {
      op.kind = Kind::kAcquire;
      std::string tok = TokenOf(out);
      if (tok.empty()) tok = TokenOf(inv.value);
      if (!tok.empty()) {
        op.x = p.values.Id(tok);
      } else if (unknown) {
        op.x = p.values.Fresh("unknown token of p" + ProcessName(inv.process) + "@" +
                              std::to_string(inv.line));
      } else {
        tok = "p" + ProcessName(inv.process);
        op.x = p.values.Id(tok);
      }
      if (!tok.empty()) last_token[inv.process] = tok;
      op.y = kNoFence;
      if (out.is_object()) {
        auto it = out.find("fence");
        if (it != out.end() && !it->is_null()) {
          if (!it->is_number_integer()) return Bad(name, *c, "value", "fence must be an integer");
          op.y = it->get<int64_t>();
          if (op.y == kNoFence) op.y = kNoFence + 1;
        }
      }
    } else if (f == "release" || f == "renew") {
      if (f == "renew" && unknown) return Status::Ok();  // changes no state
      op.kind = f == "release" ? Kind::kRelease : Kind::kRenew;
      std::string tok = TokenOf(inv.value);
      if (tok.empty()) tok = TokenOf(out);
      if (tok.empty()) {
        auto it = last_token.find(inv.process);
        tok = it != last_token.end() ? it->second : "p" + ProcessName(inv.process);
      }
      op.x = p.values.Id(tok);
    } else {
      return Status::Ok();
    }
    op.inv = &inv;
    op.comp = c;
    p.ops.push_back(op);
    return Status::Ok();
  }

  Status Build(const History& h) {
    // Time order (ties by index), as SortedByTime, but without copying the events.
    std::vector<const Event*> sorted;
    sorted.reserve(h.size());
    for (const Event& e : h) {
      if (e.process == kNemesisProcess || !ModelHasFunction(model, e.f)) continue;
      sorted.push_back(&e);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Event* a, const Event* b) {
      if (a->time != b->time) return a->time < b->time;
      return a->index < b->index;
    });
    struct Pending { size_t at; };
    std::unordered_map<int64_t, Pending> pending;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const Event& e = *sorted[i];
      if (e.type == EventType::kInvoke) {
        auto it = pending.find(e.process);
        if (it != pending.end()) {
          // A process is sequential: a second invocation before the first one's completion
          // is a malformed history (Jepsen gives a process whose op is lost a new id).
          const Event& first = *sorted[it->second.at];
          return Bad(name, e, "type", "process " + ProcessName(e.process) + " invokes '" + e.f +
                                          "' while its '" + first.f + "' of line " +
                                          std::to_string(first.line) + " has not completed");
        } else {
          pending.emplace(e.process, Pending{i});
        }
        continue;
      }
      auto it = pending.find(e.process);
      if (it == pending.end()) {
        return Bad(name, e, "type", std::string("'") + EventTypeName(e.type) +
                                        "' completion without a pending invocation by process " +
                                        ProcessName(e.process));
      }
      const Event& inv = *sorted[it->second.at];
      if (inv.f != e.f) {
        return Bad(name, e, "f", "completion '" + e.f + "' does not match invocation '" + inv.f +
                                     "' at line " + std::to_string(inv.line));
      }
      Status s = Add(inv, it->second.at, &e, i);
      if (!s.ok()) return s;
      pending.erase(it);
    }
    std::vector<size_t> rest;
    for (auto& [proc, p] : pending) rest.push_back(p.at);
    std::sort(rest.begin(), rest.end());
    for (size_t at : rest) {
      Status s = Add(*sorted[at], at, nullptr, 0);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
};

// ---- The search ----------------------------------------------------------------------------
//
// A sweep over the partition's entries in time order ("just-in-time linearization", as in
// Lowe's and Horn & Kroening's checkers). The search keeps every configuration a
// linearization of the history so far can be in:
//   * the model state;
//   * which of the *open* operations with a known outcome are already linearized (a bitset
//     over the slots of the operations open now, never over the whole history: its size is
//     the history's concurrency, not its length);
//   * which operations of unknown outcome may still take effect, as a count per class of
//     interchangeable operations (same kind and arguments, so same effect).
// A call opens an operation (or adds an unknown one to every configuration's pool). The return
// of an operation keeps only the configurations that can linearize it by then: each one that
// has not yet does so after linearizing any of the other open operations first (the closure).
// No configuration left = no linearization of this prefix: the history is invalid, and this
// return is the end of the shortest prefix that cannot be linearized. Configurations that are
// the same except for a pool that is a subset of another's are dropped (dominated: every
// continuation of the smaller one is one of the larger one's, by never using the extra ops).
//
// Rules for operations of unknown outcome, each proved in the comment where it is applied and
// checked against a brute-force checker by linearizability_property_test:
//   R1 (owner models) a token whose every operation is unknown is dropped with them all;
//   R2 (owner models) once the last event of a token's operations has passed, its unknown
//      acquires leave the pools, and its unknown releases stay only (once) where it holds;
//   R3 (registers, unless a failed cas is an observation) an unknown write of a value that no
//      later read or cas observes is dropped, and leaves the pools after its last observer.

inline uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t StateHash(const State& s) {
  return Mix(static_cast<uint64_t>(s.a) * 0x9E3779B97F4A7C15ULL ^
             Mix(static_cast<uint64_t>(s.b)));
}

constexpr int kTailLength = 12;

struct UnknownCount {
  int32_t cls;    // class of interchangeable unknown operations
  int32_t count;  // how many of them may still take effect
  bool operator==(const UnknownCount& o) const { return cls == o.cls && count == o.count; }
};

struct Config {
  State s;
  std::vector<uint64_t> linearized;    // by open slot
  std::vector<UnknownCount> pool;      // by class, ascending; counts > 0
  std::array<int32_t, kTailLength> tail{};  // the last ops linearized on one path (ring)
  uint8_t tail_size = 0, tail_pos = 0;

  void PushTail(int32_t op) {
    tail[tail_pos] = op;
    tail_pos = static_cast<uint8_t>((tail_pos + 1) % kTailLength);
    if (tail_size < kTailLength) ++tail_size;
  }
  std::vector<int32_t> Tail() const {
    std::vector<int32_t> out;
    for (int i = 0; i < tail_size; ++i) {
      out.push_back(tail[(tail_pos + kTailLength - tail_size + i) % kTailLength]);
    }
    return out;
  }
  bool Bit(int32_t slot) const { return (linearized[slot >> 6] >> (slot & 63)) & 1; }
  void SetBit(int32_t slot) { linearized[slot >> 6] |= uint64_t(1) << (slot & 63); }
  void ClearBit(int32_t slot) { linearized[slot >> 6] &= ~(uint64_t(1) << (slot & 63)); }
  size_t Bytes() const {
    return sizeof(Config) + linearized.capacity() * 8 + pool.capacity() * sizeof(UnknownCount);
  }
};

inline uint64_t CoreHash(const Config& c) {  // state + linearized set, not the pool
  uint64_t h = StateHash(c.s);
  for (uint64_t w : c.linearized) h = Mix(h ^ w);
  return h;
}

// `a` can do whatever `b` can: same state and linearized set (checked by the caller), and a
// pool that contains b's.
bool PoolCovers(const std::vector<UnknownCount>& a, const std::vector<UnknownCount>& b) {
  size_t i = 0;
  for (const UnknownCount& u : b) {
    while (i < a.size() && a[i].cls < u.cls) ++i;
    if (i == a.size() || a[i].cls != u.cls || a[i].count < u.count) return false;
  }
  return true;
}

// A set of configurations without dominated members. Reused between steps (clear()).
class ConfigSet {
 public:
  // False when `c` (or one that covers it) is already in.
  bool Insert(Config&& c) {
    uint64_t h = CoreHash(c);
    auto& bucket = index_[h];
    for (int32_t i : bucket) {
      const Config& o = items_[i];
      if (dead_[i] || !(o.s == c.s) || o.linearized != c.linearized) continue;
      if (PoolCovers(o.pool, c.pool)) return false;
    }
    if (!c.pool.empty()) {  // drop the ones the newcomer covers
      for (int32_t i : bucket) {
        const Config& o = items_[i];
        if (dead_[i] || !(o.s == c.s) || o.linearized != c.linearized) continue;
        if (PoolCovers(c.pool, o.pool)) {
          dead_[i] = true;
          --live_;
        }
      }
    }
    bytes_ += c.Bytes() + 16;
    bucket.push_back(static_cast<int32_t>(items_.size()));
    items_.push_back(std::move(c));
    dead_.push_back(false);
    ++live_;
    return true;
  }
  void clear() {
    items_.clear();
    dead_.clear();
    index_.clear();
    live_ = 0;
    bytes_ = 0;
  }
  size_t size() const { return items_.size(); }  // including dead ones
  size_t live() const { return live_; }
  bool dead(size_t i) const { return dead_[i]; }
  const Config& operator[](size_t i) const { return items_[i]; }
  size_t bytes() const { return bytes_; }
  // Moves the live configurations out.
  void TakeLive(std::vector<Config>* out) {
    out->clear();
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!dead_[i]) out->push_back(std::move(items_[i]));
    }
    clear();
  }

 private:
  std::vector<Config> items_;
  std::vector<bool> dead_;
  std::unordered_map<uint64_t, std::vector<int32_t>> index_;
  size_t live_ = 0;
  size_t bytes_ = 0;
};

void AddToPool(std::vector<UnknownCount>* pool, int32_t cls, int32_t n) {
  auto it = std::lower_bound(pool->begin(), pool->end(), cls,
                             [](const UnknownCount& u, int32_t c) { return u.cls < c; });
  if (it != pool->end() && it->cls == cls) {
    it->count += n;
  } else {
    pool->insert(it, {cls, n});
  }
}

struct SweepOutcome {
  LinVerdict verdict = LinVerdict::kValid;
  std::string reason;
  uint64_t states = 0;
  size_t peak_bytes = 0;
  size_t dropped_unknown = 0;  // unknown ops that rules R1/R3 showed cannot matter
  // kInvalid: the op whose return could not be placed, and what the search had there.
  int32_t failed_op = -1;
  int64_t prefix_events = 0;
  std::vector<State> dead_states;
  std::vector<int32_t> tail;
  std::vector<int32_t> open_ops;  // open ops (known outcome) and live unknown ones, at the end
};

class Sweep {
 public:
  Sweep(Model model, const Partition& part, const LinearizabilityOptions& options,
        Clock::time_point deadline)
      : model_(model), part_(part), ops_(part.ops), options_(options), deadline_(deadline) {}

  SweepOutcome Run() {
    BuildEntries();
    ClassifyUnknown();
    const int32_t n_entries = static_cast<int32_t>(entries_.size());
    Config first;
    first.s = InitialState(model_);
    first.linearized.assign(words_, 0);
    configs_.push_back(std::move(first));
    std::vector<int32_t> slot_op(static_cast<size_t>(words_) * 64, -1);
    std::vector<int32_t> free_slots;
    for (int32_t s = words_ * 64 - 1; s >= 0; --s) free_slots.push_back(s);
    op_slot_.assign(ops_.size(), -1);
    for (int32_t k = 0; k < n_entries; ++k) {
      const Entry& en = entries_[k];
      int32_t o = en.op;
      if ((k & 255) == 0 && Clock::now() > deadline_) out_of_time_ = true;
      if (out_of_time_) return OutOfTime(k);
      if (en.call) {
        if (dropped_[o]) continue;
        if (ops_[o].unknown) {
          for (Config& c : configs_) AddToPool(&c.pool, class_of_[o], 1);
          live_unknown_.push_back(o);
        } else {
          int32_t slot = free_slots.back();
          free_slots.pop_back();
          slot_op[slot] = o;
          op_slot_[o] = slot;
          open_.push_back(o);
        }
      } else {
        if (!Return(o)) {
          res_.verdict = LinVerdict::kInvalid;
          res_.failed_op = o;
          res_.prefix_events = k + 1;
          break;
        }
        int32_t slot = op_slot_[o];
        slot_op[slot] = -1;
        free_slots.push_back(slot);
        open_.erase(std::find(open_.begin(), open_.end(), o));
      }
      for (int32_t cls : prune_at_[k]) Prune(cls);
      if (!prune_at_[k].empty()) Dedup();
      if (out_of_time_) return OutOfTime(k);
      if (over_budget_) {
        return Stop("memory budget (" + std::to_string(options_.memory_budget_bytes >> 20) +
                    " MiB) exhausted", k);
      }
    }
    return Finish();
  }

 private:
  struct Entry {
    int32_t op;
    bool call;
  };

  SweepOutcome OutOfTime(int32_t k) {
    return Stop("time budget (" + std::to_string(options_.time_budget.count()) + " ms) exhausted",
                k);
  }

  SweepOutcome Stop(const std::string& why, int32_t k) {
    res_.verdict = LinVerdict::kUnknown;
    const Op& op = ops_[entries_[k].op];
    const Event* e = entries_[k].call || !op.comp ? op.inv : op.comp;
    res_.reason = why + (part_.key.empty() ? "" : " on key " + part_.key) + " at event " +
                  std::to_string(k + 1) + " of " + std::to_string(entries_.size()) +
                  " (line " + std::to_string(e->line) + ")";
    return Finish();
  }

  SweepOutcome Finish() {
    res_.peak_bytes = peak_bytes_;
    res_.states = states_;
    return std::move(res_);
  }

  void BuildEntries() {
    struct Raw { Nanos t; int kind; int64_t seq; int32_t op; };
    std::vector<Raw> raw;
    raw.reserve(2 * ops_.size());
    for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i) {
      raw.push_back({ops_[i].call_time, 0, ops_[i].call_seq, i});
      if (!ops_[i].unknown) raw.push_back({ops_[i].ret_time, 1, ops_[i].ret_seq, i});
    }
    // Time order; on equal times calls first (concurrent: the permissive reading).
    std::sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) {
      if (a.t != b.t) return a.t < b.t;
      if (a.kind != b.kind) return a.kind < b.kind;
      return a.seq < b.seq;
    });
    entries_.reserve(raw.size());
    call_entry_.assign(ops_.size(), -1);
    ret_entry_.assign(ops_.size(), -1);
    int32_t open = 0, max_open = 0;
    for (const Raw& r : raw) {
      int32_t k = static_cast<int32_t>(entries_.size());
      entries_.push_back({r.op, r.kind == 0});
      if (r.kind == 0) {
        call_entry_[r.op] = k;
        if (!ops_[r.op].unknown) max_open = std::max(max_open, ++open);
      } else {
        ret_entry_[r.op] = k;
        --open;
      }
    }
    words_ = std::max<int32_t>(1, (max_open + 63) / 64);
  }

  bool OwnerModel() const { return model_ == Model::kOwnerMutex || model_ == Model::kFencedMutex; }

  // Classes of interchangeable unknown ops, and rules R1-R3.
  void ClassifyUnknown() {
    const int32_t n = static_cast<int32_t>(ops_.size());
    dropped_.assign(n, false);
    class_of_.assign(n, -1);
    prune_at_.assign(entries_.size(), {});
    constexpr int32_t kNever = INT32_MAX;
    std::map<std::tuple<int, int64_t, int64_t>, int32_t> ids;
    std::vector<int32_t> class_prune;  // entry after which the class leaves the pools
    auto class_for = [&](const Op& op) {
      std::tuple<int, int64_t, int64_t> key{static_cast<int>(op.kind), op.x, op.y};
      if (model_ == Model::kMutex) key = {static_cast<int>(op.kind), 0, 0};  // no owners
      auto [it, inserted] = ids.emplace(key, static_cast<int32_t>(class_rep_.size()));
      if (inserted) {
        class_rep_.push_back(op);
        class_first_op_.push_back(static_cast<int32_t>(&op - ops_.data()));
        class_prune.push_back(-1);
        class_token_.push_back(op.x);
      }
      return it->second;
    };
    if (OwnerModel()) {
      // R1: while a token is held, only that token's operations can apply; so operations of a
      // token none of which had a known outcome can only ever free what they took, or leave
      // the lock held by nobody who will act again. Any linearization that uses them stays one
      // without them. R2: after the token's last event, the same argument holds for its
      // unknown acquires; its unknown release can still free a lock the token holds (one is
      // enough: taking the lock again with an unknown acquire of the same token gains nothing).
      std::unordered_map<int64_t, int32_t> last_entry;  // token -> last entry of its known ops
      std::unordered_map<int64_t, bool> any_known;
      for (int32_t i = 0; i < n; ++i) {
        int64_t t = ops_[i].x;
        int32_t last = ops_[i].unknown ? call_entry_[i] : ret_entry_[i];
        auto [it, inserted] = last_entry.emplace(t, last);
        if (!inserted) it->second = std::max(it->second, last);
        any_known[t] = any_known[t] || !ops_[i].unknown;
      }
      for (int32_t i = 0; i < n; ++i) {
        if (!ops_[i].unknown) continue;
        if (!any_known[ops_[i].x]) {
          dropped_[i] = true;
          ++res_.dropped_unknown;
          continue;
        }
        int32_t c = class_for(ops_[i]);
        class_of_[i] = c;
        class_prune[c] = std::max(class_prune[c], last_entry[ops_[i].x]);
      }
    } else if ((model_ == Model::kRegister || model_ == Model::kCasRegister) &&
               !options_.cas_fail_is_observation) {
      // R3: between an unknown write of v and the next write, only reads of v and cases
      // expecting v need the value to be v (a failed cas had no effect and is not checked).
      // With no such observer left, removing the write keeps every linearization valid.
      std::unordered_map<int64_t, int32_t> last_observer;  // value -> last return, or kNever
      for (int32_t i = 0; i < n; ++i) {
        const Op& op = ops_[i];
        if (op.kind != Kind::kRead && op.kind != Kind::kCasOk) continue;
        int32_t until = op.unknown ? kNever : ret_entry_[i];
        auto [it, inserted] = last_observer.emplace(op.x, until);
        if (!inserted) it->second = std::max(it->second, until);
      }
      for (int32_t i = 0; i < n; ++i) {
        if (!ops_[i].unknown) continue;
        int32_t until = kNever;
        if (ops_[i].kind == Kind::kWrite) {
          auto it = last_observer.find(ops_[i].x);
          until = it == last_observer.end() ? -1 : it->second;
          if (until < call_entry_[i]) {
            dropped_[i] = true;
            ++res_.dropped_unknown;
            continue;
          }
        }
        int32_t c = class_for(ops_[i]);
        class_of_[i] = c;
        class_prune[c] = std::max(class_prune[c], until);
      }
    } else {
      for (int32_t i = 0; i < n; ++i) {
        if (ops_[i].unknown) class_of_[i] = class_for(ops_[i]);
      }
    }
    for (size_t c = 0; c < class_prune.size(); ++c) {
      if (class_prune[c] >= 0 && class_prune[c] != kNever) {
        prune_at_[class_prune[c]].push_back(static_cast<int32_t>(c));
      }
    }
  }

  void Prune(int32_t cls) {
    const Op& rep = class_rep_[cls];
    bool keep_one_if_held = OwnerModel() && rep.kind == Kind::kRelease;  // R2
    for (Config& c : configs_) {
      auto it = std::lower_bound(c.pool.begin(), c.pool.end(), cls,
                                 [](const UnknownCount& u, int32_t k) { return u.cls < k; });
      if (it == c.pool.end() || it->cls != cls) continue;
      if (keep_one_if_held && c.s.a == class_token_[cls]) {
        it->count = 1;
      } else {
        c.pool.erase(it);
      }
    }
    live_unknown_.erase(std::remove_if(live_unknown_.begin(), live_unknown_.end(),
                                       [&](int32_t o) { return class_of_[o] == cls; }),
                        live_unknown_.end());
  }

  void Dedup() {
    scratch_.clear();
    for (Config& c : configs_) scratch_.Insert(std::move(c));
    scratch_.TakeLive(&configs_);
  }

  void Account(size_t bytes) {
    peak_bytes_ = std::max(peak_bytes_, bytes);
    if (bytes > options_.memory_budget_bytes) over_budget_ = true;
  }

  // The return of `o`: keep the configurations that can have linearized it by now.
  bool Return(int32_t o) {
    const int32_t slot = op_slot_[o];
    next_.clear();
    visited_.clear();
    stack_.clear();
    size_t held = 0;  // the configurations being replaced, until the end of this step
    for (const Config& c : configs_) held += c.Bytes();
    for (Config& c : configs_) {
      if (c.Bit(slot)) {
        c.ClearBit(slot);
        next_.Insert(std::move(c));
      } else if (visited_.Insert(std::move(c))) {
        stack_.push_back(static_cast<int32_t>(visited_.size()) - 1);
      }
    }
    while (!stack_.empty() && !over_budget_ && !out_of_time_) {
      if ((++ticks_ & 1023) == 0 && Clock::now() > deadline_) out_of_time_ = true;
      int32_t idx = stack_.back();
      stack_.pop_back();
      if (visited_.dead(idx)) continue;
      const Config node = visited_[idx];  // a copy: Insert() may move the storage
      State ns;
      if (Step(model_, node.s, ops_[o], &ns)) {
        Config r = node;
        r.s = ns;
        r.PushTail(o);
        next_.Insert(std::move(r));
      }
      for (int32_t other : open_) {
        int32_t j = op_slot_[other];
        if (other == o || node.Bit(j) || !Step(model_, node.s, ops_[other], &ns)) continue;
        Config child = node;
        child.s = ns;
        child.SetBit(j);
        child.PushTail(other);
        if (visited_.Insert(std::move(child))) {
          stack_.push_back(static_cast<int32_t>(visited_.size()) - 1);
          ++states_;
        }
      }
      for (size_t u = 0; u < node.pool.size(); ++u) {
        int32_t cls = node.pool[u].cls;
        // An unknown op that leaves the state as it was only shrinks the pool: dominated.
        if (!Step(model_, node.s, class_rep_[cls], &ns) || ns == node.s) continue;
        Config child = node;
        child.s = ns;
        if (--child.pool[u].count == 0) child.pool.erase(child.pool.begin() + u);
        child.PushTail(class_first_op_[cls]);  // one member stands for its class
        if (visited_.Insert(std::move(child))) {
          stack_.push_back(static_cast<int32_t>(visited_.size()) - 1);
          ++states_;
        }
      }
      Account(visited_.bytes() + next_.bytes() + held);
    }
    if (next_.live() == 0 && !over_budget_ && !out_of_time_) {
      for (size_t i = 0; i < visited_.size() && res_.dead_states.size() < 8; ++i) {
        const State& s = visited_[i].s;
        if (std::find(res_.dead_states.begin(), res_.dead_states.end(), s) ==
            res_.dead_states.end()) {
          res_.dead_states.push_back(s);
        }
      }
      if (visited_.size() > 0) res_.tail = visited_[0].Tail();
      res_.open_ops = open_;
      for (int32_t u : live_unknown_) {
        if (res_.open_ops.size() >= 32) break;
        res_.open_ops.push_back(u);
      }
      return false;
    }
    next_.TakeLive(&configs_);
    return true;
  }


  const Model model_;
  const Partition& part_;
  const std::vector<Op>& ops_;
  const LinearizabilityOptions& options_;
  const Clock::time_point deadline_;
  std::vector<Entry> entries_;
  std::vector<int32_t> call_entry_, ret_entry_, op_slot_;
  int32_t words_ = 1;
  std::vector<bool> dropped_;
  std::vector<int32_t> class_of_;
  std::vector<Op> class_rep_;
  std::vector<int32_t> class_first_op_;  // an op of each class, for reports
  std::vector<int64_t> class_token_;
  std::vector<std::vector<int32_t>> prune_at_;
  std::vector<int32_t> open_;          // open ops with a known outcome
  std::vector<int32_t> live_unknown_;  // unknown ops called and still in the pools
  std::vector<Config> configs_;
  ConfigSet visited_, next_, scratch_;
  std::vector<int32_t> stack_;
  uint64_t states_ = 0;
  size_t peak_bytes_ = 0;
  bool over_budget_ = false;
  bool out_of_time_ = false;
  uint32_t ticks_ = 0;
  SweepOutcome res_;
};

LinOperation Display(const Op& op) {
  LinOperation d;
  const Event& inv = *op.inv;
  d.process = inv.process;
  d.f = inv.f;
  d.key = inv.key;
  d.input = inv.value;
  d.output = op.unknown || !op.comp ? nlohmann::json() : op.comp->value;
  d.outcome = op.unknown ? "unknown" : (op.comp->type == EventType::kFail ? "fail" : "ok");
  d.invoke_index = inv.index;
  d.invoke_line = inv.line;
  if (op.comp) {
    d.complete_index = op.comp->index;
    d.complete_line = op.comp->line;
  }
  return d;
}

LinCounterexample MakeCounterexample(Model model, const Partition& part,
                                     const SweepOutcome& so) {
  LinCounterexample cx;
  cx.key = part.key;
  cx.failed = Display(part.ops[so.failed_op]);
  cx.prefix_events = so.prefix_events;
  for (int32_t o : so.open_ops) cx.concurrent.push_back(Display(part.ops[o]));
  for (const State& s : so.dead_states) cx.states_tried.push_back(StateText(model, s, part.values));
  for (int32_t o : so.tail) {
    if (o >= 0) cx.longest_linearization_tail.push_back(Display(part.ops[o]));
  }
  return cx;
}

}  // namespace

bool ParseModel(const std::string& name, Model* out) {
  for (Model m : kAllModels) {
    if (name == ModelName(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

const char* ModelName(Model m) {
  switch (m) {
    case Model::kMutex: return "mutex";
    case Model::kOwnerMutex: return "owner-mutex";
    case Model::kFencedMutex: return "fenced-mutex";
    case Model::kRegister: return "register";
    case Model::kCasRegister: return "cas-register";
  }
  return "?";
}

const char* ModelDescription(Model m) {
  switch (m) {
    case Model::kMutex: return "a lock: acquire needs it free, anyone's release frees it";
    case Model::kOwnerMutex: return "a lock whose release and renew only the holder's token may do";
    case Model::kFencedMutex: return "owner-mutex whose acquire fences strictly grow";
    case Model::kRegister: return "a read/write register starting at nil";
    case Model::kCasRegister: return "a read/write/compare-and-set register starting at nil";
  }
  return "?";
}

const char* LinVerdictName(LinVerdict v) {
  switch (v) {
    case LinVerdict::kValid: return "valid";
    case LinVerdict::kInvalid: return "invalid";
    case LinVerdict::kUnknown: return "unknown";
  }
  return "?";
}

bool ModelHasFunction(Model m, const std::string& f) {
  switch (m) {
    case Model::kMutex:
    case Model::kOwnerMutex:
    case Model::kFencedMutex: return f == "acquire" || f == "release" || f == "renew";
    case Model::kRegister: return f == "read" || f == "write";
    case Model::kCasRegister: return f == "read" || f == "write" || f == "cas";
  }
  return false;
}

std::string LinOperation::ToString() const {
  std::ostringstream o;
  o << "p" << ProcessName(process) << " " << f;
  if (!input.is_null()) o << " " << JsonText(input);
  o << " -> " << outcome;
  if (outcome != "unknown" && !output.is_null() && f != "write") o << " " << JsonText(output);
  o << " (line " << invoke_line;
  if (complete_line) o << "-" << complete_line;
  o << ")";
  return o.str();
}

nlohmann::ordered_json LinOperation::ToJson() const {
  nlohmann::ordered_json j;
  j["process"] = process >= 0 ? nlohmann::ordered_json(process)
                              : nlohmann::ordered_json(ProcessName(process));
  j["f"] = f;
  if (!key.empty()) j["key"] = key;
  j["input"] = input;
  j["output"] = output;
  j["outcome"] = outcome;
  j["invoke_index"] = invoke_index;
  j["complete_index"] = complete_index >= 0 ? nlohmann::ordered_json(complete_index)
                                            : nlohmann::ordered_json();
  j["invoke_line"] = invoke_line;
  j["complete_line"] = complete_line ? nlohmann::ordered_json(complete_line)
                                     : nlohmann::ordered_json();
  return j;
}

nlohmann::ordered_json LinearizabilityResult::ToJson() const {
  nlohmann::ordered_json j;
  j["model"] = ModelName(model);
  j["verdict"] = LinVerdictName(verdict);
  j["linearizable"] = verdict == LinVerdict::kValid   ? nlohmann::ordered_json(true)
                      : verdict == LinVerdict::kInvalid ? nlohmann::ordered_json(false)
                                                        : nlohmann::ordered_json();
  j["operations"] = operations;
  j["keys"] = keys;
  j["states_explored"] = states_explored;
  j["dropped_unknown"] = dropped_unknown;
  j["peak_memory_bytes"] = peak_memory_bytes;
  j["elapsed_ms"] = elapsed_ms;
  if (!reason.empty()) j["reason"] = reason;
  if (counterexample) {
    const LinCounterexample& c = *counterexample;
    nlohmann::ordered_json x;
    x["key"] = c.key;
    x["failed"] = c.failed.ToJson();
    x["prefix_events"] = c.prefix_events;
    x["concurrent"] = nlohmann::ordered_json::array();
    for (const auto& op : c.concurrent) x["concurrent"].push_back(op.ToJson());
    x["states_tried"] = c.states_tried;
    x["longest_linearization_tail"] = nlohmann::ordered_json::array();
    for (const auto& op : c.longest_linearization_tail) {
      x["longest_linearization_tail"].push_back(op.ToJson());
    }
    j["counterexample"] = std::move(x);
  }
  return j;
}

std::string LinearizabilityResult::ToText() const {
  std::ostringstream o;
  o << ModelName(model) << ": " << LinVerdictName(verdict) << " (" << operations
    << " operations, " << keys << " key" << (keys == 1 ? "" : "s") << ", " << states_explored
    << " states, " << elapsed_ms << " ms)";
  if (!reason.empty()) o << ": " << reason;
  o << "\n";
  if (counterexample) {
    const LinCounterexample& c = *counterexample;
    o << "  no linearization of the history up to line " << c.failed.complete_line;
    if (!c.key.empty()) o << " on key " << c.key;
    o << " (" << c.prefix_events << " events): cannot place\n    " << c.failed.ToString()
      << "\n";
    o << "  operations concurrent there:\n";
    for (const auto& op : c.concurrent) o << "    " << op.ToString() << "\n";
    o << "  model states reached there:";
    for (const auto& s : c.states_tried) o << " [" << s << "]";
    o << "\n";
    if (!c.longest_linearization_tail.empty()) {
      o << "  one deepest attempt ended with:\n";
      for (const auto& op : c.longest_linearization_tail) o << "    " << op.ToString() << "\n";
    }
  }
  return o.str();
}

Status CheckLinearizability(const History& h, Model m, const LinearizabilityOptions& o,
                            const std::string& name, LinearizabilityResult* out) {
  auto start = Clock::now();
  Builder b{m, o, name, {}, {}};
  Status s = b.Build(h);
  if (!s.ok()) return s;
  LinearizabilityResult r;
  r.model = m;
  auto deadline = start + o.time_budget;
  bool unknown = false;
  int64_t best_seq = 0;
  for (auto& [key, part] : b.partitions) {
    if (part.ops.empty()) continue;
    ++r.keys;
    r.operations += part.ops.size();
    SweepOutcome so = Sweep(m, part, o, deadline).Run();
    r.states_explored += so.states;
    r.dropped_unknown += so.dropped_unknown;
    r.peak_memory_bytes = std::max(r.peak_memory_bytes, so.peak_bytes);
    if (so.verdict == LinVerdict::kUnknown) {
      if (!unknown) r.reason = so.reason;
      unknown = true;
      if (Clock::now() > deadline) break;
    } else if (so.verdict == LinVerdict::kInvalid) {
      int64_t seq = part.ops[so.failed_op].ret_seq;  // earliest completion wins
      if (!r.counterexample || seq < best_seq) {
        r.counterexample = MakeCounterexample(m, part, so);
        best_seq = seq;
      }
    }
  }
  if (r.counterexample) {
    r.verdict = LinVerdict::kInvalid;
    r.reason.clear();
  } else if (unknown) {
    r.verdict = LinVerdict::kUnknown;
  }
  r.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  *out = std::move(r);
  return Status::Ok();
}

LinearizabilityResult CheckLinearizability(const History& h, Model m,
                                           const LinearizabilityOptions& o) {
  LinearizabilityResult r;
  Status s = CheckLinearizability(h, m, o, "", &r);
  if (!s.ok()) {
    r = LinearizabilityResult();
    r.model = m;
    r.verdict = LinVerdict::kUnknown;
    r.reason = "bad input: " + s.message();
  }
  return r;
}

}  // namespace locklab::checker
