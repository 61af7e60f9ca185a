// The go-redis v9 client model: redis.NewClient(opt) for one server, in continuation style.
//
// Single-threaded: every call takes a completion callback and returns at once; a Go
// goroutine is a chain of callbacks. Every timer and every network event runs on the
// client's net::Process, so pausing the process (a GC or VM freeze) stops the client while
// servers and the network go on.
//
// Semantics follow redis/go-redis v9 (redis.go, error.go, tx.go, script.go, pubsub.go,
// internal/pool/pool.go, internal/internal.go; details in docs/client-model.md):
// - do_command (redis.go process/_process/withConn): up to 1 + MaxRetries attempts; before
//   attempt n > 0 a backoff of RetryBackoff(n, MinRetryBackoff, MaxRetryBackoff) (with jitter
//   from the client's seeded PRNG); an attempt gets a connection from the pool (waiting up to
//   PoolTimeout), writes the command and reads with the read deadline: ReadTimeout, or for a
//   blocking command its own timeout + 10 s (none for timeout 0); with
//   ContextTimeoutEnabled the call's deadline also bounds the read (the error is still an
//   i/o timeout). Retried: EOF, pool timeout (profiles v9.8+), dial errors, read timeout of
//   non-blocking commands, LOADING/READONLY/MASTERDOWN/TRYAGAIN/CLUSTERDOWN. Never: context
//   deadline (the backoff sleep and the pool wait end at the call's deadline with "context
//   deadline exceeded"), never a cancel (a cancelled context, context.h, ends the pool wait and
//   the backoff sleep with "context canceled"; an attempt whose context is already done fails
//   at once, as waitTurn does, before any turn is taken; a read in flight goes on). After any error
//   but a server error (READONLY excepted) the connection is closed, not reused.
// - pipeline (Pipeline.Exec): all commands in one write, replies read with ReadTimeout; the
//   whole pipeline is resent on a retryable failure (so an INCR in it may count twice).
// - tx_pipeline (TxPipeline.Exec): MULTI, the commands, EXEC in one write. A nil EXEC reply
//   is TxFailed ("redis: transaction failed"). A failed read is not retried
//   (txPipelineProcessCmds returns canRetry = false); a failed getConn is.
// - A new connection is initialized first (initConn: HELLO, one round trip) unless
//   Options::hello_on_connect is off.
// - watch (Client.Watch): a connection from the pool, held for the whole transaction; WATCH
//   keys, then the caller's function with a Tx (commands and tx_pipelined on that
//   connection), then UNWATCH and the connection goes back. The function must call its
//   finish callback exactly once (until then the connection stays taken).
//   watch_with_retries is the documented optimistic-locking loop with a bounded number of
//   attempts; it gives up with TxFailed.
// - run_script (Script.Run): EVALSHA, and on a NOSCRIPT error EVAL.
// Trace events (actor = process name): call, command, reply, read_timeout, eof, backoff,
// result; the pool adds pool_wait/pool_hit/pool_miss/pool_timeout/pool_stats, dial/dial_ok/
// dial_timeout/dial_failed/conn_close and the dial breaker's pool_breaker_open/_fail/_reset.
//
// Lifetimes: the process and the transport must outlive the client. Destroying a client
// drops its pending calls silently (their callbacks never run).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/client/conn.h"
#include "sim/client/context.h"
#include "sim/client/errors.h"
#include "sim/client/options.h"
#include "sim/client/pool.h"
#include "sim/client/tracer.h"
#include "sim/core/prng.h"
#include "sim/core/trace.h"
#include "sim/net/process.h"
#include "sim/net/transport.h"

namespace redlab::client {

// context.Context, the parts that matter here.
struct Context {
  // The earliest deadline that bounds the call: its own and, with `state`, that context's
  // (ContextState::deadline_us()). Never = no deadline.
  TimeUs deadline_us = kTimeNeverUs;
  int64_t step = -1;  // trace identity: which step of the actor's script
  std::string actor;  // trace identity: the goroutine's actor (empty: the process' name)
  // The Go context the call was given, when it can be cancelled (context.h); nullptr: only
  // deadline_us (context.Background(), or WithDeadline of it).
  std::shared_ptr<ContextState> state = nullptr;
  // ctx.Err() at now_us: None, Canceled or ContextDeadline (context_err, context.h).
  ErrorKind err(TimeUs now_us) const { return context_err(deadline_us, state.get(), now_us); }
};

struct Result {
  Reply reply;
  Error error;
  bool ok() const { return error.ok(); }
};

// How a program would tell the result apart (the trace's result_class): "ok" (err == nil),
// "nil" (err == redis.Nil: a nil reply), or the error class (errors.h error_class()).
const char* result_class(const Result& r);

struct PipelineResult {
  std::vector<Result> results;  // one per command, in order
  Error error;                  // the first error (cmdsFirstErr), or none
};

// A Lua script as redis.NewScript makes it: its body and the SHA-1 that names it.
struct Script {
  explicit Script(std::string source);
  std::string source;
  std::string sha1_hex;
};

// internal.RetryBackoff (internal/internal.go, the same at v9.0.0 and v9.22.0): d = min <<
// retry (max on overflow), then d = min + rand[0, d), capped at max; 0 when min is 0.
TimeUs retry_backoff_us(int64_t retry, TimeUs min_us, TimeUs max_us, Prng& prng);

class Client;

// A transaction's connection (go-redis Tx): commands run on it without retries.
class Tx {
 public:
  void do_command(const Context& ctx, Argv argv, std::function<void(Result)> done);
  // tx.TxPipelined: MULTI, cmds, EXEC on this connection.
  void tx_pipelined(const Context& ctx, std::vector<Argv> cmds,
                    std::function<void(PipelineResult)> done);
  net::ConnId conn_id() const;

 private:
  friend class Client;
  Tx(Client& client, Pool::ConnPtr conn, TraceTag tag)
      : client_(client), conn_(std::move(conn)), tag_(tag) {}
  Client& client_;
  Pool::ConnPtr conn_;
  TraceTag tag_;
  Error bad_;  // the error that made the connection unusable, if any
};

class Client {
 public:
  using Done = std::function<void(Result)>;
  using PipelineDone = std::function<void(PipelineResult)>;
  using ErrorDone = std::function<void(Error)>;
  // The body of a watch: use tx, then call finish with its outcome (TxFailed to retry).
  using WatchFn = std::function<void(Tx& tx, ErrorDone finish)>;

  // The PRNG stream of the backoff jitter, derived from the client's seed.
  static constexpr uint64_t kBackoffStream = 0x6261636b6f6666ULL;  // "backoff"
  // seed feeds the retry backoff jitter (one PRNG stream per client). The options are
  // resolved (Options::init) here, as redis.NewClient does.
  Client(net::Process& process, net::Transport& transport, std::string server, Options options,
         Trace* trace, uint64_t seed);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void do_command(const Context& ctx, Argv argv, Done done);
  void pipeline(const Context& ctx, std::vector<Argv> cmds, PipelineDone done);
  void tx_pipeline(const Context& ctx, std::vector<Argv> cmds, PipelineDone done);
  void watch(const Context& ctx, std::vector<std::string> keys, WatchFn fn, ErrorDone done);
  // Up to max_attempts watches while the transaction fails; then TxFailed.
  void watch_with_retries(const Context& ctx, std::vector<std::string> keys, WatchFn fn,
                          int64_t max_attempts, ErrorDone done);
  void run_script(const Context& ctx, const Script& script, std::vector<std::string> keys,
                  std::vector<std::string> args, Done done);
  // Closes idle connections; later calls fail with "redis: client is closed".
  void close();

  const Options& options() const { return options_; }
  Pool& pool() { return *pool_; }
  PoolStats pool_stats() const { return pool_->stats(); }
  net::Process& process() { return process_; }
  const Tracer& tracer() const { return tracer_; }
  const std::string& server() const { return server_; }
  net::Transport& transport() { return transport_; }

 private:
  friend class Tx;
  friend class PubSub;
  struct Call;
  enum class CallKind : uint8_t { Single, Pipeline, Tx };
  // baseClient._getConn: a pooled connection, initialized (HELLO) if new. An init failure
  // removes the connection and is reported like a pool error.
  void get_conn(const Context& ctx, TraceTag tag, Pool::GetDone done);
  // initConn on a fresh connection (also used by PubSub).
  void init_conn(const Context& ctx, const Pool::ConnPtr& conn, TraceTag tag,
                 std::function<void(Error)> done);
  // pipeline and tx_pipeline: one call of several commands.
  void run_batch(CallKind kind, const char* what, const Context& ctx, std::vector<Argv> cmds,
                 PipelineDone done);
  void run(std::shared_ptr<Call> call);
  void attempt(std::shared_ptr<Call> call);
  void on_conn(std::shared_ptr<Call> call, Pool::ConnPtr conn);
  void finish(std::shared_ptr<Call> call, PipelineResult result);
  // internal.Sleep(ctx, d): done(none) after delay_us, or done(the context's error) when the
  // context ends first (its deadline, a cancel; at once if it already has).
  void sleep_ctx(const Context& ctx, TimeUs delay_us, std::function<void(Error)> done);
  // The read deadline of an exchange started now (redis.go cmdTimeout + pool.Conn.deadline).
  TimeUs read_deadline_us(const Context& ctx, TimeUs timeout_us) const;
  // One write + read on conn. done(results, attempt_error).
  void exchange(CallKind kind, const Pool::ConnPtr& conn, const std::vector<Argv>& cmds,
                TimeUs deadline_us, TraceTag tag, PipelineDone done);
  void release(const Pool::ConnPtr& conn, const Error& error);

  net::Process& process_;
  net::Transport& transport_;
  std::string server_;
  Options options_;
  Tracer tracer_;
  Prng backoff_prng_;
  std::unique_ptr<Pool> pool_;
  bool closed_ = false;
  std::shared_ptr<bool> alive_;
};

}  // namespace redlab::client
