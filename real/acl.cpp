// See acl.h. (Its helpers' names differ from key_prefix.cpp's: the fuzz target compiles both
// files into one unit.) The allow-list is data, reviewed as such: every entry is a command of the
// fake's table (or one of its sub-commands) that acts only on the keys or channels it names, or on
// its own connection.
#include "real/acl.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <random>

#include "sim/core/assert.h"

namespace redlab::real {
namespace {

// The run user's commands (ACL rule names, lower case), by family.
constexpr std::array kRunUserCommands = {
    // Strings.
    "get",
    "set",
    "setnx",
    "setex",
    "psetex",
    "getset",
    "getdel",
    "getex",
    "mget",
    "mset",
    "msetnx",
    "incr",
    "decr",
    "incrby",
    "decrby",
    "incrbyfloat",
    "append",
    "setrange",
    "strlen",
    "getrange",
    // Keys (not KEYS, MOVE, COPY, SWAPDB, RANDOMKEY: they reach beyond the named keys).
    "del",
    "unlink",
    "exists",
    "type",
    "rename",
    "renamenx",
    "expire",
    "pexpire",
    "expireat",
    "pexpireat",
    "expiretime",
    "pexpiretime",
    "persist",
    "ttl",
    "pttl",
    // Hashes.
    "hset",
    "hmset",
    "hsetnx",
    "hdel",
    "hincrby",
    "hincrbyfloat",
    "hget",
    "hmget",
    "hlen",
    "hstrlen",
    "hexists",
    "hkeys",
    "hvals",
    "hgetall",
    "hrandfield",
    "hscan",
    // Lists.
    "lpush",
    "rpush",
    "lpushx",
    "rpushx",
    "lpop",
    "rpop",
    "lmpop",
    "llen",
    "lrange",
    "lindex",
    "lset",
    "ltrim",
    "lrem",
    "linsert",
    "lpos",
    "lmove",
    "rpoplpush",
    "blpop",
    "brpop",
    "blmpop",
    "blmove",
    "brpoplpush",
    // Sets.
    "sadd",
    "srem",
    "smove",
    "spop",
    "srandmember",
    "sismember",
    "smismember",
    "scard",
    "smembers",
    "sscan",
    "sinter",
    "sinterstore",
    "sintercard",
    "sunion",
    "sunionstore",
    "sdiff",
    "sdiffstore",
    // Sorted sets.
    "zadd",
    "zincrby",
    "zrem",
    "zscore",
    "zmscore",
    "zcard",
    "zrank",
    "zrevrank",
    "zcount",
    "zlexcount",
    "zrange",
    "zrangestore",
    "zrevrange",
    "zrangebyscore",
    "zrevrangebyscore",
    "zrangebylex",
    "zrevrangebylex",
    "zremrangebyrank",
    "zremrangebyscore",
    "zremrangebylex",
    "zpopmin",
    "zpopmax",
    "bzpopmin",
    "bzpopmax",
    "zmpop",
    "bzmpop",
    "zunionstore",
    "zinterstore",
    "zdiffstore",
    "zunion",
    "zinter",
    "zdiff",
    "zintercard",
    "zrandmember",
    "zscan",
    // Streams (XGROUP and XINFO: every sub-command names its stream).
    "xadd",
    "xtrim",
    "xlen",
    "xrange",
    "xrevrange",
    "xdel",
    "xsetid",
    "xread",
    "xreadgroup",
    "xgroup",
    "xack",
    "xpending",
    "xclaim",
    "xautoclaim",
    "xinfo",
    // Transactions.
    "multi",
    "exec",
    "discard",
    "watch",
    "unwatch",
    // Pub/sub (the channel patterns limit SUBSCRIBE, PSUBSCRIBE and PUBLISH).
    "subscribe",
    "unsubscribe",
    "psubscribe",
    "punsubscribe",
    "publish",
    // Scripts (not SCRIPT FLUSH/KILL, not FUNCTION: a library outlives the run).
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "script|load",
    "script|exists",
    // The connection itself.
    "ping",
    "echo",
    "hello",
    "time",
    "client|setname",
    "client|getname",
    "client|id",
};

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

bool listed(const std::vector<std::string>& list, const std::string& rule) {
  return std::find(list.begin(), list.end(), rule) != list.end();
}

std::string random_hex(size_t bytes) {
  std::random_device device;
  std::string out;
  char buf[3];
  for (size_t i = 0; i < bytes; i++) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(device() & 0xff));
    out += buf;
  }
  return out;
}

bool is_hex40(std::string_view s) {
  if (s.size() < 40) return false;
  for (size_t i = 0; i < 40; i++)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// ---- The emergency slots: plain data the signal handler reads with atomic loads only. ----
struct EmergencySlot {
  std::atomic<int> fd{-1};  // -1 free, -2 being filled
  std::atomic<size_t> size{0};
  char bytes[kEmergencyBytesMax] = {};
};
EmergencySlot g_emergency[kEmergencySlots];

}  // namespace

const std::vector<std::string>& run_user_commands() {
  static const std::vector<std::string> list(kRunUserCommands.begin(), kRunUserCommands.end());
  return list;
}

std::string acl_rule_name(const AclArgv& name_and_sub) {
  if (name_and_sub.empty()) return "";
  std::string rule = lower_ascii(name_and_sub[0]);
  if (name_and_sub.size() > 1 && !name_and_sub[1].empty())
    rule += "|" + lower_ascii(name_and_sub[1]);
  return rule;
}

std::vector<std::string> fault_rules(const std::vector<std::vector<std::string>>& commands) {
  std::vector<std::string> out;
  for (const auto& words : commands) {
    if (words.empty() || words[0].empty()) continue;
    if (words.size() < 2 || words[1].empty()) {
      if (is_container_command(words[0])) continue;
    }
    // Only names: a word with a blank, '@' or '|' is no command name (and "+@all" is a
    // category, which must never come from a scenario).
    bool plain = true;
    for (size_t i = 0; i < words.size() && i < 2; i++)
      for (char ch : words[i])
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.')
          plain = false;
    if (!plain) continue;
    std::string rule = acl_rule_name(words.size() > 2 ? AclArgv{words[0], words[1]} : words);
    if (!listed(out, rule)) out.push_back(rule);
  }
  return out;
}

bool run_user_may(const AclArgv& argv, const std::vector<std::string>& extra) {
  if (argv.empty()) return false;
  std::string name = lower_ascii(argv[0]);
  // "script|exists" is a rule's spelling, never a command's name (found by the fuzz target).
  if (name.find('|') != std::string::npos) return false;
  if (listed(run_user_commands(), name) || listed(extra, name)) return true;
  if (argv.size() < 2) return false;
  std::string rule = name + "|" + lower_ascii(argv[1]);
  return listed(run_user_commands(), rule) || listed(extra, rule);
}

bool prefix_only_may(const AclArgv& argv, const std::vector<std::string>& extra) {
  if (argv.empty()) return false;
  std::string name = lower_ascii(argv[0]);
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
      name == "script")
    return listed(extra, acl_rule_name(argv.size() > 1 ? AclArgv{argv[0], argv[1]} : argv));
  return run_user_may(argv, extra);
}

RunUser make_run_user(std::string_view run_id) {
  REDLAB_ASSERT(!run_id.empty() && "a run user is named after its run");
  return RunUser{"redlab-" + std::string(run_id), random_hex(16)};
}

std::string acl_prefix_pattern(std::string_view prefix) {
  std::string out;
  for (char ch : prefix) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "*";
}

AclArgv acl_setuser_argv(const RunUser& user, std::string_view key_prefix, int db,
                         const std::vector<std::string>& commands) {
  REDLAB_ASSERT(!key_prefix.empty() && "the run user is limited to the run's prefix");
  REDLAB_ASSERT(!user.password.empty() && "the run user has a password");
  const std::string pattern = acl_prefix_pattern(key_prefix);
  // reset: no password, no keys, no channels, off, -@all; then exactly what the run needs.
  AclArgv argv = {
      "ACL",       "SETUSER",     user.name,       "reset",       "on",   ">" + user.password,
      "resetkeys", "~" + pattern, "resetchannels", "&" + pattern, "-@all"};
  for (const std::string& rule : commands) argv.push_back("+" + rule);
  if (db != 0) argv.push_back("+select|" + std::to_string(db));
  return argv;
}

std::string setuser_error_rule(std::string_view error) {
  constexpr std::string_view kOpen = "modifier '";
  size_t at = error.find(kOpen);
  if (at == std::string_view::npos) return "";
  size_t begin = at + kOpen.size();
  size_t end = error.find('\'', begin);
  if (end == std::string_view::npos || end == begin) return "";
  return std::string(error.substr(begin, end - begin));
}

bool is_container_command(std::string_view name) {
  static const char* const kContainers[] = {
      "acl",    "client", "cluster", "command", "config", "debug",   "function", "latency",
      "memory", "module", "object",  "pubsub",  "script", "slowlog", "xgroup",   "xinfo"};
  std::string lower_name = lower_ascii(name);
  for (const char* c : kContainers)
    if (lower_name == c) return true;
  return false;
}

bool is_script_command(const AclArgv& argv) {
  if (argv.empty()) return false;
  std::string name = lower_ascii(argv[0]);
  return name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
         name == "fcall" || name == "fcall_ro";
}

bool is_acl_refusal(std::string_view error) {
  return error.substr(0, 7) == "NOPERM " ||
         error.find("The user executing the script can't") != std::string_view::npos ||
         error.find("The user executing the script is lacking") != std::string_view::npos ||
         error.find("ACL failure in script") != std::string_view::npos;
}

bool is_noscript_refusal(std::string_view error) {
  return error.find("command is not allowed from script") != std::string_view::npos;
}

std::string script_sha_in(std::string_view error) {
  constexpr std::string_view kScript = "script: ";
  for (size_t at = error.find(kScript); at != std::string_view::npos;
       at = error.find(kScript, at + 1)) {
    std::string_view rest = error.substr(at + kScript.size());
    if (is_hex40(rest)) return lower_ascii(rest.substr(0, 40));
  }
  return "";
}

int script_line_in(std::string_view error) {
  constexpr std::string_view kAt = "@user_script:";
  size_t at = error.rfind(kAt);
  if (at == std::string_view::npos) return 0;
  int line = 0;
  for (size_t i = at + kAt.size();
       i < error.size() && std::isdigit(static_cast<unsigned char>(error[i])); i++) {
    if (line > 100'000'000) return 0;  // no script is that long: not a line number
    line = line * 10 + (error[i] - '0');
  }
  return line;
}

std::string refused_command_in(std::string_view error) {
  constexpr std::string_view kOpen = "run the '";
  size_t at = error.find(kOpen);
  if (at == std::string_view::npos) return "";
  size_t begin = at + kOpen.size();
  size_t end = error.find("' command", begin);
  if (end == std::string_view::npos || end == begin) return "";
  std::string name = upper_ascii(error.substr(begin, end - begin));
  std::replace(name.begin(), name.end(), '|', ' ');
  return name;
}

std::optional<std::string> refused_identity_command(const AclArgv& argv) {
  if (argv.empty()) return std::nullopt;
  std::string name = lower_ascii(argv[0]);
  if (name == "auth" || name == "reset")
    return upper_ascii(name) + " would change the connection's user";
  if (name == "hello")
    for (size_t i = 1; i < argv.size(); i++)
      if (lower_ascii(argv[i]) == "auth")
        return std::string("HELLO ... AUTH would change the connection's user");
  return std::nullopt;
}

int register_emergency_write(int fd, std::string_view bytes) {
  if (fd < 0 || bytes.size() > kEmergencyBytesMax) return -1;
  for (size_t i = 0; i < kEmergencySlots; i++) {
    int expected = -1;
    if (!g_emergency[i].fd.compare_exchange_strong(expected, -2)) continue;
    std::memcpy(g_emergency[i].bytes, bytes.data(), bytes.size());
    g_emergency[i].size.store(bytes.size());
    g_emergency[i].fd.store(fd);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_emergency_write(int slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= kEmergencySlots) return;
  g_emergency[slot].size.store(0);
  g_emergency[slot].fd.store(-1);
}

void emergency_write() noexcept {
  for (EmergencySlot& slot : g_emergency) {
    int fd = slot.fd.load();
    size_t size = slot.size.load();
    if (fd < 0 || size == 0) continue;
    // Best effort: the process is about to die; the kernel delivers what was written.
    ssize_t written = ::send(fd, slot.bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)written;
  }
}

}  // namespace redlab::real
