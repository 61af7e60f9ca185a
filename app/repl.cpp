// The repl is the conformance tests' instrument: the same script is fed to a real
// redis-server and to the fake, and the printed bytes must match. Besides redis-cli's own
// syntax it takes a few meta lines so that several connections can be scripted:
//
//   @NAME CMD ...        send CMD on connection NAME (opened on first use) and print the reply
//   :send NAME CMD ...   send without waiting (a BLPOP that another connection will wake),
//                        then pause 20 ms so the server has read it before the next line
//   :recv NAME [MS]      print the next reply or push on NAME (waits up to MS, default 5000)
//   :close NAME          close connection NAME
//   :sleep MS            wait (in fake mode the virtual clock follows the wall clock)
//   # ...                a comment
//
// SUBSCRIBE-family commands print one reply per channel, as the server sends them.
#include "app/repl.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <unistd.h>

#include "real/redis_conn.h"
#include "sim/core/cmdline.h"
#include "sim/core/reply.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::app {
namespace {

using Argv = std::vector<std::string>;
constexpr int kRecvDefaultTimeoutMs = 5000;
constexpr int kSendSettleMs = 20;
// The longest line the repl reads. Redis itself refuses an inline command over 64 KiB
// (PROTO_INLINE_MAX_SIZE) but takes a bulk string up to 512 MB, and redis-cli turns a line
// into bulk strings, so a repl line may carry a big value; 16 MiB is far beyond anything
// typed or pasted, while a line's worst case (the line, its split arguments, the stored
// value, the quoted reply of up to 4 bytes a byte) stays near 100 MB. A longer line is not
// a command (/dev/zero on stdin): it ends the repl with exit status 2.
constexpr size_t kLineBytesMax = size_t(16) << 20;

// What a repl talks to: named connections that send commands and receive replies/pushes.
class Backend {
 public:
  virtual ~Backend() = default;
  // Opens the connection if needed; false with error on failure.
  virtual bool ensure(const std::string& conn, std::string& error) = 0;
  virtual bool send(const std::string& conn, const Argv& argv, std::string& error) = 0;
  // timeout_ms < 0: wait as long as it takes. nullopt + empty error = timed out.
  virtual std::optional<Reply> receive(const std::string& conn, int timeout_ms,
                                       std::string& error) = 0;
  virtual void close(const std::string& conn) = 0;
  virtual void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
};

class RealBackend : public Backend {
 public:
  explicit RealBackend(real::Endpoint ep) : ep_(std::move(ep)) {}
  bool ensure(const std::string& conn, std::string& error) override {
    auto& c = conns_[conn];
    if (c && !c->broken()) return true;
    c = real::Connection::open(ep_, 5000, error);
    if (!c) error = "cannot connect to " + ep_.display() + ": " + error;
    return c != nullptr;
  }
  bool send(const std::string& conn, const Argv& argv, std::string& error) override {
    if (!ensure(conn, error)) return false;
    return conns_[conn]->send(argv, error);
  }
  std::optional<Reply> receive(const std::string& conn, int timeout_ms,
                               std::string& error) override {
    if (!ensure(conn, error)) return std::nullopt;
    return conns_[conn]->receive(timeout_ms, error);
  }
  void close(const std::string& conn) override { conns_.erase(conn); }

 private:
  real::Endpoint ep_;
  std::map<std::string, std::unique_ptr<real::Connection>> conns_;
};

// The fake, with its virtual clock following the wall clock, so that TTLs and DEBUG SLEEP
// behave in the repl as they do on a real server.
class FakeBackend : public Backend {
 public:
  FakeBackend() : server_(make_options()), start_(std::chrono::steady_clock::now()) {}

  bool ensure(const std::string& conn, std::string&) override {
    if (!ids_.count(conn)) {
      fake::ClientId id = server_.connect(now_us());
      ids_[conn] = id;
      names_[id] = conn;
    }
    return true;
  }
  bool send(const std::string& conn, const Argv& argv, std::string& error) override {
    ensure(conn, error);
    pump();
    if (!server_.connected(ids_[conn])) {
      error = "Server closed the connection";
      return false;
    }
    server_.submit(ids_[conn], argv, now_us());
    return true;
  }
  std::optional<Reply> receive(const std::string& conn, int timeout_ms,
                               std::string& error) override {
    error.clear();
    ensure(conn, error);
    fake::ClientId id = ids_[conn];
    int64_t deadline = timeout_ms < 0 ? -1 : now_us() + int64_t{timeout_ms} * 1000;
    while (true) {
      pump();
      auto& q = inbox_[id];
      if (!q.empty() && q.front().at_us <= now_us()) {
        Reply r = std::move(q.front().reply);
        q.pop_front();
        return r;
      }
      if (q.empty() && closed_.count(id)) {
        error = "Server closed the connection";
        return std::nullopt;
      }
      int64_t next = server_.next_event_us();
      if (!q.empty()) next = std::min(next, q.front().at_us);
      if (next == fake::kNever && deadline < 0) {
        // Nothing scheduled and nobody else can act while the repl waits on this line.
        error = "redlab: no reply will ever come (nothing can wake this connection)";
        return std::nullopt;
      }
      int64_t target = next;
      if (deadline >= 0) {
        if (now_us() >= deadline) return std::nullopt;
        target = std::min(target, deadline);
      }
      int64_t wait = target - now_us();
      if (wait > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(wait, 100000)));
    }
  }
  void close(const std::string& conn) override {
    auto it = ids_.find(conn);
    if (it == ids_.end()) return;
    server_.disconnect(it->second, now_us());
    inbox_.erase(it->second);
    ids_.erase(it);
  }

 private:
  static fake::ServerOptions make_options() {
    fake::ServerOptions o;
    // The repl shows real unix time (TIME, EXPIREAT) like a real server would.
    o.epoch_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    return o;
  }
  int64_t now_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 start_)
        .count();
  }
  void pump() {
    server_.advance(now_us());
    for (auto& o : server_.take_outputs()) inbox_[o.client].push_back(std::move(o));
    for (auto& [id, at] : server_.take_closed()) closed_.insert(id);
  }

  fake::Server server_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, fake::ClientId> ids_;
  std::map<fake::ClientId, std::string> names_;
  std::map<fake::ClientId, std::deque<fake::Output>> inbox_;
  std::set<fake::ClientId> closed_;
};

bool is_subscribe_family(const std::string& name) {
  return fake::equals_nocase(name, "subscribe") || fake::equals_nocase(name, "psubscribe") ||
         fake::equals_nocase(name, "unsubscribe") || fake::equals_nocase(name, "punsubscribe") ||
         fake::equals_nocase(name, "ssubscribe") || fake::equals_nocase(name, "sunsubscribe");
}

class Repl {
 public:
  Repl(Backend& b, const ReplOptions& o, std::ostream& out) : backend_(b), opts_(o), out_(out) {}

  // Returns false when the session should end (quit/exit, or the backend is unusable).
  bool line(const std::string& raw) {
    std::string text = raw;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return true;
    if (text[first] == '#') return true;
    if (opts_.echo) out_ << "> " << text << "\n";
    std::string conn = "main";
    if (text[first] == '@') {
      size_t sp = text.find_first_of(" \t", first);
      if (sp == std::string::npos) {
        out_ << "Invalid argument(s)\n";
        return true;
      }
      conn = text.substr(first + 1, sp - first - 1);
      text = text.substr(sp + 1);
    } else if (text[first] == ':') {
      return meta(text.substr(first + 1));
    }
    auto args = split_args(text);
    if (!args) {
      out_ << "Invalid argument(s)\n";
      return true;
    }
    if (args->empty()) return true;
    if (fake::equals_nocase((*args)[0], "quit") || fake::equals_nocase((*args)[0], "exit"))
      return false;
    // redis-cli's "N command" repeats the command N times.
    long repeat = 1;
    if (args->size() > 1) {
      char* end = nullptr;
      errno = 0;
      long n = std::strtol((*args)[0].c_str(), &end, 10);
      if (*end == '\0' && !(*args)[0].empty()) {
        if (errno == ERANGE || n <= 0) {
          out_ << "Invalid redis-cli repeat command option value.\n";
          return true;
        }
        repeat = n;
        args->erase(args->begin());
      }
    }
    constexpr long kRepeatMax = 1000000;
    repeat = std::min(repeat, kRepeatMax);
    for (long i = 0; i < repeat; i++) {
      if (!roundtrip(conn, *args)) return true;
    }
    return true;
  }

 private:
  bool roundtrip(const std::string& conn, const Argv& argv) {
    std::string error;
    if (!backend_.send(conn, argv, error)) {
      out_ << "Error: " << error << "\n";
      return false;
    }
    size_t expected = 1;
    bool until_zero = false;
    if (is_subscribe_family(argv[0])) {
      if (argv.size() > 1) {
        expected = argv.size() - 1;
      } else {
        until_zero = true;  // UNSUBSCRIBE with no channels: until the count drops to 0
      }
    }
    constexpr size_t kRepliesMax = 100000;
    for (size_t n = 0; n < kRepliesMax; n++) {
      auto r = backend_.receive(conn, opts_.reply_timeout_ms, error);
      if (!r) {
        if (error.empty()) {
          out_ << "(redlab: no reply within " << opts_.reply_timeout_ms << " ms)\n";
        } else {
          out_ << "Error: " << error << "\n";
        }
        return false;
      }
      out_ << format_cli(*r);
      // An error answers the whole command (Valkey's NOSUB for UNSUBSCRIBE a b outside
      // subscribed mode): no per-channel replies follow.
      if (r->kind == Reply::Kind::Error) break;
      if (until_zero) {
        if (r->kind != Reply::Kind::Array || r->elements.size() < 3 ||
            r->elements[2].kind != Reply::Kind::Integer || r->elements[2].integer == 0)
          break;
      } else if (n + 1 >= expected) {
        break;
      }
    }
    out_.flush();
    return true;
  }

  bool meta(const std::string& text) {
    auto args = split_args(text);
    if (!args || args->empty()) {
      out_ << "Invalid argument(s)\n";
      return true;
    }
    const std::string& verb = (*args)[0];
    std::string error;
    if (verb == "send" && args->size() >= 3) {
      Argv argv(args->begin() + 2, args->end());
      if (!backend_.send((*args)[1], argv, error)) out_ << "Error: " << error << "\n";
      // A real server may read a later line's command (sent on another connection) first:
      // give it a moment, so scripts behave the same on every run. The fake waits too, so
      // both see the same elapsed time.
      backend_.sleep_ms(kSendSettleMs);
    } else if (verb == "recv" && (args->size() == 2 || args->size() == 3)) {
      int timeout = args->size() == 3 ? std::atoi((*args)[2].c_str()) : kRecvDefaultTimeoutMs;
      auto r = backend_.receive((*args)[1], timeout, error);
      if (r) {
        out_ << format_cli(*r);
      } else if (error.empty()) {
        out_ << "(redlab: no reply within " << timeout << " ms)\n";
      } else {
        out_ << "Error: " << error << "\n";
      }
    } else if (verb == "close" && args->size() == 2) {
      backend_.close((*args)[1]);
    } else if (verb == "sleep" && args->size() == 2) {
      backend_.sleep_ms(std::atoi((*args)[1].c_str()));
    } else {
      out_ << "redlab: unknown meta command ':" << text << "'\n";
    }
    out_.flush();
    return true;
  }

  Backend& backend_;
  const ReplOptions& opts_;
  std::ostream& out_;
};

enum class LineRead { line, end, too_long };

// std::getline with a bound: a line of at most kLineBytesMax bytes (without its '\n'); a last
// line without '\n' counts.
LineRead read_line(std::istream& in, std::string* line) {
  line->clear();
  std::streambuf* buf = in.rdbuf();
  if (!buf || !in.good()) return LineRead::end;
  while (true) {
    int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return line->empty() ? LineRead::end : LineRead::line;
    }
    if (c == '\n') return LineRead::line;
    if (line->size() >= kLineBytesMax) return LineRead::too_long;
    line->push_back(char(c));
  }
}

}  // namespace

int run_repl(const ReplOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  std::unique_ptr<Backend> backend;
  if (options.backend == "fake") {
    backend = std::make_unique<FakeBackend>();
  } else {
    real::Endpoint ep;
    if (auto e = real::parse_endpoint(options.backend, ep)) {
      err << "redlab: --backend " << options.backend << ": " << *e << "\n";
      return 2;
    }
    auto b = std::make_unique<RealBackend>(ep);
    std::string error;
    if (!b->ensure("main", error)) {
      err << "redlab: " << error << "\n";
      return 2;
    }
    backend = std::move(b);
  }
  Repl repl(*backend, options, out);
  // A prompt only for a person at a terminal; piped input gets redis-cli's bare output.
  bool interactive = &in == &std::cin && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  std::string line;
  for (int64_t line_number = 1;; line_number++) {
    if (interactive) out << "redlab> " << std::flush;
    LineRead got = read_line(in, &line);
    if (got == LineRead::end) break;
    if (got == LineRead::too_long) {
      out.flush();
      err << "redlab: repl: line " << line_number << ": longer than the " << (kLineBytesMax >> 20)
          << " MiB limit for a repl line\n";
      return 2;
    }
    if (!repl.line(line)) break;
  }
  out.flush();
  return 0;
}

int repl_main(const std::vector<std::string>& args) {
  ReplOptions o;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        std::cerr << "redlab repl: " << flag << " needs a value\n";
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--backend") {
      auto v = value("--backend");
      if (!v) return 2;
      o.backend = *v;
    } else if (a.rfind("--backend=", 0) == 0) {
      o.backend = a.substr(10);
    } else if (a == "--echo") {
      o.echo = true;
    } else if (a == "--reply-timeout-ms" || a.rfind("--reply-timeout-ms=", 0) == 0) {
      auto v =
          a.size() > 18 ? std::optional<std::string>(a.substr(19)) : value("--reply-timeout-ms");
      if (!v) return 2;
      char* end = nullptr;
      errno = 0;
      long ms = std::strtol(v->c_str(), &end, 10);
      if (v->empty() || *end != '\0' || ms < 0 || errno == ERANGE || ms > INT32_MAX) {
        std::cerr << "redlab repl: --reply-timeout-ms: expected a number of milliseconds, got '"
                  << *v << "'\n";
        return 2;
      }
      o.reply_timeout_ms = static_cast<int>(ms);
    } else {
      std::cerr << "redlab repl: unknown option '" << a << "' (see redlab repl --help)\n";
      return 2;
    }
  }
  if (o.backend != "fake" && o.backend.rfind("redis://", 0) != 0 &&
      o.backend.rfind("valkey://", 0) != 0 && o.backend.rfind("unix://", 0) != 0) {
    std::cerr << "redlab repl: --backend: expected fake, redis://HOST:PORT, valkey://HOST:PORT or "
                 "unix:///PATH, got '"
              << o.backend << "'\n";
    return 2;
  }
  return run_repl(o, std::cin, std::cout, std::cerr);
}

}  // namespace redlab::app
