// Stream commands (Redis 7.0 t_stream.c): XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID,
// XREAD and XREADGROUP (with BLOCK), consumer groups (XGROUP, XACK, XPENDING, XCLAIM,
// XAUTOCLAIM) and XINFO.
//
// The stream keeps Redis' node layout (see stream_types.h): entries are appended to the tail
// node until it holds stream-node-max-entries entries (live plus tombstones) or until its
// listpack would reach stream-node-max-bytes, and deleted entries stay as tombstones. That
// is what makes approximate trimming, XINFO STREAM's radix-tree-* fields and the
// consumer-group lag (which cannot be computed across a tombstone) come out as in Redis.
//
// Blocking: XREAD/XREADGROUP BLOCK park the client with Ctx::block. XADD marks the key ready
// and the server re-runs the command (Ctx::retrying). A re-run XREAD uses the IDs resolved
// when it blocked ("$" means the last ID at that moment, kept in BlockState::extra); a
// re-run XREADGROUP reads past the group's last delivered ID, and fails if its key or group
// went away meanwhile, with the errors Redis 7.0 gives in that case.
//
// Times: new IDs, NACK delivery times and consumer seen times use the server's unix ms
// (Ctx::now_ms), the same clock Redis uses for all three.
#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

constexpr std::string_view kInvalidId =
    "ERR Invalid stream ID specified as stream command argument";
constexpr std::string_view kIdTooSmall =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
constexpr int64_t kListpackMaxBytes = 1LL << 30;  // STREAM_LISTPACK_MAX_SIZE
constexpr int64_t kNodeMaxBytesDefault = 4096;    // stream-node-max-bytes
constexpr int64_t kInvalidEntriesRead = -1;       // SCG_INVALID_ENTRIES_READ
constexpr size_t kIdArgBytesMax = 127;            // streamGenericParseIDOrReply's buffer

bool is_opt(const std::string& s, std::string_view name) {
  return equals_nocase(s, name);
}

// ---------------------------------------------------------------------------------------
// IDs
// ---------------------------------------------------------------------------------------

// streamIncrID / streamDecrID: false when the ID wraps around.
bool incr_id(StreamId& id) {
  if (id.seq == UINT64_MAX) {
    if (id.ms == UINT64_MAX) {
      id = StreamId::min();
      return false;
    }
    id.ms++;
    id.seq = 0;
    return true;
  }
  id.seq++;
  return true;
}

bool decr_id(StreamId& id) {
  if (id.seq == 0) {
    if (id.ms == 0) {
      id = StreamId::max();
      return false;
    }
    id.ms--;
    id.seq = UINT64_MAX;
    return true;
  }
  id.seq--;
  return true;
}

// string2ull: string2ll first, then strtoull (which, unlike string2ll, takes leading blanks,
// a sign and values above INT64_MAX).
bool string_to_ull(const std::string& s, uint64_t& out) {
  if (auto v = parse_int64(s)) {
    if (*v < 0) return false;
    out = static_cast<uint64_t>(*v);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || s.empty() || *end != '\0') return false;
  out = v;
  return true;
}

// streamGenericParseIDOrReply without the reply. "-" and "+" are the extreme IDs unless
// strict; "<ms>" alone takes missing_seq; "<ms>-*" is accepted only when seq_given is asked
// for (XADD), and then sets it to false.
bool parse_id(std::string_view arg, StreamId& id, uint64_t missing_seq, bool strict,
              bool* seq_given) {
  if (arg.size() > kIdArgBytesMax) return false;
  // Redis parses a C string copy: anything after a NUL byte is ignored.
  std::string buf(arg.substr(0, arg.find('\0')));
  if (strict && (buf == "-" || buf == "+")) return false;
  if (seq_given) *seq_given = true;
  if (buf == "-") {
    id = StreamId::min();
    return true;
  }
  if (buf == "+") {
    id = StreamId::max();
    return true;
  }
  size_t dash = buf.find('-');
  uint64_t ms = 0, seq = 0;
  if (!string_to_ull(buf.substr(0, dash), ms)) return false;
  if (dash != std::string::npos) {
    std::string rest = buf.substr(dash + 1);
    if (seq_given && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!string_to_ull(rest, seq)) {
      return false;
    }
  } else {
    seq = missing_seq;
  }
  id = {ms, seq};
  return true;
}

bool strict_id_or_reply(Ctx& c, const std::string& arg, StreamId& id, bool* seq_given = nullptr) {
  if (parse_id(arg, id, 0, true, seq_given)) return true;
  c.reply_error(kInvalidId);
  return false;
}

// streamParseIntervalIDOrReply: "(" makes the bound exclusive (and the rest strict).
bool interval_id_or_reply(Ctx& c, const std::string& arg, StreamId& id, bool& exclude,
                          uint64_t missing_seq) {
  exclude = arg.size() > 1 && arg[0] == '(';
  bool ok = exclude ? parse_id(std::string_view(arg).substr(1), id, missing_seq, true, nullptr)
                    : parse_id(arg, id, missing_seq, false, nullptr);
  if (!ok) c.reply_error(kInvalidId);
  return ok;
}

// Parses "start end" of XRANGE/XPENDING, applying exclusive bounds.
bool range_or_reply(Ctx& c, const std::string& start_arg, const std::string& end_arg,
                    StreamId& start, StreamId& end) {
  bool start_ex = false, end_ex = false;
  if (!interval_id_or_reply(c, start_arg, start, start_ex, 0)) return false;
  if (start_ex && !incr_id(start)) {
    c.reply_error("ERR invalid start ID for the interval");
    return false;
  }
  if (!interval_id_or_reply(c, end_arg, end, end_ex, UINT64_MAX)) return false;
  if (end_ex && !decr_id(end)) {
    c.reply_error("ERR invalid end ID for the interval");
    return false;
  }
  return true;
}

Reply id_reply(const StreamId& id) {
  return Reply::bulk(id.str());
}

// ---------------------------------------------------------------------------------------
// Listpack sizes (listpack.c), for the node-size rule of streamAppendItem
// ---------------------------------------------------------------------------------------

int64_t backlen_bytes(int64_t encoded) {
  if (encoded <= 127) return 1;
  if (encoded < 16383) return 2;
  if (encoded < 2097151) return 3;
  if (encoded < 268435455) return 4;
  return 5;
}

int64_t lp_int_bytes(int64_t v) {
  int64_t enc;
  if (v >= 0 && v <= 127) {
    enc = 1;
  } else if (v >= -4096 && v <= 4095) {
    enc = 2;
  } else if (v >= -32768 && v <= 32767) {
    enc = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    enc = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    enc = 5;
  } else {
    enc = 9;
  }
  return enc + backlen_bytes(enc);
}

// A string element is stored as an integer when it is one (lpStringToInt64 = string2ll).
int64_t lp_str_bytes(std::string_view s) {
  if (auto v = parse_int64(s)) return lp_int_bytes(*v);
  int64_t len = static_cast<int64_t>(s.size());
  int64_t enc = len < 64 ? 1 + len : len < 4096 ? 2 + len : 5 + len;
  return enc + backlen_bytes(enc);
}

// lpBytes of a node: header, master entry (count, deleted, fields, 0), entries, terminator.
int64_t node_bytes(const StreamNode& n) {
  int64_t bytes = 6 + 1;
  bytes += lp_int_bytes(n.live) + lp_int_bytes(n.deleted);
  bytes += lp_int_bytes(static_cast<int64_t>(n.master_fields.size()));
  for (const auto& f : n.master_fields) bytes += lp_str_bytes(f);
  bytes += lp_int_bytes(0);
  return bytes + n.items_bytes;
}

int64_t item_bytes(const StreamId& master, const StreamItem& item, bool same_fields) {
  auto nfields = static_cast<int64_t>(item.fields.size());
  int64_t bytes = lp_int_bytes(same_fields ? 2 : 0);
  bytes += lp_int_bytes(static_cast<int64_t>(item.id.ms - master.ms));
  bytes += lp_int_bytes(static_cast<int64_t>(item.id.seq - master.seq));
  if (!same_fields) {
    bytes += lp_int_bytes(nfields);
    for (const auto& [f, v] : item.fields) bytes += lp_str_bytes(f);
  }
  for (const auto& [f, v] : item.fields) bytes += lp_str_bytes(v);
  int64_t lp_count = nfields + 3 + (same_fields ? 0 : nfields + 1);
  return bytes + lp_int_bytes(lp_count);
}

// ---------------------------------------------------------------------------------------
// Low level stream operations
// ---------------------------------------------------------------------------------------

using NodeIt = std::map<StreamId, StreamNode>::iterator;

// The node whose ID range may hold `id` (the last node with master ID <= id), or end().
NodeIt node_for(StreamValue& s, const StreamId& id) {
  auto it = s.nodes.upper_bound(id);
  if (it == s.nodes.begin()) return s.nodes.end();
  return std::prev(it);
}

StreamItem* find_item(StreamValue& s, const StreamId& id, bool include_tombstones = false) {
  auto n = node_for(s, id);
  if (n == s.nodes.end()) return nullptr;
  auto& items = n->second.items;
  auto it = std::lower_bound(items.begin(), items.end(), id,
                             [](const StreamItem& a, const StreamId& b) { return a.id < b; });
  if (it == items.end() || it->id != id) return nullptr;
  if (it->deleted && !include_tombstones) return nullptr;
  return &*it;
}

bool entry_exists(StreamValue& s, const StreamId& id) {
  return find_item(s, id) != nullptr;
}

// Calls f(item) for live entries with start <= id <= end, ascending (or descending when
// rev), until f returns false.
template <typename F>
void for_each_entry(StreamValue& s, const StreamId& start, const StreamId& end, bool rev, F&& f) {
  if (start > end || s.nodes.empty()) return;
  if (!rev) {
    auto n = node_for(s, start);
    if (n == s.nodes.end()) n = s.nodes.begin();
    for (; n != s.nodes.end(); ++n) {
      auto& items = n->second.items;
      auto it = std::lower_bound(items.begin(), items.end(), start,
                                 [](const StreamItem& a, const StreamId& b) { return a.id < b; });
      for (; it != items.end(); ++it) {
        if (it->id > end) return;
        if (it->deleted) continue;
        if (!f(*it)) return;
      }
    }
  } else {
    auto n = node_for(s, end);
    if (n == s.nodes.end()) return;  // every node starts after `end`
    for (auto rn = std::make_reverse_iterator(std::next(n)); rn != s.nodes.rend(); ++rn) {
      auto& items = rn->second.items;
      auto it = std::upper_bound(items.begin(), items.end(), end,
                                 [](const StreamId& a, const StreamItem& b) { return a < b.id; });
      for (auto r = std::make_reverse_iterator(it); r != items.rend(); ++r) {
        if (r->id < start) return;
        if (r->deleted) continue;
        if (!f(*r)) return;
      }
    }
  }
}

// streamGetEdgeID with skip_tombstones: the first (or last) live ID; max (or min) if none.
StreamId edge_id(StreamValue& s, bool first) {
  StreamId found = first ? StreamId::max() : StreamId::min();
  for_each_entry(s, StreamId::min(), StreamId::max(), !first, [&](const StreamItem& it) {
    found = it.id;
    return false;
  });
  return found;
}

StreamId last_valid_id(StreamValue& s) {
  return edge_id(s, false);
}

int64_t config_or(Ctx& c, const char* name, int64_t fallback) {
  auto& cfg = c.server.config();
  auto it = cfg.find(name);
  if (it == cfg.end()) return fallback;
  return parse_int64(it->second).value_or(fallback);
}

enum class AppendResult : uint8_t { kOk, kIdTooSmall, kTooLarge };

// streamAppendItem. use_id = nullptr generates the ID from the clock; seq_given = false
// ("<ms>-*") takes the next sequence number within that millisecond.
AppendResult append_item(Ctx& c, StreamValue& s, StreamFields fields, const StreamId* use_id,
                         bool seq_given, StreamId& added) {
  StreamId id;
  if (use_id) {
    if (seq_given) {
      id = *use_id;
    } else if (s.last_id.ms == use_id->ms) {
      // Redis 7.0 fails here without setting errno, so XADD reports "too large".
      if (s.last_id.seq == UINT64_MAX) return AppendResult::kTooLarge;
      id = s.last_id;
      id.seq++;
    } else {
      id = *use_id;
    }
  } else {
    // streamNextID: the clock, or the next sequence when the clock is behind the last ID.
    auto now_ms = static_cast<uint64_t>(std::max<int64_t>(c.now_ms, 0));
    if (now_ms > s.last_id.ms) {
      id = {now_ms, 0};
    } else {
      id = s.last_id;
      incr_id(id);
    }
  }
  if (id <= s.last_id) return AppendResult::kIdTooSmall;

  int64_t total_bytes = 0;
  for (const auto& [f, v] : fields) total_bytes += static_cast<int64_t>(f.size() + v.size());
  if (total_bytes > kListpackMaxBytes) return AppendResult::kTooLarge;

  // Can the tail node take it? (count includes tombstones)
  bool new_node = s.nodes.empty();
  if (!new_node) {
    StreamNode& tail = std::prev(s.nodes.end())->second;
    int64_t max_bytes = config_or(c, "stream-node-max-bytes", kNodeMaxBytesDefault);
    if (max_bytes <= 0 || max_bytes > kListpackMaxBytes) max_bytes = kListpackMaxBytes;
    int64_t max_entries = config_or(c, "stream-node-max-entries", 100);
    if (node_bytes(tail) + total_bytes >= max_bytes) {
      new_node = true;
    } else if (max_entries > 0 && tail.live + tail.deleted >= max_entries) {
      new_node = true;
    }
  }
  StreamItem item{id, false, std::move(fields)};
  if (new_node) {
    StreamNode node;
    for (const auto& [f, v] : item.fields) node.master_fields.push_back(f);
    node.items_bytes = item_bytes(id, item, true);
    node.live = 1;
    node.items.push_back(std::move(item));
    s.nodes.emplace(id, std::move(node));
  } else {
    auto tail = std::prev(s.nodes.end());
    StreamNode& node = tail->second;
    bool same = node.master_fields.size() == item.fields.size();
    for (size_t i = 0; same && i < item.fields.size(); i++)
      same = node.master_fields[i] == item.fields[i].first;
    node.items_bytes += item_bytes(tail->first, item, same);
    node.live++;
    node.items.push_back(std::move(item));
  }
  s.length++;
  s.entries_added++;
  s.last_id = id;
  if (s.length == 1) s.first_id = id;
  added = id;
  return AppendResult::kOk;
}

// streamDeleteItem: flags the entry; a node whose last live entry goes is dropped whole.
bool delete_item(StreamValue& s, const StreamId& id) {
  auto n = node_for(s, id);
  if (n == s.nodes.end()) return false;
  StreamItem* item = find_item(s, id);
  if (!item) return false;
  StreamNode& node = n->second;
  if (node.live == 1) {
    s.nodes.erase(n);
  } else {
    item->deleted = true;
    node.live--;
    node.deleted++;
  }
  s.length--;
  return true;
}

enum class TrimStrategy : uint8_t { kNone, kMaxLen, kMinId };

struct TrimArgs {
  TrimStrategy strategy = TrimStrategy::kNone;
  bool approx = false;
  int64_t limit = 0;  // 0 = no limit
  int64_t maxlen = 0;
  StreamId minid;
  // XADD only
  StreamId id;
  bool id_given = false;
  bool seq_given = true;
  bool no_mkstream = false;
};

// streamTrim: whole nodes first; an exact trim then flags entries inside the first node
// that cannot go whole; an approximate one stops there.
int64_t trim_stream(StreamValue& s, const TrimArgs& a) {
  if (a.strategy == TrimStrategy::kNone) return 0;
  int64_t deleted = 0;
  auto n = s.nodes.begin();
  while (n != s.nodes.end()) {
    StreamNode& node = n->second;
    if (a.strategy == TrimStrategy::kMaxLen && s.length <= static_cast<uint64_t>(a.maxlen)) break;
    int64_t entries = node.live;
    if (a.limit && deleted + entries > a.limit) break;
    bool remove_node;
    if (a.strategy == TrimStrategy::kMaxLen) {
      remove_node = s.length - static_cast<uint64_t>(entries) >= static_cast<uint64_t>(a.maxlen);
    } else {
      // lpGetEdgeStreamID: the node's last entry, tombstone or not.
      remove_node = node.items.back().id < a.minid;
    }
    if (remove_node) {
      s.length -= static_cast<uint64_t>(entries);
      deleted += entries;
      n = s.nodes.erase(n);
      continue;
    }
    if (a.approx) break;
    int64_t deleted_here = 0;
    for (StreamItem& item : node.items) {
      bool stop = a.strategy == TrimStrategy::kMaxLen ? s.length <= static_cast<uint64_t>(a.maxlen)
                                                      : item.id >= a.minid;
      if (stop) break;
      if (!item.deleted) {
        item.deleted = true;
        deleted_here++;
        s.length--;
      }
    }
    node.live -= deleted_here;
    node.deleted += deleted_here;
    deleted += deleted_here;
    break;
  }
  if (s.length == 0) {
    s.first_id = StreamId::min();
  } else if (deleted) {
    s.first_id = edge_id(s, true);
  }
  return deleted;
}

// The number of nodes of the rax that indexes the stream's nodes by 16-byte big-endian
// master ID: a compressed radix tree (a chain of single-child bytes is one node, a branch
// is one node, every key ends in a leaf). An empty rax is its head node alone.
int64_t rax_nodes(const std::vector<std::array<uint8_t, 16>>& keys, size_t lo, size_t hi,
                  size_t depth) {
  assert(lo < hi);
  if (depth == 16) return 1;
  // Common prefix of the (sorted) keys from depth.
  size_t common = 0;
  while (depth + common < 16 && keys[lo][depth + common] == keys[hi - 1][depth + common]) common++;
  if (common > 0) return 1 + rax_nodes(keys, lo, hi, depth + common);
  int64_t total = 1;
  size_t i = lo;
  while (i < hi) {
    size_t j = i;
    while (j < hi && keys[j][depth] == keys[i][depth]) j++;
    total += rax_nodes(keys, i, j, depth + 1);
    i = j;
  }
  return total;
}

int64_t rax_node_count(const StreamValue& s) {
  if (s.nodes.empty()) return 1;
  std::vector<std::array<uint8_t, 16>> keys;
  keys.reserve(s.nodes.size());
  for (const auto& [id, node] : s.nodes) {
    std::array<uint8_t, 16> k{};
    for (int b = 0; b < 8; b++) {
      k[static_cast<size_t>(b)] = static_cast<uint8_t>(id.ms >> (56 - 8 * b));
      k[static_cast<size_t>(8 + b)] = static_cast<uint8_t>(id.seq >> (56 - 8 * b));
    }
    keys.push_back(k);
  }
  return rax_nodes(keys, 0, keys.size(), 0);
}

// ---------------------------------------------------------------------------------------
// Consumer groups: read counters and lag (Redis 7.0)
// ---------------------------------------------------------------------------------------

// streamRangeHasTombstones(s, start, +inf).
bool has_tombstones_from(const StreamValue& s, const StreamId& start) {
  if (!s.length || s.max_deleted_id.is_zero()) return false;
  if (s.first_id > s.max_deleted_id) return false;
  return start <= s.max_deleted_id;
}

// streamEstimateDistanceFromFirstEverEntry: the logical read counter of `id`, or -1.
int64_t estimate_distance(const StreamValue& s, const StreamId& id) {
  if (!s.entries_added) return 0;
  if (!s.length && id <= s.last_id) return static_cast<int64_t>(s.entries_added);
  if (id == s.last_id) return static_cast<int64_t>(s.entries_added);
  if (id > s.last_id) return kInvalidEntriesRead;
  if (s.max_deleted_id.is_zero() || s.max_deleted_id < s.first_id) {
    if (id < s.first_id) return static_cast<int64_t>(s.entries_added - s.length);
    if (id == s.first_id) return static_cast<int64_t>(s.entries_added - s.length + 1);
  }
  return kInvalidEntriesRead;
}

Reply lag_reply(const StreamValue& s, const StreamGroup& g) {
  if (!s.entries_added) return Reply::integer_reply(0);
  if (g.entries_read != kInvalidEntriesRead && !has_tombstones_from(s, g.last_id))
    return Reply::integer_reply(static_cast<int64_t>(s.entries_added) - g.entries_read);
  int64_t read = estimate_distance(s, g.last_id);
  if (read == kInvalidEntriesRead) return Reply::nil();
  return Reply::integer_reply(static_cast<int64_t>(s.entries_added) - read);
}

StreamConsumer& lookup_or_create_consumer(StreamGroup& g, const std::string& name, int64_t now_ms) {
  auto it = g.consumers.find(name);
  if (it == g.consumers.end()) it = g.consumers.emplace(name, StreamConsumer{now_ms, {}}).first;
  return it->second;
}

// Removes a PEL entry from the group and from its owner.
void drop_nack(StreamGroup& g, std::map<StreamId, StreamNack>::iterator it) {
  auto owner = g.consumers.find(it->second.consumer);
  assert(owner != g.consumers.end() && "every NACK has an existing owner");
  owner->second.pel.erase(it->first);
  g.pel.erase(it);
}

// ---------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------

Reply entry_reply(const StreamItem& item) {
  Reply fields = Reply::array();
  fields.elements.reserve(item.fields.size() * 2);
  for (const auto& [f, v] : item.fields) {
    fields.elements.push_back(Reply::bulk(f));
    fields.elements.push_back(Reply::bulk(v));
  }
  return Reply::array({id_reply(item.id), std::move(fields)});
}

struct GroupRead {
  StreamGroup* group = nullptr;
  const std::string* consumer = nullptr;
  bool noack = false;
};

// streamReplyWithRange: entries start..end (count 0 = all). With a group, delivering an
// entry advances the group's last ID and read counter and (unless NOACK) records a NACK
// owned by the consumer, taking it over if another consumer held it.
Reply range_reply(Ctx& c, StreamValue& s, const StreamId& start, const StreamId& end, int64_t count,
                  bool rev, const GroupRead* gr = nullptr) {
  Reply out = Reply::array();
  for_each_entry(s, start, end, rev, [&](const StreamItem& item) {
    if (gr && item.id > gr->group->last_id) {
      StreamGroup& g = *gr->group;
      if (g.entries_read != kInvalidEntriesRead && !has_tombstones_from(s, item.id)) {
        g.entries_read++;
      } else if (s.entries_added) {
        g.entries_read = estimate_distance(s, item.id);
      }
      g.last_id = item.id;
    }
    out.elements.push_back(entry_reply(item));
    if (gr && !gr->noack) {
      StreamGroup& g = *gr->group;
      StreamConsumer& consumer = lookup_or_create_consumer(g, *gr->consumer, c.now_ms);
      auto [it, inserted] = g.pel.try_emplace(item.id, StreamNack{c.now_ms, 1, *gr->consumer});
      if (!inserted) {
        auto old = g.consumers.find(it->second.consumer);
        assert(old != g.consumers.end() && "every NACK has an existing owner");
        old->second.pel.erase(item.id);
        it->second = StreamNack{c.now_ms, 1, *gr->consumer};
      }
      consumer.pel.insert(item.id);
    }
    return count == 0 || static_cast<int64_t>(out.elements.size()) < count;
  });
  return out;
}

// streamReplyWithRangeFromConsumerPEL: a consumer re-reading its own pending entries; an
// entry deleted from the stream meanwhile comes back as [id, nil].
Reply history_reply(Ctx& c, StreamValue& s, StreamGroup& g, StreamConsumer& consumer,
                    const StreamId& start, int64_t count) {
  Reply out = Reply::array();
  for (auto it = consumer.pel.lower_bound(start); it != consumer.pel.end(); ++it) {
    if (count && static_cast<int64_t>(out.elements.size()) >= count) break;
    if (StreamItem* item = find_item(s, *it)) {
      out.elements.push_back(entry_reply(*item));
      auto nack = g.pel.find(*it);
      assert(nack != g.pel.end() && "a consumer PEL entry is in the group PEL");
      nack->second.delivery_time_ms = c.now_ms;
      nack->second.delivery_count++;
    } else {
      out.elements.push_back(Reply::array({id_reply(*it), Reply::nil_array()}));
    }
  }
  return out;
}

Reply help_reply(const char* title, std::initializer_list<const char*> lines) {
  Reply out = Reply::array();
  out.elements.push_back(Reply::status(title));
  for (const char* l : lines) out.elements.push_back(Reply::status(l));
  out.elements.push_back(Reply::status("HELP"));
  out.elements.push_back(Reply::status("    Prints this help."));
  return out;
}

// addReplySubcommandSyntaxError.
void reply_subcommand_syntax_error(Ctx& c) {
  std::string cmd = c.arg(0);
  for (char& ch : cmd) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  c.reply_error("ERR unknown subcommand or wrong number of arguments for '" +
                c.arg(1).substr(0, 128) + "'. Try " + cmd + " HELP.");
}

// Stream lookup that answers WRONGTYPE; nullptr with wrong_type false means "no key".
StreamValue* stream_lookup(Ctx& c, const std::string& key, bool& wrong_type) {
  auto* p = c.lookup_typed<std::shared_ptr<StreamValue>>(key, wrong_type);
  return p ? p->get() : nullptr;
}

// ---------------------------------------------------------------------------------------
// XADD XTRIM XLEN XRANGE XREVRANGE XDEL XSETID
// ---------------------------------------------------------------------------------------

// streamParseAddOrTrimArgsOrReply: returns the index of the ID (XADD), 0 on error.
size_t parse_add_trim_or_reply(Ctx& c, TrimArgs& a, bool xadd) {
  size_t i = 2;
  bool limit_given = false;
  for (; i < c.argc(); i++) {
    size_t moreargs = c.argc() - 1 - i;
    const std::string& opt = c.arg(i);
    if (xadd && opt == "*") {
      break;
    } else if ((is_opt(opt, "maxlen") || is_opt(opt, "minid")) && moreargs) {
      bool maxlen = is_opt(opt, "maxlen");
      if (a.strategy != TrimStrategy::kNone) {
        c.reply_error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      a.approx = false;
      const std::string& next = c.arg(i + 1);
      if (moreargs >= 2 && next == "~") {
        a.approx = true;
        i++;
      } else if (moreargs >= 2 && next == "=") {
        i++;
      }
      if (maxlen) {
        if (!c.int_arg(i + 1, a.maxlen)) return 0;
        if (a.maxlen < 0) {
          c.reply_error("ERR The MAXLEN argument must be >= 0.");
          return 0;
        }
        a.strategy = TrimStrategy::kMaxLen;
      } else {
        if (!strict_id_or_reply(c, c.arg(i + 1), a.minid)) return 0;
        a.strategy = TrimStrategy::kMinId;
      }
      i++;
    } else if (is_opt(opt, "limit") && moreargs) {
      if (!c.int_arg(i + 1, a.limit)) return 0;
      if (a.limit < 0) {
        c.reply_error("ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      i++;
    } else if (xadd && is_opt(opt, "nomkstream")) {
      a.no_mkstream = true;
    } else if (xadd) {
      if (!strict_id_or_reply(c, opt, a.id, &a.seq_given)) return 0;
      a.id_given = true;
      break;
    } else {
      c.reply_error(err::kSyntax);
      return 0;
    }
  }
  if (a.limit && a.strategy == TrimStrategy::kNone) {
    c.reply_error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && a.strategy == TrimStrategy::kNone) {
    c.reply_error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (limit_given) {
    if (!a.approx) {
      c.reply_error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else if (a.approx) {
    // At most 100 nodes of work by default, clamped like Redis.
    a.limit = 100 * config_or(c, "stream-node-max-entries", 100);
    if (a.limit <= 0) a.limit = 10000;
    if (a.limit > 1000000) a.limit = 1000000;
  } else {
    a.limit = 0;
  }
  return i;
}

void xadd_command(Ctx& c) {
  TrimArgs a;
  size_t id_pos = parse_add_trim_or_reply(c, a, true);
  if (id_pos == 0) return;
  size_t field_pos = id_pos + 1;
  if (c.argc() < field_pos + 2 || (c.argc() - field_pos) % 2 == 1)
    return c.reply_arity_error("xadd");
  if (a.id_given && a.seq_given && a.id.is_zero())
    return c.reply_error("ERR The ID specified in XADD must be greater than 0-0");
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) {
    if (a.no_mkstream) return c.reply_nil();
    auto fresh = std::make_shared<StreamValue>();
    s = fresh.get();
    c.set_key(key, Value{std::move(fresh)});
  }
  if (s->last_id == StreamId::max())
    return c.reply_error(
        "ERR The stream has exhausted the last possible ID, unable to add more "
        "items");
  StreamFields fields;
  fields.reserve((c.argc() - field_pos) / 2);
  for (size_t j = field_pos; j + 1 < c.argc(); j += 2) fields.emplace_back(c.arg(j), c.arg(j + 1));
  StreamId added;
  switch (append_item(c, *s, std::move(fields), a.id_given ? &a.id : nullptr, a.seq_given, added)) {
    case AppendResult::kOk:
      break;
    case AppendResult::kIdTooSmall:
      return c.reply_error(kIdTooSmall);
    case AppendResult::kTooLarge:
      return c.reply_error("ERR Elements are too large to be stored");
  }
  c.reply(id_reply(added));
  trim_stream(*s, a);
  c.signal_modified(key);
  c.signal_key_ready(key);
}

void xtrim_command(Ctx& c) {
  TrimArgs a;
  if (parse_add_trim_or_reply(c, a, false) == 0) return;
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply_int(0);
  int64_t deleted = trim_stream(*s, a);
  if (deleted) c.signal_modified(c.arg(1));
  c.reply_int(deleted);
}

void xlen_command(Ctx& c) {
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(s ? static_cast<int64_t>(s->length) : 0);
}

void xrange_generic(Ctx& c, bool rev) {
  StreamId start, end;
  const std::string& start_arg = rev ? c.arg(3) : c.arg(2);
  const std::string& end_arg = rev ? c.arg(2) : c.arg(3);
  if (!range_or_reply(c, start_arg, end_arg, start, end)) return;
  int64_t count = -1;
  for (size_t j = 4; j < c.argc(); j++) {
    size_t additional = c.argc() - j - 1;
    if (is_opt(c.arg(j), "count") && additional >= 1) {
      if (!c.int_arg(j + 1, count)) return;
      if (count < 0) count = 0;
      j++;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply(Reply::array());
  if (count == 0) return c.reply(Reply::nil_array());
  c.reply(range_reply(c, *s, start, end, count == -1 ? 0 : count, rev));
}

void xrange_command(Ctx& c) {
  xrange_generic(c, false);
}
void xrevrange_command(Ctx& c) {
  xrange_generic(c, true);
}

void xdel_command(Ctx& c) {
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply_int(0);
  std::vector<StreamId> ids(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++)
    if (!strict_id_or_reply(c, c.arg(j), ids[j - 2])) return;
  int64_t deleted = 0;
  bool first_entry = false;
  for (const StreamId& id : ids) {
    if (!delete_item(*s, id)) continue;
    if (id == s->first_id) first_entry = true;
    if (id > s->max_deleted_id) s->max_deleted_id = id;
    deleted++;
  }
  if (deleted) {
    if (s->length == 0) {
      s->first_id = StreamId::min();
    } else if (first_entry) {
      s->first_id = edge_id(*s, true);
    }
    c.signal_modified(c.arg(1));
  }
  c.reply_int(deleted);
}

void xsetid_command(Ctx& c) {
  StreamId id, max_deleted;
  int64_t entries_added = -1;
  if (!strict_id_or_reply(c, c.arg(2), id)) return;
  for (size_t i = 3; i < c.argc(); i += 2) {
    size_t moreargs = c.argc() - 1 - i;
    const std::string& opt = c.arg(i);
    if (is_opt(opt, "entriesadded") && moreargs) {
      if (!c.int_arg(i + 1, entries_added)) return;
      if (entries_added < 0) return c.reply_error("ERR entries_added must be positive");
    } else if (is_opt(opt, "maxdeletedid") && moreargs) {
      if (!strict_id_or_reply(c, c.arg(i + 1), max_deleted)) return;
      if (id < max_deleted)
        return c.reply_error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply_error(err::kNoSuchKey);
  // Redis 7.0 does not compare with the current max_deleted_entry_id (later versions do).
  if (s->length > 0) {
    if (id < last_valid_id(*s))
      return c.reply_error(
          "ERR The ID specified in XSETID is smaller than the target stream "
          "top item");
    if (entries_added != -1 && s->length > static_cast<uint64_t>(entries_added))
      return c.reply_error(
          "ERR The entries_added specified in XSETID is smaller than the "
          "target stream length");
  }
  s->last_id = id;
  if (entries_added != -1) s->entries_added = static_cast<uint64_t>(entries_added);
  if (!max_deleted.is_zero()) s->max_deleted_id = max_deleted;
  c.reply_ok();
}

// ---------------------------------------------------------------------------------------
// XREAD XREADGROUP
// ---------------------------------------------------------------------------------------

// What a blocked XREAD remembers: the IDs it waits past, with "$" already resolved.
struct XreadWait {
  std::vector<StreamId> ids;
};

void xread_generic(Ctx& c, bool group_mode) {
  int64_t timeout_ms = -1;  // no BLOCK
  int64_t count = 0;
  size_t streams_arg = 0, streams_count = 0;
  bool noack = false;
  const std::string* group_name = nullptr;
  const std::string* consumer_name = nullptr;
  for (size_t i = 1; i < c.argc(); i++) {
    size_t moreargs = c.argc() - i - 1;
    const std::string& o = c.arg(i);
    if (is_opt(o, "block") && moreargs) {
      // Lua gets an error rather than a non-blocking read (kept for backward compatibility).
      if (c.in_script)
        return c.reply_error("ERR " + c.arg(0) +
                             " command is not allowed with BLOCK option from scripts");
      i++;
      // getTimeoutFromObjectOrReply with UNIT_MILLISECONDS: an integer.
      auto v = parse_int64(c.arg(i));
      if (!v) return c.reply_error("ERR timeout is not an integer or out of range");
      if (*v < 0) return c.reply_error(err::kTimeoutNegative);
      timeout_ms = *v;
    } else if (is_opt(o, "count") && moreargs) {
      i++;
      if (!c.int_arg(i, count)) return;
      if (count < 0) count = 0;
    } else if (is_opt(o, "streams") && moreargs) {
      streams_arg = i + 1;
      streams_count = c.argc() - streams_arg;
      // The same text for XREADGROUP in Redis 7.0.
      if (streams_count % 2 != 0) {
        return c.reply_error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
      }
      streams_count /= 2;
      break;
    } else if (is_opt(o, "group") && moreargs >= 2) {
      if (!group_mode)
        return c.reply_error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      group_name = &c.arg(i + 1);
      consumer_name = &c.arg(i + 2);
      i += 2;
    } else if (is_opt(o, "noack")) {
      if (!group_mode)
        return c.reply_error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      noack = true;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  if (streams_arg == 0) return c.reply_error(err::kSyntax);
  if (group_mode && !group_name) return c.reply_error("ERR Missing GROUP option for XREADGROUP");

  // A re-run XREAD waits past the IDs resolved when it first blocked. (A re-run may also find
  // its key gone or holding another type: XREAD then keeps waiting, XREADGROUP fails.)
  const XreadWait* waited = nullptr;
  if (c.retrying && c.client.block.extra)
    waited = static_cast<const XreadWait*>(c.client.block.extra.get());

  // Woken up, only the key that became ready is served (serveClientsBlockedOnStreamKey), at
  // its first position: a key named twice was blocked on once, with its first ID.
  size_t ready_idx = streams_count;
  if (c.retrying) {
    for (size_t idx = 0; idx < streams_count && ready_idx == streams_count; idx++)
      if (c.arg(streams_arg + idx) == c.client.block.ready_key) ready_idx = idx;
  }
  auto skipped_on_wake = [&](size_t idx) { return c.retrying && idx != ready_idx; };
  std::vector<StreamId> ids(streams_count);
  std::vector<StreamGroup*> groups(streams_count, nullptr);
  for (size_t idx = 0; idx < streams_count; idx++) {
    const std::string& key = c.arg(streams_arg + idx);
    const std::string& id_arg = c.arg(streams_arg + streams_count + idx);
    if (skipped_on_wake(idx)) continue;
    StreamValue* s = nullptr;
    if (Entry* e = c.lookup_read(key)) {
      auto* sp = std::get_if<std::shared_ptr<StreamValue>>(&e->value.data);
      if (sp) {
        s = sp->get();
      } else if (!c.retrying) {
        return c.reply_error(err::kWrongType);
      }
    }
    if (group_mode) {
      StreamGroup* g = nullptr;
      if (s) {
        auto it = s->groups.find(*group_name);
        if (it != s->groups.end()) g = &it->second;
      }
      if (!g) {
        if (c.retrying && !s) return c.reply_error("UNBLOCKED the stream key no longer exists");
        if (c.retrying)
          return c.reply_error(
              "NOGROUP the consumer group this client was blocked on no longer exists");
        return c.reply_error("NOGROUP No such key '" + key + "' or consumer group '" + *group_name +
                             "' in XREADGROUP with GROUP option");
      }
      groups[idx] = g;
    }
    if (id_arg == "$") {
      if (group_mode)
        return c.reply_error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
      ids[idx] = s ? s->last_id : StreamId::min();
    } else if (id_arg == ">") {
      if (!group_mode)
        return c.reply_error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
            "<group> <consumer> option.");
      ids[idx] = StreamId::max();
    } else if (!strict_id_or_reply(c, id_arg, ids[idx])) {
      return;
    }
  }
  assert((!c.retrying || group_mode || waited) && "a blocked XREAD keeps its resolved IDs");
  if (waited && !group_mode) {
    assert(waited->ids.size() == ids.size() && "the same argv blocked with these IDs");
    ids = waited->ids;
  }

  Reply out = Reply::array();
  for (size_t i = 0; i < streams_count; i++) {
    const std::string& key = c.arg(streams_arg + i);
    if (skipped_on_wake(i)) continue;
    Entry* e = c.lookup_read(key);
    auto* sp = e ? std::get_if<std::shared_ptr<StreamValue>>(&e->value.data) : nullptr;
    if (!sp) continue;
    StreamValue& s = **sp;
    StreamId gt = ids[i];
    bool serve = false, history = false;
    if (group_mode) {
      StreamGroup& g = *groups[i];
      if (gt != StreamId::max()) {
        serve = history = true;
      } else if (s.length) {
        // Woken up, Redis 7.0 compares with the stream's last ID, tombstone or not.
        StreamId top = c.retrying ? s.last_id : last_valid_id(s);
        if (top > g.last_id) {
          serve = true;
          gt = g.last_id;
        }
      }
    } else if (s.length) {
      StreamId top = c.retrying ? s.last_id : last_valid_id(s);
      serve = top > gt;
    }
    if (!serve) continue;
    // Redis 7.0 creates the consumer only when it serves it something (or its history).
    if (group_mode)
      lookup_or_create_consumer(*groups[i], *consumer_name, c.now_ms).seen_time_ms = c.now_ms;
    StreamId start = gt;
    incr_id(start);
    Reply entries;
    if (history) {
      StreamGroup& g = *groups[i];
      entries = history_reply(c, s, g, g.consumers.find(*consumer_name)->second, start, count);
    } else {
      GroupRead gr{groups[i], consumer_name, noack};
      entries = range_reply(c, s, start, StreamId::max(), count, false, group_mode ? &gr : nullptr);
    }
    out.elements.push_back(Reply::array({Reply::bulk(key), std::move(entries)}));
  }
  if (!out.elements.empty()) return c.reply(std::move(out));

  if (timeout_ms != -1) {
    // Inside MULTI or a script a blocking read answers as if it timed out at once.
    if (!c.can_block()) return c.reply(Reply::nil_array());
    std::vector<std::string> keys;
    for (size_t i = 0; i < streams_count; i++) keys.push_back(c.arg(streams_arg + i));
    // A timeout too large to add to the clock waits forever, as it does in practice.
    constexpr int64_t kTimeoutMsMax = INT64_MAX / 1000 / 4;
    TimeUs timeout_us = timeout_ms > kTimeoutMsMax ? 0 : timeout_ms * 1000;
    std::shared_ptr<void> extra;
    if (!group_mode && !c.retrying) extra = std::make_shared<XreadWait>(XreadWait{ids});
    return c.block(std::move(keys), timeout_us, Reply::nil_array(), std::move(extra));
  }
  c.reply(Reply::nil_array());
}

void xread_command(Ctx& c) {
  xread_generic(c, false);
}
void xreadgroup_command(Ctx& c) {
  xread_generic(c, true);
}

// ---------------------------------------------------------------------------------------
// XGROUP
// ---------------------------------------------------------------------------------------

struct Subcommand {
  const char* name;
  int arity;
};

// Checks a container's subcommand arity like processCommand does for 'xgroup|create'.
bool subcommand_arity_ok(Ctx& c, const Subcommand& sub) {
  int argc = static_cast<int>(c.argc());
  if ((sub.arity > 0 && argc != sub.arity) || argc < -sub.arity) {
    c.reply_arity_error(c.cmd.name + "|" + sub.name);
    return false;
  }
  return true;
}

template <size_t N>
const Subcommand* find_subcommand(Ctx& c, const std::array<Subcommand, N>& subs) {
  for (const Subcommand& s : subs)
    if (equals_nocase(c.arg(1), s.name)) return &s;
  c.reply_unknown_subcommand();
  return nullptr;
}

constexpr std::array<Subcommand, 6> kXgroupSubcommands{{{"create", -5},
                                                        {"setid", -5},
                                                        {"destroy", 4},
                                                        {"createconsumer", 5},
                                                        {"delconsumer", 5},
                                                        {"help", 2}}};
constexpr std::array<Subcommand, 4> kXinfoSubcommands{
    {{"consumers", 4}, {"groups", 3}, {"stream", -3}, {"help", 2}}};

void xgroup_command(Ctx& c) {
  const Subcommand* sub = find_subcommand(c, kXgroupSubcommands);
  if (!sub || !subcommand_arity_ok(c, *sub)) return;
  std::string_view name = sub->name;
  if (name == "help") {
    return c.reply(help_reply(
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        {"CREATE <key> <groupname> <id|$> [option]",
         "    Create a new consumer group. Options are:", "    * MKSTREAM",
         "      Create the empty stream if it does not exist.", "    * ENTRIESREAD entries_read",
         "      Set the group's entries_read counter (internal use).",
         "CREATECONSUMER <key> <groupname> <consumer>",
         "    Create a new consumer in the specified group.",
         "DELCONSUMER <key> <groupname> <consumer>", "    Remove the specified consumer.",
         "DESTROY <key> <groupname>", "    Remove the specified group.",
         "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
         "    Set the current group ID and entries_read counter."}));
  }
  const std::string& key = c.arg(2);
  const std::string& group_name = c.arg(3);
  bool create = name == "create", setid = name == "setid";
  bool mkstream = false;
  int64_t entries_read = kInvalidEntriesRead;
  for (size_t i = 5; i < c.argc();) {
    if (create && is_opt(c.arg(i), "mkstream")) {
      mkstream = true;
      i++;
    } else if ((create || setid) && is_opt(c.arg(i), "entriesread") && i + 1 < c.argc()) {
      if (!c.int_arg(i + 1, entries_read)) return;
      if (entries_read < 0 && entries_read != kInvalidEntriesRead)
        return c.reply_error("ERR value for ENTRIESREAD must be positive or -1");
      i += 2;
    } else {
      return reply_subcommand_syntax_error(c);
    }
  }
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, key, wrong_type);
  if (wrong_type) return;
  StreamGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(group_name);
    if (it != s->groups.end()) g = &it->second;
  }
  if (!mkstream) {
    if (!s)
      return c.reply_error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
          "want to use the MKSTREAM option to create an empty stream automatically.");
    if (!g && (setid || name == "createconsumer" || name == "delconsumer"))
      return c.reply_error("NOGROUP No such consumer group '" + group_name + "' for key name '" +
                           key + "'");
  }

  if (create) {
    if (c.argc() > 8) return reply_subcommand_syntax_error(c);
    StreamId id;
    if (c.arg(4) == "$") {
      id = s ? s->last_id : StreamId::min();
    } else if (!strict_id_or_reply(c, c.arg(4), id)) {
      return;
    }
    if (!s) {
      auto fresh = std::make_shared<StreamValue>();
      s = fresh.get();
      c.set_key(key, Value{std::move(fresh)});
      c.signal_modified(key);
    }
    if (s->groups.count(group_name))
      return c.reply_error("BUSYGROUP Consumer Group name already exists");
    StreamGroup fresh_group;
    fresh_group.last_id = id;
    fresh_group.entries_read = entries_read;
    s->groups.emplace(group_name, std::move(fresh_group));
    return c.reply_ok();
  }
  if (setid) {
    if (c.argc() != 5 && c.argc() != 7) return reply_subcommand_syntax_error(c);
    StreamId id;
    if (c.arg(4) == "$") {
      id = s->last_id;
    } else if (!parse_id(c.arg(4), id, 0, false, nullptr)) {
      return c.reply_error(kInvalidId);
    }
    g->last_id = id;
    g->entries_read = entries_read;
    return c.reply_ok();
  }
  if (name == "destroy") {
    if (!g) return c.reply_int(0);
    s->groups.erase(group_name);
    // Clients blocked in XREADGROUP on this group get NOGROUP.
    c.signal_key_ready(key);
    return c.reply_int(1);
  }
  if (name == "createconsumer") {
    if (g->consumers.count(c.arg(4))) return c.reply_int(0);
    g->consumers.emplace(c.arg(4), StreamConsumer{c.now_ms, {}});
    return c.reply_int(1);
  }
  assert(name == "delconsumer");
  auto it = g->consumers.find(c.arg(4));
  if (it == g->consumers.end()) return c.reply_int(0);
  auto pending = static_cast<int64_t>(it->second.pel.size());
  for (const StreamId& id : it->second.pel) g->pel.erase(id);
  g->consumers.erase(it);
  c.reply_int(pending);
}

// ---------------------------------------------------------------------------------------
// XACK XPENDING XCLAIM XAUTOCLAIM
// ---------------------------------------------------------------------------------------

// Key and group lookup for XACK/XPENDING/XCLAIM: the group, nullptr when missing (after
// WRONGTYPE was answered, wrong_type is set).
StreamGroup* group_lookup(Ctx& c, StreamValue*& s, bool& wrong_type) {
  s = stream_lookup(c, c.arg(1), wrong_type);
  if (!s) return nullptr;
  auto it = s->groups.find(c.arg(2));
  return it == s->groups.end() ? nullptr : &it->second;
}

void reply_nogroup(Ctx& c) {
  c.reply_error("NOGROUP No such key '" + c.arg(1) + "' or consumer group '" + c.arg(2) + "'");
}

void xack_command(Ctx& c) {
  StreamValue* s = nullptr;
  bool wrong_type = false;
  StreamGroup* g = group_lookup(c, s, wrong_type);
  if (wrong_type) return;
  if (!g) return c.reply_int(0);
  std::vector<StreamId> ids(c.argc() - 3);
  for (size_t j = 3; j < c.argc(); j++)
    if (!strict_id_or_reply(c, c.arg(j), ids[j - 3])) return;
  int64_t acknowledged = 0;
  for (const StreamId& id : ids) {
    auto it = g->pel.find(id);
    if (it == g->pel.end()) continue;
    drop_nack(*g, it);
    acknowledged++;
  }
  c.reply_int(acknowledged);
}

void xpending_command(Ctx& c) {
  bool just_info = c.argc() == 3;
  if (c.argc() != 3 && (c.argc() < 6 || c.argc() > 9)) return c.reply_error(err::kSyntax);
  StreamId start, end;
  int64_t count = 0, min_idle_ms = 0;
  const std::string* consumer_name = nullptr;
  if (c.argc() >= 6) {
    size_t start_idx = 3;
    if (is_opt(c.arg(3), "idle")) {
      if (!c.int_arg(4, min_idle_ms)) return;
      if (c.argc() < 8) return c.reply_error(err::kSyntax);
      start_idx += 2;
    }
    if (!c.int_arg(start_idx + 2, count)) return;
    if (count < 0) count = 0;
    if (!range_or_reply(c, c.arg(start_idx), c.arg(start_idx + 1), start, end)) return;
    if (start_idx + 3 < c.argc()) consumer_name = &c.arg(start_idx + 3);
  }
  StreamValue* s = nullptr;
  bool wrong_type = false;
  StreamGroup* g = group_lookup(c, s, wrong_type);
  if (wrong_type) return;
  if (!g) return reply_nogroup(c);

  if (just_info) {
    Reply out = Reply::array({Reply::integer_reply(static_cast<int64_t>(g->pel.size()))});
    if (g->pel.empty()) {
      out.elements.push_back(Reply::nil());
      out.elements.push_back(Reply::nil());
      out.elements.push_back(Reply::nil_array());
      return c.reply(std::move(out));
    }
    out.elements.push_back(id_reply(g->pel.begin()->first));
    out.elements.push_back(id_reply(g->pel.rbegin()->first));
    Reply consumers = Reply::array();
    for (const auto& [name, consumer] : g->consumers) {
      if (consumer.pel.empty()) continue;
      consumers.elements.push_back(
          Reply::array({Reply::bulk(name), Reply::bulk(std::to_string(consumer.pel.size()))}));
    }
    out.elements.push_back(std::move(consumers));
    return c.reply(std::move(out));
  }

  const std::set<StreamId>* consumer_pel = nullptr;
  if (consumer_name) {
    auto it = g->consumers.find(*consumer_name);
    if (it == g->consumers.end()) return c.reply(Reply::array());
    consumer_pel = &it->second.pel;
  }
  Reply out = Reply::array();
  auto emit = [&](const StreamId& id) {
    const StreamNack& nack = g->pel.at(id);
    int64_t idle_ms = c.now_ms - nack.delivery_time_ms;
    if (min_idle_ms && idle_ms < min_idle_ms) return;
    count--;
    out.elements.push_back(Reply::array({id_reply(id), Reply::bulk(nack.consumer),
                                         Reply::integer_reply(std::max<int64_t>(idle_ms, 0)),
                                         Reply::integer_reply(nack.delivery_count)}));
  };
  if (consumer_pel) {
    for (auto it = consumer_pel->lower_bound(start);
         count && it != consumer_pel->end() && *it <= end; ++it)
      emit(*it);
  } else {
    for (auto it = g->pel.lower_bound(start); count && it != g->pel.end() && it->first <= end; ++it)
      emit(it->first);
  }
  c.reply(std::move(out));
}

void xclaim_command(Ctx& c) {
  StreamValue* s = nullptr;
  bool wrong_type = false;
  StreamGroup* g = group_lookup(c, s, wrong_type);
  if (wrong_type) return;
  if (!g) return reply_nogroup(c);
  int64_t min_idle_ms;
  if (!c.int_arg(4, min_idle_ms, "ERR Invalid min-idle-time argument for XCLAIM")) return;
  if (min_idle_ms < 0) min_idle_ms = 0;
  // IDs until the first argument that is not one; the rest are options.
  std::vector<StreamId> ids;
  size_t j = 5;
  for (; j < c.argc(); j++) {
    StreamId id;
    if (!parse_id(c.arg(j), id, 0, true, nullptr)) break;
    ids.push_back(id);
  }
  int64_t now = c.now_ms;
  int64_t retry_count = -1, delivery_time = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < c.argc(); j++) {
    size_t moreargs = c.argc() - 1 - j;
    const std::string& opt = c.arg(j);
    if (is_opt(opt, "force")) {
      force = true;
    } else if (is_opt(opt, "justid")) {
      justid = true;
    } else if (is_opt(opt, "idle") && moreargs) {
      j++;
      if (!c.int_arg(j, delivery_time, "ERR Invalid IDLE option argument for XCLAIM")) return;
      delivery_time = now - delivery_time;
    } else if (is_opt(opt, "time") && moreargs) {
      j++;
      if (!c.int_arg(j, delivery_time, "ERR Invalid TIME option argument for XCLAIM")) return;
    } else if (is_opt(opt, "retrycount") && moreargs) {
      j++;
      if (!c.int_arg(j, retry_count, "ERR Invalid RETRYCOUNT option argument for XCLAIM")) return;
    } else if (is_opt(opt, "lastid") && moreargs) {
      j++;
      if (!strict_id_or_reply(c, c.arg(j), last_id)) return;
    } else {
      return c.reply_error("ERR Unrecognized XCLAIM option '" + opt + "'");
    }
  }
  if (last_id > g->last_id) g->last_id = last_id;
  // A bogus delivery time (negative, in the future) means now, rather than an error.
  if (delivery_time == -1 || delivery_time < 0 || delivery_time > now) delivery_time = now;

  const std::string& consumer_name = c.arg(3);
  Reply out = Reply::array();
  for (const StreamId& id : ids) {
    auto nack = g->pel.find(id);
    if (!entry_exists(*s, id)) {
      // The entry is gone: its NACK goes too.
      if (nack != g->pel.end()) drop_nack(*g, nack);
      continue;
    }
    if (force && nack == g->pel.end())
      nack = g->pel.emplace(id, StreamNack{now, 1, std::string()}).first;
    if (nack == g->pel.end()) continue;
    bool owned = !nack->second.consumer.empty();
    if (owned && min_idle_ms && now - nack->second.delivery_time_ms < min_idle_ms) continue;
    // Redis 7.0 creates the consumer only once it claims something.
    StreamConsumer& consumer = lookup_or_create_consumer(*g, consumer_name, now);
    consumer.seen_time_ms = now;
    if (owned && nack->second.consumer != consumer_name)
      g->consumers.at(nack->second.consumer).pel.erase(id);
    nack->second.delivery_time_ms = delivery_time;
    if (retry_count >= 0) {
      nack->second.delivery_count = retry_count;
    } else if (!justid) {
      nack->second.delivery_count++;
    }
    nack->second.consumer = consumer_name;
    consumer.pel.insert(id);
    if (justid) {
      out.elements.push_back(id_reply(id));
    } else {
      out.elements.push_back(entry_reply(*find_item(*s, id)));
    }
  }
  c.reply(std::move(out));
}

void xautoclaim_command(Ctx& c) {
  int64_t min_idle_ms;
  if (!c.int_arg(4, min_idle_ms, "ERR Invalid min-idle-time argument for XAUTOCLAIM")) return;
  if (min_idle_ms < 0) min_idle_ms = 0;
  StreamId start;
  bool start_ex = false;
  if (!interval_id_or_reply(c, c.arg(5), start, start_ex, 0)) return;
  if (start_ex && !incr_id(start)) return c.reply_error("ERR invalid start ID for the interval");
  int64_t count = 100;
  constexpr int64_t kAttemptsFactor = 10;
  bool justid = false;
  for (size_t j = 6; j < c.argc(); j++) {
    size_t moreargs = c.argc() - 1 - j;
    const std::string& opt = c.arg(j);
    if (is_opt(opt, "count") && moreargs) {
      // LONG_MAX / max(sizeof(streamID), attempts_factor): the reply buffer must fit.
      constexpr int64_t kCountMax = LONG_MAX / 16;
      auto v = parse_int64(c.arg(j + 1));
      if (!v || *v < 1 || *v > kCountMax) return c.reply_error("ERR COUNT must be > 0");
      count = *v;
      j++;
    } else if (is_opt(opt, "justid")) {
      justid = true;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  StreamValue* s = nullptr;
  bool wrong_type = false;
  StreamGroup* g = group_lookup(c, s, wrong_type);
  if (wrong_type) return;
  if (!g) return reply_nogroup(c);

  const std::string& consumer_name = c.arg(3);
  int64_t now = c.now_ms;
  int64_t attempts = count * kAttemptsFactor;
  Reply claimed = Reply::array();
  Reply deleted = Reply::array();
  auto it = g->pel.lower_bound(start);
  bool reached_end = false;
  while (attempts > 0 && count > 0) {
    attempts--;
    if (it == g->pel.end()) {
      reached_end = true;
      break;
    }
    StreamId id = it->first;
    if (!entry_exists(*s, id)) {
      auto next = std::next(it);
      drop_nack(*g, it);
      it = next;
      deleted.elements.push_back(id_reply(id));
      count--;
      continue;
    }
    StreamNack& nack = it->second;
    if (min_idle_ms && now - nack.delivery_time_ms < min_idle_ms) {
      ++it;
      continue;
    }
    StreamConsumer& consumer = lookup_or_create_consumer(*g, consumer_name, now);
    consumer.seen_time_ms = now;
    if (nack.consumer != consumer_name) g->consumers.at(nack.consumer).pel.erase(id);
    nack.delivery_time_ms = now;
    if (!justid) nack.delivery_count++;
    nack.consumer = consumer_name;
    consumer.pel.insert(id);
    if (justid) {
      claimed.elements.push_back(id_reply(id));
    } else {
      claimed.elements.push_back(entry_reply(*find_item(*s, id)));
    }
    ++it;
    count--;
  }
  StreamId cursor = (reached_end || it == g->pel.end()) ? StreamId::min() : it->first;
  c.reply(Reply::array({id_reply(cursor), std::move(claimed), std::move(deleted)}));
}

// ---------------------------------------------------------------------------------------
// XINFO
// ---------------------------------------------------------------------------------------

Reply stream_info(Ctx& c, StreamValue& s, bool full, int64_t count) {
  Reply out = Reply::array();
  auto field = [&](const char* name, Reply value) {
    out.elements.push_back(Reply::bulk(name));
    out.elements.push_back(std::move(value));
  };
  field("length", Reply::integer_reply(static_cast<int64_t>(s.length)));
  field("radix-tree-keys", Reply::integer_reply(static_cast<int64_t>(s.nodes.size())));
  field("radix-tree-nodes", Reply::integer_reply(rax_node_count(s)));
  field("last-generated-id", id_reply(s.last_id));
  field("max-deleted-entry-id", id_reply(s.max_deleted_id));
  field("entries-added", Reply::integer_reply(static_cast<int64_t>(s.entries_added)));
  field("recorded-first-entry-id", id_reply(s.first_id));
  if (!full) {
    field("groups", Reply::integer_reply(static_cast<int64_t>(s.groups.size())));
    Reply first = range_reply(c, s, StreamId::min(), StreamId::max(), 1, false);
    Reply last = range_reply(c, s, StreamId::min(), StreamId::max(), 1, true);
    field("first-entry", first.elements.empty() ? Reply::nil() : std::move(first.elements[0]));
    field("last-entry", last.elements.empty() ? Reply::nil() : std::move(last.elements[0]));
    return out;
  }
  field("entries", range_reply(c, s, StreamId::min(), StreamId::max(), count, false));
  Reply groups = Reply::array();
  for (const auto& [name, g] : s.groups) {
    Reply gi = Reply::array();
    auto gfield = [&](const char* n, Reply v) {
      gi.elements.push_back(Reply::bulk(n));
      gi.elements.push_back(std::move(v));
    };
    gfield("name", Reply::bulk(name));
    gfield("last-delivered-id", id_reply(g.last_id));
    gfield("entries-read", g.entries_read != kInvalidEntriesRead
                               ? Reply::integer_reply(g.entries_read)
                               : Reply::nil());
    gfield("lag", lag_reply(s, g));
    gfield("pel-count", Reply::integer_reply(static_cast<int64_t>(g.pel.size())));
    Reply pending = Reply::array();
    for (const auto& [id, nack] : g.pel) {
      if (count && static_cast<int64_t>(pending.elements.size()) >= count) break;
      pending.elements.push_back(Reply::array({id_reply(id), Reply::bulk(nack.consumer),
                                               Reply::integer_reply(nack.delivery_time_ms),
                                               Reply::integer_reply(nack.delivery_count)}));
    }
    gfield("pending", std::move(pending));
    Reply consumers = Reply::array();
    for (const auto& [cname, consumer] : g.consumers) {
      Reply cpending = Reply::array();
      for (const StreamId& id : consumer.pel) {
        if (count && static_cast<int64_t>(cpending.elements.size()) >= count) break;
        const StreamNack& nack = g.pel.at(id);
        cpending.elements.push_back(
            Reply::array({id_reply(id), Reply::integer_reply(nack.delivery_time_ms),
                          Reply::integer_reply(nack.delivery_count)}));
      }
      consumers.elements.push_back(
          Reply::array({Reply::bulk("name"), Reply::bulk(cname), Reply::bulk("seen-time"),
                        Reply::integer_reply(consumer.seen_time_ms), Reply::bulk("pel-count"),
                        Reply::integer_reply(static_cast<int64_t>(consumer.pel.size())),
                        Reply::bulk("pending"), std::move(cpending)}));
    }
    gfield("consumers", std::move(consumers));
    groups.elements.push_back(std::move(gi));
  }
  field("groups", std::move(groups));
  return out;
}

void xinfo_command(Ctx& c) {
  const Subcommand* sub = find_subcommand(c, kXinfoSubcommands);
  if (!sub || !subcommand_arity_ok(c, *sub)) return;
  std::string_view name = sub->name;
  if (name == "help") {
    return c.reply(help_reply(
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        {"CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
         "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
         "    Show information about the stream."}));
  }
  const std::string& key = c.arg(2);
  bool wrong_type = false;
  StreamValue* s = stream_lookup(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply_error(err::kNoSuchKey);
  if (name == "consumers") {
    auto git = s->groups.find(c.arg(3));
    if (git == s->groups.end())
      return c.reply_error("NOGROUP No such consumer group '" + c.arg(3) + "' for key name '" +
                           key + "'");
    Reply out = Reply::array();
    for (const auto& [cname, consumer] : git->second.consumers) {
      int64_t idle_ms = std::max<int64_t>(c.now_ms - consumer.seen_time_ms, 0);
      out.elements.push_back(
          Reply::array({Reply::bulk("name"), Reply::bulk(cname), Reply::bulk("pending"),
                        Reply::integer_reply(static_cast<int64_t>(consumer.pel.size())),
                        Reply::bulk("idle"), Reply::integer_reply(idle_ms)}));
    }
    return c.reply(std::move(out));
  }
  if (name == "groups") {
    Reply out = Reply::array();
    for (const auto& [gname, g] : s->groups) {
      out.elements.push_back(Reply::array(
          {Reply::bulk("name"), Reply::bulk(gname), Reply::bulk("consumers"),
           Reply::integer_reply(static_cast<int64_t>(g.consumers.size())), Reply::bulk("pending"),
           Reply::integer_reply(static_cast<int64_t>(g.pel.size())),
           Reply::bulk("last-delivered-id"), id_reply(g.last_id), Reply::bulk("entries-read"),
           g.entries_read != kInvalidEntriesRead ? Reply::integer_reply(g.entries_read)
                                                 : Reply::nil(),
           Reply::bulk("lag"), lag_reply(*s, g)}));
    }
    return c.reply(std::move(out));
  }
  // XINFO STREAM <key> [FULL [COUNT <count>]]
  size_t optc = c.argc() - 3;
  bool full = optc > 0;
  int64_t count = 10;
  if (full) {
    if (optc != 1 && optc != 3) return reply_subcommand_syntax_error(c);
    if (!is_opt(c.arg(3), "full")) return reply_subcommand_syntax_error(c);
    if (optc == 3) {
      if (!is_opt(c.arg(4), "count")) return reply_subcommand_syntax_error(c);
      if (!c.int_arg(5, count)) return;
      if (count < 0) count = 10;
    }
  }
  c.reply(stream_info(c, *s, full, count));
}

}  // namespace

void register_stream_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int first_key = 1,
                 int last_key = 1) {
    t[name] = CommandSpec{name, arity, flags, h, first_key, last_key, first_key ? 1 : 0};
  };
  add("xadd", -5, kWrite | kFast, xadd_command);
  add("xtrim", -4, kWrite, xtrim_command);
  add("xlen", 2, kReadOnly | kFast, xlen_command);
  add("xrange", -4, kReadOnly, xrange_command);
  add("xrevrange", -4, kReadOnly, xrevrange_command);
  add("xdel", -3, kWrite | kFast, xdel_command);
  add("xsetid", -3, kWrite | kFast, xsetid_command);
  // Keys follow the STREAMS keyword: no fixed key positions.
  add("xread", -4, kReadOnly | kBlocking, xread_command, 0, 0);
  add("xreadgroup", -7, kWrite | kBlocking, xreadgroup_command, 0, 0);
  add("xgroup", -2, kWrite, xgroup_command, 2, 2);
  add("xack", -4, kWrite | kFast, xack_command);
  add("xpending", -3, kReadOnly, xpending_command);
  add("xclaim", -6, kWrite | kFast, xclaim_command);
  add("xautoclaim", -6, kWrite | kFast, xautoclaim_command);
  add("xinfo", -2, kReadOnly, xinfo_command, 2, 2);
}

}  // namespace redlab::fake
