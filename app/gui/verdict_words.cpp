// The facts of a violation, read from the trace's typed events at its moment, and its words
// in a language (see verdict_words.h). One function per check kind finds its facts; the same
// facts are worded by one switch, so a form's English, Russian and Czech cannot drift apart.
#include "app/gui/verdict_words.h"

#include <algorithm>
#include <cctype>
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

void stock_facts(const ViolationRegion& v, const TraceIndex& ix, ViolationFacts& f) {
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
  if (kind == "stock_matches_sales") stock_facts(v, ix, f);
  if (kind == "all_sold") all_sold_facts(check, ix, f);
  if (kind == "retries_bounded") retries_facts(v, check, ix, f);
  return f;
}

ViolationWords violation_words(const ViolationRegion& v, const ViolationFacts& f, TimeUs horizon_us,
                               Lang lang) {
  ViolationWords w;
  const auto& s = f.s;
  const auto& n = f.n;
  auto tw = [&](TimeUs t) { return time_words(t, lang); };
  auto num = [](int64_t x) { return std::to_string(x); };
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
  }
  // Still going at the horizon: its end (and what it adds up to) is not told yet.
  if (horizon_us < v.to_us) w.sentence = trf(S::v_ongoing, lang, {w.label, from});
  return w;
}

std::string check_title(const std::string& name, std::string_view kind, Lang lang) {
  if (lang == Lang::en) return name;
  static const std::pair<std::string_view, S> kTitles[] = {
      {"mutual_exclusion", S::check_mutual_exclusion},
      {"no_foreign_unlock", S::check_no_foreign_unlock},
      {"release_removes_own_lock", S::check_release_removes_own_lock},
      {"acquire_took_lock", S::check_acquire_took_lock},
      {"script_keys_declared", S::check_script_keys_declared},
      {"no_stale_write", S::check_no_stale_write},
      {"no_forged_fence", S::check_no_forged_fence},
      {"no_lost_messages", S::check_no_lost_messages},
      {"no_pool_timeouts", S::check_no_pool_timeouts},
      {"no_read_timeouts", S::check_no_read_timeouts},
      {"no_oversell", S::check_no_oversell},
      {"stock_matches_sales", S::check_stock_matches_sales},
      {"all_sold", S::check_all_sold},
      {"retries_bounded", S::check_retries_bounded},
  };
  for (const auto& [k, title] : kTitles)
    if (k == kind) return tr(title, lang);
  return name;
}

std::string check_summary_words(const TraceCheck& check, const CheckInfo& info,
                                const std::vector<const ViolationRegion*>& violations,
                                const std::vector<const ViolationFacts*>& facts,
                                const TraceIndex& ix, Lang lang) {
  if (lang == Lang::en) return check.summary;
  if (!check.judged)
    return tr(check.judged_here ? S::not_judged_none : S::not_judged_backend, lang);
  if (violations.empty() || facts.size() != violations.size()) {
    const std::string_view k = info.kind;
    const S ok = k == "mutual_exclusion"           ? S::v_mutex_ok
                 : k == "no_foreign_unlock"        ? S::v_foreign_ok
                 : k == "release_removes_own_lock" ? S::v_release_ok
                 : k == "acquire_took_lock"        ? S::v_acquire_ok
                 : k == "script_keys_declared"     ? S::v_script_keys_ok
                 : k == "no_stale_write"           ? S::v_stale_ok
                 : k == "no_forged_fence"          ? S::v_forged_ok
                 : k == "no_lost_messages"         ? S::v_lost_ok
                 : k == "no_pool_timeouts"         ? S::v_pool_ok
                 : k == "no_read_timeouts"         ? S::v_read_ok
                 : k == "no_oversell"              ? S::v_oversell_ok
                 : k == "stock_matches_sales"      ? S::v_stock_ok
                 : k == "all_sold"                 ? S::v_all_sold_ok
                 : k == "retries_bounded"          ? S::v_retries_ok
                                                   : S::count_;
    return ok == S::count_ ? check.summary : tr(ok, lang);
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
