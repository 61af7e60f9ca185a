// See options.h.
#include "sim/client/options.h"

#include "sim/core/assert.h"

namespace redlab::client {

Options Options::go_redis_v9(int64_t gomaxprocs) {
  REDLAB_ASSERT(gomaxprocs > 0 && "GOMAXPROCS is at least 1");
  Options o;
  o.gomaxprocs = gomaxprocs;
  o.pool_size = 10 * gomaxprocs;
  o.read_timeout_us = seconds_to_us(3);
  o.derive_from_read_timeout();
  o.dial_timeout_us = seconds_to_us(5);
  o.max_retries = 3;
  o.min_retry_backoff_us = ms_to_us(8);
  o.max_retry_backoff_us = ms_to_us(512);
  o.conn_max_idle_time_us = seconds_to_us(30 * 60);
  o.profile = "v9.0";
  return o;
}

Options Options::go_redis_v9_22(int64_t gomaxprocs) {
  Options o = go_redis_v9(gomaxprocs);
  o.read_timeout_us = seconds_to_us(5);
  o.derive_from_read_timeout();
  o.min_retry_backoff_us = ms_to_us(10);
  o.max_retry_backoff_us = seconds_to_us(1);
  o.backoff_doubling_jitter = true;
  o.profile = "v9.22";
  return o;
}

Options& Options::derive_from_read_timeout() {
  write_timeout_us = read_timeout_us;
  pool_timeout_us = read_timeout_us + seconds_to_us(1);
  return *this;
}

}  // namespace redlab::client
