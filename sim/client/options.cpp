// See options.h.
#include "sim/client/options.h"

#include "sim/core/assert.h"

namespace redlab::client {
namespace {

bool is_v9_22(const Options& o) {
  return o.profile == "v9.22";
}
TimeUs default_read_timeout(const Options& o) {
  return seconds_to_us(is_v9_22(o) ? 5 : 3);
}
TimeUs default_min_backoff(const Options& o) {
  return ms_to_us(is_v9_22(o) ? 10 : 8);
}
TimeUs default_max_backoff(const Options& o) {
  return is_v9_22(o) ? seconds_to_us(1) : ms_to_us(512);
}

// -1 / -2 written in milliseconds arrive as -1000 / -2000 us: the same sentinels.
TimeUs sentinel(TimeUs v) {
  if (v == -ms_to_us(1)) return -1;
  if (v == -ms_to_us(2)) return -2;
  return v;
}

// Options.init for ReadTimeout / WriteTimeout: -2 -> -1 (no deadline set), -1 -> 0 (none),
// 0 -> dflt.
TimeUs resolve_timeout(TimeUs raw, TimeUs dflt) {
  raw = sentinel(raw);
  if (raw == Options::kNoDeadline) return -1;
  if (raw == Options::kNoTimeout) return 0;
  if (raw == 0) return dflt;
  return raw;  // another negative value stays negative: no deadline is set either
}

TimeUs derived_pool_timeout(TimeUs resolved_read) {
  return resolved_read > 0 ? resolved_read + seconds_to_us(1) : seconds_to_us(30);
}

// MinRetryBackoff / MaxRetryBackoff: -1 -> 0 (none), 0 -> dflt.
TimeUs resolve_backoff(TimeUs raw, TimeUs dflt) {
  raw = sentinel(raw);
  if (raw == -1) return 0;
  if (raw == 0) return dflt;
  return raw < 0 ? 0 : raw;
}

}  // namespace

Options Options::go_redis_v9(int64_t gomaxprocs) {
  REDLAB_ASSERT(gomaxprocs > 0 && "GOMAXPROCS is at least 1");
  Options o;
  o.gomaxprocs = gomaxprocs;
  o.pool_size = 10 * gomaxprocs;
  o.profile = "v9.0";
  o.read_timeout_us = default_read_timeout(o);
  o.derive_from_read_timeout();
  o.dial_timeout_us = seconds_to_us(5);
  o.max_retries = 3;
  o.min_retry_backoff_us = default_min_backoff(o);
  o.max_retry_backoff_us = default_max_backoff(o);
  o.conn_max_idle_time_us = seconds_to_us(30 * 60);
  o.retry_pool_timeout = false;
  o.retry_dial_timeout = false;
  o.dial_attempts = 1;
  return o;
}

Options Options::go_redis_v9_8(int64_t gomaxprocs) {
  Options o = go_redis_v9(gomaxprocs);
  o.profile = "v9.8";
  o.retry_pool_timeout = true;
  return o;
}

Options Options::go_redis_v9_22(int64_t gomaxprocs) {
  Options o = go_redis_v9_8(gomaxprocs);
  o.profile = "v9.22";
  o.read_timeout_us = default_read_timeout(o);
  o.derive_from_read_timeout();
  o.min_retry_backoff_us = default_min_backoff(o);
  o.max_retry_backoff_us = default_max_backoff(o);
  o.dial_attempts = 5;
  o.dial_retry_delay_us = ms_to_us(100);
  o.retry_dial_timeout = true;
  return o;
}

const std::vector<std::string>& Options::profile_names() {
  static const std::vector<std::string> names{"v9.0", "v9.8", "v9.22"};
  return names;
}

std::optional<Options> Options::for_profile(std::string_view name, int64_t gomaxprocs) {
  if (name == "v9.0") return go_redis_v9(gomaxprocs);
  if (name == "v9.8") return go_redis_v9_8(gomaxprocs);
  if (name == "v9.22") return go_redis_v9_22(gomaxprocs);
  return std::nullopt;
}

Options& Options::derive_from_read_timeout() {
  write_timeout_us = 0;  // follows ReadTimeout
  pool_timeout_us =
      derived_pool_timeout(resolve_timeout(read_timeout_us, default_read_timeout(*this)));
  return *this;
}

Options& Options::init() {
  if (initialized) return *this;
  initialized = true;
  if (pool_size <= 0) pool_size = 10 * gomaxprocs;
  if (dial_timeout_us == 0) dial_timeout_us = seconds_to_us(5);
  if (dial_timeout_us < 0) dial_timeout_us = 1;  // a deadline already past: fails at once
  read_timeout_us = resolve_timeout(read_timeout_us, default_read_timeout(*this));
  write_timeout_us = resolve_timeout(write_timeout_us, read_timeout_us);
  if (pool_timeout_us == 0) pool_timeout_us = derived_pool_timeout(read_timeout_us);
  if (sentinel(conn_max_idle_time_us) == 0) conn_max_idle_time_us = seconds_to_us(30 * 60);
  // MaxRetries: -1 -> 0, 0 -> 3. (Below -1 go-redis would make no attempt at all; the loader
  // refuses such values, and here they mean no retries.)
  if (max_retries == 0) {
    max_retries = 3;
  } else if (max_retries < 0) {
    max_retries = 0;
  }
  min_retry_backoff_us = resolve_backoff(min_retry_backoff_us, default_min_backoff(*this));
  max_retry_backoff_us = resolve_backoff(max_retry_backoff_us, default_max_backoff(*this));
  if (dial_attempts < 1) dial_attempts = 1;
  if (dial_retry_delay_us <= 0) dial_retry_delay_us = ms_to_us(100);
  return *this;
}

}  // namespace redlab::client
