// The values a key can hold in the fake Redis. Containers are chosen for deterministic
// iteration: what a reply lists never depends on hash-table order (see DESIGN: no unordered
// iteration leaking into output). Where real Redis' order is itself arbitrary (big sets,
// KEYS), ours is sorted; where it is defined (listpack hashes keep insertion order, intsets
// are sorted), ours is the same.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "sim/fake/stream_types.h"

namespace redlab::fake {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Field order is insertion order, like a listpack-encoded hash in Redis 7.0.
class HashValue {
 public:
  size_t size() const { return entries_.size(); }
  const std::string* get(std::string_view field) const;
  // Returns true when the field is new.
  bool set(std::string_view field, std::string value);
  bool erase(std::string_view field);
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> index_;
};

// Members are kept sorted; SMEMBERS lists integers numerically when all members are
// integers (an intset in Redis), otherwise in byte order.
using SetValue = std::set<std::string, std::less<>>;

struct ZSetValue {
  std::set<std::pair<double, std::string>> by_score;  // score, then member bytes
  std::unordered_map<std::string, double, StringHash, std::equal_to<>> scores;
};

using ListValue = std::deque<std::string>;

enum class ValueType : uint8_t { String, List, Hash, Set, ZSet, Stream };

struct Value {
  std::variant<std::string, ListValue, HashValue, SetValue, ZSetValue, std::shared_ptr<StreamValue>>
      data;
  ValueType type() const { return static_cast<ValueType>(data.index()); }
};

struct Entry {
  Value value;
  int64_t expire_at_ms = -1;  // server (unix) time in ms; -1 = persistent
};

}  // namespace redlab::fake
