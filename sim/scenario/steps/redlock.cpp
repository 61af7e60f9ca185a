// Redlock: one lock over several independent masters (Antirez, "Distributed locks with Redis",
// redis.io/docs/manual/patterns/distributed-locks), as go-redsync v4 implements it (mutex.go):
//
//   redlock_acquire  SET lock token NX PX ttl on every server at once, each with its own
//                    timeout (go-redsync: a context of expiry * timeoutFactor, 0.05); when every
//                    server has answered or timed out, the lock is taken if a quorum (n/2 + 1)
//                    said OK and it is still valid: until = now + ttl - elapsed - drift, drift =
//                    ttl * driftFactor (0.01). Otherwise it is released on every server (the
//                    servers that said OK keep the key until their TTL otherwise), and tried
//                    again after retry_ms.
//   redlock_release  the compare-and-delete script on every server (go-redsync's
//                    deleteScript); released when a quorum deleted.
//
// Each server's answer is a `redlock_node` event; lock_acquired carries the servers it took,
// the quorum and the validity end (until_us), which the lock checks judge it by
// (checks/locks.cpp). Redlock hands out no fencing token: nothing in it grows across holders.
#include <memory>

#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Result;

std::string new_token(ActorRt& a) {
  static const char* hex = "0123456789abcdef";
  std::string t;
  uint64_t v = a.prng.next_u64();
  for (int i = 0; i < 16; i++) t += hex[(v >> (i * 4)) & 15];
  return t;
}

// One server's answer within its timeout, or none.
struct NodeAnswer {
  bool answered = false;
  Result result;
};
using AllDone = std::function<void(std::vector<NodeAnswer>)>;
// Sends one call to each server at once (go-redsync's actOnPoolsAsync) and calls done when
// every server has answered or its timeout has passed, whichever comes first for each; a
// late answer is ignored (the server may still have acted on it: the key events show it).
using Send =
    std::function<void(client::Client& c, const client::Context& ctx, client::Client::Done)>;
struct Fan {
  std::vector<NodeAnswer> answers;
  std::vector<bool> decided;
  std::vector<net::Process::TimerId> timers;
  size_t left = 0;
  AllDone done;
};
void fan_out(Engine& eng, ActorRt& a, const Step& s, const std::vector<std::string>& servers,
             TimeUs timeout_us, const Send& send, AllDone done) {
  auto fan = std::make_shared<Fan>();
  fan->answers.resize(servers.size());
  fan->decided.assign(servers.size(), false);
  fan->timers.assign(servers.size(), 0);
  fan->left = servers.size();
  fan->done = std::move(done);
  ActorRt* p = &a;
  auto decide = [p, fan](size_t i, std::optional<Result> r) {
    if (fan->decided[i]) return;
    fan->decided[i] = true;
    if (fan->timers[i]) p->process->cancel(fan->timers[i]);
    fan->timers[i] = 0;
    if (r) fan->answers[i] = NodeAnswer{true, std::move(*r)};
    if (--fan->left == 0) {
      AllDone d = std::move(fan->done);
      d(std::move(fan->answers));
    }
  };
  TimeUs deadline_us = eng.scheduler_.now_us() + timeout_us;
  for (size_t i = 0; i < servers.size(); i++) {
    fan->timers[i] = a.process->after(
        timeout_us, eng.guard(a, [decide, i]() mutable { decide(i, std::nullopt); }));
    // The deadline also bounds the client's own pool wait and dial (go-redis: ctx).
    send(eng.client_on(a, servers[i]), eng.ctx(a, s, deadline_us),
         eng.guard1<Result>(a, [decide, i](Result r) mutable { decide(i, std::move(r)); }));
  }
}

// Its servers: `servers`, else every server of the file, each once.
std::vector<std::string> servers_of(Engine& eng, ActorRt& a, const Step& s) {
  std::vector<std::string> out;
  if (s.l("servers")) {
    out = eng.step_list(a, s, "servers");
    for (size_t i = 0; i < out.size(); i++) {
      bool known = false;
      for (const ServerDef& d : eng.sc_.servers)
        known = known || (d.name == out[i] && eng.in_run(d));
      if (!known) eng.fail(eng.field(s, "servers"), "no server named \"" + out[i] + "\"");
      for (size_t j = 0; j < i; j++)
        if (out[j] == out[i]) eng.fail(eng.field(s, "servers"), "\"" + out[i] + "\" twice");
    }
  } else {
    for (const ServerDef& d : eng.sc_.servers)
      if (eng.in_run(d)) out.push_back(d.name);
  }
  if (out.empty()) eng.fail(eng.field(s, "servers"), "a Redlock needs at least one server");
  return out;
}

const client::Script& release_script(Engine& eng, const Step& s) {
  return eng.scripts_.at(s.nm("script").empty() ? "lock_release" : s.nm("script"));
}

// One server's part of an acquisition or release, on the actor's lane.
void node_event(Engine& eng, ActorRt& a, const Step& s, const std::string& server,
                const std::string& lock, const NodeAnswer& n, const std::string& outcome,
                int64_t attempt) {
  TraceEvent e = eng.ev(a, "redlock_node", eng.sid(s), server + ": " + outcome, attempt)
                     .with(F::lock, lock)
                     .with(F::server, server)
                     .with(F::reason, outcome);
  if (n.answered && n.result.ok()) e.with(F::reply, format_short(n.result.reply));
  if (n.answered && !n.result.ok())
    e.with(F::error, n.result.error.text)
        .with(F::error_class, client::error_class(n.result.error.kind));
  eng.put(std::move(e));
}

struct Acquire {
  std::string lock, token;
  std::vector<std::string> servers;
  int64_t ttl_ms = 0, retry_ms = 0, wait_ms = -1;  // wait -1: until the run ends
  TimeUs timeout_us = 0;
  size_t quorum = 0;
  TimeUs started_us = 0;  // the first try (for wait_ms)
  int64_t span = 0;       // lock_acquire .. lock_acquired / lock_gave_up
};

void try_acquire(Engine& eng, ActorRt& a, const Step& s, std::shared_ptr<Acquire> q, int64_t tries,
                 Next k) {
  TimeUs start_us = eng.scheduler_.now_us();
  ActorRt* p = &a;
  Send set = [q](client::Client& c, const client::Context& ctx, client::Client::Done d) {
    client::Argv argv{"SET", q->lock, q->token, "NX", "PX", std::to_string(q->ttl_ms)};
    c.do_command(ctx, std::move(argv), std::move(d));
  };
  fan_out(eng, a, s, q->servers, q->timeout_us, set,
          [&eng, p, &s, q, tries, start_us, k = std::move(k)](std::vector<NodeAnswer> ns) mutable {
            ActorRt& a2 = *p;
            std::vector<std::string> took;
            for (size_t i = 0; i < ns.size(); i++) {
              const NodeAnswer& n = ns[i];
              bool ok = n.answered && n.result.ok() && n.result.reply.kind == Reply::Kind::Status &&
                        n.result.reply.str == "OK";
              if (ok) took.push_back(q->servers[i]);
              std::string outcome = ok              ? "took"
                                    : !n.answered   ? "no answer in time"
                                    : n.result.ok() ? "busy"
                                                    : "error";
              node_event(eng, a2, s, q->servers[i], q->lock, n, outcome, tries);
            }
            // go-redsync: until := now.Add(expiry - now.Sub(start) - expiry*driftFactor).
            TimeUs now_us = eng.scheduler_.now_us();
            TimeUs ttl_us = ms_to_us(q->ttl_ms);
            TimeUs until_us = now_us + ttl_us - (now_us - start_us) - ttl_us / 100;
            if (took.size() >= q->quorum && now_us < until_us) {
              LockRt l;
              l.token = q->token;
              l.ttl_us = ttl_us;
              l.servers = q->servers;
              l.node_timeout_us = q->timeout_us;
              eng.end_hold(a2, q->lock, "reacquired");
              TraceEvent e =
                  eng.ev(a2, "lock_acquired", eng.sid(s),
                         q->lock + " token=" + q->token + " on " + std::to_string(took.size()) +
                             " of " + std::to_string(q->servers.size()) + " servers (quorum " +
                             std::to_string(q->quorum) + "), valid for " +
                             format_time(until_us - now_us),
                         tries)
                      .with(F::lock, q->lock)
                      .with(F::token, q->token)
                      .with(F::ttl_us, ttl_us)
                      .with(F::servers, took)
                      .with(F::quorum, static_cast<int64_t>(q->quorum))
                      .with(F::until_us, until_us);
              e.ends = q->span;
              l.hold_span = eng.begin(std::move(e));
              a2.locks[q->lock] = l;
              eng.save(a2, s, "1");
              return k();
            }
            if (tries == 0)
              eng.put(eng.ev(a2, "lock_busy", eng.sid(s),
                             q->lock + ": took " + std::to_string(took.size()) + " of " +
                                 std::to_string(q->servers.size()) + " servers, quorum " +
                                 std::to_string(q->quorum) +
                                 (took.size() >= q->quorum ? ", but too late to be valid" : ""),
                             tries)
                          .with(F::lock, q->lock));
            // Released on every server, as go-redsync does after a failed try, and only then
            // the next try (or the end).
            Send del = [&eng, &s, q](client::Client& c, const client::Context& ctx,
                                     client::Client::Done d) {
              c.run_script(ctx, release_script(eng, s), {q->lock}, {q->token}, std::move(d));
            };
            fan_out(eng, a2, s, q->servers, q->timeout_us, del,
                    [&eng, p, &s, q, tries, k = std::move(k)](std::vector<NodeAnswer>) mutable {
                      ActorRt& a3 = *p;
                      TimeUs retry_us = ms_to_us(q->retry_ms);
                      if (q->wait_ms >= 0 && eng.scheduler_.now_us() + retry_us >
                                                 q->started_us + ms_to_us(q->wait_ms)) {
                        eng.end(eng.ev(a3, "lock_gave_up", eng.sid(s),
                                       q->lock + " after " + std::to_string(tries + 1) + " tries",
                                       tries)
                                    .with(F::lock, q->lock)
                                    .with(F::tries, tries + 1),
                                q->span);
                        eng.save(a3, s, "0");
                        return k();
                      }
                      eng.after(a3, retry_us, [&eng, p, &s, q, tries, k = std::move(k)]() mutable {
                        try_acquire(eng, *p, s, q, tries + 1, std::move(k));
                      });
                    });
          });
}

void run_acquire(Engine& eng, ActorRt& a, const Step& s, Next k) {
  auto q = std::make_shared<Acquire>();
  q->lock = eng.step_str(a, s, "lock");
  q->ttl_ms = eng.step_ms(a, s, "ttl_ms", 0);
  if (q->ttl_ms <= 0) eng.fail(eng.field(s, "ttl_ms"), "a lock needs a TTL above 0");
  q->retry_ms = eng.step_ms(a, s, "retry_ms", 200);
  q->wait_ms = s.n("wait_ms") ? eng.step_ms(a, s, "wait_ms", 0) : -1;
  // go-redsync's timeoutFactor: 0.05 of the expiry.
  int64_t timeout_ms = s.n("timeout_ms") ? eng.step_ms(a, s, "timeout_ms", 0) : q->ttl_ms / 20;
  if (timeout_ms <= 0) eng.fail(eng.field(s, "timeout_ms"), "a per-server timeout above 0");
  q->timeout_us = ms_to_us(timeout_ms);
  q->servers = servers_of(eng, a, s);
  q->quorum = q->servers.size() / 2 + 1;
  q->token = s.t("token") ? eng.step_str(a, s, "token") : new_token(a);
  a.vars["token"] = q->token;
  q->started_us = eng.scheduler_.now_us();
  q->span = eng.begin(eng.ev(a, "lock_acquire", eng.sid(s),
                             q->lock + " ttl=" + std::to_string(q->ttl_ms) + " ms on " +
                                 std::to_string(q->servers.size()) + " servers (quorum " +
                                 std::to_string(q->quorum) + ")")
                          .with(F::lock, q->lock)
                          .with(F::token, q->token)
                          .with(F::ttl_us, ms_to_us(q->ttl_ms))
                          .with(F::servers, q->servers)
                          .with(F::quorum, static_cast<int64_t>(q->quorum)));
  try_acquire(eng, a, s, q, 0, std::move(k));
}

void run_release(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  auto it = a.locks.find(lock);
  if (it == a.locks.end() || it->second.servers.empty()) {
    eng.put(eng.ev(a, "lock_not_held", eng.sid(s), lock + ": no Redlock to release")
                .with(F::lock, lock));
    eng.save(a, s, "0");
    return k();
  }
  std::string token = it->second.token;
  std::vector<std::string> servers = it->second.servers;
  TimeUs timeout_us =
      s.n("timeout_ms") ? ms_to_us(eng.step_ms(a, s, "timeout_ms", 0)) : it->second.node_timeout_us;
  if (timeout_us <= 0) eng.fail(eng.field(s, "timeout_ms"), "a per-server timeout above 0");
  size_t quorum = servers.size() / 2 + 1;
  int64_t span = eng.begin(eng.ev(a, "lock_release", eng.sid(s),
                                  lock + " on " + std::to_string(servers.size()) + " servers")
                               .with(F::lock, lock)
                               .with(F::token, token)
                               .with(F::method, "lua")
                               .with(F::servers, servers));
  ActorRt* p = &a;
  Send del = [&eng, &s, lock, token](client::Client& c, const client::Context& ctx,
                                     client::Client::Done d) {
    c.run_script(ctx, release_script(eng, s), {lock}, {token}, std::move(d));
  };
  fan_out(eng, a, s, servers, timeout_us, del,
          [&eng, p, &s, k, lock, servers, quorum, span](std::vector<NodeAnswer> ns) {
            size_t deleted = 0;
            for (size_t i = 0; i < ns.size(); i++) {
              const NodeAnswer& n = ns[i];
              // go-redsync's release: status != 0 counts.
              bool del = n.answered && n.result.ok() &&
                         n.result.reply.kind == Reply::Kind::Integer && n.result.reply.integer != 0;
              if (del) deleted++;
              node_event(eng, *p, s, servers[i], lock, n,
                         del             ? "deleted"
                         : !n.answered   ? "no answer in time"
                         : n.result.ok() ? "not ours"
                                         : "error",
                         -1);
            }
            std::string on = " on " + std::to_string(deleted) + " of " +
                             std::to_string(servers.size()) + " servers";
            bool released = deleted >= quorum;
            eng.end(eng.ev(*p, released ? "lock_released" : "lock_lost", eng.sid(s),
                           lock + (released ? " released" + on
                                            : ": deleted" + on + ", below the quorum of " +
                                                  std::to_string(quorum) +
                                                  ": the lock was no longer ours"))
                        .with(F::lock, lock)
                        .with(F::count, static_cast<int64_t>(deleted)),
                    span);
            eng.end_hold(*p, lock, released ? "released" : "lost");
            eng.save(*p, s, released ? "1" : "0");
            k();
          });
}

void needs_release(const Step& s, StepNeeds& needs) {
  needs.script(s.nm("script").empty() ? "lock_release" : s.nm("script"));
}

constexpr FieldSpec kAcquire[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "ttl_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "servers", .type = FieldType::List, .absent = "every server of the file"},
    {.key = "timeout_ms", .type = FieldType::Duration, .unit = "ms", .absent = "`ttl_ms / 20`"},
    {.key = "retry_ms", .type = FieldType::Duration, .unit = "ms", .absent = "200"},
    {.key = "wait_ms", .type = FieldType::Duration, .unit = "ms", .absent = "until the run ends"},
    {.key = "token", .type = FieldType::Text, .absent = "random"},
    {.key = "script", .type = FieldType::Script, .absent = "`lock_release`"}};
constexpr FieldSpec kRelease[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "timeout_ms", .type = FieldType::Duration, .unit = "ms", .absent = "the acquire's"},
    {.key = "script", .type = FieldType::Script, .absent = "`lock_release`"}};

}  // namespace

extern const StepKind redlock_acquire_step, redlock_release_step;
const StepKind redlock_acquire_step{"redlock_acquire", kAcquire,      run_acquire,
                                    nullptr,           needs_release, false};
const StepKind redlock_release_step{"redlock_release", kRelease,      run_release,
                                    nullptr,           needs_release, false};

}  // namespace redlab::scenario::steps
