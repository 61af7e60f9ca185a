// The trace: the one product of a run (see DESIGN.md). An append-only log of what happened,
// when and to whom; the GUI, the text timeline, replay, the checks and trace comparison all
// read it (through one reader, sim/core/trace_index.h) and nothing else.
//
// Version 2 (docs/trace-format.md lists every kind and field):
// - Identity for alignment: every event says who acted (actor), over which connection, in
//   which step of the actor's script and which retry attempt of that step, so two runs (variant
//   vs variant, seed vs seed, fake vs real) can be compared event by event.
// - Typed fields next to the human `text`: the lock, key, token, TTL, fence, server, command
//   argv, reply, error class, ... are values, so no consumer ever parses `text`. Field names
//   come from one registry (F below, with its type), so a file cannot invent fields and a
//   reader knows each field's type.
// - Spans: an event that begins something (a call, a command on a connection, a lock hold, a
//   pool wait, work, a pause, a server's service of a command) carries a span id; the event
//   that ends it names that span in `ends`. Ids are set by the emitter, never inferred.
//
// Serialization is JSON with a "format" and a "version" field. Output is byte-identical for
// identical input: fields in a fixed order, default-valued identity fields left out, meta keys
// sorted, integers only, one event per line (so two traces diff well with ordinary tools).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/clock.h"

namespace redlab {

inline constexpr std::string_view kTraceFormat = "redlab-trace";
inline constexpr int64_t kTraceVersion = 2;

// ---- The field registry ----
// Every typed field an event may carry. The order here is the order of the documentation
// table; names are lower_snake and never collide with the identity fields (time_us, kind,
// actor, connection, step, attempt, span, ends, text).
#define REDLAB_TRACE_FIELDS(X)                                                                 \
  X(lock, Str, "a lock's key")                                                                 \
  X(key, Str, "a key")                                                                         \
  X(db, Int, "the database of a key (only when not 0)")                                        \
  X(type, Str, "a key's type: string, list, hash, set, zset, stream")                          \
  X(value, Str, "a value: a key's value summary, a resource write's value")                    \
  X(expire_at_ms, Int, "when a key expires, on its server's clock (unix ms); -1 = no TTL")     \
  X(token, Str, "a lock token")                                                                \
  X(ttl_us, Int, "a TTL")                                                                      \
  X(fence, Int, "a fencing token")                                                             \
  X(highest, Int, "the highest fence a resource had accepted before")                          \
  X(resource, Str, "a protected resource")                                                     \
  X(server, Str, "a server's name")                                                            \
  X(servers, List, "a Redlock's servers: those it is tried on, or those it took")              \
  X(quorum, Int, "a Redlock's quorum: the servers it must take (n/2+1)")                       \
  X(until_us, Int, "a Redlock's validity end (run time): TTL - elapsed - drift after taking")  \
  X(host, Str, "a client process (the host a connection comes from)")                          \
  X(argv, List, "a command: its arguments, the name first")                                    \
  X(cmd, Str, "a command's name, upper case")                                                  \
  X(count, Int, "how many: commands in a batch, messages, items")                              \
  X(reply, Str, "a reply, as redis-cli --no-raw prints it (shortened)")                        \
  X(error, Str, "an error's text")                                                             \
  X(error_class, Str, "the kind of error (docs/trace-format.md: error classes)")               \
  X(cause, Int, "the span of the client command that made the server do this")                 \
  X(duration_us, Int, "how long something took or will take")                                  \
  X(for_us, Int, "how long a fault lasts")                                                     \
  X(by_us, Int, "a clock jump's or extra latency's amount")                                    \
  X(every_us, Int, "a period")                                                                 \
  X(clock_unix_ms, Int, "a server's clock (unix ms) at this event's time")                     \
  X(logged_at_us, Int, "when SLOWLOG made an entry: the end of the command it logs")           \
  X(timeout_at_us, Int, "when a blocked command times out; absent = never")                    \
  X(method, Str, "how a lock is released: del or lua")                                         \
  X(reason, Str, "why: a close, an end, a give-up")                                            \
  X(tries, Int, "attempts made")                                                               \
  X(channel, Str, "a pub/sub channel or a stream")                                             \
  X(message, Str, "a message or stream entry")                                                 \
  X(id, Str, "a stream entry id")                                                              \
  X(group, Str, "a consumer group")                                                            \
  X(receivers, Int, "PUBLISH's reply: subscribers the message was sent to")                    \
  X(record, Str, "the name a record step counts")                                              \
  X(fault, Str, "a fault's kind: pause, disconnect, stall, ...")                               \
  X(outcome, Str, "how a transaction attempt ended: committed, aborted, skipped, error")       \
  X(hits, Int, "pool statistics: hits")                                                        \
  X(misses, Int, "pool statistics: misses")                                                    \
  X(timeouts, Int, "pool statistics: timeouts")                                                \
  X(total, Int, "pool statistics: connections")                                                \
  X(idle, Int, "pool statistics: idle connections")                                            \
  X(stale, Int, "pool statistics: stale connections closed")                                   \
  X(check, Str, "a check's name, as the scenario calls it")                                    \
  X(check_kind, Str, "the invariant a check evaluates")                                        \
  X(ok, Int, "1 if a check held, 0 if it was violated")                                        \
  X(violations, Int, "how many violations a check found")                                      \
  X(expected, Int, "what the expectation says of a check: 1 holds, 0 violated; absent = none") \
  X(met, Int, "1 if the run met its expectation")                                              \
  X(from_us, Int, "a violation's start")                                                       \
  X(to_us, Int, "a violation's end")                                                           \
  X(who, List, "the actors a violation is about")                                              \
  X(note, Int, "a narration note's index in the scenario")                                     \
  X(texts, List, "a narration note in English, Russian and Czech (the run's own is `text`)")   \
  X(source, Str, "where a server event comes from: the fake server, or what clients observed") \
  X(result_class, Str, "a call's result: ok, nil (redis.Nil) or its error class")              \
  X(offset, Int, "a replication offset: bytes of a primary's replication stream")              \
  X(context, Str, "a Go context, by the name the scenario's steps give it")

enum class F : uint8_t {
#define REDLAB_FIELD_ENUM(name, type, doc) name,
  REDLAB_TRACE_FIELDS(REDLAB_FIELD_ENUM)
#undef REDLAB_FIELD_ENUM
      count_
};

enum class FieldType : uint8_t { Int, Str, List };

struct FieldInfo {
  std::string_view name;
  FieldType type;
  std::string_view doc;
};
const FieldInfo& field_info(F field);
std::optional<F> field_by_name(std::string_view name);

using FieldValue = std::variant<int64_t, std::string, std::vector<std::string>>;
struct TraceField {
  F key = F::count_;
  FieldValue value;
  bool operator==(const TraceField&) const = default;
};

// The typed fields of one event, in the order they were added. Most events carry none, one
// or two: those are kept inside the event, so making an event allocates nothing for them (a
// run makes hundreds of events, explore runs thousands of runs; a heap block per event and
// its free were a fifth of explore's time). More spill to the heap. Two, not more: every
// event pays for the inline room, and the GUI holds a million of them.
class FieldList {
 public:
  static constexpr size_t kInline = 2;

  FieldList() noexcept = default;
  FieldList(const FieldList& other) { append_copy(other); }
  FieldList(FieldList&& other) noexcept { take(other); }
  FieldList& operator=(const FieldList& other) {
    if (this != &other) {
      clear();
      append_copy(other);
    }
    return *this;
  }
  FieldList& operator=(FieldList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~FieldList() { release(); }

  TraceField* begin() { return data(); }
  TraceField* end() { return data() + size_; }
  const TraceField* begin() const { return data(); }
  const TraceField* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  TraceField& operator[](size_t i) { return data()[i]; }
  const TraceField& operator[](size_t i) const { return data()[i]; }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  template <typename... Args>
  TraceField& emplace_back(Args&&... args) {
    if (size_ == cap_) grow(cap_ * 2);
    TraceField* f = new (data() + size_) TraceField{std::forward<Args>(args)...};
    size_++;
    return *f;
  }
  void push_back(TraceField f) { emplace_back(std::move(f)); }
  void clear() noexcept {
    for (size_t i = 0; i < size_; i++) data()[i].~TraceField();
    size_ = 0;
  }
  bool operator==(const FieldList& other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; i++)
      if (!((*this)[i] == other[i])) return false;
    return true;
  }

 private:
  TraceField* data() { return heap_ ? heap_ : reinterpret_cast<TraceField*>(inline_); }
  const TraceField* data() const {
    return heap_ ? heap_ : reinterpret_cast<const TraceField*>(inline_);
  }
  void append_copy(const FieldList& other) {
    reserve(other.size_);
    for (const TraceField& f : other) emplace_back(f);
  }
  // Moves other's fields here (this one is empty and has no heap block).
  void take(FieldList& other) noexcept {
    if (other.heap_) {
      heap_ = other.heap_;
      cap_ = other.cap_;
      other.heap_ = nullptr;
      other.cap_ = kInline;
    } else {
      TraceField* from = other.data();
      for (size_t i = 0; i < other.size_; i++) {
        new (reinterpret_cast<TraceField*>(inline_) + i) TraceField(std::move(from[i]));
        from[i].~TraceField();
      }
    }
    size_ = other.size_;
    other.size_ = 0;
  }
  void release() noexcept {
    clear();
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    cap_ = kInline;
  }
  void grow(size_t n) {
    auto* fresh = static_cast<TraceField*>(::operator new(n * sizeof(TraceField)));
    TraceField* from = data();
    for (size_t i = 0; i < size_; i++) {
      new (fresh + i) TraceField(std::move(from[i]));
      from[i].~TraceField();
    }
    if (heap_) ::operator delete(heap_);
    heap_ = fresh;
    cap_ = static_cast<uint32_t>(n);
  }

  alignas(TraceField) unsigned char inline_[kInline * sizeof(TraceField)];
  TraceField* heap_ = nullptr;
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
};

// The most events a trace may hold when read: a run stops at 2,000,000 (RunOptions::
// trace_events_max), so a larger file was not written by a run, and reading it would take
// gigabytes of memory.
inline constexpr size_t kTraceEventsReadMax = 2'000'000;

struct TraceEvent {
  TimeUs time_us = 0;
  std::string kind;         // what happened, a short lower_snake word ("command", "reply")
  std::string actor;        // who: an actor's name, a server's name, "net"; empty for the run
  int64_t connection = -1;  // connection id; -1 = not about a connection
  int64_t step = -1;        // index of the actor's step; -1 = not in a step
  int64_t attempt = -1;     // retry attempt of that step, 0 = first; -1 = not applicable
  std::string text;         // human-readable detail (a command line, a reply, a reason)
  int64_t span = 0;         // > 0: this event begins span `span`
  int64_t ends = 0;         // > 0: this event ends span `ends`
  FieldList fields = {};    // typed fields, in the order the emitter added them

  // Builders: TraceEvent{...}.with(F::lock, name).with(F::ttl_us, ttl). A field is added once;
  // with() on a field already present replaces its value. The value's type must be the
  // registry's (asserted).
  TraceEvent& with(F key, int64_t value) &;
  TraceEvent& with(F key, std::string value) &;
  TraceEvent& with(F key, std::vector<std::string> value) &;
  TraceEvent&& with(F key, int64_t value) && { return std::move(with(key, value)); }
  TraceEvent&& with(F key, std::string value) && { return std::move(with(key, std::move(value))); }
  TraceEvent&& with(F key, std::vector<std::string> value) && {
    return std::move(with(key, std::move(value)));
  }
  TraceEvent& with(F key, const char* value) & { return with(key, std::string(value)); }
  TraceEvent&& with(F key, const char* value) && {
    return std::move(with(key, std::string(value)));
  }
  TraceEvent&& with(F key, std::string_view value) && {
    return std::move(with(key, std::string(value)));
  }

  // Readers: nullptr / the default when the field is absent.
  const int64_t* num(F key) const;
  const std::string* str(F key) const;
  const std::vector<std::string>* list(F key) const;
  int64_t num_or(F key, int64_t def) const {
    const int64_t* v = num(key);
    return v ? *v : def;
  }
  std::string_view str_or(F key, std::string_view def = {}) const {
    const std::string* v = str(key);
    return v ? std::string_view(*v) : def;
  }
  bool has(F key) const;

  bool operator==(const TraceEvent&) const = default;
};

class Trace {
 public:
  // Run-level settings (seed, scenario, backend, every resolved parameter), written first.
  void set_meta(std::string key, std::string value) { meta_[std::move(key)] = std::move(value); }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  std::string meta_or(const std::string& key, const std::string& def = {}) const {
    auto it = meta_.find(key);
    return it == meta_.end() ? def : it->second;
  }

  // A new span id (1, 2, ...), unique in this trace.
  int64_t new_span() { return ++last_span_; }

  void append(const TraceEvent& event) { append(TraceEvent(event)); }
  void append(TraceEvent&& event) {
    if (budget_.on_exceeded) charge(event);
    events_.push_back(std::move(event));
    if (listener_) listener_(events_.back());
  }
  // A bound on the trace's size: once its events take more than bytes_max (an estimate of
  // their memory) or number more than events_max, on_exceeded runs, once. The events are
  // still kept: the caller stops the run (a trace is never silently cut).
  struct Budget {
    size_t bytes_max = 0;
    size_t events_max = 0;
    std::function<void()> on_exceeded;
  };
  void set_budget(Budget budget) { budget_ = std::move(budget); }
  size_t bytes_estimate() const { return bytes_; }
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
  friend class TraceReader;
  std::map<std::string, std::string> meta_;
  std::vector<TraceEvent> events_;
  int64_t last_span_ = 0;
  Listener listener_;
  Budget budget_;
  size_t bytes_ = 0;
  bool exceeded_ = false;
  void charge(const TraceEvent& event);
};

// A long payload (a padded message, a big value) as a trace field keeps its first bytes:
// s itself up to max_bytes, else its first max_bytes - 56 bytes and "... (N bytes)". The same
// text on both sides (PUBLISH and delivery) so fields can be compared.
std::string trace_excerpt(std::string_view s, size_t max_bytes = 256);

// The JSON text of a trace. Text that is not valid UTF-8 is written with U+FFFD in place of
// the bad bytes (JSON strings are Unicode); put binary data through quote_repr first.
std::string trace_to_json(const Trace& trace);

// Parses trace_to_json's output. On bad input returns nullopt and, if error is given, says
// what and where in one line ("line 7, column 12: events[3].time_us: expected an integer").
// Refused besides malformed JSON: another format or version (a version 1 trace says how to
// get a version 2 one), unknown fields, a field of the wrong type, time going backwards or
// negative, a span begun twice or ended before it began.
std::optional<Trace> trace_from_json(std::string_view json, std::string* error = nullptr);

}  // namespace redlab
