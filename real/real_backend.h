// The real-Redis backend: a scenario's servers are redis-server (or valkey-server) processes
// redlab spawns (`spawn`, `spawn:redis`, `spawn:valkey`) or one server the user names
// (redis://..., valkey://..., unix://...), reached through RealFabric on the wall clock. Each
// server's program and version (INFO server) go into the trace's meta (`server.NAME`).
//
// Safety (DESIGN.md "Real servers: safety", docs/real-backend.md): every key lives under
// `redlab:<run-id>:` (the fabric and admin() rewrite commands), and on a server redlab did not
// start the SERVER enforces it: start() creates the run's own ACL user (real/acl.h), allowed
// only the prefix's keys and channels and the commands the run needs (set_run_needs()), and
// every connection of the run's clients, and admin() (setup commands), run as that user. The
// admin connection (the user's own credentials) creates and deletes that user, applies and
// restores config and cleans up. When those credentials cannot create (and delete) users, a
// run that needs Lua or a command outside a fixed allow-list is refused before anything is
// written, and the rest runs under the prefix alone. finish() stops a script of the run that
// still runs (SCRIPT KILL, sent only when the fabric saw a script of the run go unanswered;
// SHUTDOWN NOSAVE on a spawned server when the script wrote), reports the server's refusals
// (ACL LOG), deletes the ACL user (which closes whatever connection of the run is left), then
// the run's keys on a user's server (SCAN MATCH + UNLINK, in the URL's db), and restores the
// config it changed; server-wide faults and config changes need a spawned server or
// allow_server_faults, checked here too (the CLI checks before the run as well).
//
// What differs from the fake and cannot be hidden: time is the wall clock (no clock jumps,
// can_jump_clock() is false; a server's clock_offset_us is ignored), restart() exists only for
// spawned servers and blocks the loop while the new process comes up (tens of ms), and the
// real network's own latency adds to the link latency the fabric applies in-process.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "real/acl.h"
#include "real/real_fabric.h"
#include "real/redis_conn.h"
#include "real/repl_relay.h"
#include "real/spawn.h"
#include "sim/scenario/backend.h"

namespace redlab::real {

// The trace meta key of a server's program and version: "server.redis" = "valkey 8.0.1".
inline const std::string kServerMetaPrefix = "server.";

// "valkey 8.0.1", "redis 7.0.15" from the text of INFO server: server_name (Valkey; Redis has
// none: "redis") and that name's <name>_version, else redis_version (which Valkey 8 keeps at
// 7.2.4 for clients that check it). "" when the text has no version.
std::string software_of_info(const std::string& info);

struct RealBackendOptions {
  std::string backend;               // "spawn", "spawn:redis", "spawn:valkey", or a URL:
                                     // redis://[user:pass@]host:port[/db] (valkey:// too), unix://
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
  void set_run_needs(const scenario::RunNeeds& needs) override { needs_ = needs; }
  void start(Scheduler& scheduler, Trace* trace, uint64_t seed,
             const std::vector<scenario::ServerSetup>& servers, net::LinkConfig link,
             std::vector<ConfigRefusal>& refused) override;
  net::Fabric& fabric() override;
  Reply admin(const std::string& server, const net::Argv& argv) override;
  Scheduler::RunResult run_until(TimeUs end_us, uint64_t events_max,
                                 const std::atomic<bool>* cancel) override;
  void server_command(const std::string& server, net::Argv argv) override;
  void restart(const std::string& server, Stop how) override;
  bool can_jump_clock() const override { return false; }
  void jump_clock(const std::string& server, TimeUs delta_us) override;
  // Replication between spawned servers: a replica starts with --replicaof pointing at a
  // relay (real/repl_relay.h) that carries its link, so lag and partitions act on it; a
  // failover cuts the link, kills the primary (its machine dies), sends REPLICAOF NO ONE to
  // the replica and re-points the primary's name to it. Not on a user's server.
  bool can_replicate() const override { return spawn_; }
  void failover(const std::string& replica) override;
  std::string leads_to(const std::string& name) const override;
  void replication_lag(const std::string& replica, TimeUs extra_us) override;
  void replication_partition(const std::string& replica, bool on) override;
  void finish() noexcept override;
  std::string trouble() const override { return trouble_; }

  // For the trace's meta and tests.
  const std::string& run_id() const { return run_id_; }
  const std::string& key_prefix() const { return key_prefix_; }
  // The run's ACL user on a URL backend ("" when none was made: a spawned server, or
  // credentials that cannot create users), the ACL rules it got, and why there is none.
  const std::string& run_user() const { return run_user_made_ ? run_user_.name : kNoUser; }
  const std::vector<std::string>& run_user_rules() const { return run_user_rules_; }
  const std::string& no_run_user_reason() const { return no_run_user_reason_; }
  // A server's program and version as INFO server gave them ("valkey 8.0.1"); "" when unknown.
  const std::string& server_software(const std::string& server) const;
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
  // ACL SETUSER is retried without a command the server does not know (an older server than
  // the fake's table), this many times at most.
  static constexpr int kSetUserAttemptsMax = 48;
  // SCRIPT KILL at the end: a server in a script answers nothing until the script has run for
  // its busy-reply-threshold (lua-time-limit, 5000 ms by default), then BUSY to everyone but
  // SCRIPT KILL; waited for that long plus this, at most kScriptKillWaitMaxMs in all.
  static constexpr int kBusyThresholdDefaultMs = 5000;
  static constexpr int kScriptKillMarginMs = 1500;
  static constexpr int kScriptKillWaitMaxMs = 20000;
  static constexpr int kBusyRetryMs = 20;

 private:
  struct Server {
    std::string name;
    Endpoint endpoint;
    size_t spawn_index = 0;
    std::unique_ptr<Connection> admin;
    std::unique_ptr<Connection> as_run_user;  // admin() as the run's ACL user
    bool shut_down = false;                   // SHUTDOWN NOSAVE at the end (a spawned server)
    bool failed_over = false;                 // killed by a failover: down for good
    std::vector<std::pair<std::string, std::string>> config;   // as applied (re-applied on restart)
    std::vector<std::pair<std::string, std::string>> restore;  // a user's values before the run
    std::string software;  // "valkey 8.0.1" (INFO server), "" when it could not be read
  };
  // A spawned server's persistence settings as command-line arguments (--appendonly yes ...).
  static std::vector<std::string> persistence_args(
      const std::vector<std::pair<std::string, std::string>>& config);
  Server& server_named(const std::string& name);
  std::string address(const Endpoint& ep) const;
  // The admin connection, (re)opened if needed; nullptr and error set when unreachable.
  Connection* admin_conn(Server& s, int timeout_ms, std::string& error);
  void apply_config(Server& s, std::vector<ConfigRefusal>* refused);
  // INFO server on the admin connection: s.software, and the trace's meta.
  void read_software(Server& s);
  bool server_faults_allowed() const { return spawn_ || options_.allow_server_faults; }
  // The ACL rule names of the server-wide commands the run needs (with allow_server_faults).
  std::vector<std::string> extra_rules() const;
  // On a user's server: makes the ACL user, or finds that these credentials cannot and refuses
  // what the run would need one for. Throws BackendError.
  void create_run_user(Server& s);
  // what: the command the credentials were refused ("ACL SETUSER", "ACL DELUSER").
  void refuse_without_run_user(const Server& s, const char* what) const;
  // The endpoint as the run user (the URL's host, port and db).
  Endpoint run_user_endpoint(const Server& s) const;
  // finish() steps; each notes its own trouble. finish_user_server: on a user's server, stop a
  // script of the run (only when one may run), report the refusals, delete the ACL user, the
  // keys, restore the config. stop_scripts returns whether the server now answers (not BUSY,
  // not gone).
  void finish_user_server(Server& s, bool scripts_may_run);
  bool stop_scripts(Server& s);
  void report_acl_refusals(Server& s);
  void delete_run_user(Server& s);
  // A command on the admin connection at the end of the run, sent again once on a new
  // connection when the old one was closed meanwhile.
  std::optional<Reply> finish_command(Server& s, const net::Argv& argv, std::string& error,
                                      int timeout_ms = kFinishCommandTimeoutMs);
  // How long SCRIPT KILL is waited for: the busy threshold plus a margin, bounded.
  int script_wait_ms() const;
  // "script lock_release (--script)" for a refusal inside a script, from its SHA-1; "" if the
  // run has no script of that SHA-1.
  std::string script_named_by(const std::string& sha) const;
  // The script the fabric saw go unanswered, for messages: "script spin (--script) run by A".
  std::string left_script_named() const;

  RealBackendOptions options_;
  bool spawn_ = false;
  ServerProgram program_ = ServerProgram::redis;  // what `spawn...` starts
  Endpoint url_endpoint_;
  std::string run_id_;
  std::string key_prefix_;
  Trace* trace_ = nullptr;
  Scheduler* scheduler_ = nullptr;
  std::unique_ptr<SpawnedServers> spawned_;
  // Replication (spawned servers): a relay per replica, by the replica's name; the primary each
  // follows; the names a failover re-pointed. replicas_synced_: the setup reached them.
  std::map<std::string, std::unique_ptr<ReplRelay>> relays_;
  std::map<std::string, std::string> primary_of_;
  std::map<std::string, std::string> aliases_;
  bool replicas_synced_ = false;
  // Waits until each replica's link is up (INFO replication), then, before the run, until it
  // has acknowledged the primary's setup writes (WAIT). Throws BackendError.
  void wait_replicas_linked();
  void wait_replicas_acked();
  std::map<std::string, int> replicas_per_primary() const;
  std::vector<Server> servers_;
  std::unique_ptr<RealFabric> fabric_;
  bool finished_ = false;
  bool run_started_ = false;  // the fabric exists: keys of the run may exist
  std::string trouble_;       // servers found gone at the end of the run
  // "redis://host:port WHAT: the verdicts are about a broken run" appended to trouble().
  void note_trouble(const Server& s, const std::string& what);
  // "redis://host:port WHAT" appended to trouble() as it is (no blank before a WHAT that
  // starts with ": ").
  void note_trouble_line(const Server& s, const std::string& what);

  scenario::RunNeeds needs_;
  RunUser run_user_;
  bool run_user_made_ = false;
  bool run_user_sent_ = false;  // an ACL SETUSER went out: the user may exist (finish deletes it)
  bool admin_script_unanswered_ = false;  // a setup script had no reply: it may still run
  std::vector<std::string> run_user_rules_;
  std::string no_run_user_reason_;
  int busy_threshold_ms_ = kBusyThresholdDefaultMs;
  // A connection (the user's credentials) that only a second Ctrl-C writes on: ACL DELUSER.
  std::unique_ptr<Connection> guard_;
  int emergency_slot_ = -1;
  // ACL refusals the fabric saw in replies (the first few kept), and how many in all.
  struct Refusal {
    std::string host, error;
  };
  static constexpr size_t kRefusalsKeptMax = 8;
  std::vector<Refusal> refusals_;
  int64_t refusals_seen_ = 0;
  static inline const std::string kNoUser;
  static inline const std::string kUnknownSoftware;
};

std::unique_ptr<scenario::Backend> make_real_backend(RealBackendOptions options);

}  // namespace redlab::real
