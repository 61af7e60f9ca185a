// See checks.h. Each check reads the TraceIndex only; the helpers at the top turn the trace's
// events into the few things the lock checks reason about (beliefs, the server's record of a
// lock key, releases), each from one kind of event, so that every check can say what it
// judged from.
#include "sim/scenario/checks.h"

#include <algorithm>
#include <set>

#include "sim/core/assert.h"

namespace redlab::scenario {

namespace {

std::string arg(const CheckArgs& a, const std::string& k, const std::string& def = {}) {
  auto it = a.text.find(k);
  return it == a.text.end() ? def : it->second;
}

// "a, b and c"
std::string names(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); i++) {
    if (i > 0) out += i + 1 == v.size() ? " and " : ", ";
    out += v[i];
  }
  return out;
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void finish(CheckResult& r, const std::string& ok_summary, const std::string& more = {}) {
  std::sort(r.violations.begin(), r.violations.end(),
            [](const Violation& x, const Violation& y) { return x.from_us < y.from_us; });
  r.ok = r.violations.empty();
  if (r.ok) {
    r.summary = ok_summary;
  } else {
    r.summary = r.violations[0].text;
    if (r.violations.size() > 1)
      r.summary += " (+" + std::to_string(r.violations.size() - 1) + " more)";
    if (!more.empty()) r.summary += "; " + more;
  }
}

CheckResult not_judged(const std::string& why) {
  CheckResult r;
  r.ok = true;
  r.judged = false;
  r.summary = "not judged: " + why;
  return r;
}

// The run's backend has no record to judge this check from (a real server's own key events
// do not reach the trace): not judged *here*, which the expectation leaves out, unlike a run
// in which nothing happened to judge.
CheckResult not_judged_here(const std::string& what) {
  CheckResult r = not_judged("it needs " + what + ", which only the fake backend records");
  r.backend_lacks = true;
  return r;
}

// The actor whose client command began span `cause` ("" for the server itself / unknown).
std::string actor_of_cause(const TraceIndex& ix, int64_t cause) {
  size_t i = ix.span_begin(cause);
  return i == kNoEvent ? std::string() : ix.event(i).actor;
}

TimeUs end_time(const TraceIndex& ix, size_t begin_event) {
  size_t e = ix.end_of(begin_event);
  return e == kNoEvent ? ix.end_us() : ix.event(e).time_us;
}

// ---- What actors believed: a hold is lock_acquired .. hold_end (the span), or the start of
// the holder's release if that comes first: an actor that has begun to release is done with
// what the lock protects, so B acquiring while A waits for its DEL's reply is no overlap.
// (Without this, B's SET NX served just after A's DEL can reach B before the DEL's reply
// reaches A: a jitter race, not two workers in the critical section.) ----
struct Hold {
  std::string lock, actor, token, server;
  TimeUs from_us = 0, to_us = 0;
  size_t event = 0;
};

std::vector<Hold> holds(const TraceIndex& ix, const std::string& only) {
  std::vector<Hold> out;
  for (size_t i : ix.of_kind("lock_acquired")) {
    const TraceEvent& e = ix.event(i);
    Hold h;
    h.lock = std::string(e.str_or(F::lock));
    if (!only.empty() && h.lock != only) continue;
    h.actor = e.actor;
    h.token = std::string(e.str_or(F::token));
    h.server = std::string(e.str_or(F::server));
    h.from_us = e.time_us;
    size_t end = ix.end_of(i);
    h.to_us = end == kNoEvent ? ix.end_us() : ix.event(end).time_us;
    for (size_t k : ix.of_kind("lock_release")) {
      if (k <= i) continue;
      if (end != kNoEvent && k >= end) break;
      const TraceEvent& rel = ix.event(k);
      if (rel.actor == h.actor && rel.str_or(F::lock) == h.lock) {
        h.to_us = std::min(h.to_us, rel.time_us);
        break;
      }
    }
    h.event = i;
    out.push_back(std::move(h));
  }
  return out;
}

// The servers a lock lives on (from the actors' lock events), in first-seen order.
std::vector<std::string> lock_servers(const TraceIndex& ix, const std::string& lock) {
  std::vector<std::string> out;
  for (const char* kind : {"lock_acquire", "lock_release"})
    for (size_t i : ix.of_kind(kind)) {
      const TraceEvent& e = ix.event(i);
      if (!lock.empty() && e.str_or(F::lock) != lock) continue;
      std::string server(e.str_or(F::server));
      if (!server.empty() && std::find(out.begin(), out.end(), server) == out.end())
        out.push_back(server);
    }
  return out;
}

bool server_events_for(const TraceIndex& ix, const std::vector<std::string>& servers) {
  if (servers.empty()) return false;
  for (const std::string& s : servers)
    if (!ix.has_server_events(s)) return false;
  return true;
}

// The holder (as the server recorded it) of the token a key held: the actor whose command
// wrote that value into the key last before `before_event`, and when.
struct Writer {
  std::string actor;
  TimeUs at_us = 0;
  bool found = false;
};
Writer writer_of(const TraceIndex& ix, const std::string& server, const std::string& key,
                 const std::string& value, size_t before_event) {
  Writer w;
  for (const KeyChange& c : ix.key_changes(server)) {
    if (c.event >= before_event) break;
    if (!c.present || c.state.key != key || c.state.value != value) continue;
    std::string actor = actor_of_cause(ix, c.cause);
    if (actor.empty()) continue;
    // The first write of this value in a row is the acquisition; later ones (PEXPIRE by a
    // watchdog) keep the same writer.
    if (!w.found || w.actor != actor) w = Writer{actor, c.time_us, true};
  }
  return w;
}

// The token an actor believed it held for `lock` at trace position `event` (its latest
// lock_acquired before it), "" if none.
std::string belief_token(const TraceIndex& ix, const std::string& actor, const std::string& lock,
                         size_t event) {
  std::string token;
  for (size_t i : ix.of_kind("lock_acquired")) {
    if (i >= event) break;
    const TraceEvent& e = ix.event(i);
    if (e.actor == actor && e.str_or(F::lock) == lock) token = std::string(e.str_or(F::token));
  }
  return token;
}

// ---------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------

CheckResult mutual_exclusion(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::vector<Hold> hs = holds(ix, arg(args, "lock"));
  for (size_t i = 0; i < hs.size(); i++)
    for (size_t j = i + 1; j < hs.size(); j++) {
      const Hold& a = hs[i];
      const Hold& b = hs[j];
      if (b.lock != a.lock || b.actor == a.actor) continue;
      TimeUs from = std::max(a.from_us, b.from_us), to = std::min(a.to_us, b.to_us);
      if (to <= from) continue;
      r.violations.push_back(Violation{from,
                                       to,
                                       {a.actor, b.actor},
                                       a.actor + " and " + b.actor + " held " + a.lock +
                                           " together from " + format_time(from) + " to " +
                                           format_time(to)});
    }
  if (hs.empty()) return not_judged("nobody acquired the lock");
  finish(r, "never two holders at once (" + plural(hs.size(), "hold", "holds") + ")");
  return r;
}

// A deletion of a lock key by a command (never an expiry), with who did it and what it held.
struct Deletion {
  std::string actor, server, token;
  TimeUs at_us = 0;
  size_t event = 0;
  std::string how;  // "DEL", "a script", ...
};

std::string command_name(const TraceIndex& ix, int64_t cause) {
  size_t i = ix.span_begin(cause);
  if (i == kNoEvent) return "";
  const auto* argv = ix.event(i).list(F::argv);
  if (!argv || argv->empty()) return "";
  std::string name = (*argv)[0];
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::string how_of(const std::string& cmd) {
  if (cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO")
    return "release script";
  if (cmd == "EXEC") return "transaction";
  return cmd.empty() ? "command" : cmd;
}

CheckResult no_foreign_unlock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (server_events_for(ix, servers)) {
    // The server's record: every key_del of the lock key names the command that did it and
    // the token the key held.
    size_t deletions = 0;
    for (const std::string& server : servers)
      for (const KeyChange& c : ix.key_changes(server)) {
        if (c.present || c.expired || (!lock.empty() && c.state.key != lock)) continue;
        if (lock.empty() && c.state.key.rfind("lock", 0) != 0) continue;
        std::string actor = actor_of_cause(ix, c.cause);
        if (actor.empty()) continue;
        deletions++;
        std::string own = belief_token(ix, actor, c.state.key, c.event);
        if (own == c.state.value) continue;
        Writer owner = writer_of(ix, server, c.state.key, c.state.value, c.event);
        std::string how = how_of(command_name(ix, c.cause));
        std::string text =
            actor + "'s " + how + " at " + format_time(c.time_us) + " removed " + c.state.key;
        std::vector<std::string> who{actor};
        if (owner.found) {
          text += ", which " + owner.actor + " had held since " + format_time(owner.at_us);
          who.push_back(owner.actor);
        } else {
          text += ", which held a token " + actor + " never had";
        }
        r.violations.push_back(Violation{c.time_us, c.time_us, who, text});
      }
    if (deletions == 0 && ix.of_kind("lock_release").empty())
      return not_judged("nobody released the lock");
    finish(r, "every deletion of the lock removed its deleter's own token (" +
                  plural(deletions, "deletion", "deletions") + ", from the server's record)");
    return r;
  }
  // A real server: only the clients' view. A release that reports a deletion (DEL's reply,
  // the script's reply) counts as one, by the last acquirer's name.
  size_t releases = 0;
  for (size_t i : ix.of_kind("lock_released")) {
    const TraceEvent& e = ix.event(i);
    std::string l(e.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    releases++;
    std::string reply(e.str_or(F::reply));
    if (reply == "(integer) 0" || reply == "0") continue;
    std::string owner;
    TimeUs since = 0;
    for (size_t j : ix.of_kind("lock_acquired")) {
      if (j >= i) break;
      const TraceEvent& a = ix.event(j);
      if (a.str_or(F::lock) == l) {
        owner = a.actor;
        since = a.time_us;
      }
    }
    if (owner.empty() || owner == e.actor) continue;
    r.violations.push_back(Violation{e.time_us,
                                     e.time_us,
                                     {e.actor, owner},
                                     e.actor + "'s release at " + format_time(e.time_us) +
                                         " removed " + l + ", which " + owner + " had held since " +
                                         format_time(since) + " (as seen by clients)"});
  }
  if (releases == 0) return not_judged("nobody released the lock");
  finish(r, "every release removed only the releaser's own lock (" +
                plural(releases, "release", "releases") + ", as seen by clients)");
  return r;
}

// A release step: lock_release .. its end, with the commands it sent.
CheckResult release_removes_own_lock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (!server_events_for(ix, servers))
    return not_judged_here("the server's own record of the lock key");
  size_t judged = 0;
  for (size_t i : ix.of_kind("lock_release")) {
    const TraceEvent& rel = ix.event(i);
    std::string l(rel.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    std::string token(rel.str_or(F::token));
    std::string server(rel.str_or(F::server));
    size_t end = ix.end_of(i);
    size_t until = end == kNoEvent ? ix.size() : end;
    // The release's commands: the actor's command events of this step inside the span.
    std::set<int64_t> causes;
    for (size_t c : ix.of_kind("command")) {
      if (c <= i) continue;
      if (c >= until) break;
      const TraceEvent& ce = ix.event(c);
      if (ce.actor == rel.actor && ce.step == rel.step) causes.insert(ce.span);
    }
    // What the server did for them: when it first acted on one (its served event, or a key
    // event the command caused, whichever the trace has first), and any deletion of the key.
    size_t first_served = kNoEvent;
    for (const char* kind : {"served", "busy_reply"})  // a BUSY refusal reached it too
      for (size_t s : ix.of_kind(kind)) {
        if (s <= i) continue;
        if (s >= until || s >= first_served) break;
        if (causes.count(ix.event(s).num_or(F::cause, 0))) {
          first_served = s;
          break;
        }
      }
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.event <= i || c.event >= first_served || c.event >= until) continue;
      if (causes.count(c.cause)) {
        first_served = c.event;
        break;
      }
    }
    std::string who = rel.actor;
    if (end == kNoEvent) {
      judged++;
      r.violations.push_back(
          Violation{rel.time_us,
                    ix.end_us(),
                    {who},
                    who + "'s release of " + l + " at " + format_time(rel.time_us) +
                        " never finished (still waiting at the end of the run: a script that "
                        "does not end?)"});
      continue;
    }
    if (first_served == kNoEvent) continue;  // it never reached the server: not its fault
    judged++;
    // Left in place: the key held the releaser's token when its release first reached the
    // server, and still holds it when the release ends. A key whose TTL ran out meanwhile
    // (an EVALSHA refused with NOSCRIPT, then the EVAL finding the key expired) was not left
    // by the release: the server removed it.
    std::optional<KeyState> before = ix.key_before(server, 0, l, first_served);
    std::optional<KeyState> after = ix.key_before(server, 0, l, until);
    bool held_own = before && before->value == token && after && after->value == token;
    bool deleted = false, deleted_own = false;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.event < first_served) continue;
      if (c.event >= until) break;
      if (c.state.key == l && !c.present && !c.expired && causes.count(c.cause)) {
        deleted = true;
        deleted_own = deleted_own || c.state.value == token;
      }
    }
    const TraceEvent& fin = ix.event(end);
    std::string reply(fin.str_or(F::reply));
    bool said_deleted = fin.kind == "lock_released" && reply != "(integer) 0";
    std::string at = " at " + format_time(fin.time_us);
    if (held_own && !deleted_own) {
      std::string why = fin.kind == "lock_release_failed"
                            ? "failed (" + std::string(fin.str_or(F::error)) + ")"
                            : "returned " + reply;
      r.violations.push_back(Violation{fin.time_us,
                                       fin.time_us,
                                       {who},
                                       who + "'s release" + at + " " + why + " and left " + l +
                                           " in place, still holding " + who + "'s own token"});
    } else if (deleted != said_deleted && fin.kind != "lock_release_failed") {
      r.violations.push_back(Violation{
          fin.time_us,
          fin.time_us,
          {who},
          who + "'s release" + at + (deleted ? " removed " : " did not remove ") + l +
              " but returned " + reply + ": the caller believes the opposite of what happened"});
    }
  }
  if (judged == 0) return not_judged("no release reached the server");
  finish(r, "every release removed the releaser's own lock and said so (" +
                plural(judged, "release", "releases") + ", from the server's record)");
  return r;
}

// Every acquisition an actor believed in took the lock on the server: among the key events
// its acquire commands caused is the lock key set to its token.
CheckResult acquire_took_lock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (!server_events_for(ix, servers))
    return not_judged_here("the server's own record of the lock key");
  size_t acquisitions = 0;
  for (size_t i : ix.of_kind("lock_acquired")) {
    const TraceEvent& got = ix.event(i);
    std::string l(got.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    acquisitions++;
    std::string token(got.str_or(F::token));
    std::string server(got.str_or(F::server));
    size_t begin = ix.begin_of(i);  // the lock_acquire that this acquisition ended
    if (begin == kNoEvent) continue;
    std::set<int64_t> causes;
    for (size_t c : ix.of_kind("command")) {
      if (c <= begin) continue;
      if (c >= i) break;
      const TraceEvent& ce = ix.event(c);
      if (ce.actor == got.actor && ce.step == got.step) causes.insert(ce.span);
    }
    bool set_own = false;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.event <= begin) continue;
      if (c.event >= i) break;
      if (c.present && c.state.key == l && c.state.value == token && causes.count(c.cause))
        set_own = true;
    }
    if (set_own) continue;
    std::optional<KeyState> held = ix.key_before(server, 0, l, i);
    std::string what =
        !held ? "the key did not exist"
              : "it held " + (writer_of(ix, server, l, held->value, i).found
                                  ? writer_of(ix, server, l, held->value, i).actor + "'s token"
                                  : "\"" + held->value + "\"");
    r.violations.push_back(
        Violation{got.time_us,
                  got.time_us,
                  {got.actor},
                  got.actor + " believed it acquired " + l + " at " + format_time(got.time_us) +
                      ", but the server never set the key to its token (" + what + ")"});
  }
  if (acquisitions == 0) return not_judged("nobody acquired the lock");
  finish(r, "every acquisition set the lock key to its holder's token (" +
                plural(acquisitions, "acquisition", "acquisitions") +
                ", from the server's record)");
  return r;
}

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

// Resource writes, from the resource's own events (the engine is the resource).
struct Write {
  std::string resource, actor, value;
  int64_t fence = 0, highest = 0;
  bool accepted = false;
  TimeUs at_us = 0;
  size_t event = 0;
};
std::vector<Write> writes(const TraceIndex& ix, const std::string& only) {
  std::vector<Write> out;
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.kind != "resource_accept" && e.kind != "resource_reject") continue;
    Write w;
    w.resource = std::string(e.str_or(F::resource));
    if (!only.empty() && w.resource != only) continue;
    w.actor = e.actor;
    w.value = std::string(e.str_or(F::value));
    w.fence = e.num_or(F::fence, 0);
    w.highest = e.num_or(F::highest, 0);
    w.accepted = e.kind == "resource_accept";
    w.at_us = e.time_us;
    w.event = i;
    out.push_back(std::move(w));
  }
  return out;
}

// A write is stale when the resource had already accepted a higher fence, or the same fence
// from another writer (two holders with one fence: one of them is stale, and the resource
// cannot tell which). From the resource's own decisions (the engine is the resource).
CheckResult no_stale_write(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::vector<Write> ws = writes(ix, arg(args, "resource"));
  struct Seen {
    int64_t fence = 0;
    std::string actor;
    bool any = false;
  };
  std::map<std::string, Seen> highest;  // resource -> highest accepted fence and its writer
  size_t accepted = 0, rejected = 0;
  for (const Write& w : ws) {
    (w.accepted ? accepted : rejected)++;
    if (!w.accepted) continue;
    Seen& h = highest[w.resource];
    std::string why;
    if (h.any && w.fence < h.fence)
      why = "after it had seen fence " + std::to_string(h.fence);
    else if (h.any && w.fence == h.fence && w.actor != h.actor)
      why = "with the same fence as " + h.actor + "'s earlier write: two holders had one fence";
    if (!why.empty())
      r.violations.push_back(Violation{w.at_us,
                                       w.at_us,
                                       {w.actor},
                                       w.resource + " accepted " + w.actor +
                                           "'s write with fence " + std::to_string(w.fence) +
                                           " at " + format_time(w.at_us) + " " + why});
    if (!h.any || w.fence > h.fence) h = Seen{w.fence, w.actor, true};
  }
  if (ws.empty()) return not_judged("nothing was written to the resource");
  finish(r, "no write with an old fence was accepted (" + std::to_string(accepted) + " accepted, " +
                std::to_string(rejected) + " rejected)");
  return r;
}

// Fences handed out: the values the fence counter took on the server (its own record), or
// on a real server what the fenced acquisitions returned.
CheckResult no_forged_fence(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string fence_key = arg(args, "fence_key");
  std::set<int64_t> issued;
  bool from_server = false;
  if (!fence_key.empty())
    for (const std::string& server : ix.servers()) {
      if (!ix.has_server_events(server)) continue;
      from_server = true;
      bool setup_seen = false;
      for (const KeyChange& c : ix.key_changes(server)) {
        if (!c.present || c.state.key != fence_key) continue;
        // The counter's starting value (a setup command) is not a fence anyone got.
        if (c.cause == 0 && !setup_seen) {
          setup_seen = true;
          continue;
        }
        if (auto v = parse_int(c.state.value)) issued.insert(*v);
      }
    }
  if (!from_server)
    for (size_t i : ix.of_kind("lock_acquired"))
      if (const int64_t* f = ix.event(i).num(F::fence)) issued.insert(*f);
  std::vector<Write> ws = writes(ix, arg(args, "resource"));
  for (size_t i = 0; i < ws.size(); i++) {
    const Write& w = ws[i];
    if (!w.accepted || issued.count(w.fence)) continue;
    // What it cost: genuine writes rejected after the forged fence was accepted.
    std::vector<std::string> victims;
    size_t lost = 0;
    for (size_t j = i + 1; j < ws.size(); j++) {
      const Write& v = ws[j];
      if (v.resource == w.resource && !v.accepted && issued.count(v.fence)) {
        lost++;
        if (std::find(victims.begin(), victims.end(), v.actor) == victims.end())
          victims.push_back(v.actor);
      }
    }
    std::string text = w.resource + " accepted " + w.actor + "'s fence " + std::to_string(w.fence) +
                       " at " + format_time(w.at_us) + ", a fence no lock ever handed out";
    if (lost > 0)
      text += "; it then rejected " + plural(lost, "genuine write", "genuine writes") + " by " +
              names(victims);
    std::vector<std::string> who{w.actor};
    who.insert(who.end(), victims.begin(), victims.end());
    r.violations.push_back(Violation{w.at_us, w.at_us, who, text});
  }
  if (ws.empty()) return not_judged("nothing was written to the resource");
  finish(r, "every accepted fence came from the lock (" + std::to_string(issued.size()) +
                " handed out" + (from_server ? ", from the server's counter" : "") + ")");
  return r;
}

// "msg-20, msg-21, ..., msg-34" for long lists.
std::string message_list(const std::vector<std::string>& all) {
  // A message's first word names it (padding and fields follow).
  std::vector<std::string> v;
  for (const auto& m : all) v.push_back(m.substr(0, m.find(' ')).substr(0, 40));
  if (v.size() <= 6) return names(v);
  return v[0] + ", " + v[1] + ", " + v[2] + ", ..., " + v[v.size() - 2] + ", " + v.back();
}

// Every message published while a subscriber meant to listen reached it: listen .. listen_end
// (what the subscriber intended), publish .. published (what was sent, and PUBLISH's count),
// pubsub_message / stream_message (what it received). Streams: any consumer of the group.
CheckResult no_lost_messages(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string only = arg(args, "channel");
  // A message published in the last moments of a listening window may still be in flight
  // when the subscriber stops: those do not count.
  constexpr TimeUs kGraceUs = 100000;
  struct Publish {
    std::string channel, message;
    bool stream = false, failed = false;
    int64_t receivers = -1;
    TimeUs at_us = 0;
  };
  std::vector<Publish> pubs;
  for (size_t i : ix.of_kind("publish")) {
    const TraceEvent& e = ix.event(i);
    Publish p{std::string(e.str_or(F::channel)),
              std::string(e.str_or(F::message)),
              e.str_or(F::method) == "stream",
              false,
              -1,
              e.time_us};
    size_t end = ix.end_of(i);
    if (end != kNoEvent) {
      const TraceEvent& d = ix.event(end);
      p.receivers = d.num_or(F::receivers, -1);
      p.failed = d.has(F::error);
    }
    pubs.push_back(std::move(p));
  }
  struct Delivery {
    std::string channel, message, actor, group;
  };
  std::vector<Delivery> got;
  for (size_t i : ix.of_kind("pubsub_message")) {
    const TraceEvent& e = ix.event(i);
    got.push_back(
        {std::string(e.str_or(F::channel)), std::string(e.str_or(F::message)), e.actor, ""});
  }
  for (size_t i : ix.of_kind("stream_message")) {
    const TraceEvent& e = ix.event(i);
    got.push_back({std::string(e.str_or(F::channel)), std::string(e.str_or(F::message)), e.actor,
                   std::string(e.str_or(F::group))});
  }
  size_t expected_total = 0, delivered_total = 0, listens = 0;
  std::set<std::pair<std::string, std::string>> groups_done;
  for (size_t i : ix.of_kind("listen")) {
    const TraceEvent& l = ix.event(i);
    std::string channel(l.str_or(F::channel));
    if (!only.empty() && channel != only) continue;
    bool stream = l.str_or(F::method) == "stream";
    std::string group(l.str_or(F::group));
    if (stream && !groups_done.insert({channel, group}).second) continue;
    listens++;
    TimeUs from = l.time_us;
    TimeUs to = end_time(ix, i);
    std::vector<std::string> lost;
    size_t zero_receivers = 0;
    TimeUs first = 0, last = 0;
    for (const Publish& p : pubs) {
      if (p.channel != channel || p.stream != stream) continue;
      if (p.stream && p.failed) continue;  // the XADD failed: nothing was sent
      if (!p.stream && (p.at_us < from || p.at_us + kGraceUs > to)) continue;
      expected_total++;
      bool received = false;
      for (const Delivery& d : got)
        if (d.channel == p.channel && d.message == p.message &&
            (stream ? d.group == group : d.actor == l.actor)) {
          received = true;
          break;
        }
      if (received) {
        delivered_total++;
        continue;
      }
      if (lost.empty()) first = p.at_us;
      last = p.at_us;
      lost.push_back(p.message);
      if (p.receivers == 0) zero_receivers++;
    }
    if (lost.empty()) continue;
    std::string who = stream && !group.empty() ? "group " + group : l.actor;
    std::string text = who + " missed " + plural(lost.size(), "message", "messages") + " on " +
                       channel + ", published from " + format_time(first) + " to " +
                       format_time(last) + ": " + message_list(lost);
    if (zero_receivers > 0)
      text += " (PUBLISH returned 0 for " + std::to_string(zero_receivers) +
              " of them: nobody was subscribed)";
    r.violations.push_back(Violation{first, last, {l.actor}, text});
  }
  if (listens == 0) return not_judged("nobody listened");
  finish(r, "every message arrived (" + std::to_string(delivered_total) + " of " +
                std::to_string(expected_total) + ")");
  return r;
}

CheckResult count_events(const TraceIndex& ix, const std::string& kind, const std::string& what,
                         const std::string& ok_text) {
  CheckResult r;
  // One violation per actor, spanning its first to its last such event: its text counts them
  // all, so it is over (and may be told whole) only at the last.
  struct Seen {
    size_t n = 0;
    TimeUs first = 0, last = 0;
  };
  std::map<std::string, Seen> by_actor;
  std::vector<std::string> order;
  for (size_t i : ix.of_kind(kind)) {
    const TraceEvent& e = ix.event(i);
    auto [it, fresh] = by_actor.try_emplace(e.actor, Seen{0, e.time_us, e.time_us});
    if (fresh) order.push_back(e.actor);
    it->second.n++;
    it->second.last = e.time_us;
  }
  for (const auto& actor : order) {
    auto [n, first, last] = by_actor[actor];
    r.violations.push_back(Violation{first,
                                     last,
                                     {actor},
                                     actor + " hit " + std::to_string(n) + " " + what +
                                         (n > 1 ? "s" : "") + " (the first at " +
                                         format_time(first) + ")"});
  }
  finish(r, ok_text);
  return r;
}

// Pool timeouts, and waits for a connection still going at the end of the run (a
// PoolTimeout longer than the run would otherwise hide that the call never got one).
CheckResult no_pool_timeouts(const CheckArgs&, const TraceIndex& ix) {
  CheckResult r = count_events(ix, "pool_timeout", "pool timeout",
                               "no call waited in vain for a pooled connection");
  std::map<std::string, std::pair<size_t, TimeUs>> waiting;  // actor -> (count, longest from)
  for (size_t i : ix.of_kind("pool_wait")) {
    if (ix.end_of(i) != kNoEvent) continue;
    const TraceEvent& e = ix.event(i);
    auto [it, fresh] = waiting.try_emplace(e.actor, 0, e.time_us);
    it->second.first++;
    (void)fresh;
  }
  for (const auto& [actor, w] : waiting)
    r.violations.push_back(Violation{w.second,
                                     ix.end_us(),
                                     {actor},
                                     actor +
                                         " was still waiting for a pooled connection at the "
                                         "end of the run (since " +
                                         format_time(w.second) + ")"});
  finish(r, "no call waited in vain for a pooled connection");
  return r;
}

CheckResult no_read_timeouts(const CheckArgs&, const TraceIndex& ix) {
  return count_events(ix, "read_timeout", "read timeout",
                      "every reply came within its read timeout");
}

// Sales, from `record` events: a step records only when the server confirmed its write (an
// EXEC that applied, a script that returned success).
CheckResult no_oversell(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t stock = args.number.at("stock");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  std::vector<std::string> over;
  TimeUs first_over = 0;
  for (size_t i : ix.of_kind("record")) {
    const TraceEvent& e = ix.event(i);
    if (e.str_or(F::record) != name) continue;
    sold++;
    if (sold == stock + 1) first_over = e.time_us;
    if (sold > stock && std::find(over.begin(), over.end(), e.actor) == over.end())
      over.push_back(e.actor);
  }
  if (sold > stock)
    r.violations.push_back(Violation{
        first_over, first_over, over,
        std::to_string(sold) + " sold from a stock of " + std::to_string(stock) + ": " +
            std::to_string(sold - stock) + " oversold, the first at " + format_time(first_over)});
  finish(r, std::to_string(sold) + " sold from a stock of " + std::to_string(stock));
  return r;
}

// The stock key as the server recorded it: its first value (the setup's), its last, and
// every value in between; what was taken must be what was recorded as sold, and it never
// goes below 0.
CheckResult stock_matches_sales(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) sold++;
  bool any_server = false;
  int64_t under_way = 0;  // all servers together, for the summary
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    std::optional<int64_t> first, last;
    TimeUs negative_at = -1;
    int64_t lowest = 0;
    // Taken by a command whose step was still under way when the run ended (its actor
    // neither recorded a sale nor ended after it: the EXEC's reply, or the UNWATCH after it,
    // was still on its way): the server applied it, but the buyer could not record it yet.
    auto still_under_way = [&](int64_t cause) {
      size_t command = ix.span_begin(cause);
      if (command == kNoEvent) return false;
      const std::string& actor = ix.event(command).actor;
      for (const char* kind : {"record", "actor_end"})
        for (size_t i : ix.of_kind(kind))
          if (i > command && ix.event(i).actor == actor) return false;
      return true;
    };
    int64_t in_flight = 0;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.state.key != key) continue;
      any_server = true;
      std::optional<int64_t> v = c.present ? parse_int(c.state.value) : std::optional<int64_t>(0);
      if (!v) continue;
      if (last && *v < *last && still_under_way(c.cause)) in_flight += *last - *v;
      if (!first) first = *v;
      last = *v;
      if (*v < 0 && negative_at < 0) {
        negative_at = c.time_us;
        lowest = *v;
      }
      lowest = std::min(lowest, *v);
    }
    if (!first) continue;
    int64_t taken = *first - *last;
    under_way += in_flight;
    if (negative_at >= 0)
      r.violations.push_back(Violation{negative_at,
                                       negative_at,
                                       {},
                                       key + " went below 0 at " + format_time(negative_at) +
                                           " (down to " + std::to_string(lowest) +
                                           "): more was taken than there was"});
    else if (taken - in_flight != sold)
      r.violations.push_back(
          Violation{ix.end_us(),
                    ix.end_us(),
                    {},
                    key + " went from " + std::to_string(*first) + " to " + std::to_string(*last) +
                        " (" + std::to_string(taken) + " taken" +
                        (in_flight ? ", " + std::to_string(in_flight) +
                                         " of them by purchases still "
                                         "under way at the end"
                                   : std::string()) +
                        "), but " + std::to_string(sold) + " were recorded as sold"});
  }
  if (!any_server) return not_judged_here("the server's own record of " + key);
  finish(r, std::to_string(sold) + " sold and " + key + " went down by exactly that" +
                (under_way ? " (and " + std::to_string(under_way) +
                                 " more for purchases still under way at the end)"
                           : std::string()) +
                ", never below 0");
  return r;
}

// Demand above the stock sells all of it: `record` events (default "sale") reach `stock`.
CheckResult all_sold(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t stock = args.number.at("stock");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) sold++;
  if (sold < stock)
    r.violations.push_back(Violation{ix.end_us(),
                                     ix.end_us(),
                                     {},
                                     "only " + std::to_string(sold) + " of " +
                                         std::to_string(stock) +
                                         " items were sold: the rest stayed in stock"});
  finish(r, "all " + std::to_string(stock) + " items were sold (" + std::to_string(sold) + ")");
  return r;
}

// WATCH transactions: tx_attempt .. its outcome, per actor and step; a run of attempts ends
// with a commit, a skip, an error or tx_gave_up.
CheckResult retries_bounded(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t bound = args.number.at("max_attempts");
  struct Tx {
    std::string actor;
    int64_t step = -1, attempts = 0;
    // The violation is the attempts past the bound: from the first of them to the last (a
    // transaction that starts at 0 is not violated at 0).
    TimeUs over_from_us = -1, last_us = 0;
  };
  std::vector<Tx> txs;
  std::map<std::pair<std::string, int64_t>, size_t> open;  // (actor, step) -> txs index
  int64_t total = 0, aborted = 0, gave_up = 0;
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.kind == "tx_attempt") {
      int64_t n = e.num_or(F::tries, 1);
      auto key = std::make_pair(e.actor, e.step);
      auto it = open.find(key);
      if (n == 1 || it == open.end()) {
        open[key] = txs.size();
        txs.push_back(Tx{e.actor, e.step, 0, -1, e.time_us});
        it = open.find(key);
      }
      Tx& tx = txs[it->second];
      tx.attempts = n;
      tx.last_us = e.time_us;
      if (n > bound && tx.over_from_us < 0) tx.over_from_us = e.time_us;
      total++;
    } else if (e.kind == "tx_aborted") {
      aborted++;
    } else if (e.kind == "tx_gave_up") {
      gave_up++;
    }
  }
  int64_t most = 0;
  std::vector<const Tx*> over;
  for (const Tx& t : txs) {
    most = std::max(most, t.attempts);
    if (t.attempts > bound) over.push_back(&t);
  }
  // The worst first; ties in actor order (stable).
  std::stable_sort(over.begin(), over.end(),
                   [](const Tx* x, const Tx* y) { return x->attempts > y->attempts; });
  for (const Tx* t : over)
    r.violations.push_back(Violation{t->over_from_us,
                                     t->last_us,
                                     {t->actor},
                                     t->actor + " took " + std::to_string(t->attempts) +
                                         " attempts (bound " + std::to_string(bound) + ")"});
  if (txs.empty()) return not_judged("no WATCH transactions, so nothing to retry");
  std::string totals = std::to_string(total) + " attempts by " +
                       plural(txs.size(), "transaction", "transactions") + ", " +
                       std::to_string(aborted) + " EXECs aborted";
  if (gave_up > 0) totals += ", " + std::to_string(gave_up) + " gave up";
  // finish() sorts by time; the worst-first order above is kept for equal times only.
  r.ok = r.violations.empty();
  if (r.ok) {
    r.summary = "at most " + std::to_string(most) + " attempts each (bound " +
                std::to_string(bound) + "); " + totals;
  } else {
    r.summary = r.violations[0].text;
    if (r.violations.size() > 1)
      r.summary += " (+" + std::to_string(r.violations.size() - 1) + " more)";
    r.summary += "; " + totals;
  }
  return r;
}

using CF = CheckField;
using T = CheckField::Type;

}  // namespace

const std::vector<CheckSpec>& check_registry() {
  static const std::vector<CheckSpec> registry = {
      {"mutual_exclusion",
       {{"lock", T::Text, false}},
       "what the actors believed: no two actors held the lock (lock_acquired .. hold_end, or "
       "the start of the holder's release) at the same time",
       mutual_exclusion},
      {"no_foreign_unlock",
       {{"lock", T::Text, false}},
       "the server's record: no command deleted the lock key while it held another actor's "
       "token (on a real server: releases that reported a deletion, by the last acquirer)",
       no_foreign_unlock},
      {"release_removes_own_lock",
       {{"lock", T::Text, false}},
       "the server's record: a release that reached the server while the key held the "
       "releaser's token deleted it (unless the key expired meanwhile), and its reply said "
       "whether it deleted (fake backend only)",
       release_removes_own_lock},
      {"acquire_took_lock",
       {{"lock", T::Text, false}},
       "the server's record: every acquisition an actor believed in set the lock key to its "
       "token (fake backend only)",
       acquire_took_lock},
      {"script_keys_declared",
       {},
       "the server's record: every key a script call wrote or deleted was one of its KEYS "
       "(fake backend only)",
       script_keys_declared},
      {"no_stale_write",
       {{"resource", T::Resource, false}},
       "the resource's own decisions: no write was accepted with a fence below one it had "
       "accepted, or with the fence of another writer's accepted write",
       no_stale_write},
      {"no_forged_fence",
       {{"resource", T::Resource, false}, {"fence_key", T::Text, false}},
       "the resource's decisions and the values the fence counter took on the server (or, "
       "without fence_key or on a real server, the fences acquisitions returned)",
       no_forged_fence},
      {"no_lost_messages",
       {{"channel", T::Text, false}},
       "what subscribers meant to hear (listen .. listen_end), what was published, and what "
       "each received",
       no_lost_messages},
      {"no_pool_timeouts",
       {},
       "the clients' pool_timeout events (a violation per actor, from its first to its last), "
       "and pool waits still going at the end of the run",
       no_pool_timeouts},
      {"no_read_timeouts",
       {},
       "the clients' read_timeout events (a violation per actor, from its first to its last)",
       no_read_timeouts},
      {"no_oversell",
       {{"stock", T::Num, true}, {"record", T::Text, false}},
       "record events, which a step writes only when the server confirmed the write (an EXEC "
       "that applied, a script that returned success)",
       no_oversell},
      {"stock_matches_sales",
       {{"key", T::Text, true}, {"record", T::Text, false}},
       "the server's record of the stock key: it went down by exactly the sales recorded (and "
       "what purchases still under way at the end took), and never below 0 (fake backend "
       "only)",
       stock_matches_sales},
      {"all_sold",
       {{"stock", T::Num, true}, {"record", T::Text, false}},
       "record events: as many sales as the stock",
       all_sold},
      {"retries_bounded",
       {{"max_attempts", T::Num, true}},
       "the actors' tx_attempt events: no run of WATCH attempts was longer than max_attempts",
       retries_bounded},
  };
  return registry;
}

const CheckSpec* find_check(std::string_view name) {
  for (const CheckSpec& c : check_registry())
    if (name == c.name) return &c;
  return nullptr;
}

CheckResult run_check(const std::string& check, const CheckArgs& args, const TraceIndex& index) {
  const CheckSpec* spec = find_check(check);
  REDLAB_ASSERT(spec && "a check the loader accepted is in the registry");
  CheckResult r = spec->run(args, index);
  r.check = check;
  return r;
}

}  // namespace redlab::scenario
