// See key_prefix.h. The key positions come from the fake's command table (built once), a few
// entries for real-Redis commands the fake does not implement, and the special cases below.
#include "real/key_prefix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "sim/fake/server.h"
#include "sim/fake/server_wide.h"

namespace redlab::real {
namespace {

struct KeySpec {
  int first_key = 0;  // 0 = no keys in fixed positions
  int last_key = 0;   // negative: counted from the end (-1 = last argument)
  int key_step = 0;
};

// Real-Redis commands outside the fake's table, with Redis 7.0's key positions. Keyless ones
// (first_key 0) are listed so that they count as known.
constexpr struct {
  const char* name;
  KeySpec spec;
} kExtraCommands[] = {
    {"rename", {1, 2, 1}},
    {"renamenx", {1, 2, 1}},
    {"copy", {1, 2, 1}},
    {"touch", {1, -1, 1}},
    {"dump", {1, 1, 1}},
    {"restore", {1, 1, 1}},
    {"getbit", {1, 1, 1}},
    {"setbit", {1, 1, 1}},
    {"bitcount", {1, 1, 1}},
    {"bitpos", {1, 1, 1}},
    {"bitfield", {1, 1, 1}},
    {"bitfield_ro", {1, 1, 1}},
    {"bitop", {2, -1, 1}},
    {"setrange", {1, 1, 1}},
    {"substr", {1, 1, 1}},
    {"lcs", {1, 2, 1}},
    {"pfadd", {1, 1, 1}},
    {"pfcount", {1, -1, 1}},
    {"pfmerge", {1, -1, 1}},
    {"geoadd", {1, 1, 1}},
    {"geopos", {1, 1, 1}},
    {"geodist", {1, 1, 1}},
    {"geohash", {1, 1, 1}},
    {"geosearch", {1, 1, 1}},
    {"geosearchstore", {1, 2, 1}},
    {"hello", {}},
    {"auth", {}},
    {"wait", {}},
    {"readonly", {}},
    {"readwrite", {}},
    {"lastsave", {}},
    {"role", {}},
    {"command", {}},
    {"object", {}},
    {"memory", {}},
    {"sort", {}},
    {"sort_ro", {}},
    {"scan", {}},
    {"fcall", {}},
    {"fcall_ro", {}},
    {"function", {}},
    {"ssubscribe", {}},
    {"sunsubscribe", {}},
    {"spublish", {}},
    {"latency", {}},
    {"acl", {}},
    {"lolwut", {}},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// The key positions of every command redlab knows, keyed by lower-case name.
const std::map<std::string, KeySpec, std::less<>>& key_specs() {
  static const std::map<std::string, KeySpec, std::less<>> specs = [] {
    fake::CommandTable table;
    fake::register_string_commands(table);
    fake::register_key_commands(table);
    fake::register_server_commands(table);
    fake::register_multi_commands(table);
    fake::register_hash_commands(table);
    fake::register_list_commands(table);
    fake::register_set_commands(table);
    fake::register_zset_commands(table);
    fake::register_stream_commands(table);
    fake::register_pubsub_commands(table);
    fake::register_scripting_commands(table);
    std::map<std::string, KeySpec, std::less<>> out;
    for (const auto& [name, spec] : table)
      out[name] = KeySpec{spec.first_key, spec.last_key, spec.key_step};
    for (const auto& extra : kExtraCommands) out.emplace(extra.name, extra.spec);
    return out;
  }();
  return specs;
}

// A non-negative count argument, or -1 when it is not one (the server will say so).
int64_t parse_count(const std::string& s) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return -1;
  return v;
}

class Rewriter {
 public:
  Rewriter(const Argv& argv, std::string_view prefix) : out_(argv), prefix_(prefix) {}

  void key(size_t i) {
    if (i < out_.size()) out_[i].insert(0, prefix_);
  }
  // `numkeys k1 .. kn` with numkeys at index at.
  void numkeys_at(size_t at) {
    if (at >= out_.size()) return;
    int64_t n = parse_count(out_[at]);
    if (n < 0) return;
    size_t available = out_.size() - at - 1;
    size_t count = std::min(static_cast<size_t>(n), available);
    for (size_t j = 1; j <= count; j++) key(at + j);
  }
  // XREAD / XREADGROUP: the first half of the arguments after STREAMS are stream names.
  void streams_from(size_t start) {
    for (size_t i = start; i < out_.size(); i++) {
      std::string word = lower(out_[i]);
      if (word == "group") {
        i += 2;  // group and consumer names
      } else if (word == "count" || word == "block") {
        i += 1;
      } else if (word == "streams") {
        size_t n = (out_.size() - i - 1) / 2;
        for (size_t j = 1; j <= n; j++) key(i + j);
        return;
      }
    }
  }
  void scan_match(size_t start) {
    bool matched = false;
    for (size_t i = start; i + 1 < out_.size(); i += 2) {
      if (lower(out_[i]) == "match") {
        key(i + 1);
        matched = true;
      }
    }
    if (!matched) {
      out_.push_back("MATCH");
      out_.push_back(std::string(prefix_) + "*");
    }
  }
  void sort_patterns() {
    key(1);
    for (size_t i = 2; i < out_.size(); i++) {
      std::string word = lower(out_[i]);
      if (word == "limit") {
        i += 2;
      } else if (word == "by" && i + 1 < out_.size()) {
        if (lower(out_[i + 1]) != "nosort") key(i + 1);
        i++;
      } else if (word == "get" && i + 1 < out_.size()) {
        if (out_[i + 1] != "#") key(i + 1);
        i++;
      } else if (word == "store") {
        key(i + 1);
        i++;
      }
    }
  }
  void all_from(size_t start) {
    for (size_t i = start; i < out_.size(); i++) key(i);
  }
  void spec(const KeySpec& s) {
    if (s.first_key <= 0 || s.key_step <= 0) return;
    int64_t size = static_cast<int64_t>(out_.size());
    int64_t last = s.last_key >= 0 ? s.last_key : size + s.last_key;
    for (int64_t i = s.first_key; i <= last && i < size; i += s.key_step) key(size_t(i));
  }
  Argv take() { return std::move(out_); }

 private:
  Argv out_;
  std::string_view prefix_;
};

}  // namespace

std::string make_run_id() {
  std::random_device device;
  uint64_t value = (uint64_t(device()) << 32) ^ uint64_t(device());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string key_prefix_for(std::string_view run_id) {
  return "redlab:" + std::string(run_id) + ":";
}

Argv prefix_argv(const Argv& argv, std::string_view prefix) {
  if (argv.empty()) return argv;
  const std::string name = lower(argv[0]);
  const std::string sub = argv.size() > 1 ? lower(argv[1]) : "";
  Rewriter r(argv, prefix);
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
      name == "fcall" || name == "fcall_ro") {
    r.numkeys_at(2);
  } else if (name == "zunion" || name == "zinter" || name == "zdiff" || name == "lmpop" ||
             name == "zmpop" || name == "sintercard" || name == "zintercard") {
    r.numkeys_at(1);
  } else if (name == "blmpop" || name == "bzmpop") {
    r.numkeys_at(2);
  } else if (name == "zunionstore" || name == "zinterstore" || name == "zdiffstore") {
    r.key(1);
    r.numkeys_at(2);
  } else if (name == "xread" || name == "xreadgroup") {
    r.streams_from(1);
  } else if (name == "keys") {
    r.key(1);
  } else if (name == "scan") {
    r.scan_match(2);
  } else if (name == "subscribe" || name == "unsubscribe" || name == "psubscribe" ||
             name == "punsubscribe" || name == "ssubscribe" || name == "sunsubscribe") {
    r.all_from(1);
  } else if (name == "publish" || name == "spublish") {
    r.key(1);
  } else if (name == "pubsub") {
    if (sub == "channels" || sub == "shardchannels") {
      if (argv.size() > 2) {
        r.key(2);
      } else {
        Argv out = r.take();
        out.push_back(std::string(prefix) + "*");
        return out;
      }
    } else if (sub == "numsub" || sub == "shardnumsub") {
      r.all_from(2);
    }
  } else if (name == "sort" || name == "sort_ro") {
    r.sort_patterns();
  } else if (name == "object" || (name == "memory" && sub == "usage")) {
    if (sub != "help") r.key(2);
  } else {
    auto it = key_specs().find(name);
    if (it != key_specs().end()) r.spec(it->second);
  }
  return r.take();
}

Reply unprefix_reply(Reply reply, std::string_view prefix) {
  if ((reply.kind == Reply::Kind::Bulk || reply.kind == Reply::Kind::Status) &&
      reply.str.size() >= prefix.size() &&
      std::string_view(reply.str).substr(0, prefix.size()) == prefix) {
    reply.str.erase(0, prefix.size());
  }
  for (Reply& element : reply.elements) element = unprefix_reply(std::move(element), prefix);
  return reply;
}

std::optional<std::string> server_wide_command(const Argv& argv) {
  if (auto why = fake::server_wide_command(argv)) return why;
  if (argv.empty()) return std::nullopt;
  const std::string name = lower(argv[0]);
  if (key_specs().find(name) == key_specs().end())
    return upper(name) + " is not in redlab's command table (its keys cannot be prefixed)";
  return std::nullopt;
}

}  // namespace redlab::real
