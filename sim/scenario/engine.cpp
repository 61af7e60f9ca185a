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
      if (!opt_.on_probe) return;
      for (const ServerDef& def : sc_.servers)
        if (auto k = backend_->keyspace(def.name)) opt_.on_probe(t, trace_.size(), def.name, *k);
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

std::vector<std::string> Engine::command(const Step& s, const std::string& line,
                                         const char* key) const {
  auto argv = split_args(line);
  if (!argv || argv->empty()) fail(field(s, key), "\"" + line + "\" is not a command line");
  // DEBUG SLEEP takes seconds, not a duration parameter in ms: scaled here.
  if (opt_.time_scale != 1.0 && argv->size() == 3 && upper((*argv)[0]) == "DEBUG" &&
      upper((*argv)[1]) == "SLEEP") {
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
    std::vector<const Template*> lines;
    if (const Template* t = s.t("cmd")) lines.push_back(t);
    if (const auto* l = s.l("cmds"))
      for (const Template& t : *l) lines.push_back(&t);
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
    if (f.kind->refuse) f.kind->refuse(*this, f, at);
  }
  if (!shared || opt_.allow_server_faults) return needs;
  for (const ServerDef& def : sc_.servers)
    if (!def.config.empty())
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
  // A replaced script (an exercise answer) is part of the run's input: kept whole, so the
  // trace says exactly what ran.
  for (auto& [k, v] : opt_.scripts) trace_.set_meta("script." + k, v);
  trace_.set_meta("lang", opt_.lang);

  Prng root(opt_.seed);
  std::vector<ServerSetup> setups;
  for (const ServerDef& def : sc_.servers) {
    ServerSetup setup{def.name, {}, 0};
    for (size_t i = 0; i < def.config.size(); i++)
      setup.config.emplace_back(def.config[i].first,
                                str(def.config[i].second, nullptr, config_where(def, i)));
    // An offset may be negative (a clock behind the others): scaled with its sign.
    int64_t offset_ms = num(def.clock_offset_ms, nullptr,
                            Where{def.where.pos, def.where.path + ".clock_offset_ms"});
    setup.clock_offset_us = ms_to_us(offset_ms < 0 ? -scaled_ms(-offset_ms) : scaled_ms(offset_ms));
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
    resources_[r.name] = res;
    trace_.set_meta("resource." + r.name, res.check ? "checks fences" : "does not check fences");
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
    TraceEvent e{0, "server_start", def.name, -1, -1, -1, ""};
    e.with(F::server, def.name).with(F::source, backend_->server_events() ? "fake" : "clients");
    if (int64_t clock = backend_->server_clock_unix_ms(def.name); clock >= 0)
      e.with(F::clock_unix_ms, clock);
    put(std::move(e));
  }
  for (const ResourceDef& r : sc_.resources)
    put(TraceEvent{0, "resource_start", r.name, -1, -1, -1, ""}
            .with(F::resource, r.name)
            .with(F::reason,
                  resources_.at(r.name).check ? "checks fences" : "does not check fences"));
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
  const std::string& op = s.op;
  if (op == "command") return do_command(a, s, std::move(k));
  if (op == "pipeline" || op == "tx") return do_pipeline(a, s, std::move(k));
  if (op == "sleep" || op == "work") return do_wait(a, s, std::move(k));
  if (op == "lock_acquire" || op == "fenced_acquire")
    return do_acquire(a, s, 0, scheduler_.now_us(), 0, std::move(k));
  if (op == "lock_release") return do_release(a, s, std::move(k));
  if (op == "lock_extend") return do_extend(a, s, std::move(k));
  if (op == "watchdog") return do_watchdog(a, s, std::move(k));
  if (op == "watchdog_stop") {
    std::string lock = step_str(a, s, "lock");
    if (auto it = a.locks.find(lock); it != a.locks.end() && it->second.watchdog) {
      a.process->cancel(it->second.watchdog);
      it->second.watchdog = 0;
      put(ev(a, "watchdog_stop", sid(s), lock).with(F::lock, lock));
    }
    return k();
  }
  if (op == "resource_write") return do_write(a, s, std::move(k));
  if (op == "watch_tx") return do_watch_tx(a, s, std::move(k));
  if (op == "eval") return do_eval(a, s, std::move(k));
  if (op == "subscribe") return do_subscribe(a, s, std::move(k));
  if (op == "publish") return do_publish(a, s, std::move(k));
  if (op == "stream_add") return do_stream_add(a, s, std::move(k));
  if (op == "stream_consume") return do_stream_consume(a, s, std::move(k));
  if (op == "stream_autoclaim") return do_autoclaim(a, s, std::move(k));
  if (op == "repeat") return do_repeat(a, s, 1, std::make_shared<const Next>(std::move(k)));
  if (op == "if") {
    bool yes = test(*s.cond, &a, field(s, "cond"));
    return run_block(a, yes ? s.body : s.orelse, 0, std::move(k));
  }
  if (op == "note") {
    emit(a, "note", sid(s), s.says.at("text").get(opt_.lang));
    return k();
  }
  if (op == "set") {
    a.vars[s.save] = step_str(a, s, "value");
    return k();
  }
  REDLAB_ASSERT(false && "a step the loader accepted has no implementation");
}

void Engine::do_command(ActorRt& a, const Step& s, Next k) {
  std::vector<std::string> argv;
  if (s.t("cmd"))
    argv = command(s, step_str(a, s, "cmd"), "cmd");
  else
    argv = step_list(a, s, "args");
  if (argv.empty()) fail(s.where, "an empty command");
  TimeUs deadline = kTimeNeverUs;
  if (s.n("deadline_ms"))
    deadline = scheduler_.now_us() + ms_to_us(step_ms(a, s, "deadline_ms", 0));
  ActorRt* p = &a;
  a.client->do_command(ctx(a, s, deadline), argv, guard1<Result>(a, [this, p, &s, k](Result r) {
                         save(*p, s, reply_text(r));
                         record(*p, s, succeeded(r));
                         k();
                       }));
}

void Engine::do_pipeline(ActorRt& a, const Step& s, Next k) {
  std::vector<Argv> cmds;
  auto lines = step_list(a, s, "cmds");
  for (auto& line : lines) cmds.push_back(command(s, line, "cmds"));
  ActorRt* p = &a;
  auto done = guard1<client::PipelineResult>(a, [this, p, &s, k](client::PipelineResult r) {
    std::string text =
        r.error.ok() ? (r.results.empty() ? "" : reply_text(r.results.back())) : r.error.text;
    save(*p, s, text);
    record(*p, s, r.error.ok());
    k();
  });
  if (s.op == "tx")
    a.client->tx_pipeline(ctx(a, s), std::move(cmds), std::move(done));
  else
    a.client->pipeline(ctx(a, s), std::move(cmds), std::move(done));
}

void Engine::do_wait(ActorRt& a, const Step& s, Next k) {
  int64_t ms = step_ms(a, s, "ms", 0);
  int64_t span =
      begin(ev(a, s.op, sid(s), std::to_string(ms) + " ms").with(F::duration_us, ms_to_us(ms)));
  ActorRt* p = &a;
  // Work counts the time the actor runs: a stop-the-world pause in the middle of 12 s of
  // work ends it 12 s plus the pause after it began. A sleep is a timer, which a pause
  // only delays (it fires at the resume if it became due meanwhile).
  bool running_time = s.op == "work";
  after(a, ms_to_us(ms), running_time, [this, p, &s, k, span] {
    end(ev(*p, s.op + "_done", sid(s)), span);
    // A careful worker checks its lock before it commits: with an extend in flight, wait
    // for its answer (a lost lock abandons the work).
    for (auto& [lock, l] : p->locks)
      if (l.extending && s.op == "work") {
        p->after_extend = k;
        return;
      }
    k();
  });
}

std::string Engine::new_token(ActorRt& a) {
  static const char* hex = "0123456789abcdef";
  std::string t;
  uint64_t v = a.prng.next_u64();
  for (int i = 0; i < 16; i++) t += hex[(v >> (i * 4)) & 15];
  return t;
}

// tries: attempts so far; started_us: when the first began (for wait_ms); span: the
// acquisition's span in the trace (lock_acquire .. lock_acquired / lock_gave_up).
void Engine::do_acquire(ActorRt& a, const Step& s, int64_t tries, TimeUs started_us, int64_t span,
                        Next k) {
  std::string lock = step_str(a, s, "lock");
  int64_t ttl = step_ms(a, s, "ttl_ms", 0);
  if (ttl <= 0) fail(field(s, "ttl_ms"), "a lock needs a TTL above 0");
  int64_t retry = step_ms(a, s, "retry_ms", 100);
  int64_t wait = s.n("wait_ms") ? step_ms(a, s, "wait_ms", 0) : -1;  // -1: until the run ends
  if (tries == 0) {
    a.vars["token"] = s.t("token") ? step_str(a, s, "token") : new_token(a);
  }
  const std::string& token = a.vars["token"];  // the closure below keeps its own copy
  bool fenced = s.op == "fenced_acquire";
  if (tries == 0)
    span = begin(ev(a, "lock_acquire", sid(s), lock + " ttl=" + std::to_string(ttl) + " ms")
                     .with(F::lock, lock)
                     .with(F::server, a.client->server())
                     .with(F::token, token)
                     .with(F::ttl_us, ms_to_us(ttl)));
  ActorRt* p = &a;
  // k moves along (into this closure, then into the retry's): a reply comes once, and a
  // copy of a continuation copies every continuation it holds.
  auto on_result = guard1<Result>(a, [this, p, &s, tries, started_us, span, k = std::move(k), lock,
                                      token, ttl, retry, wait, fenced](Result r) mutable {
    ActorRt& a2 = *p;
    bool got = false;
    int64_t fence = 0;
    if (r.ok()) {
      if (fenced) {
        got = r.reply.kind == Reply::Kind::Integer && r.reply.integer > 0;
        fence = r.reply.integer;
      } else {
        got = r.reply.kind == Reply::Kind::Status && r.reply.str == "OK";
      }
    }
    if (got) {
      LockRt l;
      l.token = token;
      l.ttl_us = ms_to_us(ttl);
      end_hold(a2, lock, "reacquired");
      std::string text = lock + " token=" + token + " ttl=" + std::to_string(ttl) + " ms";
      TraceEvent e = ev(a2, "lock_acquired", sid(s), "", tries)
                         .with(F::lock, lock)
                         .with(F::server, a2.client->server())
                         .with(F::token, token)
                         .with(F::ttl_us, ms_to_us(ttl));
      if (fenced) {
        a2.vars["fence"] = std::to_string(fence);
        text += " fence=" + std::to_string(fence);
        e.with(F::fence, fence);
      }
      e.text = std::move(text);
      e.ends = span;
      l.hold_span = begin(std::move(e));
      a2.locks[lock] = l;
      save(a2, s, fenced ? std::to_string(fence) : "1");
      return k();
    }
    if (tries == 0) {
      TraceEvent e = ev(a2, "lock_busy", sid(s),
                        lock + (r.ok() ? " is held by someone else" : ": " + r.error.text), tries)
                         .with(F::lock, lock);
      if (!r.ok())
        e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
      put(std::move(e));
    }
    if (wait >= 0 && scheduler_.now_us() + ms_to_us(retry) > started_us + ms_to_us(wait)) {
      end(ev(a2, "lock_gave_up", sid(s), lock + " after " + std::to_string(tries + 1) + " tries",
             tries)
              .with(F::lock, lock)
              .with(F::tries, tries + 1),
          span);
      save(a2, s, "0");
      return k();
    }
    after(a2, ms_to_us(retry), [this, p, &s, tries, started_us, span, k = std::move(k)]() mutable {
      do_acquire(*p, s, tries + 1, started_us, span, std::move(k));
    });
  });
  if (fenced) {
    std::string fence_key = step_str(a, s, "fence_key");
    const client::Script& script =
        scripts_.at(s.nm("script").empty() ? "fenced_acquire" : s.nm("script"));
    a.client->run_script(ctx(a, s), script, {lock, fence_key}, {token, std::to_string(ttl)},
                         std::move(on_result));
  } else {
    // Built in place: an initializer list would make every argument twice.
    client::Argv argv;
    argv.reserve(6);
    argv.emplace_back("SET");
    argv.push_back(lock);
    argv.push_back(token);
    argv.emplace_back("NX");
    argv.emplace_back("PX");
    argv.push_back(std::to_string(ttl));
    a.client->do_command(ctx(a, s), std::move(argv), std::move(on_result));
  }
}

void Engine::do_release(ActorRt& a, const Step& s, Next k) {
  std::string lock = step_str(a, s, "lock");
  std::string method = step_str(a, s, "method", "del");
  if (method != "del" && method != "lua")
    fail(field(s, "method"), "\"" + method + "\": expected del or lua");
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) {
    put(ev(a, "lock_not_held", sid(s), lock + ": nothing to release").with(F::lock, lock));
    save(a, s, "0");
    return k();
  }
  if (it->second.watchdog) {
    a.process->cancel(it->second.watchdog);
    it->second.watchdog = 0;
  }
  std::string token = it->second.token;
  int64_t span = begin(ev(a, "lock_release", sid(s), lock + " by " + method)
                           .with(F::lock, lock)
                           .with(F::server, a.client->server())
                           .with(F::token, token)
                           .with(F::method, method));
  ActorRt* p = &a;
  auto on_result = guard1<Result>(a, [this, p, &s, k, lock, method, span](Result r) {
    // What the caller learns from the reply (the seed's Release: n == 0 is ErrLockLost);
    // what the server really did is in its own key events (the checks read those).
    bool deleted = r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer > 0;
    if (!r.ok()) {
      end(ev(*p, "lock_release_failed", sid(s), lock + ": " + r.error.text)
              .with(F::lock, lock)
              .with(F::error, r.error.text)
              .with(F::error_class, client::error_class(r.error.kind)),
          span);
      end_hold(*p, lock, "released");
    } else if (method == "lua" && !deleted) {
      end(ev(*p, "lock_lost", sid(s),
             lock + ": the release script returned " + reply_text(r) +
                 ", the lock was no longer ours")
              .with(F::lock, lock)
              .with(F::reply, format_short(r.reply)),
          span);
      end_hold(*p, lock, "lost");
    } else {
      end(ev(*p, "lock_released", sid(s),
             lock + (method == "del" ? " by DEL" : " by compare-and-delete") + " -> " +
                 reply_text(r))
              .with(F::lock, lock)
              .with(F::reply, format_short(r.reply)),
          span);
      end_hold(*p, lock, "released");
    }
    save(*p, s, deleted ? "1" : "0");
    k();
  });
  if (method == "del") {
    a.client->do_command(ctx(a, s), {"DEL", lock}, std::move(on_result));
  } else {
    const client::Script& script =
        scripts_.at(s.nm("script").empty() ? "lock_release" : s.nm("script"));
    a.client->run_script(ctx(a, s), script, {lock}, {token}, std::move(on_result));
  }
}

// How an extend ended: the TTL was renewed; the script said the lock is not ours (0); or
// the call failed (an error, a timeout: the lock may or may not still be ours).

// compare-and-PEXPIRE.
void Engine::extend(ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
                    std::function<void(Extend)> done) {
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) return done(Extend::NotOurs);
  it->second.extending = true;
  const client::Script& script =
      scripts_.at(s.nm("script").empty() ? "lock_extend" : s.nm("script"));
  int64_t span = begin(ev(a, "lock_extend", sid(s), lock)
                           .with(F::lock, lock)
                           .with(F::server, a.client->server())
                           .with(F::token, it->second.token)
                           .with(F::ttl_us, ttl_us));
  ActorRt* p = &a;
  a.client->run_script(
      ctx(a, s), script, {lock}, {it->second.token, std::to_string(ttl_us / 1000)},
      guard1<Result>(a, [this, p, &s, lock, done, span, ttl_us](Result r) {
        auto it2 = p->locks.find(lock);
        if (it2 != p->locks.end()) it2->second.extending = false;
        if (r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer == 1) {
          end(ev(*p, "lock_extended", sid(s), lock).with(F::lock, lock).with(F::ttl_us, ttl_us),
              span);
          return done(Extend::Renewed);
        }
        if (!r.ok()) {
          end(ev(*p, "lock_extend_failed", sid(s), lock + ": " + r.error.text)
                  .with(F::lock, lock)
                  .with(F::error, r.error.text)
                  .with(F::error_class, client::error_class(r.error.kind)),
              span);
          return done(Extend::Failed);
        }
        end(ev(*p, "lock_lost", sid(s),
               lock + ": extend returned " + reply_text(r) + ", the lock expired and is not ours")
                .with(F::lock, lock)
                .with(F::reply, format_short(r.reply)),
            span);
        end_hold(*p, lock, "lost");
        done(Extend::NotOurs);
      }));
}

void Engine::do_extend(ActorRt& a, const Step& s, Next k) {
  std::string lock = step_str(a, s, "lock");
  TimeUs ttl = ms_to_us(step_ms(a, s, "ttl_ms", 0));
  ActorRt* p = &a;
  extend(a, s, lock, ttl, [this, p, &s, k](Extend outcome) {
    save(*p, s, outcome == Extend::Renewed ? "1" : outcome == Extend::NotOurs ? "0" : "error");
    k();
  });
}

void Engine::do_watchdog(ActorRt& a, const Step& s, Next k) {
  std::string lock = step_str(a, s, "lock");
  int64_t ttl = step_ms(a, s, "ttl_ms", 0);
  int64_t every = s.n("every_ms") ? step_ms(a, s, "every_ms", 0) : ttl / 3;
  if (every <= 0) fail(field(s, "every_ms"), "the watchdog needs a period above 0");
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) {
    put(ev(a, "lock_not_held", sid(s), lock + ": no watchdog for a lock we do not hold")
            .with(F::lock, lock));
    return k();
  }
  std::string on_error = step_str(a, s, "on_error", "abort");
  if (on_error != "abort" && on_error != "retry")
    fail(field(s, "on_error"), "\"" + on_error + "\": expected abort or retry");
  put(ev(a, "watchdog_start", sid(s), lock + " every " + std::to_string(every) + " ms")
          .with(F::lock, lock)
          .with(F::every_us, ms_to_us(every))
          .with(F::reason, on_error));
  arm_watchdog(a, s, lock, ms_to_us(ttl), ms_to_us(every));
  k();
}

void Engine::arm_watchdog(ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
                          TimeUs every_us) {
  auto it = a.locks.find(lock);
  if (it == a.locks.end()) return;
  ActorRt* p = &a;
  uint64_t g = a.gen;
  it->second.watchdog = a.process->after(every_us, [this, p, g, &s, lock, ttl_us, every_us] {
    if (p->gen != g) return;
    auto it2 = p->locks.find(lock);
    if (it2 == p->locks.end()) return;
    it2->second.watchdog = 0;
    extend(*p, s, lock, ttl_us, [this, p, &s, lock, ttl_us, every_us](Extend outcome) {
      // The seed's keepAlive: `if err != nil || ok == 0 { l.lost(); return }` — an error
      // aborts the work too, since the lock may be gone. on_error "retry" is the other
      // choice (named so in a variant): keep working and try again at the next tick.
      bool abort_on_error = step_str(*p, s, "on_error", "abort") == "abort";
      if (outcome == Extend::NotOurs) {
        abandon(*p, "lost " + lock + " (found out at the watchdog's extend)");
        return;
      }
      if (outcome == Extend::Failed && abort_on_error) {
        end_hold(*p, lock, "lost");
        abandon(*p, "the watchdog's extend of " + lock + " failed: the lock may be gone");
        return;
      }
      arm_watchdog(*p, s, lock, ttl_us, every_us);
      if (p->after_extend) {
        Next next = std::move(p->after_extend);
        p->after_extend = nullptr;
        next();
      }
    });
  });
}

void Engine::do_write(ActorRt& a, const Step& s, Next k) {
  std::string res = s.nm("resource");
  std::string fence_text = step_str(a, s, "fence");
  auto fence = parse_int(fence_text);
  if (!fence) fail(field(s, "fence"), "\"" + fence_text + "\" is not an integer fence");
  std::string value = step_str(a, s, "value", a.name);
  int64_t span = begin(
      ev(a, "resource_write", sid(s), res + " fence=" + std::to_string(*fence) + " value=" + value)
          .with(F::resource, res)
          .with(F::fence, *fence)
          .with(F::value, value));
  // The write travels to the database and back: a few ms, like a query.
  ActorRt* p = &a;
  after(a, ms_to_us(2), [this, p, &s, k, res, f = *fence, value, span] {
    ResourceRt& r = resources_[res];
    bool accepted = !r.check || !r.any || f >= r.highest;
    int64_t highest_before = r.any ? r.highest : 0;
    std::string text = res + " fence=" + std::to_string(f) + " value=" + value;
    if (accepted) {
      if (r.any && f < r.highest)
        text += " accepted without a check (highest seen " + std::to_string(r.highest) + ")";
      else
        text += " accepted";
      r.highest = r.any ? std::max(r.highest, f) : f;
      r.any = true;
    } else {
      text += " rejected: fence " + std::to_string(f) + " < " + std::to_string(r.highest);
    }
    end(ev(*p, accepted ? "resource_accept" : "resource_reject", sid(s), text)
            .with(F::resource, res)
            .with(F::fence, f)
            .with(F::highest, highest_before)
            .with(F::value, value),
        span);
    save(*p, s, accepted ? "1" : "0");
    k();
  });
}

// ---- WATCH transactions ----

void Engine::do_watch_tx(ActorRt& a, const Step& s, Next k) {
  auto st = std::make_shared<TxState>();
  st->keys = step_list(a, s, "watch");
  st->read = step_str(a, s, "read");
  st->exec = step_list(a, s, "exec");
  std::string guard_kind = step_str(a, s, "guard", "positive");
  if (guard_kind != "positive" && guard_kind != "always")
    fail(field(s, "guard"), "expected positive or always");
  st->positive = guard_kind == "positive";
  std::string conn = step_str(a, s, "connection", "same");
  if (conn != "same" && conn != "pool") fail(field(s, "connection"), "expected same or pool");
  st->same = conn == "same";
  st->max_attempts =
      s.n("max_attempts") ? num(*s.n("max_attempts"), &a, field(s, "max_attempts")) : 0;
  if (st->max_attempts < 0) fail(field(s, "max_attempts"), "cannot be negative");
  st->think_us = ms_to_us(step_ms(a, s, "think_ms", 0));
  tx_attempt(a, s, st, std::move(k));
}

// One optimistic attempt; outcome: "committed", "aborted", "skipped", or an error text.
void Engine::tx_attempt(ActorRt& a, const Step& s, std::shared_ptr<TxState> st, Next k) {
  // "Unbounded" still ends: a run is bounded and a loop that never gives up is the lesson.
  static constexpr int64_t kUnboundedCap = 100000;
  int64_t attempt = ++st->attempts;
  a.vars["attempts"] = std::to_string(attempt);
  ActorRt* p = &a;
  auto outcome = [this, p, &s, st, k, attempt](std::string what, std::string detail) {
    auto close = [&](const char* kind, std::string text) {
      end(ev(*p, kind, sid(s), std::move(text), attempt - 1)
              .with(F::outcome, what)
              .with(F::tries, attempt),
          st->span);
    };
    if (what == "aborted") {
      close("tx_aborted", "EXEC aborted: a watched key changed (" + detail + ")");
      bool more = st->max_attempts == 0 ? attempt < kUnboundedCap : attempt < st->max_attempts;
      if (more) return tx_attempt(*p, s, st, k);
      // The application's own bound on its retry loop (go-redis' Watch never retries).
      put(ev(*p, "tx_gave_up", sid(s),
             "gave up after " + std::to_string(attempt) + " attempts (the application's own bound)",
             attempt - 1)
              .with(F::tries, attempt));
      save(*p, s, "gave_up");
      return k();
    }
    if (what == "committed") {
      close("tx_committed", detail);
      save(*p, s, "committed");
      record(*p, s, true);
      return k();
    }
    if (what == "skipped") {
      close("tx_skipped", detail);
      save(*p, s, "skipped");
      return k();
    }
    close("tx_error", detail);
    save(*p, s, detail);
    k();
  };
  st->span = begin(ev(a, "tx_attempt", sid(s), "attempt " + std::to_string(attempt), attempt - 1)
                       .with(F::tries, attempt));
  auto read_argv = command(s, st->read, "read");
  std::vector<Argv> exec_cmds;
  for (auto& line : st->exec) exec_cmds.push_back(command(s, line, "exec"));
  auto guard_ok = [st](const Result& r) -> bool {
    if (!st->positive) return true;
    if (!r.ok()) return false;
    auto v = r.reply.kind == Reply::Kind::Integer ? std::optional<int64_t>(r.reply.integer)
                                                  : parse_int(r.reply.str);
    return v && *v > 0;
  };
  Context c = ctx(a, s);
  if (st->same) {
    auto result = std::make_shared<std::pair<std::string, std::string>>("error", "");
    a.client->watch(
        c, st->keys,
        [p, st, c, read_argv, exec_cmds, guard_ok, result](client::Tx& tx,
                                                           client::Client::ErrorDone finish) {
          tx.do_command(
              c, read_argv, [p, st, &tx, c, exec_cmds, guard_ok, result, finish](Result r) {
                if (!r.ok()) {
                  *result = {"error", r.error.text};
                  return finish(r.error);
                }
                if (!guard_ok(r)) {
                  *result = {"skipped", "read " + reply_text(r) + ": nothing to do"};
                  return finish(Error::none());
                }
                std::string seen = reply_text(r);
                auto commit = [&tx, c, exec_cmds, result, finish, seen] {
                  tx.tx_pipelined(c, exec_cmds, [result, finish, seen](client::PipelineResult pr) {
                    if (pr.error.kind == ErrorKind::TxFailed) {
                      *result = {"aborted", "read " + seen};
                    } else if (!pr.error.ok()) {
                      *result = {"error", pr.error.text};
                    } else {
                      *result = {"committed", "read " + seen + ", EXEC applied"};
                    }
                    finish(pr.error);
                  });
                };
                if (st->think_us > 0)
                  p->process->after(st->think_us, commit);
                else
                  commit();
              });
        },
        guard1<Error>(a, [result, outcome](Error e) {
          if (result->first == "error" && result->second.empty()) result->second = e.text;
          outcome(result->first, result->second);
        }));
    return;
  }
  // The bug: WATCH and the read go through the pool on whatever connection is free, and
  // MULTI/EXEC through the pool again, so the EXEC usually runs where nothing is watched.
  Argv watch_argv{"WATCH"};
  watch_argv.insert(watch_argv.end(), st->keys.begin(), st->keys.end());
  a.client->do_command(
      c, std::move(watch_argv),
      guard1<Result>(a, [this, p, st, c, read_argv, exec_cmds, guard_ok, outcome](Result wr) {
        if (!wr.ok()) return outcome("error", wr.error.text);
        p->client->do_command(
            c, read_argv,
            guard1<Result>(*p, [this, p, st, c, exec_cmds, guard_ok, outcome](Result r) {
              if (!r.ok()) return outcome("error", r.error.text);
              if (!guard_ok(r))
                return outcome("skipped", "read " + reply_text(r) + ": nothing to do");
              std::string seen = reply_text(r);
              auto commit = [p, c, exec_cmds, outcome, seen] {
                p->client->tx_pipeline(c, exec_cmds, [outcome, seen](client::PipelineResult pr) {
                  if (pr.error.kind == ErrorKind::TxFailed)
                    return outcome("aborted", "read " + seen);
                  if (!pr.error.ok()) return outcome("error", pr.error.text);
                  outcome("committed", "read " + seen + ", EXEC applied");
                });
              };
              if (st->think_us > 0)
                p->process->after(st->think_us, guard(*p, commit));
              else
                commit();
            }));
      }));
}

void Engine::do_eval(ActorRt& a, const Step& s, Next k) {
  const client::Script& script = scripts_.at(s.nm("script"));
  ActorRt* p = &a;
  a.client->run_script(ctx(a, s), script, step_list(a, s, "keys"), step_list(a, s, "args"),
                       guard1<Result>(a, [this, p, &s, k](Result r) {
                         save(*p, s, reply_text(r));
                         record(*p, s, succeeded(r));
                         k();
                       }));
}

// ---- pub/sub and streams ----
void Engine::do_subscribe(ActorRt& a, const Step& s, Next k) {
  auto channels = step_list(a, s, "channels");
  int64_t for_ms = step_ms(a, s, "for_ms", 0);
  int64_t handle_ms = step_ms(a, s, "handle_ms", 0);
  auto ps = std::make_unique<client::PubSub>(*a.client, sid(s), a.name);
  client::PubSub* raw = ps.get();
  a.pubsubs.push_back(std::move(ps));
  // A slow subscriber receives the way go-redis applications do, through PubSub.Channel():
  // go-redis drains the socket into a 100-message Go channel and the application takes
  // one message every handle_ms (sim/client/pubsub.h).
  if (handle_ms > 0) {
    client::ChannelOptions co;
    co.handle_us = ms_to_us(handle_ms);
    raw->channel(co);
  }
  // The actor means to listen to each channel for for_ms: a span per channel, ended when
  // it stops (the messages it should have got are those published meanwhile).
  auto listen_spans = std::make_shared<std::vector<std::pair<std::string, int64_t>>>();
  for (auto& ch : channels) {
    listen_spans->emplace_back(ch, begin(ev(a, "listen", sid(s), ch)
                                             .with(F::channel, ch)
                                             .with(F::method, "pubsub")
                                             .with(F::for_us, ms_to_us(for_ms))));
  }
  ActorRt* p = &a;
  auto open = std::make_shared<bool>(true);
  raw->subscribe(channels,
                 guard1<Error>(a, [this, p, &s, k, raw, for_ms, open, listen_spans](Error e) {
                   if (!e.ok())
                     put(ev(*p, "subscribe_failed", sid(s), e.text)
                             .with(F::error, e.text)
                             .with(F::error_class, client::error_class(e.kind)));
                   after(*p, ms_to_us(for_ms), [this, p, &s, raw, k, open, listen_spans] {
                     *open = false;
                     raw->close();
                     for (auto& [ch, span] : *listen_spans)
                       end(ev(*p, "listen_end", sid(s), ch).with(F::channel, ch), span);
                     k();
                   });
                 }));
}

void Engine::do_publish(ActorRt& a, const Step& s, Next k) {
  std::string channel = step_str(a, s, "channel");
  std::string message = step_str(a, s, "message");
  if (s.n("pad_to")) {
    // Big messages fill a slow subscriber's output buffer sooner.
    int64_t pad = num(*s.n("pad_to"), &a, field(s, "pad_to"));
    if (pad < 0 || pad > 64 * 1024 * 1024) fail(field(s, "pad_to"), "expected 0 to 64 MB");
    if (int64_t(message.size()) < pad)
      message += " " + std::string(size_t(pad) - message.size() - 1, '.');
  }
  int64_t span = begin(ev(a, "publish", sid(s), channel + ": " + trace_excerpt(message, 60))
                           .with(F::channel, channel)
                           .with(F::message, trace_excerpt(message))
                           .with(F::method, "pubsub"));
  ActorRt* p = &a;
  a.client->do_command(
      ctx(a, s), {"PUBLISH", channel, message}, guard1<Result>(a, [this, p, &s, k, span](Result r) {
        TraceEvent e = ev(*p, "published", sid(s), reply_text(r));
        if (r.ok() && r.reply.kind == Reply::Kind::Integer) {
          e.with(F::receivers, r.reply.integer);
        } else if (!r.ok()) {
          e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
        }
        end(std::move(e), span);
        save(*p, s, reply_text(r));
        k();
      }));
}

void Engine::do_stream_add(ActorRt& a, const Step& s, Next k) {
  std::string stream = step_str(a, s, "stream");
  auto fields = step_list(a, s, "fields");
  if (fields.size() % 2 != 0) fail(field(s, "fields"), "fields come in name/value pairs");
  Argv argv{"XADD", stream};
  if (s.n("maxlen")) {
    // MAXLEN n keeps the newest n entries; 0 means no trimming (not MAXLEN 0).
    int64_t maxlen = num(*s.n("maxlen"), &a, field(s, "maxlen"));
    if (maxlen < 0) fail(field(s, "maxlen"), "a stream length cannot be negative");
    if (maxlen > 0) {
      argv.push_back("MAXLEN");
      argv.push_back(std::to_string(maxlen));
    }
  }
  argv.push_back("*");
  // The entry as the checks and the timeline name it: "field=value ..." (the same text as
  // the consumer's side, entries() below).
  std::string message;
  for (size_t i = 0; i < fields.size(); i++) {
    argv.push_back(fields[i]);
    if (i % 2 == 0)
      message += (message.empty() ? "" : " ") + fields[i];
    else
      message += "=" + fields[i];
  }
  int64_t span = begin(ev(a, "publish", sid(s), stream + ": " + trace_excerpt(message, 60))
                           .with(F::channel, stream)
                           .with(F::message, trace_excerpt(message))
                           .with(F::method, "stream"));
  ActorRt* p = &a;
  a.client->do_command(
      ctx(a, s), argv, guard1<Result>(a, [this, p, &s, k, span](Result r) {
        TraceEvent e = ev(*p, "published", sid(s), reply_text(r));
        // A failed XADD added nothing (or we cannot know): not counted as sent.
        if (!r.ok()) {
          e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
        } else {
          e.with(F::id, reply_text(r));
        }
        end(std::move(e), span);
        save(*p, s, reply_text(r));
        k();
      }));
}

// Entries of an XREADGROUP/XAUTOCLAIM reply: (id, "f1 v1 ...").
std::vector<std::pair<std::string, std::string>> Engine::entries(const Reply& list) {
  std::vector<std::pair<std::string, std::string>> out;
  if (list.kind != Reply::Kind::Array) return out;
  for (const Reply& e : list.elements) {
    if (e.kind != Reply::Kind::Array || e.elements.size() != 2) continue;
    std::string text;
    const auto& fv = e.elements[1].elements;
    for (size_t i = 0; i < fv.size(); i++)
      text += i % 2 == 0 ? (text.empty() ? "" : " ") + fv[i].str : "=" + fv[i].str;
    out.emplace_back(e.elements[0].str, text);
  }
  return out;
}

void Engine::deliver_entries(ActorRt& a, const Step& s, const std::string& stream,
                             const std::string& group,
                             const std::vector<std::pair<std::string, std::string>>& got, bool ack,
                             Next k) {
  if (got.empty()) return k();
  for (auto& [id, text] : got) {
    put(ev(a, "stream_message", sid(s), stream + " " + id + " " + trace_excerpt(text, 60))
            .with(F::channel, stream)
            .with(F::id, id)
            .with(F::message, trace_excerpt(text))
            .with(F::group, group));
  }
  if (!ack) return k();
  Argv x{"XACK", stream, group};
  for (auto& [id, text] : got) x.push_back(id);
  a.client->do_command(ctx(a, s), x, guard1<Result>(a, [k](Result) { k(); }));
}

void Engine::do_stream_consume(ActorRt& a, const Step& s, Next k) {
  std::string stream = step_str(a, s, "stream");
  std::string group = step_str(a, s, "group");
  std::string consumer = step_str(a, s, "consumer", a.name);
  std::string mode = step_str(a, s, "mode", "group");
  if (mode != "group" && mode != "latest")
    fail(field(s, "mode"), "\"" + mode + "\": expected group or latest");
  // "latest" is the classic mistake: XREAD BLOCK ... STREAMS s $ each time, so whatever
  // arrived while the consumer was not blocked in XREAD is never read. It listens as itself.
  if (mode == "latest") group.clear();
  int64_t for_ms = step_ms(a, s, "for_ms", 0);
  TimeUs until = scheduler_.now_us() + ms_to_us(for_ms);
  int64_t span = begin(
      ev(a, "listen", sid(s), stream + (group.empty() ? " (new entries only)" : " group " + group))
          .with(F::channel, stream)
          .with(F::group, group)
          .with(F::method, "stream")
          .with(F::for_us, ms_to_us(for_ms)));
  ActorRt* p = &a;
  Next done = [this, p, &s, stream, span, k] {
    end(ev(*p, "listen_end", sid(s), stream).with(F::channel, stream), span);
    k();
  };
  if (mode == "latest") return consume_loop(a, s, stream, "", consumer, until, done);
  a.client->do_command(
      ctx(a, s), {"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"},
      guard1<Result>(a, [this, p, &s, done, stream, group, consumer, until](Result) {
        consume_loop(*p, s, stream, group, consumer, until, done);
      }));
}

void Engine::consume_loop(ActorRt& a, const Step& s, const std::string& stream,
                          const std::string& group, const std::string& consumer, TimeUs until,
                          Next k) {
  TimeUs now = scheduler_.now_us();
  if (now >= until) return k();
  int64_t count = s.n("count") ? num(*s.n("count"), &a, field(s, "count")) : 10;
  int64_t block = step_ms(a, s, "block_ms", 1000);
  // Do not block past the end of the listening window.
  block = std::max<int64_t>(1, std::min<int64_t>(block, (until - now) / 1000));
  bool ack = s.f("ack", true) && !group.empty();
  ActorRt* p = &a;
  Argv read =
      group.empty()
          ? Argv{"XREAD", "COUNT", std::to_string(count), "BLOCK", std::to_string(block), "STREAMS",
                 stream,  "$"}
          : Argv{"XREADGROUP", "GROUP",
                 group,        consumer,
                 "COUNT",      std::to_string(count),
                 "BLOCK",      std::to_string(block),
                 "STREAMS",    stream,
                 ">"};
  a.client->do_command(
      ctx(a, s), std::move(read),
      guard1<Result>(a, [this, p, &s, k, stream, group, consumer, until, ack](Result r) {
        auto again = [this, p, &s, k, stream, group, consumer, until] {
          consume_loop(*p, s, stream, group, consumer, until, k);
        };
        if (!r.ok()) {
          // The worker loop of the seeds: log, back off, read again from where the group is.
          put(ev(*p, "consume_error", sid(s), r.error.text)
                  .with(F::error, r.error.text)
                  .with(F::error_class, client::error_class(r.error.kind)));
          return after(*p, ms_to_us(100), again);
        }
        std::vector<std::pair<std::string, std::string>> got;
        if (r.reply.kind == Reply::Kind::Array)
          for (const Reply& st : r.reply.elements)
            if (st.kind == Reply::Kind::Array && st.elements.size() == 2) {
              auto e = entries(st.elements[1]);
              got.insert(got.end(), e.begin(), e.end());
            }
        deliver_entries(*p, s, stream, group, got, ack, again);
      }));
}

void Engine::do_autoclaim(ActorRt& a, const Step& s, Next k) {
  std::string stream = step_str(a, s, "stream");
  std::string group = step_str(a, s, "group");
  std::string consumer = step_str(a, s, "consumer", a.name);
  int64_t idle = step_ms(a, s, "min_idle_ms", 0);
  ActorRt* p = &a;
  a.client->do_command(
      ctx(a, s), {"XAUTOCLAIM", stream, group, consumer, std::to_string(idle), "0-0"},
      guard1<Result>(a, [this, p, &s, k, stream, group](Result r) {
        if (!r.ok() || r.reply.kind != Reply::Kind::Array || r.reply.elements.size() < 2) {
          save(*p, s, reply_text(r));
          return k();
        }
        auto got = entries(r.reply.elements[1]);
        save(*p, s, std::to_string(got.size()));
        deliver_entries(*p, s, stream, group, got, true, k);
      }));
}

// k is shared, not copied: each iteration's continuation holds a pointer to it, so the
// cost of an iteration does not grow with the nesting depth of the loops around it.
void Engine::do_repeat(ActorRt& a, const Step& s, int64_t i, std::shared_ptr<const Next> k) {
  int64_t times = num(*s.n("times"), &a, field(s, "times"));
  if (times < 0 || times > 1000000) fail(field(s, "times"), "expected 0 to 1000000 repetitions");
  if (i == 1) {
    // A nested repeat must not leave its own i behind for the outer loop.
    auto prev = a.vars.find("i");
    std::optional<std::string> saved;
    if (prev != a.vars.end()) saved = prev->second;
    ActorRt* p = &a;
    k = std::make_shared<const Next>([p, saved, k] {
      if (saved)
        p->vars["i"] = *saved;
      else
        p->vars.erase("i");
      (*k)();
    });
  }
  if (i > times) return (*k)();
  int64_t every = step_ms(a, s, "every_ms", 0);
  TimeUs started = scheduler_.now_us();
  a.vars["i"] = std::to_string(i);
  ActorRt* p = &a;
  run_block(a, s.body, 0, [this, p, &s, i, k, every, started] {
    TimeUs next = started + ms_to_us(every);
    TimeUs now = scheduler_.now_us();
    // Always through the event loop, even with no delay: a body that takes no time must
    // not grow the C++ stack with every iteration.
    after(*p, next > now ? next - now : 0, [this, p, &s, i, k] { do_repeat(*p, s, i + 1, k); });
  });
}

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
    auto tpl = n.templates.find(opt_.lang);
    if (tpl == n.templates.end()) tpl = n.templates.find("en");
    if (tpl == n.templates.end()) tpl = n.templates.begin();
    // The story's own numbers (the file's, not scaled by --time-scale).
    std::string text = tpl == n.templates.end()
                           ? n.text.get(opt_.lang)
                           : eval(tpl->second, nullptr, Where{n.where.pos, n.where.path + ".text"});
    int64_t index = static_cast<int64_t>(i);
    if (n.on) {
      TimeUs after =
          ms_to_us(dur_ms(n.after_ms, nullptr, Where{n.where.pos, n.where.path + ".after_ms"}));
      anchored_by_kind_[n.on->kind].push_back(anchored_.size());
      anchored_.push_back(AnchoredNote{&n, index, std::move(text), 0, after});
      continue;
    }
    TimeUs at = ms_to_us(dur_ms(n.at_ms, nullptr, Where{n.where.pos, n.where.path + ".at_ms"}));
    scheduler_.schedule_at(at, [this, text, index] { narrate(text, index); });
  }
}

void Engine::narrate(const std::string& text, int64_t index) {
  put(TraceEvent{scheduler_.now_us(), "narration", "", -1, -1, -1, text}.with(F::note, index));
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
      narrate(a.text, a.index);
    } else {
      std::string text = a.text;
      int64_t index = a.index;
      scheduler_.schedule_after(a.after_us, [this, text, index] { narrate(text, index); });
    }
  }
}

// ---------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------
void Engine::evaluate_checks() {
  std::map<std::string, bool> expected;
  for (const Expectation& e : sc_.expect)
    if (test(e.when, nullptr, e.where))
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
