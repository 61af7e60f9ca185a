// Set commands (Redis t_set.c): SADD SREM SMOVE, SISMEMBER SMISMEMBER SCARD SMEMBERS,
// SINTER/SUNION/SDIFF with their STORE forms, SINTERCARD, SPOP SRANDMEMBER and SSCAN.
//
// Reply order. Redis 7.0 keeps a set of integers (at most set-max-intset-entries of them) as
// an intset, sorted numerically, and lists it in that order; any other set is a hash table
// listed in an order nobody can predict. Ours lists an all-integer set numerically and any
// other set in byte order: the same answer where Redis' answer is defined, a deterministic
// one where it is not. (Redis never turns a hash-table set back into an intset; ours only
// looks at the members, so SREM of the last non-integer is where the two can part.)
//
// Results of SINTER/SUNION/SDIFF are listed in the same order: Redis builds SUNION and SDIFF
// results in a fresh set (an intset while it can be) and walks SINTER's smallest input, so an
// all-integer result comes out ascending there too.
//
// Randomness. SPOP and SRANDMEMBER pick members with the simulator's PRNG seeded from the key
// and the server's command counter (Ctx::random_source): nothing nondeterministic, so a run
// stays a pure function of its inputs. Where Redis' answer does not depend on chance (a count
// at least the set's size, a set of one member) ours is the same as Redis'.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/prng.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

constexpr size_t kIntsetEntriesMax = 512;  // set-max-intset-entries default
// SRANDMEMBER with a negative count: the most members one reply may hold.
constexpr uint64_t kRandomRepliesMax = 1 << 20;

SetValue* lookup_set(Ctx& c, const std::string& key, bool& wrong_type) {
  return c.lookup_typed<SetValue>(key, wrong_type);
}

// Members in the order Redis 7.0 lists them (see the top of the file).
std::vector<const std::string*> ordered_members(const SetValue& s) {
  std::vector<const std::string*> out;
  out.reserve(s.size());
  bool intset = s.size() <= kIntsetEntriesMax;
  std::vector<std::pair<int64_t, const std::string*>> numbers;
  if (intset) numbers.reserve(s.size());
  for (const std::string& m : s) {
    out.push_back(&m);
    if (!intset) continue;
    auto v = parse_int64(m);
    if (!v) {
      intset = false;
      continue;
    }
    numbers.emplace_back(*v, &m);
  }
  if (!intset) return out;  // std::set order is byte order
  std::sort(numbers.begin(), numbers.end());
  for (size_t i = 0; i < numbers.size(); i++) out[i] = numbers[i].second;
  return out;
}

Reply set_reply(const SetValue& s) {
  Reply out = Reply::array();
  out.elements.reserve(s.size());
  for (const std::string* m : ordered_members(s)) out.elements.push_back(Reply::bulk(*m));
  return out;
}

// Stores a SINTERSTORE/SUNIONSTORE/SDIFFSTORE result: an empty result deletes dst.
void store_result(Ctx& c, const std::string& dst, SetValue result) {
  if (result.empty()) {
    if (c.lookup_write(dst) && c.delete_key(dst)) c.signal_modified(dst);
    return c.reply_int(0);
  }
  int64_t size = static_cast<int64_t>(result.size());
  c.set_key(dst, Value{std::move(result)});
  c.signal_modified(dst);
  c.reply_int(size);
}

size_t pick(Prng& rng, size_t size) {
  return static_cast<size_t>(rng.uniform(size));
}

// Pointers to every member, in byte order: random picks index into this.
std::vector<const std::string*> member_pointers(const SetValue& s) {
  std::vector<const std::string*> out;
  out.reserve(s.size());
  for (const std::string& m : s) out.push_back(&m);
  return out;
}

// k distinct random members (a partial Fisher-Yates shuffle: O(size), not O(k * size)).
std::vector<const std::string*> sample_distinct(const SetValue& s, size_t k, Prng& rng) {
  REDLAB_ASSERT(k <= s.size() && "cannot sample more distinct members than the set has");
  std::vector<const std::string*> members = member_pointers(s);
  for (size_t i = 0; i < k; i++) std::swap(members[i], members[i + pick(rng, s.size() - i)]);
  members.resize(k);
  return members;
}

// getRangeLongFromObjectOrReply with Redis' default messages.
bool range_arg(Ctx& c, size_t i, int64_t min, int64_t max, int64_t& out,
               std::string_view msg = {}) {
  // getPositiveLongFromObjectOrReply passes its default message down for both failures.
  if (msg.empty() && min == 0 && max == INT64_MAX)
    msg = "ERR value is out of range, must be positive";
  auto v = parse_int64(c.arg(i));
  if (!v) {
    c.reply_error(msg.empty() ? err::kNotInteger : msg);
    return false;
  }
  if (*v < min || *v > max) {
    if (!msg.empty()) {
      c.reply_error(msg);
    } else {
      c.reply_error("ERR value is out of range, value must between " + std::to_string(min) +
                    " and " + std::to_string(max));
    }
    return false;
  }
  out = *v;
  return true;
}

// ---------------------------------------------------------------------------------------
// Single-set commands
// ---------------------------------------------------------------------------------------

void sadd_command(Ctx& c) {
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  SetValue* s = lookup_set(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) s = std::get_if<SetValue>(&c.set_key(key, Value{SetValue{}}).value.data);
  int64_t added = 0;
  for (size_t j = 2; j < c.argc(); j++) added += s->insert(c.arg(j)).second ? 1 : 0;
  REDLAB_ASSERT(!s->empty() && "SADD leaves at least one member");
  if (added > 0) c.signal_modified(key);
  c.reply_int(added);
}

void srem_command(Ctx& c) {
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  SetValue* s = lookup_set(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply_int(0);
  int64_t removed = 0;
  for (size_t j = 2; j < c.argc() && !s->empty(); j++) removed += s->erase(c.arg(j)) ? 1 : 0;
  if (removed > 0) {
    if (s->empty()) c.delete_key(key);
    c.signal_modified(key);
  }
  c.reply_int(removed);
}

void smove_command(Ctx& c) {
  const std::string& src_key = c.arg(1);
  const std::string& dst_key = c.arg(2);
  const std::string& member = c.arg(3);
  Entry* src_entry = c.lookup_write(src_key);
  Entry* dst_entry = c.lookup_write(dst_key);
  // A missing source answers 0 before any type check, as smoveCommand does.
  if (!src_entry) return c.reply_int(0);
  SetValue* src = std::get_if<SetValue>(&src_entry->value.data);
  if (!src || (dst_entry && !std::holds_alternative<SetValue>(dst_entry->value.data)))
    return c.reply_error(err::kWrongType);
  if (src_entry == dst_entry) return c.reply_int(src->count(member) ? 1 : 0);
  if (!src->erase(member)) return c.reply_int(0);
  if (src->empty()) c.delete_key(src_key);
  c.signal_modified(src_key);
  // dst_entry is still valid: the dict is node-based, erasing src moves nothing.
  if (!dst_entry) dst_entry = &c.set_key(dst_key, Value{SetValue{}});
  SetValue* dst = std::get_if<SetValue>(&dst_entry->value.data);
  REDLAB_ASSERT(dst && "dst type was checked above");
  if (dst->insert(member).second) c.signal_modified(dst_key);
  c.reply_int(1);
}

void sismember_command(Ctx& c) {
  bool wrong_type = false;
  SetValue* s = lookup_set(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(s && s->count(c.arg(2)) ? 1 : 0);
}

void smismember_command(Ctx& c) {
  bool wrong_type = false;
  SetValue* s = lookup_set(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  Reply out = Reply::array();
  out.elements.reserve(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++)
    out.elements.push_back(Reply::integer_reply(s && s->count(c.arg(j)) ? 1 : 0));
  c.reply(std::move(out));
}

void scard_command(Ctx& c) {
  bool wrong_type = false;
  SetValue* s = lookup_set(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(s ? static_cast<int64_t>(s->size()) : 0);
}

void smembers_command(Ctx& c) {
  bool wrong_type = false;
  SetValue* s = lookup_set(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply(s ? set_reply(*s) : Reply::array());
}

// SPOP key [count]
void spop_command(Ctx& c) {
  if (c.argc() > 3) return c.reply_error(err::kSyntax);
  const std::string& key = c.arg(1);
  int64_t count = -1;  // -1: no count, reply one bulk
  if (c.argc() == 3 && !range_arg(c, 2, 0, INT64_MAX, count)) return;
  bool wrong_type = false;
  SetValue* s = lookup_set(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply(count < 0 ? Reply::nil() : Reply::array());
  if (count == 0) return c.reply(Reply::array());
  Prng rng = c.random_source(key);
  if (count < 0 || static_cast<uint64_t>(count) < s->size()) {
    size_t pops = count < 0 ? 1 : static_cast<size_t>(count);
    Reply out = Reply::array();
    out.elements.reserve(pops);
    for (const std::string* m : sample_distinct(*s, pops, rng))
      out.elements.push_back(Reply::bulk(*m));
    for (const Reply& r : out.elements) s->erase(r.str);
    if (s->empty()) c.delete_key(key);  // SPOP without count on a set of one
    c.signal_modified(key);
    // spopCommand (no count) replies a bulk, spopWithCountCommand an array.
    return c.reply(count < 0 ? std::move(out.elements[0]) : std::move(out));
  }
  // The count covers the whole set: reply it all (in set order) and delete the key.
  Reply out = set_reply(*s);
  c.delete_key(key);
  c.signal_modified(key);
  c.reply(std::move(out));
}

// SRANDMEMBER key [count]: a negative count may repeat members.
void srandmember_command(Ctx& c) {
  if (c.argc() > 3) return c.reply_error(err::kSyntax);
  const std::string& key = c.arg(1);
  bool with_count = c.argc() == 3;
  int64_t count = 1;
  if (with_count && !range_arg(c, 2, -INT64_MAX, INT64_MAX, count)) return;
  bool wrong_type = false;
  SetValue* s = lookup_set(c, key, wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply(with_count ? Reply::array() : Reply::nil());
  Prng rng = c.random_source(key);
  std::vector<const std::string*> members = member_pointers(*s);
  if (!with_count) return c.reply_bulk(*members[pick(rng, members.size())]);
  if (count == 0) return c.reply(Reply::array());
  bool unique = count > 0;
  uint64_t wanted = unique ? static_cast<uint64_t>(count) : 0 - static_cast<uint64_t>(count);
  if (!unique || wanted == 1) {
    // Redis streams as many as asked; we build the reply in memory, so bound it.
    if (wanted > kRandomRepliesMax) wanted = kRandomRepliesMax;
    Reply out = Reply::array();
    out.elements.reserve(static_cast<size_t>(wanted));
    for (uint64_t i = 0; i < wanted; i++)
      out.elements.push_back(Reply::bulk(*members[pick(rng, members.size())]));
    return c.reply(std::move(out));
  }
  // A count covering the set replies the whole set, in set order (Redis runs SUNION on it).
  if (wanted >= s->size()) return c.reply(set_reply(*s));
  Reply out = Reply::array();
  out.elements.reserve(static_cast<size_t>(wanted));
  for (const std::string* m : sample_distinct(*s, static_cast<size_t>(wanted), rng))
    out.elements.push_back(Reply::bulk(*m));
  c.reply(std::move(out));
}

// SSCAN key cursor [MATCH pattern] [COUNT count]: an intset is returned whole in one page
// with cursor 0; we do that for every set.
void sscan_command(Ctx& c) {
  if (!c.scan_cursor_arg()) return;
  bool wrong_type = false;
  SetValue* s = lookup_set(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!s) return c.reply(Reply::array({Reply::bulk("0"), Reply::array()}));
  const std::string* pattern = nullptr;
  if (!c.scan_options(pattern)) return;
  Reply items = Reply::array();
  for (const std::string* m : ordered_members(*s)) {
    if (pattern && !glob_match(*pattern, *m)) continue;
    items.elements.push_back(Reply::bulk(*m));
  }
  c.reply(Reply::array({Reply::bulk("0"), std::move(items)}));
}

// ---------------------------------------------------------------------------------------
// Multi-set commands
// ---------------------------------------------------------------------------------------

// Looks up every key of argv[first, first + count) in order: a missing key is an empty set
// (nullptr), the first key of another type answers WRONGTYPE (then returns false).
bool lookup_sets(Ctx& c, size_t first, size_t count, std::vector<const SetValue*>& sets) {
  sets.clear();
  sets.reserve(count);
  for (size_t j = first; j < first + count; j++) {
    bool wrong_type = false;
    const SetValue* s = lookup_set(c, c.arg(j), wrong_type);
    if (wrong_type) return false;
    sets.push_back(s);
  }
  return true;
}

// The intersection of sets, stopping once it holds `limit` members (0 = no limit).
SetValue intersect(const std::vector<const SetValue*>& sets, size_t limit) {
  SetValue out;
  for (const SetValue* s : sets)
    if (!s) return out;
  REDLAB_ASSERT(!sets.empty() && "at least one key");
  // Walk the smallest set and probe the others, as sinterGenericCommand does.
  const SetValue* smallest = sets[0];
  for (const SetValue* s : sets)
    if (s->size() < smallest->size()) smallest = s;
  for (const std::string& m : *smallest) {
    bool everywhere = true;
    for (const SetValue* s : sets) {
      if (s != smallest && !s->count(m)) {
        everywhere = false;
        break;
      }
    }
    if (!everywhere) continue;
    out.insert(m);
    if (limit != 0 && out.size() >= limit) break;
  }
  return out;
}

SetValue union_or_diff(const std::vector<const SetValue*>& sets, bool diff) {
  SetValue out;
  if (diff) {
    if (!sets[0]) return out;
    out = *sets[0];
    for (size_t j = 1; j < sets.size() && !out.empty(); j++) {
      if (!sets[j]) continue;
      for (const std::string& m : *sets[j]) out.erase(m);
    }
    return out;
  }
  for (const SetValue* s : sets)
    if (s) out.insert(s->begin(), s->end());
  return out;
}

void sinter_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 1, c.argc() - 1, sets)) return;
  c.reply(set_reply(intersect(sets, 0)));
}

void sinterstore_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 2, c.argc() - 2, sets)) return;
  store_result(c, c.arg(1), intersect(sets, 0));
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void sintercard_command(Ctx& c) {
  int64_t numkeys;
  if (!range_arg(c, 1, 1, INT64_MAX, numkeys, "ERR numkeys should be greater than 0")) return;
  if (numkeys > static_cast<int64_t>(c.argc()) - 2)
    return c.reply_error("ERR Number of keys can't be greater than number of args");
  int64_t limit = 0;
  for (size_t j = 2 + static_cast<size_t>(numkeys); j < c.argc(); j++) {
    bool has_value = j + 1 < c.argc();
    if (equals_nocase(c.arg(j), "limit") && has_value) {
      j++;
      if (!range_arg(c, j, 0, INT64_MAX, limit, "ERR LIMIT can't be negative")) return;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 2, static_cast<size_t>(numkeys), sets)) return;
  c.reply_int(static_cast<int64_t>(intersect(sets, static_cast<size_t>(limit)).size()));
}

void sunion_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 1, c.argc() - 1, sets)) return;
  c.reply(set_reply(union_or_diff(sets, false)));
}

void sunionstore_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 2, c.argc() - 2, sets)) return;
  store_result(c, c.arg(1), union_or_diff(sets, false));
}

void sdiff_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 1, c.argc() - 1, sets)) return;
  c.reply(set_reply(union_or_diff(sets, true)));
}

void sdiffstore_command(Ctx& c) {
  std::vector<const SetValue*> sets;
  if (!lookup_sets(c, 2, c.argc() - 2, sets)) return;
  store_result(c, c.arg(1), union_or_diff(sets, true));
}

}  // namespace

void register_set_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int first_key = 1,
                 int last_key = 1) {
    t[name] = CommandSpec{name, arity, flags, h, first_key, last_key, first_key ? 1 : 0};
  };
  add("sadd", -3, kWrite | kFast, sadd_command);
  add("srem", -3, kWrite | kFast, srem_command);
  add("smove", 4, kWrite | kFast, smove_command, 1, 2);
  add("spop", -2, kWrite | kFast, spop_command);
  add("srandmember", -2, kReadOnly, srandmember_command);
  add("sismember", 3, kReadOnly | kFast, sismember_command);
  add("smismember", -3, kReadOnly | kFast, smismember_command);
  add("scard", 2, kReadOnly | kFast, scard_command);
  add("smembers", 2, kReadOnly, smembers_command);
  add("sscan", -3, kReadOnly, sscan_command);
  add("sinter", -2, kReadOnly, sinter_command, 1, -1);
  add("sinterstore", -3, kWrite, sinterstore_command, 1, -1);
  // Keys follow numkeys: no fixed key positions.
  add("sintercard", -3, kReadOnly, sintercard_command, 0, 0);
  add("sunion", -2, kReadOnly, sunion_command, 1, -1);
  add("sunionstore", -3, kWrite, sunionstore_command, 1, -1);
  add("sdiff", -2, kReadOnly, sdiff_command, 1, -1);
  add("sdiffstore", -3, kWrite, sdiffstore_command, 1, -1);
}

}  // namespace redlab::fake
