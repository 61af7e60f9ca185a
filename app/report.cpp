// See report.h. Everything here reads the trace through TraceIndex: meta for the run's
// inputs, spans for what each actor was doing, the check/violation/expectation events for
// the verdicts. Nothing is parsed from an event's text.
#include "app/report.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "app/files.h"
#include "sim/core/cmdline.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"

namespace redlab::app {

using ojson = nlohmann::ordered_json;
using scenario::format_time;

namespace {

// The largest trace `show` reads (a million-event trace is about 130 MB at most in v1, under
// 100 MB in v2; this bounds the memory a hostile file can take).
constexpr size_t kTraceBytesMax = size_t(256) << 20;

std::string meta(const Trace& t, const std::string& key, const std::string& def = "") {
  return t.meta_or(key, def);
}

// "k1=v1 k2=v2" of the meta keys under `prefix` (sorted, as meta is).
std::string meta_pairs(const Trace& t, const std::string& prefix) {
  std::string out;
  for (const auto& [k, v] : t.meta())
    if (k.rfind(prefix, 0) == 0)
      out += (out.empty() ? "" : " ") + k.substr(prefix.size()) + "=" + v;
  return out;
}

// ---- the text timeline ----

// One row per actor: what it was doing in each column of time.
std::string chart(const TraceIndex& ix, int width) {
  TimeUs end = std::max<TimeUs>(ix.end_us(), 1);
  // A round column size, so that the axis reads 0s 5s 10s.
  TimeUs col = 1000;
  for (TimeUs nice :
       {1000LL, 2000LL, 5000LL, 10000LL, 20000LL, 50000LL, 100000LL, 200000LL, 250000LL, 500000LL,
        1000000LL, 2000000LL, 5000000LL, 10000000LL, 30000000LL, 60000000LL}) {
    col = nice;
    if (nice * width >= end) break;
  }
  width = int(std::min<TimeUs>(width, (end + col - 1) / col));
  const std::vector<std::string>& actors = ix.actors();
  size_t name_w = 6;
  for (auto& a : actors) name_w = std::max(name_w, a.size() + 2);
  std::map<std::string, std::string> rows;
  for (auto& a : actors) rows[a] = std::string(width, ' ');
  auto paint = [&](const std::string& actor, TimeUs from, TimeUs to, char c, int rank) {
    static const std::string order = " .-w~#!P";  // later wins
    auto it = rows.find(actor);
    if (it == rows.end()) return;
    int a = int(std::min<TimeUs>(width - 1, from / col));
    int b = int(std::min<TimeUs>(width - 1, std::max(from, to - 1) / col));
    for (int i = a; i <= b; i++)
      if (int(order.find(it->second[i])) < rank) it->second[i] = c;
  };
  auto span_to = [&](size_t i) {
    size_t e = ix.end_of(i);
    return e == kNoEvent ? end : ix.event(e).time_us;
  };
  std::map<std::string, TimeUs> started;
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.kind == "actor_start") started[e.actor] = e.time_us;
    if (e.kind == "actor_end" && started.count(e.actor)) {
      paint(e.actor, started[e.actor], e.time_us, '.', 1);
      started.erase(e.actor);
    }
  }
  for (auto& [a, t] : started) paint(a, t, end, '.', 1);
  for (size_t i : ix.of_kind("sleep"))
    paint(ix.event(i).actor, ix.event(i).time_us, span_to(i), '-', 2);
  for (size_t i : ix.of_kind("pool_wait"))
    paint(ix.event(i).actor, ix.event(i).time_us, span_to(i), 'w', 3);
  for (size_t i : ix.of_kind("work"))
    paint(ix.event(i).actor, ix.event(i).time_us, span_to(i), '~', 4);
  for (size_t i : ix.of_kind("lock_acquired"))
    paint(ix.event(i).actor, ix.event(i).time_us, span_to(i), '#', 5);
  for (const char* kind : {"read_timeout", "pool_timeout", "eof", "lock_lost", "abandon",
                           "tx_gave_up", "resource_reject", "pubsub_disconnected"})
    for (size_t i : ix.of_kind(kind))
      paint(ix.event(i).actor, ix.event(i).time_us, ix.event(i).time_us + 1, '!', 6);
  // A pause is traced on the paused host: an actor's own process, or a shared client's
  // (whose actors have no row of that name).
  for (size_t i : ix.of_kind("fault"))
    if (ix.event(i).str_or(F::fault) == "pause")
      paint(ix.event(i).actor, ix.event(i).time_us, span_to(i), 'P', 7);
  std::ostringstream out;
  // Axis: a label every 10 columns.
  std::string axis(width + 10, ' ');
  for (int i = 0; i < width; i += 10) {
    std::string label = i == 0 ? std::string("0s") : format_time(TimeUs(i) * col);
    if (label.size() > 3 && label.substr(label.size() - 4) == ".0 s")
      label = label.substr(0, label.size() - 4) + "s";
    axis.replace(i, label.size(), label);
  }
  out << std::string(name_w, ' ') << axis.substr(0, width + 6) << "\n";
  for (auto& a : actors) out << a << std::string(name_w - a.size(), ' ') << rows[a] << "\n";
  out << std::string(name_w, ' ') << "one column = " << format_time(col)
      << "   # holds a lock  ~ works  - sleeps  w waits for the pool  . active  ! error/lost  P "
         "paused\n";
  return out.str();
}

bool story_event(const TraceEvent& e) {
  static const std::set<std::string, std::less<>> kinds = {"lock_acquired",
                                                           "lock_busy",
                                                           "lock_released",
                                                           "lock_lost",
                                                           "lock_gave_up",
                                                           "lock_extend_failed",
                                                           "abandon",
                                                           "resource_accept",
                                                           "resource_reject",
                                                           "fault",
                                                           "watchdog_start",
                                                           "tx_committed",
                                                           "tx_gave_up",
                                                           "tx_skipped",
                                                           "pool_timeout",
                                                           "read_timeout",
                                                           "pubsub_disconnected",
                                                           "pubsub_resubscribe",
                                                           "subscribe_failed",
                                                           "consume_error",
                                                           "net_server_close",
                                                           "net_buffer_lost",
                                                           "note",
                                                           "narration",
                                                           "setup",
                                                           "lock_not_held",
                                                           "server_command",
                                                           "run_bound",
                                                           "key_expired",
                                                           "client_cut",
                                                           "script_killed",
                                                           "lock_release_failed"};
  return kinds.count(e.kind) != 0;
}

// The run's interventions (meta intervention.1, .2, ...), in the order they were given.
std::vector<std::string> interventions(const Trace& trace) {
  std::vector<std::string> out;
  for (size_t i = 1;; i++) {
    auto it = trace.meta().find("intervention." + std::to_string(i));
    if (it == trace.meta().end()) return out;
    out.push_back(it->second);
  }
}

}  // namespace

std::string report_text(const Trace& trace) {
  TraceIndex ix(trace);
  std::ostringstream out;
  out << meta(trace, "scenario") << ": " << meta(trace, "title") << "\n";
  out << "seed " << meta(trace, "seed");
  std::string v = meta_pairs(trace, "variant.");
  if (!v.empty()) out << "   variant " << v;
  out << "\n";
  std::string p = meta_pairs(trace, "param.");
  if (!p.empty()) out << "params " << p << "\n";
  // Real backends: what each server was (INFO server): "servers redis (valkey 8.0.1)".
  std::string servers;
  for (const auto& [k, v] : trace.meta())
    if (k.rfind("server.", 0) == 0)
      servers += (servers.empty() ? "" : ", ") + k.substr(7) + " (" + v + ")";
  if (!servers.empty()) out << "servers " << servers << "\n";
  for (const std::string& line : interventions(trace)) out << "intervention " << line << "\n";
  out << "\n" << chart(ix, 60) << "\n";
  out << "events\n";
  size_t shown = 0, hidden = 0;
  for (const TraceEvent& e : trace.events()) {
    if (!story_event(e)) continue;
    if (shown >= 80) {
      hidden++;
      continue;
    }
    std::string t = format_time(e.time_us);
    out << std::string(t.size() < 9 ? 9 - t.size() : 0, ' ') << t << "  "
        << (e.actor.empty() ? std::string("--") : e.actor) << "  " << e.kind;
    if (!e.text.empty()) out << "  " << e.text;
    out << "\n";
    shown++;
  }
  if (hidden) out << "  ... " << hidden << " more (write them all with --trace FILE)\n";
  out << "\nchecks\n";
  for (const TraceCheck& c : ix.checks()) {
    out << "  "
        << (!c.judged ? "n/a     "
            : c.ok    ? "holds   "
                      : "VIOLATED")
        << "  " << c.name << ": " << c.summary;
    if (c.expected)
      out << (!c.judged_here        ? "   [left out of the expectation on this backend]"
              : !c.judged           ? "   [NOT AS EXPECTED: nothing to judge]"
              : c.ok == *c.expected ? "   [as expected]"
                                    : "   [NOT AS EXPECTED]");
    out << "\n";
    size_t shown_more = 0;
    bool first = true;
    for (const TraceViolation& viol : ix.violations()) {
      if (viol.check != c.name) continue;
      if (first) {  // the first is the summary
        first = false;
        continue;
      }
      if (++shown_more >= 5) break;
      out << "            " << viol.text << "\n";
    }
  }
  bool met = ix.expectation_met().value_or(true);
  std::string backend = meta(trace, "backend");
  std::string verdict = met ? "expectation met" : "expectation NOT met";
  // On a real backend some checks are left out: say on what the verdict stands.
  if (size_t at = ix.expectation_text().find(" on the checks"); at != std::string::npos)
    verdict += ix.expectation_text().substr(at);
  // The run's inputs say so (its meta), not the expectation event's words.
  if (!interventions(trace).empty())
    verdict =
        "no expectation (the run has interventions; the file's expectations are for its own run)";
  out << "\n"
      << verdict << " (" << trace.size() << " trace events, " << format_time(ix.end_us())
      << (backend == "fake" ? " of virtual time" : " of wall-clock time") << ")\n";
  return out.str();
}

ojson report_json(const Trace& trace) {
  TraceIndex ix(trace);
  ojson j;
  j["scenario"] = meta(trace, "scenario");
  j["backend"] = meta(trace, "backend");
  if (trace.meta().count("time_scale")) j["time_scale"] = std::stod(meta(trace, "time_scale"));
  j["seed"] = std::stoull(meta(trace, "seed", "0"));
  ojson variant = ojson::object(), params = ojson::object();
  for (const auto& [k, v] : trace.meta()) {
    if (k.rfind("variant.", 0) == 0) variant[k.substr(8)] = v;
    if (k.rfind("param.", 0) == 0) params[k.substr(6)] = std::stoll(v);
  }
  j["variant"] = variant;
  j["params"] = params;
  // Real backends: each server's program and version ("server.redis": "valkey 8.0.1").
  ojson servers = ojson::object();
  for (const auto& [k, v] : trace.meta()) {
    if (k.rfind("server.", 0) != 0) continue;
    size_t blank = v.find(' ');
    servers[k.substr(7)] = {{"software", v.substr(0, blank)},
                            {"version", blank == std::string::npos ? "" : v.substr(blank + 1)}};
  }
  if (!servers.empty()) j["servers"] = servers;
  if (auto lines = interventions(trace); !lines.empty()) j["interventions"] = lines;
  ojson checks = ojson::array();
  for (const TraceCheck& c : ix.checks()) {
    ojson cj;
    cj["name"] = c.name;
    cj["check"] = c.kind;
    cj["ok"] = c.ok;
    cj["violations"] = c.violations;
    cj["summary"] = c.summary;
    if (c.expected) cj["expected"] = *c.expected;
    if (!c.judged) cj["judged"] = false;
    if (!c.judged_here) cj["judged_here"] = false;
    ojson details = ojson::array();
    for (const TraceViolation& v : ix.violations()) {
      if (v.check != c.name) continue;
      ojson d;
      d["from_us"] = v.from_us;
      d["to_us"] = v.to_us;
      d["who"] = v.who;
      d["text"] = v.text;
      details.push_back(d);
    }
    cj["details"] = details;
    checks.push_back(cj);
  }
  j["checks"] = checks;
  j["expectation_met"] = ix.expectation_met().value_or(true);
  ojson left_out = ojson::array();
  for (const TraceCheck& c : ix.checks())
    if (c.expected && !c.judged_here) left_out.push_back(c.name);
  if (!left_out.empty()) j["not_judged_here"] = left_out;
  const std::vector<size_t>& ends = ix.of_kind("run_end");
  j["events"] = ends.empty() ? 0 : trace.events()[ends.back()].num_or(F::count, 0);
  j["end_us"] = ends.empty() ? ix.end_us() : trace.events()[ends.back()].time_us;
  return j;
}

namespace {

// "9.8 s", "350 ms", "no TTL", "expired"
std::string ttl_left(const KeyState& k, int64_t clock_ms) {
  if (k.expire_at_ms < 0) return "no TTL";
  if (clock_ms < 0) return "TTL unknown";
  int64_t left_ms = k.expire_at_ms - clock_ms;
  if (left_ms <= 0) return "expiring";
  return format_time(left_ms * 1000) + " left";
}

}  // namespace

std::string keyspace_text(const Trace& trace, TimeUs at_us) {
  TraceIndex ix(trace);
  std::ostringstream out;
  out << "keyspace at " << format_time(at_us) << "\n";
  for (const std::string& server : ix.servers()) {
    out << server;
    if (!ix.has_server_events(server)) {
      out << ": not observed (a real server: the trace holds what clients saw, not the server's "
             "keys)\n";
      continue;
    }
    std::vector<KeyState> keys = ix.keyspace_at(server, at_us);
    int64_t clock = ix.server_clock_ms(server, at_us);
    out << ": " << keys.size() << (keys.size() == 1 ? " key" : " keys") << "\n";
    for (const KeyState& k : keys) {
      out << "  " << (k.db != 0 ? "db" + std::to_string(k.db) + " " : "") << quote_repr(k.key)
          << "  " << k.type << "  " << k.value << "  (" << ttl_left(k, clock) << ")\n";
    }
  }
  return out.str();
}

ojson keyspace_json(const Trace& trace, TimeUs at_us) {
  TraceIndex ix(trace);
  ojson j;
  j["at_us"] = at_us;
  ojson servers = ojson::array();
  for (const std::string& server : ix.servers()) {
    ojson sj;
    sj["server"] = server;
    sj["observed"] = ix.has_server_events(server);
    ojson keys = ojson::array();
    int64_t clock = ix.server_clock_ms(server, at_us);
    if (ix.has_server_events(server))
      for (const KeyState& k : ix.keyspace_at(server, at_us)) {
        ojson kj;
        kj["db"] = k.db;
        kj["key"] = k.key;
        kj["type"] = k.type;
        kj["value"] = k.value;
        if (k.expire_at_ms >= 0 && clock >= 0)
          kj["ttl_ms"] = std::max<int64_t>(0, k.expire_at_ms - clock);
        else
          kj["ttl_ms"] = -1;
        keys.push_back(kj);
      }
    sj["keys"] = keys;
    servers.push_back(sj);
  }
  j["servers"] = servers;
  return j;
}

int show_main(const std::vector<std::string>& args) {
  std::string path;
  bool json = false, keyspace = false;
  std::optional<int64_t> at_ms;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    std::string value;
    bool has_value = false;
    std::string flag = a;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      flag = a.substr(0, a.find('='));
      value = a.substr(a.find('=') + 1);
      has_value = true;
    }
    auto take = [&]() -> std::optional<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (flag == "--json") {
      json = true;
    } else if (flag == "--keyspace") {
      keyspace = true;
    } else if (flag == "--at-ms") {
      auto v = take();
      auto n = v ? scenario::parse_int(*v) : std::nullopt;
      if (!n || *n < 0) {
        std::cerr << "redlab: --at-ms needs a time in ms (0 or more)\n";
        return 2;
      }
      at_ms = *n;
    } else if (flag == "--help" || flag == "-h") {
      std::cout << "usage: redlab show TRACE.json [--json] [--keyspace --at-ms T]\n"
                   "  prints the report `redlab run` printed for the run that wrote the trace;\n"
                   "  --keyspace --at-ms T: each server's keyspace at T ms (the server's record)\n";
      return 0;
    } else if (a.rfind("-", 0) == 0) {
      std::cerr << "redlab: unknown option " << a << " for 'show' (see redlab show --help)\n";
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "redlab: unexpected argument '" << a << "' (one trace at a time)\n";
      return 2;
    }
  }
  if (path.empty()) {
    std::cerr << "redlab: 'show' needs a TRACE.json (written by redlab run --trace)\n";
    return 2;
  }
  if (keyspace != at_ms.has_value()) {
    std::cerr << "redlab: --keyspace and --at-ms go together (the keyspace at a time)\n";
    return 2;
  }
  std::string text;
  if (auto error = read_file(path, &text, kTraceBytesMax)) {
    std::cerr << "redlab: " << *error << "\n";
    return 2;
  }
  std::string error;
  std::optional<Trace> trace = trace_from_json(text, &error);
  if (!trace) {
    std::cerr << "redlab: " << path << ":" << error << "\n";
    return 2;
  }
  if (keyspace) {
    if (json)
      std::cout << keyspace_json(*trace, *at_ms * 1000).dump(2) << "\n";
    else
      std::cout << keyspace_text(*trace, *at_ms * 1000);
    return 0;
  }
  if (json)
    std::cout << report_json(*trace).dump(2) << "\n";
  else
    std::cout << report_text(*trace);
  // The same exit status as the run: 0 met its expectation, 1 did not.
  TraceIndex ix(*trace);
  return ix.expectation_met().value_or(true) ? 0 : 1;
}

}  // namespace redlab::app
