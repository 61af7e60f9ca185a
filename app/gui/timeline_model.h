// The timeline's data model: draw-ready lanes, spans, marks and arrows prepared from a
// redlab::Trace (docs/trace-format.md). No UI code here (Tracy's Worker): the view
// (timeline_view.h) only culls, folds and draws what this model prepared, and tests or a
// command-line tool can use it without a window.
//
// Incremental: update(trace) consumes only the events it has not seen yet, so the GUI calls it
// every frame while a live run appends to the trace; with nothing new it costs a comparison.
// Spans whose closing event has not arrived yet are "open" (to_us == kOpenUs) and are drawn
// up to end_us(). Everything refers back to the trace by event index, so texts (command
// lines, replies) are read from the trace when needed instead of being copied.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/trace.h"

namespace redlab::gui {

// to_us of a span whose closing event has not been seen (yet).
inline constexpr TimeUs kOpenUs = kTimeNeverUs;

enum class ItemKind : uint8_t {
  command,    // command -> reply / read_timeout / eof on one connection
  pool_wait,  // pool_wait -> pool_hit / pool_miss / pool_timeout / pool_wait_deadline
  work,       // work -> work_done
  sleep,      // sleep -> sleep_done
  pause,      // fault "pause ..." -> "resume" on a host (or "stalls for" on a server)
  hold,       // an actor believes it holds a lock: lock_acquired -> released/lost/actor end
  ttl,        // server lane: a lock key alive, draining from ttl_us to 0 at deadline_us
  gap,        // a subscriber disconnected: pubsub_disconnected -> pubsub_resubscribe
  error,      // mark: read_timeout, eof, dial failure, pool timeout, gave up, ...
  accept,     // mark: a protected resource accepted a write
  reject,     // mark: a protected resource rejected a write (stale fence)
  lost,       // mark: a message published while the subscriber was in a gap
  expired,    // mark: a lock key expired on the server (its TTL ran out)
  fault,      // mark: a fault, a server-side command, a clock jump, a restart
  count_      // number of kinds (legend, tests)
};
const char* item_kind_name(ItemKind kind);

enum ItemFlags : uint8_t {
  kItemOpen = 1,          // the closing event has not been seen yet
  kItemErrorReply = 2,    // command: the reply was an (error), or it timed out / hit EOF
  kItemForeignEnd = 4,    // ttl: deleted by an actor that was not its owner
  kItemEndedByOwner = 8,  // ttl: released/deleted by its owner
};

struct Item {
  TimeUs from_us = 0;
  TimeUs to_us = 0;          // == from_us for marks; kOpenUs while open
  int64_t begin_event = -1;  // index into trace.events()
  int64_t end_event = -1;    // closing event (reply, work_done, ...), -1 for marks / open
  TimeUs deadline_us = 0;    // hold, ttl: when the key expires (acquired + ttl, or extended)
  TimeUs ttl_us = 0;         // hold, ttl: the TTL at from_us (for the draining bar)
  ItemKind kind = ItemKind::command;
  uint8_t flags = 0;
  int32_t group = -1;  // hold, ttl: index into TimelineModel::locks() (the colour)

  bool open() const { return (flags & kItemOpen) != 0; }
  bool operator==(const Item&) const = default;
};

// One horizontal row. Items are sorted by from_us; max_to_us[i] is the largest to_us among
// items[0..i] (open items count as kOpenUs), so the first item that can reach into a view
// starting at t is a binary search away even when spans overlap.
struct Row {
  std::string label;        // "conn 3", "holds", "lock:job:42", ...
  int64_t connection = -1;  // the connection of a command row
  std::vector<Item> items;
  std::vector<TimeUs> max_to_us;

  // Index of the first item whose to_us (open: end) may be >= t. Items before it end earlier.
  size_t first_reaching(TimeUs t) const;
  bool operator==(const Row& other) const {
    return label == other.label && connection == other.connection && items == other.items;
  }
};

enum class LaneKind : uint8_t { actor, server, resource };

struct Lane {
  std::string name;  // actor instance / client process, server name, resource name
  LaneKind kind = LaneKind::actor;
  // Rows in display order. Actor lanes: "steps" (work, sleep, pool waits, errors without a
  // connection), one row per lock held, one row per connection. Server lanes: "events"
  // (faults, expiries) then one row per lock key. Resource lanes: one row of marks.
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
  int64_t from_event = -1;  // the publishing command event
  int64_t to_event = -1;    // the delivery event; -1 when lost
  bool lost = false;
  bool stream = false;
  bool operator==(const Arrow&) const = default;
};

struct ViolationRegion {
  TimeUs from_us = 0;
  TimeUs to_us = 0;
  std::vector<std::string> who;  // actor names
  std::string text;              // plain words: "A and B held lock:job:42 together from ..."
  std::string check;             // the check's name
  bool operator==(const ViolationRegion&) const = default;
};

struct Note {  // narration and actor notes, with their times
  TimeUs time_us = 0;
  int64_t event = -1;
  std::string actor;  // "" for narration
  std::string text;
  bool operator==(const Note&) const = default;
};

struct PoolSample {  // pool_stats "hits=0 misses=1 timeouts=0 total=1 idle=1 stale=0"
  TimeUs time_us = 0;
  int64_t hits = 0, misses = 0, timeouts = 0, total = 0, idle = 0, stale = 0;
  bool operator==(const PoolSample&) const = default;
};

struct KeyState {  // one key of a server's keyspace at some time
  std::string key;
  std::string type;     // "string", "list", ...
  std::string value;    // short redis-cli-like rendering
  int64_t ttl_ms = -1;  // -1: no expiry
  bool operator==(const KeyState&) const = default;
};

class TimelineModel {
 public:
  TimelineModel();
  ~TimelineModel();
  TimelineModel(TimelineModel&&) noexcept;
  TimelineModel& operator=(TimelineModel&&) noexcept;

  // Consumes trace events not seen yet. A trace shorter than what was seen (a new run in the
  // same Trace object) starts over.
  void update(const Trace& trace);
  void reset();

  // Replaces the violation regions parsed from the trace's `check` events (which carry only
  // the first violation of each check). Pass an empty vector to go back to the parsed ones.
  void set_violations(std::vector<ViolationRegion> regions);
  const std::vector<ViolationRegion>& violations() const;

  TimeUs end_us() const { return end_us_; }  // time of the last event seen
  size_t event_count() const { return events_seen_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  int lane_index(const std::string& name) const;                // -1 if none
  const std::vector<Arrow>& arrows() const { return arrows_; }  // sorted by from_us
  const std::vector<TimeUs>& arrow_max_to_us() const { return arrow_max_to_us_; }
  const std::vector<Note>& notes() const { return notes_; }
  const std::vector<std::string>& locks() const { return locks_; }  // lock keys, first seen
  // Pool statistics per client process, in time order.
  const std::map<std::string, std::vector<PoolSample>>& pool_stats() const { return pool_; }
  // meta "client.HOST" -> HOST -> its options text.
  const std::map<std::string, std::string>& client_options() const { return client_options_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  // Server of a connection (from its `dial` event), "" if unknown.
  std::string server_of(int64_t connection) const;

  // The time of the first event strictly after t, or nullopt at the end (step to next event).
  std::optional<TimeUs> next_event_after(TimeUs t) const;
  // The first event index with time_us > t (trace.size() if none).
  size_t first_event_after(TimeUs t) const;

  // The keyspace of `server` as it was at time t: setup events, then successful commands
  // replayed in reply order through a fresh fake server (see timeline_model.cpp).
  // Sorted by key. Empty for an unknown server.
  std::vector<KeyState> keyspace_at(const std::string& server, TimeUs t) const;

  // Structural equality of everything prepared (tests: incremental == one-shot).
  bool same_content(const TimelineModel& other) const;

 private:
  struct Builder;  // per-event matching state (open spans, subscriptions, ...)
  struct Replay;   // keyspace_at's cache
  int lane_for(const std::string& name, LaneKind kind);
  void consume(const Trace& trace, size_t index);
  void finish_update();

  std::vector<Lane> lanes_;
  std::vector<Arrow> arrows_;
  std::vector<TimeUs> arrow_max_to_us_;
  std::vector<Note> notes_;
  std::vector<std::string> locks_;
  std::map<std::string, std::vector<PoolSample>> pool_;
  std::map<std::string, std::string> client_options_;
  std::map<std::string, std::string> meta_;
  std::vector<ViolationRegion> parsed_violations_;
  std::vector<ViolationRegion> given_violations_;
  bool violations_given_ = false;
  std::vector<TimeUs> event_times_us_;
  size_t events_seen_ = 0;
  TimeUs end_us_ = 0;
  std::unique_ptr<Builder> builder_;
  // keyspace_at replays from the trace, so the model keeps the events it needs for that.
  mutable std::unique_ptr<Replay> replay_;
};

}  // namespace redlab::gui
