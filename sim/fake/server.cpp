// The fake server's engine: connections, the command queue, dispatch (processCommand),
// virtual-time scheduling, expiry, WATCH invalidation, blocking and long-running scripts.
// Command families live in t_*.cpp, keys.cpp, server_cmds.cpp, multi.cpp, pubsub.cpp and
// scripting.cpp.
#include "sim/fake/server.h"

#include "sim/core/assert.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "sim/fake/sha1.h"
#include "sim/fake/util.h"

namespace redlab::fake {

// Sets the origin of the work that follows (who it is for, the cause tag, the time its key
// events carry) and restores the previous one at the end of the scope. Only while observing:
// nothing else reads the origin, and the hot path pays a branch instead of six copies.
class Server::OriginScope {
 public:
  OriginScope(Server& server, ClientId client, int64_t cause, TimeUs at_us)
      : server_(server.observing() ? &server : nullptr) {
    if (!server_) return;
    saved_ = server.origin_;
    server.origin_ = Origin{client, cause, at_us};
  }
  ~OriginScope() {
    if (server_) server_->origin_ = saved_;
  }
  OriginScope(const OriginScope&) = delete;
  OriginScope& operator=(const OriginScope&) = delete;

 private:
  Server* server_;
  Origin saved_;
};

const std::string* HashValue::get(std::string_view field) const {
  auto it = index_.find(field);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

bool HashValue::set(std::string_view field, std::string value) {
  auto it = index_.find(field);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return false;
  }
  index_.emplace(std::string(field), entries_.size());
  entries_.emplace_back(std::string(field), std::move(value));
  return true;
}

bool HashValue::erase(std::string_view field) {
  auto it = index_.find(field);
  if (it == index_.end()) return false;
  size_t pos = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<ptrdiff_t>(pos));
  for (auto& [name, idx] : index_)
    if (idx > pos) idx--;
  return true;
}

// ---------------------------------------------------------------------------------------
// Ctx
// ---------------------------------------------------------------------------------------

Ctx::Ctx(Server& s, Client& c, const Argv& a, const CommandSpec& spec, TimeUs now,
         std::vector<Reply>* sink)
    : server(s), client(c), argv(a), cmd(spec), now_us(now), now_ms(s.unix_ms(now)), sink_(sink) {}

Reply* Ctx::direct_reply() {
  if (sink_ || !server.capture_) return nullptr;
  Server::Capture* cap = server.capture_for(client.id);
  if (!cap || !cap->first || cap->have_first || !cap->client || !cap->client->auto_read)
    return nullptr;
  cap->have_first = true;  // call() keeps only the first reply
  return cap->first;       // still nil: nothing written to it yet
}

void Ctx::reply(Reply r) {
  if (sink_) {
    sink_->push_back(std::move(r));
  } else if (Reply* out = direct_reply()) {
    *out = std::move(r);
  } else {
    server.emit(client.id, reply_at_us, std::move(r));
  }
}

void Ctx::reply_ok() {
  if (Reply* out = direct_reply()) {
    out->kind = Reply::Kind::Status;
    out->str.append("OK", 2);
    return;
  }
  reply(Reply::ok());
}

void Ctx::reply_int(int64_t v) {
  if (Reply* out = direct_reply()) {
    out->kind = Reply::Kind::Integer;
    out->integer = v;
    return;
  }
  reply(Reply::integer_reply(v));
}

void Ctx::reply_bulk(std::string_view s) {
  if (Reply* out = direct_reply()) {
    out->kind = Reply::Kind::Bulk;
    out->str.append(s.data(), s.size());  // str is empty: cheaper than assign
    return;
  }
  reply(Reply::bulk(s));
}

void Ctx::reply_nil() {
  if (direct_reply()) return;  // a default Reply is nil
  reply(Reply::nil());
}

void Ctx::reply_error(std::string_view msg) {
  if (server.observing() && !in_script && msg.substr(0, 5) == "BUSY ")
    server.note_busy_reply(client.id, now_us, server.origin_.cause);
  if (Reply* out = direct_reply()) {
    out->kind = Reply::Kind::Error;
    out->str.append(msg.data(), msg.size());
    return;
  }
  reply(Reply::error(std::string(msg)));
}

void Ctx::reply_unknown_subcommand() {
  std::string sub = argv.size() > 1 ? argv[1] : "";
  if (sub.size() > 128) sub.resize(128);
  std::string name = cmd.name;
  for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  reply_error("ERR unknown subcommand '" + sub + "'. Try " + name + " HELP.");
}

void Ctx::reply_arity_error(std::string_view fullname) {
  reply_error("ERR wrong number of arguments for '" + std::string(fullname) + "' command");
}

void Ctx::block(std::vector<std::string> keys, TimeUs timeout_us, Reply timeout_reply,
                std::shared_ptr<void> extra) {
  REDLAB_ASSERT(can_block() && "blocking commands answer at once inside MULTI and scripts");
  blocked_now = true;
  if (retrying) {
    // Keep the original place in the queue and the original deadline.
    if (extra) client.block.extra = std::move(extra);
    return;
  }
  if (client.blocked) server.unblock(client);
  client.blocked = true;
  client.block.db = client.db;
  client.block.keys = std::move(keys);
  client.block.timeout_at_us = timeout_us == 0 ? kNever : now_us + timeout_us;
  client.block.timeout_reply = std::move(timeout_reply);
  client.block.argv = argv;
  client.block.extra = std::move(extra);
  client.block.cause = server.origin_.cause;
  for (const std::string& k : client.block.keys) {
    auto& waiters = server.blocking_keys_[{client.db, k}];
    if (std::find(waiters.begin(), waiters.end(), client.id) == waiters.end())
      waiters.push_back(client.id);
  }
  if (server.observing()) {
    ServerEvent e;
    e.kind = ServerEvent::Kind::Blocked;
    e.at_us = now_us;
    e.client = client.id;
    e.cause = client.block.cause;
    e.db = client.db;
    // The keys, bounded: a BLPOP may name thousands.
    constexpr size_t kKeysShownMax = 16;
    const auto& keys_waited = client.block.keys;
    for (size_t i = 0; i < keys_waited.size() && i < kKeysShownMax; i++) {
      if (i) e.detail += ' ';
      e.detail += string_summary(keys_waited[i], kSummaryElementBytesMax);
    }
    if (keys_waited.size() > kKeysShownMax)
      e.detail += " ... (" + std::to_string(keys_waited.size()) + " keys)";
    e.timeout_at_us = client.block.timeout_at_us;
    server.observer(e);
  }
}

Db& Ctx::db() {
  return server.dbs_[static_cast<size_t>(client.db)];
}

Entry* Ctx::lookup_read(std::string_view key) {
  Db& d = db();
  auto it = d.dict.find(key);
  if (it == d.dict.end()) return nullptr;
  if (it->second.expire_at_ms >= 0 && now_ms > it->second.expire_at_ms) {
    server.expire_if_needed(d, client.db, key, now_ms, now_us);
    return nullptr;
  }
  return &it->second;
}

Entry& Ctx::set_key(std::string_view key, Value value, bool keep_ttl) {
  Db& d = db();
  auto it = d.dict.find(key);
  if (it == d.dict.end()) {
    it = d.dict.emplace(std::string(key), Entry{std::move(value), -1}).first;
    if (server.observing()) server.note_key(client.db, key, Server::Touch::Created, nullptr);
  } else {
    if (server.observing()) server.note_key(client.db, key, Server::Touch::Written, nullptr);
    // A replaced stream wakes its XREADGROUP waiters with an error (signalDeletedKeyAsReady).
    if (it->second.value.type() == ValueType::Stream) server.mark_key_ready(client.db, key);
    it->second.value = std::move(value);
    if (!keep_ttl && it->second.expire_at_ms >= 0) {
      d.expires.erase({it->second.expire_at_ms, std::string(key)});
      it->second.expire_at_ms = -1;
    }
  }
  return it->second;
}

bool Ctx::delete_key(std::string_view key, Value* take) {
  Db& d = db();
  auto it = d.dict.find(key);
  if (it == d.dict.end()) return false;
  if (server.observing()) server.note_key(client.db, key, Server::Touch::Deleted, &it->second);
  if (it->second.expire_at_ms >= 0) d.expires.erase({it->second.expire_at_ms, std::string(key)});
  // A deleted stream wakes its XREADGROUP waiters with an error (signalDeletedKeyAsReady).
  if (it->second.value.type() == ValueType::Stream) server.mark_key_ready(client.db, key);
  if (take) *take = std::move(it->second.value);
  d.dict.erase(it);
  return true;
}

void Ctx::set_expire(std::string_view key, int64_t at_ms) {
  Db& d = db();
  auto it = d.dict.find(key);
  REDLAB_ASSERT(it != d.dict.end() && "set_expire on a missing key");
  if (it->second.expire_at_ms >= 0) d.expires.erase({it->second.expire_at_ms, std::string(key)});
  it->second.expire_at_ms = at_ms;
  d.expires.emplace(at_ms, std::string(key));
  server.expire_floor_ms_ = std::min(server.expire_floor_ms_, at_ms);
  if (server.observing()) server.note_key(client.db, key, Server::Touch::Written, nullptr);
}

bool Ctx::remove_expire(std::string_view key) {
  Db& d = db();
  auto it = d.dict.find(key);
  if (it == d.dict.end() || it->second.expire_at_ms < 0) return false;
  d.expires.erase({it->second.expire_at_ms, std::string(key)});
  it->second.expire_at_ms = -1;
  if (server.observing()) server.note_key(client.db, key, Server::Touch::Written, nullptr);
  return true;
}

void Ctx::signal_modified(std::string_view key) {
  server.dirty_++;
  // Tested here too: the common case (nobody watches) costs no call.
  if (!server.watched_keys_.empty()) server.touch_watched_key(client.db, key);
  if (server.observing()) server.note_key(client.db, key, Server::Touch::Written, nullptr);
}

void Ctx::signal_key_ready(std::string_view key) {
  server.mark_key_ready(client.db, key);
}

void Ctx::server_watch(std::string_view key) {
  server.watch_key(client, key);
}

bool Ctx::int_arg(size_t i, int64_t& out, std::string_view msg) {
  auto v = parse_int64(argv[i]);
  if (!v) {
    reply_error(msg);
    return false;
  }
  out = *v;
  return true;
}

bool Ctx::double_arg(size_t i, double& out, std::string_view msg) {
  auto v = parse_double(argv[i]);
  if (!v) {
    reply_error(msg);
    return false;
  }
  out = *v;
  return true;
}

bool Ctx::timeout_arg(size_t i, TimeUs& out) {
  // getTimeoutFromObjectOrReply (7.0): string2ld, then (long long)ceill(seconds * 1000). A
  // product that does not fit a long long converts to LLONG_MIN on x86, so inf and 1e300 are
  // "negative"; a tiny negative one rounds up to 0, which waits forever; 0.0001 waits 1 ms.
  auto v = parse_long_double(argv[i]);
  if (!v) {
    reply_error(err::kTimeoutNotFloat);
    return false;
  }
  long double ms = std::ceil(*v * 1000.0L);
  constexpr long double kTwoPow63 = 9223372036854775808.0L;
  if (!(ms < kTwoPow63 && ms >= -kTwoPow63) || ms < 0) {
    reply_error(err::kTimeoutNegative);
    return false;
  }
  auto timeout_ms = static_cast<int64_t>(ms);
  // Past this a deadline lies beyond any run (and Redis' own now + timeout overflows into
  // "never" near the top of the range): wait forever.
  constexpr int64_t kTimeoutMsMax = INT64_MAX / 1000 / 4;
  out = timeout_ms > kTimeoutMsMax ? 0 : timeout_ms * 1000;
  return true;
}

bool Ctx::scan_cursor_arg() {
  // parseScanCursorOrReply: strtoul over the whole string, no leading blank.
  const std::string& cursor = argv[2];
  char* end = nullptr;
  errno = 0;
  std::strtoul(cursor.c_str(), &end, 10);
  if (cursor.empty() || std::isspace(static_cast<unsigned char>(cursor[0])) ||
      end != cursor.c_str() + cursor.size() || errno == ERANGE) {
    reply_error("ERR invalid cursor");
    return false;
  }
  return true;
}

bool Ctx::scan_options(const std::string*& pattern) {
  // scanGenericCommand. COUNT is checked but unused: small collections come in one page.
  pattern = nullptr;
  for (size_t j = 3; j < argc(); j += 2) {
    bool has_value = j + 1 < argc();
    if (equals_nocase(arg(j), "count") && has_value) {
      int64_t count;
      if (!int_arg(j + 1, count)) return false;
      if (count < 1) {
        reply_error(err::kSyntax);
        return false;
      }
    } else if (equals_nocase(arg(j), "match") && has_value) {
      pattern = arg(j + 1) == "*" ? nullptr : &arg(j + 1);
    } else {
      reply_error(err::kSyntax);
      return false;
    }
  }
  return true;
}

Prng Ctx::random_source(std::string_view key) const {
  return Prng(fnv1a(key) ^ static_cast<uint64_t>(server.commands_processed()));
}

// ---------------------------------------------------------------------------------------
// Server: setup and connections
// ---------------------------------------------------------------------------------------

void mark_subcommand_containers(CommandTable& table);  // below, beside the table

namespace {

// The command table and find_command's index into it: open addressing on a hash of the
// lower-cased name, so a lookup neither copies the name into a key nor hashes it twice. The
// same for every server and never changed after it is built, so built once per process (a
// run builds several servers; explore, thousands).
struct CommandRegistry {
  CommandTable table;
  std::vector<const CommandTable::value_type*> index;
  size_t mask = 0;
};

const CommandRegistry& command_registry();

}  // namespace

Server::Server(ServerOptions options) : options_(std::move(options)) {
  REDLAB_ASSERT(options_.databases > 0);
  // A replication id of 40 hex digits, from the name: a run stays a pure function of its input.
  replid_ = sha1_hex("redlab replid " + options_.name);
  dbs_.resize(static_cast<size_t>(options_.databases));
  config_ = {
      {"busy-reply-threshold", "5000"},
      {"client-output-buffer-limit",
       "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"},
      {"slowlog-log-slower-than", "10000"},
      {"slowlog-max-len", "128"},
      {"maxmemory", "0"},
      {"maxmemory-policy", "noeviction"},
      {"timeout", "0"},
      {"hz", "10"},
      {"databases", std::to_string(options_.databases)},
      {"save", ""},
      {"appendonly", "no"},
      {"appendfsync", "everysec"},
      {"notify-keyspace-events", ""},
      {"list-max-listpack-size", "-2"},
      {"hash-max-listpack-entries", "128"},
      {"stream-node-max-entries", "100"},
      {"lua-time-limit", "5000"},
  };
}

Server::~Server() = default;

namespace {

// find_command: names of 32 bytes or more are not looked up (no command is that long).
constexpr size_t kCommandNameMax = 32;

// find_command's hash: FNV-1a (sim/core/prng.h), fed the lower-cased bytes as they are copied.
constexpr uint64_t kFnvOffset = kFnv1aOffset;
constexpr uint64_t kFnvPrime = kFnv1aPrime;

}  // namespace

namespace {

const CommandRegistry& command_registry() {
  static const CommandRegistry registry = [] {
    CommandRegistry r;
    CommandTable& t = r.table;
    register_string_commands(t);
    register_key_commands(t);
    register_server_commands(t);
    register_multi_commands(t);
    register_hash_commands(t);
    register_list_commands(t);
    register_set_commands(t);
    register_zset_commands(t);
    register_stream_commands(t);
    register_pubsub_commands(t);
    register_scripting_commands(t);
    register_replication_commands(t);
    mark_subcommand_containers(t);
    // service_time looks at argv or the keyspace only for these (by name, as it does).
    for (auto& [name, spec] : t) {
      spec.variable_cost = spec.name == "debug" || spec.name == "keys";
      spec.upper_name = spec.name;
      for (char& ch : spec.upper_name)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    size_t slots = 16;
    while (slots < t.size() * 4) slots *= 2;  // at most a quarter full: short probes
    r.index.assign(slots, nullptr);
    r.mask = slots - 1;
    for (const auto& entry : t) {
      uint64_t h = kFnvOffset;
      for (char ch : entry.first) h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
      size_t slot = static_cast<size_t>(h) & r.mask;
      while (r.index[slot]) slot = (slot + 1) & r.mask;
      r.index[slot] = &entry;
    }
    return r;
  }();
  return registry;
}

}  // namespace

const CommandSpec* Server::find_command(std::string_view name) const {
  // Case-blind for the ASCII letters only: the table's keys are matched byte for byte
  // against the name with A-Z lower-cased.
  char lower[kCommandNameMax];
  const size_t n = name.size();
  if (n >= kCommandNameMax) return nullptr;
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
    lower[i] = ch;
    h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
  }
  const CommandRegistry& r = command_registry();
  for (size_t slot = static_cast<size_t>(h) & r.mask;; slot = (slot + 1) & r.mask) {
    const CommandTable::value_type* entry = r.index[slot];
    if (!entry) return nullptr;
    // A byte loop: names are a few bytes, cheaper than a memcmp call.
    const std::string& key = entry->first;
    if (key.size() != n) continue;
    size_t i = 0;
    while (i < n && key[i] == lower[i]) i++;
    if (i == n) return &entry->second;
  }
}

int64_t Server::config_int(std::string_view name) const {
  auto it = config_.find(std::string(name));
  if (it == config_.end()) return 0;
  return parse_int64(it->second).value_or(0);
}

ClientId Server::connect(TimeUs now_us) {
  auto c = std::make_unique<Client>();
  c->id = next_client_id_++;
  c->created_us = now_us;
  c->last_interaction_us = now_us;
  c->address = "10.0.0." + std::to_string(c->id % 250 + 2) + ":" + std::to_string(40000 + c->id);
  ClientId id = c->id;
  clients_.emplace(id, std::move(c));
  return id;
}

Client* Server::client(ClientId id) {
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second.get();
}

void Server::watch_key(Client& c, std::string_view key) {
  std::pair<int, std::string> k{c.db, std::string(key)};
  if (std::find(c.watched.begin(), c.watched.end(), k) != c.watched.end()) return;
  watched_keys_[k].push_back(c.id);
  c.watched.push_back(std::move(k));
}

void Server::unwatch_all(Client& c) {
  for (auto& key : c.watched) {
    auto it = watched_keys_.find(key);
    if (it == watched_keys_.end()) continue;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), c.id), v.end());
    if (v.empty()) watched_keys_.erase(it);
  }
  c.watched.clear();
  c.watch_dirty = false;
}

void Server::unblock(Client& c) {
  if (!c.blocked) return;
  for (const std::string& k : c.block.keys) {
    auto it = blocking_keys_.find(std::pair<int, std::string>{c.block.db, k});
    if (it == blocking_keys_.end()) continue;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), c.id), v.end());
    if (v.empty()) blocking_keys_.erase(it);
  }
  c.blocked = false;
  c.block = BlockState{};
}

void Server::disconnect(ClientId id, TimeUs now_us) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = *it->second;
  for (Capture* cap = capture_; cap; cap = cap->outer)
    if (cap->client == &c) cap->client = nullptr;
  unwatch_all(c);
  if (c.blocked && observing()) note_unblocked(c, now_us, "disconnected");
  unblock(c);
  for (const auto& ch : c.channels) {
    auto cit = pubsub_channels.find(ch);
    if (cit == pubsub_channels.end()) continue;
    auto& v = cit->second;
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
    if (v.empty()) pubsub_channels.erase(cit);
  }
  for (const auto& p : c.patterns) {
    auto pit = pubsub_patterns.find(p);
    if (pit == pubsub_patterns.end()) continue;
    auto& v = pit->second;
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
    if (v.empty()) pubsub_patterns.erase(pit);
  }
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [id](const Pending& p) { return p.client == id; }),
               queue_.end());
  clients_.erase(it);
}

void Server::close_client_later(ClientId id, const std::string& reason) {
  // origin_ is the command that decided it (CLIENT KILL, QUIT), or none (output limits).
  to_close_.push_back(Closing{id, reason, origin_.client, origin_.cause});
}

void Server::finish_close(const Closing& closing, TimeUs now_us) {
  Client* c = client(closing.id);
  if (!c) return;
  if (observing()) {
    if (c->blocked) {
      note_unblocked(*c, now_us, "killed");
      unblock(*c);
    }
    ServerEvent e;
    e.kind = ServerEvent::Kind::ClientCut;
    e.at_us = now_us;
    e.client = closing.id;
    e.cause = closing.cause;
    e.detail = closing.reason;
    e.by_client = closing.by_client;
    observer(e);
  }
  disconnect(closing.id, now_us);
  closed_.emplace_back(closing.id, now_us);
}

// ---------------------------------------------------------------------------------------
// Observation: the server's own events (ServerEvent)
// ---------------------------------------------------------------------------------------

namespace {

// Past this many keys noted by one command, touched_ is searched through an index.
constexpr size_t kTouchedLinearMax = 16;

std::string touched_index_key(int db, std::string_view key) {
  std::string k = std::to_string(db);
  k += ' ';
  k.append(key.data(), key.size());
  return k;
}

bool is_container(ValueType t) {
  return t == ValueType::List || t == ValueType::Hash || t == ValueType::Set ||
         t == ValueType::ZSet;
}

bool is_empty_container(const Value& v) {
  switch (v.type()) {
    case ValueType::List:
      return std::get<ListValue>(v.data).empty();
    case ValueType::Hash:
      return std::get<HashValue>(v.data).size() == 0;
    case ValueType::Set:
      return std::get<SetValue>(v.data).empty();
    case ValueType::ZSet:
      return std::get<ZSetValue>(v.data).scores.empty();
    case ValueType::String:
    case ValueType::Stream:
      return false;
  }
  return false;
}

std::string upper_bounded(std::string_view s) {
  constexpr size_t kNameBytesMax = 32;
  std::string out(s.substr(0, kNameBytesMax));
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

void Server::note_key(int db, std::string_view key, Touch how, const Entry* entry) {
  REDLAB_ASSERT(db >= 0 && static_cast<size_t>(db) < dbs_.size());
  TouchedKey* t = nullptr;
  if (touched_index_.empty()) {
    for (TouchedKey& k : touched_)
      if (k.db == db && k.key == key) {
        t = &k;
        break;
      }
  } else {
    auto it = touched_index_.find(touched_index_key(db, key));
    if (it != touched_index_.end()) t = &touched_[it->second];
  }
  if (!t) {
    touched_.push_back(TouchedKey{db, std::string(key), how != Touch::Created, false, "", {}});
    t = &touched_.back();
    if (touched_.size() > kTouchedLinearMax) {
      if (touched_index_.empty()) {
        for (size_t i = 0; i < touched_.size(); i++)
          touched_index_.emplace(touched_index_key(touched_[i].db, touched_[i].key), i);
      } else {
        touched_index_.emplace(touched_index_key(db, key), touched_.size() - 1);
      }
    }
  }
  if (how != Touch::Deleted || t->captured) return;
  // The first deletion of the key in this command: what it held then. A container the
  // command emptied before deleting it (a list popped empty) held, before the command, what
  // was last reported of it.
  REDLAB_ASSERT(entry && "a deletion is noted with the entry it removes");
  t->captured = true;
  t->type = type_name(entry->value.type());
  if (is_empty_container(entry->value) && static_cast<size_t>(db) < reported_containers_.size()) {
    const ReportedKeys& reported = reported_containers_[static_cast<size_t>(db)];
    auto it = reported.find(key);
    if (it != reported.end()) {
      t->value = it->second.value;
      return;
    }
  }
  t->value = value_summary(entry->value);
}

void Server::note_db_deleted(int db_index) {
  const Db& d = dbs_[static_cast<size_t>(db_index)];
  std::vector<const std::pair<const std::string, Entry>*> entries;
  entries.reserve(d.dict.size());
  for (const auto& entry : d.dict) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : entries)
    note_key(db_index, entry->first, Touch::Deleted, &entry->second);
}

void Server::flush_key_events() {
  std::vector<TouchedKey> keys;
  keys.swap(touched_);
  touched_index_.clear();
  if (observing()) {
    if (reported_containers_.size() != dbs_.size()) reported_containers_.resize(dbs_.size());
    for (TouchedKey& t : keys) {
      const Db& d = dbs_[static_cast<size_t>(t.db)];
      ReportedKeys& reported = reported_containers_[static_cast<size_t>(t.db)];
      ServerEvent e;
      e.at_us = origin_.at_us;
      e.client = origin_.client;
      e.cause = origin_.cause;
      e.db = t.db;
      auto it = d.dict.find(t.key);
      if (it != d.dict.end()) {
        e.kind = ServerEvent::Kind::KeyWritten;
        const char* type = type_name(it->second.value.type());
        e.type = type;
        e.value = value_summary(it->second.value);
        e.expire_at_ms = it->second.expire_at_ms;
        if (is_container(it->second.value.type())) {
          Reported& r = reported[t.key];
          r.type = type;
          r.value = e.value;
        } else if (!reported.empty()) {
          reported.erase(t.key);  // it held a container before (SET over a list)
        }
      } else {
        // Gone: report it if it was there before the command (deleted, or a container
        // reported earlier), not if this command created and removed it.
        auto rit = reported.empty() ? reported.end() : reported.find(t.key);
        const bool was_reported = rit != reported.end();
        if (!(t.captured && t.existed) && !was_reported) continue;
        e.kind = ServerEvent::Kind::KeyDeleted;
        if (t.captured) {
          e.type = t.type;
          e.value = std::move(t.value);
        } else {
          e.type = rit->second.type;
          e.value = rit->second.value;
        }
        if (was_reported) reported.erase(rit);
      }
      e.key = std::move(t.key);
      observer(e);
    }
  }
  // Keep the vector's capacity for the next command (unless an observer noted keys meanwhile).
  if (touched_.empty()) {
    keys.clear();
    touched_.swap(keys);
  }
}

void Server::note_served(const Client& c, const CommandSpec* spec, const Argv& argv, TimeUs at_us,
                         TimeUs duration_us, std::string detail) {
  ServerEvent e;
  e.kind = ServerEvent::Kind::Served;
  e.at_us = at_us;
  e.duration_us = duration_us;
  e.client = c.id;
  e.cause = origin_.cause;
  if (spec) {
    e.command = spec->upper_name;
    if (spec->has_subcommands && argv.size() >= 2) {
      e.command += ' ';
      e.command += upper_bounded(argv[1]);
    }
  } else if (!argv.empty()) {
    e.command = upper_bounded(argv[0]);
  }
  e.detail = std::move(detail);
  observer(e);
}

void Server::note_command_end(const Client& c, const CommandSpec& spec, const Argv& argv,
                              TimeUs now_us, TimeUs cost_us, bool nested, bool retrying,
                              bool blocked) {
  // The keys it wrote, read back now (after each command of an EXEC, each redis.call).
  if (!touched_.empty()) flush_key_events();
  if (nested) return;  // part of its EXEC or script call
  if (running_fresh_) {
    // It started a script: ScriptStart or, if it ends in its first slice, Served then.
    running_fresh_ = false;
    running_spec_ = &spec;
  } else if (!(retrying && blocked)) {
    note_served(c, &spec, argv, now_us, cost_us, blocked ? "blocked" : retrying ? "woken" : "");
  }
}

void Server::note_busy_reply(ClientId id, TimeUs at_us, int64_t cause) {
  ServerEvent e;
  e.kind = ServerEvent::Kind::BusyReply;
  e.at_us = at_us;
  e.client = id;
  e.cause = cause;
  observer(e);
}

void Server::note_unblocked(const Client& c, TimeUs at_us, const char* why) {
  ServerEvent e;
  e.kind = ServerEvent::Kind::Unblocked;
  e.at_us = at_us;
  e.client = c.id;
  e.cause = c.block.cause;
  e.db = c.block.db;
  e.detail = why;
  observer(e);
}

void Server::note_script_slice(TimeUs end_us, bool done) {
  running_slices_++;
  const bool first = running_slices_ == 1;
  ServerEvent e;
  e.client = running_client_;
  e.cause = running_cause_;
  if (running_spec_) e.command = running_spec_->upper_name;
  if (first && done && !running_kill_requested_) {
    // Done in its first slice: an ordinary command, served for as long as it ran.
    e.kind = ServerEvent::Kind::Served;
    e.at_us = running_started_us_;
    e.duration_us = end_us - running_started_us_;
    observer(e);
    return;
  }
  if (first) {
    e.kind = ServerEvent::Kind::ScriptStart;
    e.at_us = running_started_us_;
    observer(e);
  }
  if (!done) return;
  if (running_kill_requested_) {
    ServerEvent killed = e;
    killed.kind = ServerEvent::Kind::ScriptKilled;
    killed.at_us = end_us;
    killed.by_client = running_killed_by_;
    killed.detail = running_killed_by_ ? "SCRIPT KILL" : "script_call_limit_us";
    observer(killed);
    e.detail = "killed";
  }
  e.kind = ServerEvent::Kind::ScriptEnd;
  e.at_us = end_us;
  e.duration_us = end_us - running_started_us_;
  observer(e);
}

// ---------------------------------------------------------------------------------------
// Whole databases: FLUSHDB, FLUSHALL, SWAPDB
// ---------------------------------------------------------------------------------------

void Server::empty_db(int db_index) {
  REDLAB_ASSERT(db_index >= 0 && static_cast<size_t>(db_index) < dbs_.size());
  dirty_++;
  if (observing()) note_db_deleted(db_index);
  dbs_[static_cast<size_t>(db_index)] = Db{};
}

void Server::empty_all_dbs() {
  for (size_t i = 0; i < dbs_.size(); i++) empty_db(static_cast<int>(i));
}

void Server::swap_dbs(int a, int b) {
  REDLAB_ASSERT(a >= 0 && static_cast<size_t>(a) < dbs_.size());
  REDLAB_ASSERT(b >= 0 && static_cast<size_t>(b) < dbs_.size());
  if (a == b) return;
  dirty_++;
  Db& da = dbs_[static_cast<size_t>(a)];
  Db& db = dbs_[static_cast<size_t>(b)];
  // touchAllWatchedKeysInDb both ways: a watched key of either database that exists in
  // either one changes (appears, disappears or gets another value).
  for (auto& [key, ids] : watched_keys_) {
    if (key.first != a && key.first != b) continue;
    if (!da.dict.count(key.second) && !db.dict.count(key.second)) continue;
    for (ClientId id : ids)
      if (Client* c = client(id)) c->watch_dirty = true;
  }
  if (observing()) {
    // Every key of both databases, in each of them: deleted where it was, written (or
    // created) where it lands; flush_key_events then reports the outcome.
    std::vector<std::string_view> names;
    names.reserve(da.dict.size() + db.dict.size());
    for (const auto& [name, entry] : da.dict) names.push_back(name);
    for (const auto& [name, entry] : db.dict) names.push_back(name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (int index : {a, b}) {
      const Db& d = dbs_[static_cast<size_t>(index)];
      for (std::string_view name : names) {
        auto it = d.dict.find(name);
        if (it != d.dict.end()) {
          note_key(index, name, Touch::Deleted, &it->second);
        } else {
          note_key(index, name, Touch::Created, nullptr);
        }
      }
    }
  }
  std::swap(da, db);
  // scanDatabaseForReadyKeys: clients stay blocked on their database; a key they wait for
  // may exist there now. (The names are copied: mark_key_ready adds to ready_keys_ only.)
  for (const auto& [key, ids] : blocking_keys_) {
    if (key.first != a && key.first != b) continue;
    if (dbs_[static_cast<size_t>(key.first)].dict.count(key.second))
      mark_key_ready(key.first, key.second);
  }
}

// ---------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------

void Server::emit(ClientId id, TimeUs at_us, Reply&& reply) {
  Capture* cap = capture_ ? capture_for(id) : nullptr;
  Client* c = cap && cap->client ? cap->client : client(id);
  if (!c) return;
  if (!c->auto_read) c->unread_bytes += static_cast<int64_t>(resp_size(reply));
  if (cap) {
    if (cap->all) {
      cap->all->push_back(std::move(reply));
    } else if (cap->first && !cap->have_first) {
      *cap->first = std::move(reply);
      cap->have_first = true;
    }  // call() keeps only the first reply
    return;
  }
#if defined(__cpp_aggregate_paren_init)
  outputs_.emplace_back(id, at_us, std::move(reply));  // in place: one Reply move fewer
#else
  outputs_.push_back(Output{id, at_us, std::move(reply)});  // clang < 16: no paren-init
#endif
}

std::vector<Output> Server::take_outputs() {
  // Usually one output, or several already in order: std::stable_sort would still take a
  // temporary buffer from the heap.
  auto earlier = [](const Output& a, const Output& b) { return a.at_us < b.at_us; };
  if (!std::is_sorted(outputs_.begin(), outputs_.end(), earlier))
    std::stable_sort(outputs_.begin(), outputs_.end(), earlier);
  std::vector<Output> out;
  out.swap(outputs_);
  return out;
}

std::vector<std::pair<ClientId, TimeUs>> Server::take_closed() {
  std::vector<std::pair<ClientId, TimeUs>> out;
  out.swap(closed_);
  return out;
}

size_t Server::pending_commands(ClientId id) const {
  size_t n = 0;
  for (const Pending& p : queue_)
    if (p.client == id) n++;
  return n;
}

void Server::client_read(ClientId id, int64_t bytes) {
  Client* c = client(id);
  if (!c) return;
  c->unread_bytes = std::max<int64_t>(0, c->unread_bytes - bytes);
}

namespace {

// The pubsub class of client-output-buffer-limit. CONFIG SET stores the option normalized
// ("normal H S SEC slave H S SEC pubsub H S SEC", bytes), so plain integers are parsed here.
struct OutputLimit {
  int64_t hard_bytes = 0;  // 0 = no limit
  int64_t soft_bytes = 0;
  TimeUs soft_us = 0;
};

OutputLimit pubsub_output_limit(const std::map<std::string, std::string>& config) {
  OutputLimit limit;
  auto it = config.find("client-output-buffer-limit");
  if (it == config.end()) return limit;
  const std::string& spec = it->second;
  std::vector<std::string> words;
  size_t p = 0;
  while (p < spec.size()) {  // each step consumes at least one byte
    size_t q = spec.find(' ', p);
    if (q == std::string::npos) q = spec.size();
    if (q > p) words.push_back(spec.substr(p, q - p));
    p = q + 1;
  }
  for (size_t i = 0; i + 3 < words.size(); i += 4) {
    if (words[i] != "pubsub") continue;
    limit.hard_bytes = parse_int64(words[i + 1]).value_or(0);
    limit.soft_bytes = parse_int64(words[i + 2]).value_or(0);
    int64_t seconds = std::clamp<int64_t>(parse_int64(words[i + 3]).value_or(0), 0, INT32_MAX);
    limit.soft_us = seconds * 1000000;
  }
  return limit;
}

// A subscriber that does not read on its own: the only kind the limit applies to here.
bool output_limited(const Client& c) {
  return c.subscriptions() > 0 && !c.auto_read;
}

}  // namespace

TimeUs Server::next_output_limit_us() const {
  TimeUs best = kNever;
  bool any = false;
  for (const auto& [id, c] : clients_)
    any = any || (output_limited(*c) && c->soft_limit_since_us >= 0);
  if (!any) return best;
  OutputLimit limit = pubsub_output_limit(config_);
  if (limit.soft_bytes <= 0) return best;
  for (const auto& [id, c] : clients_) {
    if (!output_limited(*c) || c->soft_limit_since_us < 0) continue;
    best = std::min(best, std::max(clock_us_, c->soft_limit_since_us + limit.soft_us));
  }
  return best;
}

void Server::check_output_limits(TimeUs now_us) {
  // client-output-buffer-limit, pubsub class only (normal clients read their replies as they
  // come in this model). checkClientOutputBufferLimits: a subscriber that does not read
  // (auto_read = false; the host reports reads with client_read) is closed as soon as its
  // unread output reaches the hard limit, or once it has stayed at or above the soft limit
  // for soft_seconds. Redis also runs this check from clientsCron, so the soft limit fires
  // without any further output: next_output_limit_us wakes the server at that deadline.
  bool any = false;
  for (const auto& [id, c] : clients_) {
    if (output_limited(*c)) {
      any = true;
    } else {
      c->soft_limit_since_us = -1;
    }
  }
  if (!any) return;
  OutputLimit limit = pubsub_output_limit(config_);
  for (auto& [id, cp] : clients_) {
    Client& c = *cp;
    if (!output_limited(c)) continue;
    bool hard = limit.hard_bytes > 0 && c.unread_bytes >= limit.hard_bytes;
    bool soft = false;
    if (limit.soft_bytes > 0 && c.unread_bytes >= limit.soft_bytes) {
      if (c.soft_limit_since_us < 0) c.soft_limit_since_us = now_us;
      soft = now_us - c.soft_limit_since_us >= limit.soft_us;
    } else {
      c.soft_limit_since_us = -1;
    }
    if (hard) {
      close_client_later(id,
                         "client-output-buffer-limit pubsub: " + std::to_string(c.unread_bytes) +
                             " unread bytes reached the hard limit");
    } else if (soft) {
      close_client_later(id, "client-output-buffer-limit pubsub: over the soft limit for " +
                                 std::to_string(limit.soft_us / 1000000) + " s");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Keyspace notifications: WATCH, blocking, expiry
// ---------------------------------------------------------------------------------------

void Server::touch_watched_key(int db, std::string_view key) {
  if (watched_keys_.empty()) return;
  auto it = watched_keys_.find(std::pair<int, std::string>{db, std::string(key)});
  if (it == watched_keys_.end()) return;
  for (ClientId id : it->second)
    if (Client* c = client(id)) c->watch_dirty = true;
}

void Server::touch_all_watched_keys() {
  for (auto& [key, ids] : watched_keys_) {
    const Db& d = dbs_[static_cast<size_t>(key.first)];
    if (!d.dict.count(key.second)) continue;
    for (ClientId id : ids)
      if (Client* c = client(id)) c->watch_dirty = true;
  }
}

void Server::mark_key_ready(int db, std::string_view key) {
  if (blocking_keys_.empty()) return;
  std::pair<int, std::string> k{db, std::string(key)};
  if (!blocking_keys_.count(k)) return;
  if (std::find(ready_keys_.begin(), ready_keys_.end(), k) == ready_keys_.end())
    ready_keys_.push_back(std::move(k));
}

void Server::expire_if_needed(Db& db, int db_index, std::string_view key, int64_t now_ms,
                              TimeUs now_us) {
  auto it = db.dict.find(key);
  if (it == db.dict.end()) return;
  if (it->second.expire_at_ms < 0 || now_ms <= it->second.expire_at_ms) return;
  std::string name(key);
  if (observing()) {
    ServerEvent e;
    e.kind = ServerEvent::Kind::KeyExpired;
    e.at_us = now_us;
    e.db = db_index;
    e.key = name;
    e.type = type_name(it->second.value.type());
    e.value = value_summary(it->second.value);
    e.expire_at_ms = it->second.expire_at_ms;
    if (static_cast<size_t>(db_index) < reported_containers_.size() &&
        !reported_containers_[static_cast<size_t>(db_index)].empty())
      reported_containers_[static_cast<size_t>(db_index)].erase(name);
    observer(e);
  }
  db.expires.erase({it->second.expire_at_ms, name});
  db.dict.erase(it);
  touch_watched_key(db_index, name);
  // propagateDeletion: the replicas delete it when the primary does (a DEL in the stream).
  if (repl_backlog_ && !is_replica()) repl_pending_.push_back(Propagated{db_index, {"DEL", name}});
}

TimeUs Server::virtual_time_of_unix_ms(int64_t at_ms) const {
  return at_ms * 1000 - options_.epoch_us - clock_offset_us_;
}

TimeUs Server::next_expiry_us() const {
  TimeUs best = kNever;
  for (const Db& d : dbs_) {
    if (d.expires.empty()) continue;
    // Redis treats a key as expired when now_ms > expire_at_ms.
    int64_t at_ms = d.expires.begin()->first;
    if (at_ms >= INT64_MAX / 1000 - 1) continue;
    TimeUs t = virtual_time_of_unix_ms(at_ms + 1);
    best = std::min(best, std::max(t, clock_us_));
  }
  return best;
}

void Server::check_expire_floor() const {
  for (const Db& d : dbs_)
    REDLAB_ASSERT((d.expires.empty() || d.expires.begin()->first >= expire_floor_ms_) &&
                  "an expiry added without Ctx::set_expire");
}

void Server::expire_walk(TimeUs now_us) {
  int64_t now_ms = unix_ms(now_us);
  int64_t floor_ms = INT64_MAX;
  for (Db& d : dbs_) {
    if (d.expires.empty()) continue;
    const int db_index = static_cast<int>(&d - dbs_.data());
    // Bounded by the number of keys with a TTL.
    while (!d.expires.empty() && d.expires.begin()->first < now_ms) {
      std::string key = d.expires.begin()->second;
      expire_if_needed(d, db_index, key, now_ms, now_us);
    }
    if (!d.expires.empty()) floor_ms = std::min(floor_ms, d.expires.begin()->first);
  }
  expire_floor_ms_ = floor_ms;
  // Active expiry is no command: its DELs leave at once.
  if (!repl_pending_.empty() && !running_) propagate_flush(now_us, 0);
}

void Server::jump_clock(TimeUs delta_us, TimeUs now_us) {
  clock_offset_us_ += delta_us;
  if (observing()) {
    ServerEvent e;
    e.kind = ServerEvent::Kind::ClockJump;
    e.at_us = now_us;
    e.delta_us = delta_us;
    e.detail = (delta_us >= 0 ? "+" : "") + std::to_string(delta_us / 1000) + " ms";
    observer(e);
  }
}

TimeUs Server::next_block_timeout_us() const {
  TimeUs best = kNever;
  for (const auto& [id, c] : clients_)
    if (c->blocked) best = std::min(best, c->block.timeout_at_us);
  return best;
}

void Server::timeout_blocked(TimeUs now_us) {
  for (auto& [id, c] : clients_) {
    if (!c->blocked || c->block.timeout_at_us > now_us) continue;
    // WAIT's timeout answers the replicas that have acked by now (replyToBlockedClientTimedOut).
    Reply r = c->block.wait_offset >= 0 ? Reply::integer_reply(count_acks(c->block.wait_offset))
                                        : c->block.timeout_reply;
    if (observing()) note_unblocked(*c, now_us, "timeout");
    unblock(*c);
    emit(id, now_us, std::move(r));
  }
}

void Server::handle_ready_keys(TimeUs now_us) {
  // A script's pushes wake waiters when it has finished (Redis handles ready keys after the
  // whole command), never from a command served while it is busy.
  if (running_) return;
  // Serving one waiter may make other keys ready (BLMOVE pushes elsewhere); bounded.
  constexpr int kRoundsMax = 1000;
  for (int round = 0; round < kRoundsMax && !ready_keys_.empty(); round++) {
    auto ready = std::move(ready_keys_);
    ready_keys_.clear();
    for (const auto& key : ready) {
      auto it = blocking_keys_.find(key);
      if (it == blocking_keys_.end()) continue;
      std::vector<ClientId> waiters = it->second;  // FIFO: first blocked, first served
      for (ClientId id : waiters) {
        Client* c = client(id);
        if (!c || !c->blocked) continue;
        const CommandSpec* spec = find_command(c->block.argv[0]);
        REDLAB_ASSERT(spec && "a blocked command is always a known command");
        Argv argv = c->block.argv;
        c->block.ready_key = key.second;
        int saved_db = c->db;
        c->db = c->block.db;
        bool blocked = false;
        {
          OriginScope origin(*this, id, c->block.cause, now_us);
          run_command(*c, *spec, argv, now_us, nullptr, false, false, true, blocked);
        }
        c->db = saved_db;
        if (!blocked) {
          if (observing()) note_unblocked(*c, now_us, "served");
          unblock(*c);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------

TimeUs Server::service_time(const CommandSpec& spec, const Argv& argv) const {
  TimeUs t = spec.service_us > 0 ? spec.service_us : options_.service_us;
  // string_view literals: compared by size first, no strlen per command.
  if (spec.name == std::string_view("debug") && argv.size() == 3 &&
      equals_nocase(argv[1], "sleep")) {
    // debug.c (7.0): utime = (long long)(strtod(arg) * 1000000), then nanosleep(utime / 1e6 s,
    // (utime % 1e6) * 1000 ns). Garbage parses as 0; a negative time is EINVAL and NaN or a
    // time past INT64_MAX us converts to INT64_MIN on x86-64 (EINVAL too): no sleep. Anything
    // else sleeps, 1e6 s and more included, capped where virtual time would overflow.
    constexpr TimeUs kSleepMaxUs = std::numeric_limits<TimeUs>::max() / 4;
    double us = std::strtod(argv[2].c_str(), nullptr) * 1e6;
    if (us >= 1 && us < 9223372036854775808.0) t += std::min(static_cast<TimeUs>(us), kSleepMaxUs);
  } else if (spec.name == std::string_view("keys")) {
    // KEYS walks the whole keyspace: visibly slow on a big one.
    size_t n = 0;
    for (const Db& d : dbs_) n += d.dict.size();
    t += static_cast<TimeUs>(n / 10);
  }
  return t;
}

int64_t Server::slowlog_threshold() {
  // A map lookup and a parse per command were a sixth of a GET's cost: keep the entry (map
  // nodes do not move; it is looked up again once config() has handed out the map, which may
  // have been changed through it) and the text last parsed (CONFIG SET changes it in place).
  static constexpr std::string_view kName = "slowlog-log-slower-than";
  if (!slowlog_threshold_entry_ || slowlog_threshold_generation_ != config_generation_) {
    slowlog_threshold_generation_ = config_generation_;
    slowlog_threshold_entry_ = nullptr;
    auto it = config_.find(std::string(kName));
    if (it == config_.end()) return 0;
    slowlog_threshold_entry_ = &*it;
    slowlog_threshold_text_ = it->second;
    slowlog_threshold_ = parse_int64(it->second).value_or(0);
  }
  if (slowlog_threshold_entry_->second != slowlog_threshold_text_) {
    slowlog_threshold_text_ = slowlog_threshold_entry_->second;
    slowlog_threshold_ = parse_int64(slowlog_threshold_text_).value_or(0);
  }
  return slowlog_threshold_;
}

void Server::run_command(Client& c, const CommandSpec& spec, const Argv& argv, TimeUs now_us,
                         std::vector<Reply>* sink, bool in_exec, bool in_script, bool retrying,
                         bool& blocked) {
  Ctx ctx(*this, c, argv, spec, now_us, sink);
  ctx.in_exec = in_exec;
  ctx.in_script = in_script;
  ctx.retrying = retrying;
  TimeUs cost = command_cost(spec, argv);
  ctx.reply_at_us = now_us + cost;
  const uint64_t dirty_before = dirty_;
  spec.handler(ctx);
  blocked = ctx.blocked_now;
  // propagate(): a write that changed the data feeds the replicas (replication.cpp); the
  // call's effects leave together when the call ends (a script's when it finishes).
  if (repl_backlog_ && dirty_ != dirty_before) propagate_note(c, spec, argv);
  if (repl_backlog_ && !repl_pending_.empty() && !in_exec && !in_script &&
      !(running_ && running_client_ == c.id))
    propagate_flush(now_us, c.id);
  commands_processed_++;
  if (!in_exec && !in_script && !retrying) {
    if (c.last_command_spec != &spec) {
      c.last_command = spec.name;
      c.last_command_spec = &spec;
    }
    c.last_interaction_us = now_us;
  }
  // Slowlog: the modelled execution time. A command that started a script is logged when
  // the script ends, with the script's whole run (call() times the EVAL to its end).
  if (running_unlogged_ && running_client_ == c.id) {
    running_unlogged_ = false;
    running_slowlog_armed_ = true;
    running_slowlog_ = SlowlogEntry{0, 0, 0, slowlog_argv(argv), c.address, c.name, 0};
  } else if (!blocked && spec.name != std::string_view("exec")) {
    int64_t threshold = slowlog_threshold();
    if (threshold >= 0 && cost >= threshold)
      slowlog_push(SlowlogEntry{0, 0, cost, slowlog_argv(argv), c.address, c.name, 0}, now_us,
                   now_us, c.id, origin_.cause);
  }
  if (observer)
    note_command_end(c, spec, argv, now_us, cost, in_exec || in_script, retrying, blocked);
  if (!sink) busy_until_us_ = std::max(busy_until_us_, now_us + cost);
}

Argv Server::slowlog_argv(const Argv& argv) {
  constexpr size_t kArgsMax = 32;
  constexpr size_t kArgBytesMax = 128;
  Argv out;
  size_t n = std::min(argv.size(), kArgsMax);
  out.reserve(n);
  for (size_t i = 0; i < n; i++) {
    if (n != argv.size() && i == n - 1) {
      out.push_back("... (" + std::to_string(argv.size() - n + 1) + " more arguments)");
    } else if (argv[i].size() > kArgBytesMax) {
      out.push_back(argv[i].substr(0, kArgBytesMax) + "... (" +
                    std::to_string(argv[i].size() - kArgBytesMax) + " more bytes)");
    } else {
      out.push_back(argv[i]);
    }
  }
  return out;
}

void Server::slowlog_push(SlowlogEntry entry, TimeUs at_us, TimeUs started_us, ClientId client,
                          int64_t cause) {
  int64_t threshold = slowlog_threshold();
  if (threshold < 0 || entry.duration_us < threshold) return;
  // slowlogCreateEntry: time(NULL) when the command has run.
  const TimeUs logged_at_us = started_us + entry.duration_us;
  entry.id = slowlog_next_id_++;
  entry.unix_s = unix_us(logged_at_us) / 1000000;
  entry.logged_at_us = logged_at_us;
  ServerEvent e;
  if (observing()) {
    e.kind = ServerEvent::Kind::Slowlogged;
    e.at_us = at_us;
    e.logged_at_us = logged_at_us;
    e.duration_us = entry.duration_us;
    e.client = client;
    e.cause = cause;
    e.argv = entry.argv;
  }
  slowlog_.push_front(std::move(entry));
  size_t max_len = static_cast<size_t>(std::max<int64_t>(0, config_int("slowlog-max-len")));
  while (slowlog_.size() > max_len) slowlog_.pop_back();
  if (observing()) {
    e.count = static_cast<int64_t>(slowlog_.size());
    observer(e);
  }
}

void Server::slowlog_script_end(TimeUs end_us) {
  running_unlogged_ = false;
  if (!std::exchange(running_slowlog_armed_, false)) return;
  running_slowlog_.duration_us = end_us - running_started_us_;
  slowlog_push(std::move(running_slowlog_), end_us, running_started_us_, running_client_,
               running_cause_);
}

void Server::slowlog_reset(TimeUs now_us) {
  slowlog_.clear();
  if (!observing()) return;
  ServerEvent e;
  e.kind = ServerEvent::Kind::SlowlogReset;
  e.at_us = now_us;
  e.cause = origin_.cause;
  observer(e);
}

void Server::execute(Client& c, const Argv& argv, TimeUs now_us, std::vector<Reply>* sink,
                     bool in_exec, bool in_script) {
  const CommandSpec* spec = find_command(argv[0]);
  REDLAB_ASSERT(spec && "EXEC and scripts check the command before executing it");
  bool blocked = false;
  run_command(c, *spec, argv, now_us, sink, in_exec, in_script, false, blocked);
  REDLAB_ASSERT(!blocked && "nothing blocks inside EXEC or a script");
}

namespace {

std::string unknown_command_error(const Argv& argv) {
  // processCommand: "unknown command '%.128s', with args beginning with: " + "'%.*s' "...
  // (appends with explicit lengths: GCC 12 -O3 misreads the operator+ chain, -Wrestrict)
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; i++) {
    size_t room = 128 - args.size();
    args.push_back('\'');
    args.append(argv[i], 0, std::min(room, argv[i].size()));
    args.append("' ");
  }
  std::string msg = "ERR unknown command '";
  msg.append(argv[0], 0, std::min<size_t>(128, argv[0].size()));
  msg.append("', with args beginning with: ");
  msg.append(args);
  // Error replies must not contain newlines (rejectCommand sanitizes them).
  for (char& ch : msg)
    if (ch == '\r' || ch == '\n') ch = ' ';
  return msg;
}

}  // namespace

namespace {

// Subcommand arities from Redis 7.0's command table (src/commands/*.json). processCommand
// checks them before queuing, so a bad subcommand inside MULTI is an EXECABORT, not an error
// inside EXEC's reply.
struct SubcommandArity {
  const char* container;
  const char* sub;
  int arity;
};
constexpr SubcommandArity kSubcommands[] = {
    {"client", "id", 2},
    {"client", "setname", 3},
    {"client", "getname", 2},
    {"client", "list", -2},
    {"client", "info", 2},
    {"client", "kill", -3},
    {"client", "help", 2},
    {"client", "pause", -3},
    {"client", "unpause", 2},
    {"client", "reply", 3},
    {"client", "no-evict", 3},
    {"client", "tracking", -3},
    {"client", "caching", 3},
    {"client", "getredir", 2},
    {"client", "trackinginfo", 2},
    {"client", "unblock", -3},
    {"config", "get", -3},
    {"config", "set", -4},
    {"config", "resetstat", 2},
    {"config", "rewrite", 2},
    {"config", "help", 2},
    {"slowlog", "get", -2},
    {"slowlog", "len", 2},
    {"slowlog", "reset", 2},
    {"slowlog", "help", 2},
    {"script", "load", 3},
    {"script", "exists", -3},
    {"script", "flush", -2},
    {"script", "kill", 2},
    {"script", "help", 2},
    {"script", "debug", 3},
    {"xgroup", "create", -5},
    {"xgroup", "destroy", 4},
    {"xgroup", "createconsumer", 5},
    {"xgroup", "delconsumer", 5},
    {"xgroup", "setid", -5},
    {"xgroup", "help", 2},
    {"pubsub", "channels", -2},
    {"pubsub", "numsub", -2},
    {"pubsub", "numpat", 2},
    {"pubsub", "shardchannels", -2},
    {"pubsub", "shardnumsub", -2},
    {"pubsub", "help", 2},
    {"xinfo", "stream", -3},
    {"xinfo", "groups", 3},
    {"xinfo", "consumers", 4},
    {"xinfo", "help", 2},
};

}  // namespace

void mark_subcommand_containers(CommandTable& table) {
  for (const auto& sc : kSubcommands) {
    auto it = table.find(std::string_view(sc.container));
    if (it != table.end()) it->second.has_subcommands = true;
  }
}

namespace {

// Empty when the subcommand is known and its arity fits; otherwise the error to answer.
std::string subcommand_error(const CommandSpec& spec, const Argv& argv) {
  // One flag test for the many commands that have no subcommands (this runs on every call).
  if (!spec.has_subcommands) return "";
  bool container = false;
  for (const auto& sc : kSubcommands) {
    if (spec.name != sc.container) continue;
    container = true;
    if (!equals_nocase(argv[1], sc.sub)) continue;
    int argc = static_cast<int>(argv.size());
    if ((sc.arity > 0 && sc.arity != argc) || argc < -sc.arity)
      return "ERR wrong number of arguments for '" + spec.name + "|" + sc.sub + "' command";
    return "";
  }
  if (!container) return "";
  std::string upper = spec.name;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::string msg =
      "ERR unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper + " HELP.";
  for (char& ch : msg)
    if (ch == '\r' || ch == '\n') ch = ' ';
  return msg;
}

// c->cmd->fullname: "pubsub|numsub" for a subcommand (already validated), else the name.
std::string full_command_name(const CommandSpec& spec, const Argv& argv) {
  if (argv.size() < 2) return spec.name;
  for (const auto& sc : kSubcommands)
    if (spec.name == sc.container && equals_nocase(argv[1], sc.sub))
      return spec.name + "|" + sc.sub;
  return spec.name;
}

}  // namespace

void Server::dispatch(Client& c, const Argv& argv, TimeUs now_us, std::vector<Reply>* sink) {
  TimeUs at = now_us + options_.service_us;
  // spec: the command's entry, or null when unknown (passed, not captured: it stays a register).
  auto reject = [&](const CommandSpec* spec, std::string msg) {
    if (c.in_multi) c.multi_dirty = true;  // flagTransaction
    if (observing()) {
      if (msg.substr(0, 5) == "BUSY ") {
        note_busy_reply(c.id, now_us, origin_.cause);
      } else {
        note_served(c, spec, argv, now_us, options_.service_us, msg);
      }
    }
    if (sink) {
      sink->push_back(Reply::error(std::move(msg)));
    } else {
      emit(c.id, at, Reply::error(std::move(msg)));
    }
    if (!sink) busy_until_us_ = std::max(busy_until_us_, at);
  };
  if (argv.empty()) return;  // an empty multibulk is ignored
  const CommandSpec* spec = find_command(argv[0]);
  if (!spec) return reject(nullptr, unknown_command_error(argv));
  int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && spec->arity != argc) || argc < -spec->arity) {
    return reject(spec, "ERR wrong number of arguments for '" + spec->name + "' command");
  }
  if (argc >= 2 && spec->has_subcommands) {
    std::string e = subcommand_error(*spec, argv);
    if (!e.empty()) return reject(spec, std::move(e));
  }
  if (running_ && !(spec->flags & kAllowBusy)) return reject(spec, std::string(busy_error()));
  if (c.subscriptions() > 0 && !(spec->flags & kAllowInPubSub)) {
    return reject(spec,
                  "ERR Can't execute '" + full_command_name(*spec, argv) +
                      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed "
                      "in this context");
  }
  // processCommand: a read-only replica refuses writes from anyone but its primary.
  if ((spec->flags & kWrite) && !c.is_master && is_replica())
    return reject(spec, std::string(err::kReadOnlyReplica));
  // string_view: compared by size first, no strlen.
  const std::string_view name = spec->name;
  if (c.in_multi && name != "exec" && name != "discard" && name != "multi" && name != "watch" &&
      name != "quit" && name != "reset") {
    c.queued.push_back(argv);
    if (observing()) note_served(c, spec, argv, now_us, options_.service_us, "queued");
    if (sink) {
      sink->push_back(Reply::status("QUEUED"));
    } else {
      emit(c.id, at, Reply::status("QUEUED"));
      busy_until_us_ = std::max(busy_until_us_, at);
    }
    return;
  }
  bool blocked = false;
  run_command(c, *spec, argv, now_us, sink, false, false, false, blocked);
  if (!ready_keys_.empty()) handle_ready_keys(now_us);
  if (c.close_after_reply) close_client_later(c.id, "QUIT");
}

// ---------------------------------------------------------------------------------------
// Event-driven scheduling
// ---------------------------------------------------------------------------------------

void Server::submit(ClientId id, Argv argv, TimeUs arrive_us, int64_t cause) {
  if (!connected(id)) return;
  queue_.push_back(Pending{id, std::move(argv), std::max(arrive_us, clock_us_), cause});
}

std::optional<size_t> Server::next_runnable() const {
  // Commands of a blocked client wait behind its blocking command (as they do in Redis).
  std::set<ClientId> passed;
  for (size_t i = 0; i < queue_.size(); i++) {
    ClientId id = queue_[i].client;
    auto it = clients_.find(id);
    if (it == clients_.end()) continue;
    if (it->second->blocked || passed.count(id)) {
      passed.insert(id);
      continue;
    }
    return i;
  }
  return std::nullopt;
}

TimeUs Server::next_event_us() const {
  TimeUs best = kNever;
  if (running_) best = std::min(best, running_next_us_);
  if (!running_) {
    if (auto i = next_runnable())
      best = std::min(best, std::max(queue_[*i].arrive_us, busy_until_us_));
    best = std::min(best, next_expiry_us());
  }
  best = std::min(best, next_block_timeout_us());
  if (!running_) best = std::min(best, next_output_limit_us());
  if (!to_close_.empty()) best = std::min(best, clock_us_);
  return best;
}

void Server::serve_pending(TimeUs now_us) {
  auto i = next_runnable();
  if (!i || queue_[*i].arrive_us > now_us || busy_until_us_ > now_us) return;
  Pending p = std::move(queue_[*i]);
  queue_.erase(queue_.begin() + static_cast<ptrdiff_t>(*i));
  Client* c = client(p.client);
  if (!c) return;
  OriginScope origin(*this, p.client, p.cause, now_us);
  dispatch(*c, p.argv, now_us, nullptr);
}

void Server::serve_while_busy(TimeUs now_us) {
  // processEventsWhileBlocked: past busy-reply-threshold, other clients are answered (BUSY,
  // or SCRIPT KILL and the few commands allowed) while the script keeps running.
  constexpr size_t kPerSliceMax = 10000;
  for (size_t n = 0; n < kPerSliceMax; n++) {
    size_t i = 0;
    while (i < queue_.size() &&
           (queue_[i].arrive_us > now_us || queue_[i].client == running_client_))
      i++;
    if (i >= queue_.size()) return;
    Pending p = std::move(queue_[i]);
    queue_.erase(queue_.begin() + static_cast<ptrdiff_t>(i));
    Client* c = client(p.client);
    if (!c) continue;
    OriginScope origin(*this, p.client, p.cause, now_us);
    const CommandSpec* spec = p.argv.empty() ? nullptr : find_command(p.argv[0]);
    if (spec && (spec->flags & kAllowBusy)) {
      dispatch(*c, p.argv, now_us, nullptr);
    } else if (spec && spec->name == "exec") {
      if (observing()) note_busy_reply(c->id, now_us, p.cause);
      // rejectCommand on EXEC: execCommandAbort discards the transaction.
      c->in_multi = false;
      c->multi_dirty = false;
      c->queued.clear();
      unwatch_all(*c);
      emit(
          c->id, now_us,
          Reply::error("EXECABORT Transaction discarded because of: " + std::string(busy_error())));
    } else if (!p.argv.empty()) {
      if (c->in_multi) c->multi_dirty = true;
      if (observing()) note_busy_reply(c->id, now_us, p.cause);
      emit(c->id, now_us, Reply::error(std::string(busy_error())));
    }
  }
}

void Server::start_long_running(ClientId id, std::unique_ptr<LongRunning> job, TimeUs now_us) {
  REDLAB_ASSERT(!running_ && "one script at a time: the server is single-threaded");
  running_ = std::move(job);
  running_client_ = id;
  running_started_us_ = now_us;
  running_next_us_ = now_us;
  running_cause_ = origin_.cause;
  running_spec_ = nullptr;
  running_fresh_ = observing();  // run_command sets running_spec_ and skips the Served
  running_unlogged_ = true;
  running_slowlog_armed_ = false;
  running_slices_ = 0;
  running_busy_reported_ = false;
  running_kill_requested_ = false;
  running_killed_by_ = 0;
}

bool Server::kill_long_running(ClientId by) {
  if (!running_ || !running_->kill()) return false;
  if (!running_kill_requested_) {
    running_kill_requested_ = true;
    running_killed_by_ = by;
  }
  return true;
}

void Server::resume_long_running(TimeUs now_us) {
  constexpr TimeUs kSliceUs = 1000;
  bool done = false;
  TimeUs used = 0;
  {
    // The script's writes are its caller's (key events name the EVAL's client and cause).
    OriginScope origin(*this, running_client_, running_cause_, now_us);
    used = running_->resume(*this, now_us, kSliceUs, done);
  }
  REDLAB_ASSERT(used >= 0);
  TimeUs end = now_us + std::max<TimeUs>(used, 1);
  if (observing()) note_script_slice(end, done);
  if (done) {
    if (!repl_pending_.empty()) propagate_flush(end, running_client_);
    slowlog_script_end(end);
    running_.reset();
    busy_until_us_ = std::max(busy_until_us_, end);
    running_client_ = 0;
    handle_ready_keys(end);
    return;
  }
  running_next_us_ = end;
  if (end - running_started_us_ >= busy_threshold_us()) {
    if (observing() && !running_busy_reported_) {
      running_busy_reported_ = true;
      ServerEvent e;
      e.kind = ServerEvent::Kind::ScriptBusy;
      e.at_us = end;
      e.client = running_client_;
      e.cause = running_cause_;
      e.detail = "script past busy-reply-threshold";
      observer(e);
    }
    serve_while_busy(end);
    // Answering them took server time: the script resumes after (SCRIPT KILL's OK leaves
    // before the killed script's error).
    running_next_us_ = std::max(running_next_us_, busy_until_us_);
  }
}

void Server::advance(TimeUs now_us) {
  // Every iteration handles at least one event or stops; the bound is a safety net.
  constexpr int64_t kEventsPerAdvanceMax = 50'000'000;
  // A connection closed by the server (QUIT, output limits) closes once the command that
  // decided it has finished, so its close is never earlier than what was sent to it.
  auto close_pending = [this] {
    for (const Closing& closing : std::exchange(to_close_, {}))
      finish_close(closing, std::max(clock_us_, busy_until_us_));
  };
  for (int64_t n = 0; n < kEventsPerAdvanceMax; n++) {
    close_pending();
    TimeUs t = next_event_us();
    if (t > now_us) break;
    clock_us_ = std::max(clock_us_, t);
    if (running_) {
      if (running_next_us_ <= clock_us_) resume_long_running(clock_us_);
      timeout_blocked(clock_us_);
      continue;
    }
    persist_before(clock_us_);
    expire_due(clock_us_);
    timeout_blocked(clock_us_);
    serve_pending(clock_us_);
    check_output_limits(clock_us_);
    persist_after(clock_us_);
  }
  close_pending();
  clock_us_ = std::max(clock_us_, now_us);
}

std::vector<Reply> Server::call_all(ClientId id, const Argv& argv, int64_t cause) {
  std::vector<Reply> result;
  call_collect(id, argv, &result, nullptr, cause);
  return result;
}

Reply Server::call(ClientId id, const Argv& argv, int64_t cause) {
  // No vector and no copy: the first reply is moved straight here (nil if none came).
  Reply first;
  call_collect(id, argv, nullptr, &first, cause);
  return first;
}

void Server::call_collect(ClientId id, const Argv& argv, std::vector<Reply>* all,
                          Reply* first_reply, int64_t cause) {
  Client* c = client(id);
  if (!c) return;
  {
    OriginScope origin(*this, id, cause, clock_us_);
    // Until the end of this block, emit hands this client's replies to the caller (what is
    // already in outputs_ stays there).
    Capture capture{id, c, all, first_reply, false, capture_};
    capture_ = &capture;
    struct Restore {
      Capture*& slot;
      Capture* outer;
      ~Restore() { slot = outer; }
    } restore{capture_, capture.outer};
    expire_due(clock_us_);
    dispatch(*c, argv, clock_us_, nullptr);
    // A script started by this call runs to its end (bounded: killed past the call limit).
    TimeUs t = clock_us_;
    while (running_) {
      if (t - running_started_us_ > script_call_limit_us) kill_long_running(0);
      bool done = false;
      TimeUs used = 0;
      {
        OriginScope slice(*this, running_client_, running_cause_, t);
        used = running_->resume(*this, t, 1000000, done);
      }
      t += std::max<TimeUs>(used, 1);
      if (observing()) note_script_slice(t, done);
      if (done) {
        if (!repl_pending_.empty()) propagate_flush(t, running_client_);
        slowlog_script_end(t);
        running_.reset();
        running_client_ = 0;
      }
    }
    if (!ready_keys_.empty()) handle_ready_keys(clock_us_);
  }
  busy_until_us_ = clock_us_;
  if (to_close_.empty()) return;
  for (const Closing& closing : std::exchange(to_close_, {})) finish_close(closing, clock_us_);
}

// ---------------------------------------------------------------------------------------
// Persistence (aof.c flushAppendOnlyFile, server.c serverCron's save points, rdb.c)
// ---------------------------------------------------------------------------------------

namespace {

// The save points of `save` ("3600 1 300 100": seconds, changes).
std::vector<std::pair<int64_t, int64_t>> save_points(const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::istringstream in(text);
  int64_t seconds = 0, changes = 0;
  // Bounded by the words of the value (CONFIG SET checked it: pairs of integers).
  while (in >> seconds >> changes) out.emplace_back(seconds, changes);
  return out;
}

// A copied entry shares its stream (held by pointer) with the original: it gets its own.
void unshare(Entry& entry) {
  if (auto* stream = std::get_if<std::shared_ptr<StreamValue>>(&entry.value.data))
    *stream = std::make_shared<StreamValue>(**stream);
}

Db copy_db(const Db& from) {
  Db to = from;
  for (auto& [key, entry] : to.dict) unshare(entry);
  return to;
}

}  // namespace

Server::Fsync Server::fsync_mode() {
  if (persist_config_generation_ == config_generation_) return persist_mode_;
  persist_config_generation_ = config_generation_;
  auto on = config_.find("appendonly");
  auto mode = config_.find("appendfsync");
  persist_mode_ = on == config_.end() || on->second != "yes"            ? Fsync::Off
                  : mode == config_.end() || mode->second == "everysec" ? Fsync::EverySec
                  : mode->second == "always"                            ? Fsync::Always
                                                                        : Fsync::No;
  auto save = config_.find("save");
  save_points_ = save_points(save == config_.end() ? "" : save->second);
  // startAppendOnly: aof_last_fsync = now, when the AOF is switched on (CONFIG SET at the
  // server's start, or its config at a restart).
  if (persist_mode_ == Fsync::Off) aof_synced_period_ = INT64_MIN;
  if (persist_mode_ != Fsync::Off && aof_synced_period_ == INT64_MIN)
    aof_synced_period_ = unix_ms(clock_us_) / (persist_mode_ == Fsync::No ? 30000 : 1000);
  cron_tick_us_ = 1000000 / std::clamp<int64_t>(config_int("hz"), 1, 500);
  return persist_mode_;
}

PersistedState Server::snapshot() {
  PersistedState state;
  state.dbs.reserve(dbs_.size());
  for (const Db& db : dbs_) state.dbs.push_back(copy_db(db));
  state.libraries = function_library_codes(*this);
  return state;
}

void Server::persist_before(TimeUs now_us) {
  // A config change is read at once (the AOF's fsync clock starts when it is switched on).
  if (persist_config_generation_ != config_generation_) fsync_mode();
  // Nothing to do without persistence, or when nothing changed since the disk caught up:
  // the common case costs three comparisons.
  if (dirty_ == aof_image_dirty_ && dirty_ == rdb_image_dirty_) {
    persist_checked_us_ = now_us;
    return;
  }
  Fsync mode = fsync_mode();
  if (mode == Fsync::Off && save_points_.empty()) {
    // Nothing is persisted: nothing to keep track of.
    aof_image_dirty_ = rdb_image_dirty_ = dirty_;
    persist_checked_us_ = now_us;
    return;
  }
  TimeUs tick_us = cron_tick_us_;
  // The first cron tick after the last event (serverCron runs every 1000/hz ms).
  TimeUs first_tick_us = (persist_checked_us_ / tick_us + 1) * tick_us;
  auto tick_at_or_after = [&](TimeUs t) {
    t = std::max(t, first_tick_us);
    return (t + tick_us - 1) / tick_us * tick_us;
  };
  if ((mode == Fsync::EverySec || mode == Fsync::No) && dirty_ != aof_image_dirty_) {
    int64_t period_ms = mode == Fsync::EverySec ? 1000 : 30000;
    TimeUs tick = tick_at_or_after(virtual_time_of_unix_ms((aof_synced_period_ + 1) * period_ms));
    if (tick <= now_us) {
      aof_image_ = std::make_shared<const PersistedState>(snapshot());
      aof_image_dirty_ = dirty_;
      aof_synced_period_ = unix_ms(tick) / period_ms;
    }
  }
  if (mode == Fsync::Off && dirty_ != rdb_image_dirty_) {
    if (last_save_unix_ms_ == INT64_MIN) last_save_unix_ms_ = unix_ms(0);
    TimeUs best = kNever;
    for (auto [seconds, changes] : save_points_) {
      if (static_cast<int64_t>(dirty_ - rdb_image_dirty_) < changes) continue;
      // `server.unixtime - server.lastsave > sp->seconds`, in whole seconds.
      int64_t due_s = last_save_unix_ms_ / 1000 + seconds + 1;
      best = std::min(best, tick_at_or_after(virtual_time_of_unix_ms(due_s * 1000)));
    }
    if (best <= now_us) {
      rdb_image_ = std::make_shared<const PersistedState>(snapshot());
      rdb_image_dirty_ = dirty_;
      last_save_unix_ms_ = unix_ms(best);
    }
  }
  persist_checked_us_ = now_us;
}

void Server::persist_after(TimeUs now_us) {
  persist_checked_us_ = now_us;
  if (dirty_ == aof_image_dirty_) return;
  Fsync mode = fsync_mode();
  if (mode == Fsync::Off) return;
  if (mode != Fsync::Always) {
    int64_t period_ms = mode == Fsync::EverySec ? 1000 : 30000;
    int64_t period = unix_ms(now_us) / period_ms;
    if (period <= aof_synced_period_) return;
    aof_synced_period_ = period;
  }
  aof_image_ = std::make_shared<const PersistedState>(snapshot());
  aof_image_dirty_ = dirty_;
}

std::optional<PersistedState> Server::persisted_on_shutdown(TimeUs now_us, bool save_rdb) {
  persist_before(now_us);
  // prepareForShutdown: the AOF is flushed and fsynced; with save points an RDB is saved unless
  // SHUTDOWN NOSAVE (Redis 7.0 server.c: SHUTDOWN_NOSAVE skips only rdbSave).
  if (fsync_mode() != Fsync::Off || (save_rdb && !save_points_.empty())) return snapshot();
  if (rdb_image_) return *rdb_image_;  // an earlier BGSAVE's file is still there
  return std::nullopt;
}

std::optional<PersistedState> Server::persisted_on_crash(TimeUs now_us) {
  persist_before(now_us);
  Fsync mode = fsync_mode();
  if (mode == Fsync::Always) return snapshot();  // every reply waited for its fsync
  if (mode != Fsync::Off) {
    if (aof_image_) return *aof_image_;
    return std::nullopt;
  }
  if (rdb_image_) return *rdb_image_;
  return std::nullopt;
}

void Server::load_persisted(const PersistedState& state, TimeUs now_us) {
  ClientId loader = connect(now_us);
  for (const std::string& code : state.libraries) {
    Reply r = call(loader, {"FUNCTION", "LOAD", code});
    REDLAB_ASSERT(!r.is_error() && "a library that loaded before loads again");
  }
  disconnect(loader, now_us);
  OriginScope origin(*this, 0, 0, now_us);
  int64_t now_ms = unix_ms(now_us);
  for (size_t i = 0; i < state.dbs.size() && i < dbs_.size(); i++) {
    for (const auto& [key, entry] : state.dbs[i].dict) {
      // rdbLoad on a master skips keys that are already expired (the AOF replays their DEL).
      if (entry.expire_at_ms >= 0 && entry.expire_at_ms < now_ms) continue;
      Entry& loaded = dbs_[i].dict.emplace(key, entry).first->second;
      unshare(loaded);
      if (loaded.expire_at_ms >= 0) {
        dbs_[i].expires.emplace(loaded.expire_at_ms, key);
        expire_floor_ms_ = std::min(expire_floor_ms_, loaded.expire_at_ms);
      }
      if (observing()) note_key(static_cast<int>(i), key, Touch::Created, nullptr);
    }
  }
  if (observing()) flush_key_events();
  // What was loaded is on disk already.
  aof_image_dirty_ = rdb_image_dirty_ = dirty_;
  aof_image_ = rdb_image_ = std::make_shared<const PersistedState>(snapshot());
  persist_checked_us_ = now_us;
}

}  // namespace redlab::fake
