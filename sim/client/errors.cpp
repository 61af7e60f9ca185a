// See errors.h. The rules follow redis/go-redis error.go (shouldRetry, isBadConn) of v9.
#include "sim/client/errors.h"

#include "sim/client/options.h"

namespace redlab::client {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

Error Error::make(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::None:
      return Error{};
    case ErrorKind::Server:
      return Error{kind, "ERR"};
    case ErrorKind::PoolTimeout:
      return Error{kind, std::string(kPoolTimeoutText)};
    case ErrorKind::DialTimeout:
      return Error{kind, std::string(kDialTimeoutText)};
    case ErrorKind::Refused:
      return Error{kind, std::string(kRefusedText)};
    case ErrorKind::ReadTimeout:
      return Error{kind, std::string(kReadTimeoutText)};
    case ErrorKind::Eof:
      return Error{kind, std::string(kEofText)};
    case ErrorKind::ContextDeadline:
      return Error{kind, std::string(kContextDeadlineText)};
    case ErrorKind::Canceled:
      return Error{kind, std::string(kCanceledText)};
    case ErrorKind::TxFailed:
      return Error{kind, std::string(kTxFailedText)};
    case ErrorKind::Closed:
      return Error{kind, std::string(kClosedText)};
  }
  return Error{};
}

bool should_retry(const Error& error, bool retry_timeout, const Options& options) {
  switch (error.kind) {
    case ErrorKind::None:
      return false;
    case ErrorKind::Eof:
      return true;
    case ErrorKind::ContextDeadline:
    case ErrorKind::Canceled:
      return false;  // shouldRetry: `case nil, context.Canceled, context.DeadlineExceeded`
    case ErrorKind::PoolTimeout:
      return options.retry_pool_timeout;  // "connection pool timeout, increase retries" #3289
    case ErrorKind::DialTimeout:
      // A timeout: retryTimeout decides, until dial errors became always retryable.
      return retry_timeout || options.retry_dial_timeout;
    case ErrorKind::Refused:
      return true;  // a net.Error that is not a timeout
    case ErrorKind::ReadTimeout:
      return retry_timeout;
    case ErrorKind::TxFailed:
      return false;
    case ErrorKind::Closed:
      return false;
    case ErrorKind::Server:
      break;
  }
  const std::string& s = error.text;
  bool v9_8 = options.profile != "v9.0";
  bool v9_22 = options.profile == "v9.22";
  return starts_with(s, "ERR max number of clients reached") || starts_with(s, "LOADING ") ||
         starts_with(s, "READONLY ") || starts_with(s, "CLUSTERDOWN ") ||
         starts_with(s, "TRYAGAIN ") || (v9_8 && starts_with(s, "MASTERDOWN ")) ||
         (v9_22 && starts_with(s, "NOREPLICAS "));
}

bool is_bad_conn(const Error& error) {
  switch (error.kind) {
    case ErrorKind::None:
      return false;
    case ErrorKind::TxFailed:
      return false;  // a nil EXEC reply: the connection is fine
    case ErrorKind::Server:
      return starts_with(error.text, "READONLY ");
    default:
      return true;
  }
}

const char* error_class(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::None:
      return "none";
    case ErrorKind::Server:
      return "server";
    case ErrorKind::PoolTimeout:
      return "pool_timeout";
    case ErrorKind::DialTimeout:
      return "dial_timeout";
    case ErrorKind::Refused:
      return "refused";
    case ErrorKind::ReadTimeout:
      return "read_timeout";
    case ErrorKind::Eof:
      return "eof";
    case ErrorKind::ContextDeadline:
      return "context_deadline";
    case ErrorKind::Canceled:
      return "context_canceled";
    case ErrorKind::TxFailed:
      return "tx_failed";
    case ErrorKind::Closed:
      return "closed";
  }
  return "none";
}

Error error_of(const Reply& reply) {
  return reply.is_error() ? Error::server(reply.str) : Error{};
}

}  // namespace redlab::client
