// The connection pool (redis/go-redis internal/pool/pool.go, ConnPool).
//
// A caller first takes a *turn* (go-redis' p.queue, a channel of PoolSize slots): with all
// PoolSize turns out, it waits, FIFO, until a turn is handed back, for at most PoolTimeout or
// until its own deadline; a pool timeout counts in stats.timeouts and fails with "redis:
// connection pool timeout". With a turn it pops an idle connection (LIFO unless PoolFIFO),
// discarding unhealthy ones (EOF already seen, or idle longer than ConnMaxIdleTime): a hit;
// or dials a new one (DialTimeout, or the call's deadline if earlier): a miss. The turn is
// held until put() (back to idle) or remove() (closed: after a timeout, EOF, a context error,
// READONLY), which hands it straight to the first waiter.
//
// Blocking commands and subscriptions that run through the pool hold their turn for their
// whole wait: that is how six BLPOP 0 callers starve a pool of four.
//
// The dial-error circuit breaker (pool.go dialConn / tryDial, since v9.0): every new
// connection, pooled or not (PubSub's pool.NewConn too), is dialed through dialConn. A
// failed dial stores its error as the last dial error and counts; a successful dial does
// not reset the count. When the count reaches PoolSize the breaker opens ("pool_breaker_open")
// and a background probe starts: while open, every dialConn returns the last dial error at
// once, without touching the network ("pool_breaker_fail"). The probe dials (DialTimeout),
// and after a failure sleeps 1 s and dials again; only a successful probe resets the count
// and closes the breaker ("pool_breaker_reset"; the probe's connection is closed). Probe
// dials are traced as dial / dial_ok / dial_failed / dial_timeout with reason "probe".
// From v9.15 (profile v9.22) one dialConn makes up to Options::dial_attempts dials,
// dial_retry_delay_us apart, and counts once when all of them failed.
//
// Stats (PoolStats: hits, misses, timeouts, total, idle, stale) are traced as "pool_stats"
// whenever they change, and on a periodic sample if asked.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/client/conn.h"
#include "sim/client/context.h"
#include "sim/client/options.h"
#include "sim/client/tracer.h"

namespace redlab::client {

struct PoolStats {
  uint32_t hits = 0;      // an idle connection was reused
  uint32_t misses = 0;    // a new connection was dialed
  uint32_t timeouts = 0;  // a wait for a turn hit PoolTimeout
  uint32_t total_conns = 0;
  uint32_t idle_conns = 0;
  uint32_t stale_conns = 0;  // idle connections found unhealthy and closed
  bool operator==(const PoolStats&) const = default;
};

std::string format_stats(const PoolStats& stats);

// Who asks, for the trace.
struct TraceTag {
  int64_t step = -1;
  int64_t attempt = -1;
  std::string actor;  // empty: the process' name (several actors may share one client)
};

class Pool {
 public:
  using ConnPtr = std::shared_ptr<Conn>;
  using GetDone = std::function<void(ConnPtr, Error)>;

  Pool(net::Process& process, net::Transport& transport, std::string server, const Options& options,
       const Tracer& tracer);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // pool.Get: a connection within PoolTimeout and before deadline_us (kTimeNeverUs = none);
  // a wait for a turn also ends when `cancel` (the call's context, if it can be cancelled) is
  // cancelled: "context canceled" (waitTurn's ctx.Done()).
  void get(TimeUs deadline_us, TraceTag tag, GetDone done,
           std::shared_ptr<ContextState> cancel = nullptr);
  // pool.Put: back to the idle list (a connection that saw EOF is removed instead).
  void put(const ConnPtr& conn);
  // pool.Remove: close it and give the turn back.
  void remove(const ConnPtr& conn, const std::string& reason);
  // pool.NewConn for PubSub: a dialed connection that takes no turn and is not pooled.
  void dial_unpooled(TimeUs deadline_us, TraceTag tag, GetDone done);
  // Closes every idle connection; waiters fail with "redis: client is closed".
  void close();

  PoolStats stats() const;
  // The pooled connections (idle or in use), oldest first: targets for a disconnect fault.
  std::vector<net::ConnId> conn_ids() const;
  size_t waiters() const { return waiters_.size(); }
  int64_t turns_used() const { return turns_used_; }
  // Traces a "pool_stats" sample every interval_us until until_us (an observer: it runs on
  // the scheduler, not on the client's process, so it keeps sampling while the client is
  // paused).
  void sample_stats(TimeUs interval_us, TimeUs until_us);

 private:
  struct Waiter {
    uint64_t id = 0;
    TraceTag tag;
    TimeUs deadline_us = kTimeNeverUs;  // the caller's own deadline, kept for its turn
    TimeUs since_us = 0;                // when it began to wait
    GetDone done;
    net::Process::TimerId timer = 0;
    int64_t span = 0;                   // pool_wait .. the end of the wait, in the trace
    ContextState::Subscription cancel;  // its context's cancel ends the wait
  };
  // A waiter leaves the queue without a turn: its PoolTimeout, its deadline or its cancel.
  void wait_ended(uint64_t id, ErrorKind kind);
  // wait_span: the span of the caller's pool_wait, ended here (0: it did not wait).
  void got_turn(TimeUs deadline_us, TraceTag tag, GetDone done, int64_t wait_span = 0);
  void free_turn();
  // A pool_stats / pool_stats_sample event with the statistics as fields.
  TraceEvent stats_event(const char* kind, const PoolStats& s) const;
  // dialConn: through the breaker, with dial_attempts tries.
  void dial(TimeUs deadline_us, TraceTag tag, bool pooled, GetDone done);
  void dial_try(TimeUs deadline_us, TraceTag tag, bool pooled, int64_t attempt, GetDone done);
  // One network dial, traced; reason "probe" for the breaker's probe.
  void dial_once(TimeUs timeout_at_us, TraceTag tag, const char* reason, GetDone done);
  // A dialConn whose every try failed: the breaker counts it.
  void dial_error(const Error& error);
  // tryDial: the breaker's background redial.
  void probe();
  bool healthy(const Conn& conn) const;
  void close_conn(const ConnPtr& conn, const std::string& reason);
  void stats_changed();

  net::Process& process_;
  net::Transport& transport_;
  std::string server_;
  const Options& options_;
  Tracer tracer_;
  int64_t turns_used_ = 0;
  std::deque<Waiter> waiters_;
  uint64_t next_waiter_ = 1;
  std::vector<ConnPtr> conns_;  // pooled connections, dialed
  // Every connection this pool dialed (pooled or not, maybe still dialing or in use): closed
  // when the pool goes, which also frees the callbacks that hold them.
  std::vector<std::weak_ptr<Conn>> created_;
  std::deque<ConnPtr> idle_;
  PoolStats counters_;  // hits, misses, timeouts, stale (total and idle are computed)
  PoolStats last_traced_;
  bool closed_ = false;
  // The breaker: failed dialConns since the last successful probe, and the last error.
  int64_t dial_errors_ = 0;
  Error last_dial_error_;
  int64_t breaker_span_ = 0;  // pool_breaker_open .. pool_breaker_reset
  std::shared_ptr<bool> alive_;

 public:
  // The breaker is open: dials fail at once with the last dial error.
  bool breaker_open() const { return dial_errors_ >= options_.pool_size; }
  int64_t dial_errors() const { return dial_errors_; }
};

}  // namespace redlab::client
