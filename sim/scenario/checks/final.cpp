// final_value: what a key holds when the run is over. Some facts are a key's final state and
// nothing else: an idempotency record that says "done" for the day, so that a duplicate a
// minute later is recognised, where a bare marker either is gone with its TTL or still
// says "taken" about a worker that died. Judged from the server's own record (the keyspace
// replayed from its key events), never from what a client read last.
#include <optional>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

CheckResult final_value(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key");
  std::string want = arg(args, "value");
  bool any_server = false;
  std::vector<std::string> seen;  // "redis: "started" (no TTL)" per server
  bool found_right = false;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    any_server = true;
    std::optional<KeyState> last;
    TimeUs gone_at = -1;  // when the key last went away, if it did
    bool expired = false;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.state.key != key) continue;
      if (c.present) {
        last = c.state;
      } else {
        last.reset();
        gone_at = c.time_us;
        expired = c.expired;
      }
    }
    if (last && last->value == want) {
      found_right = true;
      continue;
    }
    std::string what;
    if (last) {
      what = key + " ends as \"" + last->value + "\"";
      if (last->expire_at_ms >= 0) {
        int64_t now_ms = ix.server_clock_ms(server, ix.end_us());
        if (now_ms >= 0)
          what += " (" + format_time((last->expire_at_ms - now_ms) * 1000) + " of TTL left)";
      } else {
        what += " (no TTL)";
      }
    } else if (gone_at >= 0) {
      what = key + (expired ? " expired" : " was deleted") + " at " + format_time(gone_at) +
             " and is absent at the end";
    } else {
      what = key + " never existed";
    }
    if (ix.servers().size() > 1) what = server + ": " + what;
    seen.push_back(what);
  }
  if (!any_server) return not_judged_here("the server's own record of " + key);
  if (!found_right)
    r.violations.push_back(
        Violation{ix.end_us(), ix.end_us(), {}, names(seen) + ", not \"" + want + "\""});
  finish(r, key + " ends as \"" + want + "\" (from the server's record)");
  return r;
}

constexpr FieldSpec kFields[] = {{.key = "key", .type = FieldType::Text, .required = true},
                                 {.key = "value", .type = FieldType::Text, .required = true}};

}  // namespace

extern const CheckKind final_value_check;
const CheckKind final_value_check{
    "final_value", kFields,
    "the server's record of `key` (its key events): at the end of the run it holds `value` "
    "(fake backend only)",
    final_value};

}  // namespace redlab::scenario::checks
