// A connection to a real Redis server: hiredis does the RESP codec and the socket, we do the
// waiting (poll with a deadline), so a slow or dead server never blocks forever and a read
// that timed out does not poison the context. Replies are converted to redlab::Reply, the
// same type the fake server answers with.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/reply.h"

struct redisContext;
struct redisReply;

namespace redlab::real {

// redis://[user:password@]host:port[/db] (or valkey://, the same) or
// unix:///path/to/socket[?db=N]. The password may also come from REDIS_PASSWORD; it is never
// printed.
struct Endpoint {
  std::string scheme = "redis";  // as the URL spelled it: "redis" or "valkey" (messages)
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string unix_path;
  std::string user;
  std::string password;
  int db = 0;
  // host:port or the socket path, for messages (never includes the password).
  std::string display() const;
};

// A hiredis reply as a redlab::Reply (RESP2: a nil array "*-1" becomes Nil, which every
// consumer treats like NilArray).
Reply convert_reply(const redisReply* reply);

// Parses a URL; returns an error message on failure.
std::optional<std::string> parse_endpoint(const std::string& url, Endpoint& out);

class Connection {
 public:
  ~Connection();
  // Connects (and AUTH/SELECT as the endpoint says) within timeout_ms. Returns nullptr and sets
  // error ("Connection refused", "WRONGPASS ...") on failure.
  static std::unique_ptr<Connection> open(const Endpoint& ep, int timeout_ms, std::string& error);

  // Writes a command (never raises SIGPIPE). False (and error set) when the connection broke.
  bool send(const std::vector<std::string>& argv, std::string& error);
  // Waits up to timeout_ms (-1 = forever) for the next reply or push. nullopt with empty
  // error = timed out; nullopt with error = the connection broke ("Server closed the
  // connection").
  std::optional<Reply> receive(int timeout_ms, std::string& error);
  // send + receive.
  std::optional<Reply> command(const std::vector<std::string>& argv, int timeout_ms,
                               std::string& error);
  bool broken() const { return broken_; }
  int fd() const;

  // A write that finds no room in the socket for this long fails (a server that reads nothing).
  static constexpr int kSendWaitMs = 5000;

 private:
  Connection() = default;
  redisContext* ctx_ = nullptr;
  bool broken_ = false;
};

}  // namespace redlab::real
