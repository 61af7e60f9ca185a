// Fuzz target: redlab::split_args, redis-cli's line splitting.
//
// Besides crashes and sanitizer reports, checks a round trip: every argument it returns,
// quoted back with quote_repr (redis-cli's own "..." rendering with \xHH escapes) and joined
// by blanks, must split into the same arguments again. That holds for any bytes, NUL and
// newlines included, and catches escapes decoded differently from how they are written.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/cmdline.h"
#include "sim/core/reply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kInputBytesMax = 64 * 1024;
  if (size > kInputBytesMax) return 0;
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto args = redlab::split_args(line);
  if (!args) return 0;
  std::string requoted;
  for (const std::string& a : *args) {
    if (!requoted.empty()) requoted += ' ';
    requoted += redlab::quote_repr(a);
  }
  auto again = redlab::split_args(requoted);
  if (!again || *again != *args) __builtin_trap();
  return 0;
}
