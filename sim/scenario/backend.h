// Where a scenario's servers are: the in-process fake (here, sim/) or real redis-server
// processes (real/real_backend.h). The engine builds clients, actors, faults and checks the
// same way on both; only what is behind this interface differs: the servers, the fabric
// between clients and servers, and how time moves (virtual jumps vs the wall clock).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/reply.h"
#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/net/fabric.h"
#include "sim/net/network.h"

namespace redlab::scenario {

// An unusable backend: a bad URL, redis-server missing, a server that does not answer, a
// server-wide fault refused on a user's server. what() is one line naming what and where.
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a run needs from a server redlab did not start, found before the run (run_needs.h):
// the real backend gives the run's ACL user exactly that, and without ACL rights refuses a run
// that needs more than a fixed allow-list (docs/real-backend.md).
struct RunNeeds {
  // Server-wide commands the run sends with --allow-server-faults (its faults, and the
  // server-wide lines of its steps and setup): the command and, for a container, its
  // sub-command: {"DEBUG", "SLEEP"}, {"SCRIPT", "FLUSH"}, {"CONFIG", "SET"}.
  std::vector<std::vector<std::string>> server_commands;
  // The Lua scripts the run may execute (empty: none), --script answers marked `replaced`.
  struct Script {
    std::string name, source;
    bool replaced = false;
  };
  std::vector<Script> scripts;
  // The raw command lines of the steps and setup that may run: their first two words as
  // written ("" for a word computed by a ${...} template), and whose line it is ("actor A",
  // "setup").
  struct Command {
    std::vector<std::string> words;
    std::string whose;
  };
  std::vector<Command> commands;
};

// A server the scenario declares, as the engine resolved it.
struct ServerSetup {
  std::string name;
  std::vector<std::pair<std::string, std::string>> config;  // CONFIG SET name value, in order
  TimeUs clock_offset_us = 0;
  std::string replica_of{};  // a replica of that server ("": a primary)
};

class Backend {
 public:
  virtual ~Backend() = default;
  // For the trace's meta "backend" and for messages: "fake", "spawn", "redis://host:port"
  // (never a password).
  virtual std::string describe() const = 0;
  // True when redlab owns the servers (the fake, spawned processes): server-wide faults
  // (DEBUG, CLIENT PAUSE, SCRIPT FLUSH, restart, config) may run there.
  virtual bool owns_servers() const = 0;
  // Creates or reaches the servers, applies their config (a refused CONFIG SET throws
  // ScenarioError from the engine: start() returns the error text in `refused` instead),
  // and makes the fabric. Time 0 of the scheduler is now. Throws BackendError.
  struct ConfigRefusal {
    std::string server, name, value, error;
  };
  virtual void start(Scheduler& scheduler, Trace* trace, uint64_t seed,
                     const std::vector<ServerSetup>& servers, net::LinkConfig link,
                     std::vector<ConfigRefusal>& refused) = 0;
  // The same, told first what the run needs (the engine calls this one): a backend on a
  // server redlab did not start limits the run to it, and throws BackendError for a run that
  // server cannot be made to keep inside its limits.
  void start(Scheduler& scheduler, Trace* trace, uint64_t seed,
             const std::vector<ServerSetup>& servers, net::LinkConfig link,
             std::vector<ConfigRefusal>& refused, const RunNeeds& needs) {
    set_run_needs(needs);
    start(scheduler, trace, seed, servers, link, refused);
  }
  virtual void set_run_needs(const RunNeeds& needs) { (void)needs; }
  virtual net::Fabric& fabric() = 0;
  // A command on a server outside any client, now (setup commands at time 0).
  virtual Reply admin(const std::string& server, const net::Argv& argv) = 0;
  // Runs the world until end_us or until events_max events ran, or `cancel` is set. The fake
  // jumps virtual time; a real backend waits in poll() on its sockets and the timers.
  virtual Scheduler::RunResult run_until(TimeUs end_us, uint64_t events_max,
                                         const std::atomic<bool>* cancel) = 0;
  // Server-wide faults (only where owns_servers(), or allowed by the user).
  virtual void server_command(const std::string& server,
                              net::Argv argv) = 0;  // its reply is dropped
  // restart: a clean shutdown and start (SHUTDOWN: the AOF fsynced, an RDB saved when there
  // are save points). NoSave: SHUTDOWN NOSAVE (the AOF fsynced, no RDB saved; served even
  // while a script holds the server). crash: the machine dies (a power loss): only what
  // reached the disk survives. Either way the script cache is lost and what persisted is loaded
  // again (nothing, without appendonly or save points); the server's config is applied again.
  enum class Stop : uint8_t { Clean, NoSave, Crash };
  virtual void restart(const std::string& server, Stop how) = 0;
  virtual bool can_jump_clock() const = 0;
  // Replication (servers[].replica_of, the failover, replica_lag and replica_partition
  // faults): start() attaches the replicas; the faults act on a replica's link.
  virtual bool can_replicate() const { return false; }
  // The replica becomes a primary with what it had received, its primary goes down for good,
  // and the primary's name leads to the replica.
  virtual void failover(const std::string& replica) { (void)replica; }
  // The server a name clients use leads to now: itself, unless a failover re-pointed it.
  virtual std::string leads_to(const std::string& name) const { return name; }
  // The replication stream to `replica` arrives extra_us later from now on (0: none).
  virtual void replication_lag(const std::string& replica, TimeUs extra_us) {
    (void)replica, (void)extra_us;
  }
  // The link between a replica and its primary is cut (the stream waits) or healed.
  virtual void replication_partition(const std::string& replica, bool on) {
    (void)replica, (void)on;
  }
  // True when restart(Stop::Crash) loses what a crash of the machine loses (the fake): a killed
  // process does not lose what the kernel holds of its files.
  virtual bool can_crash_machine() const { return false; }
  virtual void jump_clock(const std::string& server, TimeUs delta_us) = 0;
  // True when the servers report their own activity into the trace (the fake: commands
  // served, keys written and expired, ...); false when the trace holds only what clients
  // observed (a real server).
  virtual bool server_events() const { return false; }
  // The server's keyspace now, from its own state (the fake: every key with its value
  // summary, as its key events report them; keys whose TTL has passed count as gone), or
  // nullopt where redlab cannot see it. For tests that hold the trace against the truth.
  virtual std::optional<std::vector<KeyState>> keyspace(const std::string& server) const {
    (void)server;
    return std::nullopt;
  }
  // The server's SLOWLOG now, newest first, from its own state (id, logged_at_us,
  // duration_us, argv), or nullopt where redlab cannot see it. For tests, as keyspace().
  virtual std::optional<std::vector<SlowlogRow>> slowlog(const std::string& server) const {
    (void)server;
    return std::nullopt;
  }
  // A server's clock (unix ms) at time 0 of the run, when known (the fake); -1 otherwise.
  virtual int64_t server_clock_unix_ms(const std::string& server) const {
    (void)server;
    return -1;
  }
  // What went wrong with the servers during the run that is not part of the scenario (a
  // server that died or stopped answering), in one line; "" if nothing. Read after finish().
  virtual std::string trouble() const { return ""; }
  // After the run, also after an error: the run's keys deleted, config restored, spawned
  // servers stopped. Never throws.
  virtual void finish() noexcept = 0;
};

// The in-process fake Redis behind the simulated network (the default).
std::unique_ptr<Backend> make_fake_backend();

}  // namespace redlab::scenario
