#include "checker/lin_sweep.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "checker/lin_config_set.h"

namespace locklab::checker::lin {
namespace {

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
      State alt[2];
      for (int k = 0, n = Steps(model_, node.s, ops_[o], alt); k < n; ++k) {
        Config r = node;
        r.s = alt[k];
        r.PushTail(o);
        next_.Insert(std::move(r));
      }
      for (int32_t other : open_) {
        int32_t j = op_slot_[other];
        if (other == o || node.Bit(j)) continue;
        for (int k = 0, n = Steps(model_, node.s, ops_[other], alt); k < n; ++k) {
          Config child = node;
          child.s = alt[k];
          child.SetBit(j);
          child.PushTail(other);
          if (visited_.Insert(std::move(child))) {
            stack_.push_back(static_cast<int32_t>(visited_.size()) - 1);
            ++states_;
          }
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

}  // namespace

SweepOutcome RunSweep(Model model, const Partition& part, const LinearizabilityOptions& options,
                      Clock::time_point deadline) {
  return Sweep(model, part, options, deadline).Run();
}

}  // namespace locklab::checker::lin
