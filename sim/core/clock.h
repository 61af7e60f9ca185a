// Virtual time: the only time sim/ knows about.
//
// A simulated run never reads the wall clock. Time is an int64 count of microseconds since
// the start of the run (TimeUs); it moves only when the event loop jumps to the next event
// (FoundationDB's sim2: when nothing is ready, time jumps to the next timer). Integers, not
// doubles, so that two runs with one seed compute bit-identical times on every platform.
// int64 microseconds cover about 292,000 years, so overflow only happens with kNever or a
// nonsense input; the helpers below saturate instead of overflowing.
#pragma once

#include <cstdint>
#include <limits>

#include "sim/core/assert.h"

namespace redlab {

using TimeUs = int64_t;

// "No deadline": later than any real event.
inline constexpr TimeUs kTimeNeverUs = std::numeric_limits<int64_t>::max();

inline constexpr TimeUs kUsPerMs = 1000;
inline constexpr TimeUs kUsPerSecond = 1000 * 1000;

constexpr TimeUs ms_to_us(int64_t ms) {
  return ms * kUsPerMs;
}
constexpr TimeUs seconds_to_us(int64_t seconds) {
  return seconds * kUsPerSecond;
}
// Rounds toward zero, as integer division does (a 1999 us wait shows as 1 ms).
constexpr int64_t us_to_ms(TimeUs us) {
  return us / kUsPerMs;
}

// t + delta_us, clamped to [0, kTimeNeverUs] so that "now + timeout" with a huge timeout
// means "never" rather than wrapping into the past.
constexpr TimeUs add_saturating_us(TimeUs t, TimeUs delta_us) {
  if (delta_us > 0 && t > kTimeNeverUs - delta_us) return kTimeNeverUs;
  if (delta_us < 0 && t < -delta_us) return 0;
  return t + delta_us;
}

// The current virtual time of one run. Time never goes backwards: that is an invariant of
// the engine, not something an input can cause, so it is asserted.
class VirtualClock {
 public:
  TimeUs now_us() const { return now_us_; }

  void advance_to(TimeUs t_us) {
    REDLAB_ASSERT(t_us >= now_us_ && "virtual time never goes backwards");
    now_us_ = t_us;
  }

 private:
  TimeUs now_us_ = 0;
};

}  // namespace redlab
