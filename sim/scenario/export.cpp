// See export.h. Spans come from the trace's own span ids (through TraceIndex): a span that
// began and ended is a complete event ("X") named after the event that began it; a span
// still open at the end runs to the end of the trace; everything else is an instant event.
// Typed fields go into args, so a viewer shows the lock, the key, the argv, ...
#include "sim/scenario/export.h"

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/core/trace_index.h"

namespace redlab::scenario {

namespace {

using ojson = nlohmann::ordered_json;

ojson args_of(const TraceEvent& e) {
  ojson args = ojson::object();
  if (!e.text.empty()) args["text"] = e.text;
  if (e.step >= 0) args["step"] = e.step;
  if (e.attempt >= 0) args["attempt"] = e.attempt;
  if (e.connection >= 0) args["connection"] = e.connection;
  for (const TraceField& f : e.fields) {
    const std::string key(field_info(f.key).name);
    if (const int64_t* n = std::get_if<int64_t>(&f.value))
      args[key] = *n;
    else if (const std::string* s = std::get_if<std::string>(&f.value))
      args[key] = *s;
    else
      args[key] = std::get<std::vector<std::string>>(f.value);
  }
  return args;
}

// A span's name: what began it, with its most telling field.
std::string span_name(const TraceEvent& e) {
  if (const auto* argv = e.list(F::argv); argv && !argv->empty() && e.kind == "command")
    return (*argv)[0];
  if (const std::string* lock = e.str(F::lock)) {
    if (e.kind == "lock_acquired") return "holds " + *lock;
    return e.kind + " " + *lock;
  }
  if (const std::string* cmd = e.str(F::cmd)) return *cmd;
  return e.kind;
}

}  // namespace

std::string chrome_trace_json(const Trace& trace) {
  TraceIndex ix(trace);
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
  // Lanes first, in the trace's order: actors, then servers.
  for (const std::string& a : ix.actors()) tid(a);
  for (const std::string& s : ix.servers()) tid(s);
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    ojson x;
    if (e.span > 0 || e.kind == "served" || e.kind == "backoff") {
      // A span: to its end event, or a duration the event carries (the server's service
      // time, a backoff), or to the end of the trace if it never ended.
      TimeUs to = ix.end_us();
      size_t end = ix.end_of(i);
      if (end != kNoEvent)
        to = ix.event(end).time_us;
      else if (const int64_t* d = e.num(F::duration_us); d && e.span == 0)
        to = e.time_us + *d;
      x["name"] = span_name(e);
      x["cat"] = e.kind;
      x["ph"] = "X";
      x["ts"] = e.time_us;
      x["dur"] = std::max<TimeUs>(to - e.time_us, 1);
      x["pid"] = 1;
      x["tid"] = tid(e.actor);
      ojson args = args_of(e);
      if (end != kNoEvent) args["end"] = ix.event(end).kind;
      if (!args.empty()) x["args"] = args;
      events.push_back(x);
      continue;
    }
    x["name"] = e.kind;
    x["cat"] = "event";
    x["ph"] = "i";
    x["s"] = "t";
    x["ts"] = e.time_us;
    x["pid"] = 1;
    x["tid"] = tid(e.actor);
    ojson args = args_of(e);
    if (!args.empty()) x["args"] = args;
    events.push_back(x);
  }
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
