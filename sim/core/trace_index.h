// The one reader of a trace (Tracy's Worker): everything a consumer needs, prepared in one
// pass over the events and nothing parsed from `text`. The checks, the CLI's report, the
// GUI's timeline model, the Chrome export and the differ all read a trace through this.
//
// What it prepares (docs/trace-format.md says where each comes from):
// - lanes: the actor instances in the file's order (run_start), the servers (server_start)
//   with where their events come from ("fake": the server's own; "clients": only what
//   clients observed), the resources, plus any other actor an event names;
// - spans: for every span id the event that began it and the one that ended it;
// - connections: the server and the first actor of each (from dial);
// - the keyspace of each server at any moment, replayed from the server's own key events
//   (key_set, key_del, key_expired) with checkpoints, and each server's clock at any time
//   (server_start, clock_jump), so a TTL left is the server's own arithmetic;
// - the verdicts: every violation, every check, the expectation.
//
// Incremental: update() consumes only the events appended since the last call (a live run).
// The index refers to the trace it was built from: the trace must outlive it and may only
// grow (a trace that shrank is an error: call reset()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/trace.h"

namespace redlab {

inline constexpr size_t kNoEvent = static_cast<size_t>(-1);

struct KeyState {
  int db = 0;
  std::string key;
  std::string type;           // "string", "list", ...
  std::string value;          // the server's value summary
  int64_t expire_at_ms = -1;  // on the server's clock (unix ms); -1 = no TTL
  bool operator==(const KeyState&) const = default;
};

struct TraceViolation {
  std::string check;
  TimeUs from_us = 0, to_us = 0;
  std::vector<std::string> who;
  std::string text;
  size_t event = kNoEvent;
  bool operator==(const TraceViolation&) const = default;
};

struct TraceCheck {
  std::string name, kind;
  bool ok = true;
  int64_t violations = 0;
  std::optional<bool> expected;
  bool judged = true;       // false: the check had nothing to judge from (its summary says why)
  bool judged_here = true;  // false: this backend cannot record what it needs (left out)
  std::string summary;
  size_t event = kNoEvent;
  bool operator==(const TraceCheck&) const = default;
};

// One entry of a server's SLOWLOG (TraceIndex::slowlog_at), from its `slowlog` event.
struct SlowlogRow {
  int64_t id = 0;           // as SLOWLOG GET numbers it: from 0 at the server's (re)start
  TimeUs logged_at_us = 0;  // when the entry was made: the command's end
  TimeUs duration_us = 0;   // how long the command ran
  std::vector<std::string> argv;
  int64_t connection = -1;  // the client's connection
  size_t event = kNoEvent;  // its slowlog event
  bool operator==(const SlowlogRow&) const = default;
};

// One key event of a server, as the index keeps it.
struct KeyChange {
  size_t event = 0;  // its position in the trace
  TimeUs time_us = 0;
  bool present = false;  // key_set: the key now holds `state`; key_del / key_expired: gone
  bool expired = false;  // key_expired: its TTL ran out (no command did it)
  int64_t cause = 0;     // the span of the client command that did it; 0 = the server itself
  KeyState state;        // for key_del / key_expired: what it held just before
};

class TraceIndex {
 public:
  TraceIndex() = default;
  explicit TraceIndex(const Trace& trace) { update(trace); }

  // Consumes the events of `trace` not seen yet (all of them the first time, or after a
  // reset, or when given another trace object).
  void update(const Trace& trace);
  void reset();

  const Trace* trace() const { return trace_; }
  const TraceEvent& event(size_t i) const { return trace_->events()[i]; }
  size_t size() const { return seen_; }

  // ---- Lanes ----
  const std::vector<std::string>& actors() const { return actors_; }    // lane order
  const std::vector<std::string>& servers() const { return servers_; }  // file order
  const std::vector<std::string>& resources() const { return resources_; }
  // "fake" (the server's own events are in the trace), "clients" (only what clients saw),
  // "" (unknown server).
  std::string server_source(const std::string& server) const;
  bool has_server_events(const std::string& server) const {
    return server_source(server) == "fake";
  }

  // ---- Spans ----
  // The event that begins / ends span `id`; kNoEvent if unknown, or if it is still open.
  size_t span_begin(int64_t id) const;
  size_t span_end(int64_t id) const;
  // The end of the span event i begins (kNoEvent if i begins none or it is open).
  size_t end_of(size_t i) const;
  // The begin of the span event i ends (kNoEvent if i ends none).
  size_t begin_of(size_t i) const;

  // ---- Events by kind, in trace order ----
  const std::vector<size_t>& of_kind(std::string_view kind) const;

  // ---- Connections ----
  std::string connection_server(int64_t connection) const;
  std::string connection_actor(int64_t connection) const;  // who dialled it

  // ---- Servers' keyspaces and clocks ----
  // Indices of the key events (key_set, key_del, key_expired) of a server, in order.
  const std::vector<size_t>& key_events(const std::string& server) const;
  const std::vector<KeyChange>& key_changes(const std::string& server) const;
  // The keyspace after every event with time_us <= t (sorted by db, then key); empty once a
  // failover took the server down (failed_over_at).
  std::vector<KeyState> keyspace_at(const std::string& server, TimeUs t) const;
  // When a failover took `server` down for good (-1: never) and the replica its name then
  // led to.
  TimeUs failed_over_at(const std::string& server) const;
  std::string failed_over_to(const std::string& server) const;
  // The keyspace after the events before trace position `event` (not including it).
  std::vector<KeyState> keyspace_before(const std::string& server, size_t event) const;
  // One key's state before trace position `event`; nullopt if absent.
  std::optional<KeyState> key_before(const std::string& server, int db, std::string_view key,
                                     size_t event) const;
  // What SLOWLOG GET -1 would answer at time t, newest first: the server's slowlog events
  // whose entry was made by t, after its last SLOWLOG RESET or restart, as many as the log
  // held after the newest push (its `count`: slowlog-max-len applied).
  std::vector<SlowlogRow> slowlog_at(const std::string& server, TimeUs t) const;
  // The server's clock (unix ms) at time t; -1 if the trace does not say.
  int64_t server_clock_ms(const std::string& server, TimeUs t) const;

  // ---- Verdicts ----
  const std::vector<TraceViolation>& violations() const { return violations_; }
  const std::vector<TraceCheck>& checks() const { return checks_; }
  std::optional<bool> expectation_met() const { return expectation_met_; }
  // "met", "not met", "met on the checks this backend can judge (not judged here: ...)".
  const std::string& expectation_text() const { return expectation_text_; }

  TimeUs end_us() const { return end_us_; }

 private:
  struct SpanRef {
    size_t begin = kNoEvent;
    size_t end = kNoEvent;
  };
  using Keyspace = std::map<std::pair<int, std::string>, KeyState>;
  struct ServerInfo {
    std::string source;
    std::vector<KeyChange> changes;
    std::vector<size_t> key_events;
    // The keyspace after changes[k * kCheckpointEvery - 1], for k >= 1 (index k - 1).
    std::vector<Keyspace> checkpoints;
    Keyspace current;                               // after every change so far
    std::vector<std::pair<TimeUs, int64_t>> clock;  // (time, clock ms at that time)
    // A failover took it down for good (repl_failover): from then on it holds nothing anyone
    // can read, and its name leads to `led_to`.
    size_t down_event = kNoEvent;
    TimeUs down_us = -1;
    std::string led_to;
  };
  static constexpr size_t kCheckpointEvery = 256;

  void consume(size_t i);
  ServerInfo& server_info(const std::string& name);
  void add_actor(const std::string& name);
  // The keyspace after the first `count` changes of s.
  Keyspace replay(const ServerInfo& s, size_t count) const;
  static std::vector<KeyState> flatten(const Keyspace& k);

  const Trace* trace_ = nullptr;
  size_t seen_ = 0;
  TimeUs end_us_ = 0;
  std::vector<std::string> actors_, servers_, resources_;
  std::map<std::string, size_t, std::less<>> actor_seen_;
  std::map<std::string, ServerInfo, std::less<>> server_info_;
  std::vector<SpanRef> spans_;          // by span id
  std::vector<int64_t> begins_, ends_;  // per event: the span it begins / ends (0: none)
  // Each kind's events, and what consume() does with the kind (classified once per kind).
  struct KindEvents {
    uint8_t role = 0;
    std::vector<size_t> events;
  };
  std::unordered_map<std::string, KindEvents> by_kind_;
  std::string last_lane_;  // the last actor name consume() gave a lane to (a fast path)
  std::map<int64_t, std::pair<std::string, std::string>> connections_;  // id -> (server, actor)
  std::vector<TraceViolation> violations_;
  std::vector<TraceCheck> checks_;
  std::optional<bool> expectation_met_;
  std::string expectation_text_;
};

}  // namespace redlab
