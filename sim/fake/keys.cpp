// Keyspace commands (Redis db.c and expire.c): DEL UNLINK EXISTS TYPE KEYS, the EXPIRE
// family with NX/XX/GT/LT, PERSIST, TTL/PTTL. Expiry times are absolute server unix ms; a key
// is expired when now_ms > expire_at_ms (keyIsExpired).
#include <algorithm>
#include <climits>

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
