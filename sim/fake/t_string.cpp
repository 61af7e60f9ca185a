// String commands (Redis t_string.c): GET SET and its variants, counters, MGET/MSET, APPEND,
// SETRANGE.
// SET's option parsing follows parseExtendedStringArgumentsOrReply exactly, including which
// option combinations are a syntax error and the order in which errors are detected.
#include <charconv>
#include <climits>
#include <cmath>

#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

constexpr int64_t kStringBytesMax = 512LL * 1024 * 1024;  // proto-max-bulk-len

enum SetFlag : uint32_t {
  kNx = 1,
  kXx = 2,
  kGet = 4,
  kKeepTtl = 8,
  kEx = 16,
  kPx = 32,
  kExAt = 64,
  kPxAt = 128,
};

bool is_opt(const std::string& s, std::string_view name) {
  return equals_nocase(s, name);
}

void reply_invalid_expire(Ctx& c) {
  c.reply_error("ERR invalid expire time in '" + c.cmd.name + "' command");
}

// getExpireMillisecondsOrReply: the absolute expiry in ms, or answers the error.
bool expire_ms_or_reply(Ctx& c, const std::string& arg, uint32_t flags, int64_t& out_ms) {
  auto v = parse_int64(arg);
  if (!v) {
    c.reply_error(err::kNotInteger);
    return false;
  }
  int64_t ms = *v;
  bool seconds = flags & (kEx | kExAt);
  if (ms <= 0 || (seconds && ms > LLONG_MAX / 1000)) {
    reply_invalid_expire(c);
    return false;
  }
  if (seconds) ms *= 1000;
  if (flags & (kEx | kPx)) {
    if (ms > LLONG_MAX - c.now_ms) {
      reply_invalid_expire(c);
      return false;
    }
    ms += c.now_ms;
  }
  if (ms <= 0) {
    reply_invalid_expire(c);
    return false;
  }
  out_ms = ms;
  return true;
}

// getGenericCommand: replies the value, nil, or WRONGTYPE (then returns false).
bool get_generic(Ctx& c, const std::string& key) {
  Entry* e = c.lookup_read(key);
  if (!e) {
    c.reply_nil();
    return true;
  }
  const std::string* s = std::get_if<std::string>(&e->value.data);
  if (!s) {
    c.reply_error(err::kWrongType);
    return false;
  }
  c.reply_bulk(*s);
  return true;
}

// The replies SET's variants give: OK/nil for SET, SETEX, PSETEX; 1/0 for SETNX.
enum class SetReplies { OkNil, OneZero };

void set_generic(Ctx& c, uint32_t flags, const std::string& key, const std::string& value,
                 const std::string* expire_arg, SetReplies replies) {
  int64_t expire_ms = -1;
  if (expire_arg && !expire_ms_or_reply(c, *expire_arg, flags, expire_ms)) return;
  if (flags & kGet) {
    if (!get_generic(c, key)) return;
  }
  // One lookup serves the NX/XX test and the write (SET is the hottest write).
  Entry* existing = c.lookup_write(key);
  bool found = existing != nullptr;
  if (((flags & kNx) && found) || ((flags & kXx) && !found)) {
    if (flags & kGet) return;
    if (replies == SetReplies::OkNil) return c.reply_nil();
    return c.reply_int(0);
  }
  if (existing && existing->value.type() == ValueType::String) {
    std::get<std::string>(existing->value.data).assign(value);
    if (!(flags & kKeepTtl) && existing->expire_at_ms >= 0) c.remove_expire(key);
  } else {
    c.set_key(key, Value{value}, flags & kKeepTtl);
  }
  c.signal_modified(key);
  if (expire_ms >= 0) c.set_expire(key, expire_ms);
  if (flags & kGet) return;
  if (replies == SetReplies::OkNil) return c.reply_ok();
  c.reply_int(1);
}

void get_command(Ctx& c) {
  get_generic(c, c.arg(1));
}

void set_command(Ctx& c) {
  uint32_t flags = 0;
  const std::string* expire = nullptr;
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    const std::string* next = j + 1 < c.argc() ? &c.arg(j + 1) : nullptr;
    uint32_t ttl_flags = kEx | kPx | kExAt | kPxAt;
    if (is_opt(opt, "nx") && !(flags & kXx)) {
      flags |= kNx;
    } else if (is_opt(opt, "xx") && !(flags & kNx)) {
      flags |= kXx;
    } else if (is_opt(opt, "get")) {
      flags |= kGet;
    } else if (is_opt(opt, "keepttl") && !(flags & ttl_flags)) {
      flags |= kKeepTtl;
    } else if (is_opt(opt, "ex") && !(flags & (kKeepTtl | kExAt | kPx | kPxAt)) && next) {
      flags |= kEx;
      expire = next;
      j++;
    } else if (is_opt(opt, "px") && !(flags & (kKeepTtl | kEx | kExAt | kPxAt)) && next) {
      flags |= kPx;
      expire = next;
      j++;
    } else if (is_opt(opt, "exat") && !(flags & (kKeepTtl | kEx | kPx | kPxAt)) && next) {
      flags |= kExAt;
      expire = next;
      j++;
    } else if (is_opt(opt, "pxat") && !(flags & (kKeepTtl | kEx | kExAt | kPx)) && next) {
      flags |= kPxAt;
      expire = next;
      j++;
    } else {
      c.reply_error(err::kSyntax);
      return;
    }
  }
  set_generic(c, flags, c.arg(1), c.arg(2), expire, SetReplies::OkNil);
}

void setnx_command(Ctx& c) {
  set_generic(c, kNx, c.arg(1), c.arg(2), nullptr, SetReplies::OneZero);
}

void setex_command(Ctx& c) {
  set_generic(c, kEx, c.arg(1), c.arg(3), &c.arg(2), SetReplies::OkNil);
}

void psetex_command(Ctx& c) {
  set_generic(c, kPx, c.arg(1), c.arg(3), &c.arg(2), SetReplies::OkNil);
}

void getset_command(Ctx& c) {
  if (!get_generic(c, c.arg(1))) return;
  c.set_key(c.arg(1), Value{c.arg(2)});
  c.signal_modified(c.arg(1));
}

void getdel_command(Ctx& c) {
  if (!get_generic(c, c.arg(1))) return;
  if (c.delete_key(c.arg(1))) c.signal_modified(c.arg(1));
}

void getex_command(Ctx& c) {
  // GETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST]
  uint32_t flags = 0;
  bool persist = false;
  const std::string* expire = nullptr;
  for (size_t j = 2; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    const std::string* next = j + 1 < c.argc() ? &c.arg(j + 1) : nullptr;
    uint32_t ttl = kEx | kPx | kExAt | kPxAt;
    if (is_opt(opt, "persist") && !(flags & ttl) && !persist) {
      persist = true;
    } else if (is_opt(opt, "ex") && !persist && !(flags & (kExAt | kPx | kPxAt)) && next) {
      flags |= kEx, expire = next, j++;
    } else if (is_opt(opt, "px") && !persist && !(flags & (kEx | kExAt | kPxAt)) && next) {
      flags |= kPx, expire = next, j++;
    } else if (is_opt(opt, "exat") && !persist && !(flags & (kEx | kPx | kPxAt)) && next) {
      flags |= kExAt, expire = next, j++;
    } else if (is_opt(opt, "pxat") && !persist && !(flags & (kEx | kExAt | kPx)) && next) {
      flags |= kPxAt, expire = next, j++;
    } else {
      c.reply_error(err::kSyntax);
      return;
    }
  }
  int64_t expire_ms = -1;
  if (expire && !expire_ms_or_reply(c, *expire, flags, expire_ms)) return;
  Entry* e = c.lookup_read(c.arg(1));
  if (!e) return c.reply_nil();
  const std::string* s = std::get_if<std::string>(&e->value.data);
  if (!s) return c.reply_error(err::kWrongType);
  c.reply_bulk(*s);
  if (expire_ms >= 0) {
    if (expire_ms <= c.now_ms) {
      c.delete_key(c.arg(1));
    } else {
      c.set_expire(c.arg(1), expire_ms);
    }
    c.signal_modified(c.arg(1));
  } else if (persist) {
    if (c.remove_expire(c.arg(1))) c.signal_modified(c.arg(1));
  }
}

void mget_command(Ctx& c) {
  Reply out = Reply::array();
  out.elements.reserve(c.argc() - 1);
  for (size_t j = 1; j < c.argc(); j++) {
    Entry* e = c.lookup_read(c.arg(j));
    const std::string* s = e ? std::get_if<std::string>(&e->value.data) : nullptr;
    out.elements.push_back(s ? Reply::bulk(*s) : Reply::nil());
  }
  c.reply(std::move(out));
}

void mset_generic(Ctx& c, bool nx) {
  if (c.argc() % 2 == 0) {
    c.reply_arity_error(c.cmd.name);
    return;
  }
  if (nx) {
    for (size_t j = 1; j < c.argc(); j += 2) {
      if (c.lookup_write(c.arg(j))) {
        c.reply_int(0);
        return;
      }
    }
  }
  for (size_t j = 1; j < c.argc(); j += 2) {
    c.set_key(c.arg(j), Value{c.arg(j + 1)});
    c.signal_modified(c.arg(j));
  }
  if (nx) {
    c.reply_int(1);
  } else {
    c.reply_ok();
  }
}

void mset_command(Ctx& c) {
  mset_generic(c, false);
}
void msetnx_command(Ctx& c) {
  mset_generic(c, true);
}

void incr_decr(Ctx& c, int64_t incr) {
  const std::string& key = c.arg(1);
  Entry* e = c.lookup_write(key);
  int64_t value = 0;
  if (e) {
    const std::string* s = std::get_if<std::string>(&e->value.data);
    if (!s) return c.reply_error(err::kWrongType);
    auto v = parse_int64(*s);
    if (!v) return c.reply_error(err::kNotInteger);
    value = *v;
  }
  if ((incr < 0 && value < 0 && incr < (LLONG_MIN - value)) ||
      (incr > 0 && value > 0 && incr > (LLONG_MAX - value))) {
    return c.reply_error(err::kOverflow);
  }
  value += incr;
  if (e) {
    // In place (the value is a string, checked above): no temporary string to move in.
    char buf[24];
    char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    std::get<std::string>(e->value.data).assign(buf, static_cast<size_t>(end - buf));
  } else {
    c.set_key(key, Value{std::to_string(value)});
  }
  c.signal_modified(key);
  c.reply_int(value);
}

void incr_command(Ctx& c) {
  incr_decr(c, 1);
}
void decr_command(Ctx& c) {
  incr_decr(c, -1);
}

void incrby_command(Ctx& c) {
  int64_t incr;
  if (!c.int_arg(2, incr)) return;
  incr_decr(c, incr);
}

void decrby_command(Ctx& c) {
  int64_t incr;
  if (!c.int_arg(2, incr)) return;
  if (incr == LLONG_MIN) return c.reply_error("ERR decrement would overflow");
  incr_decr(c, -incr);
}

void incrbyfloat_command(Ctx& c) {
  const std::string& key = c.arg(1);
  Entry* e = c.lookup_write(key);
  long double value = 0;
  if (e) {
    const std::string* s = std::get_if<std::string>(&e->value.data);
    if (!s) return c.reply_error(err::kWrongType);
    auto v = parse_long_double(*s);
    if (!v) return c.reply_error(err::kNotFloat);
    value = *v;
  }
  auto incr = parse_long_double(c.arg(2));
  if (!incr) return c.reply_error(err::kNotFloat);
  value += *incr;
  if (std::isnan(value) || std::isinf(value))
    return c.reply_error("ERR increment would produce NaN or Infinity");
  std::string text = format_long_double(value);
  if (e) {
    e->value.data = text;
  } else {
    c.set_key(key, Value{text});
  }
  c.signal_modified(key);
  c.reply_bulk(text);
}

void append_command(Ctx& c) {
  const std::string& key = c.arg(1);
  Entry* e = c.lookup_write(key);
  size_t len;
  if (!e) {
    c.set_key(key, Value{c.arg(2)});
    len = c.arg(2).size();
  } else {
    std::string* s = std::get_if<std::string>(&e->value.data);
    if (!s) return c.reply_error(err::kWrongType);
    if (static_cast<int64_t>(s->size() + c.arg(2).size()) > kStringBytesMax)
      return c.reply_error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    s->append(c.arg(2));
    len = s->size();
  }
  c.signal_modified(key);
  c.reply_int(static_cast<int64_t>(len));
}

// setrangeCommand: zero-padded as needed; an empty value changes nothing (and creates nothing).
void setrange_command(Ctx& c) {
  int64_t offset = 0;
  if (!c.int_arg(2, offset)) return;
  if (offset < 0) return c.reply_error("ERR offset is out of range");
  const std::string& key = c.arg(1);
  const std::string& value = c.arg(3);
  // checkStringLength: offset + the value's length must fit proto-max-bulk-len.
  auto too_long = [&] {
    if (offset <= kStringBytesMax - static_cast<int64_t>(value.size())) return false;
    c.reply_error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    return true;
  };
  const auto end = static_cast<size_t>(offset) + value.size();
  Entry* e = c.lookup_write(key);
  if (!e) {
    if (value.empty()) return c.reply_int(0);
    if (too_long()) return;
    std::string s(end, '\0');
    s.replace(static_cast<size_t>(offset), value.size(), value);
    c.set_key(key, Value{std::move(s)});
    c.signal_modified(key);
    return c.reply_int(static_cast<int64_t>(end));
  }
  std::string* s = std::get_if<std::string>(&e->value.data);
  if (!s) return c.reply_error(err::kWrongType);
  if (value.empty()) return c.reply_int(static_cast<int64_t>(s->size()));
  if (too_long()) return;
  if (s->size() < end) s->resize(end, '\0');
  s->replace(static_cast<size_t>(offset), value.size(), value);
  c.signal_modified(key);
  c.reply_int(static_cast<int64_t>(s->size()));
}

void strlen_command(Ctx& c) {
  Entry* e = c.lookup_read(c.arg(1));
  if (!e) return c.reply_int(0);
  const std::string* s = std::get_if<std::string>(&e->value.data);
  if (!s) return c.reply_error(err::kWrongType);
  c.reply_int(static_cast<int64_t>(s->size()));
}

void getrange_command(Ctx& c) {
  int64_t start, end;
  if (!c.int_arg(2, start) || !c.int_arg(3, end)) return;
  Entry* e = c.lookup_read(c.arg(1));
  if (!e) return c.reply_bulk("");
  const std::string* s = std::get_if<std::string>(&e->value.data);
  if (!s) return c.reply_error(err::kWrongType);
  int64_t len = static_cast<int64_t>(s->size());
  // getrangeCommand: negative start and end both -> empty when start > end.
  if (start < 0 && end < 0 && start > end) return c.reply_bulk("");
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return c.reply_bulk("");
  c.reply_bulk(std::string_view(*s).substr(static_cast<size_t>(start),
                                           static_cast<size_t>(end - start + 1)));
}

}  // namespace

void register_string_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h) {
    t[name] = CommandSpec{name, arity, flags, h, 1, 1, 1};
  };
  add("get", 2, kReadOnly | kFast, get_command);
  add("set", -3, kWrite, set_command);
  add("setnx", 3, kWrite | kFast, setnx_command);
  add("setex", 4, kWrite, setex_command);
  add("psetex", 4, kWrite, psetex_command);
  add("getset", 3, kWrite | kFast, getset_command);
  add("getdel", 2, kWrite | kFast, getdel_command);
  add("getex", -2, kWrite | kFast, getex_command);
  add("mget", -2, kReadOnly | kFast, mget_command);
  t["mget"].last_key = -1;
  add("mset", -3, kWrite, mset_command);
  t["mset"].last_key = -1, t["mset"].key_step = 2;
  add("msetnx", -3, kWrite, msetnx_command);
  t["msetnx"].last_key = -1, t["msetnx"].key_step = 2;
  add("incr", 2, kWrite | kFast, incr_command);
  add("decr", 2, kWrite | kFast, decr_command);
  add("incrby", 3, kWrite | kFast, incrby_command);
  add("decrby", 3, kWrite | kFast, decrby_command);
  add("incrbyfloat", 3, kWrite | kFast, incrbyfloat_command);
  add("append", 3, kWrite, append_command);
  add("setrange", 4, kWrite, setrange_command);
  add("strlen", 2, kReadOnly | kFast, strlen_command);
  add("getrange", 4, kReadOnly, getrange_command);
}

}  // namespace redlab::fake
