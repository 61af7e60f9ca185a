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
  tracer_.event("pool_stats", -1, -1, -1, format_stats(s));
}

void Pool::get(TimeUs deadline_us, TraceTag tag, GetDone done) {
  TimeUs now = process_.now_us();
  if (closed_) return done(nullptr, Error::make(ErrorKind::Closed));
  if (deadline_us <= now) return done(nullptr, Error::make(ErrorKind::ContextDeadline));
  if (turns_used_ < options_.pool_size) {
    turns_used_++;
    return got_turn(deadline_us, tag, std::move(done));
  }
  Waiter w;
  w.id = next_waiter_++;
  w.tag = tag;
  w.done = std::move(done);
  w.deadline_us = deadline_us;
  TimeUs pool_deadline = add_saturating_us(now, options_.pool_timeout_us);
  bool pool_timeout_first = pool_deadline <= deadline_us;
  TimeUs wake = std::min(pool_deadline, deadline_us);
  uint64_t id = w.id;
  std::weak_ptr<bool> alive = alive_;
  w.timer = process_.after(wake - now, [this, id, pool_timeout_first, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    auto it = std::find_if(waiters_.begin(), waiters_.end(),
                           [id](const Waiter& x) { return x.id == id; });
    if (it == waiters_.end()) return;
    Waiter gone = std::move(*it);
    waiters_.erase(it);
    if (pool_timeout_first) {
      counters_.timeouts++;
      tracer_.event("pool_timeout", -1, gone.tag.step, gone.tag.attempt,
                    std::string(kPoolTimeoutText), gone.tag.actor);
      stats_changed();
      gone.done(nullptr, Error::make(ErrorKind::PoolTimeout));
    } else {
      tracer_.event("pool_wait_deadline", -1, gone.tag.step, gone.tag.attempt,
                    std::string(kContextDeadlineText), gone.tag.actor);
      gone.done(nullptr, Error::make(ErrorKind::ContextDeadline));
    }
  });
  tracer_.event("pool_wait", -1, tag.step, tag.attempt,
                std::to_string(waiters_.size() + 1) + " waiting, " + std::to_string(turns_used_) +
                    "/" + std::to_string(options_.pool_size) + " in use",
                tag.actor);
  // The waiter keeps its own deadline for when it gets the turn.
  waiters_.push_back(std::move(w));
}

void Pool::got_turn(TimeUs deadline_us, TraceTag tag, GetDone done) {
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
    tracer_.event("pool_hit", c->id(), tag.step, tag.attempt, "", tag.actor);
    stats_changed();
    return done(c, Error::none());
  }
  counters_.misses++;
  tracer_.event("pool_miss", -1, tag.step, tag.attempt, "", tag.actor);
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
  auto conn = std::make_shared<Conn>(process_, transport_, server_);
  std::erase_if(created_, [](const std::weak_ptr<Conn>& w) { return w.expired(); });
  created_.push_back(conn);
  TimeUs now = process_.now_us();
  TimeUs timeout_at = std::min(add_saturating_us(now, options_.dial_timeout_us), deadline_us);
  if (options_.dial_timeout_us == 0) timeout_at = deadline_us;
  std::weak_ptr<bool> alive = alive_;
  conn->dial(timeout_at, [this, alive, conn, tag, pooled, done = std::move(done)](Error e) {
    auto a = alive.lock();
    if (!a || !*a) return;
    if (!e.ok()) {
      tracer_.event(e.kind == ErrorKind::DialTimeout ? "dial_timeout" : "dial_failed", conn->id(),
                    tag.step, tag.attempt, e.text, tag.actor);
      return done(nullptr, std::move(e));
    }
    if (pooled) conns_.push_back(conn);
    tracer_.event("dial_ok", conn->id(), tag.step, tag.attempt, server_, tag.actor);
    stats_changed();
    done(conn, Error::none());
  });
  tracer_.event("dial", conn->id(), tag.step, tag.attempt, server_, tag.actor);
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
  tracer_.event("conn_close", conn->id(), -1, -1, reason);
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
  process_.after(0, [this, alive, deadline_us, tag = w.tag, done = std::move(w.done)]() mutable {
    auto a = alive.lock();
    if (!a || !*a) return;
    got_turn(deadline_us, tag, std::move(done));
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
    tracer_.event("pool_stats_sample", -1, -1, -1, format_stats(stats()));
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
