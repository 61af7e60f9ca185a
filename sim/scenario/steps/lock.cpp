// The lock recipes of the seeds: lock_acquire (SET NX PX, retried), fenced_acquire (a script
// that also hands out a fencing token), lock_release (DEL or compare-and-delete), lock_extend
// (compare-and-PEXPIRE), and the watchdog that extends in the background (watchdog,
// watchdog_stop).
#include <optional>

#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

std::string new_token(ActorRt& a) {
  static const char* hex = "0123456789abcdef";
  std::string t;
  uint64_t v = a.prng.next_u64();
  for (int i = 0; i < 16; i++) t += hex[(v >> (i * 4)) & 15];
  return t;
}

// tries: attempts so far; started_us: when the first began (for wait_ms); span: the
// acquisition's span in the trace (lock_acquire .. lock_acquired / lock_gave_up).
void acquire(Engine& eng, ActorRt& a, const Step& s, int64_t tries, TimeUs started_us, int64_t span,
             Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  int64_t ttl = eng.step_ms(a, s, "ttl_ms", 0);
  if (ttl <= 0) eng.fail(eng.field(s, "ttl_ms"), "a lock needs a TTL above 0");
  int64_t retry = eng.step_ms(a, s, "retry_ms", 100);
  int64_t wait = s.n("wait_ms") ? eng.step_ms(a, s, "wait_ms", 0) : -1;  // -1: until the run ends
  if (tries == 0) {
    a.vars["token"] = s.t("token") ? eng.step_str(a, s, "token") : new_token(a);
  }
  const std::string& token = a.vars["token"];  // the closure below keeps its own copy
  bool fenced = s.op == "fenced_acquire";
  if (tries == 0)
    span = eng.begin(
        eng.ev(a, "lock_acquire", eng.sid(s), lock + " ttl=" + std::to_string(ttl) + " ms")
            .with(F::lock, lock)
            .with(F::server, a.client->server())
            .with(F::token, token)
            .with(F::ttl_us, ms_to_us(ttl)));
  ActorRt* p = &a;
  // k moves along (into this closure, then into the retry's): a reply comes once, and a
  // copy of a continuation copies every continuation it holds.
  auto on_result = eng.guard1<Result>(a, [&eng, p, &s, tries, started_us, span, k = std::move(k),
                                          lock, token, ttl, retry, wait, fenced](Result r) mutable {
    ActorRt& a2 = *p;
    bool got = false;
    int64_t fence = 0;
    if (r.ok()) {
      if (fenced) {
        got = r.reply.kind == Reply::Kind::Integer && r.reply.integer > 0;
        fence = r.reply.integer;
      } else {
        got = r.reply.kind == Reply::Kind::Status && r.reply.str == "OK";
      }
    }
    if (got) {
      LockRt l;
      l.token = token;
      l.ttl_us = ms_to_us(ttl);
      eng.end_hold(a2, lock, "reacquired");
      std::string text = lock + " token=" + token + " ttl=" + std::to_string(ttl) + " ms";
      TraceEvent e = eng.ev(a2, "lock_acquired", eng.sid(s), "", tries)
                         .with(F::lock, lock)
                         .with(F::server, a2.client->server())
                         .with(F::token, token)
                         .with(F::ttl_us, ms_to_us(ttl));
      if (fenced) {
        a2.vars["fence"] = std::to_string(fence);
        text += " fence=" + std::to_string(fence);
        e.with(F::fence, fence);
      }
      e.text = std::move(text);
      e.ends = span;
      l.hold_span = eng.begin(std::move(e));
      a2.locks[lock] = l;
      eng.save(a2, s, fenced ? std::to_string(fence) : "1");
      return k();
    }
    if (tries == 0) {
      TraceEvent e =
          eng.ev(a2, "lock_busy", eng.sid(s),
                 lock + (r.ok() ? " is held by someone else" : ": " + r.error.text), tries)
              .with(F::lock, lock);
      if (!r.ok())
        e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
      eng.put(std::move(e));
    }
    if (wait >= 0 && eng.scheduler_.now_us() + ms_to_us(retry) > started_us + ms_to_us(wait)) {
      eng.end(eng.ev(a2, "lock_gave_up", eng.sid(s),
                     lock + " after " + std::to_string(tries + 1) + " tries", tries)
                  .with(F::lock, lock)
                  .with(F::tries, tries + 1),
              span);
      eng.save(a2, s, "0");
      return k();
    }
    eng.after(a2, ms_to_us(retry),
              [&eng, p, &s, tries, started_us, span, k = std::move(k)]() mutable {
                acquire(eng, *p, s, tries + 1, started_us, span, std::move(k));
              });
  });
  if (fenced) {
    std::string fence_key = eng.step_str(a, s, "fence_key");
    const client::Script& script =
        eng.scripts_.at(s.nm("script").empty() ? "fenced_acquire" : s.nm("script"));
    a.client->run_script(eng.ctx(a, s), script, {lock, fence_key}, {token, std::to_string(ttl)},
                         std::move(on_result));
  } else {
    // Built in place: an initializer list would make every argument twice.
    client::Argv argv;
    argv.reserve(6);
    argv.emplace_back("SET");
    argv.push_back(lock);
    argv.push_back(token);
    argv.emplace_back("NX");
    argv.emplace_back("PX");
    argv.push_back(std::to_string(ttl));
    a.client->do_command(eng.ctx(a, s), std::move(argv), std::move(on_result));
  }
}

void run_acquire(Engine& eng, ActorRt& a, const Step& s, Next k) {
  acquire(eng, a, s, 0, eng.scheduler_.now_us(), 0, std::move(k));
}

void run_release(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  std::string method = eng.step_choice(a, s, "method");
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) {
    eng.put(
        eng.ev(a, "lock_not_held", eng.sid(s), lock + ": nothing to release").with(F::lock, lock));
    eng.save(a, s, "0");
    return k();
  }
  if (it->second.watchdog) {
    a.process->cancel(it->second.watchdog);
    it->second.watchdog = 0;
  }
  std::string token = it->second.token;
  int64_t span = eng.begin(eng.ev(a, "lock_release", eng.sid(s), lock + " by " + method)
                               .with(F::lock, lock)
                               .with(F::server, a.client->server())
                               .with(F::token, token)
                               .with(F::method, method));
  ActorRt* p = &a;
  auto on_result = eng.guard1<Result>(a, [&eng, p, &s, k, lock, method, span](Result r) {
    // What the caller learns from the reply (the seed's Release: n == 0 is ErrLockLost);
    // what the server really did is in its own key events (the checks read those).
    bool deleted = r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer > 0;
    if (!r.ok()) {
      eng.end(eng.ev(*p, "lock_release_failed", eng.sid(s), lock + ": " + r.error.text)
                  .with(F::lock, lock)
                  .with(F::error, r.error.text)
                  .with(F::error_class, client::error_class(r.error.kind)),
              span);
      eng.end_hold(*p, lock, "released");
    } else if (method == "lua" && !deleted) {
      eng.end(eng.ev(*p, "lock_lost", eng.sid(s),
                     lock + ": the release script returned " + reply_text(r) +
                         ", the lock was no longer ours")
                  .with(F::lock, lock)
                  .with(F::reply, format_short(r.reply)),
              span);
      eng.end_hold(*p, lock, "lost");
    } else {
      eng.end(eng.ev(*p, "lock_released", eng.sid(s),
                     lock + (method == "del" ? " by DEL" : " by compare-and-delete") + " -> " +
                         reply_text(r))
                  .with(F::lock, lock)
                  .with(F::reply, format_short(r.reply)),
              span);
      eng.end_hold(*p, lock, "released");
    }
    eng.save(*p, s, deleted ? "1" : "0");
    k();
  });
  if (method == "del") {
    a.client->do_command(eng.ctx(a, s), {"DEL", lock}, std::move(on_result));
  } else {
    const client::Script& script =
        eng.scripts_.at(s.nm("script").empty() ? "lock_release" : s.nm("script"));
    a.client->run_script(eng.ctx(a, s), script, {lock}, {token}, std::move(on_result));
  }
}

// How an extend ended: the TTL was renewed; the script said the lock is not ours (0); or
// the call failed (an error, a timeout: the lock may or may not still be ours).
enum class Extend : uint8_t { Renewed, NotOurs, Failed };

// compare-and-PEXPIRE.
void extend(Engine& eng, ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
            std::function<void(Extend)> done) {
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) return done(Extend::NotOurs);
  it->second.extending = true;
  const client::Script& script =
      eng.scripts_.at(s.nm("script").empty() ? "lock_extend" : s.nm("script"));
  int64_t span = eng.begin(eng.ev(a, "lock_extend", eng.sid(s), lock)
                               .with(F::lock, lock)
                               .with(F::server, a.client->server())
                               .with(F::token, it->second.token)
                               .with(F::ttl_us, ttl_us));
  ActorRt* p = &a;
  a.client->run_script(
      eng.ctx(a, s), script, {lock}, {it->second.token, std::to_string(ttl_us / 1000)},
      eng.guard1<Result>(a, [&eng, p, &s, lock, done, span, ttl_us](Result r) {
        auto it2 = p->locks.find(lock);
        if (it2 != p->locks.end()) it2->second.extending = false;
        if (r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer == 1) {
          eng.end(eng.ev(*p, "lock_extended", eng.sid(s), lock)
                      .with(F::lock, lock)
                      .with(F::ttl_us, ttl_us),
                  span);
          return done(Extend::Renewed);
        }
        if (!r.ok()) {
          eng.end(eng.ev(*p, "lock_extend_failed", eng.sid(s), lock + ": " + r.error.text)
                      .with(F::lock, lock)
                      .with(F::error, r.error.text)
                      .with(F::error_class, client::error_class(r.error.kind)),
                  span);
          return done(Extend::Failed);
        }
        eng.end(eng.ev(*p, "lock_lost", eng.sid(s),
                       lock + ": extend returned " + reply_text(r) +
                           ", the lock expired and is not ours")
                    .with(F::lock, lock)
                    .with(F::reply, format_short(r.reply)),
                span);
        eng.end_hold(*p, lock, "lost");
        done(Extend::NotOurs);
      }));
}

void run_extend(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  TimeUs ttl = ms_to_us(eng.step_ms(a, s, "ttl_ms", 0));
  ActorRt* p = &a;
  extend(eng, a, s, lock, ttl, [&eng, p, &s, k](Extend outcome) {
    eng.save(*p, s, outcome == Extend::Renewed ? "1" : outcome == Extend::NotOurs ? "0" : "error");
    k();
  });
}

void arm_watchdog(Engine& eng, ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
                  TimeUs every_us) {
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) return;
  ActorRt* p = &a;
  uint64_t g = a.gen;
  it->second.watchdog = a.process->after(every_us, [&eng, p, g, &s, lock, ttl_us, every_us] {
    if (p->gen != g) return;
    auto it2 = p->locks.find(lock);
    if (it2 == p->locks.end()) return;
    it2->second.watchdog = 0;
    extend(eng, *p, s, lock, ttl_us, [&eng, p, &s, lock, ttl_us, every_us](Extend outcome) {
      // The seed's keepAlive: `if err != nil || ok == 0 { l.lost(); return }` — an error
      // aborts the work too, since the lock may be gone. on_error "retry" is the other
      // choice (named so in a variant): keep working and try again at the next tick.
      bool abort_on_error = eng.step_str(*p, s, "on_error", "abort") == "abort";
      if (outcome == Extend::NotOurs) {
        eng.abandon(*p, "lost " + lock + " (found out at the watchdog's extend)");
        return;
      }
      if (outcome == Extend::Failed && abort_on_error) {
        eng.end_hold(*p, lock, "lost");
        eng.abandon(*p, "the watchdog's extend of " + lock + " failed: the lock may be gone");
        return;
      }
      arm_watchdog(eng, *p, s, lock, ttl_us, every_us);
      if (p->after_extend) {
        Next next = std::move(p->after_extend);
        p->after_extend = nullptr;
        next();
      }
    });
  });
}

void run_watchdog(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  int64_t ttl = eng.step_ms(a, s, "ttl_ms", 0);
  int64_t every = s.n("every_ms") ? eng.step_ms(a, s, "every_ms", 0) : ttl / 3;
  if (every <= 0) eng.fail(eng.field(s, "every_ms"), "the watchdog needs a period above 0");
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) {
    eng.put(eng.ev(a, "lock_not_held", eng.sid(s), lock + ": no watchdog for a lock we do not hold")
                .with(F::lock, lock));
    return k();
  }
  std::string on_error = eng.step_choice(a, s, "on_error");
  eng.put(eng.ev(a, "watchdog_start", eng.sid(s), lock + " every " + std::to_string(every) + " ms")
              .with(F::lock, lock)
              .with(F::every_us, ms_to_us(every))
              .with(F::reason, on_error));
  arm_watchdog(eng, a, s, lock, ms_to_us(ttl), ms_to_us(every));
  k();
}

void run_watchdog_stop(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string lock = eng.step_str(a, s, "lock");
  if (auto it = a.locks.find(lock); it != a.locks.end() && it->second.watchdog) {
    a.process->cancel(it->second.watchdog);
    it->second.watchdog = 0;
    eng.put(eng.ev(a, "watchdog_stop", eng.sid(s), lock).with(F::lock, lock));
  }
  k();
}

// The script a step runs: its `script`, else the built-in of that name.
std::string script_or(const Step& s, const char* builtin) {
  std::string named = s.nm("script");
  return named.empty() ? builtin : named;
}
void needs_fenced(const Step& s, StepNeeds& needs) {
  needs.script(script_or(s, "fenced_acquire"));
}
void needs_extend(const Step& s, StepNeeds& needs) {
  needs.script(script_or(s, "lock_extend"));
}
void needs_release(const Step& s, StepNeeds& needs) {
  // The default method is del; a method not known before the run may be lua.
  if (const Template* method = s.t("method")) {
    std::optional<std::string> m =
        needs.text(*method, Where{s.where.pos, s.where.path + ".method"});
    if (!m || *m != "del") needs.script(script_or(s, "lock_release"));
  }
}

constexpr FieldSpec kAcquire[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "ttl_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "retry_ms", .type = FieldType::Duration, .unit = "ms", .absent = "100"},
    {.key = "wait_ms", .type = FieldType::Duration, .unit = "ms", .absent = "until the run ends"},
    {.key = "token", .type = FieldType::Text, .absent = "random"}};
constexpr FieldSpec kFenced[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "fence_key", .type = FieldType::Text, .required = true},
    {.key = "ttl_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "retry_ms", .type = FieldType::Duration, .unit = "ms", .absent = "100"},
    {.key = "wait_ms", .type = FieldType::Duration, .unit = "ms", .absent = "until the run ends"},
    {.key = "script", .type = FieldType::Script, .absent = "`fenced_acquire`"}};
constexpr FieldSpec kRelease[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "method", .type = FieldType::Text, .absent = "`del`", .choices = "del lua"},
    {.key = "script", .type = FieldType::Script, .absent = "`lock_release`"}};
constexpr FieldSpec kExtend[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "ttl_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "script", .type = FieldType::Script, .absent = "`lock_extend`"}};
constexpr FieldSpec kWatchdog[] = {
    {.key = "lock", .type = FieldType::Text, .required = true},
    {.key = "ttl_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "every_ms", .type = FieldType::Duration, .unit = "ms", .absent = "`ttl_ms / 3`"},
    {.key = "on_error", .type = FieldType::Text, .absent = "`abort`", .choices = "abort retry"},
    {.key = "script", .type = FieldType::Script, .absent = "`lock_extend`"}};
constexpr FieldSpec kWatchdogStop[] = {{.key = "lock", .type = FieldType::Text, .required = true}};

}  // namespace

extern const StepKind lock_acquire_step, fenced_acquire_step, lock_release_step, lock_extend_step,
    watchdog_step, watchdog_stop_step;
const StepKind lock_acquire_step{"lock_acquire", kAcquire, run_acquire, nullptr, nullptr, false};
const StepKind fenced_acquire_step{"fenced_acquire", kFenced,      run_acquire,
                                   nullptr,          needs_fenced, false};
const StepKind lock_release_step{"lock_release", kRelease,      run_release,
                                 nullptr,        needs_release, false};
const StepKind lock_extend_step{"lock_extend", kExtend, run_extend, nullptr, needs_extend, false};
const StepKind watchdog_step{"watchdog", kWatchdog, run_watchdog, nullptr, needs_extend, false};
const StepKind watchdog_stop_step{"watchdog_stop", kWatchdogStop, run_watchdog_stop,
                                  nullptr,         nullptr,       false};

}  // namespace redlab::scenario::steps
