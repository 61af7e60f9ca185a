// Hash commands (Redis t_hash.c): HSET/HMSET/HSETNX, HGET/HMGET/HGETALL/HKEYS/HVALS,
// HDEL, HLEN/HSTRLEN/HEXISTS, HINCRBY/HINCRBYFLOAT, HRANDFIELD and HSCAN.
//
// HashValue keeps fields in insertion order, which is what a listpack-encoded hash (at most
// hash-max-listpack-entries fields of at most hash-max-listpack-value bytes) replies in Redis
// 7.0. Bigger hashes are hash tables in Redis and list in an arbitrary order; ours stays
// insertion-ordered, one valid order and a deterministic one.
//
// Like Redis, a hash never exists empty: the command that removes its last field deletes
// the key. Argument errors are answered before the key is looked up wherever Redis does so
// (HINCRBY parses the increment first), so that the error a client sees is the same one.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/prng.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

// The hash at key, or nullptr when missing. WRONGTYPE is answered and flagged.
HashValue* lookup_hash(Ctx& c, const std::string& key, bool& wrong_type) {
  return c.lookup_typed<HashValue>(key, wrong_type);
}

// hashTypeLookupWriteOrCreate: the hash at key, created empty when missing. nullptr means
// WRONGTYPE was answered. A created hash must receive a field before the command returns.
HashValue* lookup_or_create_hash(Ctx& c, const std::string& key) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, key, wrong_type);
  if (wrong_type) return nullptr;
  if (h) return h;
  Entry& e = c.set_key(key, Value{HashValue{}});
  return std::get_if<HashValue>(&e.value.data);
}

// Deletes the key when its hash has no field left (Redis never keeps empty collections).
void delete_if_empty(Ctx& c, const std::string& key, const HashValue& h) {
  if (h.size() == 0) c.delete_key(key);
}

// string2ld: strtold on the whole string; no leading blank, no NaN, no overflow.
bool parse_long_double(const std::string& s, long double& out) {
  constexpr size_t kLongDoubleCharsMax = 5 * 1024;  // MAX_LONG_DOUBLE_CHARS
  if (s.empty() || s.size() >= kLongDoubleCharsMax) return false;
  if (s.find('\0') != std::string::npos) return false;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0.0L)) return false;
  if (errno == EINVAL || std::isnan(v)) return false;
  out = v;
  return true;
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

// HSET key field value [field value ...] and the deprecated HMSET (which answers OK).
void hset_generic(Ctx& c, bool reply_created) {
  if (c.argc() % 2 == 1) return c.reply_arity_error(c.cmd.name);
  const std::string& key = c.arg(1);
  HashValue* h = lookup_or_create_hash(c, key);
  if (!h) return;
  int64_t created = 0;
  for (size_t j = 2; j + 1 < c.argc(); j += 2) created += h->set(c.arg(j), c.arg(j + 1)) ? 1 : 0;
  // Redis signals even when every field already held the same value.
  c.signal_modified(key);
  if (reply_created) {
    c.reply_int(created);
  } else {
    c.reply_ok();
  }
}

void hset_command(Ctx& c) {
  hset_generic(c, true);
}
void hmset_command(Ctx& c) {
  hset_generic(c, false);
}

void hsetnx_command(Ctx& c) {
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, key, wrong_type);
  if (wrong_type) return;
  if (h && h->get(c.arg(2))) return c.reply_int(0);
  h = lookup_or_create_hash(c, key);
  REDLAB_ASSERT(h && "the key was checked above");
  h->set(c.arg(2), c.arg(3));
  c.signal_modified(key);
  c.reply_int(1);
}

void hdel_command(Ctx& c) {
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, key, wrong_type);
  if (wrong_type) return;
  if (!h) return c.reply_int(0);
  int64_t deleted = 0;
  for (size_t j = 2; j < c.argc(); j++) {
    if (h->erase(c.arg(j))) deleted++;
    if (h->size() == 0) break;  // hdelCommand stops once the hash is gone
  }
  if (deleted > 0) {
    delete_if_empty(c, key, *h);
    c.signal_modified(key);
  }
  c.reply_int(deleted);
}

void hincrby_command(Ctx& c) {
  int64_t incr;
  if (!c.int_arg(3, incr)) return;
  const std::string& key = c.arg(1);
  HashValue* h = lookup_or_create_hash(c, key);
  if (!h) return;
  int64_t value = 0;
  if (const std::string* old = h->get(c.arg(2))) {
    auto v = parse_int64(*old);
    if (!v) return c.reply_error("ERR hash value is not an integer");
    value = *v;
  }
  if ((incr < 0 && value < 0 && incr < (INT64_MIN - value)) ||
      (incr > 0 && value > 0 && incr > (INT64_MAX - value))) {
    delete_if_empty(c, key, *h);
    return c.reply_error(err::kOverflow);
  }
  value += incr;
  h->set(c.arg(2), std::to_string(value));
  c.signal_modified(key);
  c.reply_int(value);
}

void hincrbyfloat_command(Ctx& c) {
  long double incr;
  if (!parse_long_double(c.arg(3), incr)) return c.reply_error(err::kNotFloat);
  if (std::isnan(incr) || std::isinf(incr)) return c.reply_error("ERR value is NaN or Infinity");
  const std::string& key = c.arg(1);
  HashValue* h = lookup_or_create_hash(c, key);
  if (!h) return;
  long double value = 0;
  if (const std::string* old = h->get(c.arg(2))) {
    if (!parse_long_double(*old, value)) return c.reply_error("ERR hash value is not a float");
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    delete_if_empty(c, key, *h);
    return c.reply_error("ERR increment would produce NaN or Infinity");
  }
  std::string text = format_long_double(value);
  h->set(c.arg(2), text);
  c.signal_modified(key);
  c.reply_bulk(text);
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

void hget_command(Ctx& c) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  const std::string* v = h ? h->get(c.arg(2)) : nullptr;
  if (!v) return c.reply_nil();
  c.reply_bulk(*v);
}

void hmget_command(Ctx& c) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  Reply out = Reply::array();
  out.elements.reserve(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    const std::string* v = h ? h->get(c.arg(j)) : nullptr;
    out.elements.push_back(v ? Reply::bulk(*v) : Reply::nil());
  }
  c.reply(std::move(out));
}

void hlen_command(Ctx& c) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(h ? static_cast<int64_t>(h->size()) : 0);
}

void hstrlen_command(Ctx& c) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  const std::string* v = h ? h->get(c.arg(2)) : nullptr;
  c.reply_int(v ? static_cast<int64_t>(v->size()) : 0);
}

void hexists_command(Ctx& c) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(h && h->get(c.arg(2)) ? 1 : 0);
}

// genericHgetallCommand: HKEYS, HVALS and HGETALL, in field order.
void hgetall_generic(Ctx& c, bool keys, bool values) {
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  Reply out = Reply::array();
  if (h) {
    out.elements.reserve(h->size() * ((keys && values) ? 2 : 1));
    for (const auto& [field, value] : h->entries()) {
      if (keys) out.elements.push_back(Reply::bulk(field));
      if (values) out.elements.push_back(Reply::bulk(value));
    }
  }
  c.reply(std::move(out));
}

void hkeys_command(Ctx& c) {
  hgetall_generic(c, true, false);
}
void hvals_command(Ctx& c) {
  hgetall_generic(c, false, true);
}
void hgetall_command(Ctx& c) {
  hgetall_generic(c, true, true);
}

// HRANDFIELD key [count [WITHVALUES]]. Random picks come from the simulator's PRNG seeded
// from the key and the server's command counter (deterministic runs). Where Redis' answer
// does not depend on chance (a count covering the hash: the whole hash in field order; a
// hash of one field) ours is the same.
void hrandfield_command(Ctx& c) {
  // HRANDFIELD with a negative count: the most fields one reply may hold (Redis streams
  // them; we build the reply in memory).
  constexpr uint64_t kRandomRepliesMax = 1 << 20;
  const std::string& key = c.arg(1);
  bool with_count = c.argc() >= 3;
  bool with_values = false;
  int64_t count = 1;
  if (with_count) {
    auto v = parse_int64(c.arg(2));
    if (!v) return c.reply_error(err::kNotInteger);
    if (*v < -INT64_MAX) {
      return c.reply_error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    }
    count = *v;
    if (c.argc() > 4 || (c.argc() == 4 && !equals_nocase(c.arg(3), "withvalues")))
      return c.reply_error(err::kSyntax);
    with_values = c.argc() == 4;
    if (with_values && (count < -INT64_MAX / 2 || count > INT64_MAX / 2))
      return c.reply_error("ERR value is out of range");
  }
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, key, wrong_type);
  if (wrong_type) return;
  if (!h) return c.reply(with_count ? Reply::array() : Reply::nil());
  Prng rng = c.random_source(key);
  const auto& entries = h->entries();
  auto pick = [&]() -> const std::pair<std::string, std::string>& {
    return entries[static_cast<size_t>(rng.uniform(entries.size()))];
  };
  if (!with_count) return c.reply_bulk(pick().first);
  Reply out = Reply::array();
  auto emit = [&](const std::pair<std::string, std::string>& e) {
    out.elements.push_back(Reply::bulk(e.first));
    if (with_values) out.elements.push_back(Reply::bulk(e.second));
  };
  bool unique = count >= 0;
  uint64_t wanted = unique ? static_cast<uint64_t>(count) : 0 - static_cast<uint64_t>(count);
  if (wanted == 0) return c.reply(std::move(out));
  if (!unique || wanted == 1) {
    if (wanted > kRandomRepliesMax) wanted = kRandomRepliesMax;
    for (uint64_t i = 0; i < wanted; i++) emit(pick());
  } else if (wanted >= entries.size()) {
    for (const auto& e : entries) emit(e);
  } else {
    // Distinct fields: a partial Fisher-Yates shuffle of the indexes.
    std::vector<size_t> order(entries.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    for (size_t i = 0; i < wanted; i++) {
      size_t j = i + static_cast<size_t>(rng.uniform(order.size() - i));
      std::swap(order[i], order[j]);
      emit(entries[order[i]]);
    }
  }
  c.reply(std::move(out));
}

// HSCAN key cursor [MATCH pattern] [COUNT count]. A listpack hash is returned whole in one
// page with cursor 0 whatever the cursor and COUNT say; we do that for every hash.
void hscan_command(Ctx& c) {
  if (!c.scan_cursor_arg()) return;
  bool wrong_type = false;
  HashValue* h = lookup_hash(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!h) return c.reply(Reply::array({Reply::bulk("0"), Reply::array()}));
  const std::string* pattern = nullptr;
  if (!c.scan_options(pattern)) return;
  Reply items = Reply::array();
  for (const auto& [field, value] : h->entries()) {
    if (pattern && !glob_match(*pattern, field)) continue;
    items.elements.push_back(Reply::bulk(field));
    items.elements.push_back(Reply::bulk(value));
  }
  c.reply(Reply::array({Reply::bulk("0"), std::move(items)}));
}

}  // namespace

void register_hash_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h) {
    t[name] = CommandSpec{name, arity, flags, h, 1, 1, 1};
  };
  add("hset", -4, kWrite | kFast, hset_command);
  add("hmset", -4, kWrite | kFast, hmset_command);
  add("hsetnx", 4, kWrite | kFast, hsetnx_command);
  add("hdel", -3, kWrite | kFast, hdel_command);
  add("hincrby", 4, kWrite | kFast, hincrby_command);
  add("hincrbyfloat", 4, kWrite | kFast, hincrbyfloat_command);
  add("hget", 3, kReadOnly | kFast, hget_command);
  add("hmget", -3, kReadOnly | kFast, hmget_command);
  add("hlen", 2, kReadOnly | kFast, hlen_command);
  add("hstrlen", 3, kReadOnly | kFast, hstrlen_command);
  add("hexists", 3, kReadOnly | kFast, hexists_command);
  add("hkeys", 2, kReadOnly, hkeys_command);
  add("hvals", 2, kReadOnly, hvals_command);
  add("hgetall", 2, kReadOnly, hgetall_command);
  add("hrandfield", -2, kReadOnly, hrandfield_command);
  add("hscan", -3, kReadOnly, hscan_command);
}

}  // namespace redlab::fake
