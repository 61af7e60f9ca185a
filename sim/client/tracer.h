// The client model's voice in the trace: one place that stamps time, actor, connection, step
// and attempt on every event, so that a timeline can be drawn and two runs aligned. Events
// carry typed fields (sim/core/trace.h); spans (a call, a command, a pool wait, a dial) get
// their ids here.
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
  bool on() const { return trace_ != nullptr; }
  // A new span id; 0 (no span) without a trace.
  int64_t new_span() const { return trace_ ? trace_->new_span() : 0; }
  // n consecutive new span ids (taken one after another, nothing between): the first, or 0
  // without a trace or for n = 0.
  int64_t new_spans(size_t n) const {
    if (!trace_ || n == 0) return 0;
    int64_t first = trace_->new_span();
    for (size_t i = 1; i < n; i++) trace_->new_span();
    return first;
  }
  // An event stamped with now and the actor (who acted when several actors, goroutines,
  // share one client; empty = the process). Add fields, then emit() it.
  TraceEvent make(std::string kind, int64_t connection, int64_t step, int64_t attempt,
                  std::string text = {}, const std::string& actor = {}) const {
    return TraceEvent{process_.now_us(),
                      std::move(kind),
                      actor.empty() ? process_.name() : actor,
                      connection,
                      step,
                      attempt,
                      std::move(text)};
  }
  void emit(TraceEvent&& event) const {
    if (trace_) trace_->append(std::move(event));
  }
  void event(std::string kind, int64_t connection, int64_t step, int64_t attempt, std::string text,
             const std::string& actor = {}) const {
    if (!trace_) return;
    emit(make(std::move(kind), connection, step, attempt, std::move(text), actor));
  }

 private:
  Trace* trace_;
  net::Process& process_;
};

// A command's arguments as a trace field: each at most 1 KiB (trace_excerpt), so a padded
// 64 MB PUBLISH does not make a 64 MB trace.
inline std::vector<std::string> trace_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& a : argv) out.push_back(trace_excerpt(a, 1024));
  return out;
}

// A command line for a trace (sim/core/cmdline.h).
using redlab::command_line;

}  // namespace redlab::client
