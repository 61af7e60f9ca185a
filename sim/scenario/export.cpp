#include "sim/scenario/export.h"

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace redlab::scenario {

namespace {

using ojson = nlohmann::ordered_json;

}  // namespace

std::string chrome_trace_json(const Trace& trace) {
  ojson events = ojson::array();
  {
    ojson m;
    m["name"] = "process_name";
    m["ph"] = "M";
    m["pid"] = 1;
    m["args"]["name"] = "redlab";
    events.push_back(m);
  }
  std::map<std::string, int> tids;
  auto tid = [&](const std::string& actor) {
    std::string name = actor.empty() ? "run" : actor;
    auto [it, fresh] = tids.try_emplace(name, int(tids.size()) + 1);
    if (fresh) {
      ojson m;
      m["name"] = "thread_name";
      m["ph"] = "M";
      m["pid"] = 1;
      m["tid"] = it->second;
      m["args"]["name"] = name;
      events.push_back(m);
    }
    return it->second;
  };
  auto complete = [&](const std::string& actor, const std::string& name, const std::string& cat,
                      TimeUs from, TimeUs to, const std::string& detail) {
    ojson e;
    e["name"] = name;
    e["cat"] = cat;
    e["ph"] = "X";
    e["ts"] = from;
    e["dur"] = std::max<TimeUs>(to - from, 1);
    e["pid"] = 1;
    e["tid"] = tid(actor);
    if (!detail.empty()) e["args"]["detail"] = detail;
    events.push_back(e);
  };
  // Open spans: (actor, connection) -> command; actor -> work/sleep; (actor, lock) -> hold.
  std::map<std::pair<std::string, int64_t>, std::vector<const TraceEvent*>> commands;
  std::map<std::string, const TraceEvent*> waits;
  std::map<std::pair<std::string, std::string>, const TraceEvent*> holds;
  // "lock:job:42 token=..." and "lock:job:42: extend returned 0" both name lock:job:42.
  auto lock_of = [](const std::string& text) {
    std::string lock = text.substr(0, text.find(' '));
    if (!lock.empty() && lock.back() == ':') lock.pop_back();
    return lock;
  };
  const auto& all = trace.events();
  for (const TraceEvent& e : all) {
    tid(e.actor);
    if (e.kind == "command") {
      commands[{e.actor, e.connection}].push_back(&e);
      continue;
    }
    if (e.kind == "reply" || e.kind == "read_timeout" || e.kind == "eof") {
      auto it = commands.find({e.actor, e.connection});
      if (it != commands.end() && !it->second.empty()) {
        const TraceEvent* c = it->second.front();
        it->second.erase(it->second.begin());
        complete(e.actor, c->text, "command", c->time_us, e.time_us, e.kind + ": " + e.text);
        if (e.kind == "reply") continue;
      }
    }
    if (e.kind == "work" || e.kind == "sleep") {
      waits[e.actor] = &e;
      continue;
    }
    if ((e.kind == "work_done" || e.kind == "sleep_done") && waits.count(e.actor)) {
      const TraceEvent* w = waits[e.actor];
      complete(e.actor, w->kind + " " + w->text, w->kind, w->time_us, e.time_us, "");
      waits.erase(e.actor);
      continue;
    }
    if (e.kind == "lock_acquired") holds[{e.actor, lock_of(e.text)}] = &e;
    if (e.kind == "lock_released" || e.kind == "lock_lost" || e.kind == "lock_release_failed") {
      auto it = holds.find({e.actor, lock_of(e.text)});
      if (it != holds.end()) {
        complete(e.actor, "holds " + it->first.second, "lock", it->second->time_us, e.time_us,
                 e.kind);
        holds.erase(it);
      }
    }
    if (e.kind == "actor_end") {
      for (auto it = holds.begin(); it != holds.end();) {
        if (it->first.first == e.actor) {
          complete(e.actor, "holds " + it->first.second, "lock", it->second->time_us, e.time_us,
                   "actor ended");
          it = holds.erase(it);
        } else {
          ++it;
        }
      }
    }
    ojson i;
    i["name"] = e.kind;
    i["cat"] = "event";
    i["ph"] = "i";
    i["s"] = "t";
    i["ts"] = e.time_us;
    i["pid"] = 1;
    i["tid"] = tid(e.actor);
    if (!e.text.empty()) i["args"]["text"] = e.text;
    if (e.step >= 0) i["args"]["step"] = e.step;
    if (e.attempt >= 0) i["args"]["attempt"] = e.attempt;
    if (e.connection >= 0) i["args"]["connection"] = e.connection;
    events.push_back(i);
  }
  TimeUs end = all.empty() ? 0 : all.back().time_us;
  // Commands that never got a reply (SUBSCRIBE, a call cut by the end of the run): markers.
  for (auto& [key, list] : commands)
    for (const TraceEvent* c : list) {
      ojson i;
      i["name"] = c->text;
      i["cat"] = "command";
      i["ph"] = "i";
      i["s"] = "t";
      i["ts"] = c->time_us;
      i["pid"] = 1;
      i["tid"] = tid(key.first);
      i["args"]["detail"] = "no reply";
      events.push_back(i);
    }
  for (auto& [key, h] : holds)
    complete(key.first, "holds " + key.second, "lock", h->time_us, end, "run ended");
  ojson doc;
  doc["traceEvents"] = events;
  doc["displayTimeUnit"] = "ms";
  ojson meta = ojson::object();
  for (auto& [k, v] : trace.meta()) meta[k] = v;
  doc["metadata"] = meta;
  // Invalid UTF-8 in a text (binary replies) becomes U+FFFD, as in trace_to_json.
  return doc.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace) + "\n";
}

}  // namespace redlab::scenario
