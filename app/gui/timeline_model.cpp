// The timeline model: one pass over the trace, event by event, matching openers with closers
// (command -> reply on the same connection, work -> work_done of the same actor, ...).
//
// Why incremental and single-pass: the GUI calls update() every frame while a live run grows
// the trace, and a saved trace of a million events must load in well under two seconds. So
// every event is looked at once, the matching state (open spans, subscriptions, live lock
// keys) is kept in Builder between calls, and an item is appended to its row when it opens
// (rows stay sorted by start time) and closed in place later.
//
// Lost messages: pub/sub keeps nothing, so a message is lost for a subscriber when it was
// published while that subscriber was subscribed, its PUBLISH completed, and it never arrived
// by the time the subscriber resubscribed after a disconnect. That covers both the reconnect
// gap and a slow subscriber cut by the server with unread messages in its buffer.
//
// keyspace_at replays, per server, the setup commands and the successful commands in reply
// order through a fresh fake server (the trace has no key dumps). Known limits: command lines
// in the trace are cut at 120 characters (those ending in "..." are skipped), a blocking
// command is replayed as its non-blocking form, and values a script computed from the
// server's time may differ by the service time.
#include "app/gui/timeline_model.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <set>

#include "sim/core/cmdline.h"
#include "sim/core/reply.h"
#include "sim/fake/server.h"

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
      return "lock key TTL";
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
    case ItemKind::count_:
      break;
  }
  return "?";
}

size_t Row::first_reaching(TimeUs t) const {
  return static_cast<size_t>(std::lower_bound(max_to_us.begin(), max_to_us.end(), t) -
                             max_to_us.begin());
}

namespace {

// ---- Text helpers (the trace's text fields, docs/trace-format.md) ----

std::string_view first_word(std::string_view s) {
  size_t end = s.find(' ');
  return end == std::string_view::npos ? s : s.substr(0, end);
}

// A lock name from "lock:job:42 ..." or "lock:job:42: why": the first word, ':' dropped.
std::string lock_of(std::string_view text) {
  std::string_view w = first_word(text);
  if (!w.empty() && w.back() == ':') w.remove_suffix(1);
  return std::string(w);
}

bool parse_int(std::string_view s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The integer after `key` ("ttl=" in "... ttl=10000 ms"), or fallback.
int64_t int_after(std::string_view text, std::string_view key, int64_t fallback) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) return fallback;
  std::string_view rest = text.substr(at + key.size());
  size_t end = 0;
  while (end < rest.size() &&
         (std::isdigit(static_cast<unsigned char>(rest[end])) || (end == 0 && rest[end] == '-')))
    end++;
  int64_t v = 0;
  return parse_int(rest.substr(0, end), v) ? v : fallback;
}

// "12.0 s", "1.5 s", "350 ms", "8000 us" (format_time and fault texts) -> microseconds.
std::optional<TimeUs> parse_duration(std::string_view number, std::string_view unit) {
  int64_t whole = 0, frac = 0, frac_scale = 1;
  size_t dot = number.find('.');
  std::string_view int_part = number.substr(0, dot);
  if (!parse_int(int_part, whole)) return std::nullopt;
  if (dot != std::string_view::npos) {
    std::string_view f = number.substr(dot + 1);
    if (f.empty() || f.size() > 6 || !parse_int(f, frac)) return std::nullopt;
    for (size_t i = 0; i < f.size(); i++) frac_scale *= 10;
  }
  TimeUs scale = 0;
  if (unit == "s")
    scale = kUsPerSecond;
  else if (unit == "ms")
    scale = kUsPerMs;
  else if (unit == "us")
    scale = 1;
  else
    return std::nullopt;
  return whole * scale + frac * scale / frac_scale;
}

// The first "<number> <unit>" after `key` in text.
std::optional<TimeUs> duration_after(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + key.size());
  size_t space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view unit = rest.substr(space + 1);
  size_t unit_end = 0;
  while (unit_end < unit.size() && std::isalpha(static_cast<unsigned char>(unit[unit_end])))
    unit_end++;
  return parse_duration(rest.substr(0, space), unit.substr(0, unit_end));
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_word_in(std::string_view text, std::string_view word) {
  if (word.empty()) return false;
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    auto boundary = [](char c) {
      return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    };
    bool left = at == 0 || boundary(text[at - 1]);
    size_t end = at + word.size();
    bool right = end >= text.size() || boundary(text[end]) || text[end] == '\'';
    if (left && right) return true;
  }
  return false;
}

// "[\"subscribe\" \"news\" (integer) 1]" / "[\"jobs\" \"x\"]" -> its words, unquoted.
std::vector<std::string> array_words(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  auto words = split_args(text);
  return words ? *words : std::vector<std::string>{};
}

// Kinds that are an error mark on the actor's lane (besides closing a span).
bool is_error_kind(std::string_view kind) {
  static const std::set<std::string_view> kinds = {"read_timeout",
                                                   "eof",
                                                   "dial_timeout",
                                                   "dial_failed",
                                                   "pool_timeout",
                                                   "pool_wait_deadline",
                                                   "lock_gave_up",
                                                   "lock_lost",
                                                   "lock_release_failed",
                                                   "lock_extend_failed",
                                                   "tx_gave_up",
                                                   "tx_error",
                                                   "tx_aborted",
                                                   "subscribe_failed",
                                                   "consume_error",
                                                   "pubsub_gave_up",
                                                   "pubsub_disconnected",
                                                   "abandon",
                                                   "watch_gave_up",
                                                   "net_disconnect",
                                                   "net_drop",
                                                   "net_server_close",
                                                   "net_buffer_lost",
                                                   "net_refused"};
  return kinds.count(kind) != 0;
}

// A message's identity for matching a delivery to its PUBLISH: the channel and the first
// characters of the payload as the trace shows it. Both sides may be cut (command lines at
// 120 characters, pubsub_message payloads at 60) and quoted differently ("msg-1" vs msg-1),
// so the key is a prefix of the quoted-or-bare payload with its quotes dropped; equal keys
// are told apart by delivery order (pub/sub delivers in publish order).
constexpr size_t kPayloadKeyChars = 40;
std::string message_key(std::string_view channel, std::string_view raw_payload) {
  bool quoted = !raw_payload.empty() && raw_payload.front() == '"';
  if (quoted) raw_payload.remove_prefix(1);
  if (quoted && !raw_payload.empty() && raw_payload.size() <= kPayloadKeyChars + 1 &&
      raw_payload.back() == '"')
    raw_payload.remove_suffix(1);
  std::string key(channel);
  key += '\n';
  key += raw_payload.substr(0, kPayloadKeyChars);
  return key;
}

constexpr size_t kCommandRowsMax = 4;  // per actor lane; more connections share rows

}  // namespace

// ---- Matching state kept between update() calls ----

struct RowRef {
  int lane = -1;
  int row = -1;
  size_t item = 0;
};

struct TimelineModel::Builder {
  struct OpenCommand {
    RowRef ref;
    int64_t publish = -1;  // index into publishes, for PUBLISH / XADD
    bool replay = false;   // a candidate for keyspace replay
  };
  struct Publish {
    std::string channel;  // pub/sub channel or stream
    std::string payload;  // pub/sub: the message; streams: the entry id, set at the reply
    TimeUs sent_us = 0;
    TimeUs done_us = kOpenUs;  // the publisher had the reply
    int64_t event = -1;
    int lane = -1, row = -1;
    bool stream = false;
    std::vector<std::string> delivered;  // subscribers that got it
    std::vector<std::string> lost;       // subscribers it is marked lost for
  };
  struct Subscriber {
    std::map<std::string, TimeUs> since_us;  // channel -> subscribed since
    std::map<std::string, size_t> checked;   // channel -> publishes settled for lost marks
    std::optional<RowRef> gap;               // open disconnected gap
    TimeUs gap_from_us = 0;
  };
  struct LiveKey {  // a lock key alive on a server (its TTL segment)
    RowRef ref;
    std::string owner;
    TimeUs ttl_us = 0;
  };
  struct ReplayOp {
    enum class Kind : uint8_t { command, restart, clock_jump };
    Kind kind = Kind::command;
    TimeUs time_us = 0;
    int64_t connection = -1;  // -1: the admin connection (setup, server_command)
    std::string line;         // command line (command), delta in us (clock_jump)
  };

  std::map<std::string, int> lane_by_name;
  std::set<std::string> servers;
  std::map<int64_t, std::string> conn_server;
  std::map<int64_t, int> conn_owner;  // connection -> lane of the actor that dialled it
  std::map<std::pair<int, int64_t>, int> conn_row;  // (lane, connection) -> row
  std::map<std::pair<int, std::string>, int> lock_row;
  std::map<int64_t, std::deque<OpenCommand>> open_commands;
  std::map<std::string, RowRef> open_pool_wait, open_work;
  std::map<std::string, RowRef> open_pause;
  std::map<std::pair<std::string, std::string>, RowRef> open_hold;   // (actor, lock)
  std::map<std::pair<std::string, std::string>, LiveKey> live_keys;  // (server, lock)
  std::map<std::pair<std::string, std::string>, TimeUs> hold_ttl_us;
  std::map<std::string, int64_t> last_connection;  // actor -> connection of its last reply
  std::vector<Publish> publishes;
  std::map<std::string, std::vector<int64_t>> publish_by_key;  // channel \n payload -> ids
  std::map<std::string, std::vector<int64_t>> publish_by_channel;
  std::map<std::string, Subscriber> subscribers;
  struct EarlyEntry {  // a stream entry read before its XADD's reply named its id
    TimeUs at_us = 0;
    int64_t event = -1;
    int lane = -1, row = -1;
  };
  std::map<std::string, std::vector<EarlyEntry>> early_entries;
  std::map<std::pair<std::string, std::string>, size_t> delivery_cursor;  // (key, receiver)
  std::map<std::string, std::vector<ReplayOp>> replay_ops;                // server -> ops
  std::map<std::pair<int, int>, size_t> dirty;  // (lane, row) -> first item to re-index
  size_t arrows_sorted = 0;
  TimeUs next_expiry_us = kOpenUs;
  bool meta_read = false;
};

struct TimelineModel::Replay {
  struct PerServer {
    std::unique_ptr<fake::Server> server;
    std::map<int64_t, fake::ClientId> clients;
    size_t next_op = 0;
    size_t ops_seen = 0;
    TimeUs at_us = -1;
    std::vector<KeyState> keys;
  };
  std::map<std::string, PerServer> servers;
};

TimelineModel::TimelineModel() : builder_(std::make_unique<Builder>()) {}
TimelineModel::~TimelineModel() = default;
TimelineModel::TimelineModel(TimelineModel&&) noexcept = default;
TimelineModel& TimelineModel::operator=(TimelineModel&&) noexcept = default;

// Everything goes, the caller's violations too: they belong to the run that was shown.
void TimelineModel::reset() {
  *this = TimelineModel();
}

void TimelineModel::set_violations(std::vector<ViolationRegion> regions) {
  violations_given_ = !regions.empty();
  given_violations_ = std::move(regions);
}

const std::vector<ViolationRegion>& TimelineModel::violations() const {
  return violations_given_ ? given_violations_ : parsed_violations_;
}

int TimelineModel::lane_index(const std::string& name) const {
  auto it = builder_->lane_by_name.find(name);
  return it == builder_->lane_by_name.end() ? -1 : it->second;
}

std::string TimelineModel::server_of(int64_t connection) const {
  auto it = builder_->conn_server.find(connection);
  return it == builder_->conn_server.end() ? std::string() : it->second;
}

std::optional<TimeUs> TimelineModel::next_event_after(TimeUs t) const {
  size_t i = first_event_after(t);
  if (i >= event_times_us_.size()) return std::nullopt;
  return event_times_us_[i];
}

size_t TimelineModel::first_event_after(TimeUs t) const {
  return static_cast<size_t>(std::upper_bound(event_times_us_.begin(), event_times_us_.end(), t) -
                             event_times_us_.begin());
}

int TimelineModel::lane_for(const std::string& name, LaneKind kind) {
  auto [it, inserted] = builder_->lane_by_name.try_emplace(name, static_cast<int>(lanes_.size()));
  if (inserted) {
    Lane lane;
    lane.name = name;
    lane.kind = kind;
    // Row 0 of every lane: actors' steps (work, sleep, pool waits, marks), servers' events.
    lane.rows.push_back(Row{kind == LaneKind::actor ? "steps" : "events", -1, {}, {}});
    lanes_.push_back(std::move(lane));
  }
  return it->second;
}

bool TimelineModel::same_content(const TimelineModel& other) const {
  return lanes_ == other.lanes_ && arrows_ == other.arrows_ && notes_ == other.notes_ &&
         locks_ == other.locks_ && pool_ == other.pool_ &&
         client_options_ == other.client_options_ && violations() == other.violations() &&
         event_times_us_ == other.event_times_us_ && end_us_ == other.end_us_;
}

void TimelineModel::update(const Trace& trace) {
  const auto& events = trace.events();
  if (events.size() < events_seen_) reset();
  Builder& b = *builder_;
  if (!b.meta_read || meta_.size() != trace.meta().size()) {
    meta_ = trace.meta();
    client_options_.clear();
    for (const auto& [key, value] : meta_)
      if (key.rfind("client.", 0) == 0) client_options_[key.substr(7)] = value;
    b.meta_read = true;
  }
  if (events.size() == events_seen_) return;
  event_times_us_.reserve(events.size());
  for (size_t i = events_seen_; i < events.size(); i++) consume(trace, i);
  events_seen_ = events.size();
  finish_update();
}

// Re-indexes what changed: max_to_us of touched rows from their first changed item, and the
// arrows appended since the last update (merged into time order).
void TimelineModel::finish_update() {
  Builder& b = *builder_;
  for (const auto& [key, from] : b.dirty) {
    Row& row = lanes_[key.first].rows[key.second];
    size_t start = std::min(from, row.max_to_us.size());
    row.max_to_us.resize(row.items.size());
    for (size_t i = start; i < row.items.size(); i++) {
      TimeUs before = i == 0 ? std::numeric_limits<TimeUs>::min() : row.max_to_us[i - 1];
      row.max_to_us[i] = std::max(before, row.items[i].to_us);
    }
  }
  b.dirty.clear();
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

void TimelineModel::consume(const Trace& trace, size_t index) {
  Builder& b = *builder_;
  const TraceEvent& e = trace.events()[index];
  const auto event_index = static_cast<int64_t>(index);
  const TimeUs t = e.time_us;
  event_times_us_.push_back(t);
  end_us_ = std::max(end_us_, t);
  const std::string& kind = e.kind;

  auto add = [&](int lane, int row, Item item) -> RowRef {
    Row& r = lanes_[lane].rows[row];
    r.items.push_back(item);
    b.dirty.try_emplace({lane, row}, r.items.size() - 1);
    return RowRef{lane, row, r.items.size() - 1};
  };
  auto item_at = [&](const RowRef& ref) -> Item& {
    return lanes_[ref.lane].rows[ref.row].items[ref.item];
  };
  auto close = [&](const RowRef& ref, TimeUs to_us, int64_t end_event, uint8_t extra_flags) {
    Item& item = item_at(ref);
    item.to_us = to_us;
    item.end_event = end_event;
    item.flags = static_cast<uint8_t>((item.flags & ~kItemOpen) | extra_flags);
    auto [it, inserted] = b.dirty.try_emplace({ref.lane, ref.row}, ref.item);
    if (!inserted) it->second = std::min(it->second, ref.item);
  };
  auto open_item = [&](ItemKind k) {
    Item item;
    item.from_us = t;
    item.to_us = kOpenUs;
    item.begin_event = event_index;
    item.kind = k;
    item.flags = kItemOpen;
    return item;
  };
  auto mark = [&](ItemKind k) {
    Item item;
    item.from_us = item.to_us = t;
    item.begin_event = event_index;
    item.kind = k;
    return item;
  };
  auto lock_group = [&](const std::string& lock) {
    auto it = std::find(locks_.begin(), locks_.end(), lock);
    if (it != locks_.end()) return static_cast<int32_t>(it - locks_.begin());
    locks_.push_back(lock);
    return static_cast<int32_t>(locks_.size() - 1);
  };
  auto server_of_actor = [&](const std::string& actor) -> std::string {
    auto it = b.last_connection.find(actor);
    if (it != b.last_connection.end()) {
      auto s = b.conn_server.find(it->second);
      if (s != b.conn_server.end()) return s->second;
    }
    return b.servers.empty() ? std::string("redis") : *b.servers.begin();
  };
  auto lock_row_of = [&](int lane, const std::string& lock) {
    auto [it, inserted] = b.lock_row.try_emplace({lane, lock}, 0);
    if (inserted) {
      lanes_[lane].rows.push_back(Row{lock, -1, {}, {}});
      it->second = static_cast<int>(lanes_[lane].rows.size() - 1);
    }
    return it->second;
  };
  // Owner lane of a connection (net_* events name "net" as their actor).
  auto actor_lane = [&](const std::string& actor) { return lane_for(actor, LaneKind::actor); };
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
      l.rows.push_back(Row{"conn " + std::to_string(connection), connection, {}, {}});
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

  // Lock keys whose TTL ran out before this event: the key expired on the server.
  if (t > b.next_expiry_us) {
    b.next_expiry_us = kOpenUs;
    for (auto it = b.live_keys.begin(); it != b.live_keys.end();) {
      Item& seg = item_at(it->second.ref);
      if (seg.deadline_us < t) {
        close(it->second.ref, seg.deadline_us, -1, 0);
        Item expired;
        expired.from_us = expired.to_us = seg.deadline_us;
        expired.begin_event = seg.begin_event;
        expired.kind = ItemKind::expired;
        expired.group = seg.group;
        add(it->second.ref.lane, 0, expired);
        it = b.live_keys.erase(it);
      } else {
        b.next_expiry_us = std::min(b.next_expiry_us, seg.deadline_us);
        ++it;
      }
    }
  }
  auto start_key_segment = [&](const std::string& server, const std::string& lock,
                               const std::string& owner, TimeUs ttl_us, int32_t group) {
    int lane = lane_for(server, LaneKind::server);
    int row = lock_row_of(lane, lock);
    auto key = std::make_pair(server, lock);
    if (auto live = b.live_keys.find(key); live != b.live_keys.end()) {
      close(live->second.ref, t, event_index, 0);
      b.live_keys.erase(live);
    }
    Item seg = open_item(ItemKind::ttl);
    seg.deadline_us = t + ttl_us;
    seg.ttl_us = ttl_us;
    seg.group = group;
    // A TTL segment is open until cut; its planned end is the deadline.
    seg.to_us = seg.deadline_us;
    seg.flags = 0;
    b.live_keys[key] = Builder::LiveKey{add(lane, row, seg), owner, ttl_us};
    b.next_expiry_us = std::min(b.next_expiry_us, seg.deadline_us);
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
    size_t& cursor = b.delivery_cursor[{key, receiver}];
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

  // ---- Run-level events: no lane ----
  if (e.actor.empty()) {
    if (kind == "narration") notes_.push_back(Note{t, event_index, "", e.text});
    if (kind == "check") {
      // "NAME: violated: SUMMARY" -> a region from the "from X to Y" (or "at X") in it.
      size_t colon = e.text.find(": violated: ");
      if (colon == std::string::npos) return;
      ViolationRegion region;
      region.check = e.text.substr(0, colon);
      region.text = e.text.substr(colon + 12);
      std::optional<TimeUs> from = duration_after(region.text, "from ");
      std::optional<TimeUs> to = duration_after(region.text, " to ");
      if (!from) from = duration_after(region.text, " at ");
      if (!from) from = duration_after(region.text, "since ");
      if (!from) return;
      region.from_us = *from;
      region.to_us = to && *to >= *from ? *to : *from;
      for (const Lane& lane : lanes_)
        if (lane.kind == LaneKind::actor && is_word_in(region.text, lane.name))
          region.who.push_back(lane.name);
      parsed_violations_.push_back(std::move(region));
    }
    return;
  }

  // ---- Servers and the network ----
  if (kind == "setup") {
    b.servers.insert(e.actor);
    lane_for(e.actor, LaneKind::server);
    size_t arrow = e.text.rfind(" -> ");
    b.replay_ops[e.actor].push_back(
        {Builder::ReplayOp::Kind::command, t, -1, e.text.substr(0, arrow)});
    return;
  }
  if (kind == "server_command") {
    b.servers.insert(e.actor);
    int lane = lane_for(e.actor, LaneKind::server);
    add(lane, 0, mark(ItemKind::fault));
    b.replay_ops[e.actor].push_back({Builder::ReplayOp::Kind::command, t, -1, e.text});
    return;
  }
  if (e.actor == "net") {
    if (kind == "clock_jump" || kind == "server_replaced") {
      std::string server(first_word(e.text));
      int lane = lane_for(server, LaneKind::server);
      add(lane, 0, mark(ItemKind::fault));
      if (kind == "server_replaced") {
        b.replay_ops[server].push_back({Builder::ReplayOp::Kind::restart, t, -1, ""});
        // The restarted server lost its keys: live lock keys end here.
        for (auto it = b.live_keys.begin(); it != b.live_keys.end();) {
          if (it->first.first != server) {
            ++it;
            continue;
          }
          close(it->second.ref, t, event_index, 0);
          it = b.live_keys.erase(it);
        }
      } else {
        size_t space = e.text.find(' ');
        std::string delta = space == std::string::npos ? "0" : e.text.substr(space + 1);
        b.replay_ops[server].push_back(
            {Builder::ReplayOp::Kind::clock_jump, t, -1, std::string(first_word(delta))});
      }
      return;
    }
    if (e.connection >= 0 && is_error_kind(kind)) {
      // Shown on the lane of whoever dialled the connection.
      if (auto owner = b.conn_owner.find(e.connection); owner != b.conn_owner.end())
        add(owner->second, 0, mark(ItemKind::error));
    }
    return;  // net_partition / net_refuse_*: the host's fault event already shows them
  }
  if (kind == "fault") {
    bool server = b.servers.count(e.actor) != 0;
    int lane = lane_for(e.actor, server ? LaneKind::server : LaneKind::actor);
    if (e.text.rfind("pause", 0) == 0) {
      if (!b.open_pause.count(e.actor)) {
        lanes_[lane].bands.push_back(open_item(ItemKind::pause));
        b.open_pause[e.actor] = RowRef{lane, -1, lanes_[lane].bands.size() - 1};
      }
    } else if (e.text == "resume") {
      if (auto it = b.open_pause.find(e.actor); it != b.open_pause.end()) {
        Item& band = lanes_[lane].bands[it->second.item];
        band.to_us = t;
        band.end_event = event_index;
        band.flags = 0;
        b.open_pause.erase(it);
      }
    } else if (auto stall = duration_after(e.text, "stalls for ")) {
      Item band = mark(ItemKind::pause);
      band.to_us = t + *stall;
      lanes_[lane].bands.push_back(band);
    }
    add(lane, 0, mark(ItemKind::fault));
    return;
  }
  // Pool statistics and the pool's own closes name the client process, not an actor.
  if (kind == "pool_stats" || kind == "pool_stats_sample") {
    PoolSample s;
    s.time_us = t;
    s.hits = int_after(e.text, "hits=", 0);
    s.misses = int_after(e.text, "misses=", 0);
    s.timeouts = int_after(e.text, "timeouts=", 0);
    s.total = int_after(e.text, "total=", 0);
    s.idle = int_after(e.text, "idle=", 0);
    s.stale = int_after(e.text, "stale=", 0);
    pool_[e.actor].push_back(s);
    return;
  }
  if (kind == "conn_close") {
    // Commands still open on a closed connection never get their reply.
    if (auto it = b.open_commands.find(e.connection); it != b.open_commands.end()) {
      for (const auto& open : it->second) close(open.ref, t, event_index, kItemErrorReply);
      b.open_commands.erase(it);
    }
    return;
  }

  // ---- Actor events ----
  const int lane = actor_lane(e.actor);
  if (kind == "dial") {
    b.conn_server[e.connection] = e.text;
    b.conn_owner[e.connection] = lane;
    b.servers.insert(e.text);
    lane_for(e.text, LaneKind::server);
    return;
  }
  if (kind == "command") {
    int row = conn_row_of(lane, e.connection);
    Builder::OpenCommand open{add(lane, row, open_item(ItemKind::command)), -1, false};
    std::string_view text = e.text;
    std::string name = upper(first_word(text));
    // "PUBLISH channel payload" (the payload possibly quoted and cut: no split_args here).
    std::string_view after_name = text.substr(std::min(text.size(), name.size() + 1));
    std::string_view channel = first_word(after_name);
    std::string_view payload = after_name.substr(std::min(after_name.size(), channel.size() + 1));
    if ((name == "PUBLISH" || name == "SPUBLISH") && !channel.empty()) {
      Builder::Publish p{std::string(channel),
                         std::string(payload),
                         t,
                         kOpenUs,
                         event_index,
                         lane,
                         row,
                         false,
                         {},
                         {}};
      open.publish = static_cast<int64_t>(b.publishes.size());
      b.publish_by_key[message_key(channel, payload)].push_back(open.publish);
      b.publish_by_channel[p.channel].push_back(open.publish);
      b.publishes.push_back(std::move(p));
    } else if (name == "XADD" && !channel.empty()) {
      Builder::Publish p{
          std::string(channel), "", t, kOpenUs, event_index, lane, row, true, {}, {}};
      open.publish = static_cast<int64_t>(b.publishes.size());
      b.publishes.push_back(std::move(p));
    }
    // command_line cuts long lines to 120 characters and "...": those cannot be replayed.
    bool cut = e.text.size() >= 117 && e.text.compare(e.text.size() - 3, 3, "...") == 0;
    open.replay = !name.empty() && !cut;
    b.open_commands[e.connection].push_back(open);
    return;
  }
  if (kind == "reply" || kind == "read_timeout" || kind == "eof" || kind == "pubsub_confirm") {
    if (kind == "read_timeout" || kind == "eof") add(lane, 0, mark(ItemKind::error));
    if (kind == "pubsub_confirm") {
      auto words = array_words(e.text);
      if (words.size() >= 2 && (words[0] == "subscribe" || words[0] == "ssubscribe"))
        b.subscribers[e.actor].since_us.try_emplace(words[1], t);
    }
    b.last_connection[e.actor] = e.connection;
    auto it = b.open_commands.find(e.connection);
    if (it == b.open_commands.end() || it->second.empty()) return;
    Builder::OpenCommand open = it->second.front();
    it->second.pop_front();
    bool error = kind != "reply" || e.text.rfind("(error)", 0) == 0;
    close(open.ref, t, event_index, error ? kItemErrorReply : 0);
    if (open.publish >= 0) {
      Builder::Publish& p = b.publishes[open.publish];
      p.done_us = t;
      if (p.stream && !error) {
        auto words = array_words(e.text);
        if (words.size() == 1) {
          p.payload = words[0];
          std::string key = p.channel + '\n' + p.payload;
          b.publish_by_key[key].push_back(open.publish);
          // A consumer can read the entry before the producer has XADD's reply.
          if (auto early = b.early_entries.find(key); early != b.early_entries.end()) {
            for (const Builder::EarlyEntry& entry : early->second)
              arrows_.push_back(Arrow{p.sent_us, entry.at_us, p.lane, p.row, entry.lane, entry.row,
                                      p.event, entry.event, false, true});
            b.early_entries.erase(early);
          }
        }
      }
    }
    if (open.replay && !error && kind == "reply") {
      std::string server = server_of(e.connection);
      const TraceEvent& command = trace.events()[item_at(open.ref).begin_event];
      if (!server.empty())
        b.replay_ops[server].push_back(
            {Builder::ReplayOp::Kind::command, t, e.connection, command.text + '\n' + e.text});
    }
    return;
  }
  if (kind == "pubsub_message") {
    size_t colon = e.text.find(": ");
    if (colon == std::string::npos) return;
    std::string_view text = e.text;
    deliver(message_key(text.substr(0, colon), text.substr(colon + 2)), e.actor, lane,
            conn_row_of(lane, e.connection), false);
    return;
  }
  if (kind == "stream_message") {
    std::string_view text = e.text;
    std::string_view stream = first_word(text);
    std::string_view rest = text.substr(std::min(text.size(), stream.size() + 1));
    deliver(std::string(stream) + '\n' + std::string(first_word(rest)), e.actor, lane, 0, true);
    return;
  }
  if (kind == "pubsub_disconnected") {
    add(lane, 0, mark(ItemKind::error));
    Builder::Subscriber& s = b.subscribers[e.actor];
    if (!s.gap) {
      s.gap = add(lane, 0, open_item(ItemKind::gap));
      s.gap_from_us = t;
    }
    return;
  }
  if (kind == "pubsub_resubscribe" || kind == "pubsub_gave_up") {
    Builder::Subscriber& s = b.subscribers[e.actor];
    TimeUs gap_from_us = s.gap ? s.gap_from_us : t;
    if (s.gap) {
      close(*s.gap, t, event_index, 0);
      s.gap.reset();
    }
    if (kind == "pubsub_gave_up") add(lane, 0, mark(ItemKind::error));
    // Completed publishes on its channels since it subscribed that never reached it.
    for (const auto& [channel, since_us] : s.since_us) {
      auto pubs = b.publish_by_channel.find(channel);
      if (pubs == b.publish_by_channel.end()) continue;
      // Publishes before the cursor were settled at an earlier resubscribe.
      size_t& checked = s.checked[channel];
      for (; checked < pubs->second.size(); checked++) {
        Builder::Publish& p = b.publishes[pubs->second[checked]];
        if (p.done_us > t) break;  // not completed yet: its fate is not known
        if (p.sent_us < since_us) continue;
        if (std::find(p.delivered.begin(), p.delivered.end(), e.actor) != p.delivered.end() ||
            std::find(p.lost.begin(), p.lost.end(), e.actor) != p.lost.end())
          continue;
        p.lost.push_back(e.actor);
        // The mark sits in the gap: at the publish, or at the gap's start if it was lost
        // earlier (a slow subscriber's unread buffer dropped with the connection).
        TimeUs at_us = std::clamp(p.sent_us, gap_from_us, t);
        Arrow a;
        a.from_us = p.sent_us;
        a.to_us = at_us;
        a.from_lane = p.lane;
        a.from_row = p.row;
        a.to_lane = lane;
        a.to_row = 0;
        a.from_event = p.event;
        a.lost = true;
        arrows_.push_back(a);
      }
    }
    return;
  }
  if (kind == "pool_wait") {
    if (!b.open_pool_wait.count(e.actor))
      b.open_pool_wait[e.actor] = add(lane, 0, open_item(ItemKind::pool_wait));
    return;
  }
  if (kind == "pool_hit" || kind == "pool_miss" || kind == "pool_timeout" ||
      kind == "pool_wait_deadline") {
    if (auto it = b.open_pool_wait.find(e.actor); it != b.open_pool_wait.end()) {
      close(it->second, t, event_index, kind == "pool_timeout" ? kItemErrorReply : 0);
      b.open_pool_wait.erase(it);
    }
    if (kind == "pool_timeout" || kind == "pool_wait_deadline") add(lane, 0, mark(ItemKind::error));
    return;
  }
  if (kind == "work" || kind == "sleep") {
    if (auto it = b.open_work.find(e.actor); it != b.open_work.end())
      close(it->second, t, event_index, 0);
    b.open_work[e.actor] =
        add(lane, 0, open_item(kind == "work" ? ItemKind::work : ItemKind::sleep));
    return;
  }
  if (kind == "work_done" || kind == "sleep_done") {
    if (auto it = b.open_work.find(e.actor); it != b.open_work.end()) {
      close(it->second, t, event_index, 0);
      b.open_work.erase(it);
    }
    return;
  }
  if (kind == "backoff") {
    // The sleep before the next attempt: its length is in the text.
    if (auto wait_us = duration_after(e.text, "")) {
      Item item = mark(ItemKind::sleep);
      item.to_us = t + *wait_us;
      add(lane, 0, item);
    }
    return;
  }
  if (kind == "lock_acquired") {
    std::string lock = lock_of(e.text);
    TimeUs ttl_us = int_after(e.text, "ttl=", 0) * kUsPerMs;
    int32_t group = lock_group(lock);
    auto key = std::make_pair(e.actor, lock);
    if (auto it = b.open_hold.find(key); it != b.open_hold.end())
      close(it->second, t, event_index, 0);
    Item hold = open_item(ItemKind::hold);
    hold.deadline_us = t + ttl_us;
    hold.ttl_us = ttl_us;
    hold.group = group;
    b.open_hold[key] = add(lane, lock_row_of(lane, lock), hold);
    b.hold_ttl_us[key] = ttl_us;
    start_key_segment(server_of_actor(e.actor), lock, e.actor, ttl_us, group);
    return;
  }
  if (kind == "lock_extended") {
    std::string lock = lock_of(e.text);
    auto key = std::make_pair(e.actor, lock);
    TimeUs ttl_us = b.hold_ttl_us.count(key) ? b.hold_ttl_us[key] : 0;
    if (auto it = b.open_hold.find(key); it != b.open_hold.end())
      item_at(it->second).deadline_us = t + ttl_us;
    std::string server = server_of_actor(e.actor);
    auto live = b.live_keys.find({server, lock});
    // Only the owner's key is pushed; an extend of a key someone else holds returns 0.
    if (live != b.live_keys.end() && live->second.owner == e.actor)
      start_key_segment(server, lock, e.actor, ttl_us, lock_group(lock));
    return;
  }
  if (kind == "lock_released" || kind == "lock_lost" || kind == "lock_release_failed") {
    std::string lock = lock_of(e.text);
    if (auto it = b.open_hold.find({e.actor, lock}); it != b.open_hold.end()) {
      close(it->second, t, event_index, kind == "lock_released" ? 0 : kItemErrorReply);
      b.open_hold.erase(it);
    }
    if (kind != "lock_released") add(lane, 0, mark(ItemKind::error));
    // "lock:job:42 by DEL -> 1": the server deleted the key, whoever held it.
    if (kind == "lock_released" && e.text.size() > 5 &&
        e.text.compare(e.text.size() - 5, 5, " -> 1") == 0) {
      auto live = b.live_keys.find({server_of_actor(e.actor), lock});
      if (live != b.live_keys.end()) {
        bool own = live->second.owner == e.actor;
        close(live->second.ref, t, event_index, own ? kItemEndedByOwner : kItemForeignEnd);
        b.live_keys.erase(live);
      }
    }
    return;
  }
  if (kind == "actor_end") {
    // A holder that ends (done or abandoned) stops believing it holds anything.
    for (auto it = b.open_hold.begin(); it != b.open_hold.end();) {
      if (it->first.first != e.actor) {
        ++it;
        continue;
      }
      close(it->second, t, event_index, 0);
      it = b.open_hold.erase(it);
    }
    if (e.text.rfind("abandoned", 0) == 0) add(lane, 0, mark(ItemKind::error));
    return;
  }
  if (kind == "resource_accept" || kind == "resource_reject") {
    int resource = lane_for(std::string(first_word(e.text)), LaneKind::resource);
    add(resource, 0, mark(kind == "resource_accept" ? ItemKind::accept : ItemKind::reject));
    return;
  }
  if (kind == "note") {
    notes_.push_back(Note{t, event_index, e.actor, e.text});
    return;
  }
  if (is_error_kind(kind)) add(lane, 0, mark(ItemKind::error));
}

// ---- keyspace_at: replay through a fresh fake server ----

namespace {

// A blocking command as its non-blocking form (the reply says what it took), or nullopt to
// skip it. argv is the command, reply the short reply text.
std::optional<fake::Argv> unblocked(const fake::Argv& argv, const std::string& reply) {
  std::string name = upper(argv[0]);
  auto taken = array_words(reply);
  if ((name == "BLPOP" || name == "BRPOP") && !taken.empty())
    return fake::Argv{name.substr(1), taken[0]};
  if ((name == "BZPOPMIN" || name == "BZPOPMAX") && !taken.empty())
    return fake::Argv{name.substr(1), taken[0]};
  if ((name == "BLMOVE" || name == "BRPOPLPUSH") && argv.size() >= 3 && reply != "(nil)") {
    fake::Argv out(argv.begin(), argv.end() - 1);  // without the timeout
    out[0] = name.substr(1);
    return out;
  }
  if (name == "XREADGROUP" || name == "XREAD") {
    fake::Argv out;
    for (size_t i = 0; i < argv.size(); i++) {
      if (upper(argv[i]) == "BLOCK" && i + 1 < argv.size()) {
        i++;
        continue;
      }
      out.push_back(argv[i]);
    }
    return out;
  }
  return std::nullopt;
}

std::string render_value(fake::Server& server, fake::ClientId id, const std::string& key,
                         const std::string& type) {
  constexpr size_t kValueCharsMax = 80;
  fake::Argv argv;
  if (type == "string")
    argv = {"GET", key};
  else if (type == "list")
    argv = {"LRANGE", key, "0", "9"};
  else if (type == "hash")
    argv = {"HGETALL", key};
  else if (type == "set")
    argv = {"SMEMBERS", key};
  else if (type == "zset")
    argv = {"ZRANGE", key, "0", "9", "WITHSCORES"};
  else if (type == "stream")
    argv = {"XLEN", key};
  else
    return "";
  std::string shown = format_short(server.call(id, argv), kValueCharsMax);
  if (type == "stream") shown += " entries";
  return shown;
}

}  // namespace

std::vector<KeyState> TimelineModel::keyspace_at(const std::string& server, TimeUs t) const {
  auto ops_it = builder_->replay_ops.find(server);
  if (ops_it == builder_->replay_ops.end()) return {};
  const auto& ops = ops_it->second;
  if (!replay_) replay_ = std::make_unique<Replay>();
  Replay::PerServer& rs = replay_->servers[server];
  // The cache: the same t with no new operations gives the same keys.
  if (rs.server && rs.at_us == t && rs.ops_seen == ops.size()) return rs.keys;
  auto fresh = [&](TimeUs at_us) {
    fake::ServerOptions options;
    options.name = server;
    rs.server = std::make_unique<fake::Server>(options);
    if (at_us > 0) rs.server->advance(at_us);
    rs.clients.clear();
  };
  // Going back in time: start over (a fresh server is cheap; scrubbing forward continues).
  if (!rs.server || t < rs.at_us) {
    fresh(0);
    rs.next_op = 0;
  }
  auto client_of = [&](int64_t connection) {
    auto [it, inserted] = rs.clients.try_emplace(connection, 0);
    if (inserted) it->second = rs.server->connect(rs.server->clock_us());
    return it->second;
  };
  for (; rs.next_op < ops.size() && ops[rs.next_op].time_us <= t; rs.next_op++) {
    const Builder::ReplayOp& op = ops[rs.next_op];
    if (op.kind == Builder::ReplayOp::Kind::restart) {
      fresh(op.time_us);
      continue;
    }
    fake::Server& fs = *rs.server;
    if (op.time_us > fs.clock_us()) fs.advance(op.time_us);
    if (op.kind == Builder::ReplayOp::Kind::clock_jump) {
      int64_t delta_us = 0;
      if (parse_int(op.line, delta_us)) fs.jump_clock(delta_us, op.time_us);
      continue;
    }
    size_t newline = op.line.find('\n');
    std::string line = op.line.substr(0, newline);
    std::string reply = newline == std::string::npos ? "" : op.line.substr(newline + 1);
    auto argv = split_args(line);
    if (!argv || argv->empty()) continue;
    std::string name = upper((*argv)[0]);
    const fake::CommandSpec* spec = fs.find_command(name);
    if (!spec) spec = fs.find_command((*argv)[0]);
    if (!spec) continue;
    // Reads cannot change the keyspace; pub/sub, DEBUG and connection commands are skipped,
    // and blocking forms run as their non-blocking forms (a blocked client never answers).
    bool read_only =
        (spec->flags & fake::kReadOnly) && !(spec->flags & fake::kWrite) && name != "XREADGROUP";
    if (read_only || (spec->flags & fake::kPubSub) || name == "DEBUG" || name == "HELLO" ||
        name == "CLIENT" || name == "QUIT" || name == "RESET")
      continue;
    if ((spec->flags & fake::kBlocking) || name == "XREADGROUP" || name == "XREAD") {
      auto plain = unblocked(*argv, reply);
      if (!plain) continue;
      *argv = *plain;
    }
    fs.call(client_of(op.connection), *argv);
  }
  fake::Server& fs = *rs.server;
  if (t > fs.clock_us()) fs.advance(t);
  rs.at_us = t;
  rs.ops_seen = ops.size();
  // List through an inspecting connection: KEYS (which also expires what is due), TYPE,
  // PTTL and a short rendering of the value.
  fake::ClientId inspector = client_of(-2);
  std::vector<KeyState> keys;
  Reply listed = fs.call(inspector, {"KEYS", "*"});
  std::vector<std::string> names;
  for (const Reply& r : listed.elements) names.push_back(r.str);
  std::sort(names.begin(), names.end());
  constexpr size_t kKeysMax = 1000;  // the inspector shows a bounded list
  if (names.size() > kKeysMax) names.resize(kKeysMax);
  for (const std::string& name : names) {
    KeyState k;
    k.key = name;
    k.type = fs.call(inspector, {"TYPE", name}).str;
    Reply pttl = fs.call(inspector, {"PTTL", name});
    k.ttl_ms = pttl.integer >= 0 ? pttl.integer : -1;
    k.value = render_value(fs, inspector, name, k.type);
    keys.push_back(std::move(k));
  }
  rs.keys = keys;
  return keys;
}

}  // namespace redlab::gui
