// The timeline model: one pass over the trace, event by event. Spans are the trace's own (an
// event's `span` opens an item, the event whose `ends` names it closes it), so nothing is
// paired by guessing; the per-kind code only decides where an item goes and what it shows.
// Every value comes from a typed field; no event's `text` is parsed (texts are only shown).
//
// Why incremental and single-pass: the GUI calls update() every frame while a live run grows
// the trace, and a saved trace of a million events must load in well under two seconds. So
// every event is looked at once, the matching state (open spans, subscriptions, live keys) is
// kept in Builder between calls, and an item is appended to its row when it opens (rows stay
// sorted by start time) and closed in place later. Only what lies before an event is asked of
// the index while consuming it (the command a `cause` names, the begin of a span), so a model
// built frame by frame equals one built at once.
//
// Key TTL bars: a key_set with an expiry opens a segment on the key's row of the server lane;
// its deadline is when the server's clock reaches expire_at_ms (the clock from server_start,
// moved by clock_jump and server_restart, exactly as TraceIndex counts it), so a clock jump
// cuts the segment and starts a shorter one. The key's next key_set, key_del or key_expired
// ends it: the server's record, not the clients' belief (that is the hold on the actor lane).
//
// Lost messages: pub/sub keeps nothing, so a message is lost for a subscriber when it was
// published while that subscriber was subscribed, its PUBLISH completed, and it never arrived
// by the time the subscriber resubscribed after a disconnect. That covers both the reconnect
// gap and a slow subscriber cut by the server with unread messages in its buffer. Messages are
// matched by their `channel` and `message` fields (trace_excerpt makes both sides the same
// text) and, for streams, by the entry `id`; equal messages are told apart by delivery order.
#include "app/gui/timeline_model.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/core/cmdline.h"
#include "sim/scenario/engine.h"  // format_time: the same words as `redlab show`

namespace redlab::gui {

const char* item_kind_name(ItemKind kind) {
  switch (kind) {
    case ItemKind::command:
      return "command";
    case ItemKind::pool_wait:
      return "pool wait";
    case ItemKind::work:
      return "work";
    case ItemKind::sleep:
      return "sleep";
    case ItemKind::pause:
      return "pause";
    case ItemKind::hold:
      return "lock held";
    case ItemKind::ttl:
      return "key TTL";
    case ItemKind::served:
      return "served";
    case ItemKind::gap:
      return "disconnected";
    case ItemKind::error:
      return "error";
    case ItemKind::accept:
      return "write accepted";
    case ItemKind::reject:
      return "write rejected";
    case ItemKind::lost:
      return "message lost";
    case ItemKind::expired:
      return "key expired";
    case ItemKind::fault:
      return "fault";
    case ItemKind::restart:
      return "server restart";
    case ItemKind::cut:
      return "client cut";
    case ItemKind::count_:
      break;
  }
  return "?";
}

std::string ttl_left_text(const KeyRow& key) {
  if (key.expire_at_ms < 0) return "no TTL";
  if (key.ttl_ms == -2) return "TTL unknown";
  if (key.ttl_ms <= 0) return "expiring";
  return scenario::format_time(key.ttl_ms * kUsPerMs) + " left";
}

namespace {

std::string field_value(const TraceField& f) {
  if (const auto* n = std::get_if<int64_t>(&f.value)) return std::to_string(*n);
  if (const auto* s = std::get_if<std::string>(&f.value)) return *s;
  std::string out;
  for (const std::string& s : std::get<std::vector<std::string>>(f.value))
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string cut(std::string s, size_t max_chars) {
  if (s.size() > max_chars) s = s.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return s;
}

}  // namespace

std::string event_summary(const TraceEvent& e, size_t max_chars, bool without_text) {
  if (const auto* argv = e.list(F::argv); argv && !argv->empty())
    return command_line(*argv, max_chars);
  if (!e.text.empty() && !without_text) return cut(e.text, max_chars);
  if (const auto* error = e.str(F::error)) return cut(*error, max_chars);
  if (const auto* reply = e.str(F::reply)) return cut(*reply, max_chars);
  if (without_text) return "";  // field names are English too
  std::string out;
  for (const TraceField& f : e.fields)
    out += (out.empty() ? "" : " ") + std::string(field_info(f.key).name) + "=" + field_value(f);
  return cut(out, max_chars);
}

std::vector<std::string> event_fields(const TraceEvent& e) {
  std::vector<std::string> out;
  for (const TraceField& f : e.fields)
    out.push_back(std::string(field_info(f.key).name) + ": " + field_value(f));
  return out;
}

size_t Row::first_reaching(TimeUs t) const {
  return static_cast<size_t>(std::lower_bound(max_to_us.begin(), max_to_us.end(), t) -
                             max_to_us.begin());
}

namespace {

// The kinds the model looks at, as numbers: one hash lookup per event instead of a chain of
// string comparisons (a million-event trace is read in one pass).
// One kind per line, kept from clang-format: it does not settle on a long macro list.
// clang-format off
#define REDLAB_GUI_KINDS(X) \
  X(abandon) \
  X(backoff) \
  X(blocked) \
  X(busy_reply) \
  X(call) \
  X(client_cut) \
  X(clock_jump) \
  X(command) \
  X(conn_close) \
  X(consume_error) \
  X(dial) \
  X(dial_failed) \
  X(dial_timeout) \
  X(eof) \
  X(fault) \
  X(hold_end) \
  X(key_del) \
  X(key_expired) \
  X(key_set) \
  X(lock_acquired) \
  X(lock_extend_failed) \
  X(lock_extended) \
  X(lock_gave_up) \
  X(lock_lost) \
  X(lock_release_failed) \
  X(narration) \
  X(net_buffer_lost) \
  X(net_disconnect) \
  X(net_drop) \
  X(net_refused) \
  X(net_server_close) \
  X(no_reply) \
  X(note) \
  X(pool_stats) \
  X(pool_stats_sample) \
  X(pool_timeout) \
  X(pool_wait) \
  X(pool_wait_deadline) \
  X(publish) \
  X(published) \
  X(pubsub_confirm) \
  X(pubsub_disconnected) \
  X(pubsub_gave_up) \
  X(pubsub_message) \
  X(pubsub_resubscribe) \
  X(read_timeout) \
  X(resource_accept) \
  X(resource_reject) \
  X(resource_start) \
  X(result) \
  X(run_start) \
  X(script_busy) \
  X(script_end) \
  X(script_fallback) \
  X(script_killed) \
  X(script_start) \
  X(served) \
  X(server_command) \
  X(server_restart) \
  X(server_start) \
  X(setup) \
  X(sleep) \
  X(stream_message) \
  X(subscribe_failed) \
  X(tx_aborted) \
  X(tx_error) \
  X(tx_gave_up) \
  X(unblocked) \
  X(violation) \
  X(watch_gave_up) \
  X(work)
// clang-format on

enum class K : uint8_t {
  other,
#define REDLAB_GUI_KIND_ENUM(name) name,
  REDLAB_GUI_KINDS(REDLAB_GUI_KIND_ENUM)
#undef REDLAB_GUI_KIND_ENUM
};

K kind_of(std::string_view kind) {
  static const std::unordered_map<std::string_view, K> table = {
#define REDLAB_GUI_KIND_ENTRY(name) {#name, K::name},
      REDLAB_GUI_KINDS(REDLAB_GUI_KIND_ENTRY)
#undef REDLAB_GUI_KIND_ENTRY
  };
  auto it = table.find(kind);
  return it == table.end() ? K::other : it->second;
}

// Kinds that are an error mark on the actor's lane (besides ending a span).
bool is_error_kind(K k) {
  switch (k) {
    case K::read_timeout:
    case K::eof:
    case K::no_reply:
    case K::dial_timeout:
    case K::dial_failed:
    case K::pool_timeout:
    case K::pool_wait_deadline:
    case K::lock_gave_up:
    case K::lock_lost:
    case K::lock_release_failed:
    case K::lock_extend_failed:
    case K::tx_gave_up:
    case K::tx_error:
    case K::tx_aborted:
    case K::subscribe_failed:
    case K::consume_error:
    case K::pubsub_gave_up:
    case K::pubsub_disconnected:
    case K::abandon:
    case K::watch_gave_up:
      return true;
    default:
      return false;
  }
}

// Network events about a connection that are an error mark on the lane of its dialler.
bool is_net_error_kind(K k) {
  return k == K::net_disconnect || k == K::net_drop || k == K::net_server_close ||
         k == K::net_buffer_lost || k == K::net_refused;
}

// Whether the event that ends a span says it ended badly.
bool ends_in_error(const TraceEvent& e, K k) {
  if (e.has(F::error)) return true;
  if (k == K::read_timeout || k == K::eof || k == K::no_reply || k == K::pool_timeout ||
      k == K::pool_wait_deadline || k == K::dial_timeout || k == K::dial_failed)
    return true;
  return k == K::hold_end && e.str_or(F::reason) == "lost";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

constexpr size_t kCommandRowsMax = 4;  // per actor lane; more connections share rows
constexpr size_t kKeyRowsMax = 8;      // TTL key rows per server lane; more keys share one
constexpr int kServedRow = 1;          // a server lane's second row

}  // namespace

// ---- Matching state kept between update() calls ----

struct RowRef {
  int lane = -1;
  int row = -1;  // -1: lane.bands[item]
  size_t item = 0;
};

struct TimelineModel::Builder {
  struct OpenSpan {
    RowRef ref;
    RowRef mirror;  // a real server's "in flight" copy of a command (lane -1: none)
    int64_t connection = -1;
  };
  struct Publish {
    std::string channel;  // pub/sub channel or stream
    TimeUs sent_us = 0;
    TimeUs done_us = kOpenUs;  // the publisher had the reply
    int64_t event = -1;        // the PUBLISH / XADD command (the publish event until then)
    int lane = -1, row = 0;
    bool stream = false;
    bool failed = false;
    std::vector<std::string> delivered;  // subscribers that got it
    std::vector<std::string> lost;       // subscribers it is marked lost for
  };
  struct Subscriber {
    std::map<std::string, TimeUs> since_us;  // channel -> subscribed since
    std::map<std::string, size_t> checked;   // channel -> publishes settled for lost marks
    int64_t gap_span = 0;                    // the open disconnected gap's span
    TimeUs gap_from_us = 0;
  };
  struct LiveKey {  // a key with a TTL on a server: its current segment
    RowRef ref;
    int64_t set_event = -1;
    int64_t expire_at_ms = -1;
    TimeUs full_ttl_us = 0;
    int32_t owner = -1;
    int32_t group = -1;
  };
  struct EarlyEntry {  // a stream entry read before its XADD's reply named its id
    TimeUs at_us = 0;
    int64_t event = -1;
    int lane = -1, row = -1;
  };
  using KeyId = std::tuple<std::string, int64_t, std::string>;  // (server, db, key)

  std::unordered_map<std::string, int> lane_by_name;
  std::map<std::pair<int, int64_t>, int> conn_row;       // (lane, connection) -> row
  std::map<std::pair<int, std::string>, int> named_row;  // (lane, lock or key) -> row
  std::map<int, size_t> key_rows;                        // server lane -> key rows made
  std::unordered_map<int64_t, OpenSpan> open_spans;      // span id -> its item
  std::map<int64_t, std::vector<int64_t>> open_on_conn;  // connection -> open command spans
  std::map<std::pair<std::string, std::string>, RowRef> open_hold;  // (actor, lock)
  std::map<KeyId, LiveKey> live_keys;
  std::map<std::string, std::pair<TimeUs, int64_t>, std::less<>> clock;  // server -> base
  std::vector<Publish> publishes;
  std::unordered_map<int64_t, int64_t> publish_of_span;     // publish span -> publishes index
  std::map<std::string, int64_t> publish_awaiting_command;  // actor -> publishes index
  std::unordered_map<std::string, std::vector<int64_t>> publish_by_key;  // channel \n message|id
  std::map<std::string, std::vector<int64_t>> publish_by_channel;        // pub/sub only
  std::map<std::string, Subscriber> subscribers;
  std::map<std::string, std::vector<EarlyEntry>> early_entries;
  std::unordered_map<std::string, size_t> delivery_cursor;  // key \0 receiver -> next publish
  // Rows whose max_to_us needs redoing: dirty_from[lane][row] is the first item to re-index
  // (SIZE_MAX: clean), dirty_rows lists them. Vectors, not a map: every item added passes here.
  std::vector<std::vector<size_t>> dirty_from;
  std::vector<std::pair<int, int>> dirty_rows;
  void mark_dirty(int lane, int row, size_t item) {
    if (dirty_from.size() <= static_cast<size_t>(lane))
      dirty_from.resize(static_cast<size_t>(lane) + 1);
    auto& rows = dirty_from[static_cast<size_t>(lane)];
    if (rows.size() <= static_cast<size_t>(row))
      rows.resize(static_cast<size_t>(row) + 1, SIZE_MAX);
    size_t& from = rows[static_cast<size_t>(row)];
    if (from == SIZE_MAX) dirty_rows.emplace_back(lane, row);
    from = std::min(from, item);
  }
  std::map<int64_t, int> dialler;                      // connection -> lane of its dial
  std::map<int64_t, std::vector<Item>> pending_marks;  // connection -> marks awaiting its dial
  std::set<std::string, std::less<>> clients_only;     // servers whose lane is what clients saw
  bool real_backend = false;                           // meta backend != fake
  size_t arrows_sorted = 0;
  // Errors inside the call now going on per (actor, step): flagged recovered if the call
  // succeeds; those of its last failed call, flagged if Script.Run falls back to EVAL.
  using StepKey = std::pair<std::string, int64_t>;
  std::map<StepKey, std::vector<RowRef>> call_errors;
  std::map<StepKey, std::vector<RowRef>> failed_call_errors;
  // Per resource: the highest fence it accepted, and whose write that was.
  std::map<std::string, std::pair<int64_t, std::string>, std::less<>> accepted_fence;
};

TimelineModel::TimelineModel() : builder_(std::make_unique<Builder>()) {}
TimelineModel::~TimelineModel() = default;
TimelineModel::TimelineModel(TimelineModel&&) noexcept = default;
TimelineModel& TimelineModel::operator=(TimelineModel&&) noexcept = default;

void TimelineModel::reset() {
  *this = TimelineModel();
}

int TimelineModel::lane_index(const std::string& name) const {
  auto it = builder_->lane_by_name.find(name);
  return it == builder_->lane_by_name.end() ? -1 : it->second;
}

std::optional<TimeUs> TimelineModel::next_event_after(TimeUs t) const {
  size_t i = first_event_after(t);
  if (i >= events_seen_) return std::nullopt;
  return trace_->events()[i].time_us;
}

size_t TimelineModel::first_event_after(TimeUs t) const {
  if (!trace_) return 0;
  const auto& events = trace_->events();
  auto end = events.begin() + static_cast<std::ptrdiff_t>(events_seen_);
  return static_cast<size_t>(
      std::upper_bound(events.begin(), end, t,
                       [](TimeUs v, const TraceEvent& e) { return v < e.time_us; }) -
      events.begin());
}

std::vector<KeyRow> TimelineModel::keyspace_at(const std::string& server, TimeUs t) const {
  std::vector<KeyRow> out;
  if (!index_.has_server_events(server)) return out;
  const int64_t clock_ms = index_.server_clock_ms(server, t);
  for (const KeyState& k : index_.keyspace_at(server, t)) {
    KeyRow row{k.db, k.key, k.type, k.value, k.expire_at_ms, -1};
    if (k.expire_at_ms >= 0)
      row.ttl_ms = clock_ms < 0 ? -2 : std::max<int64_t>(0, k.expire_at_ms - clock_ms);
    out.push_back(std::move(row));
  }
  return out;
}

int TimelineModel::lane_for(const std::string& name, LaneKind kind) {
  Builder& b = *builder_;
  auto [it, inserted] = b.lane_by_name.try_emplace(name, static_cast<int>(lanes_.size()));
  if (inserted) {
    Lane lane;
    lane.name = name;
    lane.kind = kind;
    // Row 0 of every lane: actors' steps (work, sleep, pool waits, marks), servers' events.
    lane.rows.push_back(Row{kind == LaneKind::actor ? "steps" : "events",
                            -1,
                            kind == LaneKind::actor ? RowKind::steps : RowKind::events,
                            {},
                            {}});
    if (kind == LaneKind::server) {
      bool seen = b.real_backend || b.clients_only.count(name);
      lane.rows.push_back(Row{
          seen ? "in flight" : "served", -1, seen ? RowKind::in_flight : RowKind::served, {}, {}});
      if (seen) lane.caption = kSeenByClients;
    }
    lanes_.push_back(std::move(lane));
  }
  return it->second;
}

std::string TimelineModel::check_kind(const std::string& name) const {
  for (const TraceCheck& c : index_.checks())
    if (c.name == name) return c.kind;
  return "";
}

bool TimelineModel::same_content(const TimelineModel& other) const {
  return lanes_ == other.lanes_ && arrows_ == other.arrows_ && notes_ == other.notes_ &&
         locks_ == other.locks_ && pool_ == other.pool_ &&
         client_options_ == other.client_options_ && violations_ == other.violations_ &&
         events_seen_ == other.events_seen_ && end_us_ == other.end_us_;
}

void TimelineModel::update(const Trace& trace) {
  const auto& events = trace.events();
  if (&trace != trace_ || events.size() < events_seen_) {
    reset();
    trace_ = &trace;
  }
  Builder& b = *builder_;
  if (meta_.size() != trace.meta().size()) {
    meta_ = trace.meta();
    client_options_.clear();
    for (const auto& [key, value] : meta_)
      if (key.rfind("client.", 0) == 0) client_options_[key.substr(7)] = value;
    // A trace of a real backend: its server lanes hold what the clients saw.
    auto backend = meta_.find("backend");
    b.real_backend = backend != meta_.end() && backend->second != "fake";
    if (b.real_backend)
      for (Lane& lane : lanes_)
        if (lane.kind == LaneKind::server) {
          lane.caption = kSeenByClients;
          lane.rows[kServedRow].label = "in flight";
          lane.rows[kServedRow].kind = RowKind::in_flight;
        }
  }
  if (events.size() == events_seen_) return;
  index_.update(trace);
  for (size_t i = events_seen_; i < events.size(); i++) consume(i);
  events_seen_ = events.size();
  finish_update();
}

// Re-indexes what changed: max_to_us of touched rows from their first changed item, and the
// arrows appended since the last update (merged into time order).
void TimelineModel::finish_update() {
  Builder& b = *builder_;
  for (const auto& [lane, row_index] : b.dirty_rows) {
    size_t& from = b.dirty_from[static_cast<size_t>(lane)][static_cast<size_t>(row_index)];
    Row& row = lanes_[lane].rows[row_index];
    size_t start = std::min(from, row.max_to_us.size());
    from = SIZE_MAX;
    row.max_to_us.resize(row.items.size());
    for (size_t i = start; i < row.items.size(); i++) {
      TimeUs before = i == 0 ? std::numeric_limits<TimeUs>::min() : row.max_to_us[i - 1];
      row.max_to_us[i] = std::max(before, row.items[i].to_us);
    }
  }
  b.dirty_rows.clear();
  if (b.arrows_sorted < arrows_.size()) {
    auto by_time = [](const Arrow& a, const Arrow& c) {
      return std::tie(a.from_us, a.to_us, a.to_lane) < std::tie(c.from_us, c.to_us, c.to_lane);
    };
    auto mid = arrows_.begin() + static_cast<std::ptrdiff_t>(b.arrows_sorted);
    std::stable_sort(mid, arrows_.end(), by_time);
    std::inplace_merge(arrows_.begin(), mid, arrows_.end(), by_time);
    arrow_max_to_us_.resize(arrows_.size());
    for (size_t i = 0; i < arrows_.size(); i++)
      arrow_max_to_us_[i] =
          std::max(i == 0 ? arrows_[0].to_us : arrow_max_to_us_[i - 1], arrows_[i].to_us);
    b.arrows_sorted = arrows_.size();
  }
}

// ---- The per-event pass ----

void TimelineModel::consume(size_t index) {
  Builder& b = *builder_;
  const TraceEvent& e = trace_->events()[index];
  const auto event_index = static_cast<int64_t>(index);
  const TimeUs t = e.time_us;
  end_us_ = std::max(end_us_, t);
  const K k = kind_of(e.kind);

  auto add = [&](int lane, int row, Item item) -> RowRef {
    Row& r = lanes_[lane].rows[row];
    r.items.push_back(item);
    b.mark_dirty(lane, row, r.items.size() - 1);
    return RowRef{lane, row, r.items.size() - 1};
  };
  auto item_at = [&](const RowRef& ref) -> Item& {
    return ref.row < 0 ? lanes_[ref.lane].bands[ref.item]
                       : lanes_[ref.lane].rows[ref.row].items[ref.item];
  };
  // An error its call may still recover from: remembered under the step that began it.
  auto call_error = [&](const RowRef& ref) {
    const Item& item = item_at(ref);
    if (item.begin_event < 0) return;
    const TraceEvent& begin = trace_->events()[static_cast<size_t>(item.begin_event)];
    if (!begin.actor.empty()) b.call_errors[{begin.actor, begin.step}].push_back(ref);
  };
  auto close = [&](const RowRef& ref, uint8_t extra_flags) {
    Item& item = item_at(ref);
    item.to_us = t;
    item.end_event = event_index;
    item.flags = static_cast<uint8_t>((item.flags & ~kItemOpen) | extra_flags);
    if (ref.row < 0) return;
    b.mark_dirty(ref.lane, ref.row, ref.item);
    if (item.kind == ItemKind::command && (extra_flags & kItemErrorReply)) call_error(ref);
  };
  auto recovered = [&](std::vector<RowRef>& refs) {
    for (const RowRef& ref : refs) item_at(ref).flags |= kItemRecovered;
    refs.clear();
  };
  auto open_item = [&](ItemKind item_kind) {
    Item item;
    item.from_us = t;
    item.to_us = kOpenUs;
    item.begin_event = event_index;
    item.kind = item_kind;
    item.flags = kItemOpen;
    return item;
  };
  auto mark = [&](ItemKind item_kind) {
    Item item;
    item.from_us = item.to_us = t;
    item.begin_event = event_index;
    item.kind = item_kind;
    return item;
  };
  // A span whose begin event knows its end (served, backoff, a stall).
  auto timed = [&](ItemKind item_kind, TimeUs duration_us) {
    Item item = mark(item_kind);
    item.to_us = t + std::max<TimeUs>(duration_us, 0);
    return item;
  };
  auto group_of = [&](const std::string& name) {
    auto it = std::find(locks_.begin(), locks_.end(), name);
    if (it != locks_.end()) return static_cast<int32_t>(it - locks_.begin());
    locks_.push_back(name);
    return static_cast<int32_t>(locks_.size() - 1);
  };
  // A row named after a lock (actor lanes) or a key (server lanes), made on first use.
  auto named_row = [&](int lane, const std::string& name) {
    auto found = b.named_row.find({lane, name});
    if (found != b.named_row.end()) return found->second;
    Lane& l = lanes_[lane];
    int row;
    if (l.kind == LaneKind::server && b.key_rows[lane] >= kKeyRowsMax) {
      // Past the cap every further key shares the last key row.
      row = static_cast<int>(l.rows.size() - 1);
      l.rows[row].label = "other keys";
      l.rows[row].kind = RowKind::other_keys;
    } else {
      l.rows.push_back(
          Row{name, -1, l.kind == LaneKind::server ? RowKind::key : RowKind::lock, {}, {}});
      row = static_cast<int>(l.rows.size() - 1);
      if (l.kind == LaneKind::server) b.key_rows[lane]++;
    }
    b.named_row[{lane, name}] = row;
    return row;
  };
  // A connection's command row: the first command row that is idle (its last span ended),
  // else a new row up to kCommandRowsMax, else the row idle longest. Rows thus show
  // concurrency: sequential calls over a pool's connections share a row, parallel ones don't.
  auto conn_row_of = [&](int lane, int64_t connection) {
    auto found = b.conn_row.find({lane, connection});
    if (found != b.conn_row.end()) return found->second;
    Lane& l = lanes_[lane];
    int row = -1, command_rows = 0, longest_idle = -1;
    TimeUs longest_idle_end = kOpenUs;
    for (size_t i = 0; i < l.rows.size() && row < 0; i++) {
      const Row& r = l.rows[i];
      if (r.connection < 0) continue;
      command_rows++;
      TimeUs last_end = r.items.empty() ? 0 : r.items.back().to_us;  // kOpenUs while open
      if (last_end <= t) row = static_cast<int>(i);
      if (longest_idle < 0 || last_end < longest_idle_end) {
        longest_idle = static_cast<int>(i);
        longest_idle_end = last_end;
      }
    }
    if (row < 0 && static_cast<size_t>(command_rows) < kCommandRowsMax) {
      l.rows.push_back(
          Row{"conn " + std::to_string(connection), connection, RowKind::connection, {}, {}});
      row = static_cast<int>(l.rows.size() - 1);
    } else {
      if (row < 0) row = longest_idle;
      // "conn 1, 18" while short, then "conn 1, 18, ...+".
      std::string& label = l.rows[row].label;
      constexpr size_t kRowLabelCharsMax = 16;
      if (label.back() != '+') {
        std::string more = ", " + std::to_string(connection);
        label += label.size() + more.size() <= kRowLabelCharsMax ? more : std::string(", ...+");
      }
    }
    b.conn_row[{lane, connection}] = row;
    return row;
  };
  auto server_lane = [&](const std::string& name) { return lane_for(name, LaneKind::server); };
  auto actor_lane = [&](const std::string& name) { return lane_for(name, LaneKind::actor); };
  // The lane of the actor whose command (span `cause`) made the server act; -1 if unknown.
  auto lane_of_cause = [&](int64_t cause) -> int32_t {
    size_t begin = index_.span_begin(cause);
    if (begin == kNoEvent || begin >= index) return -1;
    const std::string& actor = trace_->events()[begin].actor;
    return actor.empty() ? -1 : actor_lane(actor);
  };
  // When the server's clock reaches clock_ms (the TTL's zero), on the clock's current base;
  // -1 if the trace does not say what the server's clock reads.
  auto time_of_clock = [&](const std::string& server, int64_t clock_ms) -> TimeUs {
    auto it = b.clock.find(server);
    if (it == b.clock.end()) return -1;
    return it->second.first + (clock_ms - it->second.second) * kUsPerMs;
  };
  // A key's TTL segment from now, with the deadline its expire_at_ms gives on the current clock.
  auto open_segment = [&](const std::string& server, const std::string& key_name,
                          Builder::LiveKey& live) {
    int lane = server_lane(server);
    int row = named_row(lane, key_name);
    Item seg = open_item(ItemKind::ttl);
    seg.begin_event = live.set_event;
    TimeUs deadline = time_of_clock(server, live.expire_at_ms);
    if (deadline >= 0) {
      seg.deadline_us = deadline;
      if (live.full_ttl_us <= 0) live.full_ttl_us = std::max<TimeUs>(deadline - t, 1);
      seg.ttl_us = live.full_ttl_us;
    }
    seg.group = live.group;
    seg.owner = live.owner;
    live.ref = add(lane, row, seg);
  };
  auto end_key = [&](const Builder::KeyId& id, uint8_t flags) {
    auto live = b.live_keys.find(id);
    if (live == b.live_keys.end()) return false;
    close(live->second.ref, flags);
    b.live_keys.erase(live);
    return true;
  };
  // Matches a delivery to the oldest publish with its key not yet delivered to receiver (a
  // cursor per key and receiver, so a million equal payloads stay linear).
  auto deliver = [&](const std::string& key, const std::string& receiver, int lane, int row,
                     bool stream) {
    auto found = b.publish_by_key.find(key);
    if (found == b.publish_by_key.end()) {
      if (stream) b.early_entries[key].push_back(Builder::EarlyEntry{t, event_index, lane, row});
      return;
    }
    size_t& cursor = b.delivery_cursor[key + '\0' + receiver];
    for (; cursor < found->second.size(); cursor++) {
      Builder::Publish& p = b.publishes[found->second[cursor]];
      if (std::find(p.lost.begin(), p.lost.end(), receiver) != p.lost.end()) continue;
      cursor++;
      p.delivered.push_back(receiver);
      Arrow a;
      a.from_us = p.sent_us;
      a.to_us = t;
      a.from_lane = p.lane;
      a.from_row = p.row;
      a.to_lane = lane;
      a.to_row = row;
      a.from_event = p.event;
      a.to_event = event_index;
      a.stream = p.stream;
      arrows_.push_back(a);
      return;
    }
  };
  // Completed publishes on a subscriber's channels since it subscribed that never reached it:
  // lost, with a mark in its gap (at the publish, or at the gap's start if it was lost
  // earlier: a slow subscriber's unread buffer dropped with the connection).
  auto settle_lost = [&](const std::string& receiver, int lane, TimeUs gap_from_us) {
    Builder::Subscriber& s = b.subscribers[receiver];
    for (const auto& [channel, since_us] : s.since_us) {
      auto pubs = b.publish_by_channel.find(channel);
      if (pubs == b.publish_by_channel.end()) continue;
      size_t& checked = s.checked[channel];  // publishes before it were settled earlier
      for (; checked < pubs->second.size(); checked++) {
        Builder::Publish& p = b.publishes[pubs->second[checked]];
        if (p.done_us > t) break;  // not completed yet: its fate is not known
        if (p.failed || p.sent_us < since_us) continue;
        if (std::find(p.delivered.begin(), p.delivered.end(), receiver) != p.delivered.end() ||
            std::find(p.lost.begin(), p.lost.end(), receiver) != p.lost.end())
          continue;
        p.lost.push_back(receiver);
        Arrow a;
        a.from_us = p.sent_us;
        a.to_us = std::clamp(p.sent_us, gap_from_us, t);
        a.from_lane = p.lane;
        a.from_row = p.row;
        a.to_lane = lane;
        a.to_row = 0;
        a.from_event = p.event;
        a.lost = true;
        arrows_.push_back(a);
      }
    }
  };

  // ---- The span this event ends (before the one it may begin: lock_acquired does both) ----
  if (e.ends > 0) {
    if (auto it = b.open_spans.find(e.ends); it != b.open_spans.end()) {
      const uint8_t flags = ends_in_error(e, k) ? kItemErrorReply : 0;
      close(it->second.ref, flags);
      if (it->second.mirror.lane >= 0) close(it->second.mirror, flags);
      if (it->second.connection >= 0) {
        auto& open = b.open_on_conn[it->second.connection];
        open.erase(std::remove(open.begin(), open.end(), e.ends), open.end());
      }
      b.open_spans.erase(it);
    }
  }
  auto open_span = [&](const RowRef& ref, RowRef mirror = {}, int64_t connection = -1) {
    if (e.span <= 0) return;
    b.open_spans[e.span] = Builder::OpenSpan{ref, mirror, connection};
    if (connection >= 0) b.open_on_conn[connection].push_back(e.span);
  };

  // ---- Run-level events: no lane ----
  if (e.actor.empty()) {
    if (k == K::run_start) {
      if (const auto* who = e.list(F::who))
        for (const std::string& actor : *who) actor_lane(actor);
    } else if (k == K::narration) {
      Note note{t, event_index, "", e.text, {}};
      if (const auto* texts = e.list(F::texts); texts && texts->size() == 3) note.texts = *texts;
      notes_.push_back(std::move(note));
    } else if (k == K::violation) {
      ViolationRegion v;
      v.from_us = e.num_or(F::from_us, t);
      v.to_us = std::max(e.num_or(F::to_us, v.from_us), v.from_us);
      if (const auto* who = e.list(F::who)) v.who = *who;
      v.text = e.text;
      v.check = std::string(e.str_or(F::check));
      v.event = event_index;
      // The resource lanes with a write decided at its start.
      for (size_t li = 0; li < lanes_.size(); li++) {
        if (lanes_[li].kind != LaneKind::resource) continue;
        const std::vector<Item>& marks = lanes_[li].rows[0].items;
        auto m = std::lower_bound(marks.begin(), marks.end(), v.from_us,
                                  [](const Item& a, TimeUs from) { return a.from_us < from; });
        if (m != marks.end() && m->from_us == v.from_us)
          v.resource_lanes.push_back(static_cast<int32_t>(li));
      }
      auto at =
          std::upper_bound(violations_by_start_.begin(), violations_by_start_.end(), v.from_us,
                           [this](TimeUs from, size_t i) { return from < violations_[i].from_us; });
      violations_by_start_.insert(at, violations_.size());
      violations_.push_back(std::move(v));
    }
    return;
  }

  // ---- Servers, resources, the network ----
  if (k == K::server_start) {
    std::string server(e.str_or(F::server, e.actor));
    if (e.str_or(F::source) == "clients") b.clients_only.insert(server);
    int lane = server_lane(server);
    if (b.clients_only.count(server)) {
      lanes_[lane].caption = kSeenByClients;
      lanes_[lane].rows[kServedRow].label = "in flight";
      lanes_[lane].rows[kServedRow].kind = RowKind::in_flight;
    }
    if (const int64_t* clock = e.num(F::clock_unix_ms)) b.clock[server] = {t, *clock};
    return;
  }
  if (k == K::resource_start) {
    lane_for(std::string(e.str_or(F::resource, e.actor)), LaneKind::resource);
    return;
  }
  if (k == K::setup) {
    server_lane(std::string(e.str_or(F::server, e.actor)));
    return;
  }
  if (k == K::server_command) {
    add(server_lane(std::string(e.str_or(F::server, e.actor))), 0, mark(ItemKind::fault));
    return;
  }
  if (k == K::key_set || k == K::key_del || k == K::key_expired) {
    const std::string& server = e.actor;
    server_lane(server);
    const std::string key(e.str_or(F::key));
    Builder::KeyId id{server, e.num_or(F::db, 0), key};
    const int32_t by = lane_of_cause(e.num_or(F::cause, 0));
    if (k == K::key_set) {
      const int64_t expire_at_ms = e.num_or(F::expire_at_ms, -1);
      end_key(id, 0);  // overwritten, or its TTL changed (a watchdog's PEXPIRE)
      if (expire_at_ms >= 0) {
        Builder::LiveKey live;
        live.set_event = event_index;
        live.expire_at_ms = expire_at_ms;
        live.owner = by;
        live.group = group_of(key);
        open_segment(server, key, live);
        b.live_keys[id] = live;
      }
    } else if (k == K::key_del) {
      auto live = b.live_keys.find(id);
      uint8_t flags = 0;
      if (live != b.live_keys.end() && live->second.owner >= 0 && by >= 0)
        flags = live->second.owner == by ? kItemEndedByOwner : kItemForeignEnd;
      end_key(id, flags);
    } else {
      auto live = b.live_keys.find(id);
      if (live != b.live_keys.end()) {
        RowRef ref = live->second.ref;
        Item expired = mark(ItemKind::expired);
        expired.group = live->second.group;
        end_key(id, 0);
        add(ref.lane, ref.row, expired);
      }
    }
    return;
  }
  if (k == K::served) {
    Item item = timed(ItemKind::served, e.num_or(F::duration_us, 0));
    std::string_view reason = e.str_or(F::reason);
    // A command refused before it ran (its error is the reason) is not a service.
    if (!reason.empty() && reason != "queued" && reason != "blocked" && reason != "woken")
      item.flags |= kItemErrorReply;
    const int lane = server_lane(e.actor);
    if (!(item.flags & kItemErrorReply) && item.to_us - item.from_us >= kBusyMinUs)
      busy_.push_back({lane, item.from_us, item.to_us, item.begin_event});
    add(lane, kServedRow, item);
    return;
  }
  if (k == K::script_start) {
    int lane = server_lane(e.actor);
    open_span(add(lane, kServedRow, open_item(ItemKind::served)));
    return;
  }
  if (k == K::script_busy || k == K::script_killed) {
    add(server_lane(e.actor), 0, mark(ItemKind::fault));
    return;
  }
  if (k == K::client_cut) {
    add(server_lane(e.actor), 0, mark(ItemKind::cut));
    return;
  }
  if (k == K::script_end || k == K::blocked || k == K::unblocked || k == K::busy_reply)
    return;  // the script's span closed above; blocked clients show as their long commands
  // Replication (the servers' own record): a promotion is a mark on the server's lane; the
  // stream's parts and acks are for the inspector, and come before run_start (a setup write).
  if (e.kind == "repl_promote") {
    add(server_lane(e.actor), 0, mark(ItemKind::fault));
    return;
  }
  if (e.kind.rfind("repl_", 0) == 0) return;
  if (e.actor == "net") {
    if (k == K::clock_jump || k == K::server_restart) {
      std::string server(e.str_or(F::server));
      if (const int64_t* clock = e.num(F::clock_unix_ms)) b.clock[server] = {t, *clock};
      // Every live key of that server: a restart lost it; a jump moved its deadline (the
      // expiry is absolute on the server's clock), so its bar goes on from a new segment.
      std::vector<Builder::KeyId> keys;
      for (const auto& [id, live] : b.live_keys)
        if (std::get<0>(id) == server) keys.push_back(id);
      for (const Builder::KeyId& id : keys) {
        Builder::LiveKey live = b.live_keys[id];
        end_key(id, 0);
        if (k == K::server_restart) continue;
        open_segment(server, std::get<2>(id), live);
        b.live_keys[id] = live;
      }
      return;
    }
    if (e.connection >= 0 && is_net_error_kind(k)) {
      // Shown on the lane of whoever dialled the connection. A refused dial is refused before
      // its `dial` event is written: its mark waits for it (the index, asked now, would know
      // the dial in a whole trace and not yet in a growing one).
      if (auto owner = b.dialler.find(e.connection); owner != b.dialler.end())
        add(owner->second, 0, mark(ItemKind::error));
      else
        b.pending_marks[e.connection].push_back(mark(ItemKind::error));
    }
    return;  // net_partition / net_refuse_*: the host's fault event already shows them
  }
  if (k == K::fault) {
    std::string_view fault = e.str_or(F::fault);
    const int known = lane_index(e.actor);
    const bool on_server = (known >= 0 && lanes_[known].kind == LaneKind::server) ||
                           !index_.server_source(e.actor).empty() || fault == "clock_jump" ||
                           fault == "restart" || fault == "shutdown_nosave" ||
                           fault == "server_crash" || fault == "script_flush" || fault == "stall" ||
                           fault == "failover" || fault.rfind("replica_", 0) == 0;
    int lane = on_server ? server_lane(e.actor) : actor_lane(e.actor);
    if (fault == "pause") {
      lanes_[lane].bands.push_back(open_item(ItemKind::pause));
      open_span(RowRef{lane, -1, lanes_[lane].bands.size() - 1});
    } else if (fault == "stall") {
      lanes_[lane].bands.push_back(timed(ItemKind::pause, e.num_or(F::for_us, 0)));
    }
    // A restart is its own mark: everything the server held is gone from here on.
    add(lane, 0,
        mark(fault == "restart" || fault == "shutdown_nosave" ? ItemKind::restart
                                                              : ItemKind::fault));
    return;
  }
  // Pool statistics and the pool's own closes name the client process, not an actor.
  if (k == K::pool_stats || k == K::pool_stats_sample) {
    PoolSample s;
    s.time_us = t;
    s.hits = e.num_or(F::hits, 0);
    s.misses = e.num_or(F::misses, 0);
    s.timeouts = e.num_or(F::timeouts, 0);
    s.total = e.num_or(F::total, 0);
    s.idle = e.num_or(F::idle, 0);
    s.stale = e.num_or(F::stale, 0);
    pool_[e.actor].push_back(s);
    return;
  }
  if (k == K::conn_close) {
    // Commands still open on a closed connection never get their reply.
    if (auto it = b.open_on_conn.find(e.connection); it != b.open_on_conn.end()) {
      for (int64_t span : it->second) {
        auto open = b.open_spans.find(span);
        if (open == b.open_spans.end()) continue;
        close(open->second.ref, kItemErrorReply);
        if (open->second.mirror.lane >= 0) close(open->second.mirror, kItemErrorReply);
        b.open_spans.erase(open);
      }
      b.open_on_conn.erase(it);
    }
    return;
  }
  if (k == K::resource_accept || k == K::resource_reject) {
    const std::string name(e.str_or(F::resource));
    int resource = lane_for(name, LaneKind::resource);
    Item item = mark(k == K::resource_accept ? ItemKind::accept : ItemKind::reject);
    if (k == K::resource_accept) {
      // Stale as no_stale_write judges it: below the highest fence accepted, or equal to it
      // from another writer (two holders with one fence).
      const int64_t fence = e.num_or(F::fence, 0);
      auto [seen, fresh] = b.accepted_fence.try_emplace(name, fence, e.actor);
      if (!fresh) {
        if (fence < seen->second.first ||
            (fence == seen->second.first && e.actor != seen->second.second))
          item.flags |= kItemStale;
        if (fence > seen->second.first) seen->second = {fence, e.actor};
      }
    }
    add(resource, 0, item);
    return;
  }

  // ---- Actor events ----
  const int lane = actor_lane(e.actor);
  if (k == K::call) {  // a new call of the step: what failed before is settled
    b.call_errors.erase({e.actor, e.step});
    return;
  }
  if (k == K::result) {
    auto it = b.call_errors.find({e.actor, e.step});
    if (it == b.call_errors.end()) return;
    if (e.has(F::error))
      b.failed_call_errors[it->first] = std::move(it->second);
    else
      recovered(it->second);  // retried within the call, and it succeeded
    b.call_errors.erase(it);
    return;
  }
  if (k == K::script_fallback) {  // NOSCRIPT, and EVAL follows: by design, not a failure
    if (auto it = b.failed_call_errors.find({e.actor, e.step}); it != b.failed_call_errors.end()) {
      recovered(it->second);
      b.failed_call_errors.erase(it);
    }
    return;
  }
  if (k == K::dial) {
    b.dialler[e.connection] = lane;
    if (auto pending = b.pending_marks.find(e.connection); pending != b.pending_marks.end()) {
      for (const Item& item : pending->second) add(lane, 0, item);
      b.pending_marks.erase(pending);
    }
    return;
  }
  if (k == K::command) {
    int row = conn_row_of(lane, e.connection);
    RowRef ref = add(lane, row, open_item(ItemKind::command));
    // A real server's lane: the command in flight as its client saw it.
    RowRef mirror;
    std::string server;
    if (b.real_backend || !b.clients_only.empty()) server = index_.connection_server(e.connection);
    if (!server.empty() && (b.real_backend || b.clients_only.count(server))) {
      Item seen = open_item(ItemKind::served);
      seen.flags |= kItemSeenByClients;
      mirror = add(server_lane(server), kServedRow, seen);
    }
    open_span(ref, mirror, e.connection);
    // The PUBLISH / XADD of a publish step: the arrows start from it.
    const auto* argv = e.list(F::argv);
    auto awaiting = b.publish_awaiting_command.empty() ? b.publish_awaiting_command.end()
                                                       : b.publish_awaiting_command.find(e.actor);
    if (awaiting != b.publish_awaiting_command.end() && argv && !argv->empty()) {
      std::string name = upper((*argv)[0]);
      if (name == "PUBLISH" || name == "SPUBLISH" || name == "XADD") {
        Builder::Publish& p = b.publishes[awaiting->second];
        p.sent_us = t;
        p.event = event_index;
        p.row = row;
        b.publish_awaiting_command.erase(awaiting);
      }
    }
    return;
  }
  if (k == K::pubsub_confirm) {
    // The SUBSCRIBE it confirms (the command span it ends) names the channels.
    size_t begin = index_.begin_of(index);
    if (begin != kNoEvent && begin < index)
      if (const auto* argv = trace_->events()[begin].list(F::argv); argv && argv->size() >= 2) {
        std::string name = upper((*argv)[0]);
        if (name == "SUBSCRIBE" || name == "SSUBSCRIBE")
          for (size_t c = 1; c < argv->size(); c++)
            b.subscribers[e.actor].since_us.try_emplace((*argv)[c], t);
      }
    return;
  }
  if (k == K::publish) {
    Builder::Publish p;
    p.channel = std::string(e.str_or(F::channel));
    p.sent_us = t;
    p.event = event_index;
    p.lane = lane;
    p.stream = e.str_or(F::method) == "stream";
    const auto id = static_cast<int64_t>(b.publishes.size());
    if (!p.stream) {
      b.publish_by_key[p.channel + '\n' + std::string(e.str_or(F::message))].push_back(id);
      b.publish_by_channel[p.channel].push_back(id);
    }
    b.publishes.push_back(std::move(p));
    b.publish_awaiting_command[e.actor] = id;
    if (e.span > 0) b.publish_of_span[e.span] = id;
    return;
  }
  if (k == K::published) {
    b.publish_awaiting_command.erase(e.actor);
    auto it = b.publish_of_span.find(e.ends);
    if (it == b.publish_of_span.end()) return;
    const int64_t id = it->second;
    b.publish_of_span.erase(it);
    Builder::Publish& p = b.publishes[id];
    p.done_us = t;
    p.failed = e.has(F::error);
    if (p.stream && !p.failed && e.has(F::id)) {
      std::string key = p.channel + '\n' + std::string(e.str_or(F::id));
      b.publish_by_key[key].push_back(id);
      // A consumer can read the entry before the producer has XADD's reply.
      if (auto early = b.early_entries.find(key); early != b.early_entries.end()) {
        for (const Builder::EarlyEntry& entry : early->second)
          arrows_.push_back(Arrow{p.sent_us, entry.at_us, p.lane, p.row, entry.lane, entry.row,
                                  p.event, entry.event, false, true});
        b.early_entries.erase(early);
      }
    }
    return;
  }
  if (k == K::pubsub_message) {
    deliver(std::string(e.str_or(F::channel)) + '\n' + std::string(e.str_or(F::message)), e.actor,
            lane, e.connection >= 0 ? conn_row_of(lane, e.connection) : 0, false);
    return;
  }
  if (k == K::stream_message) {
    deliver(std::string(e.str_or(F::channel)) + '\n' + std::string(e.str_or(F::id)), e.actor, lane,
            0, true);
    return;
  }
  if (k == K::pubsub_disconnected) {
    add(lane, 0, mark(ItemKind::error));
    Builder::Subscriber& s = b.subscribers[e.actor];
    if (s.gap_span == 0 && e.span > 0) {
      open_span(add(lane, 0, open_item(ItemKind::gap)));
      s.gap_span = e.span;
      s.gap_from_us = t;
    }
    return;
  }
  if (k == K::pubsub_resubscribe || k == K::pubsub_gave_up) {
    Builder::Subscriber& s = b.subscribers[e.actor];
    TimeUs gap_from_us = s.gap_span ? s.gap_from_us : t;
    if (s.gap_span) {
      // pubsub_resubscribe ends the gap's span (closed above); giving up ends it too.
      if (auto open = b.open_spans.find(s.gap_span); open != b.open_spans.end()) {
        close(open->second.ref, 0);
        b.open_spans.erase(open);
      }
      s.gap_span = 0;
    }
    if (k == K::pubsub_gave_up) add(lane, 0, mark(ItemKind::error));
    settle_lost(e.actor, lane, gap_from_us);
    return;
  }
  if (k == K::pool_wait) {
    open_span(add(lane, 0, open_item(ItemKind::pool_wait)));
    return;
  }
  if (k == K::work || k == K::sleep) {
    open_span(add(lane, 0, open_item(k == K::work ? ItemKind::work : ItemKind::sleep)));
    return;
  }
  if (k == K::backoff) {
    add(lane, 0, timed(ItemKind::sleep, e.num_or(F::duration_us, 0)));
    return;
  }
  if (k == K::lock_acquired) {
    const std::string lock(e.str_or(F::lock));
    Item hold = open_item(ItemKind::hold);
    hold.ttl_us = e.num_or(F::ttl_us, 0);
    hold.deadline_us = t + hold.ttl_us;
    hold.group = group_of(lock);
    RowRef ref = add(lane, named_row(lane, lock), hold);
    open_span(ref);
    b.open_hold[{e.actor, lock}] = ref;
    return;
  }
  if (k == K::lock_extended) {
    // The holder's belief moves on with the extension; the key's own deadline is the
    // server's key_set.
    auto it = b.open_hold.find({e.actor, std::string(e.str_or(F::lock))});
    if (it != b.open_hold.end()) {
      Item& hold = item_at(it->second);
      if (hold.open()) hold.deadline_us = t + e.num_or(F::ttl_us, hold.ttl_us);
    }
    return;
  }
  if (k == K::hold_end) {
    b.open_hold.erase({e.actor, std::string(e.str_or(F::lock))});
    return;
  }
  if (k == K::note) {
    notes_.push_back(Note{t, event_index, e.actor, e.text, {}});
    return;
  }
  if (is_error_kind(k)) {
    RowRef ref = add(lane, 0, mark(ItemKind::error));
    // A timeout or a dropped reply inside a call: retried, it may yet succeed.
    if (k == K::read_timeout || k == K::eof || k == K::no_reply)
      b.call_errors[{e.actor, e.step}].push_back(ref);
  }
}

}  // namespace redlab::gui
