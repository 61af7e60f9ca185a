// See real_backend.h.
#include "real/real_backend.h"

#include <cctype>
#include <chrono>

#include "real/key_prefix.h"
#include "sim/core/assert.h"

namespace redlab::real {
namespace {

using scenario::BackendError;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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

RealBackend::RealBackend(RealBackendOptions options) : options_(std::move(options)) {
  spawn_ = options_.backend == "spawn";
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
  return "redis://" + ep.display() + (ep.db != 0 ? "/" + std::to_string(ep.db) : "");
}

std::string RealBackend::describe() const {
  return spawn_ ? "spawn" : address(url_endpoint_);
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
  if (spawn_) spawned_ = std::make_unique<SpawnedServers>(servers.size());
  for (size_t i = 0; i < servers.size(); i++) {
    Server s;
    s.name = servers[i].name;
    s.config = servers[i].config;
    if (spawn_) {
      s.spawn_index = i;
      s.endpoint.host = "127.0.0.1";
      s.endpoint.port = spawned_->port(i);
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
    apply_config(s, &refused);
  }
  RealFabric::Options fabric_options;
  fabric_options.key_prefix = key_prefix_;
  fabric_options.allow_server_wide = server_faults_allowed();
  fabric_options.link = link;
  fabric_options.seed = seed;
  fabric_ = std::make_unique<RealFabric>(scheduler, trace, fabric_options);
  for (const Server& s : servers_) fabric_->add_server(s.name, s.endpoint);
}

void RealBackend::apply_config(Server& s, std::vector<ConfigRefusal>* refused) {
  bool remember = !spawn_ && s.restore.empty();
  for (const auto& [name, value] : s.config) {
    std::string error;
    Connection* conn = admin_conn(s, kConnectTimeoutMs, error);
    if (!conn) throw BackendError(address(s.endpoint) + ": " + error);
    if (remember) {
      auto old = conn->command({"CONFIG", "GET", name}, kAdminTimeoutMs, error);
      if (old && old->kind == Reply::Kind::Array && old->elements.size() == 2)
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
  if (!server_faults_allowed()) {
    if (auto why = server_wide_command(argv))
      return Reply::error("ERR redlab: " + *why +
                          ", refused on a server redlab did not start "
                          "(--allow-server-faults allows it)");
  }
  std::string error;
  Connection* conn = admin_conn(*s, kConnectTimeoutMs, error);
  if (!conn) return Reply::error("ERR redlab: " + address(s->endpoint) + ": " + error);
  auto reply = conn->command(prefix_argv(argv, key_prefix_), kAdminTimeoutMs, error);
  if (!reply) {
    // A late reply would be taken for the next command's: this connection is done.
    s->admin.reset();
    return Reply::error(
        "ERR redlab: " + address(s->endpoint) + ": " +
        (error.empty() ? "no reply within " + std::to_string(kAdminTimeoutMs) + " ms" : error));
  }
  return unprefix_reply(std::move(*reply), key_prefix_);
}

Scheduler::RunResult RealBackend::run_until(TimeUs end_us, uint64_t events_max,
                                            const std::atomic<bool>* cancel) {
  REDLAB_ASSERT(fabric_ && "run_until() after start()");
  return fabric_->run_until(end_us, events_max, cancel);
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

void RealBackend::restart(const std::string& server) {
  if (!spawned_)
    throw BackendError("restart " + server + " (" + describe() +
                       "): only servers redlab spawned can be restarted (--backend spawn)");
  Server& s = server_named(server);
  if (trace_ && scheduler_)
    trace_->append(TraceEvent{scheduler_->now_us(), "server_replaced", "net", -1, -1, -1, server});
  s.admin.reset();
  spawned_->restart(s.spawn_index);
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
    if (!spawn_ && !key_prefix_.empty()) {
      int64_t deadline_ms = now_ms() + kFinishTotalMs;
      // One URL backs every declared server (there is one at most): clean it once.
      for (Server& s : servers_) {
        std::string error;
        s.admin.reset();  // a fresh connection: the old one may hold a late reply
        Connection* conn = admin_conn(s, kFinishConnectTimeoutMs, error);
        if (!conn) {
          note_trouble(s, "went away during the run (" + error + ")");
          continue;
        }
        std::string cursor = "0";
        bool swept = false;  // the SCAN came back to cursor 0: every key of the run is gone
        for (int round = 0; round < kFinishScanRoundsMax && now_ms() < deadline_ms; round++) {
          auto page = conn->command({"SCAN", cursor, "MATCH", key_prefix_ + "*", "COUNT", "1000"},
                                    kFinishCommandTimeoutMs, error);
          if (page && page->kind == Reply::Kind::Error) error = page->str;
          if (!page || page->kind != Reply::Kind::Array || page->elements.size() != 2) break;
          cursor = page->elements[0].str;
          net::Argv unlink = {"UNLINK"};
          for (const Reply& key : page->elements[1].elements) unlink.push_back(key.str);
          if (unlink.size() > 1 && !conn->command(unlink, kFinishCommandTimeoutMs, error)) break;
          if (cursor == "0") {
            swept = true;
            break;
          }
        }
        if (!swept)
          note_trouble(s, "kept some of the run's keys under " + key_prefix_ + " (" +
                              (error.empty() ? std::string("cleanup ran out of time") : error) +
                              "); delete them with SCAN MATCH " + key_prefix_ + "* and UNLINK");
        for (const auto& [name, value] : s.restore)
          if (!conn->command({"CONFIG", "SET", name, value}, kFinishCommandTimeoutMs, error)) break;
        s.admin.reset();
        break;
      }
    }
    // A spawned server that died during the run (not by a restart fault: that one is back).
    if (spawned_ && fabric_)
      for (Server& s : servers_) {
        std::string error;
        s.admin.reset();
        Connection* conn = admin_conn(s, kFinishConnectTimeoutMs, error);
        if (!conn || !conn->command({"PING"}, kFinishCommandTimeoutMs, error))
          note_trouble(s, "went away during the run (" +
                              (error.empty() ? std::string("no answer to PING") : error) + ")");
      }
    for (Server& s : servers_) s.admin.reset();
    if (spawned_) spawned_->stop_all();
  } catch (...) {
    // finish() never throws: it runs after errors too, and a failed cleanup is not fatal.
  }
}

void RealBackend::note_trouble(const Server& s, const std::string& what) {
  if (!trouble_.empty()) trouble_ += "; ";
  trouble_ +=
      (spawn_ ? "server " + s.name + " (" + address(s.endpoint) + ")" : address(s.endpoint)) + " " +
      what + ": the verdicts are about a broken run";
}

std::unique_ptr<scenario::Backend> make_real_backend(RealBackendOptions options) {
  return std::make_unique<RealBackend>(std::move(options));
}

}  // namespace redlab::real
