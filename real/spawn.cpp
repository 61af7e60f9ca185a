// See spawn.h. fork/exec rather than posix_spawn because the child must set PR_SET_PDEATHSIG;
// between fork and exec the child calls only async-signal-safe functions (the GUI runs this
// on a worker thread of a multi-threaded process).
#include "real/spawn.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "real/redis_conn.h"
#include "sim/scenario/backend.h"

namespace redlab::real {
namespace {

using scenario::BackendError;

// ---------------------------------------------------------------------------------------
// Children registry for the signal handler, which reads it with atomic loads only (it may run
// at any moment on any thread); writers take a mutex among themselves.
// ---------------------------------------------------------------------------------------

constexpr size_t kChildrenMax = 128;
constexpr size_t kPathBytesMax = 256;
struct ChildSlot {
  std::atomic<pid_t> pid{0};  // 0 = free; published after the paths are written
  char dir[kPathBytesMax] = {};
  char log_path[kPathBytesMax] = {};
};
std::array<ChildSlot, kChildrenMax> g_children;
struct sigaction g_previous_int;
struct sigaction g_previous_term;
std::once_flag g_handlers_installed;

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  for (auto& child : g_children) {
    pid_t pid = child.pid.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  const struct sigaction& previous = sig == SIGINT ? g_previous_int : g_previous_term;
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler != SIG_DFL) {
    previous.sa_handler(sig);  // the application's own handler (e.g. a graceful cancel)
    return;
  }
  // The process dies now, so no destructor will remove the directories: unlink and rmdir
  // are async-signal-safe (the servers write nothing else there).
  for (auto& child : g_children) {
    if (child.pid.load() <= 0) continue;
    if (child.log_path[0]) ::unlink(child.log_path);
    if (child.dir[0]) ::rmdir(child.dir);
  }
  // Die of the signal as if no handler were installed (the shell sees the right status).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  std::call_once(g_handlers_installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &g_previous_int);
    ::sigaction(SIGTERM, &action, &g_previous_term);
  });
}

std::mutex g_registry_mutex;  // between threads registering; the handler only reads

void register_child(pid_t pid, const std::string& dir, const std::string& log_path) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (auto& child : g_children) {
    if (child.pid.load() != 0) continue;
    std::snprintf(child.dir, kPathBytesMax, "%s", dir.c_str());
    std::snprintf(child.log_path, kPathBytesMax, "%s", log_path.c_str());
    child.pid.store(pid);
    return;
  }
  // Full: the child still has PR_SET_PDEATHSIG and the destructor.
}

void unregister_child(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (auto& child : g_children) {
    if (child.pid.load() != pid) continue;
    child.pid.store(0);
    return;
  }
}

// ---------------------------------------------------------------------------------------

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A loopback port nobody listens on right now (bind port 0 and ask). Another process may
// take it before redis-server binds it: start_one retries.
int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw BackendError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    throw BackendError("cannot find a free loopback port: " + err);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

const char* program_binary(ServerProgram program) {
  return program == ServerProgram::valkey ? "valkey-server" : "redis-server";
}

std::optional<ServerProgram> spawn_program(const std::string& backend) {
  if (backend == "spawn" || backend == "spawn:redis") return ServerProgram::redis;
  if (backend == "spawn:valkey") return ServerProgram::valkey;
  return std::nullopt;
}

std::string SpawnedServers::find_server(ServerProgram program) {
  const char* variable =
      program == ServerProgram::valkey ? "REDLAB_VALKEY_SERVER" : "REDLAB_REDIS_SERVER";
  if (const char* env = std::getenv(variable); env && *env) return executable(env) ? env : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program_binary(program);
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

SpawnedServers::SpawnedServers(size_t count, std::vector<std::string> extra_args,
                               ServerProgram program,
                               std::vector<std::vector<std::string>> server_args)
    : program_(program), extra_args_(std::move(extra_args)) {
  const std::string name = program_binary(program_);
  binary_ = find_server(program_);
  if (binary_.empty())
    throw BackendError(name + " not found in PATH: install " + name + " (script/bootstrap does)");
  install_handlers();
  servers_.resize(count);
  for (size_t i = 0; i < count && i < server_args.size(); i++)
    servers_[i].args = std::move(server_args[i]);
  try {
    for (Server& s : servers_) {
      char tmpl[] = "/tmp/redlab-redis-XXXXXX";
      if (!::mkdtemp(tmpl)) throw BackendError(std::string("mkdtemp: ") + std::strerror(errno));
      s.dir = tmpl;
      s.log_path = s.dir + "/redis.log";
      start_one(s, false);
    }
  } catch (...) {
    stop_all();
    throw;
  }
}

SpawnedServers::~SpawnedServers() {
  stop_all();
}

pid_t SpawnedServers::launch(const Server& s) const {
  // Everything the child needs is built here: after fork only async-signal-safe calls.
  std::vector<std::string> args = {binary_,
                                   "--port",
                                   std::to_string(s.port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--enable-debug-command",
                                   "yes",
                                   "--daemonize",
                                   "no",
                                   "--dir",
                                   s.dir};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  args.insert(args.end(), s.args.begin(), s.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const char* log_path = s.log_path.c_str();
  const char* dir = s.dir.c_str();
  const char* binary = binary_.c_str();
  pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) throw BackendError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    int log = ::open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (log < 0) ::_exit(127);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    // Our sockets (hiredis' are not close-on-exec) must not stay open in the server.
    ::close_range(3, ~0U, 0);
    if (::chdir(dir) != 0) ::_exit(127);
    // Ctrl-C reaches the whole foreground group; redis-server handles its own SIGINT.
    ::execv(binary, argv.data());
    ::_exit(127);
  }
  register_child(pid, s.dir, s.log_path);
  return pid;
}

std::string SpawnedServers::log_tail(size_t index) const {
  std::ifstream in(servers_.at(index).log_path);
  std::string line, last;
  // Bounded by the log's size (a freshly started server writes a few dozen lines).
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

std::string SpawnedServers::wait_ready(Server& s) const {
  Endpoint ep;
  ep.host = "127.0.0.1";
  ep.port = s.port;
  ep.password.clear();
  int64_t deadline_ms = now_ms() + kPingTimeoutMs;
  // Bounded by the deadline: each pass sleeps 10 ms or returns.
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(s.pid, &status, WNOHANG);
    if (done == s.pid) {
      unregister_child(s.pid);
      s.pid = -1;
      return "exited";
    }
    std::string error;
    if (auto conn = Connection::open(ep, 200, error)) {
      // Any answer will do (with --requirepass it is NOAUTH, and still an answer) but LOADING:
      // a restarted server says that until it has loaded its AOF or RDB, and would say it to
      // the run's first commands too.
      if (auto reply = conn->command({"PING"}, 500, error))
        if (reply->kind != Reply::Kind::Error || reply->str.rfind("LOADING", 0) != 0) return "";
    }
    if (now_ms() >= deadline_ms)
      return "did not answer PING within " + std::to_string(kPingTimeoutMs) + " ms";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void SpawnedServers::start_one(Server& s, bool keep_port) {
  std::string reason;
  for (int attempt = 0; attempt < kPortAttemptsMax; attempt++) {
    if (!keep_port) s.port = free_loopback_port();
    s.pid = launch(s);
    reason = wait_ready(s);
    if (reason.empty()) return;
    std::string tail = log_tail(size_t(&s - servers_.data()));
    if (s.pid > 0) stop_one(s, 0);
    bool port_taken = tail.find("Address already in use") != std::string::npos;
    if (keep_port || !port_taken)
      throw BackendError(std::string(program_binary(program_)) + " on port " +
                         std::to_string(s.port) + " " + reason + (tail.empty() ? "" : ": " + tail));
  }
  throw BackendError(std::string(program_binary(program_)) + ": no free port after " +
                     std::to_string(kPortAttemptsMax) + " attempts (" + reason + ")");
}

bool SpawnedServers::stop_one(Server& s, int grace_ms, bool nosave) noexcept {
  if (s.pid <= 0) return true;
  int status = 0;
  bool asked = false;
  if (grace_ms > 0 && nosave) {
    try {
      Endpoint ep;
      ep.host = "127.0.0.1";
      ep.port = s.port;
      std::string error;
      // No reply comes: the server exits, and the connection with it.
      if (auto conn = Connection::open(ep, 1000, error))
        asked = conn->send({"SHUTDOWN", "NOSAVE"}, error);
    } catch (const std::exception&) {
      asked = false;  // killed below, and reported as not shut down
    }
  } else if (grace_ms > 0) {
    asked = ::kill(s.pid, SIGTERM) == 0;
  }
  if (asked) {
    int64_t deadline_ms = now_ms() + grace_ms;
    // Bounded by the deadline: each pass sleeps 5 ms or returns.
    while (now_ms() < deadline_ms) {
      if (::waitpid(s.pid, &status, WNOHANG) == s.pid) {
        unregister_child(s.pid);
        s.pid = -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ::kill(s.pid, SIGKILL);
  while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_child(s.pid);
  s.pid = -1;
  return false;
}

void SpawnedServers::kill_server(size_t index) {
  stop_one(servers_.at(index), 0);
}

void SpawnedServers::restart(size_t index, bool clean) {
  Server& s = servers_.at(index);
  // Redis answers a SIGTERM it cannot honour ("Error trying to save the DB, can't exit") by
  // running on; the kill after the grace period would then pass a crash off as a clean
  // restart, and lose what the shutdown was to save.
  if (!stop_one(s, clean ? kStopGraceMs : 0) && clean) {
    std::string tail = log_tail(index);
    throw BackendError(std::string(program_binary(program_)) + " on port " +
                       std::to_string(s.port) + " did not shut down within " +
                       std::to_string(kStopGraceMs) + " ms of SIGTERM and was killed" +
                       (tail.empty() ? "" : ": " + tail));
  }
  start_one(s, true);
}

void SpawnedServers::restart_nosave(size_t index) {
  Server& s = servers_.at(index);
  if (!stop_one(s, kStopGraceMs, true)) {
    std::string tail = log_tail(index);
    throw BackendError(std::string(program_binary(program_)) + " on port " +
                       std::to_string(s.port) + " did not exit within " +
                       std::to_string(kStopGraceMs) + " ms of SHUTDOWN NOSAVE and was killed" +
                       (tail.empty() ? "" : ": " + tail));
  }
  start_one(s, true);
}

void SpawnedServers::stop_all() noexcept {
  for (Server& s : servers_) {
    stop_one(s, kStopGraceMs);
    if (!s.dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(s.dir, ec);
      s.dir.clear();
    }
  }
}

}  // namespace redlab::real
