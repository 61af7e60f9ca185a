// watch_tx: the optimistic-locking loop (WATCH, read, decide, MULTI/EXEC, retry on abort), on
// one connection (Client.Watch) or, the bug, through the pool.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

struct TxState {
  std::vector<std::string> keys;
  Argv read;  // its command lines, made once: every attempt sends the same
  std::vector<Argv> exec;
  bool positive = true;
  bool same = true;
  int64_t max_attempts = 0;
  TimeUs think_us = 0;  // between the read and MULTI/EXEC: the application decides
  int64_t attempts = 0;
  int64_t span = 0;  // the current attempt's span: tx_attempt .. its outcome
};

// One optimistic attempt; outcome: "committed", "aborted", "skipped", or an error text.
void tx_attempt(Engine& eng, ActorRt& a, const Step& s, std::shared_ptr<TxState> st, Next k) {
  // "Unbounded" still ends: a run is bounded and a loop that never gives up is the lesson.
  static constexpr int64_t kUnboundedCap = 100000;
  int64_t attempt = ++st->attempts;
  a.vars["attempts"] = std::to_string(attempt);
  ActorRt* p = &a;
  auto outcome = [&eng, p, &s, st, k, attempt](std::string what, std::string detail) {
    auto close = [&](const char* kind, std::string text) {
      eng.end(eng.ev(*p, kind, eng.sid(s), std::move(text), attempt - 1)
                  .with(F::outcome, what)
                  .with(F::tries, attempt),
              st->span);
    };
    if (what == "aborted") {
      close("tx_aborted", "EXEC aborted: a watched key changed (" + detail + ")");
      bool more = st->max_attempts == 0 ? attempt < kUnboundedCap : attempt < st->max_attempts;
      if (more) return tx_attempt(eng, *p, s, st, k);
      // The application's own bound on its retry loop (go-redis' Watch never retries).
      eng.put(eng.ev(*p, "tx_gave_up", eng.sid(s),
                     "gave up after " + std::to_string(attempt) +
                         " attempts (the application's own bound)",
                     attempt - 1)
                  .with(F::tries, attempt));
      eng.save(*p, s, "gave_up");
      return k();
    }
    if (what == "committed") {
      close("tx_committed", detail);
      eng.save(*p, s, "committed");
      eng.record(*p, s, true);
      return k();
    }
    if (what == "skipped") {
      close("tx_skipped", detail);
      eng.save(*p, s, "skipped");
      return k();
    }
    close("tx_error", detail);
    eng.save(*p, s, detail);
    k();
  };
  st->span = eng.begin(
      eng.ev(a, "tx_attempt", eng.sid(s), "attempt " + std::to_string(attempt), attempt - 1)
          .with(F::tries, attempt));
  const Argv& read_argv = st->read;
  const std::vector<Argv>& exec_cmds = st->exec;
  auto guard_ok = [st](const Result& r) -> bool {
    if (!st->positive) return true;
    if (!r.ok()) return false;
    auto v = r.reply.kind == Reply::Kind::Integer ? std::optional<int64_t>(r.reply.integer)
                                                  : parse_int(r.reply.str);
    return v && *v > 0;
  };
  Context c = eng.ctx(a, s);
  if (st->same) {
    auto result = std::make_shared<std::pair<std::string, std::string>>("error", "");
    a.client->watch(
        c, st->keys,
        [p, st, c, read_argv, exec_cmds, guard_ok, result](client::Tx& tx,
                                                           client::Client::ErrorDone finish) {
          tx.do_command(
              c, read_argv, [p, st, &tx, c, exec_cmds, guard_ok, result, finish](Result r) {
                if (!r.ok()) {
                  *result = {"error", r.error.text};
                  return finish(r.error);
                }
                if (!guard_ok(r)) {
                  *result = {"skipped", "read " + reply_text(r) + ": nothing to do"};
                  return finish(Error::none());
                }
                std::string seen = reply_text(r);
                auto commit = [&tx, c, exec_cmds, result, finish, seen] {
                  tx.tx_pipelined(c, exec_cmds, [result, finish, seen](client::PipelineResult pr) {
                    if (pr.error.kind == ErrorKind::TxFailed) {
                      *result = {"aborted", "read " + seen};
                    } else if (!pr.error.ok()) {
                      *result = {"error", pr.error.text};
                    } else {
                      *result = {"committed", "read " + seen + ", EXEC applied"};
                    }
                    finish(pr.error);
                  });
                };
                if (st->think_us > 0)
                  p->process->after(st->think_us, commit);
                else
                  commit();
              });
        },
        eng.guard1<Error>(a, [result, outcome](Error e) {
          if (result->first == "error" && result->second.empty()) result->second = e.text;
          outcome(result->first, result->second);
        }));
    return;
  }
  // The bug: WATCH and the read go through the pool on whatever connection is free, and
  // MULTI/EXEC through the pool again, so the EXEC usually runs where nothing is watched.
  Argv watch_argv{"WATCH"};
  watch_argv.insert(watch_argv.end(), st->keys.begin(), st->keys.end());
  a.client->do_command(
      c, std::move(watch_argv),
      eng.guard1<Result>(a, [&eng, p, st, c, read_argv, exec_cmds, guard_ok, outcome](Result wr) {
        if (!wr.ok()) return outcome("error", wr.error.text);
        p->client->do_command(
            c, read_argv,
            eng.guard1<Result>(*p, [&eng, p, st, c, exec_cmds, guard_ok, outcome](Result r) {
              if (!r.ok()) return outcome("error", r.error.text);
              if (!guard_ok(r))
                return outcome("skipped", "read " + reply_text(r) + ": nothing to do");
              std::string seen = reply_text(r);
              auto commit = [p, c, exec_cmds, outcome, seen] {
                p->client->tx_pipeline(c, exec_cmds, [outcome, seen](client::PipelineResult pr) {
                  if (pr.error.kind == ErrorKind::TxFailed)
                    return outcome("aborted", "read " + seen);
                  if (!pr.error.ok()) return outcome("error", pr.error.text);
                  outcome("committed", "read " + seen + ", EXEC applied");
                });
              };
              if (st->think_us > 0)
                p->process->after(st->think_us, eng.guard(*p, commit));
              else
                commit();
            }));
      }));
}

void run_watch_tx(Engine& eng, ActorRt& a, const Step& s, Next k) {
  auto st = std::make_shared<TxState>();
  st->keys = eng.step_list(a, s, "watch");
  st->read = eng.command(a, s, "read");
  st->exec = eng.commands(a, s, "exec");
  std::string guard_kind = eng.step_choice(a, s, "guard");
  st->positive = guard_kind == "positive";
  std::string conn = eng.step_choice(a, s, "connection");
  st->same = conn == "same";
  st->max_attempts =
      s.n("max_attempts") ? eng.num(*s.n("max_attempts"), &a, eng.field(s, "max_attempts")) : 0;
  if (st->max_attempts < 0) eng.fail(eng.field(s, "max_attempts"), "cannot be negative");
  st->think_us = ms_to_us(eng.step_ms(a, s, "think_ms", 0));
  tx_attempt(eng, a, s, st, std::move(k));
}

constexpr FieldSpec kWatchTx[] = {
    {.key = "watch",
     .type = FieldType::List,
     .required = true,
     .absent = "non-empty",
     .non_empty = true},
    {.key = "read", .type = FieldType::CommandLine, .required = true},
    {.key = "guard", .type = FieldType::Text, .absent = "`positive`", .choices = "positive always"},
    {.key = "exec",
     .type = FieldType::Commands,
     .required = true,
     .absent = "non-empty",
     .non_empty = true},
    {.key = "max_attempts", .type = FieldType::Number, .unit = "attempts", .absent = "0"},
    {.key = "connection", .type = FieldType::Text, .absent = "`same`", .choices = "same pool"},
    {.key = "think_ms", .type = FieldType::Duration, .unit = "ms", .absent = "0"},
    {.key = "record", .type = FieldType::Text}};

}  // namespace

extern const StepKind watch_tx_step;
const StepKind watch_tx_step{"watch_tx", kWatchTx, run_watch_tx, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps
