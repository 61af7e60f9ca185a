// SHA-1 (FIPS 180-4), for the script cache: EVAL, SCRIPT LOAD and EVALSHA name a script by
// the lower-case hex SHA-1 of its body, and redis.sha1hex() exposes the same function.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlab::fake {

// Incremental hashing: update() any number of times, then digest() once.
class Sha1 {
 public:
  Sha1();
  void update(const void* data, size_t size);
  std::array<uint8_t, 20> digest();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 5> state_;
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

// 40 lower-case hex digits, written to out (41 bytes with the terminating NUL).
void sha1_hex(char out[41], std::string_view data);
std::string sha1_hex(std::string_view data);

}  // namespace redlab::fake
