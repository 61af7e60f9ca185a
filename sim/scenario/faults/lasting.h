// What latency and replica_lag share: a non-negative by_ms, and an effect that lasts for_us
// (one event that opens a span the undo closes) or, with no for_us, to the end of the run (one
// event).
#pragma once

#include <string>
#include <utility>

#include "sim/scenario/engine_impl.h"

namespace redlab::scenario::faults {

// by_ms, which these faults cannot take negative: a located error names `what`.
inline int64_t nonnegative_by_ms(Engine& e, const FaultDef& f, const std::string& what) {
  int64_t by_ms = e.fault_by_ms(f);
  if (by_ms < 0)
    e.fail(Where{f.where.pos, f.where.path + ".by_ms"},
           what + " cannot be negative (" + std::to_string(by_ms) + ")");
  return by_ms;
}

// Puts `ev`; with for_us > 0 as a span that, for_us later, `undo()` ends with the fault event
// end_kind ("... removed") on `who`.
template <typename Undo>
void lasting(Engine& e, TraceEvent ev, TimeUs for_us, const std::string& who,
             const std::string& end_text, const std::string& end_kind, Undo undo) {
  if (for_us <= 0) return e.put(std::move(ev));
  int64_t span = e.begin(std::move(ev));
  e.scheduler_.schedule_after(for_us, [&e, who, end_text, end_kind, span, undo] {
    undo();
    e.end(e.fault_ev(who, end_text, end_kind), span);
  });
}

}  // namespace redlab::scenario::faults
