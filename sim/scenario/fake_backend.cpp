// The fake backend: fake::Server objects behind the simulated network, on virtual time.
// A run on it is a pure function of its inputs (DESIGN.md), so nothing here reads the wall
// clock or draws from anything but the seed the engine passes.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "sim/fake/server.h"
#include "sim/fake/util.h"
#include "sim/scenario/backend.h"

namespace redlab::scenario {
namespace {

class FakeBackend final : public Backend {
 public:
  std::string describe() const override { return "fake"; }
  bool owns_servers() const override { return true; }
  bool server_events() const override { return true; }
  std::optional<std::vector<KeyState>> keyspace(const std::string& server) const override {
    // A lane's own server. A primary a failover took down holds nothing anyone can read: its
    // process (its machine) is gone, whatever the object still holds.
    auto it = servers_.find(server);
    if (it == servers_.end()) return std::nullopt;
    if (network_->server_down(server)) return std::vector<KeyState>{};
    fake::Server& s = *it->second;  // (dbs() is not const; nothing is changed here)
    int64_t now_ms = s.unix_ms(scheduler_->now_us());
    std::vector<KeyState> out;
    auto& dbs = s.dbs();
    for (size_t db = 0; db < dbs.size(); db++)
      for (const auto& [key, entry] : dbs[db].dict) {
        if (entry.expire_at_ms >= 0 && now_ms > entry.expire_at_ms) continue;  // expired
        out.push_back(KeyState{static_cast<int>(db), key, fake::type_name(entry.value.type()),
                               fake::value_summary(entry.value), entry.expire_at_ms});
      }
    std::sort(out.begin(), out.end(), [](const KeyState& a, const KeyState& b) {
      return std::tie(a.db, a.key) < std::tie(b.db, b.key);
    });
    return out;
  }
  std::optional<std::vector<SlowlogRow>> slowlog(const std::string& server) const override {
    auto it = servers_.find(server);
    if (it == servers_.end()) return std::nullopt;
    std::vector<SlowlogRow> out;
    for (const auto& e : it->second->slowlog())
      out.push_back(SlowlogRow{e.id, e.logged_at_us, e.duration_us, e.argv, -1, kNoEvent});
    return out;
  }
  int64_t server_clock_unix_ms(const std::string& server) const override {
    auto it = servers_.find(server);
    return it == servers_.end() ? -1 : it->second->unix_ms(0);
  }

  void start(Scheduler& scheduler, Trace* trace, uint64_t seed,
             const std::vector<ServerSetup>& servers, net::LinkConfig link,
             std::vector<ConfigRefusal>& refused) override {
    scheduler_ = &scheduler;
    setups_ = servers;
    network_ = std::make_unique<net::Network>(scheduler, seed, trace);
    network_->set_default_link(link);
    for (const ServerSetup& def : servers) {
      auto server = std::make_unique<fake::Server>(fake::ServerOptions{.name = def.name});
      fake::ClientId admin = server->connect(0);
      for (auto& [name, value] : def.config) {
        Reply r = server->call(admin, {"CONFIG", "SET", name, value});
        if (r.is_error()) refused.push_back(ConfigRefusal{def.name, name, value, r.str});
      }
      admins_[def.name] = admin;
      network_->add_server(def.name, server.get(), def.clock_offset_us);
      servers_[def.name] = std::move(server);
    }
    for (const ServerSetup& def : servers)
      if (!def.replica_of.empty()) network_->add_replication(def.replica_of, def.name);
  }

  net::Fabric& fabric() override { return *network_; }

  Reply admin(const std::string& server, const net::Argv& argv) override {
    return servers_.at(server)->call(admins_.at(server), argv);
  }

  Scheduler::RunResult run_until(TimeUs end_us, uint64_t events_max,
                                 const std::atomic<bool>*) override {
    return scheduler_->run_until(end_us, events_max);
  }

  void server_command(const std::string& server, net::Argv argv) override {
    network_->server_command(server, std::move(argv));
  }

  void restart(const std::string& server, Stop how) override {
    TimeUs now = scheduler_->now_us();
    fake::Server& old = *servers_.at(server);
    // What the disk holds: everything after a clean shutdown, what was fsynced (or the last
    // snapshot) after a crash of the machine.
    std::optional<fake::PersistedState> kept =
        how == Stop::Crash ? old.persisted_on_crash(now)
                           : old.persisted_on_shutdown(now, /*save_rdb=*/how == Stop::Clean);
    auto fresh = std::make_unique<fake::Server>(fake::ServerOptions{.name = server});
    // A restart keeps redis.conf: the config is applied again.
    fake::ClientId admin = fresh->connect(now);
    fresh->advance(now);
    for (const ServerSetup& def : setups_)
      if (def.name == server)
        for (auto& [name, value] : def.config) fresh->call(admin, {"CONFIG", "SET", name, value});
    network_->replace_server(server, fresh.get());
    // Loaded after the network observes the new server: its key events tell what came back.
    if (kept) fresh->load_persisted(*kept, now);
    admins_[server] = admin;
    // The old server stays alive until the end: callbacks already scheduled may refer to it.
    retired_.push_back(std::move(servers_[server]));
    servers_[server] = std::move(fresh);
  }

  bool can_jump_clock() const override { return true; }
  bool can_replicate() const override { return true; }
  void failover(const std::string& replica) override { network_->failover(replica); }
  std::string leads_to(const std::string& name) const override { return network_->resolve(name); }
  void replication_lag(const std::string& replica, TimeUs extra_us) override {
    network_->set_replication_lag(replica, extra_us);
  }
  void replication_partition(const std::string& replica, bool on) override {
    for (const ServerSetup& def : setups_)
      if (def.name == replica && !def.replica_of.empty())
        network_->set_partition(replica, def.replica_of, on);
  }
  bool can_crash_machine() const override { return true; }
  void jump_clock(const std::string& server, TimeUs delta_us) override {
    network_->jump_server_clock(server, delta_us);
  }

  void finish() noexcept override {}

 private:
  Scheduler* scheduler_ = nullptr;
  std::vector<ServerSetup> setups_;
  // Declared before the network: the network refers to the servers and goes first.
  std::map<std::string, std::unique_ptr<fake::Server>> servers_;
  std::vector<std::unique_ptr<fake::Server>> retired_;
  std::map<std::string, fake::ClientId> admins_;
  std::unique_ptr<net::Network> network_;
};

}  // namespace

std::unique_ptr<Backend> make_fake_backend() {
  return std::make_unique<FakeBackend>();
}

}  // namespace redlab::scenario
