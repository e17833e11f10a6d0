// Linearizability internals, part 3: the sweep's configurations and the set that holds them.
//
// A Config is one place a linearization of the history so far can be in: the model state,
// which open operations (by slot) it has linearized, and a pool of unknown-outcome operations
// that may still take effect, counted per class of interchangeable ones. A ConfigSet holds
// configurations without dominated members: of two with the same state and linearized set,
// the one whose pool is contained in the other's is dropped (every continuation of it is one
// of the other's). Header-only because the sweep's inner loop inlines all of it. Internal to
// checker/. Thread safety: not thread-safe; one sweep owns its sets.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "checker/lin_model.h"

namespace locklab::checker::lin {

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

// A bitset over the open slots: two words inline (up to 128 operations open at once, every
// history seen so far), more on the heap. Configurations are made and dropped by the million
// on wide windows; a heap block each was most of their cost, and of freeing them.
class SlotBits {
 public:
  void assign(int32_t words, uint64_t v) {
    n_ = words;
    inline_[0] = inline_[1] = v;
    if (words > kInline) heap_.assign(static_cast<size_t>(words), v);
  }
  uint64_t& operator[](size_t i) { return n_ > kInline ? heap_[i] : inline_[i]; }
  uint64_t operator[](size_t i) const { return n_ > kInline ? heap_[i] : inline_[i]; }
  const uint64_t* begin() const { return n_ > kInline ? heap_.data() : inline_; }
  const uint64_t* end() const { return begin() + n_; }
  size_t capacity() const { return n_ > kInline ? heap_.capacity() : 0; }
  bool operator==(const SlotBits& o) const { return n_ == o.n_ && std::equal(begin(), end(), o.begin()); }
  bool operator!=(const SlotBits& o) const { return !(*this == o); }

 private:
  static constexpr int32_t kInline = 2;
  int32_t n_ = 0;
  uint64_t inline_[kInline] = {0, 0};
  std::vector<uint64_t> heap_;
};

struct Config {
  State s;
  SlotBits linearized;                 // by open slot
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
inline bool PoolCovers(const std::vector<UnknownCount>& a, const std::vector<UnknownCount>& b) {
  size_t i = 0;
  for (const UnknownCount& u : b) {
    while (i < a.size() && a[i].cls < u.cls) ++i;
    if (i == a.size() || a[i].cls != u.cls || a[i].count < u.count) return false;
  }
  return true;
}

// A set of configurations without dominated members. Reused between steps (clear()).
// Indexed by an open-addressing table over CoreHash (linear probing): configurations with one
// core hash lie on one probe run, which Insert walks for the dominance checks. A table of
// indices instead of a map of small vectors: a wide window holds millions of configurations,
// and allocating and freeing a bucket each was a large part of a step (and of the wait
// between the time budget running out and the answer).
class ConfigSet {
 public:
  // False when `c` (or one that covers it) is already in.
  bool Insert(Config&& c) {
    uint64_t h = CoreHash(c);
    if ((items_.size() + 1) * 2 > table_.size()) Grow();
    const size_t mask = table_.size() - 1;
    size_t i = static_cast<size_t>(h) & mask;
    for (; table_[i] >= 0; i = (i + 1) & mask) {
      int32_t k = table_[i];
      if (hashes_[k] != h || dead_[k]) continue;
      const Config& o = items_[k];
      if (!(o.s == c.s) || o.linearized != c.linearized) continue;
      if (PoolCovers(o.pool, c.pool)) return false;
    }
    if (!c.pool.empty()) {  // drop the ones the newcomer covers
      for (size_t j = static_cast<size_t>(h) & mask; table_[j] >= 0; j = (j + 1) & mask) {
        int32_t k = table_[j];
        if (hashes_[k] != h || dead_[k]) continue;
        const Config& o = items_[k];
        if (!(o.s == c.s) || o.linearized != c.linearized) continue;
        if (PoolCovers(c.pool, o.pool)) {
          dead_[k] = true;
          --live_;
        }
      }
    }
    bytes_ += c.Bytes() + 2 * sizeof(int32_t) + sizeof(uint64_t) + 1;
    table_[i] = static_cast<int32_t>(items_.size());
    items_.push_back(std::move(c));
    hashes_.push_back(h);
    dead_.push_back(false);
    ++live_;
    return true;
  }
  void clear() {
    // A table left large by one wide step would cost its size at every later clear.
    if (table_.size() > 64 && table_.size() > 8 * items_.size()) {
      table_.assign(64, -1);
    } else {
      std::fill(table_.begin(), table_.end(), -1);
    }
    items_.clear();
    hashes_.clear();
    dead_.clear();
    live_ = 0;
    bytes_ = 0;
  }
  size_t size() const { return items_.size(); }  // including dead ones
  size_t live() const { return live_; }
  bool dead(size_t i) const { return dead_[i]; }
  const Config& operator[](size_t i) const { return items_[i]; }
  size_t bytes() const { return bytes_ + table_.size() * sizeof(int32_t); }
  // Moves the live configurations out.
  void TakeLive(std::vector<Config>* out) {
    out->clear();
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!dead_[i]) out->push_back(std::move(items_[i]));
    }
    clear();
  }

 private:
  void Grow() {
    table_.assign(std::max<size_t>(64, table_.size() * 2), -1);
    const size_t mask = table_.size() - 1;
    for (size_t k = 0; k < items_.size(); ++k) {
      size_t i = static_cast<size_t>(hashes_[k]) & mask;
      while (table_[i] >= 0) i = (i + 1) & mask;
      table_[i] = static_cast<int32_t>(k);
    }
  }

  std::vector<Config> items_;
  std::vector<uint64_t> hashes_;  // CoreHash of each item
  std::vector<bool> dead_;
  std::vector<int32_t> table_;    // item index, -1: empty; a power of two, at most half full
  size_t live_ = 0;
  size_t bytes_ = 0;
};

inline void AddToPool(std::vector<UnknownCount>* pool, int32_t cls, int32_t n) {
  auto it = std::lower_bound(pool->begin(), pool->end(), cls,
                             [](const UnknownCount& u, int32_t c) { return u.cls < c; });
  if (it != pool->end() && it->cls == cls) {
    it->count += n;
  } else {
    pool->insert(it, {cls, n});
  }
}

}  // namespace locklab::checker::lin
