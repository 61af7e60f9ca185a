// Stream values (owned by t_stream.cpp).
//
// A Redis stream is a radix tree of listpack "nodes", each holding up to
// stream-node-max-entries entries (live ones and tombstones) and up to stream-node-max-bytes
// bytes. The node layout is not an implementation detail one can ignore: approximate
// trimming (MAXLEN ~, MINID ~) only ever drops whole nodes, XINFO STREAM reports the number
// of nodes, and a deleted entry stays behind as a tombstone that still counts towards its
// node's size. So the fake keeps the same nodes: entries in ID order, tombstones flagged, and
// each node's exact listpack size in bytes (computed the way listpack.c encodes elements).
//
// Consumer groups hold a pending entries list (PEL) of delivered but unacknowledged IDs;
// every PEL entry (a NACK) is owned by one consumer, which also indexes it in its own PEL.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace redlab::fake {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;

  static constexpr StreamId min() { return {0, 0}; }
  static constexpr StreamId max() { return {UINT64_MAX, UINT64_MAX}; }
  bool is_zero() const { return ms == 0 && seq == 0; }
  std::string str() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

using StreamFields = std::vector<std::pair<std::string, std::string>>;

// One entry of a node: live or a tombstone (XDEL and exact trimming only flag entries).
struct StreamItem {
  StreamId id;
  bool deleted = false;
  StreamFields fields;
};

// A listpack node of the radix tree, keyed in StreamValue::nodes by its master ID (the ID of
// the entry that created it).
struct StreamNode {
  std::vector<std::string> master_fields;  // field names of the first entry
  int64_t live = 0;                        // entries not deleted
  int64_t deleted = 0;                     // tombstones
  int64_t items_bytes = 0;                 // listpack bytes of all entries (not the header)
  std::vector<StreamItem> items;           // ID order, tombstones included
};

// A pending entry: delivered to `consumer`, not acknowledged yet.
struct StreamNack {
  int64_t delivery_time_ms = 0;  // server unix ms of the last delivery
  int64_t delivery_count = 0;
  std::string consumer;
};

struct StreamConsumer {
  int64_t seen_time_ms = 0;  // last time the consumer read or claimed
  std::set<StreamId> pel;    // IDs it owns in the group PEL
};

struct StreamGroup {
  StreamId last_id;           // last delivered ID
  int64_t entries_read = -1;  // logical read counter; -1 = unknown (SCG_INVALID_ENTRIES_READ)
  std::map<StreamId, StreamNack> pel;
  // Byte order, like the rax Redis keeps them in (std::string compares as unsigned bytes).
  std::map<std::string, StreamConsumer, std::less<>> consumers;
};

struct StreamValue {
  std::map<StreamId, StreamNode> nodes;  // by master ID
  uint64_t length = 0;                   // live entries
  StreamId last_id;                      // last ID ever generated (XSETID can move it)
  StreamId first_id;                     // first live entry, 0-0 when empty
  StreamId max_deleted_id;               // greatest ID ever removed by XDEL
  uint64_t entries_added = 0;            // entries ever added (XSETID can set it)
  std::map<std::string, StreamGroup, std::less<>> groups;  // byte order
};

}  // namespace redlab::fake
