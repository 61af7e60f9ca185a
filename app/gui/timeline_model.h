// The timeline's data model: draw-ready lanes, spans, marks and arrows prepared from a
// redlab::Trace (docs/trace-format.md, version 2). No UI code here (Tracy's Worker): the view
// (timeline_view.h) only culls, folds and draws what this model prepared, and tests or a
// command-line tool can use it without a window.
//
// Everything comes from typed fields and spans, read through the one trace reader
// (sim/core/trace_index.h), which the model keeps: no event's `text` is parsed. Holds are
// lock_acquired -> hold_end spans, commands are command -> reply spans, the server lane is
// the server's own record (served, key_set / key_del / key_expired, scripts), the keyspace
// panel is TraceIndex::keyspace_at, the violation regions are the trace's violation events.
//
// Incremental: update(trace) consumes only the events it has not seen yet, so the GUI calls it
// every frame while a live run appends to the trace; with nothing new it costs a comparison.
// Spans whose closing event has not arrived yet are "open" (to_us == kOpenUs) and are drawn
// up to end_us(). Everything refers back to the trace by event index (texts are read from the
// trace when drawn, never copied), so the trace must outlive the model.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"

namespace redlab::gui {

// to_us of a span whose closing event has not been seen (yet).
inline constexpr TimeUs kOpenUs = kTimeNeverUs;

enum class ItemKind : uint8_t {
  command,    // a command on a connection: command -> reply / read_timeout / eof / no_reply
  pool_wait,  // pool_wait -> pool_hit / pool_miss / pool_timeout / pool_wait_deadline
  work,       // work -> work_done
  sleep,      // sleep -> sleep_done; a retry's backoff (its duration_us)
  pause,      // band: a host paused (fault pause -> resume) or a server stalled
  hold,       // an actor believes it holds a lock: lock_acquired -> hold_end
  ttl,        // server lane: a key with a TTL, draining to 0 at deadline_us (key_set -> the
              // key's next key_set / key_del / key_expired)
  served,     // server lane: busy serving a command (served) or running a script
              // (script_start -> script_end); a real server: a command in flight as seen by
              // the clients (command -> reply)
  gap,        // a subscriber disconnected: pubsub_disconnected -> pubsub_resubscribe
  error,      // mark: read_timeout, eof, dial failure, pool timeout, gave up, ...
  accept,     // mark: a protected resource accepted a write
  reject,     // mark: a protected resource rejected a write (stale fence)
  lost,       // mark: a message published while the subscriber was in a gap
  expired,    // mark: a key's TTL ran out on the server (key_expired)
  fault,      // mark: a fault, a server-side command, a script past its threshold
  restart,    // mark: the server restarted (a restart fault): its keys and scripts are gone
  cut,        // mark: the server closed a client itself (client_cut: an output buffer limit)
  count_      // number of kinds (legend, tests)
};
// The kind's name in English ("command", "key TTL"), for tests and messages; the view words
// it in the chosen language.
const char* item_kind_name(ItemKind kind);

enum ItemFlags : uint8_t {
  kItemOpen = 1,            // the closing event has not been seen yet
  kItemErrorReply = 2,      // the span ended in an error (error reply, timeout, EOF, lost lock)
  kItemForeignEnd = 4,      // ttl: deleted by an actor that did not set it
  kItemEndedByOwner = 8,    // ttl: deleted by the actor that set it
  kItemSeenByClients = 16,  // served: a real server's command as its client saw it
  // An error the client recovered from: its call was retried and succeeded, or Script.Run fell
  // back from EVALSHA to EVAL after NOSCRIPT (command spans and error marks).
  kItemRecovered = 32,
  kItemStale = 64,  // accept: the resource took a fence below (or equal to) one it had seen
};

struct Item {
  TimeUs from_us = 0;
  TimeUs to_us = 0;          // == from_us for marks; kOpenUs while open
  int64_t begin_event = -1;  // index into trace.events()
  int64_t end_event = -1;    // closing event (reply, work_done, ...), -1 for marks / open
  // hold: when the holder believes the lock's TTL runs out (acquired or extended + TTL).
  // ttl: when the key's TTL reaches 0 on its server's clock (expire_at_ms and the clock).
  TimeUs deadline_us = 0;
  // hold: its TTL. ttl: the TTL the key was given (the bar's full height; a clock jump
  // starts a new segment lower down, with the same full height).
  TimeUs ttl_us = 0;
  ItemKind kind = ItemKind::command;
  uint8_t flags = 0;
  int32_t group = -1;  // hold, ttl: index into TimelineModel::locks() (the colour)
  int32_t owner = -1;  // ttl: the lane of the actor whose command set the key; -1 unknown

  bool open() const { return (flags & kItemOpen) != 0; }
  bool operator==(const Item&) const = default;
};

// One horizontal row. Items are sorted by from_us; max_to_us[i] is the largest to_us among
// items[0..i] (open items count as kOpenUs), so the first item that can reach into a view
// starting at t is a binary search away even when spans overlap.
// What a row holds: its label is drawn in the chosen language from this (the lock and key
// names, and a connection row's numbers, are the label itself).
enum class RowKind : uint8_t {
  steps,
  events,
  served,
  in_flight,
  connection,
  lock,
  key,
  other_keys
};

struct Row {
  std::string label;        // "conn 3", "lock:job:42", "served", ...
  int64_t connection = -1;  // the connection of a command row
  RowKind kind = RowKind::steps;
  std::vector<Item> items;
  std::vector<TimeUs> max_to_us;

  // Index of the first item whose to_us (open: end) may be >= t. Items before it end earlier.
  size_t first_reaching(TimeUs t) const;
  bool operator==(const Row& other) const {
    return label == other.label && connection == other.connection && items == other.items;
  }
};

enum class LaneKind : uint8_t { actor, server, resource };

// The caption of a server lane whose events are what clients observed (a real backend).
inline constexpr const char* kSeenByClients = "as seen by clients";

struct Lane {
  std::string name;  // actor instance / client process, server name, resource name
  LaneKind kind = LaneKind::actor;
  std::string caption;  // under the name: kSeenByClients for a real server, else ""
  // Rows in display order. Actor lanes: "steps" (work, sleep, pool waits, marks), one row per
  // lock held, one row per connection. Server lanes: "events" (faults, marks), "served" (or
  // "in flight" on a real server), then one row per key with a TTL. Resource lanes: marks.
  std::vector<Row> rows;
  // Whole-lane background bands: pauses of the host (actor lanes) or stalls (servers).
  std::vector<Item> bands;
  bool operator==(const Lane&) const = default;
};

// A message from a publisher to one receiver (pub/sub or stream), or to a lost mark.
struct Arrow {
  TimeUs from_us = 0;  // the PUBLISH / XADD was sent
  TimeUs to_us = 0;    // delivered (pubsub_message / stream_message), or the lost mark
  int32_t from_lane = -1, from_row = -1;
  int32_t to_lane = -1, to_row = -1;
  int64_t from_event = -1;  // the publishing command event (the publish event if none)
  int64_t to_event = -1;    // the delivery event; -1 when lost
  bool lost = false;
  bool stream = false;
  bool operator==(const Arrow&) const = default;
};

struct ViolationRegion {  // one violation event
  TimeUs from_us = 0;
  TimeUs to_us = 0;
  std::vector<std::string> who;  // actor names
  std::string text;              // plain words: "A and B held lock:job:42 together from ..."
  std::string check;             // the check's name
  int64_t event = -1;            // the violation event (written at the end of the run)
  // Resource lanes it concerns: those with a write decided at its start (a stale or forged
  // fence accepted), so its marker is on the lane where the wrong write went in.
  std::vector<int32_t> resource_lanes;
  bool operator==(const ViolationRegion&) const = default;
};

struct Note {  // narration and actor notes, with their times
  TimeUs time_us = 0;
  int64_t event = -1;
  std::string actor;               // "" for narration
  std::string text;                // in the run's language
  std::vector<std::string> texts;  // narration: en, ru, cs (the trace's `texts`), if it has them
  // The note in a language (Lang as its index), or in the run's own if the trace has no other.
  const std::string& text_in(size_t lang) const { return lang < texts.size() ? texts[lang] : text; }
  bool operator==(const Note&) const = default;
};

struct PoolSample {  // a pool_stats / pool_stats_sample event's fields
  TimeUs time_us = 0;
  int64_t hits = 0, misses = 0, timeouts = 0, total = 0, idle = 0, stale = 0;
  bool operator==(const PoolSample&) const = default;
};

// One key of a server's keyspace at some time (TraceIndex::keyspace_at), with its TTL left.
struct KeyRow {
  int db = 0;
  std::string key;
  std::string type;           // "string", "list", ...
  std::string value;          // the server's value summary
  int64_t expire_at_ms = -1;  // on the server's clock; -1 = no TTL
  int64_t ttl_ms = -1;        // left at that time: -1 no TTL, -2 unknown (no clock), >= 0 left
  bool operator==(const KeyRow&) const = default;
};
// "no TTL", "TTL unknown", "expiring", "9.2 s left": the words of `redlab show --keyspace`.
std::string ttl_left_text(const KeyRow& key);

// An event in a few words for a label or a tooltip, from its typed fields: a command's argv
// as a command line, else its text, else its error or reply, else its fields ("lock=... ").
// without_text: never its text (the engine's English words), for a screen in another language.
std::string event_summary(const TraceEvent& e, size_t max_chars = 120, bool without_text = false);
// Every typed field of an event as "name: value" lines (the inspector).
std::vector<std::string> event_fields(const TraceEvent& e);

class TimelineModel {
 public:
  TimelineModel();
  ~TimelineModel();
  TimelineModel(TimelineModel&&) noexcept;
  TimelineModel& operator=(TimelineModel&&) noexcept;

  // Consumes trace events not seen yet. Another trace object, or a trace shorter than what was
  // seen (a new run in the same Trace object), starts over.
  void update(const Trace& trace);
  void reset();

  // Every violation event of the trace, in trace order.
  const std::vector<ViolationRegion>& violations() const { return violations_; }
  // Indices into violations() by from_us (ties in trace order): kept as they arrive, so the
  // verdicts, stepping and the markers never sort them per frame (the trace lists them by check).
  const std::vector<size_t>& violations_by_start() const { return violations_by_start_; }

  TimeUs end_us() const { return end_us_; }  // time of the last event seen
  size_t event_count() const { return events_seen_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  int lane_index(const std::string& name) const;                // -1 if none
  const std::vector<Arrow>& arrows() const { return arrows_; }  // sorted by from_us
  // The single-threaded server busy with one command for a long time (DEBUG SLEEP, KEYS on a
  // big keyspace, a slow script: served for at least kBusyMinUs), sorted by from_us: the GUI
  // draws them across every lane, so the clients that wait visibly queue behind them.
  struct Busy {
    int32_t lane = -1;  // the server's lane
    TimeUs from_us = 0, to_us = 0;
    int64_t event = -1;  // the served event
  };
  static constexpr TimeUs kBusyMinUs = 50'000;
  const std::vector<Busy>& busy() const { return busy_; }
  const std::vector<TimeUs>& arrow_max_to_us() const { return arrow_max_to_us_; }
  const std::vector<Note>& notes() const { return notes_; }
  // Lock names (lock_acquired) and keys with TTL bars, first seen first: the colours.
  const std::vector<std::string>& locks() const { return locks_; }
  // Pool statistics per client process, in time order.
  const std::map<std::string, std::vector<PoolSample>>& pool_stats() const { return pool_; }
  // meta "client.HOST" -> HOST -> its options text.
  const std::map<std::string, std::string>& client_options() const { return client_options_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  // The reader the model was built with (checks, spans, connections, keyspaces).
  const TraceIndex& index() const { return index_; }
  // The kind of the check a scenario named `name` (its check event), "" if unknown.
  std::string check_kind(const std::string& name) const;
  // Server of a connection (from its `dial` event), "" if unknown.
  std::string server_of(int64_t connection) const { return index_.connection_server(connection); }

  // The time of the first event strictly after t, or nullopt at the end (step to next event).
  std::optional<TimeUs> next_event_after(TimeUs t) const;
  // The first event index with time_us > t (event_count() if none).
  size_t first_event_after(TimeUs t) const;

  // The servers, in the trace's order.
  const std::vector<std::string>& servers() const { return index_.servers(); }
  // Whether the trace has the server's own record (a fake server); a real server's keyspace
  // was not observed.
  bool server_observed(const std::string& server) const { return index_.has_server_events(server); }
  // The keyspace of `server` at time t (TraceIndex::keyspace_at, sorted by db and key) with
  // each key's TTL left on the server's clock at t. Empty for an unknown or real server.
  std::vector<KeyRow> keyspace_at(const std::string& server, TimeUs t) const;
  // SLOWLOG GET -1 of `server` at time t (TraceIndex::slowlog_at), newest first.
  std::vector<SlowlogRow> slowlog_at(const std::string& server, TimeUs t) const {
    return index_.slowlog_at(server, t);
  }

  // Structural equality of everything prepared (tests: incremental == one-shot).
  bool same_content(const TimelineModel& other) const;

 private:
  struct Builder;  // per-event matching state (open spans, subscriptions, live keys, ...)
  int lane_for(const std::string& name, LaneKind kind);
  void consume(size_t index);
  void finish_update();

  TraceIndex index_;
  const Trace* trace_ = nullptr;
  std::vector<Lane> lanes_;
  std::vector<Arrow> arrows_;
  std::vector<Busy> busy_;
  std::vector<TimeUs> arrow_max_to_us_;
  std::vector<Note> notes_;
  std::vector<std::string> locks_;
  std::map<std::string, std::vector<PoolSample>> pool_;
  std::map<std::string, std::string> client_options_;
  std::map<std::string, std::string> meta_;
  std::vector<ViolationRegion> violations_;
  std::vector<size_t> violations_by_start_;
  size_t events_seen_ = 0;
  TimeUs end_us_ = 0;
  std::unique_ptr<Builder> builder_;
};

}  // namespace redlab::gui
