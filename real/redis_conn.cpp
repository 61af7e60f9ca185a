#include "real/redis_conn.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace redlab::real {

Reply convert_reply(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return Reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return Reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER:
      return Reply::integer_reply(r->integer);
    case REDIS_REPLY_STRING:
      return Reply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_NIL:
      return Reply::nil();
    case REDIS_REPLY_ARRAY: {
      Reply out = Reply::array();
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; i++) out.elements.push_back(convert_reply(r->element[i]));
      return out;
    }
    default:
      return Reply::error("redlab: unsupported reply type");
  }
}

namespace {

struct ReplyDeleter {
  void operator()(void* r) const { freeReplyObject(r); }
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The URL for messages: credentials replaced by "***" (a password is never printed).
std::string redacted(const std::string& url) {
  size_t scheme = url.find("://");
  size_t at = url.rfind('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  return url.substr(0, scheme + 3) + "***" + url.substr(at);
}

}  // namespace

std::string Endpoint::display() const {
  if (!unix_path.empty()) return unix_path;
  return host + ":" + std::to_string(port);
}

std::optional<std::string> parse_endpoint(const std::string& url, Endpoint& out) {
  Endpoint ep;
  if (const char* pw = std::getenv("REDIS_PASSWORD")) ep.password = pw;
  std::string rest;
  if (url.rfind("unix://", 0) == 0) {
    rest = url.substr(7);
    size_t q = rest.find("?db=");
    if (q != std::string::npos) {
      ep.db = std::atoi(rest.c_str() + q + 4);
      rest = rest.substr(0, q);
    }
    if (rest.empty()) return "missing socket path in '" + redacted(url) + "'";
    ep.unix_path = rest;
    out = ep;
    return std::nullopt;
  }
  // valkey:// is Valkey's own spelling of the same URL (its clients take both).
  if (url.rfind("redis://", 0) == 0) {
    ep.scheme = "redis";
  } else if (url.rfind("valkey://", 0) == 0) {
    ep.scheme = "valkey";
  } else {
    return "expected redis://HOST:PORT, valkey://HOST:PORT or unix:///PATH";
  }
  rest = url.substr(ep.scheme.size() + 3);
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = cred.find(':');
    if (colon == std::string::npos) {
      ep.password = cred;
    } else {
      ep.user = cred.substr(0, colon);
      ep.password = cred.substr(colon + 1);
    }
  }
  size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) {
      char* end = nullptr;
      long v = std::strtol(db.c_str(), &end, 10);
      if (*end != '\0' || v < 0 || v > 1000000) return "bad database number '" + db + "'";
      ep.db = static_cast<int>(v);
    }
  }
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos) {
    std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    long v = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || v <= 0 || v > 65535) return "bad port '" + port + "'";
    ep.port = static_cast<int>(v);
    rest = rest.substr(0, colon);
  }
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']')
    rest = rest.substr(1, rest.size() - 2);
  if (rest.empty()) return "missing host in '" + redacted(url) + "'";
  ep.host = rest;
  out = ep;
  return std::nullopt;
}

Connection::~Connection() {
  if (ctx_) redisFree(ctx_);
}

int Connection::fd() const {
  return ctx_ ? ctx_->fd : -1;
}

std::unique_ptr<Connection> Connection::open(const Endpoint& ep, int timeout_ms,
                                             std::string& error) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisContext* c = ep.unix_path.empty() ? redisConnectWithTimeout(ep.host.c_str(), ep.port, tv)
                                         : redisConnectUnixWithTimeout(ep.unix_path.c_str(), tv);
  if (!c) {
    error = "out of memory";
    return nullptr;
  }
  std::unique_ptr<Connection> conn(new Connection());
  conn->ctx_ = c;
  if (c->err) {
    error = c->errstr;
    return nullptr;
  }
  if (!ep.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!ep.user.empty()) auth.push_back(ep.user);
    auth.push_back(ep.password);
    auto r = conn->command(auth, timeout_ms, error);
    if (!r) return nullptr;
    if (r->is_error()) {
      error = r->str;
      return nullptr;
    }
  }
  if (ep.db != 0) {
    auto r = conn->command({"SELECT", std::to_string(ep.db)}, timeout_ms, error);
    if (!r) return nullptr;
    if (r->is_error()) {
      error = r->str;
      return nullptr;
    }
  }
  return conn;
}

bool Connection::send(const std::vector<std::string>& argv, std::string& error) {
  if (broken_) {
    error = "connection is closed";
    return false;
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  char* raw = nullptr;
  int len = redisFormatCommandArgv(&raw, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  std::unique_ptr<char, decltype(&redisFreeCommand)> formatted(raw, &redisFreeCommand);
  if (len <= 0 || !formatted) {
    error = "out of memory";
    broken_ = true;
    return false;
  }
  // Written here, not by hiredis (its redisBufferWrite uses write()): on a socket the server
  // has closed, send() with MSG_NOSIGNAL gives EPIPE where write() would raise SIGPIPE and end
  // redlab before its cleanup (the run's ACL user would stay). Bounded: each pass writes bytes,
  // or waits kSendWaitMs for room at most once before giving up.
  size_t offset = 0;
  while (offset < static_cast<size_t>(len)) {
    ssize_t n =
        ::send(ctx_->fd, formatted.get() + offset, static_cast<size_t>(len) - offset, MSG_NOSIGNAL);
    if (n > 0) {
      offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{ctx_->fd, POLLOUT, 0};
      if (::poll(&p, 1, kSendWaitMs) > 0) continue;
      error = "the server takes no more bytes (write timed out)";
    } else {
      error = n < 0 ? std::strerror(errno) : "write failed";
    }
    broken_ = true;
    return false;
  }
  return true;
}

std::optional<Reply> Connection::receive(int timeout_ms, std::string& error) {
  error.clear();
  if (broken_) {
    error = "connection is closed";
    return std::nullopt;
  }
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  // Bounded by the deadline; each pass either returns or waits in poll.
  while (true) {
    void* raw = nullptr;
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
      error = ctx_->errstr;
      broken_ = true;
      return std::nullopt;
    }
    if (raw) {
      std::unique_ptr<void, ReplyDeleter> holder(raw);
      return convert_reply(static_cast<redisReply*>(raw));
    }
    int wait = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      if (left <= 0) return std::nullopt;
      wait = static_cast<int>(left);
    }
    pollfd p{ctx_->fd, POLLIN, 0};
    int n = ::poll(&p, 1, wait);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      broken_ = true;
      return std::nullopt;
    }
    if (n == 0) continue;  // re-check the deadline
    if (redisBufferRead(ctx_) != REDIS_OK) {
      error = ctx_->errstr;
      broken_ = true;
      return std::nullopt;
    }
  }
}

std::optional<Reply> Connection::command(const std::vector<std::string>& argv, int timeout_ms,
                                         std::string& error) {
  if (!send(argv, error)) return std::nullopt;
  return receive(timeout_ms, error);
}

}  // namespace redlab::real
