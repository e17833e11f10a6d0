// Randomness. Two sources, never mixed:
//
// * Rng: the one seeded source of a run (FoundationDB style). Workload timing and fault
//   schedules draw from it, so a seed replays the schedule. Not thread-safe: one per owner.
// * RandomToken(): owner tokens for locks, from /dev/urandom, never from the seed or thread
//   ids (two runs with one seed must not share tokens with a leftover key). Thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace locklab {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi] (inclusive).
  int64_t Uniform(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  double Unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }
  // A derived seed for a sub-owner (a client process), stable for a given parent seed.
  uint64_t Fork() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

// 128 random bits from /dev/urandom as 32 lowercase hex characters.
std::string RandomToken();
// A seed for a run whose seed was not given: 1..2^bits (bits a multiple of 4, at most 60),
// from the same /dev/urandom source; small enough to be typed back as --seed.
uint64_t RandomSeed(int bits);

}  // namespace locklab
