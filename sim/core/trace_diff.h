// Two runs compared (ShiViz's question: where do these executions part?): variant against
// variant, seed against seed, before against after an intervention, the fake against a real
// server. Used by `redlab diff` and the GUI's compare view.
//
// Events are aligned by identity, not by position: (actor, step, attempt, kind) and the
// occurrence of that key, so the second EVAL of A's release step in one run meets the second
// in the other however much else happened between (docs/trace-format.md, identity fields).
// Aligned events are compared on their typed fields, never on `text`; the random parts of a
// run (lock tokens) are renamed to their role first ("A's token 1"), and absolute clocks
// (a key's expire_at_ms) are left out, so two seeds differ only where the story does.
//
// What is compared: every event kind that both traces record. A kind only one trace has at
// all (the fake server's own key events against a real server's "as seen by clients") is
// listed as not compared, not as a thousand differences. Times of a real run are put back on
// the scenario's scale (its `time_scale` meta) before they are compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/trace.h"

namespace redlab {

struct TraceDiffOptions {
  // Aligned events further apart than this are a timing difference (listed, never a
  // verdict). The scenario's tolerance, or what the user asks for.
  TimeUs tolerance_us = 1000;
};

struct TraceDifference {
  enum class Kind : uint8_t {
    verdict,    // a check or the expectation came out differently
    only_in_a,  // an event run A has and B lacks
    only_in_b,
    value,   // aligned events whose fields differ (a reply, an error, a value)
    timing,  // aligned events further apart than the tolerance
  };
  Kind kind = Kind::value;
  TimeUs at_us = 0;                    // when, on A's time axis (B's for only_in_b)
  size_t a = static_cast<size_t>(-1);  // the event in A, if any
  size_t b = static_cast<size_t>(-1);  // the event in B, if any
  std::string what;                    // one line for people
  // Typed, for a screen that words it in another language: a verdict's check ("" for the
  // expectation), and for a value difference the first compared field that differs.
  std::string check;
  std::optional<F> field;
};

struct TraceDiff {
  std::vector<TraceDifference> differences;  // verdicts first, then by time
  // The earliest event-level difference (only_in_*, value): where the runs part. Timing
  // differences do not count, so two seeds do not part at their first jitter.
  std::optional<TraceDifference> first_divergence;
  size_t count_verdict = 0, count_only_in_a = 0, count_only_in_b = 0, count_value = 0,
         count_timing = 0;
  size_t aligned = 0;                                         // event pairs compared
  std::vector<std::string> kinds_only_in_a, kinds_only_in_b;  // not compared
  bool verdicts_differ() const { return count_verdict > 0; }
};

TraceDiff diff_traces(const Trace& a, const Trace& b, const TraceDiffOptions& options = {});

const char* difference_kind_name(TraceDifference::Kind kind);

}  // namespace redlab
