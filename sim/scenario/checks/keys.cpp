// key_final: the value a key holds when the run ends, as the server itself says it.
//
// A counter that a retried INCR moved twice, or that a cancelled goroutine never moved, is a
// fact about the server's keyspace at the end, not about any client's belief; so is an
// idempotency record that says "done" for the day, where a bare marker either is gone with its
// TTL or still says "taken" about a worker that died. The engine writes that fact into the
// trace before the checks run (Engine::record_final_keys, below): a `key_final` event per key a
// key_final check names, from the fake server's own keyspace, or on a real server from TYPE,
// GET and PEXPIRETIME sent on redlab's own connection after the actors ended (outside every
// client, so no retry or timeout of the model is in between). The verdict reads only that
// event's typed fields; where the server's own key events are in the trace (the fake), they
// tell how an absent key went away.
#include "sim/fake/util.h"
#include "sim/scenario/checks/common.h"
#include "sim/scenario/engine_impl.h"

namespace redlab::scenario {

namespace checks {
namespace {

// How `key` came to be absent on `server` at the end, from the server's own key events; on a
// server whose events redlab does not see (a real one), only that it is absent.
std::string absent_words(const TraceIndex& ix, const std::string& server, const std::string& key) {
  if (!ix.has_server_events(server)) return key + " does not exist";
  TimeUs gone_at = -1;
  bool expired = false;
  for (const KeyChange& c : ix.key_changes(server)) {
    if (c.state.key != key || c.present) continue;
    gone_at = c.time_us;
    expired = c.expired;
  }
  if (gone_at < 0) return key + " never existed";
  return key + (expired ? " expired" : " was deleted") + " at " + format_time(gone_at) +
         " and is absent at the end";
}

// Its TTL at the end (the event's expire_at_ms, on the server's clock), where it has one.
std::string ttl_words(const TraceIndex& ix, const std::string& server, const TraceEvent& e) {
  int64_t expire_at_ms = e.num_or(F::expire_at_ms, -1);
  if (expire_at_ms < 0) return " (no TTL)";
  int64_t now_ms = ix.server_clock_ms(server, e.time_us);
  if (now_ms < 0) return " (with a TTL)";
  return " (" + format_time((expire_at_ms - now_ms) * 1000) + " of TTL left)";
}

CheckResult key_final(const CheckArgs& args, const TraceIndex& ix) {
  std::string key = arg(args, "key");
  std::string server = arg(args, "server");
  std::string want = arg(args, "equals");
  const TraceEvent* final_event = nullptr;
  for (size_t i : ix.of_kind("key_final")) {
    const TraceEvent& e = ix.event(i);
    if (e.str_or(F::key) != key) continue;
    if (!server.empty() && e.str_or(F::server) != server) continue;
    final_event = &e;
  }
  if (!final_event)
    return not_judged("the run recorded no final value of " + key + " (it ended on an error?)");
  const TraceEvent& e = *final_event;
  // F::host: the server the name led to at the end (after a failover, the promoted replica),
  // whose own key events tell the story.
  const std::string on(e.str_or(F::host, e.str_or(F::server)));
  const std::string where =
      " (" + on +
      (on != e.str_or(F::server) ? ", where " + std::string(e.str_or(F::server)) + " leads" : "") +
      ", at the end of the run)";
  const std::string type(e.str_or(F::type));
  const std::string have(e.str_or(F::value));
  CheckResult r;
  if (type.empty())
    r.violations.push_back(Violation{
        e.time_us, e.time_us, {}, absent_words(ix, on, key) + where + ", expected " + want});
  else if (type != "string")
    r.violations.push_back(
        Violation{e.time_us,
                  e.time_us,
                  {},
                  key + " holds a " + type + where + ", expected the string " + want});
  else if (have != want)
    r.violations.push_back(
        Violation{e.time_us,
                  e.time_us,
                  {},
                  key + " = " + have + ttl_words(ix, on, e) + where + ", expected " + want});
  finish(r, key + " = " + have + where + ", as expected");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "key", .type = FieldType::Text, .required = true},
    {.key = "equals", .type = FieldType::Text, .required = true},
    {.key = "server", .type = FieldType::Text, .absent = "the first server"}};

}  // namespace

extern const CheckKind key_final_check;
const CheckKind key_final_check{
    "key_final", kFields,
    "the server's own keyspace when the run ends (the key_final event: the fake's record, or on "
    "a real server TYPE, GET and PEXPIRETIME on redlab's own connection after the actors "
    "ended): `key` is a string equal to `equals`",
    key_final};

}  // namespace checks

void Engine::record_final_keys() {
  for (const CheckDef& def : sc_.checks) {
    if (def.check != "key_final") continue;
    auto text = [&](const char* k) -> std::string {
      auto it = def.args.find(k);
      return it == def.args.end() ? std::string() : str(it->second, nullptr, def.where);
    };
    std::string key = text("key");
    std::string server = text("server");
    if (server.empty()) server = sc_.servers.front().name;
    // The key as a client reading `server` finds it: after a failover the name leads to the
    // promoted replica, and the old primary (down for good) holds nothing anyone can read.
    const std::string holder = backend_->leads_to(server);
    TraceEvent e{scheduler_.now_us(), "key_final", holder, -1, -1, -1, ""};
    e.with(F::server, server).with(F::key, key);
    if (holder != server) e.with(F::host, holder);
    std::optional<KeyState> state;
    if (auto keyspace = backend_->keyspace(holder)) {
      for (KeyState& k : *keyspace)
        if (k.db == 0 && k.key == key) state = std::move(k);
      e.with(F::source, "fake");
    } else {
      // A real server: its own answer, on redlab's connection (the key prefix is added there).
      Reply type = backend_->admin(holder, {"TYPE", key});
      if (type.kind == Reply::Kind::Status && type.str != "none") {
        KeyState k;
        k.key = key;
        k.type = type.str;
        if (type.str == "string") {
          Reply value = backend_->admin(holder, {"GET", key});
          if (value.kind == Reply::Kind::Bulk) k.value = fake::string_summary(value.str);
        }
        // PEXPIRETIME (Redis 7.0, src/expire.c): unix ms on the server's clock, -1 no TTL.
        Reply at = backend_->admin(holder, {"PEXPIRETIME", key});
        if (at.kind == Reply::Kind::Integer) k.expire_at_ms = at.integer;
        state = std::move(k);
      }
      e.with(F::source, "server");
    }
    e.text = (state ? key + " = " + state->value : key + " does not exist") +
             (holder != server ? " (on " + holder + ", where " + server + " leads)" : "");
    if (state)
      e.with(F::type, state->type)
          .with(F::value, state->value)
          .with(F::expire_at_ms, state->expire_at_ms);
    put(std::move(e));
  }
}

}  // namespace redlab::scenario
