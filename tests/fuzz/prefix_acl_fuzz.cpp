// Fuzz target: the real backend's key-prefixing and ACL rules (real/key_prefix.h,
// real/acl.h), the two layers that keep a run on a user's server inside `redlab:<id>:`.
//
// Input: a command line (split by redis-cli's rules, sim/core/cmdline.h); or, after a first
// line "lua:", a small script sent as EVAL with keys; or "prefix:" then a prefix line and name
// lines; or "faults:" then command lines a scenario's faults and steps would send. Checked:
// - a command the run user's ACL admits, and that the fabric sends (no AUTH/HELLO AUTH/RESET),
//   comes out of prefix_argv with every argument Redis 7 would take as a key, key pattern or
//   channel under the prefix, and every other argument unchanged (the oracle below is Redis'
//   own key positions: src/commands/*.json key_specs, and the command's parser where a
//   keyword decides: XREAD's STREAMS, numkeys forms); the prefix comes off again
//   (unprefix_reply);
// - a command the allow-list admits is one key_prefix knows and does not call server-wide,
//   so the fabric's early refusal and the server's ACL agree;
// - without an ACL user (prefix_only_may), no Lua ever goes: EVAL, EVALSHA, SCRIPT LOAD;
// - once per process: every entry of the allow-list has an oracle rule here, so a command
//   added to the list must come with its Redis key positions;
// - "prefix:": the run user's key and channel patterns (acl_prefix_pattern, as ACL SETUSER
//   gets them) match a name exactly when it starts with the prefix, under Redis' glob rules
//   (src/util.c stringmatchlen: * ? [..] and backslash escapes; the matcher below is this
//   target's own); the SETUSER command holds no other pattern, no category but -@all, and
//   only the rules it was given;
// - "faults:": what --allow-server-faults adds (fault_rules) is one of the commands given,
//   named as given, never a whole container (CLIENT, DEBUG, CONFIG ...) nor a category.
//
// The real/ sources it tests are pure (no sockets) and are compiled into this target directly:
// fuzz targets link redlab_sim only.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "real/acl.cpp"
#include "real/key_prefix.cpp"
#include "sim/core/cmdline.h"
#include "sim/core/reply.h"
#include "sim/fake/sha1.h"

namespace {

using redlab::real::Argv;

constexpr std::string_view kPrefix = "redlab:0123456789abcdef:";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Redis' string2ll: optional '-', no '+', no blanks, no leading zeros, no overflow.
bool redis_ll(const std::string& s, long long& out) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return false;
  unsigned long long v = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned long long next = v * 10 + static_cast<unsigned long long>(s[i] - '0');
    if (next / 10 != v) return false;
    v = next;
  }
  if (!negative && v > 9223372036854775807ULL) return false;
  if (negative && v > 9223372036854775808ULL) return false;
  out = negative ? static_cast<long long>(0 - v) : static_cast<long long>(v);
  return true;
}

// The oracle's answer: the indexes Redis takes as keys or channels, or `runs` false when
// Redis would refuse the command before touching anything (then nothing is asserted).
struct Keys {
  bool runs = true;
  std::vector<size_t> at;
};

struct Range {
  int first, last, step;
};

Keys range(const Argv& argv, Range r) {
  Keys k;
  int64_t size = static_cast<int64_t>(argv.size());
  int64_t last = r.last >= 0 ? r.last : size + r.last;
  for (int64_t i = r.first; i <= last && i < size; i += r.step) k.at.push_back(size_t(i));
  return k;
}

// numkeys at index `at`, keys right after it; Redis refuses a count that is not a canonical
// integer, negative, above what follows, or (min_keys 1) zero.
Keys numkeys(const Argv& argv, size_t at, int min_keys) {
  Keys k;
  long long n = 0;
  if (at >= argv.size() || !redis_ll(argv[at], n) || n < min_keys ||
      static_cast<unsigned long long>(n) > argv.size() - at - 1) {
    k.runs = false;
    return k;
  }
  for (long long j = 1; j <= n; j++) k.at.push_back(at + size_t(j));
  return k;
}

// XREAD / XREADGROUP as t_stream.c's xreadCommand parses them.
Keys xread(const Argv& argv, bool group) {
  Keys k;
  for (size_t i = 1; i < argv.size(); i++) {
    size_t more = argv.size() - i - 1;
    std::string word = lower(argv[i]);
    if ((word == "block" || word == "count") && more > 0) {
      i++;
    } else if (word == "streams" && more > 0) {
      size_t count = argv.size() - i - 1;
      if (count % 2 != 0) break;
      for (size_t j = 1; j <= count / 2; j++) k.at.push_back(i + j);
      return k;
    } else if (word == "group" && more >= 2 && group) {
      i += 2;
    } else if (word == "noack" && group) {
      // a flag
    } else {
      break;
    }
  }
  k.runs = false;
  return k;
}

// Redis 7's key and channel positions for every command of the run user's allow-list; nullopt
// for a command the oracle does not know (an allow-list entry without one fails at start).
std::optional<Keys> oracle(const Argv& argv) {
  const std::string name = lower(argv[0]);
  const std::string sub = argv.size() > 1 ? lower(argv[1]) : "";
  static const std::map<std::string, Range> kRanges = [] {
    std::map<std::string, Range> m;
    for (const char* one : {"get",
                            "set",
                            "setnx",
                            "setex",
                            "psetex",
                            "getset",
                            "getdel",
                            "getex",
                            "incr",
                            "decr",
                            "incrby",
                            "decrby",
                            "incrbyfloat",
                            "append",
                            "setrange",
                            "strlen",
                            "getrange",
                            "type",
                            "expire",
                            "pexpire",
                            "expireat",
                            "pexpireat",
                            "expiretime",
                            "pexpiretime",
                            "persist",
                            "ttl",
                            "pttl",
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
                            "lpush",
                            "rpush",
                            "lpushx",
                            "rpushx",
                            "lpop",
                            "rpop",
                            "llen",
                            "lrange",
                            "lindex",
                            "lset",
                            "ltrim",
                            "lrem",
                            "linsert",
                            "lpos",
                            "sadd",
                            "srem",
                            "spop",
                            "srandmember",
                            "sismember",
                            "smismember",
                            "scard",
                            "smembers",
                            "sscan",
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
                            "zrandmember",
                            "zscan",
                            "xadd",
                            "xtrim",
                            "xlen",
                            "xrange",
                            "xrevrange",
                            "xdel",
                            "xsetid",
                            "xack",
                            "xpending",
                            "xclaim",
                            "xautoclaim"})
      m[one] = {1, 1, 1};
    for (const char* all : {"mget", "del", "unlink", "exists", "watch", "sinter", "sunion", "sdiff",
                            "sinterstore", "sunionstore", "sdiffstore"})
      m[all] = {1, -1, 1};
    for (const char* pairs : {"mset", "msetnx"}) m[pairs] = {1, -1, 2};
    for (const char* two : {"rename", "renamenx", "lmove", "rpoplpush", "smove", "zrangestore",
                            "blmove", "brpoplpush"})
      m[two] = {1, 2, 1};
    for (const char* blocking : {"blpop", "brpop", "bzpopmin", "bzpopmax"})
      m[blocking] = {1, -2, 1};
    return m;
  }();
  if (auto it = kRanges.find(name); it != kRanges.end()) return range(argv, it->second);
  if (name == "lmpop" || name == "zmpop" || name == "sintercard" || name == "zintercard" ||
      name == "zunion" || name == "zinter" || name == "zdiff")
    return numkeys(argv, 1, 1);
  if (name == "blmpop" || name == "bzmpop") return numkeys(argv, 2, 1);
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro")
    return numkeys(argv, 2, 0);
  if (name == "zunionstore" || name == "zinterstore" || name == "zdiffstore") {
    Keys k = numkeys(argv, 2, 1);
    k.at.insert(k.at.begin(), 1);
    return k;
  }
  if (name == "xread") return xread(argv, false);
  if (name == "xreadgroup") return xread(argv, true);
  if (name == "xgroup" || name == "xinfo") {
    // Every sub-command but HELP names its stream second.
    static const std::set<std::string> kXgroup = {"create", "setid", "destroy", "createconsumer",
                                                  "delconsumer"};
    static const std::set<std::string> kXinfo = {"stream", "groups", "consumers"};
    Keys k;
    k.runs = argv.size() >= 3 && (name == "xgroup" ? kXgroup : kXinfo).count(sub) > 0;
    if (k.runs) k.at.push_back(2);
    return k;
  }
  if (name == "subscribe" || name == "unsubscribe" || name == "psubscribe" ||
      name == "punsubscribe")
    return range(argv, {1, -1, 1});
  if (name == "publish") return range(argv, {1, 1, 1});
  static const std::set<std::string> kKeyless = {"multi", "exec",  "discard", "unwatch", "ping",
                                                 "echo",  "hello", "time",    "client",  "script"};
  if (kKeyless.count(name)) return Keys{};
  return std::nullopt;
}

// Every allow-list entry has an oracle rule, and is known to key_prefix and not server-wide.
void check_the_lists_once() {
  static const bool checked = [] {
    for (const std::string& rule : redlab::real::run_user_commands()) {
      Argv argv;
      size_t bar = rule.find('|');
      argv.push_back(rule.substr(0, bar));
      if (bar != std::string::npos) argv.push_back(rule.substr(bar + 1));
      if (!oracle(argv)) __builtin_trap();  // an allow-list entry without Redis' key positions
      if (redlab::real::server_wide_command(argv)) __builtin_trap();  // unknown or server-wide
      if (!redlab::real::run_user_may(argv)) __builtin_trap();
    }
    return true;
  }();
  (void)checked;
}

bool under_prefix(const std::string& arg) {
  return arg.size() >= kPrefix.size() && std::string_view(arg).substr(0, kPrefix.size()) == kPrefix;
}

void check_command(const Argv& argv) {
  if (argv.empty()) return;
  // Without an ACL user no Lua goes, whatever the script.
  std::string name = lower(argv[0]);
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
      (name == "script" && argv.size() > 1 && lower(argv[1]) == "load"))
    if (redlab::real::prefix_only_may(argv)) __builtin_trap();
  if (redlab::real::prefix_only_may(argv) && !redlab::real::run_user_may(argv)) __builtin_trap();
  if (!redlab::real::run_user_may(argv)) return;
  if (redlab::real::server_wide_command(argv)) __builtin_trap();  // the fabric would refuse it
  if (redlab::real::refused_identity_command(argv)) return;       // never sent
  std::optional<Keys> keys = oracle(argv);
  if (!keys) __builtin_trap();  // admitted, but nobody knows where its keys are
  if (!keys->runs) return;
  Argv out = redlab::real::prefix_argv(argv, kPrefix);
  if (out.size() != argv.size()) __builtin_trap();
  std::vector<bool> is_key(argv.size(), false);
  for (size_t i : keys->at) {
    if (i >= argv.size()) __builtin_trap();
    is_key[i] = true;
  }
  for (size_t i = 0; i < argv.size(); i++) {
    if (is_key[i]) {
      // Under the prefix, and the prefix comes off again as it went on.
      if (out[i] != std::string(kPrefix) + argv[i]) __builtin_trap();
      if (!under_prefix(out[i])) __builtin_trap();
      redlab::Reply back = redlab::real::unprefix_reply(redlab::Reply::bulk(out[i]), kPrefix);
      if (back.str != argv[i]) __builtin_trap();
    } else if (out[i] != argv[i]) {
      __builtin_trap();  // a value, count or option rewritten: the command would change
    }
  }
}

// A glob matcher with Redis' stringmatchlen rules (case-sensitive), iterative: '*' any run,
// '?' one byte, "[...]" a class ('^' negates, a-z ranges, '\\' escapes), '\\x' a literal x.
bool glob_class(std::string_view p, size_t& pi, char c) {
  // p[pi] == '['; on return pi is past the class.
  pi++;
  bool negate = pi < p.size() && p[pi] == '^';
  if (negate) pi++;
  bool match = false;
  while (pi < p.size() && p[pi] != ']') {
    if (p[pi] == '\\' && pi + 1 < p.size()) {
      pi++;
      if (p[pi] == c) match = true;
    } else if (pi + 2 < p.size() && p[pi + 1] == '-') {
      char lo = p[pi], hi = p[pi + 2];
      if (lo > hi) std::swap(lo, hi);
      if (c >= lo && c <= hi) match = true;
      pi += 2;
    } else if (p[pi] == c) {
      match = true;
    }
    pi++;
  }
  if (pi < p.size()) pi++;  // the ']' (an unterminated class ends the pattern)
  return negate ? !match : match;
}

bool glob_match(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      while (pi < p.size() && p[pi] == '*') pi++;
      star_p = pi;
      star_s = si;
      continue;
    }
    bool one = false;
    size_t next = pi;
    if (pi < p.size()) {
      if (p[pi] == '?') {
        one = true;
        next = pi + 1;
      } else if (p[pi] == '[') {
        one = glob_class(p, next, s[si]);
      } else if (p[pi] == '\\' && pi + 1 < p.size()) {
        one = p[pi + 1] == s[si];
        next = pi + 2;
      } else {
        one = p[pi] == s[si];
        next = pi + 1;
      }
    }
    if (one) {
      pi = next;
      si++;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;  // the last '*' takes one more byte
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') pi++;
  return pi == p.size();
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size() && out.size() < 256) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void check_patterns(std::string_view input) {
  std::vector<std::string> lines = lines_of(input);
  if (lines.empty() || lines[0].empty()) return;
  const std::string& prefix = lines[0];
  const std::string pattern = redlab::real::acl_prefix_pattern(prefix);
  std::vector<std::string> names(lines.begin() + 1, lines.end());
  // Names around the prefix: itself, longer, one byte shorter, one byte changed.
  names.push_back(prefix);
  names.push_back(prefix + "k");
  names.push_back(prefix.substr(0, prefix.size() - 1));
  std::string changed = prefix;
  changed[changed.size() / 2] = static_cast<char>(changed[changed.size() / 2] ^ 1);
  names.push_back(changed + "k");
  for (const std::string& name : names) {
    bool starts = name.size() >= prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
    if (glob_match(pattern, name) != starts) __builtin_trap();  // a key outside, or inside lost
  }
  // The whole SETUSER: exactly these patterns, one category (-@all), the rules given.
  redlab::real::RunUser user{"redlab-fuzz", "00"};
  std::vector<std::string> rules = {"get", "debug|sleep"};
  Argv argv = redlab::real::acl_setuser_argv(user, prefix, 0, rules);
  size_t key_patterns = 0, channel_patterns = 0, categories = 0, plus = 0;
  for (size_t i = 3; i < argv.size(); i++) {
    const std::string& a = argv[i];
    if (a[0] == '~') {
      key_patterns++;
      if (a != "~" + pattern) __builtin_trap();
    } else if (a[0] == '&') {
      channel_patterns++;
      if (a != "&" + pattern) __builtin_trap();
    } else if (a[0] == '+') {
      if (a.find('@') != std::string::npos) __builtin_trap();  // never a +@category
      if (a != "+" + rules.at(plus++)) __builtin_trap();
    } else if (a == "-@all") {
      categories++;
    } else if (a == "allkeys" || a == "allchannels" || a == "nopass" || a[0] == '%') {
      __builtin_trap();
    }
  }
  if (key_patterns != 1 || channel_patterns != 1 || categories != 1 || plus != rules.size())
    __builtin_trap();
}

void check_fault_rules(std::string_view input) {
  std::vector<std::vector<std::string>> commands;
  for (const std::string& line : lines_of(input)) {
    auto words = redlab::split_args(line);
    if (!words) continue;
    if (words->size() > 2) words->resize(2);
    commands.push_back(*words);
  }
  for (const std::string& rule : redlab::real::fault_rules(commands)) {
    if (rule.empty() || rule.find('@') != std::string::npos || rule.find(' ') != std::string::npos)
      __builtin_trap();
    size_t bar = rule.find('|');
    std::string name = rule.substr(0, bar);
    if (bar == std::string::npos && redlab::real::is_container_command(name)) __builtin_trap();
    bool given = false;  // named as one of the input's commands
    for (const auto& words : commands)
      if (!words.empty() && redlab::real::acl_rule_name(words) == rule) given = true;
    if (!given) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kInputBytesMax = 16 * 1024;
  if (size > kInputBytesMax) return 0;
  check_the_lists_once();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kPrefixMode = "prefix:\n", kFaultsMode = "faults:\n";
  if (input.substr(0, kPrefixMode.size()) == kPrefixMode) {
    check_patterns(input.substr(kPrefixMode.size()));
    return 0;
  }
  if (input.substr(0, kFaultsMode.size()) == kFaultsMode) {
    check_fault_rules(input.substr(kFaultsMode.size()));
    return 0;
  }
  constexpr std::string_view kLua = "lua:";
  if (input.substr(0, kLua.size()) == kLua) {
    // A script: EVAL'd with keys and arguments from its own first words.
    std::string script(input.substr(kLua.size()));
    auto words = redlab::split_args(script.substr(0, script.find('\n')));
    Argv keys = words ? *words : Argv{};
    for (const char* form : {"EVAL", "EVAL_RO", "EVALSHA"}) {
      Argv argv = {form, form[4] == 'S' ? redlab::fake::sha1_hex(script) : script,
                   std::to_string(keys.size())};
      argv.insert(argv.end(), keys.begin(), keys.end());
      argv.push_back("an-argument");
      check_command(argv);
    }
    check_command({"SCRIPT", "LOAD", script});
    return 0;
  }
  auto argv = redlab::split_args(input);
  if (argv) check_command(*argv);
  return 0;
}
