// script_keys_declared: a script touches only the keys it was given.
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// Keys a script call touched (the server's record) that it was not given in KEYS.
CheckResult script_keys_declared(const CheckArgs&, const TraceIndex& ix) {
  CheckResult r;
  size_t scripts = 0;
  bool any_server = false;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    any_server = true;
    std::set<int64_t> reported;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.expired || c.cause == 0) continue;
      size_t cmd = ix.span_begin(c.cause);
      if (cmd == kNoEvent) continue;
      const auto* argv = ix.event(cmd).list(F::argv);
      if (!argv || argv->size() < 3) continue;
      std::string name = command_name(ix, c.cause);
      if (name != "EVAL" && name != "EVALSHA" && name != "FCALL") continue;
      auto numkeys = parse_int((*argv)[2]);
      if (!numkeys || *numkeys < 0) continue;
      bool declared = false;
      for (int64_t k = 0; k < *numkeys && 3 + static_cast<size_t>(k) < argv->size(); k++)
        if ((*argv)[3 + static_cast<size_t>(k)] == c.state.key) declared = true;
      if (declared || !reported.insert(c.cause * 1000003 + static_cast<int64_t>(c.event)).second)
        continue;
      const TraceEvent& ce = ix.event(cmd);
      r.violations.push_back(Violation{
          c.time_us,
          c.time_us,
          {ce.actor},
          ce.actor + "'s script (" + name + ") at " + format_time(c.time_us) +
              (c.present ? " wrote " : " deleted ") + c.state.key +
              ", a key it was not given in KEYS (scripts must name every key they touch)"});
    }
    for (size_t s : ix.of_kind("served")) {
      const TraceEvent& e = ix.event(s);
      std::string_view cmd = e.str_or(F::cmd);
      if (e.actor == server && (cmd == "EVAL" || cmd == "EVALSHA")) scripts++;
    }
  }
  if (!any_server) return not_judged_here("the server's own record of the keys scripts touched");
  if (scripts == 0) return not_judged("no script ran");
  finish(r, "every script touched only the keys it was given (" +
                plural(scripts, "script call", "script calls") + ")");
  return r;
}

}  // namespace

extern const CheckKind script_keys_declared_check;
const CheckKind script_keys_declared_check{
    "script_keys_declared",
    {},
    "the server's record: every key a script call wrote or deleted was one of its KEYS (fake "
    "backend only)",
    script_keys_declared};

}  // namespace redlab::scenario::checks
