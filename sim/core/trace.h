// The trace: the one product of a run (see DESIGN.md). An append-only log of what happened,
// when and to whom; the GUI, the text timeline, replay and trace comparison all read it and
// nothing else.
//
// Identity for alignment: two runs of one scenario (variant vs variant, seed vs seed, fake
// vs real) are compared event by event, so every event says who acted (actor), over which
// connection, in which step of the actor's script and which retry attempt of that step.
//
// Serialization is JSON with a "format" and a "version" field. Output is byte-identical for
// identical input: fields are written in a fixed order, meta keys sorted, integers only, one
// event per line (so that two traces diff well with ordinary tools).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"

namespace redlab {

inline constexpr std::string_view kTraceFormat = "redlab-trace";
inline constexpr int64_t kTraceVersion = 1;

struct TraceEvent {
  TimeUs time_us = 0;
  std::string kind;         // what happened, a short lower_snake word ("command", "reply")
  std::string actor;        // who: an actor's name, "server", "net"; empty for the run itself
  int64_t connection = -1;  // connection id; -1 = not about a connection
  int64_t step = -1;        // index of the actor's step; -1 = not in a step
  int64_t attempt = -1;     // retry attempt of that step, 0 = first; -1 = not applicable
  std::string text;         // human-readable detail (a command line, a reply, a reason)

  bool operator==(const TraceEvent&) const = default;
};

class Trace {
 public:
  // Run-level settings (seed, scenario, backend, every resolved parameter), written first.
  void set_meta(std::string key, std::string value) { meta_[std::move(key)] = std::move(value); }
  const std::map<std::string, std::string>& meta() const { return meta_; }

  void append(TraceEvent event) {
    events_.push_back(std::move(event));
    if (listener_) listener_(events_.back());
  }
  // Sees every event as it is appended (a live view of a running engine). Not part of the
  // trace's value: comparisons ignore it.
  using Listener = std::function<void(const TraceEvent&)>;
  void set_listener(Listener listener) { listener_ = std::move(listener); }
  const std::vector<TraceEvent>& events() const { return events_; }
  void reserve(size_t events) { events_.reserve(events); }
  size_t size() const { return events_.size(); }

  bool operator==(const Trace& other) const {
    return meta_ == other.meta_ && events_ == other.events_;
  }

 private:
  std::map<std::string, std::string> meta_;
  std::vector<TraceEvent> events_;
  Listener listener_;
};

// The JSON text of a trace. Text that is not valid UTF-8 is written with U+FFFD in place of
// the bad bytes (JSON strings are Unicode); put binary data through quote_repr first.
std::string trace_to_json(const Trace& trace);

// Parses trace_to_json's output. On bad input returns nullopt and, if error is given, says
// what and where ("events[3].time_us: expected an integer").
std::optional<Trace> trace_from_json(std::string_view json, std::string* error = nullptr);

}  // namespace redlab
