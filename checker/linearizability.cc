#include "checker/linearizability.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <sstream>
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
  size_t display = 0;    // index into Partition::display
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
  std::vector<LinOperation> display;
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
    LinOperation d;
    d.process = inv.process;
    d.f = f;
    d.key = inv.key;
    d.input = inv.value;
    d.output = unknown ? nlohmann::json() : out;
    d.outcome = unknown ? "unknown" : (t == EventType::kFail ? "fail" : "ok");
    d.invoke_index = inv.index;
    d.invoke_line = inv.line;
    if (c && !unknown) {
      d.complete_index = c->index;
      d.complete_line = c->line;
    } else if (c) {
      d.complete_line = c->line;
      d.complete_index = c->index;
    }
    op.display = p.display.size();
    p.display.push_back(std::move(d));
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
        if (it != pending.end()) {  // the earlier one never completed: unknown outcome
          Status s = Add(*sorted[it->second.at], it->second.at, nullptr, 0);
          if (!s.ok()) return s;
          it->second.at = i;
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

// Lowe's cache: the (linearized-set bitset, model state) configurations already explored.
// Entries live in one arena ([hash, a, b, bitset words...]); an open-addressing table indexes
// them. The bitset has the required ops' words first, then the unknown ops' words.
class ConfigCache {
 public:
  ConfigCache(size_t words, size_t budget) : words_(words), stride_(3 + words), budget_(budget) {
    slots_.assign(1024, 0);
  }
  bool Contains(uint64_t h, const State& s, const uint64_t* bits) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint32_t slot = slots_[i];
      if (slot == 0) return false;
      if (Same(slot, h, s, bits)) return true;
    }
  }
  // 1 inserted, 0 already present, -1 over the memory budget.
  int Insert(uint64_t h, const State& s, const uint64_t* bits) {
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
      uint32_t slot = slots_[i];
      if (slot == 0) break;
      if (Same(slot, h, s, bits)) return 0;
    }
    if (arena_.size() + stride_ > arena_.capacity()) {
      size_t want = std::max<size_t>(arena_.capacity() * 2, 1024 * stride_);
      if (Bytes(want, slots_.size()) > budget_) return -1;
      arena_.reserve(want);
    }
    if (count_ + 2 >= UINT32_MAX) return -1;
    size_t idx = count_++;
    arena_.push_back(h);
    arena_.push_back(static_cast<uint64_t>(s.a));
    arena_.push_back(static_cast<uint64_t>(s.b));
    arena_.insert(arena_.end(), bits, bits + words_);
    slots_[i] = static_cast<uint32_t>(idx + 1);
    if (count_ * 2 > slots_.size()) {
      if (Bytes(arena_.capacity(), slots_.size() * 2) > budget_) return -1;
      Grow();
    }
    peak_ = std::max(peak_, Bytes(arena_.capacity(), slots_.size()));
    return 1;
  }
  size_t count() const { return count_; }
  size_t peak_bytes() const { return peak_; }

 private:
  bool Same(uint32_t slot, uint64_t h, const State& s, const uint64_t* bits) const {
    const uint64_t* e = &arena_[(slot - 1) * stride_];
    return e[0] == h && static_cast<int64_t>(e[1]) == s.a && static_cast<int64_t>(e[2]) == s.b &&
           std::memcmp(e + 3, bits, words_ * 8) == 0;
  }
  static size_t Bytes(size_t arena_words, size_t slots) { return arena_words * 8 + slots * 4; }
  void Grow() {
    std::vector<uint32_t> n(slots_.size() * 2, 0);
    size_t mask = n.size() - 1;
    for (size_t k = 0; k < count_; ++k) {
      size_t i = arena_[k * stride_] & mask;
      while (n[i] != 0) i = (i + 1) & mask;
      n[i] = static_cast<uint32_t>(k + 1);
    }
    slots_.swap(n);
  }
  size_t words_, stride_, budget_;
  std::vector<uint64_t> arena_;
  std::vector<uint32_t> slots_;
  size_t count_ = 0;
  size_t peak_ = 0;
};

struct SearchOutcome {
  LinVerdict verdict = LinVerdict::kValid;
  std::string reason;
  uint64_t states = 0;
  size_t peak_bytes = 0;
  // Counterexample material (kInvalid).
  int dead_entry = -1;                  // entry index of the furthest failing return
  std::vector<State> dead_states;       // distinct states found there
  std::vector<int32_t> dead_stack_ops;  // op ids linearized on the first path that got there
};

struct EntryInfo {
  int32_t op;
  int32_t match;  // call: index of its return entry, or -1 (unknown outcome); return: -1
  bool call;
};

SearchOutcome Search(Model model, const Partition& part, Clock::time_point deadline,
                     size_t memory_budget) {
  SearchOutcome res;
  const std::vector<Op>& ops = part.ops;
  const int32_t n = static_cast<int32_t>(ops.size());
  // Entries in time order; on equal times calls first (concurrent, the permissive reading).
  struct Raw { Nanos t; int kind; int64_t seq; int32_t op; };
  std::vector<Raw> raw;
  raw.reserve(2 * ops.size());
  int32_t required = 0;
  for (int32_t i = 0; i < n; ++i) {
    raw.push_back({ops[i].call_time, 0, ops[i].call_seq, i});
    if (!ops[i].unknown) {
      raw.push_back({ops[i].ret_time, 1, ops[i].ret_seq, i});
      ++required;
    }
  }
  std::sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) {
    if (a.t != b.t) return a.t < b.t;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.seq < b.seq;
  });
  const int32_t E = static_cast<int32_t>(raw.size());
  // Entries 1..E; 0 is the head sentinel, E+1 the tail.
  std::vector<EntryInfo> ent(E + 2);
  std::vector<int32_t> call_of(n, -1);
  for (int32_t k = 0; k < E; ++k) {
    ent[k + 1] = {raw[k].op, -1, raw[k].kind == 0};
    if (raw[k].kind == 0) call_of[raw[k].op] = k + 1;
  }
  for (int32_t k = 0; k < E; ++k) {
    if (raw[k].kind == 1) ent[call_of[raw[k].op]].match = k + 1;
  }
  std::vector<int32_t> next(E + 2), prev(E + 2);
  for (int32_t k = 0; k <= E + 1; ++k) {
    next[k] = k + 1;
    prev[k] = k - 1;
  }
  const int32_t tail = E + 1;
  auto lift = [&](int32_t e) {
    next[prev[e]] = next[e];
    prev[next[e]] = prev[e];
    int32_t r = ent[e].match;
    if (r >= 0) {
      next[prev[r]] = next[r];
      prev[next[r]] = prev[r];
    }
  };
  auto unlift = [&](int32_t e) {
    int32_t r = ent[e].match;
    if (r >= 0) {
      next[prev[r]] = r;
      prev[next[r]] = r;
    }
    next[prev[e]] = e;
    prev[next[e]] = e;
  };

  // Required ops take the first bit words, unknown ops the following ones.
  std::vector<int32_t> bit(n);
  int32_t nreq = 0, nunk = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (!ops[i].unknown) bit[i] = nreq++;
  }
  const size_t rwords = (static_cast<size_t>(nreq) + 63) / 64;
  for (int32_t i = 0; i < n; ++i) {
    if (ops[i].unknown) bit[i] = static_cast<int32_t>(rwords * 64) + nunk++;
  }
  const size_t words = std::max<size_t>(rwords + (static_cast<size_t>(nunk) + 63) / 64, 1);
  std::vector<uint64_t> bits(words, 0);
  std::vector<uint64_t> zob(n);
  for (int32_t i = 0; i < n; ++i) zob[i] = Mix(0x5bd1e995ULL + static_cast<uint64_t>(i) * 7919);
  std::vector<int32_t> unknown_on_stack;  // unknown ops applied on the current path
  ConfigCache cache(words, memory_budget);
  auto flip = [&](int32_t o) { bits[bit[o] >> 6] ^= uint64_t(1) << (bit[o] & 63); };
  // Dominance: every continuation of (R, U, s) is one of (R, U - {u}, s) as well (skip u:
  // an unknown op has no return entry, so nothing forces it). If that smaller configuration
  // was seen, this one adds nothing. Probes the immediate subsets only (cheap, and sound).
  auto dominated = [&](uint64_t nh, const State& ns) {
    size_t k = unknown_on_stack.size();
    for (size_t j = 0; j < k && j < 24; ++j) {
      int32_t u = unknown_on_stack[k - 1 - j];
      flip(u);
      bool seen = cache.Contains(Mix(nh ^ zob[u] ^ StateHash(ns)), ns, bits.data());
      flip(u);
      if (seen) return true;
    }
    return false;
  };

  struct Frame { int32_t entry; State state; uint64_t h; };
  std::vector<Frame> stack;
  stack.reserve(n);
  State s = InitialState(model);
  uint64_t h = 0;
  int32_t left = required;
  int32_t e = next[0];
  uint32_t tick = 0;
  while (true) {
    if (left == 0) break;  // every op with a known outcome is placed: linearizable
    if ((++tick & 1023) == 0 && Clock::now() > deadline) {
      res.verdict = LinVerdict::kUnknown;
      res.reason = "time budget exhausted";
      break;
    }
    if (e != tail && ent[e].call) {
      int32_t o = ent[e].op;
      State ns;
      if (Step(model, s, ops[o], &ns)) {
        flip(o);
        uint64_t nh = h ^ zob[o];
        int r = 0;
        if (ops[o].unknown) unknown_on_stack.push_back(o);
        if (!dominated(nh, ns)) r = cache.Insert(Mix(nh ^ StateHash(ns)), ns, bits.data());
        if (r != 1 && ops[o].unknown) unknown_on_stack.pop_back();
        if (r == 1) {
          stack.push_back({e, s, h});
          s = ns;
          h = nh;
          lift(e);
          if (!ops[o].unknown) --left;
          e = next[0];
          continue;
        }
        flip(o);
        if (r < 0) {
          res.verdict = LinVerdict::kUnknown;
          res.reason = "memory budget exhausted";
          break;
        }
      }
      e = next[e];
      continue;
    }
    // A return entry (or the end): the op it closes cannot come next here. Backtrack.
    if (e != tail) {
      if (e > res.dead_entry) {
        res.dead_entry = e;
        res.dead_states.clear();
        res.dead_stack_ops.clear();
        for (const Frame& f : stack) res.dead_stack_ops.push_back(ent[f.entry].op);
      }
      if (e == res.dead_entry && res.dead_states.size() < 8 &&
          std::find(res.dead_states.begin(), res.dead_states.end(), s) == res.dead_states.end()) {
        res.dead_states.push_back(s);
      }
    }
    if (stack.empty()) {
      res.verdict = LinVerdict::kInvalid;
      break;
    }
    Frame f = stack.back();
    stack.pop_back();
    int32_t o = ent[f.entry].op;
    flip(o);
    if (ops[o].unknown) unknown_on_stack.pop_back();
    s = f.state;
    h = f.h;
    if (!ops[o].unknown) ++left;
    unlift(f.entry);
    e = next[f.entry];
  }
  res.states = cache.count();
  res.peak_bytes = cache.peak_bytes();
  if (res.verdict == LinVerdict::kInvalid) {
    // From here on dead_entry names the op whose completion could not be placed.
    res.dead_entry = ent[res.dead_entry].op;
  }
  return res;
}

LinCounterexample MakeCounterexample(Model model, const Partition& part,
                                     const SearchOutcome& so) {
  LinCounterexample cx;
  cx.key = part.key;
  const Op& failed = part.ops[so.dead_entry];
  cx.failed = part.display[failed.display];
  // The prefix ends with the failed op's completion; concurrent = invoked by then, not yet
  // completed before it.
  Nanos end = failed.ret_time;
  int64_t end_seq = failed.ret_seq;
  auto before_end = [&](Nanos t, int64_t seq, bool is_call) {
    if (t != end) return t < end;
    return is_call || seq <= end_seq;
  };
  for (const Op& op : part.ops) {
    if (before_end(op.call_time, op.call_seq, true)) ++cx.prefix_events;
    if (!op.unknown && before_end(op.ret_time, op.ret_seq, false)) ++cx.prefix_events;
  }
  for (const Op& op : part.ops) {
    if (!before_end(op.call_time, op.call_seq, true)) continue;
    bool open = op.unknown || !before_end(op.ret_time, op.ret_seq, false) ||
                (op.ret_time == end && op.ret_seq == end_seq);
    if (open) cx.concurrent.push_back(part.display[op.display]);
  }
  for (const State& s : so.dead_states) cx.states_tried.push_back(StateText(model, s, part.values));
  size_t from = so.dead_stack_ops.size() > 12 ? so.dead_stack_ops.size() - 12 : 0;
  for (size_t i = from; i < so.dead_stack_ops.size(); ++i) {
    cx.longest_linearization_tail.push_back(part.display[part.ops[so.dead_stack_ops[i]].display]);
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
    SearchOutcome so = Search(m, part, deadline, o.memory_budget_bytes);
    r.states_explored += so.states;
    r.peak_memory_bytes = std::max(r.peak_memory_bytes, so.peak_bytes);
    if (so.verdict == LinVerdict::kUnknown) {
      if (!unknown) r.reason = so.reason + (key.empty() ? "" : " on key " + key);
      unknown = true;
      if (Clock::now() > deadline) break;
    } else if (so.verdict == LinVerdict::kInvalid) {
      int64_t seq = part.ops[so.dead_entry].ret_seq;  // earliest completion wins
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
