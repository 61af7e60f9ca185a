// Other views of a trace: the Chrome trace-event format (chrome://tracing, ui.perfetto.dev).
#pragma once

#include <string>

#include "sim/core/trace.h"

namespace redlab::scenario {

// One process "redlab", one thread per actor (and per server, "net"); commands, work,
// sleeps and lock holds as complete events ("X") with their durations, everything else as
// instant events ("i"). Timestamps in microseconds of virtual time. Deterministic text.
std::string chrome_trace_json(const Trace& trace);

}  // namespace redlab::scenario
