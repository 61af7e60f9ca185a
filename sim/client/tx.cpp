// Client.Watch and Tx (redis/go-redis tx.go): a transaction on one pooled connection.
// See client.h for the semantics; this file holds Tx, watch and the bounded retry loop.
#include "sim/client/client.h"

#include "sim/client/commands.h"
#include "sim/core/assert.h"

namespace redlab::client {

net::ConnId Tx::conn_id() const {
  return conn_->id();
}

void Tx::do_command(const Context& ctx, Argv argv, std::function<void(Result)> done) {
  if (client_.tracer_.on())
    client_.tracer_.emit(
        client_.tracer_
            .make("call", conn_->id(), ctx.step, tag_.attempt, command_line(argv), ctx.actor)
            .with(F::argv, trace_argv(argv)));
  if (!bad_.ok()) return done(Result{Reply::nil(), bad_});
  TimeUs timeout_us = client_.options_.read_timeout_us;
  if (auto blocking = blocking_timeout_us(argv))
    timeout_us = *blocking == 0 ? 0 : *blocking + client_.options_.blocking_read_extra_us;
  TimeUs deadline = client_.read_deadline_us(ctx, timeout_us);
  client_.exchange(Client::CallKind::Single, conn_, {std::move(argv)}, deadline, tag_,
                   [this, done = std::move(done)](PipelineResult r) {
                     if (is_bad_conn(r.error)) bad_ = r.error;
                     done(std::move(r.results.at(0)));
                   });
}

void Tx::tx_pipelined(const Context& ctx, std::vector<Argv> cmds,
                      std::function<void(PipelineResult)> done) {
  REDLAB_ASSERT(!cmds.empty() && "a transaction has commands");
  client_.tracer_.event("call", conn_->id(), ctx.step, tag_.attempt,
                        "tx_pipelined of " + std::to_string(cmds.size()), ctx.actor);
  if (!bad_.ok()) {
    PipelineResult r;
    r.results.resize(cmds.size(), Result{Reply::nil(), bad_});
    r.error = bad_;
    return done(std::move(r));
  }
  TimeUs deadline = client_.read_deadline_us(ctx, client_.options_.read_timeout_us);
  size_t n = cmds.size();
  client_.exchange(Client::CallKind::Tx, conn_, cmds, deadline, tag_,
                   [this, n, done = std::move(done)](PipelineResult r) {
                     if (is_bad_conn(r.error)) bad_ = r.error;
                     r.results.resize(n, Result{Reply::nil(), r.error});
                     for (const Result& res : r.results) {
                       if (!res.error.ok()) {
                         r.error = res.error;
                         break;
                       }
                     }
                     done(std::move(r));
                   });
}

void Client::watch(const Context& ctx, std::vector<std::string> keys, WatchFn fn, ErrorDone done) {
  Argv watch_cmd{"WATCH"};
  for (std::string& k : keys) watch_cmd.push_back(std::move(k));
  TraceTag tag{ctx.step, 0, ctx.actor};
  if (tracer_.on())
    tracer_.emit(tracer_.make("call", -1, ctx.step, -1, command_line(watch_cmd), ctx.actor)
                     .with(F::argv, trace_argv(watch_cmd)));
  if (closed_) return done(Error::make(ErrorKind::Closed));
  std::weak_ptr<bool> alive = alive_;
  get_conn(ctx, tag,
           [this, alive, ctx, tag, watch_cmd = std::move(watch_cmd), fn = std::move(fn),
            done = std::move(done)](Pool::ConnPtr conn, Error err) mutable {
             auto a = alive.lock();
             if (!a || !*a) return;
             if (!err.ok()) return done(err);
             std::shared_ptr<Tx> tx(new Tx(*this, conn, tag));
             TimeUs deadline = read_deadline_us(ctx, options_.read_timeout_us);
             exchange(CallKind::Single, conn, {watch_cmd}, deadline, tag,
                      [this, alive, ctx, tag, tx, fn = std::move(fn),
                       done = std::move(done)](PipelineResult r) mutable {
                        auto a2 = alive.lock();
                        if (!a2 || !*a2) return;
                        if (!r.error.ok()) {
                          release(tx->conn_, r.error);
                          return done(r.error);
                        }
                        // tx.Close: UNWATCH, then the connection goes back to the pool.
                        auto finish = [this, alive, ctx, tag, tx, done](Error e) {
                          auto a3 = alive.lock();
                          if (!a3 || !*a3) return;
                          auto give_back = [this, tx, done, e] {
                            release(tx->conn_, tx->bad_);
                            done(e);
                          };
                          if (!tx->bad_.ok()) return give_back();
                          TimeUs dl = read_deadline_us(ctx, options_.read_timeout_us);
                          exchange(CallKind::Single, tx->conn_, {{"UNWATCH"}}, dl, tag,
                                   [tx, give_back](PipelineResult u) {
                                     if (is_bad_conn(u.error)) tx->bad_ = u.error;
                                     give_back();
                                   });
                        };
                        fn(*tx, std::move(finish));
                      });
           });
}

namespace {

// The optimistic-locking loop of go-redis' documentation (example_test.go, "Increment
// transactionally"), bounded: for i in 0..max_attempts: err = Watch(...); TxFailedErr ->
// again; otherwise return err.
struct WatchLoop : std::enable_shared_from_this<WatchLoop> {
  Client* client = nullptr;
  Context ctx;
  std::vector<std::string> keys;
  Client::WatchFn fn;
  int64_t max_attempts = 0;
  int64_t attempt = 0;
  Client::ErrorDone done;

  void next() {
    auto self = shared_from_this();
    client->watch(ctx, keys, fn, [self](Error e) {
      if (e.kind != ErrorKind::TxFailed) return self->done(e);
      self->attempt++;
      if (self->attempt >= self->max_attempts) {
        self->client->tracer().event("watch_gave_up", -1, self->ctx.step, self->attempt,
                                     std::to_string(self->attempt) + " attempts", self->ctx.actor);
        return self->done(e);
      }
      self->client->tracer().event("watch_retry", -1, self->ctx.step, self->attempt,
                                   std::string(kTxFailedText), self->ctx.actor);
      self->next();
    });
  }
};

}  // namespace

void Client::watch_with_retries(const Context& ctx, std::vector<std::string> keys, WatchFn fn,
                                int64_t max_attempts, ErrorDone done) {
  REDLAB_ASSERT(max_attempts > 0 && "a watch loop makes at least one attempt");
  auto loop = std::make_shared<WatchLoop>();
  loop->client = this;
  loop->ctx = ctx;
  loop->keys = std::move(keys);
  loop->fn = std::move(fn);
  loop->max_attempts = max_attempts;
  loop->done = std::move(done);
  loop->next();
}

}  // namespace redlab::client
