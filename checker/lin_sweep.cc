#include "checker/lin_sweep.h"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "checker/lin_config_set.h"

namespace locklab::checker::lin {
namespace {

// The probe's own bound: past it, the sweep goes on without it.
constexpr size_t kProbeBytes = size_t(128) << 20;

class Sweep {
 public:
  Sweep(Model model, const Partition& part, const LinearizabilityOptions& options,
        Clock::time_point deadline)
      : model_(model), part_(part), ops_(part.ops), options_(options), deadline_(deadline) {}

  SweepOutcome Run() {
    BuildEntries();
    ClassifyUnknown();
    PairBlocks();
    const int32_t n_entries = static_cast<int32_t>(entries_.size());
    Config first;
    first.s = InitialState(model_);
    first.linearized.assign(words_, 0);
    configs_.push_back(std::move(first));
    // The last quiescent point (no open op of known outcome): where the probe starts from.
    int32_t checkpoint = 0;
    std::vector<Config> checkpoint_configs = configs_;
    std::vector<int32_t> checkpoint_unknown;
    bool may_probe = options_.probe_after_configs != kNeverProbe;
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
          OpenInsert(o);
          if (partner_[o] >= 0 && CloseBlocksOfAll(k + 1)) Dedup();
        }
      } else {
        // Wide: the closure passed the bound (or the probe is asked for first). Try the
        // depth-first probe from the last quiescent point; when it gives up within its
        // bound, replay the sweep from there without it.
        bool probe_now = may_probe && options_.probe_after_configs == 0;
        if (!probe_now && !Return(o, k, may_probe ? options_.probe_after_configs : kNeverProbe)) {
          if (!probe_hint_) {
            res_.verdict = LinVerdict::kInvalid;
            res_.failed_op = o;
            res_.prefix_events = k + 1;
            break;
          }
          probe_now = true;
        }
        if (probe_now) {
          probe_hint_ = false;
          may_probe = false;
          if (Probe(checkpoint, checkpoint_configs)) return Finish();
          if (out_of_time_) return OutOfTime(k);
          configs_ = checkpoint_configs;
          live_unknown_ = checkpoint_unknown;
          open_.clear();
          k = checkpoint - 1;
          continue;
        }
        OpenErase(o);
      }
      for (int32_t cls : prune_at_[k]) Prune(cls);
      if (!prune_at_[k].empty()) Dedup();
      if (out_of_time_) return OutOfTime(k);
      if (over_budget_) {
        return Stop("memory budget (" + std::to_string(options_.memory_budget_bytes >> 20) +
                    " MiB) exhausted", k);
      }
      if (open_.empty() && may_probe) {
        checkpoint = k + 1;
        checkpoint_configs = configs_;
        checkpoint_unknown = live_unknown_;
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
    res_.peak_bytes = std::max(peak_bytes_, probe_bytes_);
    res_.states = states_;
    return std::move(res_);
  }

  void BuildEntries() {
    // Sorted in place by what the ops say (a copy of each entry's time and sequence beside
    // it was 32 bytes an entry at the top of a long history's peak).
    entries_.reserve(2 * ops_.size());
    for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i) {
      entries_.push_back({i, true});
      if (!ops_[i].unknown) entries_.push_back({i, false});
    }
    // Time order; on equal times calls first (concurrent: the permissive reading).
    std::sort(entries_.begin(), entries_.end(), [&](const Entry& a, const Entry& b) {
      const Op& x = ops_[a.op];
      const Op& y = ops_[b.op];
      Nanos ta = a.call ? x.call_time() : x.ret_time(), tb = b.call ? y.call_time() : y.ret_time();
      if (ta != tb) return ta < tb;
      if (a.call != b.call) return a.call;
      return (a.call ? x.call_seq : x.ret_seq) < (b.call ? y.call_seq : y.ret_seq);
    });
    call_entry_.assign(ops_.size(), -1);
    ret_entry_.assign(ops_.size(), -1);
    int32_t open = 0, max_open = 0;
    for (int32_t k = 0; k < static_cast<int32_t>(entries_.size()); ++k) {
      const Entry& en = entries_[k];
      if (en.call) {
        call_entry_[en.op] = k;
        if (!ops_[en.op].unknown) max_open = std::max(max_open, ++open);
      } else {
        ret_entry_[en.op] = k;
        --open;
      }
    }
    words_ = std::max<int32_t>(1, (max_open + 63) / 64);
    // Slots: a pure function of the entry order (the lowest free one at each call), so the
    // sweep and the probe, which walks entries back and forth, agree on every op's slot.
    op_slot_.assign(ops_.size(), -1);
    std::vector<int32_t> free_slots;
    for (int32_t s = words_ * 64 - 1; s >= 0; --s) free_slots.push_back(s);
    for (const Entry& en : entries_) {
      if (ops_[en.op].unknown) continue;
      if (en.call) {
        op_slot_[en.op] = free_slots.back();
        free_slots.pop_back();
      } else {
        free_slots.push_back(op_slot_[en.op]);
      }
    }
    // Interchangeable known ops (same kind and arguments: the model cannot tell them apart).
    // Of the open ones of a class that are not yet linearized, only the one that returns
    // first is ever linearized next: any linearization that places another one first stays
    // one when the two swap places (same effects; the earlier-returning one moves earlier,
    // the other one later but still before the first one's return, so before its own).
    // Without this the closure enumerated every subset of k concurrent acquires and k
    // releases (C(2k,k) configurations); with it, the counts per class.
    // Numbered in the order of each class's first op, as a map from key to number would
    // (one map node per token was most of the sweep's share of a long history's peak).
    auto class_key = [&](int32_t i) {
      const Op& op = ops_[i];
      if (model_ == Model::kMutex) return std::tuple<int, int64_t, int64_t>{static_cast<int>(op.kind), 0, 0};
      return std::tuple<int, int64_t, int64_t>{static_cast<int>(op.kind), op.x, op.y};
    };
    same_class_.assign(ops_.size(), -1);
    std::vector<int32_t> by_key;
    by_key.reserve(ops_.size());
    for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i) {
      if (!ops_[i].unknown) by_key.push_back(i);
    }
    std::sort(by_key.begin(), by_key.end(), [&](int32_t a, int32_t b) {
      auto ka = class_key(a), kb = class_key(b);
      return ka != kb ? ka < kb : a < b;
    });
    // same_class_ holds, for now, the first op of each one's class; then the classes are
    // numbered by that first op.
    std::vector<int32_t> firsts;
    for (size_t j = 0; j < by_key.size(); ++j) {
      bool starts = j == 0 || class_key(by_key[j]) != class_key(by_key[j - 1]);
      if (starts) firsts.push_back(by_key[j]);
      same_class_[by_key[j]] = firsts.back();
    }
    std::vector<int32_t>().swap(by_key);
    std::sort(firsts.begin(), firsts.end());
    std::vector<int32_t> number(ops_.size(), -1);
    for (size_t c = 0; c < firsts.size(); ++c) number[firsts[c]] = static_cast<int32_t>(c);
    for (int32_t& c : same_class_) {
      if (c >= 0) c = number[c];
    }
  }

  // open_ stays sorted by (class, return entry): the first unlinearized op of each class is
  // the one the closure may linearize next.
  bool OpenBefore(int32_t a, int32_t b) const {
    if (same_class_[a] != same_class_[b]) return same_class_[a] < same_class_[b];
    return ret_entry_[a] < ret_entry_[b];
  }
  void OpenInsert(int32_t o) {
    open_.insert(std::lower_bound(open_.begin(), open_.end(), o,
                                  [&](int32_t a, int32_t b) { return OpenBefore(a, b); }),
                 o);
  }
  void OpenErase(int32_t o) { open_.erase(std::find(open_.begin(), open_.end(), o)); }

  bool OwnerModel() const { return model_ == Model::kOwnerMutex || model_ == Model::kFencedMutex; }

  // Classes of interchangeable unknown ops, and rules R1-R3.
  void ClassifyUnknown() {
    const int32_t n = static_cast<int32_t>(ops_.size());
    dropped_.assign(n, false);
    class_of_.assign(n, -1);
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
      // Only tokens with an unknown op matter here (a map over every token was a node per
      // hold of a long history).
      std::unordered_map<int64_t, int32_t> last_entry;  // token -> last entry of its known ops
      std::unordered_map<int64_t, bool> any_known;
      for (int32_t i = 0; i < n; ++i) {
        if (ops_[i].unknown) any_known.emplace(ops_[i].x, false);
      }
      for (int32_t i = 0; i < n && !any_known.empty(); ++i) {
        int64_t t = ops_[i].x;
        if (!any_known.count(t)) continue;
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
    class_prune_ = class_prune;
    prune_at_.Build(entries_.size(), class_prune, kNever);
  }

  // ---- Blocks closed at once (owner-mutex) -------------------------------------------------
  //
  // A token whose known operations are exactly one acquire and one release, both open at
  // once (called, neither returned: a window of concurrent clients), is a block that can be
  // linearized whole, acquire then release, at any instant the lock is free while both are
  // open. Doing so at once loses nothing: let B be a configuration (lock free, neither op
  // linearized) and A the same with the block done. Any continuation of B stays one of A
  // once every operation of that token is taken out of it: while a token holds the lock only
  // its own operations apply (a failed release of another token changes nothing then), so
  // the token's operations in the continuation form blocks that start and end with the lock
  // free (or run to the end), and removing them leaves the rest valid; the token has no other
  // known operation to place, and its unknown ones may never take effect. So A can go wherever
  // B can, and B is dropped in favour of A. The configurations that differ only in which of
  // k concurrent acquire/release pairs are done (2^k of them, which made an invalid window of
  // 16 clients under owner-mutex exponential) become one. Under fenced-mutex only for an
  // acquire without a fence: one with a fence raises the last fence, which can refuse a later
  // acquire that B could still place.
  void PairBlocks() {
    partner_.assign(ops_.size(), -1);
    if (!OwnerModel()) return;
    std::unordered_map<int64_t, std::pair<int32_t, int32_t>> by_token;  // acquire, release
    std::unordered_map<int64_t, int32_t> known;
    for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i) {
      if (ops_[i].unknown) continue;
      if (++known[ops_[i].x] > 2) continue;
      auto& pr = by_token.emplace(ops_[i].x, std::make_pair(-1, -1)).first->second;
      if (ops_[i].kind == Kind::kAcquire) pr.first = i;
      else if (ops_[i].kind == Kind::kRelease) pr.second = i;
    }
    for (const auto& [token, pr] : by_token) {
      auto [a, r] = pr;
      if (known[token] != 2 || a < 0 || r < 0) continue;
      if (model_ == Model::kFencedMutex && ops_[a].y != kNoFence) continue;  // moves the fence
      // Ever open together: both called before either returns. (In a lab history a client's
      // acquire returns before its release is called: no pair, nothing to do.)
      if (std::max(call_entry_[a], call_entry_[r]) > std::min(ret_entry_[a], ret_entry_[r])) continue;
      partner_[a] = r;
      partner_[r] = a;
      has_pairs_ = true;
    }
  }

  // Whether op `o` is open once entries [0, upto) are processed.
  bool OpenAt(int32_t o, int32_t upto) const { return call_entry_[o] < upto && ret_entry_[o] >= upto; }

  // Closes every block `c` can close at once (lock free; see PairBlocks) with entries
  // [0, upto) processed. True if it closed any.
  bool CloseBlocks(Config* c, int32_t upto) const {
    if (!has_pairs_ || c->s.a != 0) return false;
    bool closed = false;
    for (int32_t a : open_) {
      int32_t r = partner_[a];
      if (r < 0 || ops_[a].kind != Kind::kAcquire || c->Bit(op_slot_[a]) || c->Bit(op_slot_[r])) {
        continue;
      }
      if (!OpenAt(a, upto) || !OpenAt(r, upto)) continue;
      c->SetBit(op_slot_[a]);
      c->SetBit(op_slot_[r]);
      c->PushTail(a);
      c->PushTail(r);
      closed = true;
    }
    return closed;
  }
  bool CloseBlocksOfAll(int32_t upto) {
    bool closed = false;
    for (Config& c : configs_) closed = CloseBlocks(&c, upto) || closed;
    return closed;
  }

  void Prune(int32_t cls) {
    for (Config& c : configs_) PruneOne(cls, &c);
    live_unknown_.erase(std::remove_if(live_unknown_.begin(), live_unknown_.end(),
                                       [&](int32_t o) { return class_of_[o] == cls; }),
                        live_unknown_.end());
  }

  void PruneOne(int32_t cls, Config* c) const {
    const Op& rep = class_rep_[cls];
    bool keep_one_if_held = OwnerModel() && rep.kind == Kind::kRelease;  // R2
    auto it = std::lower_bound(c->pool.begin(), c->pool.end(), cls,
                               [](const UnknownCount& u, int32_t k) { return u.cls < k; });
    if (it == c->pool.end() || it->cls != cls) return;
    if (keep_one_if_held && c->s.a == class_token_[cls]) {
      it->count = 1;
    } else {
      c->pool.erase(it);
    }
  }

  // ---- The depth-first probe -------------------------------------------------------------
  //
  // Wing & Gong's search with Lowe's memo, in the sweep's terms: one configuration at a time
  // walks the entries; at a return whose op it has not linearized it branches (linearize
  // the op now, greedily first, or another open op or pool member before it), and a branch
  // node already seen, (entry, state, linearized set, pool), is not searched again. A history
  // whose windows hold many concurrent operations, which the breadth-first closure must
  // enumerate, usually has a linearization that this finds at once. It is exact: reaching
  // the end is a linearization (valid); running out of branches proves none exists, and the
  // deepest return reached is where the sweep's configurations would have run out, the end
  // of the shortest prefix that cannot be linearized (invalid). It gives up (false, nothing
  // decided) past its own memory bound, and the sweep goes on.
  struct Move {
    int32_t op;
    State s;
    int32_t pool_index;  // -1: an open op of known outcome
    bool returns;        // the returning op itself: the walk moves past its return
  };
  struct Frame {
    int32_t k;  // the return entry it branches at
    Config c;
    std::vector<Move> moves;
    size_t next = 0;
    int32_t chosen = -1;
  };
  struct Fingerprint {
    uint64_t a, b;
    bool operator==(const Fingerprint& o) const { return a == o.a && b == o.b; }
  };
  // Seen fingerprints, open addressing in one array (a node per entry made the probe's
  // give-up, freeing them, outlast the time budget by half a second).
  class FingerprintSet {
   public:
    bool Insert(Fingerprint f) {
      f.a |= 1;  // {0, 0} marks an empty slot
      if ((size_ + 1) * 2 > slots_.size()) Grow();
      size_t mask = slots_.size() - 1, i = static_cast<size_t>(f.b) & mask;
      for (; slots_[i].a != 0; i = (i + 1) & mask) {
        if (slots_[i] == f) return false;
      }
      slots_[i] = f;
      ++size_;
      return true;
    }
    size_t size() const { return size_; }
    size_t bytes() const { return slots_.size() * sizeof(Fingerprint); }

   private:
    void Grow() {
      std::vector<Fingerprint> old(std::max<size_t>(1024, slots_.size() * 2), Fingerprint{0, 0});
      old.swap(slots_);
      size_t mask = slots_.size() - 1;
      for (const Fingerprint& f : old) {
        if (f.a == 0) continue;
        size_t i = static_cast<size_t>(f.b) & mask;
        while (slots_[i].a != 0) i = (i + 1) & mask;
        slots_[i] = f;
      }
    }
    std::vector<Fingerprint> slots_;
    size_t size_ = 0;
  };
  // Two independent 64-bit hashes: a false "seen" (which could hide a linearization) would
  // need both to collide, about 2^-128 per pair.
  static Fingerprint FingerprintOf(int32_t k, const Config& c) {
    uint64_t a = Mix(static_cast<uint64_t>(k) ^ 0x5bd1e995ULL), b = Mix(a ^ 0x27d4eb2f165667c5ULL);
    auto add = [&](uint64_t w) {
      a = Mix(a ^ w);
      b = Mix(b + (w * 0x9E3779B97F4A7C15ULL) + 0x632be59bd9b4e019ULL);
    };
    add(static_cast<uint64_t>(c.s.a));
    add(static_cast<uint64_t>(c.s.b));
    for (uint64_t w : c.linearized) add(w);
    add(c.pool.size());
    for (const UnknownCount& u : c.pool) add((uint64_t(uint32_t(u.cls)) << 32) | uint32_t(u.count));
    return {a, b};
  }

  // open_ as it is after entries [0, k) (only the probe walks back).
  void MoveCursor(int32_t k) {
    while (cursor_ < k) {
      const Entry& en = entries_[cursor_++];
      if (ops_[en.op].unknown) continue;
      if (en.call) OpenInsert(en.op);
      else OpenErase(en.op);
    }
    while (cursor_ > k) {
      const Entry& en = entries_[--cursor_];
      if (ops_[en.op].unknown) continue;
      if (en.call) OpenErase(en.op);
      else OpenInsert(en.op);
    }
  }

  // Walks `c` from entry k to the next return of an op it has not linearized (returned), or
  // to the end (entries_.size()).
  int32_t Advance(int32_t k, Config* c) const {
    const int32_t n = static_cast<int32_t>(entries_.size());
    for (; k < n; ++k) {
      const Entry& en = entries_[k];
      int32_t o = en.op;
      if (en.call) {
        if (dropped_[o]) continue;
        if (ops_[o].unknown) AddToPool(&c->pool, class_of_[o], 1);
      } else {
        if (!c->Bit(op_slot_[o])) return k;
        c->ClearBit(op_slot_[o]);
      }
      for (int32_t cls : prune_at_[k]) PruneOne(cls, c);
    }
    return n;
  }

  bool Probe(int32_t from, const std::vector<Config>& roots) {
    const int32_t n = static_cast<int32_t>(entries_.size());
    const size_t bound = std::min(options_.memory_budget_bytes, kProbeBytes);
    open_.clear();
    cursor_ = from;
    FingerprintSet seen;
    // The probe is for windows that have a linearization it finds at once; on one that has
    // none it would search as widely as the sweep, slower (a memo entry per node, kept), so
    // it gives up after a bound of nodes proportional to the history and leaves the rest to
    // the sweep.
    const uint64_t max_nodes = 50000 + 16 * static_cast<uint64_t>(n);
    uint64_t nodes = 0;
    std::vector<Frame> frames;
    size_t frame_bytes = 0;
    int32_t deepest = -1;
    std::vector<State> deepest_states;
    std::vector<int32_t> deepest_tail, deepest_open;
    // 1: a linearization of everything; 0: searched on (or already seen).
    auto enter = [&](int32_t k, Config c) -> bool {
      int32_t b = Advance(k, &c);
      if (b == n) return true;
      if (has_pairs_) {
        MoveCursor(b);
        while (CloseBlocks(&c, b)) {  // the returning op may be in a block just closed
          b = Advance(b, &c);
          if (b == n) return true;
          MoveCursor(b);
        }
      }
      if (!seen.Insert(FingerprintOf(b, c))) return false;
      ++states_;
      ++nodes;
      MoveCursor(b);
      if (b > deepest) {
        deepest = b;
        deepest_states.clear();
        deepest_tail.clear();
        for (const Frame& f : frames) deepest_tail.push_back(f.chosen);
        if (deepest_tail.size() > kTailLength) {
          deepest_tail.erase(deepest_tail.begin(), deepest_tail.end() - kTailLength);
        }
        deepest_open = open_;
        for (int32_t u = 0; u < static_cast<int32_t>(ops_.size()); ++u) {
          if (deepest_open.size() >= 32) break;
          if (!ops_[u].unknown || dropped_[u] || class_of_[u] < 0 || call_entry_[u] >= b) continue;
          int32_t until = class_prune_[class_of_[u]];
          if (until >= 0 && until < b) continue;
          deepest_open.push_back(u);
        }
      }
      if (b == deepest && deepest_states.size() < 8 &&
          std::find(deepest_states.begin(), deepest_states.end(), c.s) == deepest_states.end()) {
        deepest_states.push_back(c.s);
      }
      Frame f;
      f.k = b;
      const int32_t o = entries_[b].op;
      State alt[2];
      for (int i = 0, m = Steps(model_, c.s, ops_[o], alt); i < m; ++i) {
        f.moves.push_back({o, alt[i], -1, true});
      }
      ForEachMove(c, o, [&](int32_t op, const State& ns, int32_t pool_index) {
        f.moves.push_back({op, ns, pool_index, false});
      });
      f.c = std::move(c);
      frame_bytes += sizeof(Frame) + f.c.Bytes() + f.moves.capacity() * sizeof(Move);
      frames.push_back(std::move(f));
      return false;
    };
    auto give_up = [&] {
      probe_bytes_ = std::max(probe_bytes_, seen.bytes() + frame_bytes);
      open_.clear();
      return false;
    };
    for (const Config& root : roots) {
      if (enter(from, root)) return Linearized();
      while (!frames.empty()) {
        if ((++ticks_ & 1023) == 0) {
          if (Clock::now() > deadline_) out_of_time_ = true;
          probe_bytes_ = std::max(probe_bytes_, seen.bytes() + frame_bytes);
          if (out_of_time_ || nodes > max_nodes || seen.bytes() + frame_bytes > bound) {
            return give_up();
          }
        }
        Frame& f = frames.back();
        if (f.next == f.moves.size()) {
          frame_bytes -= sizeof(Frame) + f.c.Bytes() + f.moves.capacity() * sizeof(Move);
          frames.pop_back();
          continue;
        }
        const Move m = f.moves[f.next++];
        f.chosen = m.op;
        Config c = f.c;
        int32_t k = f.k;
        if (m.returns) {
          c.s = m.s;
          c.PushTail(m.op);
          for (int32_t cls : prune_at_[k]) PruneOne(cls, &c);
          ++k;
        } else {
          Apply(&c, m.op, m.s, m.pool_index);
        }
        if (enter(k, std::move(c))) return Linearized();
      }
    }
    probe_bytes_ = std::max(probe_bytes_, seen.bytes());
    open_.clear();
    res_.verdict = LinVerdict::kInvalid;
    res_.failed_op = entries_[deepest].op;
    res_.prefix_events = deepest + 1;
    res_.dead_states = std::move(deepest_states);
    res_.tail = std::move(deepest_tail);
    res_.open_ops = std::move(deepest_open);
    return true;
  }

  bool Linearized() {
    open_.clear();
    res_.verdict = LinVerdict::kValid;
    return true;
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

  // The return of `o`: keep the configurations that can have linearized it by now. False
  // when none can (the prefix ending here has no linearization), or, with probe_hint_ set,
  // when the closure passed `bound` configurations.
  bool Return(int32_t o, int32_t return_entry, size_t bound) {
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
      if (visited_.size() > bound) {
        probe_hint_ = true;
        return false;
      }
      int32_t idx = stack_.back();
      stack_.pop_back();
      if (visited_.dead(idx)) continue;
      const Config node = visited_[idx];  // a copy: Insert() may move the storage
      if (node.Bit(slot)) {  // linearized by a block closed on the way here
        Config r = node;
        r.ClearBit(slot);
        next_.Insert(std::move(r));
        continue;
      }
      State alt[2];
      for (int k = 0, n = Steps(model_, node.s, ops_[o], alt); k < n; ++k) {
        Config r = node;
        r.s = alt[k];
        r.PushTail(o);
        CloseBlocks(&r, return_entry + 1);  // past o's return: o is in no block now
        next_.Insert(std::move(r));
      }
      ForEachMove(node, o, [&](int32_t op, const State& ns, int32_t pool_index) {
        Config child = node;
        Apply(&child, op, ns, pool_index);
        CloseBlocks(&child, return_entry);
        if (visited_.Insert(std::move(child))) {
          stack_.push_back(static_cast<int32_t>(visited_.size()) - 1);
          ++states_;
        }
      });
      Account(visited_.bytes() + next_.bytes() + held);
    }
    if (next_.live() == 0 && !over_budget_ && !out_of_time_) {
      for (size_t i = 0; i < visited_.size() && res_.dead_states.size() < 8; ++i) {
        NoteDeadState(visited_[i].s);
      }
      if (visited_.size() > 0) res_.tail = visited_[0].Tail();
      NoteOpenOps();
      return false;
    }
    next_.TakeLive(&configs_);
    return true;
  }

  void NoteDeadState(const State& s) {
    if (res_.dead_states.size() < 8 &&
        std::find(res_.dead_states.begin(), res_.dead_states.end(), s) == res_.dead_states.end()) {
      res_.dead_states.push_back(s);
    }
  }
  void NoteOpenOps() {
    res_.open_ops = open_;
    for (int32_t u : live_unknown_) {
      if (res_.open_ops.size() >= 32) break;
      res_.open_ops.push_back(u);
    }
  }

  // Every move the closure may make from `node` before `o` returns (o itself excluded): an
  // open op of known outcome not yet linearized (only the first of its class, see
  // same_class_), in each of its readings, or a member of a pool class whose effect changes
  // the state (one that leaves it as it was only shrinks the pool: dominated).
  // fn(op, state after, pool index or -1).
  template <typename Fn>
  void ForEachMove(const Config& node, int32_t o, Fn&& fn) {
    State alt[2];
    int32_t last_class = -1;
    for (int32_t other : open_) {
      if (node.Bit(op_slot_[other])) continue;
      if (same_class_[other] == last_class) continue;  // a later-returning twin
      last_class = same_class_[other];
      if (other == o) continue;
      for (int k = 0, n = Steps(model_, node.s, ops_[other], alt); k < n; ++k) fn(other, alt[k], -1);
    }
    State ns;
    for (size_t u = 0; u < node.pool.size(); ++u) {
      int32_t cls = node.pool[u].cls;
      if (!Step(model_, node.s, class_rep_[cls], &ns) || ns == node.s) continue;
      fn(class_first_op_[cls], ns, static_cast<int32_t>(u));  // one member stands for its class
    }
  }

  // `c` makes one move of ForEachMove.
  void Apply(Config* c, int32_t op, const State& ns, int32_t pool_index) {
    c->s = ns;
    if (pool_index < 0) {
      c->SetBit(op_slot_[op]);
    } else if (--c->pool[pool_index].count == 0) {
      c->pool.erase(c->pool.begin() + pool_index);
    }
    c->PushTail(op);
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
  // The classes that leave the pools after each entry, in one array indexed by entry (a
  // vector per entry was 24 bytes for each of a long history's entries, nearly all empty).
  class PruneTable {
   public:
    void Build(size_t entries, const std::vector<int32_t>& class_prune, int32_t never) {
      first_.assign(entries + 1, 0);
      for (int32_t at : class_prune) {
        if (at >= 0 && at != never) ++first_[static_cast<size_t>(at) + 1];
      }
      for (size_t k = 0; k < entries; ++k) first_[k + 1] += first_[k];
      classes_.assign(static_cast<size_t>(first_[entries]), 0);
      std::vector<int32_t> fill(first_.begin(), first_.end() - 1);
      for (size_t c = 0; c < class_prune.size(); ++c) {  // ascending class within an entry
        int32_t at = class_prune[c];
        if (at >= 0 && at != never) classes_[static_cast<size_t>(fill[at]++)] = static_cast<int32_t>(c);
      }
    }
    std::span<const int32_t> operator[](int32_t k) const {
      return {classes_.data() + first_[k], static_cast<size_t>(first_[k + 1] - first_[k])};
    }

   private:
    std::vector<int32_t> first_;    // entry k's classes: classes_[first_[k], first_[k+1])
    std::vector<int32_t> classes_;
  };
  PruneTable prune_at_;
  std::vector<int32_t> partner_;  // the other op of a block that can close at once, or -1
  bool has_pairs_ = false;
  std::vector<int32_t> open_;          // open ops with a known outcome
  std::vector<int32_t> live_unknown_;  // unknown ops called and still in the pools
  std::vector<Config> configs_;
  std::vector<int32_t> class_prune_;  // entry after which a class leaves the pools (-1/max: never)
  std::vector<int32_t> same_class_;  // known ops: class of interchangeable ones
  bool probe_hint_ = false;
  int32_t cursor_ = 0;  // the probe's place in the entries (MoveCursor)
  size_t probe_bytes_ = 0;
  ConfigSet visited_, next_, scratch_;
  std::vector<int32_t> stack_;
  uint64_t states_ = 0;
  size_t peak_bytes_ = 0;
  bool over_budget_ = false;
  bool out_of_time_ = false;
  uint32_t ticks_ = 0;
  SweepOutcome res_;
};

}  // namespace

SweepOutcome RunSweep(Model model, const Partition& part, const LinearizabilityOptions& options,
                      Clock::time_point deadline) {
  return Sweep(model, part, options, deadline).Run();
}

}  // namespace locklab::checker::lin
