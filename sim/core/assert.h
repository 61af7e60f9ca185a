// REDLAB_ASSERT: an always-on assert for our own invariants (TigerBeetle style).
//
// The standard assert() vanishes under NDEBUG, which CMake's Release and RelWithDebInfo
// builds define; an invariant that only holds in Debug builds is not an invariant. Use it
// for broken promises of our own code, never for input (a file, a user, a network): those
// get an error reply or a located error message.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace redlab {

[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace redlab

// Write the hint into the condition: REDLAB_ASSERT(n > 0 && "uniform() needs a range").
#define REDLAB_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::redlab::assert_fail(#cond, __FILE__, __LINE__))
