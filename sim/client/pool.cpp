// See pool.h. Follows redis/go-redis internal/pool/pool.go: Get = waitTurn + popIdle (with
// isHealthyConn) or newConn; Put = idle + freeTurn; Remove = close + freeTurn.
#include "sim/client/pool.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace redlab::client {

std::string format_stats(const PoolStats& s) {
  return "hits=" + std::to_string(s.hits) + " misses=" + std::to_string(s.misses) +
         " timeouts=" + std::to_string(s.timeouts) + " total=" + std::to_string(s.total_conns) +
         " idle=" + std::to_string(s.idle_conns) + " stale=" + std::to_string(s.stale_conns);
}

Pool::Pool(net::Process& process, net::Transport& transport, std::string server,
           const Options& options, const Tracer& tracer)
    : process_(process),
      transport_(transport),
      server_(std::move(server)),
      options_(options),
      tracer_(tracer),
      alive_(std::make_shared<bool>(true)) {
  REDLAB_ASSERT(options_.pool_size > 0 && "a pool has at least one connection");
}

Pool::~Pool() {
  *alive_ = false;
  for (Waiter& w : waiters_)
    if (w.timer) process_.cancel(w.timer);
  for (const std::weak_ptr<Conn>& w : created_)
    if (auto c = w.lock()) c->close();
}

PoolStats Pool::stats() const {
  PoolStats s = counters_;
  s.total_conns = static_cast<uint32_t>(conns_.size());
  s.idle_conns = static_cast<uint32_t>(idle_.size());
  return s;
}

std::vector<net::ConnId> Pool::conn_ids() const {
  std::vector<net::ConnId> ids;
  for (const ConnPtr& c : conns_) ids.push_back(c->id());
  return ids;
}

void Pool::stats_changed() {
  PoolStats s = stats();
  if (s == last_traced_) return;
  last_traced_ = s;
  if (tracer_.on()) tracer_.emit(stats_event("pool_stats", s));
}

TraceEvent Pool::stats_event(const char* kind, const PoolStats& s) const {
  TraceEvent e = tracer_.make(kind, -1, -1, -1);
  e.fields.reserve(7);  // past FieldList's inline room: straight to one block of seven
  e.with(F::server, server_)
      .with(F::hits, static_cast<int64_t>(s.hits))
      .with(F::misses, static_cast<int64_t>(s.misses))
      .with(F::timeouts, static_cast<int64_t>(s.timeouts))
      .with(F::total, static_cast<int64_t>(s.total_conns))
      .with(F::idle, static_cast<int64_t>(s.idle_conns))
      .with(F::stale, static_cast<int64_t>(s.stale_conns));
  return e;  // returned in place (a `return std::move(e).with(...)` chain moved it once more)
}

void Pool::get(TimeUs deadline_us, TraceTag tag, GetDone done,
               std::shared_ptr<ContextState> cancel) {
  TimeUs now = process_.now_us();
  if (closed_) return done(nullptr, Error::make(ErrorKind::Closed));
  // waitTurn's first select: a context already done fails the call before it takes a turn,
  // even with connections free, with whichever of its deadline and a cancel came first.
  if (ErrorKind err = context_err(deadline_us, cancel.get(), now); err != ErrorKind::None)
    return done(nullptr, Error::make(err));
  if (turns_used_ < options_.pool_size) {
    turns_used_++;
    return got_turn(deadline_us, tag, std::move(done));
  }
  Waiter w;
  w.id = next_waiter_++;
  w.tag = tag;
  w.done = std::move(done);
  w.deadline_us = deadline_us;
  w.since_us = now;
  TimeUs pool_deadline = add_saturating_us(now, options_.pool_timeout_us);
  bool pool_timeout_first = pool_deadline <= deadline_us;
  TimeUs wake = std::min(pool_deadline, deadline_us);
  uint64_t id = w.id;
  std::weak_ptr<bool> alive = alive_;
  w.timer = process_.after(wake - now, [this, id, pool_timeout_first, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    wait_ended(id, pool_timeout_first ? ErrorKind::PoolTimeout : ErrorKind::ContextDeadline);
  });
  // A cancel comes from another goroutine's step: the waiter leaves on its own process.
  w.cancel = ContextState::on_cancel(cancel, [this, id, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    process_.after(0, [this, id, alive] {
      auto a2 = alive.lock();
      if (a2 && *a2) wait_ended(id, ErrorKind::Canceled);
    });
  });
  if (tracer_.on()) {
    w.span = tracer_.new_span();
    TraceEvent e = tracer_.make("pool_wait", -1, tag.step, tag.attempt,
                                std::to_string(waiters_.size() + 1) + " waiting, " +
                                    std::to_string(turns_used_) + "/" +
                                    std::to_string(options_.pool_size) + " in use",
                                tag.actor);
    e.span = w.span;
    tracer_.emit(std::move(e)
                     .with(F::server, server_)
                     .with(F::count, static_cast<int64_t>(waiters_.size() + 1)));
  }
  // The waiter keeps its own deadline for when it gets the turn.
  waiters_.push_back(std::move(w));
}

void Pool::wait_ended(uint64_t id, ErrorKind kind) {
  auto it =
      std::find_if(waiters_.begin(), waiters_.end(), [id](const Waiter& x) { return x.id == id; });
  if (it == waiters_.end()) return;  // it got its turn meanwhile
  Waiter gone = std::move(*it);
  waiters_.erase(it);
  if (kind == ErrorKind::Canceled && gone.timer) process_.cancel(gone.timer);  // still set
  bool pool_timeout = kind == ErrorKind::PoolTimeout;
  if (pool_timeout) counters_.timeouts++;
  if (tracer_.on()) {
    // pool_wait_deadline: the call's context ended the wait (error_class says how). Its
    // duration is the wait's own: PoolTimeout only when that ended it.
    TraceEvent e =
        tracer_.make(pool_timeout ? "pool_timeout" : "pool_wait_deadline", -1, gone.tag.step,
                     gone.tag.attempt, Error::make(kind).text, gone.tag.actor);
    e.ends = gone.span;
    tracer_.emit(std::move(e)
                     .with(F::error, Error::make(kind).text)
                     .with(F::error_class, error_class(kind))
                     .with(F::duration_us, process_.now_us() - gone.since_us));
  }
  if (pool_timeout) stats_changed();
  gone.done(nullptr, Error::make(kind));
}

void Pool::got_turn(TimeUs deadline_us, TraceTag tag, GetDone done, int64_t wait_span) {
  constexpr size_t kIdleChecksMax = 1'000'000;  // each pass removes one idle connection
  for (size_t n = 0; n < kIdleChecksMax && !idle_.empty(); n++) {
    ConnPtr c;
    if (options_.pool_fifo) {
      c = idle_.front();
      idle_.pop_front();
    } else {
      c = idle_.back();
      idle_.pop_back();
    }
    if (!healthy(*c)) {
      counters_.stale_conns++;
      close_conn(c, c->eof_seen() ? "stale: closed by the server" : "stale: idle too long");
      continue;
    }
    counters_.hits++;
    if (tracer_.on()) {
      TraceEvent e = tracer_.make("pool_hit", c->id(), tag.step, tag.attempt, "", tag.actor);
      e.ends = wait_span;
      tracer_.emit(std::move(e));
    }
    stats_changed();
    return done(c, Error::none());
  }
  counters_.misses++;
  if (tracer_.on()) {
    TraceEvent e = tracer_.make("pool_miss", -1, tag.step, tag.attempt, "", tag.actor);
    e.ends = wait_span;
    tracer_.emit(std::move(e));
  }
  stats_changed();
  std::weak_ptr<bool> alive = alive_;
  dial(deadline_us, tag, true, [this, alive, done = std::move(done)](ConnPtr c, Error e) {
    auto a = alive.lock();
    if (!a || !*a) return;
    if (!e.ok()) free_turn();
    done(std::move(c), std::move(e));
  });
}

void Pool::dial(TimeUs deadline_us, TraceTag tag, bool pooled, GetDone done) {
  if (breaker_open()) {
    // dialConn: dialErrorsNum >= PoolSize returns the last dial error, no dial.
    if (tracer_.on())
      tracer_.emit(tracer_
                       .make("pool_breaker_fail", -1, tag.step, tag.attempt, last_dial_error_.text,
                             tag.actor)
                       .with(F::server, server_)
                       .with(F::error, last_dial_error_.text)
                       .with(F::error_class, error_class(last_dial_error_.kind))
                       .with(F::count, dial_errors_));
    return done(nullptr, last_dial_error_);
  }
  dial_try(deadline_us, tag, pooled, 0, std::move(done));
}

void Pool::dial_try(TimeUs deadline_us, TraceTag tag, bool pooled, int64_t attempt, GetDone done) {
  TimeUs now = process_.now_us();
  TimeUs timeout_at = std::min(add_saturating_us(now, options_.dial_timeout_us), deadline_us);
  std::weak_ptr<bool> alive = alive_;
  dial_once(timeout_at, tag, nullptr,
            [this, alive, deadline_us, tag, pooled, attempt, done = std::move(done)](ConnPtr conn,
                                                                                     Error e) {
              auto a = alive.lock();
              if (!a || !*a) return;
              if (e.ok()) {
                if (pooled) conns_.push_back(conn);
                stats_changed();
                return done(std::move(conn), Error::none());
              }
              // DialerRetries: wait, then dial again, unless this was the last try or the
              // caller's deadline comes first (then the last error is returned at it).
              if (attempt + 1 < options_.dial_attempts && !closed_) {
                TimeUs t = process_.now_us();
                TimeUs next = add_saturating_us(t, options_.dial_retry_delay_us);
                if (next <= deadline_us) {
                  process_.after(options_.dial_retry_delay_us,
                                 [this, alive, deadline_us, tag, pooled, attempt, done] {
                                   auto a2 = alive.lock();
                                   if (a2 && *a2)
                                     dial_try(deadline_us, tag, pooled, attempt + 1, done);
                                 });
                  return;
                }
                process_.after(deadline_us - t, [this, alive, e, done] {
                  auto a2 = alive.lock();
                  if (!a2 || !*a2) return;
                  dial_error(e);
                  done(nullptr, e);
                });
                return;
              }
              dial_error(e);
              done(nullptr, std::move(e));
            });
}

void Pool::dial_once(TimeUs timeout_at_us, TraceTag tag, const char* reason, GetDone done) {
  auto conn = std::make_shared<Conn>(process_, transport_, server_);
  std::erase_if(created_, [](const std::weak_ptr<Conn>& w) { return w.expired(); });
  created_.push_back(conn);
  std::weak_ptr<bool> alive = alive_;
  int64_t span = tracer_.new_span();
  auto with_reason = [reason](TraceEvent e) {
    if (reason) e.with(F::reason, reason);
    return e;
  };
  conn->dial(
      timeout_at_us, [this, alive, conn, tag, span, with_reason, done = std::move(done)](Error e) {
        auto a = alive.lock();
        if (!a || !*a) return;
        if (!e.ok()) {
          if (tracer_.on()) {
            TraceEvent ev =
                tracer_.make(e.kind == ErrorKind::DialTimeout ? "dial_timeout" : "dial_failed",
                             conn->id(), tag.step, tag.attempt, e.text, tag.actor);
            ev.ends = span;
            tracer_.emit(with_reason(
                std::move(ev).with(F::error, e.text).with(F::error_class, error_class(e.kind))));
          }
          return done(nullptr, std::move(e));
        }
        if (tracer_.on()) {
          TraceEvent ev = tracer_.make("dial_ok", conn->id(), tag.step, tag.attempt, "", tag.actor);
          ev.ends = span;
          tracer_.emit(with_reason(std::move(ev).with(F::server, server_)));
        }
        done(conn, Error::none());
      });
  if (tracer_.on()) {
    TraceEvent ev = tracer_.make("dial", conn->id(), tag.step, tag.attempt, "", tag.actor);
    ev.span = span;
    tracer_.emit(with_reason(std::move(ev).with(F::server, server_)));
  }
}

void Pool::dial_error(const Error& error) {
  last_dial_error_ = error;
  // atomic.AddUint32(&p.dialErrorsNum, 1) == PoolSize: the probe starts exactly once.
  if (++dial_errors_ != options_.pool_size) return;
  if (tracer_.on()) {
    breaker_span_ = tracer_.new_span();
    TraceEvent e = tracer_.make("pool_breaker_open", -1, -1, -1,
                                std::to_string(dial_errors_) + " failed dials: " + error.text);
    e.span = breaker_span_;
    tracer_.emit(std::move(e)
                     .with(F::server, server_)
                     .with(F::error, error.text)
                     .with(F::error_class, error_class(error.kind))
                     .with(F::count, dial_errors_));
  }
  probe();
}

void Pool::probe() {
  if (closed_) return;
  std::weak_ptr<bool> alive = alive_;
  TimeUs timeout_at = add_saturating_us(process_.now_us(), options_.dial_timeout_us);
  dial_once(timeout_at, TraceTag{}, "probe", [this, alive](ConnPtr conn, Error e) {
    auto a = alive.lock();
    if (!a || !*a) return;
    if (!e.ok()) {
      last_dial_error_ = e;
      process_.after(Options::kBreakerProbeIntervalUs, [this, alive] {
        auto a2 = alive.lock();
        if (a2 && *a2) probe();
      });
      return;
    }
    dial_errors_ = 0;
    if (tracer_.on()) {
      TraceEvent ev = tracer_.make("pool_breaker_reset", conn->id(), -1, -1, "");
      ev.ends = breaker_span_;
      breaker_span_ = 0;
      tracer_.emit(std::move(ev).with(F::server, server_));
    }
    conn->close();
    if (tracer_.on())
      tracer_.emit(
          tracer_.make("conn_close", conn->id(), -1, -1, "probe").with(F::reason, "probe"));
  });
}

void Pool::dial_unpooled(TimeUs deadline_us, TraceTag tag, GetDone done) {
  if (closed_) return done(nullptr, Error::make(ErrorKind::Closed));
  dial(deadline_us, tag, false, std::move(done));
}

bool Pool::healthy(const Conn& conn) const {
  if (conn.closed() || conn.eof_seen()) return false;
  if (options_.conn_max_idle_time_us > 0 &&
      process_.now_us() - conn.used_at_us() >= options_.conn_max_idle_time_us)
    return false;
  return true;
}

void Pool::put(const ConnPtr& conn) {
  REDLAB_ASSERT(conn && !conn->busy() && "put back a connection that is idle");
  if (conn->eof_seen() || conn->closed() || closed_) return remove(conn, "EOF");
  conn->set_used_at(process_.now_us());
  idle_.push_back(conn);
  free_turn();
  stats_changed();
}

void Pool::remove(const ConnPtr& conn, const std::string& reason) {
  close_conn(conn, reason);
  free_turn();
}

void Pool::close_conn(const ConnPtr& conn, const std::string& reason) {
  conn->close();
  conns_.erase(std::remove(conns_.begin(), conns_.end(), conn), conns_.end());
  idle_.erase(std::remove(idle_.begin(), idle_.end(), conn), idle_.end());
  if (tracer_.on())
    tracer_.emit(tracer_.make("conn_close", conn->id(), -1, -1, reason).with(F::reason, reason));
  stats_changed();
}

void Pool::free_turn() {
  REDLAB_ASSERT(turns_used_ > 0 && "a turn is given back only once");
  if (waiters_.empty()) {
    turns_used_--;
    return;
  }
  // Hand the turn straight to the first waiter (a Go channel wakes its senders in order).
  Waiter w = std::move(waiters_.front());
  waiters_.pop_front();
  if (w.timer) process_.cancel(w.timer);
  TimeUs deadline_us = w.deadline_us;
  std::weak_ptr<bool> alive = alive_;
  process_.after(0, [this, alive, deadline_us, span = w.span, tag = w.tag,
                     done = std::move(w.done)]() mutable {
    auto a = alive.lock();
    if (!a || !*a) return;
    got_turn(deadline_us, tag, std::move(done), span);
  });
}

void Pool::close() {
  if (closed_) return;
  closed_ = true;
  std::deque<ConnPtr> idle = idle_;
  for (const ConnPtr& c : idle) close_conn(c, "client closed");
  std::deque<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  for (Waiter& w : waiters) {
    if (w.timer) process_.cancel(w.timer);
    w.done(nullptr, Error::make(ErrorKind::Closed));
  }
}

void Pool::sample_stats(TimeUs interval_us, TimeUs until_us) {
  REDLAB_ASSERT(interval_us > 0 && "a sampling interval is positive");
  Scheduler& scheduler = process_.scheduler();
  if (scheduler.now_us() > until_us) return;
  std::weak_ptr<bool> alive = alive_;
  scheduler.schedule_after(0, [this, alive, interval_us, until_us] {
    auto a = alive.lock();
    if (!a || !*a) return;
    if (tracer_.on()) tracer_.emit(stats_event("pool_stats_sample", stats()));
    Scheduler& s = process_.scheduler();
    if (add_saturating_us(s.now_us(), interval_us) <= until_us) {
      s.schedule_after(interval_us, [this, alive, interval_us, until_us] {
        auto a2 = alive.lock();
        if (a2 && *a2) sample_stats(interval_us, until_us);
      });
    }
  });
}

}  // namespace redlab::client
