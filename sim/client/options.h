// Client options: go-redis v9 Options, three version profiles, every field overridable.
//
// The fields mean what the same fields of go-redis' redis.Options mean (docs/client-model.md
// cites the file and tag of each): 0 asks for the default, -1 switches a thing off, and for
// ReadTimeout / WriteTimeout -2 means "never set a socket deadline". init() resolves them
// the way Options.init (options.go) does; the Client calls it once, so a Client's options()
// hold effective values. Times are microseconds; a sentinel written in milliseconds (-1 ms =
// -1000 us, -2 ms = -2000 us, as a scenario file's value arrives) means the same sentinel.
//
// Profiles (the defaults of Options.init at each tag, and what changed between them):
//   v9.0  (v9.0.0 .. v9.7.x): ReadTimeout 3 s, WriteTimeout = ReadTimeout, PoolTimeout =
//         ReadTimeout + 1 s, DialTimeout 5 s, MaxRetries 3, backoff 8 ms .. 512 ms, PoolSize
//         10 * GOMAXPROCS, ConnMaxIdleTime 30 min; a pool timeout is not retried.
//   v9.8  (v9.8.0 .. v9.21.x): as v9.0, but shouldRetry retries pool.ErrPoolTimeout (PR #3298,
//         go-redis issue #3289).
//   v9.22 (v9.22.0 ..): ReadTimeout 5 s (so WriteTimeout 5 s, PoolTimeout 6 s), backoff
//         10 ms .. 1 s (PR #3918); a failed dial is tried 5 times, 100 ms apart, each try
//         with its own DialTimeout (DialerRetries, PR #3418; per-try timeout, PR #3705); a
//         dial timeout is retried like any dial error (PRs #3787, #3810); NOREPLICAS is
//         retried. (MASTERDOWN is retried from v9.8, PR #3164.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"

namespace redlab::client {

struct Options {
  // go-redis' sentinels for ReadTimeout / WriteTimeout (time.Duration -1 and -2).
  static constexpr TimeUs kNoTimeout = -1;   // no timeout: the read blocks (see init())
  static constexpr TimeUs kNoDeadline = -2;  // SetReadDeadline is never called
  // internal/pool/pool.go tryDial: the background redial sleeps 1 s after a failed dial.
  static constexpr TimeUs kBreakerProbeIntervalUs = 1'000'000;

  int64_t gomaxprocs = 1;  // PoolSize default is 10 * GOMAXPROCS
  int64_t pool_size = 10;
  // 0: ReadTimeout + 1 s when ReadTimeout > 0, else 30 s. Negative: a wait times out at once.
  TimeUs pool_timeout_us = seconds_to_us(4);
  TimeUs dial_timeout_us = seconds_to_us(5);  // 0: 5 s
  // 0: the profile's default; kNoTimeout: none (with ContextTimeoutEnabled the context's
  // deadline still bounds the read); kNoDeadline: no deadline at all, whatever the context.
  // After init(): > 0 a timeout, 0 none, < 0 no deadline set (go-redis' post-init values).
  TimeUs read_timeout_us = seconds_to_us(3);
  TimeUs write_timeout_us = 0;  // 0: = ReadTimeout. Writes never block in the simulation.
  int64_t max_retries = 3;      // 0: the default (3); -1: no retries. After init(): the count.
  TimeUs min_retry_backoff_us = ms_to_us(8);  // 0: the profile's default; -1: no backoff
  TimeUs max_retry_backoff_us = ms_to_us(512);
  TimeUs conn_max_idle_time_us = seconds_to_us(30 * 60);  // 0: 30 min; negative: never
  // initConn: every new connection first sends HELLO <protocol> and waits for the answer (an
  // "ERR unknown command" is accepted: RESP2 goes on), so a new connection costs two round
  // trips before its first command. go-redis' default Protocol is 3; the model defaults to
  // 2 because Reply is RESP2 (a real server would switch to RESP3 reply shapes); the cost,
  // one round trip, is the same.
  bool hello_on_connect = true;
  int64_t protocol = 2;
  bool pool_fifo = false;                // go-redis default: LIFO idle list
  bool context_timeout_enabled = false;  // apply the call's deadline to socket reads
  // shouldRetry treats pool.ErrPoolTimeout as retryable (v9.8+, PR #3298).
  bool retry_pool_timeout = false;
  // shouldRetry treats a dial timeout as retryable even when retryTimeout is false, as for
  // a failed getConn (v9.22; PRs #3787, #3810). Before, only a refused dial was retried.
  bool retry_dial_timeout = false;
  // pool.dialConn: dials per new connection (DialerRetries; 1 before v9.15) and the wait
  // between them (DialerRetryTimeout).
  int64_t dial_attempts = 1;
  TimeUs dial_retry_delay_us = ms_to_us(100);
  // Blocking commands: go-redis reads with the command's own timeout + 10 s (cmdTimeout).
  TimeUs blocking_read_extra_us = seconds_to_us(10);
  // PubSub: after a failed reconnect, wait this long before the next (pubsub.go: the
  // Channel() goroutine sleeps 100 ms after consecutive Receive errors).
  TimeUs pubsub_reconnect_delay_us = ms_to_us(100);
  std::string profile = "v9.0";
  bool initialized = false;  // init() has run (it runs once)

  // The v9.0 .. v9.7 defaults for a machine with `gomaxprocs` CPUs.
  static Options go_redis_v9(int64_t gomaxprocs = 1);
  // The v9.8 .. v9.21 defaults.
  static Options go_redis_v9_8(int64_t gomaxprocs = 1);
  // The v9.22+ defaults.
  static Options go_redis_v9_22(int64_t gomaxprocs = 1);
  // The profile of that name ("v9.0", "v9.8", "v9.22"), or nothing.
  static std::optional<Options> for_profile(std::string_view name, int64_t gomaxprocs = 1);
  static const std::vector<std::string>& profile_names();

  // After read_timeout_us changed: WriteTimeout follows it and PoolTimeout is derived again
  // (ReadTimeout + 1 s, or 30 s when reads have no timeout), as Options.init does for
  // fields left at 0.
  Options& derive_from_read_timeout();
  // Options.init: resolves 0 / -1 / -2 into effective values. Idempotent.
  Options& init();
};

}  // namespace redlab::client
