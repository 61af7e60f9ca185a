// Connection and server commands: PING ECHO SELECT QUIT CLIENT DBSIZE FLUSHALL FLUSHDB TIME
// INFO CONFIG SLOWLOG DEBUG. Values that only a real process has (pids, memory, addresses)
// are made up but shaped like Redis', so a parser of real output accepts ours.
#include <algorithm>
#include <optional>
#include <set>

#include "sim/core/cmdline.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

void ping_command(Ctx& c) {
  if (c.argc() > 2) return c.reply_arity_error("ping");
  if (c.client.subscriptions() > 0) {
    // RESP2 subscriber context: PING answers with a pong array.
    c.reply(Reply::array({Reply::bulk("pong"), Reply::bulk(c.argc() == 2 ? c.arg(1) : "")}));
    return;
  }
  if (c.argc() == 2) return c.reply_bulk(c.arg(1));
  c.reply(Reply::status("PONG"));
}

void echo_command(Ctx& c) {
  c.reply_bulk(c.arg(1));
}

void select_command(Ctx& c) {
  int64_t id;
  if (!c.int_arg(1, id)) return;
  if (id < 0 || id >= static_cast<int64_t>(c.server.dbs().size()))
    return c.reply_error("ERR DB index is out of range");
  c.client.db = static_cast<int>(id);
  c.reply_ok();
}

void quit_command(Ctx& c) {
  c.reply_ok();
  c.client.close_after_reply = true;
}

void dbsize_command(Ctx& c) {
  int64_t n = 0;
  for (const auto& [name, e] : c.db().dict)
    if (e.expire_at_ms < 0 || c.now_ms <= e.expire_at_ms) n++;
  c.reply_int(n);
}

bool flush_mode_or_reply(Ctx& c) {
  if (c.argc() > 2) {
    c.reply_error(err::kSyntax);
    return false;
  }
  if (c.argc() == 2 && !equals_nocase(c.arg(1), "sync") && !equals_nocase(c.arg(1), "async")) {
    c.reply_error(err::kSyntax);
    return false;
  }
  return true;
}

void flushall_command(Ctx& c) {
  if (!flush_mode_or_reply(c)) return;
  c.server.touch_all_watched_keys();
  c.server.empty_all_dbs();
  c.reply_ok();
}

void flushdb_command(Ctx& c) {
  if (!flush_mode_or_reply(c)) return;
  c.server.touch_all_watched_keys();
  c.server.empty_db(c.client.db);
  c.reply_ok();
}

void time_command(Ctx& c) {
  int64_t us = c.server.unix_us(c.now_us);
  c.reply(Reply::array(
      {Reply::bulk(std::to_string(us / 1000000)), Reply::bulk(std::to_string(us % 1000000))}));
}

std::string client_line(Ctx& c, const Client& cl) {
  int64_t age = (c.now_us - cl.created_us) / 1000000;
  int64_t idle = (c.now_us - cl.last_interaction_us) / 1000000;
  std::string flags;
  if (cl.in_multi) flags += 'x';
  if (cl.blocked) flags += 'b';
  if (cl.subscriptions()) flags += 'P';
  if (flags.empty()) flags = "N";
  return "id=" + std::to_string(cl.id) + " addr=" + cl.address +
         " laddr=10.0.0.1:6379 fd=" + std::to_string(cl.id + 5) + " name=" + cl.name +
         " age=" + std::to_string(age) + " idle=" + std::to_string(idle) + " flags=" + flags +
         " db=" + std::to_string(cl.db) + " sub=" + std::to_string(cl.channels.size()) +
         " psub=" + std::to_string(cl.patterns.size()) + " ssub=0 multi=" +
         std::to_string(cl.in_multi ? static_cast<int64_t>(cl.queued.size()) : -1) +
         " qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=" +
         std::to_string(cl.unread_bytes) + " tot-mem=22298 events=r cmd=" + cl.last_command +
         " user=default redir=-1 resp=2\n";
}

void client_command(Ctx& c) {
  const std::string& sub = c.arg(1);
  auto arity = [&](size_t want, bool at_least, const char* fullname) {
    if ((!at_least && c.argc() != want) || c.argc() < want) {
      c.reply_arity_error(fullname);
      return false;
    }
    return true;
  };
  if (equals_nocase(sub, "id")) {
    if (!arity(2, false, "client|id")) return;
    c.reply_int(c.client.id);
  } else if (equals_nocase(sub, "setname")) {
    if (!arity(3, false, "client|setname")) return;
    for (unsigned char ch : c.arg(2)) {
      if (ch < '!' || ch > '~')
        return c.reply_error(
            "ERR Client names cannot contain spaces, newlines or special characters.");
    }
    c.client.name = c.arg(2);
    c.reply_ok();
  } else if (equals_nocase(sub, "getname")) {
    if (!arity(2, false, "client|getname")) return;
    if (c.client.name.empty()) return c.reply_nil();
    c.reply_bulk(c.client.name);
  } else if (equals_nocase(sub, "list")) {
    if (!arity(2, true, "client|list")) return;
    // CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]
    std::optional<std::string> type;
    std::set<ClientId> ids;
    if (c.argc() >= 4 && equals_nocase(c.arg(2), "type") && c.argc() == 4) {
      std::string t = to_lower(c.arg(3));
      if (t != "normal" && t != "master" && t != "replica" && t != "slave" && t != "pubsub")
        return c.reply_error("ERR Unknown client type '" + c.arg(3) + "'");
      type = t;
    } else if (c.argc() >= 4 && equals_nocase(c.arg(2), "id")) {
      for (size_t j = 3; j < c.argc(); j++) {
        auto n = parse_int64(c.arg(j));
        if (!n) return c.reply_error("ERR Invalid client ID");
        ids.insert(*n);
      }
    } else if (c.argc() != 2) {
      return c.reply_error(err::kSyntax);
    }
    std::string out;
    for (const auto& [id, cl] : c.server.clients()) {
      if (!ids.empty() && !ids.count(id)) continue;
      if (type) {
        bool pubsub = cl->subscriptions() > 0;
        if ((*type == "pubsub") != pubsub || *type == "master" || *type == "replica" ||
            *type == "slave")
          continue;
      }
      out += client_line(c, *cl);
    }
    c.reply_bulk(out);
  } else if (equals_nocase(sub, "info")) {
    if (!arity(2, false, "client|info")) return;
    c.reply_bulk(client_line(c, c.client));
  } else if (equals_nocase(sub, "kill")) {
    if (!arity(3, true, "client|kill")) return;
    std::vector<ClientId> victims;
    if (c.argc() == 3) {
      // Old form: CLIENT KILL addr:port
      for (const auto& [id, cl] : c.server.clients())
        if (cl->address == c.arg(2)) victims.push_back(id);
      if (victims.empty()) return c.reply_error("ERR No such client");
      for (ClientId id : victims) c.server.close_client_later(id, "CLIENT KILL");
      return c.reply_ok();
    }
    if ((c.argc() - 2) % 2 != 0) return c.reply_error(err::kSyntax);
    std::optional<ClientId> want_id;
    std::optional<std::string> want_addr;
    bool skipme = true;
    for (size_t j = 2; j + 1 < c.argc(); j += 2) {
      const std::string& k = c.arg(j);
      const std::string& v = c.arg(j + 1);
      if (equals_nocase(k, "id")) {
        auto n = parse_int64(v);
        if (!n || *n <= 0) return c.reply_error("ERR client-id should be greater than 0");
        want_id = *n;
      } else if (equals_nocase(k, "addr")) {
        want_addr = v;
      } else if (equals_nocase(k, "skipme")) {
        if (equals_nocase(v, "yes")) {
          skipme = true;
        } else if (equals_nocase(v, "no")) {
          skipme = false;
        } else {
          return c.reply_error(err::kSyntax);
        }
      } else {
        return c.reply_error(err::kSyntax);
      }
    }
    for (const auto& [id, cl] : c.server.clients()) {
      if (want_id && id != *want_id) continue;
      if (want_addr && cl->address != *want_addr) continue;
      if (skipme && id == c.client.id) continue;
      victims.push_back(id);
    }
    for (ClientId id : victims) c.server.close_client_later(id, "CLIENT KILL");
    c.reply_int(static_cast<int64_t>(victims.size()));
  } else {
    c.reply_unknown_subcommand();
  }
}

// Parameters CONFIG knows, with how their values are checked.
enum class ConfigKind {
  Integer,
  Memory,
  String,
  ClientOutputBufferLimit,
  Enum,
  YesNo,
  Fsync,
  Save
};

struct ConfigParam {
  const char* name;
  ConfigKind kind;
  int64_t min;
};

const ConfigParam kConfigParams[] = {
    {"busy-reply-threshold", ConfigKind::Integer, 0},
    {"lua-time-limit", ConfigKind::Integer, 0},
    {"client-output-buffer-limit", ConfigKind::ClientOutputBufferLimit, 0},
    {"slowlog-log-slower-than", ConfigKind::Integer, -1},
    {"slowlog-max-len", ConfigKind::Integer, 0},
    {"maxmemory", ConfigKind::Memory, 0},
    {"maxmemory-policy", ConfigKind::Enum, 0},
    {"timeout", ConfigKind::Integer, 0},
    {"hz", ConfigKind::Integer, 0},
    {"notify-keyspace-events", ConfigKind::String, 0},
    {"stream-node-max-entries", ConfigKind::Integer, 0},
    {"hash-max-listpack-entries", ConfigKind::Integer, 0},
    // Persistence (Server::persist_*): what a restart or a crash of the machine keeps.
    {"appendonly", ConfigKind::YesNo, 0},
    {"appendfsync", ConfigKind::Fsync, 0},
    {"save", ConfigKind::Save, 0},
};

const ConfigParam* find_param(std::string_view name) {
  for (const ConfigParam& p : kConfigParams)
    if (equals_nocase(p.name, name)) return &p;
  return nullptr;
}

std::optional<int64_t> parse_memory(std::string_view s) {
  // memtoull: a number with an optional unit (b, k, kb, m, mb, g, gb), case-blind.
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
  if (i == 0) return std::nullopt;
  auto n = parse_int64(s.substr(0, i));
  if (!n) return std::nullopt;
  std::string unit = to_lower(s.substr(i));
  int64_t mul = 1;
  if (unit.empty() || unit == "b")
    mul = 1;
  else if (unit == "k")
    mul = 1000;
  else if (unit == "kb")
    mul = 1024;
  else if (unit == "m")
    mul = 1000 * 1000;
  else if (unit == "mb")
    mul = 1024 * 1024;
  else if (unit == "g")
    mul = 1000LL * 1000 * 1000;
  else if (unit == "gb")
    mul = 1024LL * 1024 * 1024;
  else
    return std::nullopt;
  return *n * mul;
}

// Checks and normalises a CONFIG SET value; returns the error suffix on failure.
std::optional<std::string> config_value(const ConfigParam& p, std::string_view v,
                                        std::string& out) {
  switch (p.kind) {
    case ConfigKind::Integer: {
      auto n = parse_int64(v);
      if (!n) return "argument couldn't be parsed into an integer";
      if (*n < p.min)
        return "argument must be between " + std::to_string(p.min) +
               " and 9223372036854775807 inclusive";
      out = std::to_string(*n);
      return std::nullopt;
    }
    case ConfigKind::Memory: {
      auto n = parse_memory(v);
      if (!n) return "argument must be a memory value";
      out = std::to_string(*n);
      return std::nullopt;
    }
    case ConfigKind::Enum: {
      static const char* kPolicies[] = {"volatile-lru",   "volatile-lfu", "volatile-random",
                                        "volatile-ttl",   "allkeys-lru",  "allkeys-lfu",
                                        "allkeys-random", "noeviction"};
      for (const char* pol : kPolicies)
        if (equals_nocase(pol, v)) {
          out = pol;
          return std::nullopt;
        }
      return "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
             "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
             "noeviction";
    }
    case ConfigKind::String:
      out = std::string(v);
      return std::nullopt;
    case ConfigKind::YesNo:
      if (equals_nocase(v, "yes") || equals_nocase(v, "no")) {
        out = to_lower(v);
        return std::nullopt;
      }
      return "argument must be 'yes' or 'no'";
    case ConfigKind::Fsync:
      for (const char* mode : {"everysec", "always", "no"})
        if (equals_nocase(mode, v)) {
          out = mode;
          return std::nullopt;
        }
      return "argument(s) must be one of the following: everysec, always, no";
    case ConfigKind::Save: {
      // setConfigSaveOption: pairs "seconds changes", both integers; "" = no save points.
      auto words = split_args(v);
      if (!words || words->size() % 2 != 0) return "Invalid save parameters";
      out.clear();
      for (const std::string& w : *words) {
        auto n = parse_int64(w);
        if (!n || *n < 0) return "Invalid save parameters";
        if (!out.empty()) out += ' ';
        out += std::to_string(*n);
      }
      return std::nullopt;
    }
    case ConfigKind::ClientOutputBufferLimit: {
      // "class hard soft seconds" groups; classes normal, replica/slave, pubsub.
      std::vector<std::string> w;
      std::string cur;
      for (char ch : v) {
        if (ch == ' ') {
          if (!cur.empty()) w.push_back(cur), cur.clear();
        } else {
          cur += ch;
        }
      }
      if (!cur.empty()) w.push_back(cur);
      if (w.empty() || w.size() % 4 != 0)
        return "Wrong number of arguments in buffer limit configuration.";
      int64_t vals[3][3] = {{0, 0, 0}, {268435456, 67108864, 60}, {33554432, 8388608, 60}};
      // Start from the current value so unmentioned classes keep theirs.
      (void)vals;
      std::string normal = "normal 0 0 0", slave = "slave 268435456 67108864 60",
                  pubsub = "pubsub 33554432 8388608 60";
      for (size_t i = 0; i < w.size(); i += 4) {
        std::string cls = to_lower(w[i]);
        auto hard = parse_memory(w[i + 1]);
        auto soft = parse_memory(w[i + 2]);
        auto secs = parse_int64(w[i + 3]);
        if (!hard || !soft || !secs || *secs < 0)
          return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        std::string group =
            std::to_string(*hard) + " " + std::to_string(*soft) + " " + std::to_string(*secs);
        if (cls == "normal")
          normal = "normal " + group;
        else if (cls == "slave" || cls == "replica")
          slave = "slave " + group;
        else if (cls == "pubsub")
          pubsub = "pubsub " + group;
        else
          return "Invalid client class specified in buffer limit configuration.";
      }
      out = normal + " " + slave + " " + pubsub;
      return std::nullopt;
    }
  }
  return "unsupported";
}

void config_command(Ctx& c) {
  const std::string& sub = c.arg(1);
  auto& cfg = c.server.config();
  if (equals_nocase(sub, "get")) {
    if (c.argc() < 3) return c.reply_arity_error("config|get");
    Reply out = Reply::array();
    std::set<std::string> seen;
    for (size_t j = 2; j < c.argc(); j++) {
      for (const auto& [name, value] : cfg) {
        if (!glob_match(c.arg(j), name, true) || seen.count(name)) continue;
        seen.insert(name);
        out.elements.push_back(Reply::bulk(name));
        out.elements.push_back(Reply::bulk(value));
      }
    }
    c.reply(std::move(out));
  } else if (equals_nocase(sub, "set")) {
    if (c.argc() < 4 || c.argc() % 2 != 0) return c.reply_arity_error("config|set");
    std::vector<std::pair<std::string, std::string>> updates;
    for (size_t j = 2; j + 1 < c.argc(); j += 2) {
      const ConfigParam* p = find_param(c.arg(j));
      if (!p)
        return c.reply_error("ERR Unknown option or number of arguments for CONFIG SET - '" +
                             c.arg(j) + "'");
      std::string value;
      if (auto e = config_value(*p, c.arg(j + 1), value))
        return c.reply_error("ERR CONFIG SET failed (possibly related to argument '" + c.arg(j) +
                             "') - " + *e);
      updates.emplace_back(p->name, value);
    }
    for (auto& [name, value] : updates) {
      cfg[name] = value;
      // lua-time-limit is an alias of busy-reply-threshold.
      if (name == "lua-time-limit") cfg["busy-reply-threshold"] = value;
      if (name == "busy-reply-threshold") cfg["lua-time-limit"] = value;
    }
    c.reply_ok();
  } else if (equals_nocase(sub, "resetstat")) {
    if (c.argc() != 2) return c.reply_arity_error("config|resetstat");
    c.reply_ok();
  } else {
    c.reply_unknown_subcommand();
  }
}

void slowlog_command(Ctx& c) {
  const std::string& sub = c.arg(1);
  auto& log = c.server.slowlog();
  if (equals_nocase(sub, "len")) {
    if (c.argc() != 2) return c.reply_arity_error("slowlog|len");
    c.reply_int(static_cast<int64_t>(log.size()));
  } else if (equals_nocase(sub, "reset")) {
    if (c.argc() != 2) return c.reply_arity_error("slowlog|reset");
    c.server.slowlog_reset(c.now_us);
    c.reply_ok();
  } else if (equals_nocase(sub, "get")) {
    if (c.argc() > 3)
      return c.reply_error("ERR unknown subcommand or wrong number of arguments for '" +
                           c.arg(1).substr(0, 128) + "'. Try SLOWLOG HELP.");
    int64_t count = 10;
    if (c.argc() == 3) {
      auto n = parse_int64(c.arg(2));
      if (!n || *n < -1) return c.reply_error("ERR count should be greater than or equal to -1");
      count = *n == -1 ? static_cast<int64_t>(log.size()) : *n;
    }
    Reply out = Reply::array();
    for (const auto& e : log) {
      if (static_cast<int64_t>(out.elements.size()) >= count) break;
      Reply args = Reply::array();
      for (const auto& a : e.argv) args.elements.push_back(Reply::bulk(a));
      out.elements.push_back(
          Reply::array({Reply::integer_reply(e.id), Reply::integer_reply(e.unix_s),
                        Reply::integer_reply(e.duration_us), std::move(args), Reply::bulk(e.peer),
                        Reply::bulk(e.name)}));
    }
    c.reply(std::move(out));
  } else {
    c.reply_unknown_subcommand();
  }
}

void debug_command(Ctx& c) {
  const std::string& sub = c.arg(1);
  if (equals_nocase(sub, "sleep") && c.argc() == 3) {
    // The time is spent as service time (Server::service_time): the server is stalled.
    c.reply_ok();
  } else if (equals_nocase(sub, "set-active-expire") && c.argc() == 3) {
    c.reply_ok();
  } else {
    c.reply_error("ERR unknown subcommand or wrong number of arguments for '" + sub +
                  "'. Try DEBUG HELP.");
  }
}

void info_command(Ctx& c) {
  // A subset of INFO: the fields lessons use, in Redis' layout ("# Section", "k:v\r\n").
  std::string section = c.argc() >= 2 ? to_lower(c.arg(1)) : "default";
  bool all = section == "default" || section == "all" || section == "everything";
  std::string out;
  auto want = [&](const char* s) { return all || section == s; };
  int64_t uptime_s = c.now_us / 1000000;
  if (want("server")) {
    out +=
        "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nos:redlab fake\r\n"
        "arch_bits:64\r\nprocess_id:1\r\nrun_id:0000000000000000000000000000000000000000\r\n"
        "tcp_port:6379\r\nuptime_in_seconds:" +
        std::to_string(uptime_s) + "\r\nhz:10\r\n\r\n";
  }
  if (want("clients")) {
    int64_t blocked = 0, pubsub = 0;
    for (const auto& [id, cl] : c.server.clients()) {
      if (cl->blocked) blocked++;
      if (cl->subscriptions()) pubsub++;
    }
    out += "# Clients\r\nconnected_clients:" + std::to_string(c.server.clients().size()) +
           "\r\nblocked_clients:" + std::to_string(blocked) +
           "\r\npubsub_clients:" + std::to_string(pubsub) + "\r\n\r\n";
  }
  if (want("stats")) {
    out += "# Stats\r\ntotal_commands_processed:" + std::to_string(c.server.commands_processed()) +
           "\r\npubsub_channels:" + std::to_string(c.server.pubsub_channels.size()) +
           "\r\npubsub_patterns:" + std::to_string(c.server.pubsub_patterns.size()) + "\r\n\r\n";
  }
  if (want("replication")) out += replication_info(c.server, c.now_us) + "\r\n";
  if (want("keyspace")) {
    out += "# Keyspace\r\n";
    auto& dbs = c.server.dbs();
    for (size_t i = 0; i < dbs.size(); i++) {
      if (dbs[i].dict.empty()) continue;
      out += "db" + std::to_string(i) + ":keys=" + std::to_string(dbs[i].dict.size()) +
             ",expires=" + std::to_string(dbs[i].expires.size()) + ",avg_ttl=0\r\n";
    }
  }
  while (out.size() >= 2 && out.substr(out.size() - 2) == "\r\n" && out.size() >= 4 &&
         out.substr(out.size() - 4) == "\r\n\r\n")
    out.resize(out.size() - 2);
  c.reply_bulk(out);
}

// HELLO [protover [AUTH username password] [SETNAME clientname]] (networking.c helloCommand).
// The fake speaks RESP2 only: HELLO 3 is refused as an unsupported version (a real server
// would switch protocols); the client model asks for 2.
void hello_command(Ctx& c) {
  int64_t ver = 0;
  size_t j = 1;
  if (c.argc() >= 2) {
    auto v = parse_int64(c.arg(1));
    if (!v) return c.reply_error("ERR Protocol version is not an integer or out of range");
    ver = *v;
    j = 2;
    if (ver < 2 || ver > 3) return c.reply_error("NOPROTO unsupported protocol version");
  }
  std::optional<std::string> setname;
  for (; j < c.argc(); j++) {
    size_t more = c.argc() - j - 1;
    if (equals_nocase(c.arg(j), "auth") && more >= 2) {
      // The default user has no password here (nopass): any password is accepted for it.
      if (c.arg(j + 1) != "default")
        return c.reply_error("WRONGPASS invalid username-password pair or user is disabled.");
      j += 2;
    } else if (equals_nocase(c.arg(j), "setname") && more >= 1) {
      for (unsigned char ch : c.arg(j + 1))
        if (ch < '!' || ch > '~')
          return c.reply_error(
              "ERR Client names cannot contain spaces, newlines or special characters.");
      setname = c.arg(j + 1);
      j += 1;
    } else {
      return c.reply_error("ERR Syntax error in HELLO option '" + c.arg(j) + "'");
    }
  }
  if (ver == 3) return c.reply_error("NOPROTO unsupported protocol version");
  if (setname) c.client.name = *setname;
  c.reply(Reply::array({Reply::bulk("server"), Reply::bulk("redis"), Reply::bulk("version"),
                        Reply::bulk("7.0.15"), Reply::bulk("proto"), Reply::integer_reply(2),
                        Reply::bulk("id"), Reply::integer_reply(c.client.id), Reply::bulk("mode"),
                        Reply::bulk("standalone"), Reply::bulk("role"), Reply::bulk("master"),
                        Reply::bulk("modules"), Reply::array()}));
}

}  // namespace

void register_server_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h) {
    t[name] = CommandSpec{name, arity, flags, h, 0, 0, 0};
  };
  add("ping", -1, kFast | kAllowInPubSub, ping_command);
  add("echo", 2, kFast, echo_command);
  add("hello", -1, kFast | kNoScript | kAllowInPubSub, hello_command);
  add("select", 2, kFast, select_command);
  add("quit", -1, kFast | kAllowInPubSub | kAllowBusy | kNoScript, quit_command);
  add("client", -2, kAdmin | kNoScript, client_command);
  add("dbsize", 1, kReadOnly | kFast, dbsize_command);
  add("flushall", -1, kWrite, flushall_command);
  add("flushdb", -1, kWrite, flushdb_command);
  add("time", 1, kFast, time_command);
  add("info", -1, 0, info_command);
  add("config", -2, kAdmin | kNoScript, config_command);
  add("slowlog", -2, kAdmin, slowlog_command);
  add("debug", -2, kAdmin | kNoScript, debug_command);
}

}  // namespace redlab::fake
