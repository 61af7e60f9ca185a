// Private server processes for `--backend spawn` (and the real-backend tests): redis-server
// (`spawn`, `spawn:redis`) or valkey-server (`spawn:valkey`), which takes the same options.
//
// Each server gets a free loopback port (found by binding port 0; a lost race is retried), a
// temporary directory (its cwd and `dir`, holding its log) and a configuration that keeps
// nothing on disk and allows DEBUG: `--save '' --appendonly no --enable-debug-command yes`.
// start() returns once every server answers PING, or throws BackendError with the last line
// of the log of the one that did not come up.
//
// Nothing outlives redlab: the destructor stops the servers (SIGTERM, then SIGKILL after a
// grace period, always waitpid) and removes the temporary directories; a SIGINT/SIGTERM
// handler kills every registered child (and, when the signal is about to end the process,
// removes their directories), then passes the signal on to the handler installed before it,
// or dies of it as with no handler; and each child asks the kernel
// for SIGKILL when its parent dies (PR_SET_PDEATHSIG), which covers crashes and SIGKILL.
// Caveat of the last: Linux sends it when the *thread* that forked exits, so the object
// should live on the thread that started it (the GUI's worker thread does both).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace redlab::real {

// Which server program redlab spawns.
enum class ServerProgram { redis, valkey };
// "redis-server" / "valkey-server".
const char* program_binary(ServerProgram program);
// The program a backend string spawns: "spawn" and "spawn:redis" -> redis, "spawn:valkey" ->
// valkey; nullopt for anything else (fake, a URL, "spawn:foo").
std::optional<ServerProgram> spawn_program(const std::string& backend);

class SpawnedServers {
 public:
  // Starts count servers of the program, each with these extra `--name value` arguments, and
  // server i after them with server_args[i] if given (its persistence settings: it starts, and
  // restarts, with them). Throws scenario::BackendError ("redis-server not found in PATH: ...",
  // "valkey-server on port P exited: <log line>", "redis-server on port P did not answer PING
  // within 5000 ms").
  explicit SpawnedServers(size_t count, std::vector<std::string> extra_args = {},
                          ServerProgram program = ServerProgram::redis,
                          std::vector<std::vector<std::string>> server_args = {});
  ~SpawnedServers();
  SpawnedServers(const SpawnedServers&) = delete;
  SpawnedServers& operator=(const SpawnedServers&) = delete;

  size_t size() const { return servers_.size(); }
  int port(size_t index) const { return servers_.at(index).port; }
  pid_t pid(size_t index) const { return servers_.at(index).pid; }
  const std::string& dir(size_t index) const { return servers_.at(index).dir; }
  // The last non-empty line of a server's log (for error messages).
  std::string log_tail(size_t index) const;

  // Stops a server (clean: SIGTERM, a SHUTDOWN that saves what its persistence settings
  // save; else SIGKILL, a crash) and starts it again on the same port and directory, with the
  // same arguments (so that it loads what was persisted); returns once it answers PING.
  // Throws BackendError if it does not come back, or if a clean stop failed (the server did
  // not exit within kStopGraceMs of SIGTERM, e.g. "Error trying to save the DB, can't exit",
  // and was killed: what it was to save on the way down is lost).
  void restart(size_t index, bool clean = false);
  // SHUTDOWN NOSAVE, then the same start: what a user does to a server held by a script that
  // wrote (its BUSY reply names SCRIPT KILL or SHUTDOWN NOSAVE, and Redis defers a SIGTERM
  // until the script ends). The AOF is still flushed; no RDB is saved. Throws BackendError if
  // it does not exit within kStopGraceMs (it is killed then) or does not come back.
  void restart_nosave(size_t index);
  // Kills a server (SIGKILL) and reaps it; tests use this to stage a crash.
  void kill_server(size_t index);
  // Stops every server (SIGTERM, SIGKILL after grace_ms) and removes the directories.
  // Idempotent, never throws.
  void stop_all() noexcept;

  // Where the program is: $REDLAB_REDIS_SERVER (or $REDLAB_VALKEY_SERVER), else the first
  // redis-server (valkey-server) in PATH; empty when there is none.
  static std::string find_server(ServerProgram program);
  static std::string find_redis_server() { return find_server(ServerProgram::redis); }
  ServerProgram program() const { return program_; }

  static constexpr int kPingTimeoutMs = 5000;
  static constexpr int kStopGraceMs = 2000;
  static constexpr int kPortAttemptsMax = 5;

 private:
  struct Server {
    int port = 0;
    pid_t pid = -1;
    std::string dir;
    std::string log_path;
    std::vector<std::string> args;  // its own arguments, after the common extra_args_
  };
  // Forks and execs redis-server for s (port and dir set); returns the pid.
  pid_t launch(const Server& s) const;
  // Waits until s answers PING; on failure returns the reason.
  std::string wait_ready(Server& s) const;
  // Starts s on a new free port (retrying a port taken meanwhile), or on s.port if keep_port.
  void start_one(Server& s, bool keep_port);
  // Stops s: SIGTERM and up to grace_ms for it to exit (0: none), then SIGKILL. True when it
  // exited by itself with status 0 (a clean shutdown).
  // With nosave, SHUTDOWN NOSAVE is sent instead of SIGTERM.
  static bool stop_one(Server& s, int grace_ms, bool nosave = false) noexcept;

  ServerProgram program_;
  std::string binary_;
  std::vector<std::string> extra_args_;
  std::vector<Server> servers_;
};

}  // namespace redlab::real
