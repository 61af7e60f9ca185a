#include "sim/fake/server_wide.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

namespace redlab::fake {
namespace {

// Commands that act on the whole server or on keys the prefix cannot reach.
constexpr std::array kServerWide = {
    "flushall",  "flushdb", "debug",     "swapdb",  "move",       "migrate",
    "shutdown",  "select",  "randomkey", "save",    "bgsave",     "bgrewriteaof",
    "replicaof", "slaveof", "failover",  "monitor", "sync",       "psync",
    "module",    "reset",   "cluster",   "pfdebug", "pfselftest",
};

// Container commands: the sub-commands that stay inside a connection or the run's keys. Any
// other sub-command of these is server-wide (CLIENT KILL, CONFIG SET, SCRIPT FLUSH, ...).
const std::map<std::string, std::set<std::string>>& safe_subcommands() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"client",
       {"id", "getname", "setname", "info", "list", "reply", "tracking", "trackinginfo", "getredir",
        "caching", "no-evict", "no-touch", "help"}},
      // Not GET: CONFIG GET * or requirepass would put the server's password in a trace.
      {"config", {"help"}},
      {"script", {"load", "exists", "help"}},
      {"function", {"list", "stats", "dump", "help"}},
      {"slowlog", {"get", "len", "help"}},
      {"latency", {"latest", "history", "graph", "doctor", "histogram", "help"}},
      {"memory", {"usage", "stats", "doctor", "malloc-stats", "help"}},
      {"acl", {"whoami", "cat", "help"}},
  };
  return table;
}

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

}  // namespace

std::optional<std::string> server_wide_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  const std::string name = lower(argv[0]);
  if (std::find(kServerWide.begin(), kServerWide.end(), name) != kServerWide.end())
    return upper(name) + " acts on the whole server";
  auto container = safe_subcommands().find(name);
  if (container != safe_subcommands().end()) {
    std::string sub = argv.size() > 1 ? lower(argv[1]) : "";
    if (container->second.count(sub) == 0)
      return upper(name) + (sub.empty() ? "" : " " + upper(sub)) + " acts on the whole server";
    return std::nullopt;
  }
  // COPY src dst DB n writes into another database, which a run's cleanup does not sweep.
  if (name == "copy")
    for (size_t i = 3; i < argv.size(); i++)
      if (lower(argv[i]) == "db") return "COPY ... DB writes outside the run's database";
  return std::nullopt;
}

}  // namespace redlab::fake
