// The real-Redis backend: a scenario's servers are redis-server processes redlab spawns
// (`spawn`) or one server the user names (redis://..., unix://...), reached through
// RealFabric on the wall clock.
//
// Safety (DESIGN.md "Real servers: safety"): every key lives under `redlab:<run-id>:` (the
// fabric and admin() rewrite commands), finish() deletes the run's keys on a user's server
// (SCAN MATCH + UNLINK, in the URL's db) and restores the config it changed; server-wide
// faults and config changes need a spawned server or allow_server_faults, checked here too
// (the CLI checks before the run as well).
//
// What differs from the fake and cannot be hidden: time is the wall clock (no clock jumps,
// can_jump_clock() is false; a server's clock_offset_us is ignored), restart() exists only for
// spawned servers and blocks the loop while the new process comes up (tens of ms), and the
// real network's own latency adds to the link latency the fabric applies in-process.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "real/real_fabric.h"
#include "real/redis_conn.h"
#include "real/spawn.h"
#include "sim/scenario/backend.h"

namespace redlab::real {

struct RealBackendOptions {
  std::string backend;  // "spawn", or a URL: redis://[user:pass@]host:port[/db], unix://
  bool allow_server_faults = false;  // server-wide faults and CONFIG SET on a user's server
};

class RealBackend final : public scenario::Backend {
 public:
  // Throws scenario::BackendError for a URL that does not parse (the message never shows the
  // password).
  explicit RealBackend(RealBackendOptions options);
  ~RealBackend() override;
  RealBackend(const RealBackend&) = delete;
  RealBackend& operator=(const RealBackend&) = delete;

  std::string describe() const override;
  bool owns_servers() const override { return spawn_; }
  void start(Scheduler& scheduler, Trace* trace, uint64_t seed,
             const std::vector<scenario::ServerSetup>& servers, net::LinkConfig link,
             std::vector<ConfigRefusal>& refused) override;
  net::Fabric& fabric() override;
  Reply admin(const std::string& server, const net::Argv& argv) override;
  Scheduler::RunResult run_until(TimeUs end_us, uint64_t events_max,
                                 const std::atomic<bool>* cancel) override;
  void server_command(const std::string& server, net::Argv argv) override;
  void restart(const std::string& server) override;
  bool can_jump_clock() const override { return false; }
  void jump_clock(const std::string& server, TimeUs delta_us) override;
  void finish() noexcept override;
  std::string trouble() const override { return trouble_; }

  // For the trace's meta and tests.
  const std::string& run_id() const { return run_id_; }
  const std::string& key_prefix() const { return key_prefix_; }
  // Ports of the spawned servers in declaration order (empty for a URL backend).
  std::vector<int> spawned_ports() const;
  // Tests: the processes (nullptr for a URL backend) and the concrete fabric.
  SpawnedServers* spawned() { return spawned_.get(); }
  RealFabric* real_fabric() { return fabric_.get(); }

  static constexpr int kConnectTimeoutMs = 2000;
  static constexpr int kAdminTimeoutMs = 5000;
  // finish(): a dead or hung server must not hold the end of a run for long.
  static constexpr int kFinishConnectTimeoutMs = 1000;
  static constexpr int kFinishCommandTimeoutMs = 2000;
  static constexpr int kFinishTotalMs = 10000;
  static constexpr int kFinishScanRoundsMax = 100000;

 private:
  struct Server {
    std::string name;
    Endpoint endpoint;
    size_t spawn_index = 0;
    std::unique_ptr<Connection> admin;
    std::vector<std::pair<std::string, std::string>> config;   // as applied (re-applied on restart)
    std::vector<std::pair<std::string, std::string>> restore;  // a user's values before the run
  };
  Server& server_named(const std::string& name);
  std::string address(const Endpoint& ep) const;
  // The admin connection, (re)opened if needed; nullptr and error set when unreachable.
  Connection* admin_conn(Server& s, int timeout_ms, std::string& error);
  void apply_config(Server& s, std::vector<ConfigRefusal>* refused);
  bool server_faults_allowed() const { return spawn_ || options_.allow_server_faults; }

  RealBackendOptions options_;
  bool spawn_ = false;
  Endpoint url_endpoint_;
  std::string run_id_;
  std::string key_prefix_;
  Trace* trace_ = nullptr;
  Scheduler* scheduler_ = nullptr;
  std::unique_ptr<SpawnedServers> spawned_;
  std::vector<Server> servers_;
  std::unique_ptr<RealFabric> fabric_;
  bool finished_ = false;
  std::string trouble_;  // servers found gone at the end of the run
  // "redis://host:port WHAT" appended to trouble().
  void note_trouble(const Server& s, const std::string& what);
};

std::unique_ptr<scenario::Backend> make_real_backend(RealBackendOptions options);

}  // namespace redlab::real
