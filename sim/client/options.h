// Client options: go-redis v9 defaults, two profiles, every field overridable.
//
// Sources (redis/go-redis): options.go (Options.init: the defaults), internal/internal.go
// (RetryBackoff), error.go (shouldRetry, isBadConn), redis.go (_process, withConn,
// cmdTimeout, context), internal/pool/pool.go (Get, waitTurn, isHealthyConn), pubsub.go, tx.go.
//
// v9.0 .. v9.21 (Options::go_redis_v9()):
//   PoolSize 10*GOMAXPROCS, PoolTimeout = ReadTimeout + 1s, DialTimeout 5s, ReadTimeout 3s,
//   WriteTimeout = ReadTimeout, MaxRetries 3, MinRetryBackoff 8ms, MaxRetryBackoff 512ms,
//   ConnMaxIdleTime 30min, ContextTimeoutEnabled false.
// v9.22+ (Options::go_redis_v9_22()): ReadTimeout 5s (so WriteTimeout 5s, PoolTimeout 6s),
//   backoff 10ms..1s.
// Times here are resolved values in microseconds: go-redis' "0 = default, -1 = disabled" is
// resolved by the profile constructors; 0 here means "no timeout" (as after Options.init).
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/clock.h"

namespace redlab::client {

struct Options {
  int64_t gomaxprocs = 1;  // PoolSize default is 10 * GOMAXPROCS
  int64_t pool_size = 10;
  TimeUs pool_timeout_us = seconds_to_us(4);
  TimeUs dial_timeout_us = seconds_to_us(5);
  TimeUs read_timeout_us = seconds_to_us(3);   // 0 = no timeout
  TimeUs write_timeout_us = seconds_to_us(3);  // writes never block in the simulation
  int64_t max_retries = 3;                     // 0 = no retries (go-redis MaxRetries -1)
  TimeUs min_retry_backoff_us = ms_to_us(8);   // 0 = no backoff
  TimeUs max_retry_backoff_us = ms_to_us(512);
  // false: v9.0's RetryBackoff (min + rand[0, min<<n)); true: the later form
  // ((min<<n) + rand[0, min<<n)). Both capped at max_retry_backoff_us.
  bool backoff_doubling_jitter = false;
  TimeUs conn_max_idle_time_us = seconds_to_us(30 * 60);  // 0 = never idle out
  // initConn: every new connection first sends HELLO <protocol> and waits for the answer (an
  // "ERR unknown command" is accepted: RESP2 goes on), so a new connection costs two round
  // trips before its first command. go-redis' default Protocol is 3; the model defaults to
  // 2 because Reply is RESP2 (a real server would switch to RESP3 reply shapes); the cost,
  // one round trip, is the same.
  bool hello_on_connect = true;
  int64_t protocol = 2;
  bool pool_fifo = false;                // go-redis default: LIFO idle list
  bool context_timeout_enabled = false;  // apply the call's deadline to socket reads
  // shouldRetry treats a pool timeout as retryable ("increase retries", go-redis #3289, in
  // current v9); false gives the older behaviour, where it ends the call at once.
  bool retry_pool_timeout = true;
  // Blocking commands: go-redis reads with the command's own timeout + 10 s (cmdTimeout).
  TimeUs blocking_read_extra_us = seconds_to_us(10);
  // PubSub: after a failed reconnect, wait this long before the next (channel.go errCount).
  TimeUs pubsub_reconnect_delay_us = ms_to_us(100);
  std::string profile = "v9.0";

  // The v9.0 .. v9.21 defaults for a machine with `gomaxprocs` CPUs.
  static Options go_redis_v9(int64_t gomaxprocs = 1);
  // The v9.22+ defaults.
  static Options go_redis_v9_22(int64_t gomaxprocs = 1);
  // Recomputes the derived defaults after read_timeout_us changed (WriteTimeout = ReadTimeout,
  // PoolTimeout = ReadTimeout + 1s), as Options.init does for fields left at 0.
  Options& derive_from_read_timeout();
};

}  // namespace redlab::client
