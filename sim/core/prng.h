// The simulator's one source of randomness: seeded, portable, integer-only.
//
// xoshiro256** (Blackman and Vigna, 2018) with its state filled by splitmix64 from a 64-bit
// seed, as the authors recommend. Both are a few lines of shifts, rotations, adds and
// multiplies on uint64_t, so a seed gives the same numbers with every compiler on every
// platform, unlike std::mt19937 with std::uniform_int_distribution (whose algorithm the
// standard leaves open). The first outputs for seed 1 are pinned by a unit test.
//
// Decisions use integers only (TigerBeetle style): uniform(n) is exact (rejection, no
// modulo bias) and chance(numerator, denominator) is a ratio, so no floating-point rounding
// can make two platforms take different branches. A component that needs its own stream
// (each fault setting, each actor) derives one with derive(stream): adding draws to one
// stream then never shifts the numbers another one sees.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace redlab {

// One step of splitmix64 (Steele, Lea and Flood): advances state, returns the next value.
uint64_t splitmix64_next(uint64_t& state);

// FNV-1a: a stable 64-bit hash of bytes. PRNG streams are derived from names with it (an
// actor, a link, a key), so adding one name never changes the draws another one sees. `h`
// continues a running hash.
inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ULL;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ULL;
constexpr uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aOffset) {
  for (char ch : bytes) h = (h ^ static_cast<unsigned char>(ch)) * kFnv1aPrime;
  return h;
}

class Prng {
 public:
  explicit Prng(uint64_t seed);

  uint64_t seed() const { return seed_; }

  // The next 64 random bits (xoshiro256**).
  uint64_t next_u64();
  // A uniform integer in [0, n); n > 0. Exact: values that would bias the result are
  // rejected and drawn again (at most a few draws; the bound is asserted).
  uint64_t uniform(uint64_t n);
  // A uniform integer in [min, max], both included; min <= max.
  int64_t range_inclusive(int64_t min, int64_t max);
  // True with probability numerator/denominator; 0 <= numerator <= denominator, denominator > 0.
  bool chance(uint64_t numerator, uint64_t denominator);
  // A new generator whose numbers depend only on this one's seed and `stream`, not on how
  // many numbers this one has drawn.
  Prng derive(uint64_t stream) const;

 private:
  uint64_t seed_;
  std::array<uint64_t, 4> s_;
};

}  // namespace redlab
