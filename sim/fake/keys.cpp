// Keyspace commands (Redis db.c and expire.c): DEL UNLINK EXISTS TYPE KEYS, RENAME RENAMENX
// MOVE COPY SWAPDB, the EXPIRE family with NX/XX/GT/LT, PERSIST, TTL/PTTL. Expiry times are
// absolute server unix ms; a key is expired when now_ms > expire_at_ms (keyIsExpired).
//
// MOVE and COPY ... DB write into another database through the same Ctx calls as every other
// write (so WATCH, blocked clients and the server's key events see them): the client's
// database is switched for the duration of those calls (DbScope).
#include <algorithm>
#include <climits>
#include <memory>

#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

void del_command(Ctx& c) {
  int64_t deleted = 0;
  for (size_t j = 1; j < c.argc(); j++) {
    if (c.lookup_write(c.arg(j)) && c.delete_key(c.arg(j))) {
      c.signal_modified(c.arg(j));
      deleted++;
    }
  }
  c.reply_int(deleted);
}

void exists_command(Ctx& c) {
  int64_t count = 0;
  for (size_t j = 1; j < c.argc(); j++)
    if (c.lookup_read(c.arg(j))) count++;
  c.reply_int(count);
}

void type_command(Ctx& c) {
  Entry* e = c.lookup_read(c.arg(1));
  c.reply(Reply::status(e ? type_name(e->value.type()) : "none"));
}

void keys_command(Ctx& c) {
  // Real Redis lists keys in hash-table order; sorted is one valid order and deterministic.
  std::vector<std::string> names;
  Db& d = c.db();
  const std::string& pattern = c.arg(1);
  bool all = pattern == "*";
  for (const auto& [name, entry] : d.dict) {
    if (entry.expire_at_ms >= 0 && c.now_ms > entry.expire_at_ms) continue;
    if (all || glob_match(pattern, name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  Reply out = Reply::array();
  out.elements.reserve(names.size());
  for (auto& n : names) out.elements.push_back(Reply::bulk(std::move(n)));
  c.reply(std::move(out));
}

enum ExpireFlag : int { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

// expireGenericCommand. basetime_ms is now for EXPIRE/PEXPIRE and 0 for the *AT forms.
void expire_generic(Ctx& c, int64_t basetime_ms, bool seconds) {
  int flag = 0;
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& o = c.arg(j);
    if (equals_nocase(o, "nx")) {
      flag |= kNx;
    } else if (equals_nocase(o, "xx")) {
      flag |= kXx;
    } else if (equals_nocase(o, "gt")) {
      flag |= kGt;
    } else if (equals_nocase(o, "lt")) {
      flag |= kLt;
    } else {
      return c.reply_error("ERR Unsupported option " + o);
    }
  }
  if ((flag & kNx) && (flag & ~kNx))
    return c.reply_error("ERR NX and XX, GT or LT options at the same time are not compatible");
  if ((flag & kGt) && (flag & kLt))
    return c.reply_error("ERR GT and LT options at the same time are not compatible");
  int64_t when;
  if (!c.int_arg(2, when)) return;
  auto invalid = [&] { c.reply_error("ERR invalid expire time in '" + c.cmd.name + "' command"); };
  if (seconds) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) return invalid();
    when *= 1000;
  }
  if (when > LLONG_MAX - basetime_ms) return invalid();
  when += basetime_ms;
  const std::string& key = c.arg(1);
  Entry* e = c.lookup_write(key);
  if (!e) return c.reply_int(0);
  if (flag) {
    int64_t current = e->expire_at_ms;
    if ((flag & kNx) && current != -1) return c.reply_int(0);
    if ((flag & kXx) && current == -1) return c.reply_int(0);
    if ((flag & kGt) && (when <= current || current == -1)) return c.reply_int(0);
    if ((flag & kLt) && current != -1 && when >= current) return c.reply_int(0);
  }
  if (when <= c.now_ms) {
    c.delete_key(key);
  } else {
    c.set_expire(key, when);
  }
  c.signal_modified(key);
  c.reply_int(1);
}

void expire_command(Ctx& c) {
  expire_generic(c, c.now_ms, true);
}
void pexpire_command(Ctx& c) {
  expire_generic(c, c.now_ms, false);
}
void expireat_command(Ctx& c) {
  expire_generic(c, 0, true);
}
void pexpireat_command(Ctx& c) {
  expire_generic(c, 0, false);
}

void ttl_generic(Ctx& c, bool output_ms) {
  Entry* e = c.lookup_read(c.arg(1));
  if (!e) return c.reply_int(-2);
  if (e->expire_at_ms < 0) return c.reply_int(-1);
  int64_t ttl = e->expire_at_ms - c.now_ms;
  if (ttl < 0) ttl = 0;
  c.reply_int(output_ms ? ttl : (ttl + 500) / 1000);
}

void ttl_command(Ctx& c) {
  ttl_generic(c, false);
}
void pttl_command(Ctx& c) {
  ttl_generic(c, true);
}

void expiretime_generic(Ctx& c, bool output_ms) {
  Entry* e = c.lookup_read(c.arg(1));
  if (!e) return c.reply_int(-2);
  if (e->expire_at_ms < 0) return c.reply_int(-1);
  c.reply_int(output_ms ? e->expire_at_ms : e->expire_at_ms / 1000);
}

void expiretime_command(Ctx& c) {
  expiretime_generic(c, false);
}
void pexpiretime_command(Ctx& c) {
  expiretime_generic(c, true);
}

// ---------------------------------------------------------------------------------------
// RENAME RENAMENX MOVE COPY SWAPDB
// ---------------------------------------------------------------------------------------

constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
constexpr std::string_view kDbOutOfRange = "ERR DB index is out of range";

// Runs the enclosed Ctx calls against database db_index (MOVE, COPY ... DB).
class DbScope {
 public:
  DbScope(Client& client, int db_index) : client_(client), saved_(client.db) {
    client.db = db_index;
  }
  ~DbScope() { client_.db = saved_; }
  DbScope(const DbScope&) = delete;
  DbScope& operator=(const DbScope&) = delete;

 private:
  Client& client_;
  int saved_;
};

// getIntFromObjectOrReply: an int. msg replaces both of its errors when given (SWAPDB).
bool int32_arg(Ctx& c, size_t i, int& out, std::string_view msg = {}) {
  auto v = parse_int64(c.arg(i));
  if (!v) {
    c.reply_error(msg.empty() ? err::kNotInteger : msg);
    return false;
  }
  if (*v < INT_MIN || *v > INT_MAX) {
    c.reply_error(msg.empty()
                      ? "ERR value is out of range, value must between -2147483648 and 2147483647"
                      : msg);
    return false;
  }
  out = static_cast<int>(*v);
  return true;
}

bool valid_db(const Ctx& c, int db_index) {
  return db_index >= 0 && static_cast<size_t>(db_index) < c.server.dbs().size();
}

// A value of its own (a stream is shared through a pointer: COPY copies it, groups included).
Value copy_value(const Value& v) {
  if (const auto* stream = std::get_if<std::shared_ptr<StreamValue>>(&v.data))
    return Value{std::make_shared<StreamValue>(**stream)};
  return v;
}

// renameGenericCommand. The value and its TTL go to dst; a dst that exists is replaced (and
// RENAMENX refuses). Renaming a key to itself is a no-op, but the key must exist.
void rename_generic(Ctx& c, bool nx) {
  const std::string& src = c.arg(1);
  const std::string& dst = c.arg(2);
  Entry* e = c.lookup_write(src);
  if (!e) return c.reply_error(err::kNoSuchKey);
  if (src == dst) return nx ? c.reply_int(0) : c.reply_ok();
  const int64_t expire_at_ms = e->expire_at_ms;
  const bool dst_exists = c.lookup_write(dst) != nullptr;
  if (dst_exists && nx) return c.reply_int(0);
  Value value;
  c.delete_key(src, &value);
  if (dst_exists) c.delete_key(dst);
  c.set_key(dst, std::move(value));
  if (expire_at_ms >= 0) c.set_expire(dst, expire_at_ms);
  c.signal_modified(src);
  c.signal_modified(dst);
  c.signal_key_ready(dst);  // dbAdd: a client blocked on dst may be served now
  if (nx) return c.reply_int(1);
  c.reply_ok();
}

void rename_command(Ctx& c) {
  rename_generic(c, false);
}
void renamenx_command(Ctx& c) {
  rename_generic(c, true);
}

// moveCommand: the key and its TTL go to another database, unless the key exists there.
void move_command(Ctx& c) {
  int target = 0;
  if (!int32_arg(c, 2, target)) return;
  if (!valid_db(c, target)) return c.reply_error(kDbOutOfRange);
  if (target == c.client.db) return c.reply_error(kSameObject);
  const std::string& key = c.arg(1);
  Entry* e = c.lookup_write(key);
  if (!e) return c.reply_int(0);
  const int64_t expire_at_ms = e->expire_at_ms;
  {
    DbScope in_target(c.client, target);
    if (c.lookup_write(key)) return c.reply_int(0);
  }
  Value value;
  c.delete_key(key, &value);
  c.signal_modified(key);
  {
    DbScope in_target(c.client, target);
    c.set_key(key, std::move(value));
    if (expire_at_ms >= 0) c.set_expire(key, expire_at_ms);
    c.signal_modified(key);
    c.signal_key_ready(key);
  }
  c.reply_int(1);
}

// copyCommand: COPY source destination [DB destination-db] [REPLACE]. The copy has the
// source's TTL.
void copy_command(Ctx& c) {
  int target = c.client.db;
  bool replace = false;
  for (size_t j = 3; j < c.argc(); j++) {
    const bool has_value = j + 1 < c.argc();
    if (equals_nocase(c.arg(j), "replace")) {
      replace = true;
    } else if (equals_nocase(c.arg(j), "db") && has_value) {
      if (!int32_arg(c, j + 1, target)) return;
      if (!valid_db(c, target)) return c.reply_error(kDbOutOfRange);
      j++;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  const std::string& src = c.arg(1);
  const std::string& dst = c.arg(2);
  if (target == c.client.db && src == dst) return c.reply_error(kSameObject);
  const Entry* e = c.lookup_read(src);
  if (!e) return c.reply_int(0);
  DbScope in_target(c.client, target);
  // e stays valid: the lookup below removes at most dst, another key (or another database's).
  const bool dst_exists = c.lookup_write(dst) != nullptr;
  if (dst_exists && !replace) return c.reply_int(0);
  const int64_t expire_at_ms = e->expire_at_ms;
  Value copy = copy_value(e->value);
  if (dst_exists) c.delete_key(dst);
  c.set_key(dst, std::move(copy));
  if (expire_at_ms >= 0) c.set_expire(dst, expire_at_ms);
  c.signal_modified(dst);
  c.signal_key_ready(dst);
  c.reply_int(1);
}

// swapdbCommand: the two databases trade contents; clients stay in the database they were in.
void swapdb_command(Ctx& c) {
  int a = 0, b = 0;
  if (!int32_arg(c, 1, a, "ERR invalid first DB index")) return;
  if (!int32_arg(c, 2, b, "ERR invalid second DB index")) return;
  if (!valid_db(c, a) || !valid_db(c, b)) return c.reply_error(kDbOutOfRange);
  c.server.swap_dbs(a, b);
  c.reply_ok();
}

void persist_command(Ctx& c) {
  Entry* e = c.lookup_write(c.arg(1));
  if (!e) return c.reply_int(0);
  if (!c.remove_expire(c.arg(1))) return c.reply_int(0);
  c.signal_modified(c.arg(1));
  c.reply_int(1);
}

}  // namespace

void register_key_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int last_key = 1) {
    t[name] = CommandSpec{name, arity, flags, h, 1, last_key, 1};
  };
  add("del", -2, kWrite, del_command, -1);
  add("unlink", -2, kWrite | kFast, del_command, -1);
  add("exists", -2, kReadOnly | kFast, exists_command, -1);
  add("type", 2, kReadOnly | kFast, type_command);
  add("keys", 2, kReadOnly, keys_command, 0);
  t["keys"].first_key = 0;
  add("rename", 3, kWrite, rename_command, 2);
  add("renamenx", 3, kWrite | kFast, renamenx_command, 2);
  add("move", 3, kWrite | kFast, move_command);
  add("copy", -3, kWrite, copy_command, 2);
  add("swapdb", 3, kWrite | kFast, swapdb_command, 0);
  t["swapdb"].first_key = 0;
  add("expire", -3, kWrite | kFast, expire_command);
  add("pexpire", -3, kWrite | kFast, pexpire_command);
  add("expireat", -3, kWrite | kFast, expireat_command);
  add("pexpireat", -3, kWrite | kFast, pexpireat_command);
  add("expiretime", 2, kReadOnly | kFast, expiretime_command);
  add("pexpiretime", 2, kReadOnly | kFast, pexpiretime_command);
  add("persist", 2, kWrite | kFast, persist_command);
  add("ttl", 2, kReadOnly | kFast, ttl_command);
  add("pttl", 2, kReadOnly | kFast, pttl_command);
}

}  // namespace redlab::fake
