// See engine.h and engine_impl.h. This file is the run itself: its inputs, the world it
// builds, the actors' lives (start, the step loop, abandon, end), the faults' schedule, the
// narration and the verdicts. What each step, fault and check kind does is in its own file
// (steps/, faults/, checks/), found through the registries (kinds.h).
#include "sim/scenario/engine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "sim/client/client.h"
#include "sim/client/pubsub.h"
#include "sim/core/assert.h"
#include "sim/core/cmdline.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/fake/lua_budget.h"
#include "sim/fake/server.h"
#include "sim/fake/server_wide.h"
#include "sim/net/network.h"
#include "sim/net/process.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/run_needs.h"

namespace redlab::scenario {

// How a resource decides, for the trace meta and its resource_start event.
static std::string resource_words(const ResourceRt& r) {
  std::string out = r.check ? "checks fences" : "does not check fences";
  if (r.unique) out += "; one write per value";
  return out;
}

std::string format_time(TimeUs t) {
  if (t < 0) return "-" + format_time(-t);
  if (t < 1000000) return std::to_string(t / 1000) + " ms";
  // Tenths of a second, rounded down: exact integers, no floating point in output.
  return std::to_string(t / 1000000) + "." + std::to_string((t / 100000) % 10) + " s";
}

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

std::string reply_text(const Result& r) {
  if (!r.ok()) return r.error.text;
  const Reply& reply = r.reply;
  switch (reply.kind) {
    case Reply::Kind::Status:
    case Reply::Kind::Bulk:
    case Reply::Kind::Error:
      return reply.str;
    case Reply::Kind::Integer:
      return std::to_string(reply.integer);
    case Reply::Kind::Nil:
    case Reply::Kind::NilArray:
      return "nil";
    case Reply::Kind::Array:
      return format_short(reply, 200);
  }
  return "";
}

bool succeeded(const Result& r) {
  if (!r.ok()) return false;
  const Reply& reply = r.reply;
  if (reply.kind == Reply::Kind::Nil || reply.kind == Reply::Kind::NilArray) return false;
  if (reply.kind == Reply::Kind::Integer && reply.integer == 0) return false;
  if (reply.kind == Reply::Kind::Array && reply.elements.empty()) return false;
  return true;
}

RunResult Engine::run() {
  try {
    return run_world();
  } catch (...) {
    if (backend_) backend_->finish();
    throw;
  }
}

RunResult Engine::run_world() {
  resolve_inputs();
  backend_ = opt_.backend;
  if (!backend_) {
    own_backend_ = make_fake_backend();
    backend_ = own_backend_.get();
  }
  needs_ = refuse_server_wide_faults();
  // Lua on the fake: a script that never ends stops the run at this bound (lua_budget.h).
  fake::LuaInstructionBudget lua_budget(opt_.lua_instructions_max, [this](const char* sha) {
    if (!bound_reason_) {
      bound_reason_ = "lua";
      lua_bound_sha_ = sha;
    }
    scheduler_.stop();
  });
  build_world();
  for (auto& a : actors_) start_actor(*a);
  schedule_faults();
  schedule_narration();
  for (TimeUs t : opt_.probe_times_us)
    scheduler_.schedule_at(t, [this, t] {
      for (const ServerDef& def : sc_.servers) {
        if (!in_run(def)) continue;
        if (opt_.on_probe)
          if (auto k = backend_->keyspace(def.name)) opt_.on_probe(t, trace_.size(), def.name, *k);
        if (opt_.on_slowlog_probe)
          if (auto l = backend_->slowlog(def.name))
            opt_.on_slowlog_probe(t, trace_.size(), def.name, *l);
      }
    });
  TimeUs end = ms_to_us(dur_ms(sc_.duration_ms, nullptr, sc_.duration_where));
  auto r = backend_->run_until(end, opt_.events_max, opt_.cancel);
  result_.events = r.events_run;
  // A bound that stopped the run with nothing left to run is still the bound.
  result_.bound_hit = r.bound_hit || bound_reason_;
  result_.end_us = scheduler_.now_us();
  if (result_.bound_hit) {
    if (!bound_reason_) bound_reason_ = "events";
    std::string what = std::string(bound_reason_) == "steps"
                           ? std::to_string(opt_.steps_max) + " steps run"
                       : std::string(bound_reason_) == "trace"
                           ? "a trace of " + std::to_string(trace_.size()) + " events (" +
                                 std::to_string(trace_.bytes_estimate() >> 20) + " MiB)"
                           : std::to_string(r.events_run) + " events";
    std::string text = std::string(bound_reason_) == "lua"
                           ? lua_bound_text()
                           : "the run reached its bound of " + what + " at " +
                                 format_time(scheduler_.now_us()) +
                                 " of its time and stopped (a loop without a pause?)";
    put(TraceEvent{scheduler_.now_us(), "run_bound", "", -1, -1, -1, text}
            .with(F::count, static_cast<int64_t>(r.events_run))
            .with(F::reason, bound_reason_));
    Where at = last_step_ ? last_step_->where : Where{};
    result_.bound = sc_.file + ":" + std::to_string(at.pos.line) + ":" +
                    std::to_string(at.pos.column) + ": " + (at.path.empty() ? "" : at.path + ": ") +
                    text;
  }
  record_final_keys();
  for (auto& a : actors_) close_holds(*a, "run ended");
  put(TraceEvent{scheduler_.now_us(), "run_end", "", -1, -1, -1, ""}.with(
      F::count, static_cast<int64_t>(r.events_run)));
  // Pending callbacks hold references into the world: drop clients before the rest.
  for (auto& a : actors_) a->pubsubs.clear();
  backend_->finish();
  result_.backend_trouble = backend_->trouble();
  if (!result_.backend_trouble.empty())
    put(TraceEvent{scheduler_.now_us(), "backend_trouble", "", -1, -1, -1, result_.backend_trouble}
            .with(F::error, result_.backend_trouble));
  evaluate_checks();
  trace_.set_listener(nullptr);
  result_.trace = std::move(trace_);
  return std::move(result_);
}

// RunOptions::lua_instructions_max reached: which script, by the SHA-1 the fake reported.
std::string Engine::lua_bound_text() const {
  std::string script = "a script (SHA-1 " + lua_bound_sha_ + ")";
  for (const auto& [name, s] : scripts_)
    if (s.sha1_hex == lua_bound_sha_) script = "script " + name;
  return script + " ran more than " + std::to_string(opt_.lua_instructions_max) +
         " Lua instructions in this run (all its scripts together), and the run stopped at " +
         format_time(scheduler_.now_us()) +
         " of its time (a loop that never ends? --lua-instructions-max sets the bound)";
}

void Engine::resolve_inputs() {
  for (auto& [k, v] : opt_.variant) {
    const Variant* var = sc_.variant(k);
    if (!var) {
      std::vector<std::string> names;
      for (auto& x : sc_.variants) names.push_back(x.name);
      std::string list = comma_list(names);
      throw ScenarioError("--variant " + k + "=" + v + ": " + sc_.id + " has no variant \"" + k +
                          "\" (it has: " + (list.empty() ? "none" : list) + ")");
    }
    if (std::find(var->values.begin(), var->values.end(), v) == var->values.end()) {
      std::string list = comma_list(var->values);
      throw ScenarioError("--variant " + k + "=" + v + ": \"" + v + "\" is not a value of " + k +
                          " (values: " + list + ")");
    }
  }
  for (auto& [k, v] : opt_.set) {
    const Param* p = sc_.param(k);
    if (!p) {
      std::vector<std::string> names;
      for (auto& x : sc_.params) names.push_back(x.name);
      std::string list = comma_list(names);
      throw ScenarioError("--set " + k + "=" + std::to_string(v) + ": " + sc_.id +
                          " has no parameter \"" + k +
                          "\" (it has: " + (list.empty() ? "none" : list) + ")");
    }
    if (v < p->min || v > p->max)
      throw ScenarioError("--set " + k + "=" + std::to_string(v) + ": outside " + k + "'s range [" +
                          std::to_string(p->min) + ", " + std::to_string(p->max) + "]");
  }
  for (auto& [k, v] : opt_.scripts)
    if (!sc_.script(k))
      throw ScenarioError("--script " + k + ": " + sc_.id + " has no script \"" + k + "\"");
  for (const Variant& v : sc_.variants) {
    auto it = opt_.variant.find(v.name);
    result_.variant[v.name] = it == opt_.variant.end() ? v.def : it->second;
  }
  for (const Param& p : sc_.params) {
    auto it = opt_.set.find(p.name);
    result_.params[p.name] = it == opt_.set.end() ? p.def : it->second;
  }
  // lookup()'s answers for them, as text, made once: the first of a name wins.
  resolved_text_["seed"] = std::to_string(opt_.seed);
  for (auto& [k, v] : result_.params) resolved_text_.emplace(k, std::to_string(v));
  for (auto& [k, v] : result_.variant) resolved_text_.emplace(k, v);
}

// DEBUG SLEEP takes seconds, not a duration parameter in ms: at a time scale its line is
// written with the file's own values (DEBUG SLEEP ${report_ms/1000}.…) and its seconds scaled
// here, once; str() would scale the ms parameter and this the seconds again.
template <typename W>
Argv Engine::command_of(const Template& t, const ActorRt& a, const W& w) const {
  const bool scaled = opt_.time_scale != 1.0;
  const bool sleep = scaled && is_debug_sleep(t.source());
  std::string line = sleep ? eval(t, &a, w) : str(t, &a, w);
  auto argv = split_args(line);
  if (!argv || argv->empty()) fail(w, "\"" + line + "\" is not a command line");
  if (scaled && argv->size() == 3 && upper((*argv)[0]) == "DEBUG" && upper((*argv)[1]) == "SLEEP") {
    char* end = nullptr;
    double secs = std::strtod((*argv)[2].c_str(), &end);
    if (end && *end == '\0' && secs > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", secs * opt_.time_scale);
      (*argv)[2] = buf;
    }
  }
  return *argv;
}

Argv Engine::command(ActorRt& a, const Step& s, const char* key) const {
  const Template* t = s.t(key);
  REDLAB_ASSERT(t && "a command line field the step has");
  return command_of(*t, a, field(s, key));
}

std::vector<Argv> Engine::commands(ActorRt& a, const Step& s, const char* key) const {
  std::vector<Argv> out;
  if (const auto* l = s.l(key))
    for (size_t i = 0; i < l->size(); i++)
      out.push_back(
          command_of((*l)[i], a,
                     Where{s.where.pos, s.where.path + "." + key + "[" + std::to_string(i) + "]"}));
  return out;
}

std::string Engine::step_choice(ActorRt& a, const Step& s, const char* key) const {
  const FieldSpec* f = find_field(s.kind->fields, key);
  REDLAB_ASSERT(f && f->choices && "a field with choices of the step's kind");
  std::vector<std::string> words = choice_words(f->choices);
  std::string value = step_str(a, s, key, words[0]);
  if (std::find(words.begin(), words.end(), value) == words.end())
    fail(field(s, key), "\"" + value + "\": expected " + choice_list(f->choices, false));
  return value;
}

std::string Engine::upper(std::string x) {
  for (char& c : x) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return x;
}

// ---------------------------------------------------------------------------------
// Safety on servers redlab does not own (DESIGN.md, "Real servers: safety")
// ---------------------------------------------------------------------------------
// Why a command line acts on the whole server, not only the run's keys ("DEBUG acts on
// the whole server"), or "" (sim/fake/server_wide.h, the list the real fabric uses too).
std::string Engine::server_wide(const std::string& line) {
  auto argv = split_args(line);
  return argv ? fake::server_wide_command(*argv).value_or("") : "";
}

void Engine::check_steps_on_shared(const std::vector<Step>& steps, const std::string& whose) const {
  for (const Step& s : steps) {
    // Command lines, wherever the kind has them (its fields' types say where).
    std::vector<const Template*> lines;
    for (const FieldSpec& f : s.kind->fields) {
      if (f.type == FieldType::CommandLine) {
        if (const Template* t = s.t(f.key)) lines.push_back(t);
      } else if (f.type == FieldType::Commands) {
        if (const auto* l = s.l(f.key))
          for (const Template& t : *l) lines.push_back(&t);
      }
    }
    for (const Template* t : lines)
      if (std::string why = server_wide(t->source()); !why.empty())
        fail(s.where, why + " (" + whose + "), not only this run's keys, on " +
                          backend_->describe() + ": " + kRefusalHint);
    check_steps_on_shared(s.body, whose);
    check_steps_on_shared(s.orelse, whose);
  }
}

// Refuses, before anything runs, what would disturb a server redlab did not start: faults
// that act on the whole server, server config, server-wide commands in steps and setup.
// Returns what the run needs from such a server (its ACL user is made of it; the text scans
// here only give the earlier, friendlier message).
RunNeeds Engine::refuse_server_wide_faults() const {
  RunNeeds needs = run_needs(
      sc_, opt_.scripts, opt_.allow_server_faults,
      NeedsEval{[this](const Cond& c, const Where& w) { return test(c, nullptr, w); },
                [this](const Template& t, const Where& w) { return str(t, nullptr, w); }});
  bool shared = !backend_->owns_servers();
  for (const FaultDef& f : sc_.faults) {
    if (f.when && !test(*f.when, nullptr, f.where)) continue;
    std::string at = " at " + format_time(ms_to_us(num(f.at_ms, nullptr, f.where)));
    if (!f.server.empty() && !server_in_run(f.server))
      fail(Where{f.where.pos, f.where.path + ".server"},
           f.op + at + ": " + f.server + " is not in this run (servers." + f.server + ".when)");
    if (f.kind->refuse) f.kind->refuse(*this, f, at);
  }
  if (!shared || opt_.allow_server_faults) return needs;
  for (const ServerDef& def : sc_.servers)
    if (in_run(def) && !def.config.empty())
      fail(config_where(def, 0), "CONFIG SET " + def.config[0].first +
                                     " changes the whole server " + backend_->describe() + ": " +
                                     kRefusalHint);
  for (const SetupCommand& c : sc_.setup) {
    if (c.when && !test(*c.when, nullptr, c.where)) continue;
    if (std::string why = server_wide(c.cmd.source()); !why.empty())
      fail(c.where, why + " (setup), not only this run's keys, on " + backend_->describe() + ": " +
                        kRefusalHint);
  }
  for (const ActorDef& def : sc_.actors) {
    if (def.when && !test(*def.when, nullptr, def.where)) continue;
    check_steps_on_shared(def.steps, "actor " + def.name);
  }
  // Scripts: only KEYS[] are put under the run's prefix, so a script that calls a
  // server-wide command, or lists keys (KEYS, SCAN, RANDOMKEY: it would find the user's),
  // cannot run on a shared server. Exercise scripts (--script) are checked the same way.
  for (const ScriptDef& def : sc_.scripts) {
    auto it = opt_.scripts.find(def.name);
    const std::string& source = it == opt_.scripts.end() ? def.source : it->second;
    size_t at = 0;
    if (std::string what = script_server_wide(source, &at); !what.empty()) {
      std::string message = "script " + def.name + " calls " + what +
                            ", which reaches beyond this run's keys on " + backend_->describe() +
                            ": " + kRefusalHint;
      // A replaced script (--script FILE.lua) is located in its own file.
      auto path = opt_.script_paths.find(def.name);
      if (it != opt_.scripts.end() && path != opt_.script_paths.end()) {
        size_t line =
            1 + static_cast<size_t>(std::count(
                    source.begin(), source.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
        size_t line_start = source.rfind('\n', at == 0 ? 0 : at - 1);
        size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
        throw ScenarioError(path->second + ":" + std::to_string(line) + ":" +
                            std::to_string(column) + ": " + message);
      }
      fail(def.where, message);
    }
  }
  return needs;
}

// The first redis.call / redis.pcall in a Lua source whose command (a string literal) is
// server-wide or lists keys; "" if none.
std::string Engine::script_server_wide(const std::string& source, size_t* found_at) {
  for (const char* call : {"redis.call", "redis.pcall"}) {
    for (size_t at = source.find(call); at != std::string::npos; at = source.find(call, at + 1)) {
      size_t i = at + std::strlen(call);
      auto skip = [&] {
        while (i < source.size() && std::isspace(static_cast<unsigned char>(source[i]))) i++;
      };
      auto literal = [&]() -> std::string {
        skip();
        if (i >= source.size() || (source[i] != '\'' && source[i] != '"')) return "";
        char quote = source[i++];
        size_t end = source.find(quote, i);
        if (end == std::string::npos) return "";
        std::string word = source.substr(i, end - i);
        i = end + 1;
        return word;
      };
      skip();
      if (i >= source.size() || source[i] != '(') continue;
      i++;
      std::string name = literal();
      if (name.empty()) continue;
      skip();
      std::string sub;
      if (i < source.size() && source[i] == ',') {
        i++;
        sub = literal();
      }
      // KEYS and SCAN inside a script are not prefixed (only KEYS[] are): they list the
      // user's keys.
      if (upper(name) == "KEYS" || upper(name) == "SCAN" ||
          fake::server_wide_command({name, sub})) {
        if (found_at) *found_at = at;
        return upper(name);
      }
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------
void Engine::build_world() {
  bool anchored = false;
  for (const Note& n : sc_.narration) anchored = anchored || n.on.has_value();
  if (opt_.on_event || anchored)
    trace_.set_listener([this](const TraceEvent& e) { on_trace_event(e); });
  // A core scenario's run is a few hundred to a few thousand events: start with room for
  // them rather than move every event on each of the first ten doublings.
  trace_.reserve(1024);
  trace_.set_budget(Trace::Budget{opt_.trace_bytes_max, opt_.trace_events_max, [this] {
                                    if (!bound_reason_) bound_reason_ = "trace";
                                    scheduler_.stop();
                                  }});
  trace_.set_meta("scenario", sc_.id);
  if (!sc_.sha1.empty()) trace_.set_meta("scenario_sha1", sc_.sha1);
  trace_.set_meta("tolerance_ms", std::to_string(sc_.tolerance_ms));
  trace_.set_meta("title", sc_.title.get(opt_.lang));
  trace_.set_meta("backend", backend_->describe());
  if (opt_.time_scale != 1.0) trace_.set_meta("time_scale", format_scale(opt_.time_scale));
  trace_.set_meta("seed", std::to_string(opt_.seed));
  for (auto& [k, v] : result_.variant) trace_.set_meta("variant." + k, v);
  for (auto& [k, v] : result_.params) trace_.set_meta("param." + k, std::to_string(v));
  for (size_t i = 0; i < sc_.interventions.size(); i++)
    trace_.set_meta("intervention." + std::to_string(i + 1), sc_.interventions[i]);
  // A replaced script (an exercise answer) is part of the run's input: kept whole, so the
  // trace says exactly what ran.
  for (auto& [k, v] : opt_.scripts) trace_.set_meta("script." + k, v);
  trace_.set_meta("lang", opt_.lang);

  Prng root(opt_.seed);
  root_ = root;
  std::vector<ServerSetup> setups;
  for (const ServerDef& def : sc_.servers) {
    if (!in_run(def)) continue;
    ServerSetup setup{def.name, {}, 0};
    for (size_t i = 0; i < def.config.size(); i++) {
      const std::string& name = def.config[i].first;
      // How a server keeps its data is its owner's choice: set only on servers redlab started.
      if ((name == "appendonly" || name == "appendfsync" || name == "save") &&
          !backend_->owns_servers())
        fail(config_where(def, i), name + " of " + def.name + " would change how " +
                                       backend_->describe() +
                                       " keeps its data: use --backend spawn");
      setup.config.emplace_back(name, str(def.config[i].second, nullptr, config_where(def, i)));
    }
    // An offset may be negative (a clock behind the others): scaled with its sign.
    int64_t offset_ms = num(def.clock_offset_ms, nullptr,
                            Where{def.where.pos, def.where.path + ".clock_offset_ms"});
    setup.clock_offset_us = ms_to_us(offset_ms < 0 ? -scaled_ms(-offset_ms) : scaled_ms(offset_ms));
    setup.replica_of = def.replica_of;
    if (!def.replica_of.empty() && !backend_->can_replicate())
      fail(Where{def.where.pos, def.where.path + ".replica_of"},
           "a replica cannot be staged on " + backend_->describe() +
               (backend_->owns_servers() ? " (not modelled there yet): run it on the fake backend"
                                         : ": replicas need servers redlab started"));
    setups.push_back(std::move(setup));
  }
  std::vector<Backend::ConfigRefusal> refused;
  backend_->start(scheduler_, &trace_, root.derive(fnv1a("network")).next_u64(), setups,
                  net::LinkConfig{scaled_us(sc_.latency_us), scaled_us(sc_.jitter_us)}, refused,
                  needs_);
  fabric_ = &backend_->fabric();
  for (const Backend::ConfigRefusal& r : refused)
    for (const ServerDef& def : sc_.servers)
      for (size_t i = 0; i < def.config.size(); i++)
        if (def.name == r.server && def.config[i].first == r.name)
          fail(config_where(def, i),
               "the server refuses CONFIG SET " + r.name + " \"" + r.value + "\": " + r.error);
  for (const SetupCommand& s : sc_.setup) {
    if (s.when && !test(*s.when, nullptr, s.where)) continue;
    std::string line = str(s.cmd, nullptr, s.where);
    auto argv = split_args(line);
    if (!argv || argv->empty()) fail(s.where, "\"" + line + "\" is not a command line");
    Reply r = backend_->admin(s.server, *argv);
    put(TraceEvent{0, "setup", s.server, -1, -1, -1, line + " -> " + format_short(r, 60)}
            .with(F::server, s.server)
            .with(F::argv, client::trace_argv(*argv))
            .with(F::reply, format_short(r)));
    if (r.is_error()) fail(s.where, "setup command \"" + line + "\" failed: " + r.str);
  }
  for (const ScriptDef& def : sc_.scripts) {
    auto it = opt_.scripts.find(def.name);
    scripts_.emplace(def.name, client::Script(it == opt_.scripts.end() ? def.source : it->second));
  }
  for (const ResourceDef& r : sc_.resources) {
    ResourceRt res;
    res.check = test(r.check_fence, nullptr, Where{r.where.pos, r.where.path + ".check_fence"});
    if (r.unique_values)
      res.unique =
          test(*r.unique_values, nullptr, Where{r.where.pos, r.where.path + ".unique_values"});
    resources_[r.name] = res;
    trace_.set_meta("resource." + r.name, resource_words(res));
  }
  // Step ids: the pre-order index of a step in its actor's script, the same in every
  // variant (an actor skipped by its `when` does not renumber the others).
  for (const ActorDef& def : sc_.actors) {
    next_step_id_ = 0;
    number_steps(def.steps);
  }
  // Actor instances, in file order.
  std::set<std::string> instance_names;
  for (const ActorDef& def : sc_.actors) {
    if (def.when && !test(*def.when, nullptr, def.where)) continue;
    int64_t count = num(def.count, nullptr, Where{def.where.pos, def.where.path + ".count"});
    if (count < 1 || count > 1000)
      fail(Where{def.where.pos, def.where.path + ".count"}, "count must be 1 to 1000");
    for (int64_t i = 1; i <= count; i++) {
      auto a = std::make_unique<ActorRt>();
      a->name = count == 1 ? def.name : def.name + std::to_string(i);
      if (!instance_names.insert(a->name).second)
        fail(def.where, "a second actor named \"" + a->name + "\" is active in this variant");
      a->def = &def;
      a->index = i;
      a->prng = root.derive(fnv1a("actor:" + a->name));
      a->vars["actor"] = a->name;
      a->vars["n"] = std::to_string(i);
      const ClientDef* cd = sc_.client(def.client);
      if (cd->shared) {
        auto& shared = shared_clients_[cd->name];
        if (!shared) shared = make_client(*cd, cd->name, root);
        a->process = shared->process.get();
        a->client = shared->client.get();
      } else {
        auto own = make_client(*cd, a->name, root);
        a->process = own->process.get();
        a->client = own->client.get();
        own_clients_.push_back(std::move(own));
      }
      result_.actors.push_back(a->name);
      actors_.push_back(std::move(a));
    }
  }
  // The lanes, in the file's order: actor instances, then the servers and the resources.
  put(TraceEvent{0, "run_start", "", -1, -1, -1, ""}.with(F::who, result_.actors));
  for (const ServerDef& def : sc_.servers) {
    if (!in_run(def)) continue;
    TraceEvent e{0, "server_start", def.name, -1, -1, -1, ""};
    e.with(F::server, def.name).with(F::source, backend_->server_events() ? "fake" : "clients");
    if (int64_t clock = backend_->server_clock_unix_ms(def.name); clock >= 0)
      e.with(F::clock_unix_ms, clock);
    put(std::move(e));
  }
  for (const ResourceDef& r : sc_.resources)
    put(TraceEvent{0, "resource_start", r.name, -1, -1, -1, ""}
            .with(F::resource, r.name)
            .with(F::reason, resource_words(resources_.at(r.name))));
}

Where Engine::config_where(const ServerDef& def, size_t i) const {
  return Where{i < def.config_pos.size() ? def.config_pos[i] : def.where.pos,
               "servers." + def.name + ".config." + def.config[i].first};
}

std::string Engine::format_scale(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::unique_ptr<Engine::ClientRt> Engine::make_client(const ClientDef& cd, const std::string& host,
                                                      const Prng& root) {
  Where w = cd.where;
  const ClientOptionsDef& o = cd.options;
  auto numv = [&](const char* k) -> std::optional<int64_t> {
    auto it = o.numbers.find(k);
    if (it == o.numbers.end()) return std::nullopt;
    // Durations (…_ms) follow the time scale; counts (pool_size, max_retries) do not.
    // go-redis meanings (sim/client/options.h): 0 = the default, -1 = off, and for read /
    // write timeouts -2 = no deadline. A sentinel is passed on as it is, never scaled.
    std::string_view key(k);
    Where at{w.pos, w.path + ".options." + k};
    int64_t v = num(it->second, nullptr, at);
    if (v < 0) {
      int64_t lowest = key == "read_timeout_ms" || key == "write_timeout_ms" ? -2
                       : key == "max_retries" || key == "min_retry_backoff_ms" ||
                               key == "max_retry_backoff_ms" || key == "conn_max_idle_ms"
                           ? -1
                           : 0;
      if (v < lowest)
        fail(at, "\"" + it->second.source() + "\" is " + std::to_string(v) + ": at least " +
                     std::to_string(lowest));
      return v;
    }
    v = unscaled_ms(it->second, nullptr, at);
    return key.ends_with("_ms") ? scaled_ms(v) : v;
  };
  // A time option in us: a sentinel (-1, -2) stays one, anything else was ms.
  auto us = [](int64_t v) { return v < 0 ? v : ms_to_us(v); };
  int64_t procs = numv("gomaxprocs").value_or(1);
  if (procs < 1) fail(w, "gomaxprocs must be at least 1");
  // The loader accepted only the names Options::profile_names() lists.
  client::Options opts = *client::Options::for_profile(o.profile, procs);
  if (opt_.time_scale != 1.0) {
    for (TimeUs* t : {&opts.pool_timeout_us, &opts.dial_timeout_us, &opts.read_timeout_us,
                      &opts.write_timeout_us, &opts.min_retry_backoff_us,
                      &opts.max_retry_backoff_us, &opts.conn_max_idle_time_us,
                      &opts.blocking_read_extra_us, &opts.pubsub_reconnect_delay_us})
      *t = scaled_us(*t);
  }
  if (auto v = numv("read_timeout_ms")) {
    opts.read_timeout_us = us(*v);
    opts.derive_from_read_timeout();
  }
  if (auto v = numv("pool_size")) opts.pool_size = *v;
  if (opts.pool_size < 1) fail(w, "pool_size must be at least 1");
  if (auto v = numv("pool_timeout_ms")) opts.pool_timeout_us = us(*v);
  if (auto v = numv("dial_timeout_ms")) opts.dial_timeout_us = us(*v);
  if (auto v = numv("write_timeout_ms")) opts.write_timeout_us = us(*v);
  if (auto v = numv("max_retries")) opts.max_retries = *v;
  if (auto v = numv("min_retry_backoff_ms")) opts.min_retry_backoff_us = us(*v);
  if (auto v = numv("max_retry_backoff_ms")) opts.max_retry_backoff_us = us(*v);
  if (auto v = numv("conn_max_idle_ms")) opts.conn_max_idle_time_us = us(*v);
  if (auto v = numv("pubsub_reconnect_delay_ms")) opts.pubsub_reconnect_delay_us = us(*v);
  for (auto& [k, v] : o.flags) {
    if (k == "context_timeout_enabled") opts.context_timeout_enabled = v;
    if (k == "retry_pool_timeout") opts.retry_pool_timeout = v;
    if (k == "pool_fifo") opts.pool_fifo = v;
    if (k == "hello_on_connect") opts.hello_on_connect = v;
  }
  auto rt = std::make_unique<ClientRt>();
  rt->process = std::make_unique<net::Process>(scheduler_, host);
  rt->client = std::make_unique<client::Client>(*rt->process, *fabric_, cd.server, opts, &trace_,
                                                root.derive(fnv1a("client:" + host)).next_u64());
  trace_.set_meta("client." + host, cd.name + " profile=" + opts.profile +
                                        " pool_size=" + std::to_string(opts.pool_size) +
                                        " pool_timeout=" + format_time(opts.pool_timeout_us) +
                                        " read_timeout=" + format_time(opts.read_timeout_us) +
                                        " max_retries=" + std::to_string(opts.max_retries));
  return rt;
}

client::Client& Engine::client_on(ActorRt& a, const std::string& server) {
  if (server.empty() || server == a.client->server()) return *a.client;
  if (auto it = a.server_clients.find(server); it != a.server_clients.end()) return *it->second;
  // Once per actor and server (its client is kept below), not on every command.
  if (!server_in_run(server))
    fail(Where{Pos{}, "servers." + server},
         a.process->name() + " sends to " + server + ", which is not in this run (its when)");
  ClientRt* owner = nullptr;
  for (auto& [name, rt] : shared_clients_)
    if (rt && rt->client.get() == a.client) owner = rt.get();
  for (auto& rt : own_clients_)
    if (rt && rt->client.get() == a.client) owner = rt.get();
  REDLAB_ASSERT(owner && "an actor's client belongs to the run");
  std::unique_ptr<client::Client>& slot = owner->others[server];
  // Its seed is derived from the host and the server, so making it later or earlier in the
  // run does not move any other client's random stream.
  if (!slot)
    slot = std::make_unique<client::Client>(
        *a.process, *fabric_, server, a.client->options(), &trace_,
        root_.derive(fnv1a("client:" + a.process->name() + "@" + server)).next_u64());
  a.server_clients[server] = slot.get();
  return *slot;
}

void Engine::number_steps(const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    if (step_ids_.count(&s)) continue;
    step_ids_[&s] = next_step_id_++;
    number_steps(s.body);
    number_steps(s.orelse);
  }
}

// ---------------------------------------------------------------------------------
// Actors
// ---------------------------------------------------------------------------------
void Engine::start_actor(ActorRt& a) {
  const ActorDef& d = *a.def;
  TimeUs start = ms_to_us(dur_ms(d.start_ms, &a, Where{d.where.pos, d.where.path + ".start_ms"}));
  // Drawn in the file's milliseconds, then scaled: at a time scale the starts keep their
  // spread (0..20 ms at 0.1 is 0..2 ms in steps of 0.1 ms, not three whole milliseconds).
  int64_t jitter =
      unscaled_ms(d.start_jitter_ms, &a, Where{d.where.pos, d.where.path + ".start_jitter_ms"});
  if (jitter > 0) start += scaled_us(ms_to_us(a.prng.range_inclusive(0, jitter)));
  ActorRt* p = &a;
  scheduler_.schedule_at(start, [this, p] {
    put(ev(*p, "actor_start", -1, p->def->role.get(opt_.lang)));
    run_block(*p, p->def->steps, 0, [this, p] { finish_actor(*p, "done"); });
  });
}

void Engine::finish_actor(ActorRt& a, const std::string& why) {
  if (a.finished) return;
  a.finished = true;
  for (auto& [lock, l] : a.locks)
    if (l.watchdog) a.process->cancel(l.watchdog);
  close_holds(a, "actor ended");
  for (auto& ps : a.pubsubs) ps->close();
  put(ev(a, "actor_end", -1, why).with(F::reason, why));
}

void Engine::abandon(ActorRt& a, const std::string& why) {
  if (a.finished) return;
  a.gen++;
  if (a.timer) a.process->cancel(a.timer);
  a.timer = 0;
  a.after_extend = nullptr;
  put(ev(a, "abandon", -1, why).with(F::reason, why));
  close_holds(a, "abandoned");
  finish_actor(a, "abandoned: " + why);
}

void Engine::close_holds(ActorRt& a, const std::string& why) {
  // end_hold erases from a.locks: walk a copy of the names.
  std::vector<std::string> held;
  for (auto& [lock, l] : a.locks) held.push_back(lock);
  for (const std::string& lock : held) end_hold(a, lock, why);
}

// The actor stops believing it holds `lock` (released, lost, abandoned, ended, ...).
void Engine::end_hold(ActorRt& a, const std::string& lock, const std::string& why) {
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) return;
  if (it->second.watchdog) a.process->cancel(it->second.watchdog);
  end(ev(a, "hold_end", -1, lock + ": " + why)
          .with(F::lock, lock)
          .with(F::token, it->second.token)
          .with(F::reason, why),
      it->second.hold_span);
  a.locks.erase(it);
}

// Runs steps[i..] then k. In constant stack however long the list: a step that finishes
// at once (note, set, an if whose branch did) only marks itself done and the loop goes on;
// a step that finishes later continues from the event loop, on a fresh stack. The marks
// are serial numbers, one per step started, kept per actor and restored after each step
// so that a block nested in a step (if, repeat) has its own.
void Engine::run_block(ActorRt& a, const std::vector<Step>& steps, size_t i, Next k) {
  ActorRt* p = &a;
  while (i < steps.size()) {
    const uint64_t serial = ++exec_serial_;
    const uint64_t outer = a.running_serial;
    const uint64_t gen = a.gen;
    a.running_serial = serial;
    const size_t next = i + 1;
    exec(a, steps[i], guard(a, [this, p, &steps, next, serial, k]() mutable {
           if (p->running_serial == serial) {
             p->inline_done = serial;  // finished inside exec: the loop below goes on
             return;
           }
           run_block(*p, steps, next, std::move(k));
         }));
    a.running_serial = outer;
    if (a.inline_done != serial || a.gen != gen) return;  // later (or abandoned)
    i = next;
  }
  k();
}

void Engine::save(ActorRt& a, const Step& s, const std::string& value) {
  a.vars["reply"] = value;
  if (!s.save.empty()) a.vars[s.save] = value;
}

void Engine::record(ActorRt& a, const Step& s, bool success) {
  if (!success) return;
  if (const Template* t = s.t("record")) {
    std::string name = str(*t, &a, field(s, "record"));
    put(ev(a, "record", sid(s), name).with(F::record, name));
  }
}

void Engine::exec(ActorRt& a, const Step& s, Next k) {
  // Every step run counts against the run's bound (a loop without a pause must end).
  last_step_ = &s;
  if (++steps_run_ > opt_.steps_max && !bound_reason_) {
    bound_reason_ = "steps";
    scheduler_.stop();
  }
  if (s.when && !test(*s.when, &a, s.where)) return k();
  s.kind->run(*this, a, s, std::move(k));
}

// How an extend ended: the TTL was renewed; the script said the lock is not ours (0); or
// the call failed (an error, a timeout: the lock may or may not still be ours).

// ---- WATCH transactions ----

std::vector<ActorRt*> Engine::targets(const FaultDef& f) {
  std::vector<ActorRt*> out;
  for (auto& a : actors_)
    if (a->def->name == f.actor) out.push_back(a.get());
  if (out.empty())  // one instance of an actor with a count ("buyer7")
    for (auto& a : actors_)
      if (a->name == f.actor) out.push_back(a.get());
  return out;
}

std::vector<std::string> Engine::hosts(const FaultDef& f) {
  std::vector<std::string> out;
  for (ActorRt* a : targets(f))
    if (std::find(out.begin(), out.end(), a->process->name()) == out.end())
      out.push_back(a->process->name());
  return out;
}

// A process crash: no deferred cleanup, no unlock, no UNSUBSCRIBE. The kernel closes its
// sockets (the server sees each connection close after the network's latency, as a FIN; what
// was already in flight still arrives), its timers die with it. Each actor on it stops where it
// was: what it believed it held ends "crashed", every span it had open (a call, a pool wait,
// work) ends at the crash, and the actor ends "crashed". The keys it held on the server stay
// until their TTL: that is the lesson.
void Engine::crash_host(const std::string& host, const std::string& why, TimeUs restart_after_us) {
  net::Process* process = nullptr;
  std::vector<ActorRt*> on_host;
  for (auto& a : actors_)
    if (a->process->name() == host) {
      process = a->process;
      on_host.push_back(a.get());
    }
  if (!process || process->killed()) return;
  put(fault_ev(host, "crash" + (why.empty() ? std::string() : ": " + why), "crash")
          .with(F::reason, why));
  std::set<std::string> names{host};
  for (ActorRt* a : on_host) {
    names.insert(a->name);
    if (a->finished) continue;
    a->gen++;  // its continuations never run
    a->timer = 0;
    a->after_extend = nullptr;
    close_holds(*a, "crashed");
  }
  // The spans still open on this host's lanes end here.
  std::map<int64_t, const TraceEvent*> open;
  for (const TraceEvent& e : trace_.events()) {
    if (e.ends > 0) open.erase(e.ends);
    if (e.span > 0 && names.count(e.actor)) open.emplace(e.span, &e);
  }
  std::vector<std::pair<int64_t, std::string>> cut;
  for (auto& [span, e] : open) cut.emplace_back(span, e->actor);
  for (auto& [span, actor] : cut)
    end(TraceEvent{scheduler_.now_us(), "crashed", actor, -1, -1, -1, "ended by the crash"}, span);
  for (ActorRt* a : on_host) {
    if (a->finished) continue;
    a->finished = true;
    put(ev(*a, "actor_end", -1, "crashed").with(F::reason, "crashed"));
  }
  process->kill();
  for (net::ConnId c : fabric_->connections_of(host)) fabric_->close(c);
  if (restart_after_us >= 0)
    scheduler_.schedule_after(restart_after_us, [this, host] { restart_host(host); });
}

// A supervisor starts the crashed program again: a fresh process with a new client (a new pool,
// new connections), and each of its actors from its first step with fresh variables.
void Engine::restart_host(const std::string& host) {
  std::vector<ActorRt*> on_host;
  for (auto& a : actors_)
    if (a->process->name() == host) on_host.push_back(a.get());
  if (on_host.empty()) return;
  const ClientDef* cd = sc_.client(on_host.front()->def->client);
  std::unique_ptr<ClientRt> fresh = make_client(*cd, host, root_);
  net::Process* process = fresh->process.get();
  client::Client* client = fresh->client.get();
  // The dead client stays alive (dead_clients_) until the run ends.
  auto retire = [&](std::unique_ptr<ClientRt>& slot) {
    if (slot && slot->process.get() == on_host.front()->process) {
      dead_clients_.push_back(std::move(slot));
      slot = std::move(fresh);
    }
  };
  if (cd->shared) retire(shared_clients_[cd->name]);
  for (auto& own : own_clients_)
    if (fresh) retire(own);
  if (fresh) return;  // not found: nothing to restart (cannot happen)
  put(fault_ev(host, "restarted", "crash_restart"));
  for (ActorRt* a : on_host) {
    a->process = process;
    a->client = client;
    a->server_clients.clear();
    a->gen++;
    a->finished = false;
    a->locks.clear();
    a->timer = 0;
    a->after_extend = nullptr;
    a->running_serial = 0;
    a->inline_done = 0;
    for (auto& ps : a->pubsubs) dead_pubsubs_.push_back(std::move(ps));
    a->pubsubs.clear();
    const std::string n = a->vars["n"];
    a->vars.clear();
    a->vars["actor"] = a->name;
    a->vars["n"] = n;
    ActorRt* p = a;
    put(ev(*p, "actor_start", -1, p->def->role.get(opt_.lang)));
    run_block(*p, p->def->steps, 0, [this, p] { finish_actor(*p, "done"); });
  }
}

TimeUs Engine::fault_for_us(const FaultDef& f) const {
  return f.for_ms
             ? ms_to_us(dur_ms(*f.for_ms, nullptr, Where{f.where.pos, f.where.path + ".for_ms"}))
             : 0;
}

int64_t Engine::fault_by_ms(const FaultDef& f) const {
  int64_t by_ms = f.by_ms ? num(*f.by_ms, nullptr, Where{f.where.pos, f.where.path + ".by_ms"}) : 0;
  return by_ms < 0 ? -scaled_ms(-by_ms) : scaled_ms(by_ms);
}

void Engine::schedule_faults() {
  for (const FaultDef& f : sc_.faults) {
    if (f.when && !test(*f.when, nullptr, f.where)) continue;
    TimeUs at = ms_to_us(dur_ms(f.at_ms, nullptr, Where{f.where.pos, f.where.path + ".at_ms"}));
    const FaultDef* fp = &f;
    scheduler_.schedule_at(at, [this, fp] {
      // for_ms and by_ms are evaluated when the fault fires, whether its kind uses them or
      // not (so a value that cannot be evaluated is an error in every kind).
      fault_for_us(*fp);
      fault_by_ms(*fp);
      fp->kind->fire(*this, *fp);
    });
  }
}

// Notes at a time are scheduled; notes about an event wait for it (on_trace_event).
void Engine::schedule_narration() {
  for (size_t i = 0; i < sc_.narration.size(); i++) {
    const Note& n = sc_.narration[i];
    if (n.when && !test(*n.when, nullptr, Where{n.where.pos, n.where.path + ".when"})) continue;
    // The note in a language: the story's own numbers (the file's, not scaled by
    // --time-scale). Written in every language, so that a saved trace reads in any (the GUI's
    // language selector), and in the run's own as the event's text.
    auto text_in = [&](const std::string& lang) {
      auto tpl = n.templates.find(lang);
      if (tpl == n.templates.end()) tpl = n.templates.find("en");
      if (tpl == n.templates.end()) tpl = n.templates.begin();
      return tpl == n.templates.end()
                 ? n.text.get(lang)
                 : eval(tpl->second, nullptr, Where{n.where.pos, n.where.path + ".text"});
    };
    std::string text = text_in(opt_.lang);
    std::vector<std::string> texts = {text_in("en"), text_in("ru"), text_in("cs")};
    if (texts[1] == texts[0] && texts[2] == texts[0]) texts.clear();  // one language only
    int64_t index = static_cast<int64_t>(i);
    if (n.on) {
      TimeUs after =
          ms_to_us(dur_ms(n.after_ms, nullptr, Where{n.where.pos, n.where.path + ".after_ms"}));
      anchored_by_kind_[n.on->kind].push_back(anchored_.size());
      anchored_.push_back(AnchoredNote{&n, index, std::move(text), std::move(texts), 0, after});
      continue;
    }
    TimeUs at = ms_to_us(dur_ms(n.at_ms, nullptr, Where{n.where.pos, n.where.path + ".at_ms"}));
    scheduler_.schedule_at(at, [this, text, texts, index] { narrate(text, texts, index); });
  }
}

void Engine::narrate(const std::string& text, const std::vector<std::string>& texts,
                     int64_t index) {
  TraceEvent e =
      TraceEvent{scheduler_.now_us(), "narration", "", -1, -1, -1, text}.with(F::note, index);
  if (!texts.empty()) e.with(F::texts, texts);
  put(std::move(e));
}

// Every trace event passes here while the run goes on: the live view sees it, and notes
// anchored to it are told (right after it, or after_ms later).
void Engine::on_trace_event(const TraceEvent& e) {
  if (opt_.on_event) opt_.on_event(e);
  if (anchored_.empty() || e.kind == "narration") return;
  // One lookup per event: only the notes waiting for this kind are looked at.
  auto waiting = anchored_by_kind_.find(e.kind);
  if (waiting == anchored_by_kind_.end()) return;
  std::vector<size_t> due;
  for (size_t i : waiting->second) {
    AnchoredNote& a = anchored_[i];
    const NoteAnchor& on = *a.note->on;
    if (a.seen < 0) continue;
    if (!on.actor.empty() && e.actor != on.actor) continue;
    if (!on.key.empty() && e.str_or(F::key) != on.key && e.str_or(F::lock) != on.key) continue;
    if (!on.value.empty() && e.str_or(F::value) != on.value) continue;
    if (++a.seen == on.nth) due.push_back(i);
  }
  // `e` may move once a note is appended: it is not used below.
  for (size_t i : due) {
    AnchoredNote& a = anchored_[i];
    a.seen = -1;  // told once
    if (a.after_us == 0) {
      narrate(a.text, a.texts, a.index);
    } else {
      std::string text = a.text;
      std::vector<std::string> texts = a.texts;
      int64_t index = a.index;
      scheduler_.schedule_after(a.after_us,
                                [this, text, texts, index] { narrate(text, texts, index); });
    }
  }
}

// ---------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------
void Engine::evaluate_checks() {
  std::map<std::string, bool> expected;
  // The file's expectations describe its own story; an intervention writes another one, so
  // its verdicts are reported without an expectation to meet.
  bool intervened = !sc_.interventions.empty();
  result_.expectation_given = !intervened;
  for (const Expectation& e : sc_.expect)
    if (!intervened && test(e.when, nullptr, e.where))
      for (auto& [k, v] : e.checks) {
        if (v)
          expected[k] = *v;
        else
          expected.erase(k);
      }
  // The checks judge from the trace, through its one reader.
  TraceIndex index(trace_);
  for (const CheckDef& def : sc_.checks) {
    CheckArgs args;
    for (auto& [k, t] : def.args) args.text[k] = str(t, nullptr, def.where);
    for (auto& [k, e] : def.numbers) args.number[k] = num(e, nullptr, def.where);
    CheckResult r =
        def.kind ? run_check(*def.kind, args, index) : run_check(def.check, args, index);
    r.name = def.name;
    if (auto it = expected.find(def.name); it != expected.end()) {
      r.expected = it->second;
      // A check with nothing to judge from meets no expectation: the file must withdraw
      // it (null) where it cannot be judged, rather than count "nothing happened" as held.
      if (r.backend_lacks)
        result_.not_judged_here.push_back(def.name);
      else if (r.ok != it->second || !r.judged)
        result_.expectation_met = false;
    }
    // Every verdict and every violation is part of the trace, exactly as judged, so a
    // reopened trace shows what the live run showed.
    for (const Violation& v : r.violations)
      put(TraceEvent{result_.end_us, "violation", "", -1, -1, -1, v.text}
              .with(F::check, def.name)
              .with(F::from_us, v.from_us)
              .with(F::to_us, v.to_us)
              .with(F::who, v.who));
    TraceEvent e{result_.end_us, "check", "", -1, -1, -1, r.summary};
    e.with(F::check, def.name)
        .with(F::check_kind, def.check)
        .with(F::ok, r.ok ? 1 : 0)
        .with(F::violations, static_cast<int64_t>(r.violations.size()));
    if (r.expected) e.with(F::expected, *r.expected ? 1 : 0);
    if (!r.judged) e.with(F::reason, r.backend_lacks ? "not judged on this backend" : "not judged");
    put(std::move(e));
    result_.checks.push_back(std::move(r));
  }
  std::string verdict = result_.expectation_met ? "met" : "not met";
  if (intervened)
    verdict += " (none with interventions: the file's expectations are for its own run)";
  if (!result_.not_judged_here.empty()) {
    verdict += " on the checks this backend can judge (not judged here:";
    for (const std::string& n : result_.not_judged_here) verdict += " " + n;
    verdict += ")";
  }
  put(TraceEvent{result_.end_us, "expectation", "", -1, -1, -1, verdict}.with(
      F::met, result_.expectation_met ? 1 : 0));
}

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  Engine engine(scenario, options);
  return engine.run();
}

}  // namespace redlab::scenario
