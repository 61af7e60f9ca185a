// What a client call ends with, and go-redis' rules about which failures are retried and
// which connections are thrown away (redis/go-redis error.go: shouldRetry, isBadConn).
//
// Error texts are go-redis' own, so a trace reads like a Go program's log:
//   "redis: connection pool timeout", "redis: transaction failed", "EOF",
//   "i/o timeout" (a read deadline: net.Error with Timeout() true; Go prints
//   "read tcp a->b: i/o timeout", shortened here), "dial tcp: i/o timeout",
//   "dial tcp: connect: connection refused", "context deadline exceeded", "context canceled",
//   "redis: client is closed".
// A server error reply (Kind::Server) carries Redis' own text ("NOSCRIPT ...", "LOADING ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/reply.h"

namespace redlab::client {

enum class ErrorKind : uint8_t {
  None,
  Server,           // an error reply; text = the reply's text
  PoolTimeout,      // no connection within PoolTimeout
  DialTimeout,      // the handshake did not complete within DialTimeout
  Refused,          // the dial was refused or reset (no such server, server down)
  ReadTimeout,      // the read deadline passed (i/o timeout)
  Eof,              // the peer closed the connection
  ContextDeadline,  // the call's own deadline passed
  Canceled,         // the call's context was cancelled (context.Canceled)
  TxFailed,         // EXEC answered nil: a watched key changed
  Closed,           // the client (or the pubsub) was closed
};

struct Error {
  ErrorKind kind = ErrorKind::None;
  std::string text;

  bool ok() const { return kind == ErrorKind::None; }
  static Error none() { return Error{}; }
  static Error make(ErrorKind kind);  // with go-redis' text
  static Error server(std::string text) { return Error{ErrorKind::Server, std::move(text)}; }
  bool operator==(const Error&) const = default;
};

inline constexpr std::string_view kPoolTimeoutText = "redis: connection pool timeout";
inline constexpr std::string_view kTxFailedText = "redis: transaction failed";
inline constexpr std::string_view kEofText = "EOF";
inline constexpr std::string_view kReadTimeoutText = "i/o timeout";
inline constexpr std::string_view kDialTimeoutText = "dial tcp: i/o timeout";
inline constexpr std::string_view kRefusedText = "dial tcp: connect: connection refused";
inline constexpr std::string_view kContextDeadlineText = "context deadline exceeded";
inline constexpr std::string_view kCanceledText = "context canceled";  // Go's context.Canceled
inline constexpr std::string_view kClosedText = "redis: client is closed";

struct Options;

// shouldRetry(err, retryTimeout) as of the client's profile: EOF and refused dials are
// retried; a pool timeout from v9.8 (PR #3298); a dial timeout (a net.Error whose Timeout()
// is true) only when retry_timeout before v9.22 (a getConn failure passes false), always
// from then on (PRs #3787, #3810); a read timeout only when retry_timeout (non-blocking
// commands: _process sets retryTimeout unless the command has its own read timeout);
// context errors (deadline, cancel) never; server errors only for LOADING, READONLY, CLUSTERDOWN,
// TRYAGAIN, max-clients, MASTERDOWN (from v9.8, PR #3164) and NOREPLICAS (v9.22).
bool should_retry(const Error& error, bool retry_timeout, const Options& options);

// isBadConn(err, allowTimeout=false): after this error the connection is closed, not put
// back: everything except nil and server errors (READONLY excepted, which is bad).
bool is_bad_conn(const Error& error);

// The trace's error_class of an error (docs/trace-format.md): "server", "pool_timeout",
// "dial_timeout", "refused", "read_timeout", "eof", "context_deadline", "context_canceled",
// "tx_failed", "closed".
const char* error_class(ErrorKind kind);

// The error of a reply: Server for an error reply, None otherwise.
Error error_of(const Reply& reply);

}  // namespace redlab::client
