// The facts of a violation, read from the trace's typed events at its moment, and its words
// in a language (see verdict_words.h). One function per check kind finds its facts; the same
// facts are worded by one switch, so a form's English, Russian and Czech cannot drift apart.
#include "app/gui/verdict_words.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "sim/scenario/checks/common.h"
#include "sim/scenario/expr.h"  // parse_int

namespace redlab::gui {

namespace {

using Form = ViolationFacts::Form;

// The events of `kind` with time in [from_us, to_us], in trace order (which is time order).
template <class F>
void each_in(const TraceIndex& ix, std::string_view kind, TimeUs from_us, TimeUs to_us, F f) {
  const std::vector<size_t>& list = ix.of_kind(kind);
  auto it = std::lower_bound(list.begin(), list.end(), from_us,
                             [&](size_t i, TimeUs t) { return ix.event(i).time_us < t; });
  for (; it != list.end() && ix.event(*it).time_us <= to_us; ++it) f(*it);
}

// The last event of `kind` at or before t for which pred holds; kNoEvent if none.
template <class P>
size_t last_before(const TraceIndex& ix, std::string_view kind, TimeUs t, P pred) {
  const std::vector<size_t>& list = ix.of_kind(kind);
  auto it = std::upper_bound(list.begin(), list.end(), t,
                             [&](TimeUs v, size_t i) { return v < ix.event(i).time_us; });
  while (it != list.begin()) {
    --it;
    if (pred(ix.event(*it))) return *it;
  }
  return kNoEvent;
}

// The first event of `kind` at exactly t for which pred holds; kNoEvent if none.
template <class P>
size_t at_time(const TraceIndex& ix, std::string_view kind, TimeUs t, P pred) {
  size_t found = kNoEvent;
  each_in(ix, kind, t, t, [&](size_t i) {
    if (found == kNoEvent && pred(ix.event(i))) found = i;
  });
  return found;
}

// The actor and the command of a span: the checks' own readers of a cause.
using scenario::checks::actor_of_cause;
std::string command_of_cause(const TraceIndex& ix, int64_t cause) {
  return scenario::checks::command_name(ix, cause);
}

std::string who_at(const ViolationRegion& v, size_t i) {
  return i < v.who.size() ? v.who[i] : std::string();
}

// ---- Facts, one function per check kind ----

void mutex_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  if (v.who.size() < 2) return;
  // The later of the two acquisitions began the overlap.
  size_t got = last_before(ix, "lock_acquired", v.from_us, [&](const TraceEvent& e) {
    return e.actor == v.who[0] || e.actor == v.who[1];
  });
  if (got == kNoEvent) return;
  f.form = Form::mutex;
  f.s = {v.who[0], v.who[1], std::string(ix.event(got).str_or(F::lock))};
}

void foreign_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0), owner = who_at(v, 1);
  // The server's record: the key_del at its moment that the actor's command made.
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    const std::vector<KeyChange>& changes = ix.key_changes(server);
    for (const KeyChange& c : changes) {
      if (c.time_us != v.from_us || c.present || c.expired) continue;
      if (actor_of_cause(ix, c.cause) != actor) continue;
      const std::string cmd = command_of_cause(ix, c.cause);
      // Who wrote the token the key held, as the server recorded it (the first write of the
      // value in a row; a watchdog's PEXPIRE keeps its writer).
      std::string writer;
      TimeUs since_us = 0;
      for (const KeyChange& w : changes) {
        if (w.event >= c.event) break;
        if (!w.present || w.state.key != c.state.key || w.state.value != c.state.value) continue;
        std::string by = actor_of_cause(ix, w.cause);
        if (by.empty()) continue;
        if (writer != by) {
          writer = by;
          since_us = w.time_us;
        }
      }
      f.s = {actor, cmd, c.state.key, writer};
      f.t = {since_us};
      f.form = writer.empty() ? Form::foreign_unknown : Form::foreign;
      return;
    }
  }
  // A real server: the release that reported a deletion, as the clients saw it.
  size_t rel = at_time(ix, "lock_released", v.from_us,
                       [&](const TraceEvent& e) { return e.actor == actor; });
  if (rel == kNoEvent || owner.empty()) return;
  const std::string lock(ix.event(rel).str_or(F::lock));
  size_t got = last_before(ix, "lock_acquired", v.from_us, [&](const TraceEvent& e) {
    return e.actor == owner && e.str_or(F::lock) == lock;
  });
  if (got == kNoEvent) return;
  f.form = Form::foreign_clients;
  f.s = {actor, lock, owner};
  f.t = {ix.event(got).time_us};
}

void release_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  size_t rel = last_before(ix, "lock_release", v.from_us,
                           [&](const TraceEvent& e) { return e.actor == actor; });
  if (rel == kNoEvent) return;
  const std::string lock(ix.event(rel).str_or(F::lock));
  if (v.to_us > v.from_us && ix.end_of(rel) == kNoEvent) {
    f.form = Form::release_never;
    f.s = {actor, lock};
    return;
  }
  size_t fin = ix.end_of(rel);
  if (fin == kNoEvent) return;
  const TraceEvent& e = ix.event(fin);
  if (e.kind == "lock_release_failed") {
    f.form = Form::release_failed;
    f.s = {actor, lock, std::string(e.str_or(F::error))};
  } else {
    f.form = Form::release_wrong;
    f.s = {actor, lock, std::string(e.str_or(F::reply))};
  }
}

void acquire_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  size_t got = at_time(ix, "lock_acquired", v.from_us,
                       [&](const TraceEvent& e) { return e.actor == actor; });
  if (got == kNoEvent) return;
  const TraceEvent& e = ix.event(got);
  const std::string lock(e.str_or(F::lock)), server(e.str_or(F::server));
  std::optional<KeyState> held = ix.key_before(server, 0, lock, got);
  std::string writer;
  if (held)
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.event >= got) break;
      if (!c.present || c.state.key != lock || c.state.value != held->value) continue;
      if (std::string by = actor_of_cause(ix, c.cause); !by.empty()) writer = by;
    }
  f.form = Form::acquire;
  // s[2]: "" the key did not exist; "token" s[3]'s token; "value" it held s[3].
  f.s = {actor, lock,
         !held            ? ""
         : writer.empty() ? "value"
                          : "token",
         !held            ? ""
         : writer.empty() ? held->value
                          : writer};
}

void script_keys_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.time_us != v.from_us || c.expired || actor_of_cause(ix, c.cause) != actor) continue;
      const std::string name = command_of_cause(ix, c.cause);
      if (name != "EVAL" && name != "EVALSHA" && name != "FCALL") continue;
      const auto* argv = ix.event(ix.span_begin(c.cause)).list(F::argv);
      auto numkeys = argv && argv->size() >= 3 ? scenario::parse_int((*argv)[2]) : std::nullopt;
      bool declared = false;
      for (int64_t k = 0; numkeys && k < *numkeys && 3 + size_t(k) < argv->size(); k++)
        declared = declared || (*argv)[3 + size_t(k)] == c.state.key;
      if (declared) continue;
      f.form = Form::script_keys;
      f.s = {actor, name, c.present ? "wrote" : "deleted", c.state.key};
      return;
    }
  }
}

void resource_facts(const ViolationRegion& v, std::string_view kind, const TraceIndex& ix,
                    ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  size_t acc = at_time(ix, "resource_accept", v.from_us,
                       [&](const TraceEvent& e) { return e.actor == actor; });
  if (acc == kNoEvent) return;
  const TraceEvent& e = ix.event(acc);
  const std::string resource(e.str_or(F::resource));
  const int64_t fence = e.num_or(F::fence, 0), highest = e.num_or(F::highest, 0);
  if (kind == "no_forged_fence") {
    std::vector<std::string> victims(v.who.begin() + 1, v.who.end());
    int64_t rejected = 0;
    for (size_t i : ix.of_kind("resource_reject"))
      if (i > acc && ix.event(i).str_or(F::resource) == resource &&
          std::find(victims.begin(), victims.end(), ix.event(i).actor) != victims.end())
        rejected++;
    f.form = Form::forged;
    f.s = {resource, actor};
    f.s.insert(f.s.end(), victims.begin(), victims.end());
    f.n = {fence, rejected};
    return;
  }
  if (fence < highest) {
    f.form = Form::stale;
    f.s = {resource, actor};
    f.n = {fence, highest};
    return;
  }
  // The same fence as another writer's earlier accepted write.
  size_t earlier = last_before(ix, "resource_accept", v.from_us, [&](const TraceEvent& x) {
    return &x != &e && x.actor != actor && x.str_or(F::resource) == resource &&
           x.num_or(F::fence, 0) == fence;
  });
  if (earlier == kNoEvent) return;
  f.form = Form::stale_same;
  f.s = {resource, actor, ix.event(earlier).actor};
  f.n = {fence};
}

// "msg-20, msg-21, ..., msg-40": a message's first word names it (as the check lists them).
std::vector<std::string> message_names(const std::vector<std::string>& all) {
  std::vector<std::string> v;
  for (const auto& m : all) v.push_back(m.substr(0, m.find(' ')).substr(0, 40));
  if (v.size() <= 6) return v;
  return {v[0], v[1], v[2], "...", v[v.size() - 2], v.back()};
}

void lost_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  size_t listen =
      last_before(ix, "listen", v.from_us, [&](const TraceEvent& e) { return e.actor == actor; });
  if (listen == kNoEvent) {  // a stream's consumer may start listening after the first entry
    const auto& all = ix.of_kind("listen");
    for (size_t i : all)
      if (ix.event(i).actor == actor) {
        listen = i;
        break;
      }
  }
  if (listen == kNoEvent) return;
  const TraceEvent& l = ix.event(listen);
  const std::string channel(l.str_or(F::channel)), group(l.str_or(F::group));
  const bool stream = l.str_or(F::method) == "stream";
  // What reached the listener (a stream: any consumer of its group).
  std::set<std::string> received;
  for (const char* kind : {"pubsub_message", "stream_message"})
    for (size_t i : ix.of_kind(kind)) {
      const TraceEvent& d = ix.event(i);
      if (d.str_or(F::channel) != channel) continue;
      if (stream ? d.str_or(F::group) == group : d.actor == actor)
        received.insert(std::string(d.str_or(F::message)));
    }
  std::vector<std::string> lost;
  int64_t zero = 0, counted = 0;  // PUBLISH's reply: 0, or a receiver it queued them for
  each_in(ix, "publish", v.from_us, v.to_us, [&](size_t i) {
    const TraceEvent& p = ix.event(i);
    if (p.str_or(F::channel) != channel || (p.str_or(F::method) == "stream") != stream) return;
    const size_t end = ix.end_of(i);
    if (stream && end != kNoEvent && ix.event(end).has(F::error)) return;  // nothing was sent
    const std::string message(p.str_or(F::message));
    if (received.count(message)) return;
    lost.push_back(message);
    f.counted.push_back({p.time_us, 1});
    if (end != kNoEvent && ix.event(end).num_or(F::receivers, -1) == 0) zero++;
    if (end != kNoEvent && ix.event(end).num_or(F::receivers, -1) > 0) counted++;
  });
  if (lost.empty()) return;
  f.form = Form::lost;
  f.s = {stream && !group.empty() ? "" : actor, group, channel};
  for (std::string& name : message_names(lost)) f.s.push_back(std::move(name));
  f.n = {static_cast<int64_t>(lost.size()), zero, counted};
}

void timeout_facts(const ViolationRegion& v, std::string_view event_kind, Form form,
                   const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  // A wait still going at the end of the run (no_pool_timeouts' second kind).
  if (form == Form::pool) {
    bool open = false;
    each_in(ix, "pool_wait", v.from_us, v.from_us, [&](size_t i) {
      open = open || (ix.event(i).actor == actor && ix.end_of(i) == kNoEvent);
    });
    if (open && v.to_us >= ix.end_us()) {
      f.form = Form::pool_waiting;
      f.s = {actor};
      return;
    }
  }
  TimeUs first_wait_us = -1;
  each_in(ix, event_kind, v.from_us, v.to_us, [&](size_t i) {
    const TraceEvent& e = ix.event(i);
    if (e.actor != actor) return;
    f.counted.push_back({e.time_us, 1});
    if (first_wait_us < 0)
      if (size_t begin = ix.begin_of(i); begin != kNoEvent)
        first_wait_us = e.time_us - ix.event(begin).time_us;
  });
  if (f.counted.empty()) return;
  f.form = form;
  f.s = {actor};
  f.t = {first_wait_us};
}

std::string record_name(const CheckInfo& info) {
  auto it = info.text.find("record");
  return it == info.text.end() || it->second.empty() ? "sale" : it->second;
}

void oversell_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                    ViolationFacts& f) {
  const std::string name = record_name(info);
  int64_t sold = 0, stock = -1;
  for (size_t i : ix.of_kind("record")) {
    const TraceEvent& e = ix.event(i);
    if (e.str_or(F::record) != name) continue;
    if (stock < 0 && e.time_us == v.from_us) stock = sold;  // the first sale past the stock
    sold++;
  }
  if (auto it = info.number.find("stock"); it != info.number.end()) stock = it->second;
  if (stock < 0 || sold <= stock) return;
  f.form = Form::oversell;
  f.n = {sold, stock};
}

void stock_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                 ViolationFacts& f) {
  // At the end of the run: the key's first and last values against the sales recorded.
  if (v.who.empty() && v.from_us == ix.end_us() && info.text.count("key")) {
    const std::string& key = info.text.at("key");
    int64_t sold = 0;
    for (size_t i : ix.of_kind("record"))
      if (ix.event(i).str_or(F::record) == record_name(info)) sold++;
    for (const std::string& server : ix.servers()) {
      if (!ix.has_server_events(server)) continue;
      std::optional<int64_t> first, last;
      for (const KeyChange& c : ix.key_changes(server)) {
        if (c.state.key != key) continue;
        auto n = c.present ? scenario::parse_int(c.state.value) : std::optional<int64_t>(0);
        if (!n) continue;
        if (!first) first = n;
        last = n;
      }
      if (!first) continue;
      f.form = Form::stock_went;
      f.s = {key};
      f.n = {*first, *last, *first - *last, sold};
      return;
    }
  }
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    const std::vector<KeyChange>& changes = ix.key_changes(server);
    for (const KeyChange& c : changes) {
      if (c.time_us != v.from_us || !c.present) continue;
      auto value = scenario::parse_int(c.state.value);
      if (!value || *value >= 0) continue;
      int64_t lowest = 0;
      for (const KeyChange& k : changes)
        if (k.state.key == c.state.key) {
          auto n = k.present ? scenario::parse_int(k.state.value) : std::optional<int64_t>(0);
          if (n) lowest = std::min(lowest, *n);
        }
      f.form = Form::stock_negative;
      f.s = {c.state.key};
      f.n = {lowest};
      return;
    }
  }
}

void all_sold_facts(const CheckInfo& info, const TraceIndex& ix, ViolationFacts& f) {
  auto stock = info.number.find("stock");
  if (stock == info.number.end()) return;
  const std::string name = record_name(info);
  int64_t sold = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) sold++;
  f.form = Form::all_sold;
  f.n = {sold, stock->second};
}

void retries_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                   ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  int64_t bound = -1;
  each_in(ix, "tx_attempt", v.from_us, v.to_us, [&](size_t i) {
    const TraceEvent& e = ix.event(i);
    if (e.actor != actor) return;
    const int64_t tries = e.num_or(F::tries, 1);
    if (bound < 0) bound = tries - 1;  // the first attempt past the bound
    f.counted.push_back({e.time_us, tries});
  });
  if (auto it = info.number.find("max_attempts"); it != info.number.end()) bound = it->second;
  if (f.counted.empty() || bound < 0) return;
  f.form = Form::retries;
  f.s = {actor};
  f.n = {bound};
}

// ---- The checks of clients, batches, rates and the server's record ----

// The run's --time-scale (a real server's run: every duration of the scenario times this), by
// which the checks scale their bounds and windows.
double run_time_scale(const TraceIndex& ix) {
  if (!ix.trace()) return 1.0;
  const std::string s = ix.trace()->meta_or("time_scale", "1");
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  return end != s.c_str() && x > 0 ? x : 1.0;
}

TimeUs scaled_ms(int64_t ms, double scale) {
  return static_cast<TimeUs>(std::llround(static_cast<double>(ms) * 1000.0 * scale));
}

int64_t number_or(const CheckInfo& info, const char* key, int64_t def) {
  auto it = info.number.find(key);
  return it == info.number.end() ? def : it->second;
}

std::string text_or(const CheckInfo& info, const char* key, const std::string& def = {}) {
  auto it = info.text.find(key);
  return it == info.text.end() ? def : it->second;
}

std::string upper_word(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool script_or_exec(std::string_view cmd) {
  return cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO" ||
         cmd == "FCALL" || cmd == "FCALL_RO" || cmd == "EXEC";
}

// answered_within: the request from the actor's actor_start to its actor_end, and its longest
// client call meanwhile (what it was waiting for).
void answered_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                    ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  const size_t start =
      at_time(ix, "actor_start", v.from_us, [&](const TraceEvent& e) { return e.actor == actor; });
  if (start == kNoEvent || !info.number.count("ms")) return;
  size_t end = kNoEvent;
  for (size_t e : ix.of_kind("actor_end"))
    if (e > start && ix.event(e).actor == actor) {
      end = e;
      break;
    }
  const TimeUs bound = scaled_ms(info.number.at("ms"), run_time_scale(ix));
  size_t best = kNoEvent;
  TimeUs best_us = -1;
  for (size_t c : ix.of_kind("call")) {
    if (c < start || (end != kNoEvent && c > end) || ix.event(c).actor != actor) continue;
    const size_t r = ix.end_of(c);
    const TimeUs took = (r == kNoEvent ? ix.end_us() : ix.event(r).time_us) - ix.event(c).time_us;
    if (took > best_us) {
      best_us = took;
      best = c;
    }
  }
  std::string what, error_class;
  if (best != kNoEvent) {
    const TraceEvent& call = ix.event(best);
    if (const auto* argv = call.list(F::argv))
      for (size_t i = 0; i < argv->size() && i < 2; i++) what += (i ? " " : "") + (*argv)[i];
    if (what.empty()) what = std::string(call.str_or(F::cmd, "?"));
    if (size_t r = ix.end_of(best); r != kNoEvent)
      error_class = std::string(ix.event(r).str_or(F::error_class));
  }
  f.form = end == kNoEvent                             ? Form::answered_never
           : ix.event(end).str_or(F::reason) != "done" ? Form::answered_gave_up
                                                       : Form::answered_late;
  f.s = {actor, what, error_class};
  f.t = {ix.event(start).time_us, end == kNoEvent ? ix.end_us() : ix.event(end).time_us, bound,
         best_us};
}

// batch_not_interleaved: the server's order of execution between the first and the last
// command of the actor's batch that it ran (`served`, each naming its command's span).
void interleaved_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  size_t first = kNoEvent, last = kNoEvent;
  each_in(ix, "served", v.from_us, v.to_us, [&](size_t i) {
    const TraceEvent& e = ix.event(i);
    const int64_t cause = e.num_or(F::cause, 0);
    if (cause == 0 || e.str_or(F::reason) == "queued" || e.str_or(F::cmd) == "MULTI") return;
    if (actor_of_cause(ix, cause) != actor) return;
    if (first == kNoEvent) first = i;
    last = i;
  });
  if (first == kNoEvent) return;
  size_t intruder = kNoEvent;
  int64_t intruders = 0;
  for (size_t i : ix.of_kind("served")) {
    if (i <= first || i >= last) continue;
    const TraceEvent& e = ix.event(i);
    const int64_t cause = e.num_or(F::cause, 0);
    if (cause == 0 || e.str_or(F::reason) == "queued") continue;
    const std::string by = actor_of_cause(ix, cause);
    if (by.empty() || by == actor) continue;
    if (intruders++ == 0) intruder = i;
  }
  if (intruder == kNoEvent) return;
  const TraceEvent& in = ix.event(intruder);
  f.form = Form::interleaved;
  f.s = {actor_of_cause(ix, in.num_or(F::cause, 0)), std::string(in.str_or(F::cmd)), actor,
         std::string(ix.event(first).str_or(F::cmd)), std::string(ix.event(last).str_or(F::cmd))};
  f.n = {intruders};
  f.t = {in.time_us};
}

// batch_round_trips: the actor's own commands and replies in the batch: one round trip more
// each time it sent a command after it had waited for a reply.
void round_trips_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                       ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  if (!info.number.count("max_round_trips")) return;
  std::vector<size_t> events;
  for (const char* kind : {"command", "reply"})
    each_in(ix, kind, v.from_us, v.to_us, [&](size_t i) {
      if (ix.event(i).actor == actor) events.push_back(i);
    });
  std::sort(events.begin(), events.end());
  std::set<size_t> mine;
  int64_t trips = 0;
  bool replied = true;
  for (size_t i : events) {
    const TraceEvent& e = ix.event(i);
    if (e.kind == "command") {
      const auto* argv = e.list(F::argv);
      if (!argv || argv->empty() || upper_word((*argv)[0]) == "HELLO") continue;
      if (replied) trips++;
      replied = false;
      mine.insert(i);
    } else if (mine.count(ix.begin_of(i))) {
      replied = true;
    }
  }
  if (mine.empty()) return;
  f.form = Form::round_trips;
  f.s = {actor};
  f.n = {static_cast<int64_t>(mine.size()), trips, info.number.at("max_round_trips")};
  f.t = {v.to_us - v.from_us};
}

// dials_within: the clients' own dial (or conn_close) events in the check's window.
void dials_facts(const CheckInfo& info, const TraceIndex& ix, ViolationFacts& f) {
  if (!info.number.count("max")) return;
  const bool dials = text_or(info, "of", "dials") != "closes";
  const double scale = run_time_scale(ix);
  const TimeUs from_us = scaled_ms(number_or(info, "after_ms", 0), scale);
  const TimeUs to_us =
      info.number.count("until_ms") ? scaled_ms(info.number.at("until_ms"), scale) : ix.end_us();
  const int64_t max = info.number.at("max");
  std::vector<TimeUs> counted;
  int64_t closes = 0;
  each_in(ix, dials ? "dial" : "conn_close", from_us, to_us,
          [&](size_t i) { counted.push_back(ix.event(i).time_us); });
  each_in(ix, "conn_close", from_us, to_us, [&](size_t) { closes++; });
  const int64_t n = static_cast<int64_t>(counted.size());
  if (n <= max) return;
  f.form = Form::dials;
  f.s = {dials ? "dials" : "closes"};
  f.n = {n, max, closes};
  f.t = {from_us, to_us, counted[static_cast<size_t>(max)]};
}

// no_error_replies: the results of the actor's calls (what the program got back) whose error
// is a server reply with the code of its first one; a NOSCRIPT that Script.Run answered with
// EVAL (its script_fallback, same step and time) never reached the program.
void errors_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  std::map<std::pair<int64_t, TimeUs>, int> fallbacks;
  for (size_t i : ix.of_kind("script_fallback"))
    if (ix.event(i).actor == actor) fallbacks[{ix.event(i).step, ix.event(i).time_us}]++;
  std::string code;
  int64_t n = 0;
  each_in(ix, "result", v.from_us, v.to_us, [&](size_t i) {
    const TraceEvent& e = ix.event(i);
    if (e.actor != actor || e.str_or(F::error_class) != "server") return;
    const std::string_view error = e.str_or(F::error);
    const std::string this_code(error.substr(0, error.find(' ')));
    if (!code.empty() && this_code != code) return;
    if (this_code == "NOSCRIPT") {
      auto it = fallbacks.find({e.step, e.time_us});
      if (it != fallbacks.end() && it->second > 0) {
        it->second--;
        return;
      }
    }
    code = this_code;
    n++;
  });
  if (n == 0) return;
  f.form = Form::error_replies;
  f.s = {actor, code};
  f.n = {n};
}

// no_unseen_overwrite: the server's record of the key: the write, and the writer's last plain
// read of it before (a `served` command naming the key first, not one of the key's writers).
void overwrite_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                     ViolationFacts& f) {
  const std::string actor = who_at(v, 0), other = who_at(v, 1);
  const std::string key = text_or(info, "key");
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    std::set<int64_t> writers;
    for (const KeyChange& c : ix.key_changes(server))
      if (!c.expired && c.cause != 0 && c.state.key == key) writers.insert(c.cause);
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.time_us != v.to_us || c.expired || c.cause == 0 || c.state.key != key) continue;
      if (actor_of_cause(ix, c.cause) != actor) continue;
      TimeUs read_us = -1;
      for (size_t s : ix.of_kind("served")) {
        if (s >= c.event) break;
        const TraceEvent& e = ix.event(s);
        const int64_t cause = e.num_or(F::cause, 0);
        if (e.actor != server || cause == 0 || !e.str_or(F::reason).empty()) continue;
        if (script_or_exec(e.str_or(F::cmd)) || writers.count(cause)) continue;
        const size_t cmd = ix.span_begin(cause);
        if (cmd == kNoEvent || ix.event(cmd).actor != actor) continue;
        const auto* argv = ix.event(cmd).list(F::argv);
        if (argv && argv->size() >= 2 && (*argv)[1] == key) read_us = e.time_us;
      }
      f.form = Form::overwrite;
      f.s = {actor, command_of_cause(ix, c.cause), key, other};
      f.t = {v.from_us, v.to_us, read_us};
      return;
    }
  }
}

// rate_within_limit: the requests let through, from the server's record of the key they write
// (on a real server: the commands naming it that were answered without an error).
void rate_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                ViolationFacts& f) {
  const std::string key = text_or(info, "key");
  if (key.empty() || !info.number.count("limit") || !info.number.count("window_ms")) return;
  std::vector<TimeUs> through;
  bool server_record = !ix.servers().empty();
  for (const std::string& server : ix.servers())
    if (!ix.has_server_events(server)) server_record = false;
  if (server_record) {
    for (const std::string& server : ix.servers())
      for (const KeyChange& c : ix.key_changes(server))
        if (c.present && c.cause != 0 && c.state.key == key) through.push_back(c.time_us);
  } else {
    for (size_t i : ix.of_kind("command")) {
      const auto* argv = ix.event(i).list(F::argv);
      if (!argv || argv->size() < 2 || (*argv)[1] != key) continue;
      const size_t end = ix.end_of(i);
      if (end == kNoEvent || ix.event(end).kind != "reply" || ix.event(end).has(F::error)) continue;
      through.push_back(ix.event(end).time_us);
    }
  }
  const int64_t total = static_cast<int64_t>(through.size());
  const int64_t at_least = number_or(info, "at_least", 0);
  const TimeUs window_us = scaled_ms(info.number.at("window_ms"), run_time_scale(ix));
  f.s = {server_record ? "server" : "clients"};
  if (v.who.empty() && v.from_us == ix.end_us() && total < at_least) {
    f.form = Form::rate_few;
    f.n = {total, info.number.at("limit"), at_least};
    f.t = {window_us};
    return;
  }
  const int64_t n = std::count_if(through.begin(), through.end(),
                                  [&](TimeUs t) { return t >= v.from_us && t <= v.to_us; });
  if (n == 0) return;
  f.form = Form::rate;
  f.n = {n, info.number.at("limit")};
  f.t = {window_us};
}

// all_recorded: the record events of its name, which a step writes only when the server
// confirmed it.
void recorded_facts(const CheckInfo& info, const TraceIndex& ix, ViolationFacts& f) {
  const std::string name = text_or(info, "record");
  if (name.empty() || !info.number.count("count")) return;
  int64_t got = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) got++;
  f.form = Form::recorded;
  f.s = {name};
  f.n = {got, info.number.at("count")};
}

// writes_together: which of the two keys the actor's transaction or script changed at its
// moment (the server's record).
void together_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                    ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  const std::string key = text_or(info, "key"), with = text_or(info, "with");
  if (key.empty() || with.empty()) return;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    std::map<int64_t, int> changed;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.time_us != v.from_us || c.expired || c.cause == 0) continue;
      const std::string cmd = command_of_cause(ix, c.cause);
      if (cmd != "EXEC" && cmd != "EVAL" && cmd != "EVALSHA" && cmd != "FCALL") continue;
      if (actor_of_cause(ix, c.cause) != actor) continue;
      changed[c.cause] |= c.state.key == key ? 1 : c.state.key == with ? 2 : 0;
    }
    for (const auto& [cause, bits] : changed) {
      if (bits != 1 && bits != 2) continue;
      f.form = Form::together;
      f.s = {actor, command_of_cause(ix, cause), bits == 1 ? key : with, bits == 1 ? with : key};
      return;
    }
  }
}

// no_wait_behind: the server's busy spans (`served`: when it began each command and for how
// long) between each of the actor's sends and the start of its command, counting only the
// time it spent on other actors' commands; the longest wait and what held the server then.
void wait_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                ViolationFacts& f) {
  const std::string actor = who_at(v, 0);
  if (!info.number.count("max_ms")) return;
  const TimeUs max_us = info.number.at("max_ms") * 1000;
  int64_t n = 0;
  TimeUs worst = 0, culprit_us = 0;
  std::string cmd, culprit, behind;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    struct Busy {
      TimeUs from, to;
      std::string actor, cmd;
    };
    std::vector<Busy> busy;
    std::vector<size_t> served;
    for (size_t s : ix.of_kind("served")) {
      const TraceEvent& e = ix.event(s);
      if (e.actor != server) continue;
      const int64_t cause = e.num_or(F::cause, 0);
      busy.push_back(Busy{e.time_us, e.time_us + e.num_or(F::duration_us, 0),
                          cause ? actor_of_cause(ix, cause) : std::string(),
                          std::string(e.str_or(F::cmd))});
      served.push_back(s);
    }
    for (size_t k = 0; k < served.size(); k++) {
      const TraceEvent& e = ix.event(served[k]);
      const int64_t cause = e.num_or(F::cause, 0);
      const size_t sent = cause ? ix.span_begin(cause) : kNoEvent;
      if (sent == kNoEvent || ix.event(sent).actor != actor) continue;
      const TraceEvent& c = ix.event(sent);
      TimeUs waited = 0, longest = 0;
      const Busy* held = nullptr;
      for (size_t j = 0; j < k; j++) {
        const Busy& b = busy[j];
        if (b.to <= c.time_us || b.actor == actor) continue;
        const TimeUs from = std::max(b.from, c.time_us), to = std::min(b.to, e.time_us);
        if (to <= from) continue;
        waited += to - from;
        if (b.to - b.from > longest) {
          longest = b.to - b.from;
          held = &b;
        }
      }
      if (waited <= max_us) continue;
      n++;
      if (waited > worst) {
        worst = waited;
        cmd = std::string(e.str_or(F::cmd));
        culprit = held ? held->actor : std::string();
        behind = held ? held->cmd : std::string();
        culprit_us = longest;
      }
    }
  }
  if (n == 0) return;
  f.form = Form::wait_behind;
  f.s = {actor, cmd, culprit, behind};
  f.n = {n};
  f.t = {max_us, worst, culprit_us};
}

// The largest counted value (or how many were counted) up to the horizon.
int64_t counted_until(const ViolationFacts& f, TimeUs horizon_us, bool largest) {
  int64_t out = 0;
  for (const auto& [t, value] : f.counted) {
    if (t > horizon_us) break;
    out = largest ? std::max(out, value) : out + value;
  }
  return out;
}

}  // namespace

CheckInfo check_info_of(const std::string& name, const TraceIndex& ix,
                        const scenario::Scenario* scenario) {
  CheckInfo info;
  for (const TraceCheck& c : ix.checks())
    if (c.name == name) info.kind = c.kind;
  if (!scenario || !ix.trace()) return info;
  const auto& meta = ix.trace()->meta();
  auto id = meta.find("scenario");
  if (id == meta.end() || id->second != scenario->id) return info;
  scenario::Env env = [&meta](std::string_view param) -> std::optional<std::string> {
    auto it = meta.find("param." + std::string(param));
    if (it == meta.end()) return std::nullopt;
    return it->second;
  };
  for (const scenario::CheckDef& c : scenario->checks) {
    if (c.name != name) continue;
    if (info.kind.empty()) info.kind = c.check;
    try {
      for (const auto& [key, expr] : c.numbers) info.number[key] = expr.eval(env);
      for (const auto& [key, text] : c.args) info.text[key] = text.eval(env);
    } catch (const std::exception&) {
      // A parameter the trace does not name: the facts are found without it.
    }
  }
  return info;
}

// processed_once: the resource's accepted writes (resource_accept, each naming what it
// processed as its value) and what had to be processed (the stream's entries from their
// published events, or the event).
void processed_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                     ViolationFacts& f) {
  const std::string resource = text_or(info, "resource");
  const std::string stream = text_or(info, "stream");
  const std::string event = text_or(info, "event");
  if (resource.empty()) return;
  std::map<std::string, std::vector<size_t>> writes;  // value -> its resource_accept events
  for (size_t i : ix.of_kind("resource_accept"))
    if (ix.event(i).str_or(F::resource) == resource)
      writes[std::string(ix.event(i).str_or(F::value))].push_back(i);
  // An entry as the check names it: its id and its fields.
  std::map<std::string, std::string> label;
  std::vector<std::string> due;
  if (!stream.empty())
    for (size_t i : ix.of_kind("published")) {
      const TraceEvent& e = ix.event(i);
      const size_t begin = ix.begin_of(i);
      if (begin == kNoEvent || e.has(F::error) || !e.has(F::id)) continue;
      const TraceEvent& b = ix.event(begin);
      if (b.str_or(F::method) != "stream" || b.str_or(F::channel) != stream) continue;
      const std::string id(e.str_or(F::id));
      due.push_back(id);
      label[id] = id + " (" + std::string(b.str_or(F::message)) + ")";
    }
  auto named = [&label](const std::string& value) {
    auto it = label.find(value);
    return it == label.end() ? value : it->second;
  };
  if (!v.who.empty()) {  // a value accepted twice: its writes span the violation
    for (const auto& [value, ws] : writes) {
      if (ws.size() < 2 || ix.event(ws.front()).time_us != v.from_us ||
          ix.event(ws.back()).time_us != v.to_us)
        continue;
      f.form = Form::twice;
      f.s = {named(value), resource};
      for (size_t i : ws) {
        f.s.push_back(ix.event(i).actor);
        f.t.push_back(ix.event(i).time_us);
      }
      f.n = {static_cast<int64_t>(ws.size())};
      return;
    }
    return;
  }
  std::vector<std::string> never;
  for (const std::string& id : due)
    if (!writes.count(id)) never.push_back(named(id));
  if (!event.empty() && !writes.count(event) && never.empty()) {
    f.form = Form::never_event;
    f.s = {event, resource};
    return;
  }
  if (never.empty()) return;
  f.form = Form::never_entries;
  // As the check lists them: all of up to four, else the first two and the last.
  std::string list = never[0];
  if (never.size() <= 4) {
    for (size_t i = 1; i < never.size(); i++) list += ", " + never[i];
  } else {
    list += ", " + never[1] + ", ..., " + never.back();
  }
  f.s = {stream, resource, list};
  f.n = {static_cast<int64_t>(never.size())};
}

// key_final: the key_final event the engine wrote when the run ended (the server's own answer),
// and how an absent key went away (the server's key events, where the trace has them).
void key_final_facts(const ViolationRegion& v, const CheckInfo& info, const TraceIndex& ix,
                     ViolationFacts& f) {
  const std::string key = text_or(info, "key");
  const std::string want = text_or(info, "equals");
  const TraceEvent* final_event = nullptr;
  for (size_t i : ix.of_kind("key_final"))
    if (ix.event(i).str_or(F::key) == key && ix.event(i).time_us == v.from_us)
      final_event = &ix.event(i);
  if (!final_event || key.empty()) return;
  const TraceEvent& e = *final_event;
  // The server read at the end: after a failover, the replica the name led to (F::host).
  const std::string server(e.str_or(F::host, e.str_or(F::server)));
  const std::string type(e.str_or(F::type));
  f.s = {key, server, want};
  if (type.empty()) {
    f.form = Form::key_absent;
    if (!ix.has_server_events(server)) return;
    f.form = Form::key_never;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.state.key != key || c.present) continue;
      f.form = c.expired ? Form::key_expired : Form::key_deleted;
      f.t = {c.time_us};
    }
    return;
  }
  f.s.push_back(type);
  f.s.push_back(std::string(e.str_or(F::value)));
  f.form = type == "string" ? Form::key_value : Form::key_type;
  // Its TTL left at the end, on the server's clock: n = {ms left} or {} (none), {-1} unknown.
  const int64_t expire_at_ms = e.num_or(F::expire_at_ms, -1);
  if (expire_at_ms >= 0) {
    const int64_t now_ms = ix.server_clock_ms(server, e.time_us);
    f.n = {now_ms < 0 ? -1 : expire_at_ms - now_ms};
  }
}

ViolationFacts violation_facts(const ViolationRegion& v, const CheckInfo& check,
                               const TraceIndex& ix) {
  ViolationFacts f;
  const std::string_view kind = check.kind;
  if (kind == "mutual_exclusion") mutex_facts(v, ix, f);
  if (kind == "no_foreign_unlock") foreign_facts(v, ix, f);
  if (kind == "release_removes_own_lock") release_facts(v, ix, f);
  if (kind == "acquire_took_lock") acquire_facts(v, ix, f);
  if (kind == "script_keys_declared") script_keys_facts(v, ix, f);
  if (kind == "no_stale_write" || kind == "no_forged_fence") resource_facts(v, kind, ix, f);
  if (kind == "no_lost_messages") lost_facts(v, ix, f);
  if (kind == "no_pool_timeouts") timeout_facts(v, "pool_timeout", Form::pool, ix, f);
  if (kind == "no_read_timeouts") timeout_facts(v, "read_timeout", Form::read, ix, f);
  if (kind == "no_oversell") oversell_facts(v, check, ix, f);
  if (kind == "stock_matches_sales") stock_facts(v, check, ix, f);
  if (kind == "all_sold") all_sold_facts(check, ix, f);
  if (kind == "retries_bounded") retries_facts(v, check, ix, f);
  if (kind == "answered_within") answered_facts(v, check, ix, f);
  if (kind == "batch_not_interleaved") interleaved_facts(v, ix, f);
  if (kind == "batch_round_trips") round_trips_facts(v, check, ix, f);
  if (kind == "dials_within") dials_facts(check, ix, f);
  if (kind == "no_error_replies") errors_facts(v, ix, f);
  if (kind == "no_unseen_overwrite") overwrite_facts(v, check, ix, f);
  if (kind == "rate_within_limit") rate_facts(v, check, ix, f);
  if (kind == "all_recorded") recorded_facts(check, ix, f);
  if (kind == "writes_together") together_facts(v, check, ix, f);
  if (kind == "no_wait_behind") wait_facts(v, check, ix, f);
  if (kind == "processed_once") processed_facts(v, check, ix, f);
  if (kind == "key_final") key_final_facts(v, check, ix, f);
  return f;
}

ViolationWords violation_words(const ViolationRegion& v, const ViolationFacts& f, TimeUs horizon_us,
                               Lang lang) {
  ViolationWords w;
  const auto& s = f.s;
  const auto& n = f.n;
  auto tw = [&](TimeUs t) { return time_words(t, lang); };
  auto num = [](int64_t x) { return std::to_string(x); };
  // A batch lasts well under a millisecond: its times in microseconds.
  auto short_time = [&](TimeUs t) { return t < 10000 ? ruler_words(t, lang) : tw(t); };
  const std::string from = tw(v.from_us), to = tw(v.to_us);
  // Counts as of the horizon (all of them once it is over).
  const TimeUs count_at_us = std::min(horizon_us, v.to_us);
  switch (f.form) {
    case Form::generic:
      w.label = trf(S::v_generic_label, lang, {v.check});
      w.sentence = v.text;
      break;
    case Form::mutex:
      w.label = trf(S::v_mutex_label, lang, {s[0], s[1], s[2]});
      w.sentence = trf(S::v_mutex, lang, {s[0], s[1], s[2], from, to});
      break;
    case Form::foreign:
    case Form::foreign_unknown: {
      const std::string& cmd = s[1];
      const std::string how =
          cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO"
              ? tr(S::how_script, lang)
          : cmd == "EXEC" ? tr(S::how_tx, lang)
          : cmd.empty()   ? tr(S::how_command, lang)
                          : cmd;
      if (f.form == Form::foreign) {
        w.label = trf(S::v_foreign_label, lang, {s[0], s[3]});
        w.sentence = trf(S::v_foreign, lang, {s[0], how, from, s[2], s[3], tw(f.t[0])});
      } else {
        w.label = trf(S::v_foreign_label_unknown, lang, {s[0]});
        w.sentence = trf(S::v_foreign_unknown, lang, {s[0], how, from, s[2]});
      }
      break;
    }
    case Form::foreign_clients:
      w.label = trf(S::v_foreign_label, lang, {s[0], s[2]});
      w.sentence = trf(S::v_foreign_clients, lang, {s[0], from, s[1], s[2], tw(f.t[0])});
      break;
    case Form::release_never:
      w.label = trf(S::v_release_label, lang, {s[1]});
      w.sentence = trf(S::v_release_never, lang, {s[0], s[1], from});
      break;
    case Form::release_failed:
      w.label = trf(S::v_release_label, lang, {s[1]});
      w.sentence = trf(S::v_release_failed, lang, {s[0], from, s[2], s[1]});
      break;
    case Form::release_wrong:
      w.label = trf(S::v_release_label, lang, {s[1]});
      w.sentence = trf(S::v_release_wrong, lang, {s[0], from, s[2]});
      break;
    case Form::acquire: {
      const std::string what = s[2].empty()      ? tr(S::acquire_no_key, lang)
                               : s[2] == "token" ? trf(S::acquire_token_of, lang, {s[3]})
                                                 : trf(S::acquire_value, lang, {s[3]});
      w.label = trf(S::v_acquire_label, lang, {s[0]});
      w.sentence = trf(S::v_acquire, lang, {s[0], s[1], from, what});
      break;
    }
    case Form::script_keys:
      w.label = trf(S::v_script_keys_label, lang, {s[3]});
      w.sentence = trf(S::v_script_keys, lang,
                       {s[0], s[1], from,
                        tr(s[2] == "wrote" ? S::script_wrote : S::script_deleted, lang), s[3]});
      break;
    case Form::stale:
      w.label = trf(S::v_stale_label, lang, {num(n[0]), num(n[1])});
      w.sentence = trf(S::v_stale, lang, {s[0], s[1], num(n[0]), from, num(n[1])});
      break;
    case Form::stale_same:
      w.label = trf(S::v_stale_same_label, lang, {num(n[0])});
      w.sentence = trf(S::v_stale_same, lang, {s[0], s[1], num(n[0]), from, s[2]});
      break;
    case Form::forged: {
      w.label = trf(S::v_forged_label, lang, {num(n[0])});
      w.sentence = trf(S::v_forged, lang, {s[0], s[1], num(n[0]), from});
      if (n[1] > 0) {
        std::vector<std::string> victims(s.begin() + 2, s.end());
        w.sentence =
            trf(S::v_forged_then, lang,
                {w.sentence, plural(n[1], S::genuine_writes, lang), names_words(victims, lang)});
      }
      break;
    }
    case Form::lost: {
      const std::string who = s[0].empty() ? trf(S::group_word, lang, {s[1]}) : s[0];
      std::vector<std::string> names(s.begin() + 3, s.end());
      // A long list is cut in the middle ("a, b, c, ..., y, z"), a short one ends with "and".
      std::string list;
      if (names.size() > 3 && names[3] == "...")
        for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
      else
        list = names_words(names, lang);
      const int64_t lost_so_far = counted_until(f, count_at_us, false);
      const std::string count = plural(lost_so_far, S::messages, lang);
      w.label =
          n[1] > 0 ? trf(S::v_lost_zero_label, lang, {count}) : trf(S::v_lost_label, lang, {count});
      w.sentence =
          trf(S::v_lost, lang, {who, plural(n[0], S::messages, lang), s[2], from, to, list});
      if (n[1] > 0) w.sentence = trf(S::v_lost_zero, lang, {w.sentence, num(n[1])});
      if (n.size() > 2 && n[2] > 0)
        w.sentence = trf(S::v_lost_counted, lang, {w.sentence, num(n[2])});
      break;
    }
    case Form::pool:
    case Form::read: {
      const bool pool = f.form == Form::pool;
      const int64_t so_far = counted_until(f, count_at_us, false);
      const S forms = pool ? S::pool_timeouts : S::read_timeouts;
      w.label = so_far == 1 && f.t[0] >= 0
                    ? trf(pool ? S::v_pool_label_one : S::v_read_label_one, lang, {tw(f.t[0])})
                    : plural(so_far, forms, lang);
      w.sentence = trf(S::v_pool, lang,
                       {s[0], plural(static_cast<int64_t>(f.counted.size()), forms, lang), from});
      break;
    }
    case Form::pool_waiting:
      w.label = tr(S::v_pool_waiting_label, lang);
      w.sentence = trf(S::v_pool_waiting, lang, {s[0], from});
      break;
    case Form::oversell:
      w.label = trf(S::v_oversell_label, lang, {num(n[0] - n[1])});
      w.sentence = trf(S::v_oversell, lang, {num(n[0]), num(n[1]), num(n[0] - n[1]), from});
      break;
    case Form::stock_negative:
      w.label = trf(S::v_stock_negative_label, lang, {s[0]});
      w.sentence = trf(S::v_stock_negative, lang, {s[0], from, num(n[0])});
      break;
    case Form::stock_went:
      w.label = trf(S::v_stock_went_label, lang, {s[0], num(n[2]), num(n[3])});
      w.sentence = trf(S::v_stock_went, lang, {s[0], num(n[0]), num(n[1]), num(n[2]), num(n[3])});
      break;
    case Form::all_sold:
      w.label = trf(S::v_all_sold_label, lang, {num(n[0]), num(n[1])});
      w.sentence = trf(S::v_all_sold, lang, {num(n[0]), num(n[1])});
      break;
    case Form::retries: {
      const int64_t attempts_so_far = counted_until(f, count_at_us, true);
      const int64_t attempts = counted_until(f, kTimeNeverUs, true);
      w.label = trf(S::v_retries_label, lang, {num(attempts_so_far), num(n[0])});
      w.sentence = trf(S::v_retries, lang, {s[0], plural(attempts, S::attempts, lang), num(n[0])});
      break;
    }
    case Form::answered_late:
    case Form::answered_gave_up:
    case Form::answered_never: {
      const std::string& actor = s[0];
      if (f.form == Form::answered_late) {
        w.label = trf(S::v_answered_label, lang, {actor});
        w.sentence =
            trf(S::v_answered_late, lang, {actor, tw(f.t[1] - f.t[0]), tw(f.t[0]), tw(f.t[2])});
      } else if (f.form == Form::answered_gave_up) {
        w.label = trf(S::v_answered_never_label, lang, {actor});
        w.sentence = trf(S::v_answered_gave_up, lang, {actor, tw(f.t[1]), tw(f.t[0])});
      } else {
        w.label = trf(S::v_answered_never_label, lang, {actor});
        w.sentence = trf(S::v_answered_never, lang, {actor, tw(f.t[0]), tw(f.t[2])});
      }
      if (!s[1].empty() && f.t[3] >= 0) {
        const char* cls = s[2].empty() ? nullptr : field_value_words(F::error_class, s[2], lang);
        w.sentence = s[2].empty()
                         ? trf(S::v_answered_longest, lang, {w.sentence, s[1], tw(f.t[3])})
                         : trf(S::v_answered_longest_error, lang,
                               {w.sentence, s[1], tw(f.t[3]), cls ? std::string(cls) : s[2]});
      }
      break;
    }
    case Form::interleaved:
      w.label = trf(S::v_interleaved_label, lang, {s[0], s[2]});
      w.sentence = trf(S::v_interleaved, lang, {s[0], s[1], short_time(f.t[0]), s[2], s[3], s[4]});
      if (n[0] > 1)
        w.sentence = trf(S::v_interleaved_more, lang,
                         {w.sentence, plural(n[0] - 1, S::commands_plural, lang)});
      break;
    case Form::round_trips:
      w.label = trf(S::v_round_trips_label, lang, {num(n[1]), num(n[2])});
      w.sentence = trf(S::v_round_trips, lang,
                       {s[0], plural(n[0], S::commands_plural, lang), short_time(v.from_us),
                        plural(n[1], S::round_trips_plural, lang), short_time(f.t[0]), num(n[2])});
      break;
    case Form::dials: {
      const S what = s[0] == "dials" ? S::new_conns : S::closed_conns;
      w.label = trf(S::v_dials_label, lang, {plural(n[0], what, lang), num(n[1])});
      w.sentence = trf(S::v_dials, lang,
                       {plural(n[0], what, lang), tw(f.t[0]), tw(f.t[1]), num(n[1]), tw(f.t[2])});
      if (s[0] == "dials" && n[2] > 0)
        w.sentence =
            trf(S::v_dials_closed, lang, {w.sentence, plural(n[2], S::conns_plural, lang)});
      break;
    }
    case Form::error_replies:
      w.label = trf(S::v_errors_label, lang, {s[1], plural(n[0], S::calls_plural, lang)});
      w.sentence = trf(S::v_errors, lang, {s[0], plural(n[0], S::calls_plural, lang), s[1], from});
      break;
    case Form::overwrite: {
      const std::string read = f.t[2] >= 0 ? trf(S::overwrite_last_read, lang, {tw(f.t[2])})
                                           : tr(S::overwrite_never_read, lang);
      w.label = trf(S::v_overwrite_label, lang, {s[0], s[3]});
      w.sentence =
          trf(S::v_overwrite, lang, {s[0], s[1], tw(f.t[1]), s[2], s[3], tw(f.t[0]), read});
      break;
    }
    case Form::rate:
      w.label = trf(S::v_rate_label, lang, {num(n[0]), num(n[1])});
      w.sentence = trf(S::v_rate, lang, {num(n[0]), from, to, tw(f.t[0]), num(n[1])});
      if (s[0] == "clients") w.sentence = trf(S::v_as_seen_by_clients, lang, {w.sentence});
      break;
    case Form::rate_few:
      w.label = trf(S::v_rate_few_label, lang, {num(n[0])});
      w.sentence = trf(S::v_rate_few, lang, {num(n[0]), num(n[1]), tw(f.t[0]), num(n[2])});
      if (s[0] == "clients") w.sentence = trf(S::v_as_seen_by_clients, lang, {w.sentence});
      break;
    case Form::recorded:
      w.label = trf(S::v_recorded_label, lang, {num(n[0]), num(n[1])});
      w.sentence = trf(S::v_recorded, lang, {num(n[0]), num(n[1]), s[0]});
      break;
    case Form::together: {
      const std::string who = s[0].empty() ? tr(S::a_client, lang) : s[0];
      const std::string what =
          s[1] == "EXEC" ? tr(S::together_tx, lang) : trf(S::together_script, lang, {s[1]});
      w.label = trf(S::v_together_label, lang, {who, s[2]});
      w.sentence = trf(S::v_together, lang, {who, what, from, s[2], s[3]});
      break;
    }
    case Form::wait_behind: {
      const std::string culprit = s[2].empty() ? tr(S::a_client, lang) : s[2];
      w.label = trf(S::v_wait_label, lang, {tw(f.t[1]), s[3]});
      w.sentence = trf(S::v_wait, lang,
                       {s[0], lang == Lang::en ? plural(n[0], S::commands_plural, lang) : num(n[0]),
                        tw(f.t[0]), s[1], tw(f.t[1]), culprit, s[3], tw(f.t[2])});
      break;
    }
    case Form::twice: {
      std::vector<std::string> each;
      for (size_t i = 0; i < f.t.size(); i++)
        each.push_back(trf(S::actor_at, lang, {s[2 + i], tw(f.t[i])}));
      w.label = trf(S::v_twice_label, lang, {s[0], num(n[0])});
      w.sentence = trf(S::v_twice, lang, {s[0], num(n[0]), s[1], names_words(each, lang)});
      break;
    }
    case Form::never_event:
      w.label = trf(S::v_never_label, lang, {s[0]});
      w.sentence = trf(S::v_never_event, lang, {s[0], s[1], to});
      break;
    case Form::never_entries:
      w.label = trf(S::v_never_label, lang, {num(n[0])});
      w.sentence = trf(S::v_never_entries, lang, {s[0], num(n[0]), s[1], s[2], to});
      break;
    case Form::key_value:
    case Form::key_type: {
      std::string ttl;
      if (n.empty())
        ttl = tr(S::key_no_ttl, lang);
      else if (n[0] < 0)
        ttl = tr(S::key_some_ttl, lang);
      else
        ttl = trf(S::key_ttl_left, lang, {tw(n[0] * 1000)});
      w.label = trf(S::v_key_value_label, lang, {s[0], s[4], s[2]});
      w.sentence = f.form == Form::key_value
                       ? trf(S::v_key_value, lang, {s[0], s[4], ttl, s[1], s[2]})
                       : trf(S::v_key_type, lang, {s[0], s[3], s[1], s[2]});
      break;
    }
    case Form::key_expired:
    case Form::key_deleted:
      w.label = trf(S::v_key_absent_label, lang, {s[0], s[2]});
      w.sentence = trf(f.form == Form::key_expired ? S::v_key_expired : S::v_key_deleted, lang,
                       {s[0], tw(f.t[0]), s[1], s[2]});
      break;
    case Form::key_never:
    case Form::key_absent:
      w.label = trf(S::v_key_absent_label, lang, {s[0], s[2]});
      w.sentence = trf(f.form == Form::key_never ? S::v_key_never : S::v_key_absent, lang,
                       {s[0], s[1], s[2]});
      break;
  }
  // The newer forms' English is the check's own text, which names more than their facts.
  if (lang == Lang::en && f.form >= Form::answered_late) w.sentence = v.text;
  // Still going at the horizon: its end (and what it adds up to) is not told yet.
  if (horizon_us < v.to_us) w.sentence = trf(S::v_ongoing, lang, {w.label, from});
  return w;
}

const CheckKindWords* check_kind_words(std::string_view kind) {
  static const std::vector<CheckKindWords> kWords = {
      {"mutual_exclusion",
       S::check_mutual_exclusion,
       {S::v_mutex_ok},
       {S::v_mutex, S::v_mutex_label}},
      {"no_foreign_unlock",
       S::check_no_foreign_unlock,
       {S::v_foreign_ok},
       {S::v_foreign, S::v_foreign_unknown, S::v_foreign_clients, S::v_foreign_label,
        S::v_foreign_label_unknown, S::how_script, S::how_tx, S::how_command}},
      {"release_removes_own_lock",
       S::check_release_removes_own_lock,
       {S::v_release_ok},
       {S::v_release_never, S::v_release_failed, S::v_release_wrong, S::v_release_label}},
      {"acquire_took_lock",
       S::check_acquire_took_lock,
       {S::v_acquire_ok},
       {S::v_acquire, S::acquire_no_key, S::acquire_token_of, S::acquire_value,
        S::v_acquire_label}},
      {"script_keys_declared",
       S::check_script_keys_declared,
       {S::v_script_keys_ok},
       {S::v_script_keys, S::script_wrote, S::script_deleted, S::v_script_keys_label}},
      {"no_stale_write",
       S::check_no_stale_write,
       {S::v_stale_ok},
       {S::v_stale, S::v_stale_same, S::v_stale_label, S::v_stale_same_label}},
      {"no_forged_fence",
       S::check_no_forged_fence,
       {S::v_forged_ok},
       {S::v_forged, S::v_forged_then, S::genuine_writes, S::v_forged_label}},
      {"no_lost_messages",
       S::check_no_lost_messages,
       {S::v_lost_ok},
       {S::v_lost, S::messages, S::v_lost_zero, S::v_lost_counted, S::v_lost_label,
        S::v_lost_zero_label, S::group_word}},
      {"no_pool_timeouts",
       S::check_no_pool_timeouts,
       {S::v_pool_ok},
       {S::v_pool, S::pool_timeouts, S::v_pool_label_one, S::v_pool_waiting,
        S::v_pool_waiting_label}},
      {"no_read_timeouts",
       S::check_no_read_timeouts,
       {S::v_read_ok},
       {S::v_pool, S::read_timeouts, S::v_read_label_one}},
      {"no_oversell",
       S::check_no_oversell,
       {S::v_oversell_ok},
       {S::v_oversell, S::v_oversell_label}},
      {"stock_matches_sales",
       S::check_stock_matches_sales,
       {S::v_stock_ok},
       {S::v_stock_negative, S::v_stock_negative_label, S::v_stock_went, S::v_stock_went_label}},
      {"all_sold", S::check_all_sold, {S::v_all_sold_ok}, {S::v_all_sold, S::v_all_sold_label}},
      {"retries_bounded",
       S::check_retries_bounded,
       {S::v_retries_ok},
       {S::v_retries, S::attempts, S::v_retries_label, S::v_retries_totals}},
      {"answered_within",
       S::check_answered_within,
       {S::v_answered_ok},
       {S::v_answered_late, S::v_answered_gave_up, S::v_answered_never, S::v_answered_longest,
        S::v_answered_longest_error, S::v_answered_label, S::v_answered_never_label}},
      {"batch_not_interleaved",
       S::check_batch_not_interleaved,
       {S::v_interleaved_ok},
       {S::v_interleaved, S::v_interleaved_more, S::commands_plural, S::v_interleaved_label}},
      {"batch_round_trips",
       S::check_batch_round_trips,
       {S::v_round_trips_ok},
       {S::v_round_trips, S::commands_plural, S::round_trips_plural, S::v_round_trips_label}},
      {"dials_within",
       S::check_dials_within,
       {S::v_dials_ok, S::v_closes_ok},
       {S::v_dials, S::v_dials_closed, S::new_conns, S::closed_conns, S::conns_plural,
        S::v_dials_label}},
      {"no_error_replies",
       S::check_no_error_replies,
       {S::v_errors_ok},
       {S::v_errors, S::calls_plural, S::v_errors_label}},
      {"no_unseen_overwrite",
       S::check_no_unseen_overwrite,
       {S::v_overwrite_ok},
       {S::v_overwrite, S::overwrite_last_read, S::overwrite_never_read, S::v_overwrite_label}},
      {"rate_within_limit",
       S::check_rate_within_limit,
       {S::v_rate_ok},
       {S::v_rate, S::v_rate_few, S::v_as_seen_by_clients, S::v_rate_label, S::v_rate_few_label}},
      {"all_recorded",
       S::check_all_recorded,
       {S::v_recorded_ok},
       {S::v_recorded, S::v_recorded_label}},
      {"writes_together",
       S::check_writes_together,
       {S::v_together_ok},
       {S::v_together, S::together_tx, S::together_script, S::a_client, S::v_together_label}},
      {"processed_once",
       S::check_processed_once,
       {S::v_processed_once_ok},
       {S::v_twice, S::v_twice_label, S::actor_at, S::v_never_event, S::v_never_entries,
        S::v_never_label}},
      {"key_final",
       S::check_key_final,
       {S::v_key_final_ok},
       {S::v_key_value, S::v_key_value_label, S::key_ttl_left, S::key_no_ttl, S::key_some_ttl,
        S::v_key_type, S::v_key_expired, S::v_key_deleted, S::v_key_never, S::v_key_absent,
        S::v_key_absent_label}},
      {"no_wait_behind",
       S::check_no_wait_behind,
       {S::v_wait_ok},
       {S::v_wait, S::a_client, S::v_wait_label}},
  };
  for (const CheckKindWords& w : kWords)
    if (w.kind == kind) return &w;
  return nullptr;
}

std::string check_title(const std::string& name, std::string_view kind, Lang lang) {
  if (lang == Lang::en) return name;
  const CheckKindWords* words = check_kind_words(kind);
  return words ? tr(words->title, lang) : name;
}

std::string check_summary_words(const TraceCheck& check, const CheckInfo& info,
                                const std::vector<const ViolationRegion*>& violations,
                                const std::vector<const ViolationFacts*>& facts,
                                const TraceIndex& ix, Lang lang) {
  if (lang == Lang::en) return check.summary;
  if (!check.judged)
    return tr(check.judged_here ? S::not_judged_none : S::not_judged_backend, lang);
  if (violations.empty() || facts.size() != violations.size()) {
    const CheckKindWords* words = check_kind_words(info.kind);
    if (!words || words->ok.empty()) return check.summary;
    // dials_within counts closed connections instead when its `of` says so.
    auto of = info.text.find("of");
    const bool second = words->ok.size() > 1 && of != info.text.end() && of->second == "closes";
    return tr(words->ok[second ? 1 : 0], lang);
  }
  std::string out = violation_words(*violations[0], *facts[0], kTimeNeverUs, lang).sentence;
  if (violations.size() > 1)
    out = trf(S::more_summary, lang, {out, std::to_string(violations.size() - 1)});
  if (info.kind == "retries_bounded") {
    // The totals the check adds: every attempt, every transaction (a first attempt), aborts.
    const auto& attempts = ix.of_kind("tx_attempt");
    int64_t transactions = 0;
    for (size_t i : attempts)
      if (ix.event(i).num_or(F::tries, 1) == 1) transactions++;
    out = trf(S::v_retries_totals, lang,
              {out, std::to_string(attempts.size()), std::to_string(transactions),
               std::to_string(ix.of_kind("tx_aborted").size())});
  }
  return out;
}

}  // namespace redlab::gui
