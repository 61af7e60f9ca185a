// See client.h. The attempt loop is one function for the three kinds of call (a command, a
// pipeline, a transaction pipeline), as go-redis' process and generalProcessPipeline share
// withConn; they differ in what goes on the wire and how replies are read back.
#include "sim/client/client.h"

#include <algorithm>

#include "sim/client/commands.h"
#include "sim/core/assert.h"

namespace redlab::client {

struct Client::Call {
  CallKind kind = CallKind::Single;
  Context ctx;
  std::vector<Argv> cmds;
  int64_t attempt = 0;
  int64_t span = 0;  // the call's span in the trace: call .. result
  PipelineDone done;
  Done single_done;  // a Single call's own callback (no PipelineDone wrapped around it)
};

const char* result_class(const Result& r) {
  if (!r.error.ok()) return error_class(r.error.kind);
  // go-redis answers a nil bulk or a nil array with redis.Nil (proto.Nil, "redis: nil").
  if (r.reply.kind == Reply::Kind::Nil || r.reply.kind == Reply::Kind::NilArray) return "nil";
  return "ok";
}

TimeUs retry_backoff_us(int64_t retry, TimeUs min_us, TimeUs max_us, Prng& prng) {
  REDLAB_ASSERT(retry >= 0 && "RetryBackoff: not reached");
  if (min_us <= 0) return 0;
  // min << retry, or "overflow" (go-redis: d < minBackoff) past 62 bits.
  bool overflow = retry >= 62 || min_us > (INT64_MAX >> retry);
  if (overflow) return max_us;
  TimeUs d = min_us << retry;
  d = min_us + static_cast<TimeUs>(prng.uniform(static_cast<uint64_t>(d)));
  if (d > max_us || d < min_us) d = max_us;
  return d;
}

Client::Client(net::Process& process, net::Transport& transport, std::string server,
               Options options, Trace* trace, uint64_t seed)
    : process_(process),
      transport_(transport),
      server_(std::move(server)),
      options_(std::move(options.init())),
      tracer_(trace, process),
      backoff_prng_(Prng(seed).derive(kBackoffStream)),
      alive_(std::make_shared<bool>(true)) {
  pool_ = std::make_unique<Pool>(process_, transport_, server_, options_, tracer_);
}

Client::~Client() {
  *alive_ = false;
}

void Client::close() {
  closed_ = true;
  pool_->close();
}

// ---------------------------------------------------------------------------------------
// The attempt loop (redis.go: process, _process, withConn, releaseConn;
// generalProcessPipeline for pipelines)
// ---------------------------------------------------------------------------------------

void Client::do_command(const Context& ctx, Argv argv, Done done) {
  auto call = std::make_shared<Call>();
  call->kind = CallKind::Single;
  call->ctx = ctx;
  call->cmds.push_back(std::move(argv));
  call->single_done = std::move(done);
  if (tracer_.on()) {
    call->span = tracer_.new_span();
    // No text where a field says it all (argv, reply): a consumer renders those.
    TraceEvent e = tracer_.make("call", -1, ctx.step, -1, "", ctx.actor);
    e.span = call->span;
    tracer_.emit(std::move(e).with(F::argv, trace_argv(call->cmds[0])));
  }
  run(std::move(call));
}

void Client::pipeline(const Context& ctx, std::vector<Argv> cmds, PipelineDone done) {
  REDLAB_ASSERT(!cmds.empty() && "a pipeline has commands");
  run_batch(CallKind::Pipeline, "pipeline", ctx, std::move(cmds), std::move(done));
}

void Client::tx_pipeline(const Context& ctx, std::vector<Argv> cmds, PipelineDone done) {
  REDLAB_ASSERT(!cmds.empty() && "a transaction has commands");
  run_batch(CallKind::Tx, "tx_pipeline", ctx, std::move(cmds), std::move(done));
}

void Client::run_batch(CallKind kind, const char* what, const Context& ctx, std::vector<Argv> cmds,
                       PipelineDone done) {
  auto call = std::make_shared<Call>();
  call->kind = kind;
  call->ctx = ctx;
  call->cmds = std::move(cmds);
  call->done = std::move(done);
  if (tracer_.on()) {
    call->span = tracer_.new_span();
    TraceEvent e =
        tracer_.make("call", -1, ctx.step, -1,
                     std::string(what) + " of " + std::to_string(call->cmds.size()) + ": " +
                         command_line(call->cmds[0]) + (call->cmds.size() > 1 ? " ..." : ""),
                     ctx.actor);
    e.span = call->span;
    tracer_.emit(std::move(e)
                     .with(F::cmd, kind == CallKind::Tx ? "TX_PIPELINE" : "PIPELINE")
                     .with(F::argv, trace_argv(call->cmds[0]))
                     .with(F::count, static_cast<int64_t>(call->cmds.size())));
  }
  run(std::move(call));
}

void Client::run(std::shared_ptr<Call> call) {
  attempt(std::move(call));
}

void Client::attempt(std::shared_ptr<Call> call) {
  if (closed_) {
    PipelineResult r;
    r.error = Error::make(ErrorKind::Closed);
    return finish(call, std::move(r));
  }
  std::weak_ptr<bool> alive = alive_;
  TraceTag tag{call->ctx.step, call->attempt, call->ctx.actor};
  auto start = [this, alive, call, tag] {
    auto a = alive.lock();
    if (!a || !*a) return;
    get_conn(call->ctx, tag, [this, alive, call](Pool::ConnPtr conn, Error err) {
      auto a2 = alive.lock();
      if (!a2 || !*a2) return;
      if (err.ok()) return on_conn(call, std::move(conn));
      // getConn failed: retryTimeout is not set (pipelines: canRetry stays true).
      bool retryable = should_retry(err, call->kind != CallKind::Single, options_);
      if (retryable && call->attempt < options_.max_retries) {
        call->attempt++;
        return attempt(call);
      }
      PipelineResult r;
      r.error = std::move(err);
      finish(call, std::move(r));
    });
  };
  if (call->attempt == 0) return start();
  TimeUs backoff = retry_backoff_us(call->attempt, options_.min_retry_backoff_us,
                                    options_.max_retry_backoff_us, backoff_prng_);
  if (tracer_.on())
    tracer_.emit(
        tracer_
            .make("backoff", -1, tag.step, tag.attempt, std::to_string(backoff) + " us", tag.actor)
            .with(F::duration_us, backoff));
  sleep_ctx(call->ctx, backoff, [this, call, start = std::move(start)](Error e) {
    if (e.ok()) return start();
    PipelineResult r;
    r.error = std::move(e);
    finish(call, std::move(r));
  });
}

void Client::sleep_ctx(const Context& ctx, TimeUs delay_us, std::function<void(Error)> done) {
  // internal.Sleep(ctx, dur) (internal/util.go, v9.0.0 .. v9.22): a timer, or ctx.Done() with
  // ctx.Err(), whichever comes first; a context already done wins at once.
  struct Sleep {
    net::Process::TimerId timer = 0;
    ContextState::Subscription cancel;
    bool over = false;
  };
  auto sleep = std::make_shared<Sleep>();
  std::weak_ptr<bool> alive = alive_;
  auto end = [this, alive, sleep, done](ErrorKind kind) {
    auto a = alive.lock();
    if (!a || !*a || sleep->over) return;
    sleep->over = true;
    sleep->cancel.reset();
    if (sleep->timer) process_.cancel(sleep->timer);
    done(Error::make(kind));
  };
  TimeUs now = process_.now_us();
  ErrorKind already = ctx.err(now);
  if (already != ErrorKind::None) {
    process_.after(0, [end, already] { end(already); });
    return;
  }
  bool deadline_first = ctx.deadline_us < add_saturating_us(now, delay_us);
  TimeUs wake = deadline_first ? ctx.deadline_us - now : delay_us;
  sleep->timer = process_.after(wake, [sleep, end, deadline_first] {
    sleep->timer = 0;
    end(deadline_first ? ErrorKind::ContextDeadline : ErrorKind::None);
  });
  // A cancel runs from another goroutine's step: the sleeper wakes on its own process.
  sleep->cancel = ContextState::on_cancel(ctx.state, [this, alive, end] {
    auto a = alive.lock();
    if (!a || !*a) return;
    process_.after(0, [end] { end(ErrorKind::Canceled); });
  });
}

void Client::get_conn(const Context& ctx, TraceTag tag, Pool::GetDone done) {
  std::weak_ptr<bool> alive = alive_;
  pool_->get(
      ctx.deadline_us, tag,
      [this, alive, ctx, tag, done = std::move(done)](Pool::ConnPtr conn, Error err) {
        auto a = alive.lock();
        if (!a || !*a) return;
        if (!err.ok() || conn->inited()) return done(std::move(conn), std::move(err));
        init_conn(ctx, conn, tag, [this, alive, conn, done](Error e) {
          auto a2 = alive.lock();
          if (!a2 || !*a2) return;
          if (!e.ok()) {
            pool_->remove(conn, e.text);
            return done(nullptr, std::move(e));
          }
          done(conn, Error::none());
        });
      },
      ctx.state);
}

void Client::init_conn(const Context& ctx, const Pool::ConnPtr& conn, TraceTag tag,
                       std::function<void(Error)> done) {
  if (!options_.hello_on_connect) {
    conn->set_inited();
    return done(Error::none());
  }
  TimeUs deadline = read_deadline_us(ctx, options_.read_timeout_us);
  std::weak_ptr<bool> alive = alive_;
  exchange(CallKind::Single, conn, {{"HELLO", std::to_string(options_.protocol)}}, deadline, tag,
           [this, alive, ctx, tag, conn, done = std::move(done)](PipelineResult r) {
             auto a = alive.lock();
             if (!a || !*a) return;
             Error e = r.error;
             // A server without HELLO (RESP2 only) answers "ERR unknown command": go on.
             bool ok = e.ok() || (e.kind == ErrorKind::Server &&
                                  (e.text.rfind("ERR unknown command", 0) == 0 ||
                                   e.text.rfind("NOAUTH Authentication", 0) == 0));
             if (ok) {
               conn->set_inited();
               return done(Error::none());
             }
             // HELLO runs through its own process() over a SingleConnPool: a retryable error
             // makes it sleep one backoff, then the pool's sticky error ends it (not retried).
             if (!should_retry(e, true, options_) || options_.max_retries == 0) return done(e);
             TimeUs backoff = retry_backoff_us(1, options_.min_retry_backoff_us,
                                               options_.max_retry_backoff_us, backoff_prng_);
             if (tracer_.on())
               tracer_.emit(tracer_
                                .make("backoff", conn->id(), tag.step, tag.attempt,
                                      std::to_string(backoff) + " us", tag.actor)
                                .with(F::duration_us, backoff));
             TimeUs now = process_.now_us();
             if (ctx.deadline_us < add_saturating_us(now, backoff)) {
               e = Error::make(ErrorKind::ContextDeadline);
               backoff = std::max<TimeUs>(0, ctx.deadline_us - now);
             }
             process_.after(backoff, [alive, done, e] {
               auto a2 = alive.lock();
               if (a2 && *a2) done(e);
             });
           });
}

TimeUs Client::read_deadline_us(const Context& ctx, TimeUs timeout_us) const {
  // pool.Conn.WithReader: a negative timeout (ReadTimeout -2) sets no deadline at all.
  if (timeout_us < 0) return kTimeNeverUs;
  TimeUs now = process_.now_us();
  TimeUs own = timeout_us > 0 ? add_saturating_us(now, timeout_us) : kTimeNeverUs;
  if (options_.context_timeout_enabled && ctx.deadline_us != kTimeNeverUs)
    return std::min(own, ctx.deadline_us);
  return own;
}

void Client::on_conn(std::shared_ptr<Call> call, Pool::ConnPtr conn) {
  TimeUs timeout_us = options_.read_timeout_us;
  bool retry_timeout = true;
  if (call->kind == CallKind::Single) {
    // cmdTimeout: a blocking command reads with its own timeout + 10 s, or forever for 0;
    // and its read timeout is not retried (_process: retryTimeout = 0).
    if (auto blocking = blocking_timeout_us(call->cmds[0])) {
      timeout_us = *blocking == 0 ? 0 : *blocking + options_.blocking_read_extra_us;
      retry_timeout = false;
    }
  }
  TimeUs deadline = read_deadline_us(call->ctx, timeout_us);
  TraceTag tag{call->ctx.step, call->attempt, call->ctx.actor};
  std::weak_ptr<bool> alive = alive_;
  exchange(call->kind, conn, call->cmds, deadline, tag,
           [this, alive, call, conn, retry_timeout](PipelineResult r) {
             auto a = alive.lock();
             if (!a || !*a) return;
             release(conn, r.error);
             // txPipelineProcessCmds answers canRetry = false after a failed read.
             bool can_retry = call->kind != CallKind::Tx;
             if (!r.error.ok() && can_retry && should_retry(r.error, retry_timeout, options_) &&
                 call->attempt < options_.max_retries) {
               call->attempt++;
               return attempt(call);
             }
             finish(call, std::move(r));
           });
}

void Client::release(const Pool::ConnPtr& conn, const Error& error) {
  if (is_bad_conn(error)) {
    pool_->remove(conn, error.text);
  } else {
    pool_->put(conn);
  }
}

void Client::finish(std::shared_ptr<Call> call, PipelineResult r) {
  // Commands without a result (the attempt failed before a reply) carry the attempt's error.
  r.results.resize(call->cmds.size(), Result{Reply::nil(), r.error});
  // processPipeline: the attempt's own failure (network, pool, deadline, TxFailed) if any,
  // else the first command's error (cmdsFirstErr).
  if (r.error.ok() || r.error.kind == ErrorKind::Server) {
    r.error = Error::none();
    for (const Result& res : r.results) {
      if (!res.error.ok()) {
        r.error = res.error;
        break;
      }
    }
  }
  if (tracer_.on()) {
    TraceEvent e = tracer_.make("result", -1, call->ctx.step, call->attempt, "", call->ctx.actor);
    e.ends = call->span;
    if (!r.error.ok())
      e.with(F::error, r.error.text).with(F::error_class, error_class(r.error.kind));
    else if (call->kind == CallKind::Single)
      e.with(F::reply, format_short(r.results[0].reply));
    else
      e.with(F::count, static_cast<int64_t>(r.results.size()));
    // What a program would branch on: err == nil, err == redis.Nil, or which error.
    e.with(F::result_class, call->kind == CallKind::Single ? result_class(r.results[0])
                            : r.error.ok()                 ? "ok"
                                                           : error_class(r.error.kind));
    tracer_.emit(std::move(e));
  }
  if (call->single_done) {
    Done done = std::move(call->single_done);
    return done(std::move(r.results.at(0)));
  }
  PipelineDone done = std::move(call->done);
  done(std::move(r));
}

// ---------------------------------------------------------------------------------------
// One write and read on a connection
// ---------------------------------------------------------------------------------------

void Client::exchange(CallKind kind, const Pool::ConnPtr& conn, const std::vector<Argv>& cmds,
                      TimeUs deadline_us, TraceTag tag, PipelineDone done) {
  std::vector<Argv> wire;
  wire.reserve(cmds.size() + (kind == CallKind::Tx ? 2 : 0));
  if (kind == CallKind::Tx) wire.push_back({"MULTI"});
  for (const Argv& a : cmds) wire.push_back(a);
  if (kind == CallKind::Tx) wire.push_back({"EXEC"});
  // One span per command on the wire, command .. reply; its id travels with the command as
  // the cause of what the server does for it. The ids are consecutive (taken together, before
  // any event), so the reply's callback keeps the first one rather than a vector of them.
  const size_t wanted = wire.size();
  const int64_t first_span = tracer_.new_spans(wanted);
  if (tracer_.on())
    for (size_t i = 0; i < wanted; i++) {
      TraceEvent e = tracer_.make("command", conn->id(), tag.step, tag.attempt, "", tag.actor);
      e.span = first_span + static_cast<int64_t>(i);
      tracer_.emit(std::move(e).with(F::argv, trace_argv(wire[i])));
    }
  size_t n = cmds.size();
  Tracer tracer = tracer_;
  net::ConnId conn_id = conn->id();
  conn->roundtrip(
      std::move(wire), first_span, wanted, deadline_us,
      [kind, n, wanted, tracer, conn_id, tag, first_span, done = std::move(done)](
          std::vector<Reply> replies, Error err) {
        if (tracer.on()) {
          for (size_t i = 0; i < replies.size(); i++) {
            const Reply& r = replies[i];
            TraceEvent e = tracer.make("reply", conn_id, tag.step, tag.attempt, "", tag.actor);
            e.ends = i < wanted ? first_span + static_cast<int64_t>(i) : 0;
            e.with(F::reply, format_short(r));
            if (r.is_error()) e.with(F::error, r.str).with(F::error_class, "server");
            tracer.emit(std::move(e));
          }
          // The commands left without a reply: the first ends with the read's error, the
          // others with no_reply.
          for (size_t i = replies.size(); !err.ok() && i < wanted; i++) {
            const char* what = i > replies.size()                   ? "no_reply"
                               : err.kind == ErrorKind::ReadTimeout ? "read_timeout"
                                                                    : "eof";
            TraceEvent e = tracer.make(what, conn_id, tag.step, tag.attempt, err.text, tag.actor);
            e.ends = first_span + static_cast<int64_t>(i);
            tracer.emit(
                std::move(e).with(F::error, err.text).with(F::error_class, error_class(err.kind)));
          }
        }
        PipelineResult out;
        out.results.reserve(n);
        if (kind != CallKind::Tx) {
          for (size_t i = 0; i < n; i++) {
            if (i < replies.size()) {
              Error e = error_of(replies[i]);  // before the reply moves
              out.results.push_back(Result{std::move(replies[i]), std::move(e)});
            } else {
              out.results.push_back(Result{Reply::nil(), err});
            }
          }
          // The attempt's error: the network's, or the first command's
          // (pipelineReadCmds returns cmds[0].Err(), retried if retryable).
          out.error = !err.ok() ? err : out.results[0].error;
          return done(std::move(out));
        }
        if (!err.ok()) {
          out.error = err;
          return done(std::move(out));
        }
        const Reply& multi = replies[0];
        const Reply& exec = replies[n + 1];
        Error tx_error;
        if (multi.is_error()) {
          tx_error = error_of(multi);
        } else if (exec.kind == Reply::Kind::NilArray || exec.kind == Reply::Kind::Nil) {
          tx_error = Error::make(ErrorKind::TxFailed);
        } else if (exec.is_error()) {
          tx_error = error_of(exec);
        }
        for (size_t i = 0; i < n; i++) {
          if (!tx_error.ok()) {
            out.results.push_back(Result{Reply::nil(), tx_error});
          } else if (i < exec.elements.size()) {
            out.results.push_back(Result{exec.elements[i], error_of(exec.elements[i])});
          } else {
            out.results.push_back(Result{Reply::nil(), Error::make(ErrorKind::Eof)});
          }
        }
        out.error = tx_error;
        done(std::move(out));
      });
}

}  // namespace redlab::client
