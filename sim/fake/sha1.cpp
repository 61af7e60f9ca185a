// SHA-1 as specified in FIPS 180-4 section 6.1: 512-bit blocks, 80 rounds over five 32-bit
// words, big-endian message length in the padding.
#include "sim/fake/sha1.h"

#include <algorithm>
#include <cstring>

#include "sim/core/assert.h"

namespace redlab::fake {
namespace {

inline uint32_t rotl(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

}  // namespace

Sha1::Sha1() : state_{0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u} {}

void Sha1::compress(const uint8_t* block) {
  uint32_t w[80];
  for (int t = 0; t < 16; t++) {
    w[t] = (uint32_t{block[4 * t]} << 24) | (uint32_t{block[4 * t + 1]} << 16) |
           (uint32_t{block[4 * t + 2]} << 8) | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 80; t++) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3], e = state_[4];
  for (int t = 0; t < 80; t++) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);  // Ch
      k = 0x5A827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;  // Parity
      k = 0x6ED9EBA1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);  // Maj
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    uint32_t temp = rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
}

void Sha1::update(const void* data, size_t size) {
  REDLAB_ASSERT(!finished_ && "Sha1::update after digest");
  const auto* p = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  while (size > 0) {
    size_t n = std::min(size, block_.size() - block_used_);
    std::memcpy(block_.data() + block_used_, p, n);
    block_used_ += n;
    p += n;
    size -= n;
    if (block_used_ == block_.size()) {
      compress(block_.data());
      block_used_ = 0;
    }
  }
}

std::array<uint8_t, 20> Sha1::digest() {
  REDLAB_ASSERT(!finished_ && "Sha1::digest called twice");
  uint64_t bit_length = total_bytes_ * 8;
  // Padding: a 1 bit, zeros up to 56 bytes mod 64, then the 64-bit big-endian length.
  const uint8_t one = 0x80;
  update(&one, 1);
  const uint8_t zero = 0;
  while (block_used_ != 56) update(&zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; i++) length[i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  update(length, 8);
  REDLAB_ASSERT(block_used_ == 0 && "the padding ends on a block boundary");
  finished_ = true;
  std::array<uint8_t, 20> out;
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) out[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return out;
}

void sha1_hex(char out[41], std::string_view data) {
  Sha1 h;
  h.update(data.data(), data.size());
  auto d = h.digest();
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < d.size(); i++) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  out[40] = '\0';
}

std::string sha1_hex(std::string_view data) {
  char out[41];
  sha1_hex(out, data);
  return std::string(out, 40);
}

}  // namespace redlab::fake
