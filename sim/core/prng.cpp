// See prng.h. The generator functions are transcriptions of the public-domain reference
// code (prng.di.unimi.it: splitmix64.c, xoshiro256starstar.c).
#include "sim/core/prng.h"

#include "sim/core/assert.h"

namespace redlab {
namespace {

constexpr uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Prng::Prng(uint64_t seed) : seed_(seed) {
  uint64_t sm = seed;
  for (uint64_t& word : s_) word = splitmix64_next(sm);
  // splitmix64 is a bijection on a counter, so four consecutive outputs are never all zero
  // (the one state xoshiro cannot leave).
  REDLAB_ASSERT((s_[0] | s_[1] | s_[2] | s_[3]) != 0 && "xoshiro state is never all zero");
}

uint64_t Prng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Prng::uniform(uint64_t n) {
  REDLAB_ASSERT(n > 0 && "uniform(n) needs a non-empty range");
  // OpenBSD arc4random_uniform: 2^64 mod n values at the bottom would make some results
  // more likely than others; drawing again when one comes up makes every result equally
  // likely. The rejected share is below one half, so the chance of needing even 64 draws
  // is below 2^-64: hitting the bound means the generator is broken.
  const uint64_t threshold = (0 - n) % n;  // == 2^64 mod n
  constexpr int kDrawsMax = 1000;
  for (int draws = 0; draws < kDrawsMax; draws++) {
    uint64_t r = next_u64();
    if (r >= threshold) return r % n;
  }
  REDLAB_ASSERT(false && "uniform(): rejection sampling did not terminate");
  return 0;
}

int64_t Prng::range_inclusive(int64_t min, int64_t max) {
  REDLAB_ASSERT(min <= max && "range_inclusive(min, max) needs min <= max");
  // The span as unsigned arithmetic: max - min + 1 wraps to 0 exactly for the full range.
  const uint64_t span = static_cast<uint64_t>(max) - static_cast<uint64_t>(min) + 1;
  const uint64_t offset = span == 0 ? next_u64() : uniform(span);
  return static_cast<int64_t>(static_cast<uint64_t>(min) + offset);
}

bool Prng::chance(uint64_t numerator, uint64_t denominator) {
  REDLAB_ASSERT(denominator > 0 && "chance() needs a positive denominator");
  REDLAB_ASSERT(numerator <= denominator && "chance() is a ratio of at most 1");
  // Always draw, even for 0/n and n/n, so that changing a probability does not shift the
  // numbers drawn after it.
  return uniform(denominator) < numerator;
}

Prng Prng::derive(uint64_t stream) const {
  // Mix the seed and the stream through splitmix64 so that nearby streams (0, 1, 2 ...) of
  // nearby seeds get unrelated states.
  uint64_t sm = seed_;
  uint64_t mixed = splitmix64_next(sm);
  sm = mixed ^ stream;
  return Prng(splitmix64_next(sm));
}

}  // namespace redlab
