// The client model's voice in the trace: one place that stamps time, actor, connection, step
// and attempt on every event, so that a timeline can be drawn and two runs aligned.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/cmdline.h"
#include "sim/core/trace.h"
#include "sim/net/process.h"

namespace redlab::client {

class Tracer {
 public:
  Tracer(Trace* trace, net::Process& process) : trace_(trace), process_(process) {}

  const std::string& actor() const { return process_.name(); }
  // actor: who acted when several actors (goroutines) share one client; empty = the process.
  void event(std::string kind, int64_t connection, int64_t step, int64_t attempt, std::string text,
             const std::string& actor = {}) const {
    if (!trace_) return;
    trace_->append(TraceEvent{process_.now_us(), std::move(kind),
                              actor.empty() ? process_.name() : actor, connection, step, attempt,
                              std::move(text)});
  }

 private:
  Trace* trace_;
  net::Process& process_;
};

// A command line for a trace (sim/core/cmdline.h).
using redlab::command_line;

}  // namespace redlab::client
