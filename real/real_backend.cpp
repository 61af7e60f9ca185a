// See real_backend.h.
#include "real/real_backend.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "real/key_prefix.h"
#include "sim/core/assert.h"
#include "sim/fake/sha1.h"

namespace redlab::real {
namespace {

using scenario::BackendError;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// argv in RESP, as a client writes it (for the emergency ACL DELUSER).
std::string resp_command(const net::Argv& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  char* raw = nullptr;
  int len = redisFormatCommandArgv(&raw, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  if (len <= 0 || !raw) return "";
  std::string out(raw, static_cast<size_t>(len));
  redisFreeCommand(raw);
  return out;
}

// One ACL LOG entry (RESP2: a flat array of field, value).
struct AclLogEntry {
  std::string reason, context, object, username, client_info;
  int64_t count = 0;
};
std::vector<AclLogEntry> parse_acl_log(const Reply& reply) {
  std::vector<AclLogEntry> out;
  if (reply.kind != Reply::Kind::Array) return out;
  for (const Reply& entry : reply.elements) {
    AclLogEntry e;
    for (size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
      const std::string& field = entry.elements[i].str;
      const Reply& value = entry.elements[i + 1];
      if (field == "reason") e.reason = value.str;
      if (field == "context") e.context = value.str;
      if (field == "object") e.object = value.str;
      if (field == "username") e.username = value.str;
      if (field == "client-info") e.client_info = value.str;
      if (field == "count") e.count = value.integer;
    }
    out.push_back(std::move(e));
  }
  return out;
}

// "addr=127.0.0.1:40152" of a CLIENT LIST line.
std::string client_addr(const std::string& client_info) {
  size_t at = client_info.find("addr=");
  while (at != std::string::npos && at > 0 && client_info[at - 1] != ' ')
    at = client_info.find("addr=", at + 1);  // not laddr=
  if (at == std::string::npos) return "";
  size_t end = client_info.find(' ', at);
  return client_info.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5);
}

// The server's refusal without the script location Redis appends (" script: <sha>, on
// @user_script:1.").
std::string without_script_location(std::string error) {
  size_t at = error.find(" script: ");
  if (at != std::string::npos) error.erase(at);
  return error;
}

std::string upper_name(const net::Argv& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size() && i < 2; i++) {
    if (i > 0) out += ' ';
    for (char ch : argv[i]) out += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return out;
}

}  // namespace

std::string software_of_info(const std::string& info) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  // One pass over the lines of the reply ("name:value\r\n", "# Section").
  while (start < info.size()) {
    size_t end = info.find('\n', start);
    if (end == std::string::npos) end = info.size();
    std::string line = info.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon != std::string::npos && line[0] != '#')
      fields.emplace(line.substr(0, colon), line.substr(colon + 1));
    start = end + 1;
  }
  auto field = [&](const std::string& name) {
    auto it = fields.find(name);
    return it == fields.end() ? std::string() : it->second;
  };
  std::string name = field("server_name");
  if (name.empty()) name = "redis";
  std::string version = field(name + "_version");
  if (version.empty()) version = field("redis_version");
  return version.empty() ? "" : name + " " + version;
}

RealBackend::RealBackend(RealBackendOptions options) : options_(std::move(options)) {
  std::optional<ServerProgram> program = spawn_program(options_.backend);
  spawn_ = program.has_value();
  program_ = program.value_or(ServerProgram::redis);
  if (!spawn_) {
    if (auto error = parse_endpoint(options_.backend, url_endpoint_))
      throw BackendError("--backend: " + *error);
  }
}

RealBackend::~RealBackend() {
  finish();
}

std::string RealBackend::address(const Endpoint& ep) const {
  if (!ep.unix_path.empty())
    return "unix://" + ep.unix_path + (ep.db != 0 ? "?db=" + std::to_string(ep.db) : "");
  return ep.scheme + "://" + ep.display() + (ep.db != 0 ? "/" + std::to_string(ep.db) : "");
}

std::string RealBackend::describe() const {
  return spawn_ ? options_.backend : address(url_endpoint_);
}

std::vector<int> RealBackend::spawned_ports() const {
  std::vector<int> out;
  if (!spawned_) return out;
  for (const Server& s : servers_) out.push_back(spawned_->port(s.spawn_index));
  return out;
}

RealBackend::Server& RealBackend::server_named(const std::string& name) {
  for (Server& s : servers_)
    if (s.name == name) return s;
  throw BackendError("no server named " + name);
}

Connection* RealBackend::admin_conn(Server& s, int timeout_ms, std::string& error) {
  if (s.admin && !s.admin->broken()) return s.admin.get();
  s.admin = Connection::open(s.endpoint, timeout_ms, error);
  return s.admin.get();
}

void RealBackend::start(Scheduler& scheduler, Trace* trace, uint64_t seed,
                        const std::vector<scenario::ServerSetup>& servers, net::LinkConfig link,
                        std::vector<ConfigRefusal>& refused) {
  REDLAB_ASSERT(!fabric_ && "a backend is started once");
  scheduler_ = &scheduler;
  trace_ = trace;
  run_id_ = make_run_id();
  key_prefix_ = key_prefix_for(run_id_);
  if (!spawn_ && servers.size() > 1) {
    std::string names;
    for (const auto& s : servers) names += (names.empty() ? "" : ", ") + s.name;
    throw BackendError(describe() + ": the scenario declares " + std::to_string(servers.size()) +
                       " servers (" + names +
                       ") and one URL gives one server; use --backend spawn");
  }
  if (!server_faults_allowed()) {
    for (const auto& s : servers) {
      if (!s.config.empty())
        throw BackendError(describe() + ": the scenario sets CONFIG " + s.config.front().first +
                           " on server " + s.name +
                           ", which needs a server redlab spawned (--backend spawn) or "
                           "--allow-server-faults");
    }
  }
  if (spawn_) {
    // A server that persists starts (and restarts) with its settings on the command line:
    // CONFIG SET appendonly yes would instead start an AOF rewrite in the background, until
    // whose end Redis refuses a clean shutdown ("Writing initial AOF, can't exit"); and a
    // server restarted with --appendonly no would not load its AOF.
    std::vector<std::vector<std::string>> args;
    const bool replication = std::any_of(servers.begin(), servers.end(),
                                         [](const auto& s) { return !s.replica_of.empty(); });
    for (const scenario::ServerSetup& setup : servers) {
      args.push_back(persistence_args(setup.config));
      // A replica syncs at once: Redis 7 waits repl-diskless-sync-delay (5 s) for more replicas
      // before a diskless full sync (replication.c, startBgsaveForReplication).
      // And a clean restart is at once, as on the fake: a primary with a lagging replica would
      // otherwise wait up to shutdown-timeout (10 s; Redis 7.0 redis.conf, SHUTDOWN) for it,
      // and outlast the stop's grace.
      if (replication)
        args.back().insert(args.back().end(),
                           {"--repl-diskless-sync-delay", "0", "--shutdown-timeout", "0"});
      if (setup.replica_of.empty()) continue;
      auto relay = std::make_unique<ReplRelay>();
      args.back().insert(args.back().end(),
                         {"--replicaof", "127.0.0.1", std::to_string(relay->port())});
      primary_of_[setup.name] = setup.replica_of;
      relays_[setup.name] = std::move(relay);
    }
    spawned_ =
        std::make_unique<SpawnedServers>(servers.size(), AclArgv{}, program_, std::move(args));
    for (auto& [replica, relay] : relays_)
      for (size_t i = 0; i < servers.size(); i++)
        if (servers[i].name == primary_of_.at(replica)) relay->set_primary_port(spawned_->port(i));
  }
  for (size_t i = 0; i < servers.size(); i++) {
    Server s;
    s.name = servers[i].name;
    s.config = servers[i].config;
    if (spawn_) {
      s.spawn_index = i;
      s.endpoint.host = "127.0.0.1";
      s.endpoint.port = spawned_->port(i);
      s.endpoint.scheme = program_ == ServerProgram::valkey ? "valkey" : "redis";
      s.endpoint.password.clear();  // REDIS_PASSWORD is for the user's server, not ours
    } else {
      s.endpoint = url_endpoint_;
    }
    servers_.push_back(std::move(s));
  }
  for (Server& s : servers_) {
    std::string error;
    Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
    if (!conn) throw BackendError(address(s.endpoint) + ": " + error);
    auto pong = conn->command({"PING"}, kConnectTimeoutMs, error);
    if (!pong) {
      s.admin.reset();
      throw BackendError(address(s.endpoint) + ": " + (error.empty() ? "PING timed out" : error));
    }
    if (pong->is_error()) throw BackendError(address(s.endpoint) + ": " + pong->str);
    read_software(s);
    // Before any config is changed: a run the server cannot be made to keep in its corner
    // is refused with nothing done.
    if (!spawn_) create_run_user(s);
    apply_config(s, &refused);
  }
  wait_replicas_linked();
  RealFabric::Options fabric_options;
  fabric_options.key_prefix = key_prefix_;
  fabric_options.allow_server_wide = server_faults_allowed();
  fabric_options.link = link;
  fabric_options.seed = seed;
  fabric_options.keep_identity = !spawn_;
  fabric_options.prefix_only = !spawn_ && !run_user_made_;
  fabric_options.allowed_extra = extra_rules();
  fabric_options.on_refusal = [this](const std::string& host, const std::string& error) {
    refusals_seen_++;
    if (refusals_.size() < kRefusalsKeptMax) refusals_.push_back({host, error});
  };
  fabric_ = std::make_unique<RealFabric>(scheduler, trace, fabric_options);
  run_started_ = true;
  for (const Server& s : servers_)
    fabric_->add_server(s.name, run_user_made_ ? run_user_endpoint(s) : s.endpoint);
}

void RealBackend::read_software(Server& s) {
  std::string error;
  Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
  auto info = conn ? conn->command({"INFO", "server"}, kAdminTimeoutMs, error) : std::nullopt;
  if (!info) {
    s.admin.reset();  // a late reply would be taken for the next command's
    return;
  }
  // Credentials without INFO (NOPERM) leave the software unknown: nothing is recorded.
  if (info->kind != Reply::Kind::Bulk && info->kind != Reply::Kind::Status) return;
  s.software = software_of_info(info->str);
  if (trace_ && !s.software.empty()) trace_->set_meta(kServerMetaPrefix + s.name, s.software);
}

const std::string& RealBackend::server_software(const std::string& server) const {
  for (const Server& s : servers_)
    if (s.name == server) return s.software;
  return kUnknownSoftware;
}

std::vector<std::string> RealBackend::extra_rules() const {
  // A DEBUG whose sub-command the scenario computes gets nothing (real/acl.h fault_rules): the
  // server refuses it (NOPERM), and the run reports that.
  if (spawn_ || !options_.allow_server_faults) return {};
  return fault_rules(needs_.server_commands);
}

Endpoint RealBackend::run_user_endpoint(const Server& s) const {
  REDLAB_ASSERT(run_user_made_ && "the run user exists");
  Endpoint ep = s.endpoint;
  ep.user = run_user_.name;
  ep.password = run_user_.password;
  return ep;
}

void RealBackend::create_run_user(Server& s) {
  std::string error;
  Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
  if (!conn) throw BackendError(address(s.endpoint) + ": " + error);
  run_user_ = make_run_user(run_id_);
  // Credentials that may create a user but not delete it would leave it behind: ACL DELUSER of
  // the (not yet existing) user first; NOPERM here counts as "cannot create users". Nothing
  // is written: the user does not exist.
  auto probe = conn->command({"ACL", "DELUSER", run_user_.name}, kAdminTimeoutMs, error);
  if (!probe) {
    s.admin.reset();
    throw BackendError(
        address(s.endpoint) + ": ACL DELUSER: " +
        (error.empty() ? "no reply within " + std::to_string(kAdminTimeoutMs) + " ms" : error));
  }
  if (probe->is_error()) {
    no_run_user_reason_ = probe->str;
    refuse_without_run_user(s, "ACL DELUSER");
    return;
  }
  // A second Ctrl-C ends redlab at once: then an ACL DELUSER prepared on a connection of its
  // own goes out. Armed before the user exists, so that no moment leaves it unguarded.
  guard_ = Connection::open(s.endpoint, kConnectTimeoutMs, error);
  if (guard_)
    emergency_slot_ =
        register_emergency_write(guard_->fd(), resp_command({"ACL", "DELUSER", run_user_.name}));
  std::vector<std::string> rules = run_user_commands();
  const std::vector<std::string> extra = extra_rules();
  for (const std::string& rule : extra)
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
  for (int attempt = 0; attempt < kSetUserAttemptsMax; attempt++) {
    // From the first SETUSER on, finish() deletes the user: a SETUSER whose reply is lost may
    // still have made it (ACL DELUSER of a user that does not exist answers 0).
    run_user_sent_ = true;
    auto reply = conn->command(acl_setuser_argv(run_user_, key_prefix_, s.endpoint.db, rules),
                               kAdminTimeoutMs, error);
    if (!reply) {
      s.admin.reset();
      throw BackendError(
          address(s.endpoint) + ": ACL SETUSER: " +
          (error.empty() ? "no reply within " + std::to_string(kAdminTimeoutMs) + " ms" : error));
    }
    if (!reply->is_error()) {
      run_user_made_ = true;
      break;
    }
    // A command this server does not know (older than the fake's command table): the run
    // user goes without it. Not one a fault needs: without that, the fault would not run.
    std::string rule = setuser_error_rule(reply->str);
    auto it = rule.size() > 1 && rule[0] == '+'
                  ? std::find(rules.begin(), rules.end(), rule.substr(1))
                  : rules.end();
    if (reply->str.find("Unknown command") != std::string::npos && it != rules.end() &&
        std::find(extra.begin(), extra.end(), *it) == extra.end()) {
      rules.erase(it);
      continue;
    }
    no_run_user_reason_ = reply->str;  // NOPERM, "unknown command 'ACL'", a syntax error ...
    break;
  }
  if (!run_user_made_) {
    if (no_run_user_reason_.empty()) no_run_user_reason_ = "ACL SETUSER kept failing";
    refuse_without_run_user(s, "ACL SETUSER");
    return;
  }
  run_user_rules_ = rules;
  // Logged in once now, so that credentials the server does not take are the start's error
  // (one line), not every client's.
  s.as_run_user = Connection::open(run_user_endpoint(s), kConnectTimeoutMs, error);
  if (!s.as_run_user)
    throw BackendError(address(s.endpoint) + ": cannot log in as redlab's run user " +
                       run_user_.name + ": " + error);
  // How long a script runs before the server answers BUSY (and so SCRIPT KILL): see finish().
  for (const char* name : {"busy-reply-threshold", "lua-time-limit"}) {
    auto value = conn->command({"CONFIG", "GET", name}, kAdminTimeoutMs, error);
    if (!value) {
      s.admin.reset();  // a late reply would be taken for the next command's
      break;
    }
    if (value->kind == Reply::Kind::Array && value->elements.size() == 2) {
      char* end = nullptr;
      long ms = std::strtol(value->elements[1].str.c_str(), &end, 10);
      if (end && *end == '\0' && ms > 0)
        busy_threshold_ms_ = static_cast<int>(std::min<long>(ms, kScriptKillWaitMaxMs));
      break;
    }
  }
}

void RealBackend::refuse_without_run_user(const Server& s, const char* what) const {
  std::string reason = no_run_user_reason_.substr(0, no_run_user_reason_.find('\n'));
  std::string without = "with credentials that cannot create (and delete) an ACL user for the " +
                        std::string("run (") + what + ": " + reason + ")";
  const std::string hint =
      ": connect as a user with ACL rights (ACL SETUSER and DELUSER), or use --backend spawn";
  for (const scenario::RunNeeds::Script& script : needs_.scripts)
    throw BackendError(address(s.endpoint) + ": script " + script.name +
                       (script.replaced ? " (--script)" : "") + " would run " + without +
                       "; only the server's ACL keeps a script inside the run's keys" + hint);
  const std::vector<std::string> extra = extra_rules();
  for (const scenario::RunNeeds::Command& c : needs_.commands) {
    if (c.words.empty()) continue;
    if (c.words[0].empty())
      throw BackendError(address(s.endpoint) + ": " + c.whose +
                         " sends a command whose name is computed (${...}), which cannot be "
                         "checked before the run " +
                         without + hint);
    if (!prefix_only_may(c.words, extra))
      throw BackendError(
          address(s.endpoint) + ": " + c.whose + " sends " + upper(c.words[0]) +
          (c.words.size() > 1 && !c.words[1].empty() && is_container_command(c.words[0])
               ? " " + upper(c.words[1])
               : "") +
          ", which redlab cannot keep inside the run's keys " + without + hint);
  }
}

void RealBackend::apply_config(Server& s, std::vector<ConfigRefusal>* refused) {
  bool remember = !spawn_ && s.restore.empty();
  for (const auto& [name, value] : s.config) {
    std::string error;
    Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
    if (!conn) throw BackendError(address(s.endpoint) + ": " + error);
    if (remember) {
      auto old = conn->command({"CONFIG", "GET", name}, kAdminTimeoutMs, error);
      if (!old) {
        s.admin.reset();  // nothing changed yet on this parameter: nothing to restore
        throw BackendError(address(s.endpoint) + ": CONFIG GET " + name + ": " +
                           (error.empty() ? "timed out" : error));
      }
      if (old->kind == Reply::Kind::Array && old->elements.size() == 2)
        s.restore.emplace_back(name, old->elements[1].str);
    }
    auto reply = conn->command({"CONFIG", "SET", name, value}, kAdminTimeoutMs, error);
    if (!reply) {
      s.admin.reset();
      throw BackendError(address(s.endpoint) + ": CONFIG SET " + name + ": " +
                         (error.empty() ? "timed out" : error));
    }
    if (reply->is_error() && refused) refused->push_back({s.name, name, value, reply->str});
  }
}

net::Fabric& RealBackend::fabric() {
  REDLAB_ASSERT(fabric_ && "fabric() after start()");
  return *fabric_;
}

Reply RealBackend::admin(const std::string& server, const net::Argv& argv) {
  Server* s = nullptr;
  for (Server& candidate : servers_)
    if (candidate.name == server) s = &candidate;
  if (!s) return Reply::error("ERR redlab: no server named " + server);
  if (!spawn_) {
    if (auto why = refused_identity_command(argv))
      return Reply::error("ERR redlab: " + *why + ", refused on a server redlab did not start");
  }
  if (!server_faults_allowed()) {
    if (auto why = server_wide_command(argv))
      return Reply::error("ERR redlab: " + *why +
                          ", refused on a server redlab did not start "
                          "(--allow-server-faults allows it)");
  }
  if (!spawn_ && !run_user_made_ && !prefix_only_may(argv, extra_rules()))
    return Reply::error("ERR redlab: " + upper(argv.empty() ? "" : argv[0]) +
                        " is outside what redlab keeps under the run's prefix without an ACL "
                        "user of its own (the credentials given cannot create one)");
  std::string error;
  // On a user's server setup runs as the run's ACL user: the server keeps it in the prefix.
  std::unique_ptr<Connection>& slot = run_user_made_ ? s->as_run_user : s->admin;
  if (!slot || slot->broken())
    slot = Connection::open(run_user_made_ ? run_user_endpoint(*s) : s->endpoint, kConnectTimeoutMs,
                            error);
  if (!slot) return Reply::error("ERR redlab: " + address(s->endpoint) + ": " + error);
  auto reply = slot->command(prefix_argv(argv, key_prefix_), kAdminTimeoutMs, error);
  if (!reply) {
    // A late reply would be taken for the next command's: this connection is done. A script
    // without its reply may still run: finish() stops it.
    if (is_script_command(argv)) admin_script_unanswered_ = true;
    slot.reset();
    return Reply::error(
        "ERR redlab: " + address(s->endpoint) + ": " +
        (error.empty() ? "no reply within " + std::to_string(kAdminTimeoutMs) + " ms" : error));
  }
  if (reply->is_error() && (is_acl_refusal(reply->str) || is_noscript_refusal(reply->str))) {
    refusals_seen_++;
    if (refusals_.size() < kRefusalsKeptMax) refusals_.push_back({"setup", reply->str});
  }
  return unprefix_reply(std::move(*reply), key_prefix_);
}

Scheduler::RunResult RealBackend::run_until(TimeUs end_us, uint64_t events_max,
                                            const std::atomic<bool>* cancel) {
  REDLAB_ASSERT(fabric_ && "run_until() after start()");
  // The setup (admin() writes before the run) is on every replica, and the command stream
  // flows to it, before time 0's faults, as on the fake, whose first sync is instant.
  if (!replicas_synced_) {
    replicas_synced_ = true;
    wait_replicas_acked();
    // That takes up to a second after a full sync (see wait_replicas_acked); it is not the
    // run's time: the run starts after it.
    if (!primary_of_.empty()) fabric_->rebase();
  }
  return fabric_->run_until(end_us, events_max, cancel);
}

void RealBackend::wait_replicas_linked() {
  // INFO replication until `want` is in it `times` times: on the replica, its link is up; on
  // the primary, every replica is listed as online (state=online), the state WAIT counts.
  auto wait_for = [this](Server& s, const std::string& want, int times, const std::string& what) {
    const int64_t deadline = now_ms() + SpawnedServers::kPingTimeoutMs;
    std::string error, last;
    for (;;) {
      Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
      auto info =
          conn ? conn->command({"INFO", "replication"}, kAdminTimeoutMs, error) : std::nullopt;
      int found = 0;
      for (size_t at = 0; info && (at = info->str.find(want, at)) != std::string::npos;
           at += want.size())
        found++;
      if (found >= times) return;
      if (!info) s.admin.reset();
      last = info ? "no " + want + " in its INFO replication" : error;
      if (now_ms() > deadline)
        throw BackendError(what + " (" + address(s.endpoint) + ") did not sync within " +
                           std::to_string(SpawnedServers::kPingTimeoutMs) + " ms: " + last + "; " +
                           spawned_->log_tail(s.spawn_index));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  for (const auto& [replica, primary] : primary_of_)
    wait_for(server_named(replica), "master_link_status:up", 1,
             replica + ", replica of " + primary);
  for (const auto& [primary, count] : replicas_per_primary())
    wait_for(server_named(primary), ",state=online,", count, "the replicas of " + primary);
}

std::map<std::string, int> RealBackend::replicas_per_primary() const {
  std::map<std::string, int> count;
  for (const auto& [replica, primary] : primary_of_) count[primary]++;
  return count;
}

void RealBackend::wait_replicas_acked() {
  for (const auto& [primary, count] : replicas_per_primary()) {
    Server& p = server_named(primary);
    std::string error;
    Connection* conn = admin_conn(p, kConnectTimeoutMs, error);
    // A replica listed as state=online may not be sent the command stream yet: after a
    // diskless full sync (the default) the primary starts the stream only at the replica's
    // next REPLCONF ACK, which it sends once a second (Redis 7.0 replication.c,
    // updateSlavesWaitingBgsave: repl_start_cmd_stream_on_ack; the ACK the replica sends as it
    // finishes loading comes before the primary has reaped its fork, and is ignored). Until
    // then a run's writes pile up on the primary: a failover 40 ms into a run found a replica
    // without any of them. So the setup's last write is a PUBLISH (replicated outside cluster
    // mode, pubsub.c publishCommand; no key, and nobody subscribed yet), which the WAIT below
    // waits for: it returns once the stream flows and the replica has all of it.
    auto published = conn ? conn->command({"PUBLISH", key_prefix_ + "redlab:replicas-in-step", "1"},
                                          kAdminTimeoutMs, error)
                          : std::nullopt;
    if (!published || published->is_error())
      throw BackendError(primary + " (" + address(p.endpoint) +
                         "): PUBLISH before the run: " + (published ? published->str : error));
    // WAIT numreplicas timeout (Redis 7.0 replication.c waitCommand): the replicas that
    // acknowledged everything this connection wrote.
    auto acked = conn ? conn->command({"WAIT", std::to_string(count),
                                       std::to_string(SpawnedServers::kPingTimeoutMs)},
                                      kAdminTimeoutMs + SpawnedServers::kPingTimeoutMs, error)
                      : std::nullopt;
    if (!acked || acked->kind != Reply::Kind::Integer || acked->integer < count)
      throw BackendError(
          primary + " (" + address(p.endpoint) + "): its replicas did not " +
          "acknowledge the setup before the run: " +
          (!acked ? (error.empty() ? std::string("no reply") : error)
           : acked->kind == Reply::Kind::Integer
               ? "WAIT counted " + std::to_string(acked->integer) + " of " + std::to_string(count)
               : acked->str));
  }
}

void RealBackend::failover(const std::string& replica) {
  auto it = primary_of_.find(replica);
  if (it == primary_of_.end()) return;
  const std::string primary = it->second;
  // What the relay holds never reaches the replica: lost, as on the fake.
  relays_.at(replica)->cut();
  Server& p = server_named(primary);
  p.admin.reset();
  p.failed_over = true;
  spawned_->kill_server(p.spawn_index);  // its machine dies: SIGKILL, never back
  Server& r = server_named(replica);
  std::string error;
  Connection* conn = admin_conn(r, kConnectTimeoutMs, error);
  auto reply =
      conn ? conn->command({"REPLICAOF", "NO", "ONE"}, kAdminTimeoutMs, error) : std::nullopt;
  if (!reply || reply->is_error())
    throw BackendError("failover to " + replica + " (" + address(r.endpoint) +
                       "): REPLICAOF NO ONE: " + (reply ? reply->str : error));
  fabric_->repoint(primary, replica);
  aliases_[primary] = replica;
  if (trace_ && scheduler_)
    trace_->append(TraceEvent{scheduler_->now_us(), "repl_failover", "net", -1, -1, -1,
                              primary + " now leads to " + replica}
                       .with(F::server, replica)
                       .with(F::host, primary));
}

std::string RealBackend::leads_to(const std::string& name) const {
  auto it = aliases_.find(name);
  return it == aliases_.end() ? name : it->second;
}

void RealBackend::replication_lag(const std::string& replica, TimeUs extra_us) {
  if (auto it = relays_.find(replica); it != relays_.end()) it->second->set_lag_us(extra_us);
}

void RealBackend::replication_partition(const std::string& replica, bool on) {
  if (auto it = relays_.find(replica); it != relays_.end()) it->second->set_partition(on);
}

void RealBackend::server_command(const std::string& server, net::Argv argv) {
  REDLAB_ASSERT(fabric_ && "server_command() after start()");
  if (!server_faults_allowed())
    throw BackendError(upper_name(argv) + " on " + server + " (" + describe() +
                       "): a server-wide fault needs a server redlab spawned (--backend spawn) "
                       "or --allow-server-faults");
  server_named(server);  // throws for an unknown name
  fabric_->server_command(server, std::move(argv));
}

std::vector<std::string> RealBackend::persistence_args(
    const std::vector<std::pair<std::string, std::string>>& config) {
  std::vector<std::string> args;
  for (const auto& [name, value] : config)
    if (name == "appendonly" || name == "appendfsync" || name == "save") {
      args.push_back("--" + name);
      args.push_back(value);
    }
  return args;
}

void RealBackend::restart(const std::string& server, Stop how) {
  if (!spawned_)
    throw BackendError("restart " + server + " (" + describe() +
                       "): only servers redlab spawned can be restarted (--backend spawn)");
  Server& s = server_named(server);
  if (trace_ && scheduler_)
    trace_->append(
        TraceEvent{scheduler_->now_us(), "server_restart", "net", -1, -1, -1, server}.with(
            F::server, server));
  s.admin.reset();
  // It restarts with the persistence settings it started with (on its command line), so that
  // it loads what it persisted. A clean stop is SIGTERM (Redis' prepareForShutdown fsyncs the AOF
  // and saves the RDB); a crash is SIGKILL. The kernel keeps what a killed process wrote, so
  // SIGKILL stages a crash of the machine only where the two lose the same (the server_crash fault
  // refuses the rest: appendonly yes with appendfsync everysec or no).
  if (how == Stop::NoSave)
    spawned_->restart_nosave(s.spawn_index);
  else
    spawned_->restart(s.spawn_index, how == Stop::Clean);
  apply_config(s, nullptr);
}

void RealBackend::jump_clock(const std::string& server, TimeUs delta_us) {
  (void)delta_us;
  throw BackendError("clock jump on " + server + ": a real server's clock cannot jump (" +
                     describe() + "); run this scenario on the fake backend");
}

void RealBackend::finish() noexcept {
  if (finished_) return;
  finished_ = true;
  try {
    if (fabric_) fabric_->close_all();
    // Closing the sockets does not stop a script the server runs for one of them.
    const bool scripts_may_run =
        admin_script_unanswered_ || (fabric_ && fabric_->scripts_may_run());
    // One URL backs every declared server (there is one at most): clean it once.
    if (!spawn_ && !servers_.empty()) finish_user_server(servers_.front(), scripts_may_run);
    if (spawned_ && fabric_)
      for (Server& s : servers_) {
        if (s.failed_over) continue;  // killed on purpose
        std::string error;
        s.admin.reset();
        // A script of the run still running: killed, or the server shut down (it wrote).
        if (scripts_may_run && !stop_scripts(s)) continue;  // noted (or shut down on purpose)
        Connection* conn = admin_conn(s, kFinishConnectTimeoutMs, error);
        // A spawned server that died during the run (not by a restart fault: that one is back).
        if (!conn || !conn->command({"PING"}, kFinishCommandTimeoutMs, error))
          note_trouble(s, "went away during the run (" +
                              (error.empty() ? std::string("no answer to PING") : error) + ")");
      }
  } catch (...) {
    // finish() never throws: it runs after errors too, and a failed cleanup is not fatal.
  }
  unregister_emergency_write(emergency_slot_);
  emergency_slot_ = -1;
  guard_.reset();
  for (Server& s : servers_) {
    s.admin.reset();
    s.as_run_user.reset();
  }
  if (spawned_) spawned_->stop_all();
}

void RealBackend::finish_user_server(Server& s, bool scripts_may_run) {
  const int64_t deadline_ms = now_ms() + kFinishTotalMs;
  const bool user_may_exist = run_user_made_ || run_user_sent_;
  s.as_run_user.reset();
  // The admin connection of the start when it is still open: it is logged in already, and a
  // server inside a script takes no AUTH until the script has run for its busy threshold.
  std::string error;
  Connection* conn =
      admin_conn(s, scripts_may_run ? script_wait_ms() : kFinishConnectTimeoutMs, error);
  // Still there? (Without a script of the run in it, a server answers PING at once.)
  if (conn && !scripts_may_run) {
    auto pong = finish_command(s, {"PING"}, error);
    if (!pong && error.empty()) error = "no answer to PING";
    conn = pong ? s.admin.get() : nullptr;
  }
  if (!conn) {
    note_trouble(s, "went away during the run (" + error + ")");
    if (user_may_exist)
      note_trouble_line(s, "may still hold redlab's ACL user " + run_user_.name +
                               ": delete it with ACL DELUSER " + run_user_.name);
    return;
  }
  // A script of the run that still runs holds the whole server (BUSY): first of all. Only then:
  // SCRIPT KILL stops whatever script runs, and it must not be someone else's.
  if (scripts_may_run && !stop_scripts(s)) {
    if (user_may_exist || run_started_)
      note_trouble_line(s, "kept redlab's ACL user " + run_user_.name +
                               " and the run's keys: once it answers, delete them with "
                               "ACL DELUSER " +
                               run_user_.name + " and SCAN MATCH " + key_prefix_ + "* + UNLINK");
    return;
  }
  // The user goes before the keys are swept: ACL DELUSER also closes any connection of the
  // run the server still serves, so nothing of the run writes after the sweep.
  if (run_user_made_) report_acl_refusals(s);
  if (user_may_exist) delete_run_user(s);
  if (run_started_ && !key_prefix_.empty()) {
    std::string cursor = "0";
    bool swept = false;  // the SCAN came back to cursor 0: every key of the run is gone
    error.clear();
    for (int round = 0; round < kFinishScanRoundsMax && now_ms() < deadline_ms; round++) {
      auto page =
          finish_command(s, {"SCAN", cursor, "MATCH", key_prefix_ + "*", "COUNT", "1000"}, error);
      if (page && page->kind == Reply::Kind::Error) error = page->str;
      if (!page || page->kind != Reply::Kind::Array || page->elements.size() != 2) break;
      cursor = page->elements[0].str;
      net::Argv unlink = {"UNLINK"};
      for (const Reply& key : page->elements[1].elements) unlink.push_back(key.str);
      if (unlink.size() > 1 && !finish_command(s, unlink, error)) break;
      if (cursor == "0") {
        swept = true;
        break;
      }
    }
    if (!swept)
      note_trouble(s, "kept some of the run's keys under " + key_prefix_ + " (" +
                          (error.empty() ? std::string("cleanup ran out of time") : error) +
                          "); delete them with SCAN MATCH " + key_prefix_ + "* and UNLINK");
  }
  for (const auto& [name, value] : s.restore) {
    auto reply = finish_command(s, {"CONFIG", "SET", name, value}, error);
    if (!reply || reply->is_error())
      note_trouble_line(s, "kept the run's value of " + name + " (" +
                               (reply           ? reply->str
                                : error.empty() ? "no reply"
                                                : error) +
                               "): set it back to its value before the run with CONFIG SET " +
                               name);  // not the value: a config value may be a secret
  }
  s.admin.reset();
}

std::optional<Reply> RealBackend::finish_command(Server& s, const net::Argv& argv,
                                                 std::string& error, int timeout_ms) {
  // Twice at most: the admin connection may have been closed by the server while the run
  // went on (its `timeout`); every command here may be sent again.
  for (int attempt = 0; attempt < 2; attempt++) {
    Connection* conn = admin_conn(s, kFinishConnectTimeoutMs, error);
    if (!conn) return std::nullopt;
    auto reply = conn->command(argv, timeout_ms, error);
    if (reply) return reply;
    s.admin.reset();  // timed out (a late reply would be the next command's) or broken
    if (error.empty()) return std::nullopt;
  }
  return std::nullopt;
}

int RealBackend::script_wait_ms() const {
  return std::min(busy_threshold_ms_ + kScriptKillMarginMs, kScriptKillWaitMaxMs);
}

bool RealBackend::stop_scripts(Server& s) {
  const int wait_ms = script_wait_ms();
  const int64_t deadline_ms = now_ms() + wait_ms;
  auto left_ms = [&] { return static_cast<int>(std::max<int64_t>(1, deadline_ms - now_ms())); };
  std::string error, kill_error;
  bool reopened = false, killed = false;
  // A server inside a script answers nothing until the script has run for its busy
  // threshold; then SCRIPT KILL goes through. Bounded by the deadline.
  while (true) {
    Connection* conn = admin_conn(s, left_ms(), error);
    auto reply = conn ? conn->command({"SCRIPT", "KILL"}, left_ms(), error) : std::nullopt;
    if (!reply && conn && !error.empty() && !reopened) {
      reopened = true;  // the connection the start opened was closed meanwhile: a new one
      s.admin.reset();
      continue;
    }
    if (!reply) {
      s.admin.reset();
      note_trouble(s, conn && error.empty()
                          ? "did not answer SCRIPT KILL within " + std::to_string(wait_ms) +
                                " ms at the end of the run (a script or a DEBUG SLEEP "
                                "of the run may still be running)"
                          : "went away during the run (" + error + ")");
      return false;
    }
    const std::string& text = reply->str;
    killed = !reply->is_error();
    if (killed || starts_with(text, "NOTBUSY")) break;  // killed, or none ran
    if (starts_with(text, "UNKILLABLE")) {
      if (spawn_) {
        // Our own server: it is stopped anyway, and a script that wrote ends only so.
        conn->send({"SHUTDOWN", "NOSAVE"}, error);
        s.shut_down = true;
        s.admin.reset();
        note_trouble_line(s, ": " + left_script_named() +
                                 " did not end, and had written (SCRIPT KILL cannot stop that): "
                                 "redlab stopped the server with SHUTDOWN NOSAVE");
        return false;
      }
      note_trouble_line(
          s, "still runs " + left_script_named() +
                 ", which has written, so SCRIPT KILL cannot stop it (" +
                 text.substr(0, text.find('.')) +
                 "): the server answers BUSY to every client until the script ends; to stop it "
                 "now, run SHUTDOWN NOSAVE on that server (what it has not saved is lost)");
      s.admin.reset();
      return false;
    }
    kill_error = text;
    if (!starts_with(text, "BUSY") || now_ms() >= deadline_ms) break;  // NOPERM, another error
    std::this_thread::sleep_for(std::chrono::milliseconds(kBusyRetryMs));
  }
  // A killed script stops at its next check; the server says BUSY until then.
  while (true) {
    Connection* conn = admin_conn(s, left_ms(), error);
    auto pong = conn ? conn->command({"PING"}, left_ms(), error) : std::nullopt;
    if (!pong) {
      s.admin.reset();
      note_trouble(s, "went away during the run (" +
                          (error.empty() ? std::string("no answer to PING") : error) + ")");
      return false;
    }
    if (!(pong->is_error() && starts_with(pong->str, "BUSY"))) {
      if (killed) {
        // Stopped, but the run was not what the scenario meant: every client got BUSY.
        note_trouble_line(s, ": " + left_script_named() +
                                 " did not end: redlab stopped it with SCRIPT KILL at the end "
                                 "of the run (until then the server answered BUSY to every "
                                 "client)");
      }
      return true;
    }
    if (now_ms() >= deadline_ms) {
      note_trouble_line(
          s, "still runs a script of this run, which redlab could not stop (SCRIPT KILL: " +
                 (kill_error.empty() ? std::string("no effect") : kill_error) +
                 "): the server answers BUSY until it ends; run SCRIPT KILL (or, "
                 "for a script that wrote, SHUTDOWN NOSAVE) on that server");
      s.admin.reset();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kBusyRetryMs));
  }
}

std::string RealBackend::left_script_named() const {
  std::string script = fabric_ ? script_named_by(fabric_->script_left_sha()) : "";
  std::string host = fabric_ ? fabric_->script_left_host() : "";
  return (script.empty() ? std::string("a script of the run") : script) +
         (host.empty() || host == "(redlab)" ? "" : " run by " + host);
}

std::string RealBackend::script_named_by(const std::string& sha) const {
  for (const scenario::RunNeeds::Script& script : needs_.scripts)
    if (fake::sha1_hex(script.source) == sha)
      return "script " + script.name + (script.replaced ? " (--script)" : "");
  return "";
}

void RealBackend::report_acl_refusals(Server& s) {
  std::string error;
  std::vector<AclLogEntry> mine;
  auto log = finish_command(s, {"ACL", "LOG"}, error);
  bool log_read = log && log->kind == Reply::Kind::Array;
  if (log_read)
    for (AclLogEntry& e : parse_acl_log(*log))
      if (e.username == run_user_.name && e.reason != "auth") mine.push_back(std::move(e));
  // The first refusal of each kind a client saw.
  const Refusal* seen = nullptr;
  const Refusal* noscript = nullptr;
  for (const Refusal& r : refusals_) {
    if (!seen && is_acl_refusal(r.error)) seen = &r;
    if (!noscript && is_noscript_refusal(r.error)) noscript = &r;
  }
  // ACL LOG is the server's own record (refusals a script caught with redis.pcall included);
  // an ACL error text in a reply that it does not confirm was made up (redis.error_reply).
  if (mine.empty() && log_read) seen = nullptr;
  // Who: "script lock_release (--script), line 1, run by A", "a setup command", "actor B".
  auto subject_of = [&](const Refusal* r, bool in_script, const std::string& address) {
    std::string script = r ? script_named_by(script_sha_in(r->error)) : "";
    if (script.empty() && in_script && fabric_) {
      // No text names it (redis.pcall caught the error): the one script that client ran.
      std::vector<std::string> sent = fabric_->scripts_sent_from(address);
      if (sent.size() == 1) script = script_named_by(sent[0]);
    }
    int line = r ? script_line_in(r->error) : 0;
    if (!script.empty() && line > 0) script += ", line " + std::to_string(line) + ",";
    std::string host = r ? r->host : "";
    if (host.empty() && fabric_) host = fabric_->host_of_address(address);
    std::string subject = !script.empty() ? script : in_script ? "a script" : "";
    if (host == "setup") {
      subject += subject.empty() ? "a setup command" : " in a setup command";
    } else if (!host.empty() && host != "(redlab)") {
      subject += subject.empty() ? "actor " + host : " run by " + host;
    }
    return subject.empty() ? std::string("the run") : subject;
  };
  if (!mine.empty() || seen) {
    // The kind of the first refusal a client saw; the ACL LOG entry of that kind (the log
    // lists the newest first: the run's first is the last of ours).
    bool in_script = seen && (seen->error.find("script") != std::string::npos);
    std::string reason = !seen                                              ? ""
                         : seen->error.find("command") != std::string::npos ? "command"
                         : seen->error.find("channel") != std::string::npos ? "channel"
                         : seen->error.find("key") != std::string::npos     ? "key"
                                                                            : "";
    const AclLogEntry* entry = nullptr;
    for (auto it = mine.rbegin(); it != mine.rend() && !entry; ++it)
      if (!seen || (it->reason == reason && (it->context == "lua") == in_script)) entry = &*it;
    if (!entry && !mine.empty()) entry = &mine.back();
    int64_t total = 0;
    for (const AclLogEntry& e : mine) total += std::max<int64_t>(1, e.count);
    if (!log_read) total = refusals_seen_;
    std::string subject = subject_of(seen, in_script || (entry && entry->context == "lua"),
                                     entry ? client_addr(entry->client_info) : "");
    std::string what = "was refused";
    if (entry && entry->reason == "command") {
      std::string name = upper(entry->object);
      std::replace(name.begin(), name.end(), '|', ' ');
      what = "called " + name;
    } else if (entry && entry->reason == "key") {
      what = "touched the key \"" + entry->object + "\"";
    } else if (entry && entry->reason == "channel") {
      what = "used the channel \"" + entry->object + "\"";
    } else if (seen && !refused_command_in(seen->error).empty()) {
      what = "called " + refused_command_in(seen->error);
    }
    std::string because =
        seen ? without_script_location(seen->error)
             : "ACL LOG: " + entry->reason + " " + entry->object + " in " + entry->context;
    std::string line = ": " + subject + " " + what + ": the server refused it (" + because +
                       "): redlab's run user may only touch keys and channels under " +
                       key_prefix_ + "* with the commands a run needs";
    if (total > 1) line += " (" + std::to_string(total) + " refusals in this run)";
    note_trouble_line(s, line);
    return;
  }
  if (noscript) {
    // CONFIG, DEBUG, SCRIPT ... from a script: Redis refuses them to every script, before its
    // ACL looks (so no ACL LOG entry, and no name in the text).
    note_trouble_line(s, ": " + subject_of(noscript, true, "") +
                             " called a command that no script may run: the server refused "
                             "it (" +
                             without_script_location(noscript->error) + ")");
  }
}

void RealBackend::delete_run_user(Server& s) {
  std::string error;
  auto reply = finish_command(s, {"ACL", "DELUSER", run_user_.name}, error);
  if (reply && !reply->is_error()) return;  // 1, or 0 when someone deleted it meanwhile
  note_trouble_line(s, "could not delete redlab's ACL user " + run_user_.name + " (" +
                           (reply           ? reply->str
                            : error.empty() ? "no reply"
                                            : error) +
                           "): delete it with ACL DELUSER " + run_user_.name);
}

void RealBackend::note_trouble(const Server& s, const std::string& what) {
  note_trouble_line(s, what + ": the verdicts are about a broken run");
}

void RealBackend::note_trouble_line(const Server& s, const std::string& what) {
  if (!trouble_.empty()) trouble_ += "; ";
  trouble_ +=
      (spawn_ ? "server " + s.name + " (" + address(s.endpoint) + ")" : address(s.endpoint)) +
      (what.rfind(": ", 0) == 0 ? "" : " ") + what;
}

std::unique_ptr<scenario::Backend> make_real_backend(RealBackendOptions options) {
  return std::make_unique<RealBackend>(std::move(options));
}

}  // namespace redlab::real
