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

#include "sim/client/client.h"
#include "sim/client/pubsub.h"
#include "sim/core/assert.h"
#include "sim/core/cmdline.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/fake/server.h"
#include "sim/fake/server_wide.h"
#include "sim/net/network.h"
#include "sim/net/process.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {

std::string format_time(TimeUs t) {
  if (t < 0) return "-" + format_time(-t);
  if (t < 1000000) return std::to_string(t / 1000) + " ms";
  // Tenths of a second, rounded down: exact integers, no floating point in output.
  return std::to_string(t / 1000000) + "." + std::to_string((t / 100000) % 10) + " s";
}

namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;
using K = std::function<void()>;
using Argv = std::vector<std::string>;

// The text a step saves from a reply: what a Go program would print of cmd.Val().
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

// A step "succeeded" for `record`: no error, and not nil, 0 or an empty array.
bool succeeded(const Result& r) {
  if (!r.ok()) return false;
  const Reply& reply = r.reply;
  if (reply.kind == Reply::Kind::Nil || reply.kind == Reply::Kind::NilArray) return false;
  if (reply.kind == Reply::Kind::Integer && reply.integer == 0) return false;
  if (reply.kind == Reply::Kind::Array && reply.elements.empty()) return false;
  return true;
}

struct LockRt {
  std::string token;
  size_t hold = 0;  // index in facts.holds
  net::Process::TimerId watchdog = 0;
  TimeUs ttl_us = 0;
  bool extending = false;
};

struct ActorRt {
  std::string name;
  const ActorDef* def = nullptr;
  int64_t index = 1;
  net::Process* process = nullptr;
  client::Client* client = nullptr;
  std::map<std::string, std::string> vars;
  Prng prng{0};
  uint64_t gen = 0;  // bumped when the actor abandons: stale continuations see it and stop
  bool finished = false;
  std::map<std::string, LockRt> locks;
  net::Process::TimerId timer = 0;  // the current sleep/work timer
  K after_extend;                   // work finished while an extend was in flight
  std::vector<std::unique_ptr<client::PubSub>> pubsubs;
};

class Engine {
 public:
  Engine(const Scenario& sc, const RunOptions& opt) : sc_(sc), opt_(opt) {}

  RunResult run() {
    try {
      return run_world();
    } catch (...) {
      if (backend_) backend_->finish();
      throw;
    }
  }

 private:
  RunResult run_world() {
    resolve_inputs();
    backend_ = opt_.backend;
    if (!backend_) {
      own_backend_ = make_fake_backend();
      backend_ = own_backend_.get();
    }
    refuse_server_wide_faults();
    build_world();
    for (auto& a : actors_) start_actor(*a);
    schedule_faults();
    schedule_narration();
    TimeUs end = ms_to_us(dur_ms(sc_.duration_ms, nullptr, sc_.duration_where));
    auto r = backend_->run_until(end, opt_.events_max, opt_.cancel);
    result_.events = r.events_run;
    result_.bound_hit = r.bound_hit;
    result_.end_us = scheduler_.now_us();
    if (r.bound_hit)
      trace_.append(TraceEvent{scheduler_.now_us(), "run_bound", "", -1, -1, -1,
                               "stopped after " + std::to_string(r.events_run) + " events"});
    for (auto& a : actors_) close_holds(*a, "run ended");
    trace_.append(TraceEvent{scheduler_.now_us(), "run_end", "", -1, -1, -1, ""});
    // Pending callbacks hold references into the world: drop clients before the rest.
    for (auto& a : actors_) a->pubsubs.clear();
    backend_->finish();
    result_.backend_trouble = backend_->trouble();
    if (!result_.backend_trouble.empty())
      trace_.append(TraceEvent{scheduler_.now_us(), "backend_trouble", "", -1, -1, -1,
                               result_.backend_trouble});
    result_.facts = std::move(facts_);
    evaluate_checks();
    trace_.set_listener(nullptr);
    result_.trace = std::move(trace_);
    return std::move(result_);
  }

  // ---------------------------------------------------------------------------------
  // Inputs and values
  // ---------------------------------------------------------------------------------
  [[noreturn]] void fail(const Where& w, const std::string& message) const {
    throw_located(sc_.file, w, message);
  }

  void resolve_inputs() {
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
        throw ScenarioError("--set " + k + "=" + std::to_string(v) + ": outside " + k +
                            "'s range [" + std::to_string(p->min) + ", " + std::to_string(p->max) +
                            "]");
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
  }

  std::optional<std::string> lookup(const ActorRt* a, std::string_view name) const {
    std::string n(name);
    if (a) {
      if (auto it = a->vars.find(n); it != a->vars.end()) return it->second;
    }
    if (n == "seed") return std::to_string(opt_.seed);
    if (auto it = result_.params.find(n); it != result_.params.end())
      return std::to_string(it->second);
    if (auto it = result_.variant.find(n); it != result_.variant.end()) return it->second;
    return std::nullopt;
  }
  Env env(const ActorRt* a) const {
    return [this, a](std::string_view n) { return lookup(a, n); };
  }
  // Evaluates an expression, template or condition of the file; an EvalError becomes a
  // located ScenarioError.
  template <typename T>
  auto eval(const T& x, const ActorRt* a, const Where& w) const {
    try {
      return x.eval(env(a));
    } catch (const EvalError& err) {
      fail(w, "\"" + x.source() + "\": " + err.message);
    }
  }
  int64_t num(const Expr& e, const ActorRt* a, const Where& w) const { return eval(e, a, w); }
  int64_t dur_ms(const Expr& e, const ActorRt* a, const Where& w) const {
    return scaled_ms(unscaled_ms(e, a, w));
  }
  // A non-negative number of the file, as written (counts, and durations before scaling).
  int64_t unscaled_ms(const Expr& e, const ActorRt* a, const Where& w) const {
    int64_t v = num(e, a, w);
    if (v < 0)
      fail(w, "\"" + e.source() + "\" is " + std::to_string(v) + ": a duration cannot be negative");
    if (v > 1000LL * 1000 * 1000)
      fail(w, "\"" + e.source() + "\" is longer than a million seconds");
    return v;
  }
  // A duration of the file at the run's time scale; a duration above 0 stays above 0.
  int64_t scaled_ms(int64_t ms) const {
    if (opt_.time_scale == 1.0 || ms == 0) return ms;
    return std::max<int64_t>(1, std::llround(static_cast<double>(ms) * opt_.time_scale));
  }
  TimeUs scaled_us(TimeUs us) const {
    if (opt_.time_scale == 1.0 || us == 0) return us;
    return std::max<TimeUs>(1, std::llround(static_cast<double>(us) * opt_.time_scale));
  }
  // Templates become command lines, where a duration parameter (unit "ms") is an argument
  // (SET ... PX ${ttl_ms}): at a time scale it is written scaled. Expressions and conditions
  // see the file's own values (dur_ms scales their results instead).
  std::string str(const Template& t, const ActorRt* a, const Where& w) const {
    if (opt_.time_scale == 1.0) return eval(t, a, w);
    try {
      return t.eval([this, a](std::string_view n) -> std::optional<std::string> {
        const Param* p = sc_.param(std::string(n));
        if (p && p->unit == "ms" && !(a && a->vars.count(std::string(n))))
          return std::to_string(scaled_ms(result_.params.at(p->name)));
        return lookup(a, n);
      });
    } catch (const EvalError& err) {
      fail(w, "\"" + t.source() + "\": " + err.message);
    }
  }
  bool test(const Cond& c, const ActorRt* a, const Where& w) const { return eval(c, a, w); }
  Where field(const Step& s, const char* key) const {
    return Where{s.where.pos, s.where.path + "." + key};
  }
  // def is a duration of the file (scaled like the others).
  int64_t step_ms(ActorRt& a, const Step& s, const char* key, int64_t def) const {
    const Expr* e = s.n(key);
    return e ? dur_ms(*e, &a, field(s, key)) : scaled_ms(def);
  }
  std::string step_str(ActorRt& a, const Step& s, const char* key,
                       const std::string& def = {}) const {
    const Template* t = s.t(key);
    return t ? str(*t, &a, field(s, key)) : def;
  }
  std::vector<std::string> step_list(ActorRt& a, const Step& s, const char* key) const {
    std::vector<std::string> out;
    if (const auto* l = s.l(key))
      for (size_t i = 0; i < l->size(); i++)
        out.push_back(
            str((*l)[i], &a,
                Where{s.where.pos, s.where.path + "." + key + "[" + std::to_string(i) + "]"}));
    return out;
  }
  std::vector<std::string> command(const Step& s, const std::string& line, const char* key) const {
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
  static std::string upper(std::string x) {
    for (char& c : x) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return x;
  }

  // ---------------------------------------------------------------------------------
  // Safety on servers redlab does not own (DESIGN.md, "Real servers: safety")
  // ---------------------------------------------------------------------------------
  // Why a command line acts on the whole server, not only the run's keys ("DEBUG acts on
  // the whole server"), or "" (sim/fake/server_wide.h, the list the real fabric uses too).
  static std::string server_wide(const std::string& line) {
    auto argv = split_args(line);
    return argv ? fake::server_wide_command(*argv).value_or("") : "";
  }
  void check_steps_on_shared(const std::vector<Step>& steps, const std::string& whose) const {
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
  static constexpr const char* kRefusalHint =
      "use --backend spawn (private servers), or --allow-server-faults if that server is yours "
      "to disturb";
  // Refuses, before anything runs, what would disturb a server redlab did not start: faults
  // that act on the whole server, server config, server-wide commands in steps and setup.
  void refuse_server_wide_faults() const {
    bool shared = !backend_->owns_servers();
    for (const FaultDef& f : sc_.faults) {
      if (f.when && !test(*f.when, nullptr, f.where)) continue;
      std::string at = " at " + format_time(ms_to_us(num(f.at_ms, nullptr, f.where)));
      if (f.op == "clock_jump" && !backend_->can_jump_clock())
        fail(f.where, "clock_jump" + at + " cannot be staged on " + backend_->describe() +
                          ": a real server's clock is the machine's; run it on the fake backend");
      if (f.op == "restart" && shared)
        fail(f.where, "restart of " + f.server + at +
                          " needs a server redlab started itself: " + "use --backend spawn");
      if (shared && !opt_.allow_server_faults && (f.op == "script_flush" || f.op == "stall")) {
        std::string what =
            f.op == "stall"
                ? "stall (DEBUG SLEEP) of " + f.server + at + " would stop every client of "
                : "script_flush of " + f.server + at + " would empty the script cache of ";
        fail(f.where, what + backend_->describe() + ": " + kRefusalHint);
      }
    }
    if (!shared || opt_.allow_server_faults) return;
    for (const ServerDef& def : sc_.servers)
      if (!def.config.empty())
        fail(config_where(def, 0), "CONFIG SET " + def.config[0].first +
                                       " changes the whole server " + backend_->describe() + ": " +
                                       kRefusalHint);
    for (const SetupCommand& c : sc_.setup) {
      if (c.when && !test(*c.when, nullptr, c.where)) continue;
      if (std::string why = server_wide(c.cmd.source()); !why.empty())
        fail(c.where, why + " (setup), not only this run's keys, on " + backend_->describe() +
                          ": " + kRefusalHint);
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
      if (std::string what = script_server_wide(source); !what.empty())
        fail(def.where, "script " + def.name + " calls " + what + ", which reaches beyond this " +
                            "run's keys on " + backend_->describe() + ": " + kRefusalHint);
    }
  }
  // The first redis.call / redis.pcall in a Lua source whose command (a string literal) is
  // server-wide or lists keys; "" if none.
  static std::string script_server_wide(const std::string& source) {
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
        if (upper(name) == "KEYS" || upper(name) == "SCAN") return upper(name);
        if (fake::server_wide_command({name, sub})) return upper(name);
      }
    }
    return "";
  }

  // ---------------------------------------------------------------------------------
  // The world
  // ---------------------------------------------------------------------------------
  void build_world() {
    if (opt_.on_event) trace_.set_listener(opt_.on_event);
    trace_.set_meta("scenario", sc_.id);
    trace_.set_meta("backend", backend_->describe());
    if (opt_.time_scale != 1.0) trace_.set_meta("time_scale", format_scale(opt_.time_scale));
    trace_.set_meta("seed", std::to_string(opt_.seed));
    for (auto& [k, v] : result_.variant) trace_.set_meta("variant." + k, v);
    for (auto& [k, v] : result_.params) trace_.set_meta("param." + k, std::to_string(v));
    for (auto& [k, v] : opt_.scripts) trace_.set_meta("script." + k, "replaced");

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
      setup.clock_offset_us =
          ms_to_us(offset_ms < 0 ? -scaled_ms(-offset_ms) : scaled_ms(offset_ms));
      setups.push_back(std::move(setup));
    }
    std::vector<Backend::ConfigRefusal> refused;
    backend_->start(scheduler_, &trace_, root.derive(fnv1a("network")).next_u64(), setups,
                    net::LinkConfig{scaled_us(sc_.latency_us), scaled_us(sc_.jitter_us)}, refused);
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
      trace_.append(
          TraceEvent{0, "setup", s.server, -1, -1, -1, line + " -> " + format_short(r, 60)});
      if (r.is_error()) fail(s.where, "setup command \"" + line + "\" failed: " + r.str);
    }
    for (const ScriptDef& def : sc_.scripts) {
      auto it = opt_.scripts.find(def.name);
      scripts_.emplace(def.name,
                       client::Script(it == opt_.scripts.end() ? def.source : it->second));
    }
    for (const ResourceDef& r : sc_.resources) {
      Resource res;
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
  }

  Where config_where(const ServerDef& def, size_t i) const {
    return Where{i < def.config_pos.size() ? def.config_pos[i] : def.where.pos,
                 "servers." + def.name + ".config." + def.config[i].first};
  }
  static std::string format_scale(double x) {
    std::ostringstream out;
    out << x;
    return out.str();
  }

  struct ClientRt {
    std::unique_ptr<net::Process> process;
    std::unique_ptr<client::Client> client;
  };
  std::unique_ptr<ClientRt> make_client(const ClientDef& cd, const std::string& host,
                                        const Prng& root) {
    Where w = cd.where;
    const ClientOptionsDef& o = cd.options;
    auto numv = [&](const char* k) -> std::optional<int64_t> {
      auto it = o.numbers.find(k);
      if (it == o.numbers.end()) return std::nullopt;
      // Durations (…_ms) follow the time scale; counts (pool_size, max_retries) do not.
      std::string_view key(k);
      int64_t v = unscaled_ms(it->second, nullptr, Where{w.pos, w.path + ".options." + k});
      return key.ends_with("_ms") ? scaled_ms(v) : v;
    };
    int64_t procs = numv("gomaxprocs").value_or(1);
    if (procs < 1) fail(w, "gomaxprocs must be at least 1");
    client::Options opts = o.profile == "v9.22" ? client::Options::go_redis_v9_22(procs)
                                                : client::Options::go_redis_v9(procs);
    if (opt_.time_scale != 1.0) {
      for (TimeUs* t : {&opts.pool_timeout_us, &opts.dial_timeout_us, &opts.read_timeout_us,
                        &opts.write_timeout_us, &opts.min_retry_backoff_us,
                        &opts.max_retry_backoff_us, &opts.conn_max_idle_time_us,
                        &opts.blocking_read_extra_us, &opts.pubsub_reconnect_delay_us})
        *t = scaled_us(*t);
    }
    if (auto v = numv("read_timeout_ms")) {
      opts.read_timeout_us = ms_to_us(*v);
      opts.derive_from_read_timeout();
    }
    if (auto v = numv("pool_size")) opts.pool_size = *v;
    if (opts.pool_size < 1) fail(w, "pool_size must be at least 1");
    if (auto v = numv("pool_timeout_ms")) opts.pool_timeout_us = ms_to_us(*v);
    if (auto v = numv("dial_timeout_ms")) opts.dial_timeout_us = ms_to_us(*v);
    if (auto v = numv("write_timeout_ms")) opts.write_timeout_us = ms_to_us(*v);
    if (auto v = numv("max_retries")) opts.max_retries = *v;
    if (auto v = numv("min_retry_backoff_ms")) opts.min_retry_backoff_us = ms_to_us(*v);
    if (auto v = numv("max_retry_backoff_ms")) opts.max_retry_backoff_us = ms_to_us(*v);
    if (auto v = numv("conn_max_idle_ms")) opts.conn_max_idle_time_us = ms_to_us(*v);
    if (auto v = numv("pubsub_reconnect_delay_ms")) opts.pubsub_reconnect_delay_us = ms_to_us(*v);
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

  void number_steps(const std::vector<Step>& steps) {
    for (const Step& s : steps) {
      if (step_ids_.count(&s)) continue;
      step_ids_[&s] = next_step_id_++;
      number_steps(s.body);
      number_steps(s.orelse);
    }
  }
  int64_t sid(const Step& s) const { return step_ids_.at(&s); }

  void emit(ActorRt& a, std::string kind, int64_t step, std::string text, int64_t attempt = -1,
            int64_t conn = -1) {
    trace_.append(TraceEvent{scheduler_.now_us(), std::move(kind), a.name, conn, step, attempt,
                             std::move(text)});
  }
  Context ctx(ActorRt& a, const Step& s, TimeUs deadline_us = kTimeNeverUs) const {
    return Context{deadline_us, step_ids_.at(&s), a.name};
  }
  // A continuation that runs only if the actor has not abandoned since it was made.
  K guard(ActorRt& a, K k) {
    uint64_t g = a.gen;
    ActorRt* p = &a;
    return [p, g, k = std::move(k)] {
      if (p->gen == g) k();
    };
  }
  template <typename T>
  std::function<void(T)> guard1(ActorRt& a, std::function<void(T)> k) {
    uint64_t g = a.gen;
    ActorRt* p = &a;
    return [p, g, k = std::move(k)](T v) {
      if (p->gen == g) k(std::move(v));
    };
  }
  void after(ActorRt& a, TimeUs delay_us, K k) {
    a.timer = a.process->after(delay_us, guard(a, [&a, k = std::move(k)] {
                                 a.timer = 0;
                                 k();
                               }));
  }

  // ---------------------------------------------------------------------------------
  // Actors
  // ---------------------------------------------------------------------------------
  void start_actor(ActorRt& a) {
    const ActorDef& d = *a.def;
    TimeUs start = ms_to_us(dur_ms(d.start_ms, &a, Where{d.where.pos, d.where.path + ".start_ms"}));
    // Drawn in the file's milliseconds, then scaled: at a time scale the starts keep their
    // spread (0..20 ms at 0.1 is 0..2 ms in steps of 0.1 ms, not three whole milliseconds).
    int64_t jitter =
        unscaled_ms(d.start_jitter_ms, &a, Where{d.where.pos, d.where.path + ".start_jitter_ms"});
    if (jitter > 0) start += scaled_us(ms_to_us(a.prng.range_inclusive(0, jitter)));
    ActorRt* p = &a;
    scheduler_.schedule_at(start, [this, p] {
      emit(*p, "actor_start", -1, p->def->role.get(opt_.lang));
      run_block(*p, p->def->steps, 0, [this, p] { finish_actor(*p, "done"); });
    });
  }

  void finish_actor(ActorRt& a, const std::string& why) {
    if (a.finished) return;
    a.finished = true;
    for (auto& [lock, l] : a.locks)
      if (l.watchdog) a.process->cancel(l.watchdog);
    close_holds(a, "actor ended");
    for (auto& ps : a.pubsubs) ps->close();
    emit(a, "actor_end", -1, why);
  }

  void abandon(ActorRt& a, const std::string& why) {
    if (a.finished) return;
    a.gen++;
    if (a.timer) a.process->cancel(a.timer);
    a.timer = 0;
    a.after_extend = nullptr;
    emit(a, "abandon", -1, why);
    close_holds(a, "abandoned");
    finish_actor(a, "abandoned: " + why);
  }

  void close_holds(ActorRt& a, const std::string& why) {
    // end_hold erases from a.locks: walk a copy of the names.
    std::vector<std::string> held;
    for (auto& [lock, l] : a.locks) held.push_back(lock);
    for (const std::string& lock : held) end_hold(a, lock, why);
  }
  void end_hold(ActorRt& a, const std::string& lock, const std::string& why) {
    auto it = a.locks.find(lock);
    if (it == a.locks.end()) return;
    if (it->second.watchdog) a.process->cancel(it->second.watchdog);
    Facts::Hold& h = facts_.holds[it->second.hold];
    h.to_us = scheduler_.now_us();
    h.ended = why;
    a.locks.erase(it);
  }

  void run_block(ActorRt& a, const std::vector<Step>& steps, size_t i, K k) {
    if (i >= steps.size()) return k();
    ActorRt* p = &a;
    exec(a, steps[i], guard(a, [this, p, &steps, i, k = std::move(k)]() mutable {
           run_block(*p, steps, i + 1, std::move(k));
         }));
  }

  void save(ActorRt& a, const Step& s, const std::string& value) {
    a.vars["reply"] = value;
    if (!s.save.empty()) a.vars[s.save] = value;
  }
  void record(ActorRt& a, const Step& s, bool success) {
    if (!success) return;
    if (const Template* t = s.t("record")) {
      std::string name = str(*t, &a, field(s, "record"));
      facts_.records.push_back(Facts::Record{name, a.name, scheduler_.now_us()});
      emit(a, "record", sid(s), name);
    }
  }

  void exec(ActorRt& a, const Step& s, K k) {
    if (s.when && !test(*s.when, &a, s.where)) return k();
    const std::string& op = s.op;
    if (op == "command") return do_command(a, s, std::move(k));
    if (op == "pipeline" || op == "tx") return do_pipeline(a, s, std::move(k));
    if (op == "sleep" || op == "work") return do_wait(a, s, std::move(k));
    if (op == "lock_acquire" || op == "fenced_acquire")
      return do_acquire(a, s, 0, scheduler_.now_us(), std::move(k));
    if (op == "lock_release") return do_release(a, s, std::move(k));
    if (op == "lock_extend") return do_extend(a, s, std::move(k));
    if (op == "watchdog") return do_watchdog(a, s, std::move(k));
    if (op == "watchdog_stop") {
      std::string lock = step_str(a, s, "lock");
      if (auto it = a.locks.find(lock); it != a.locks.end() && it->second.watchdog) {
        a.process->cancel(it->second.watchdog);
        it->second.watchdog = 0;
        emit(a, "watchdog_stop", sid(s), lock);
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
    if (op == "repeat") return do_repeat(a, s, 1, std::move(k));
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

  void do_command(ActorRt& a, const Step& s, K k) {
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

  void do_pipeline(ActorRt& a, const Step& s, K k) {
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

  void do_wait(ActorRt& a, const Step& s, K k) {
    int64_t ms = step_ms(a, s, "ms", 0);
    emit(a, s.op, sid(s), std::to_string(ms) + " ms");
    ActorRt* p = &a;
    after(a, ms_to_us(ms), [this, p, &s, k] {
      emit(*p, s.op + "_done", sid(s), "");
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

  std::string new_token(ActorRt& a) {
    static const char* hex = "0123456789abcdef";
    std::string t;
    uint64_t v = a.prng.next_u64();
    for (int i = 0; i < 16; i++) t += hex[(v >> (i * 4)) & 15];
    return t;
  }

  // tries: attempts so far; started_us: when the first began (for wait_ms).
  void do_acquire(ActorRt& a, const Step& s, int64_t tries, TimeUs started_us, K k) {
    std::string lock = step_str(a, s, "lock");
    int64_t ttl = step_ms(a, s, "ttl_ms", 0);
    if (ttl <= 0) fail(field(s, "ttl_ms"), "a lock needs a TTL above 0");
    int64_t retry = step_ms(a, s, "retry_ms", 100);
    int64_t wait = s.n("wait_ms") ? step_ms(a, s, "wait_ms", 0) : -1;  // -1: until the run ends
    if (tries == 0) {
      a.vars["token"] = s.t("token") ? step_str(a, s, "token") : new_token(a);
    }
    std::string token = a.vars["token"];
    bool fenced = s.op == "fenced_acquire";
    ActorRt* p = &a;
    auto on_result = guard1<Result>(
        a, [this, p, &s, tries, started_us, k, lock, token, ttl, retry, wait, fenced](Result r) {
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
            TimeUs now = scheduler_.now_us();
            LockRt l;
            l.token = token;
            l.ttl_us = ms_to_us(ttl);
            l.hold = facts_.holds.size();
            facts_.holds.push_back(Facts::Hold{lock, a2.name, token, now, now, ""});
            facts_.acquires.push_back(Facts::Acquire{lock, a2.name, token, now});
            end_hold(a2, lock, "reacquired");
            a2.locks[lock] = l;
            std::string text = lock + " token=" + token + " ttl=" + std::to_string(ttl) + " ms";
            if (fenced) {
              a2.vars["fence"] = std::to_string(fence);
              facts_.issued_fences[lock].push_back(fence);
              text += " fence=" + std::to_string(fence);
            }
            emit(a2, "lock_acquired", sid(s), text, tries);
            save(a2, s, fenced ? std::to_string(fence) : "1");
            return k();
          }
          if (tries == 0)
            emit(a2, "lock_busy", sid(s),
                 lock + (r.ok() ? " is held by someone else" : ": " + r.error.text), tries);
          if (wait >= 0 && scheduler_.now_us() + ms_to_us(retry) > started_us + ms_to_us(wait)) {
            emit(a2, "lock_gave_up", sid(s),
                 lock + " after " + std::to_string(tries + 1) + " tries", tries);
            save(a2, s, "0");
            return k();
          }
          after(a2, ms_to_us(retry), [this, p, &s, tries, started_us, k] {
            do_acquire(*p, s, tries + 1, started_us, k);
          });
        });
    if (fenced) {
      std::string fence_key = step_str(a, s, "fence_key");
      const client::Script& script =
          scripts_.at(s.nm("script").empty() ? "fenced_acquire" : s.nm("script"));
      a.client->run_script(ctx(a, s), script, {lock, fence_key}, {token, std::to_string(ttl)},
                           on_result);
    } else {
      a.client->do_command(ctx(a, s), {"SET", lock, token, "NX", "PX", std::to_string(ttl)},
                           on_result);
    }
  }

  void do_release(ActorRt& a, const Step& s, K k) {
    std::string lock = step_str(a, s, "lock");
    std::string method = step_str(a, s, "method", "del");
    if (method != "del" && method != "lua")
      fail(field(s, "method"), "\"" + method + "\": expected del or lua");
    auto it = a.locks.find(lock);
    if (it == a.locks.end()) {
      emit(a, "lock_not_held", sid(s), lock + ": nothing to release");
      save(a, s, "0");
      return k();
    }
    if (it->second.watchdog) {
      a.process->cancel(it->second.watchdog);
      it->second.watchdog = 0;
    }
    std::string token = it->second.token;
    ActorRt* p = &a;
    auto on_result = guard1<Result>(a, [this, p, &s, k, lock, method](Result r) {
      bool deleted = r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer > 0;
      facts_.releases.push_back(
          Facts::Release{lock, p->name, method, scheduler_.now_us(), deleted});
      if (!r.ok()) {
        emit(*p, "lock_release_failed", sid(s), lock + ": " + r.error.text);
        end_hold(*p, lock, "released");
      } else if (method == "lua" && !deleted) {
        emit(*p, "lock_lost", sid(s),
             lock + ": the release script returned 0, the lock was no longer ours");
        end_hold(*p, lock, "lost");
      } else {
        emit(*p, "lock_released", sid(s),
             lock + (method == "del" ? " by DEL" : " by compare-and-delete") + " -> " +
                 reply_text(r));
        end_hold(*p, lock, "released");
      }
      save(*p, s, deleted ? "1" : "0");
      k();
    });
    if (method == "del") {
      a.client->do_command(ctx(a, s), {"DEL", lock}, on_result);
    } else {
      const client::Script& script =
          scripts_.at(s.nm("script").empty() ? "lock_release" : s.nm("script"));
      a.client->run_script(ctx(a, s), script, {lock}, {token}, on_result);
    }
  }

  // compare-and-PEXPIRE; done(true) if still ours.
  void extend(ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
              std::function<void(bool)> done) {
    auto it = a.locks.find(lock);
    if (it == a.locks.end()) return done(false);
    it->second.extending = true;
    const client::Script& script =
        scripts_.at(s.nm("script").empty() ? "lock_extend" : s.nm("script"));
    ActorRt* p = &a;
    a.client->run_script(
        ctx(a, s), script, {lock}, {it->second.token, std::to_string(ttl_us / 1000)},
        guard1<Result>(a, [this, p, &s, lock, done](Result r) {
          auto it2 = p->locks.find(lock);
          if (it2 != p->locks.end()) it2->second.extending = false;
          if (r.ok() && r.reply.kind == Reply::Kind::Integer && r.reply.integer == 1) {
            emit(*p, "lock_extended", sid(s), lock);
            return done(true);
          }
          if (!r.ok()) {
            // A failed call is not proof of loss; the next tick tries again.
            emit(*p, "lock_extend_failed", sid(s), lock + ": " + r.error.text);
            return done(true);
          }
          emit(*p, "lock_lost", sid(s),
               lock + ": extend returned 0, the lock expired and is not ours");
          end_hold(*p, lock, "lost");
          done(false);
        }));
  }

  void do_extend(ActorRt& a, const Step& s, K k) {
    std::string lock = step_str(a, s, "lock");
    TimeUs ttl = ms_to_us(step_ms(a, s, "ttl_ms", 0));
    ActorRt* p = &a;
    extend(a, s, lock, ttl, [this, p, &s, k](bool ok) {
      save(*p, s, ok ? "1" : "0");
      k();
    });
  }

  void do_watchdog(ActorRt& a, const Step& s, K k) {
    std::string lock = step_str(a, s, "lock");
    int64_t ttl = step_ms(a, s, "ttl_ms", 0);
    int64_t every = s.n("every_ms") ? step_ms(a, s, "every_ms", 0) : ttl / 3;
    if (every <= 0) fail(field(s, "every_ms"), "the watchdog needs a period above 0");
    auto it = a.locks.find(lock);
    if (it == a.locks.end()) {
      emit(a, "lock_not_held", sid(s), lock + ": no watchdog for a lock we do not hold");
      return k();
    }
    emit(a, "watchdog_start", sid(s), lock + " every " + std::to_string(every) + " ms");
    arm_watchdog(a, s, lock, ms_to_us(ttl), ms_to_us(every));
    k();
  }
  void arm_watchdog(ActorRt& a, const Step& s, const std::string& lock, TimeUs ttl_us,
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
      extend(*p, s, lock, ttl_us, [this, p, &s, lock, ttl_us, every_us](bool ok) {
        if (!ok) {
          abandon(*p, "lost " + lock + " (found out at the watchdog's extend)");
          return;
        }
        arm_watchdog(*p, s, lock, ttl_us, every_us);
        if (p->after_extend) {
          K next = std::move(p->after_extend);
          p->after_extend = nullptr;
          next();
        }
      });
    });
  }

  struct Resource {
    bool check = true;
    int64_t highest = 0;
    bool any = false;
  };

  void do_write(ActorRt& a, const Step& s, K k) {
    std::string res = s.nm("resource");
    std::string fence_text = step_str(a, s, "fence");
    auto fence = parse_int(fence_text);
    if (!fence) fail(field(s, "fence"), "\"" + fence_text + "\" is not an integer fence");
    std::string value = step_str(a, s, "value", a.name);
    // The write travels to the database and back: a few ms, like a query.
    ActorRt* p = &a;
    after(a, ms_to_us(2), [this, p, &s, k, res, f = *fence, value] {
      Resource& r = resources_[res];
      bool accepted = !r.check || !r.any || f >= r.highest;
      facts_.writes.push_back(Facts::Write{res, p->name, value, f, r.any ? r.highest : 0, accepted,
                                           scheduler_.now_us()});
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
      emit(*p, accepted ? "resource_accept" : "resource_reject", sid(s), text);
      save(*p, s, accepted ? "1" : "0");
      k();
    });
  }

  // ---- WATCH transactions ----
  struct TxState {
    std::vector<std::string> keys, exec;
    std::string read;
    bool positive = true;
    bool same = true;
    int64_t max_attempts = 0;
    TimeUs think_us = 0;  // between the read and MULTI/EXEC: the application decides
    size_t fact = 0;
  };

  void do_watch_tx(ActorRt& a, const Step& s, K k) {
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
    st->fact = facts_.attempts.size();
    facts_.attempts.push_back(Facts::Attempts{a.name, sid(s), 0, 0, false});
    tx_attempt(a, s, st, std::move(k));
  }

  // One optimistic attempt; outcome: "committed", "aborted", "skipped", or an error text.
  void tx_attempt(ActorRt& a, const Step& s, std::shared_ptr<TxState> st, K k) {
    // "Unbounded" still ends: a run is bounded and a loop that never gives up is the lesson.
    static constexpr int64_t kUnboundedCap = 100000;
    Facts::Attempts& f = facts_.attempts[st->fact];
    f.attempts++;
    int64_t attempt = f.attempts;
    a.vars["attempts"] = std::to_string(attempt);
    ActorRt* p = &a;
    auto outcome = [this, p, &s, st, k, attempt](std::string what, std::string detail) {
      Facts::Attempts& f2 = facts_.attempts[st->fact];
      if (what == "aborted") {
        f2.aborted++;
        emit(*p, "tx_aborted", sid(s), "EXEC aborted: a watched key changed (" + detail + ")",
             attempt - 1);
        bool more = st->max_attempts == 0 ? attempt < kUnboundedCap : attempt < st->max_attempts;
        if (more) return tx_attempt(*p, s, st, k);
        f2.gave_up = true;
        emit(*p, "tx_gave_up", sid(s),
             "redis: transaction failed after " + std::to_string(attempt) + " attempts",
             attempt - 1);
        save(*p, s, "gave_up");
        return k();
      }
      if (what == "committed") {
        emit(*p, "tx_committed", sid(s), detail, attempt - 1);
        save(*p, s, "committed");
        record(*p, s, true);
        return k();
      }
      if (what == "skipped") {
        emit(*p, "tx_skipped", sid(s), detail, attempt - 1);
        save(*p, s, "skipped");
        return k();
      }
      emit(*p, "tx_error", sid(s), detail, attempt - 1);
      save(*p, s, detail);
      k();
    };
    emit(a, "tx_attempt", sid(s), "attempt " + std::to_string(attempt), attempt - 1);
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
            tx.do_command(c, read_argv,
                          [p, st, &tx, c, exec_cmds, guard_ok, result, finish](Result r) {
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
                              tx.tx_pipelined(
                                  c, exec_cmds, [result, finish, seen](client::PipelineResult pr) {
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

  void do_eval(ActorRt& a, const Step& s, K k) {
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
  void do_subscribe(ActorRt& a, const Step& s, K k) {
    auto channels = step_list(a, s, "channels");
    int64_t for_ms = step_ms(a, s, "for_ms", 0);
    int64_t handle_ms = step_ms(a, s, "handle_ms", 0);
    auto ps = std::make_unique<client::PubSub>(*a.client, sid(s), a.name);
    client::PubSub* raw = ps.get();
    a.pubsubs.push_back(std::move(ps));
    TimeUs from = scheduler_.now_us();
    TimeUs to = from + ms_to_us(for_ms);
    for (auto& ch : channels)
      facts_.listens.push_back(Facts::Listen{ch, a.name, "", false, from, to});
    ActorRt* p = &a;
    raw->on_message = [this, p](const client::Message& m) {
      facts_.deliveries.push_back(
          Facts::Delivery{m.channel, m.payload, p->name, "", scheduler_.now_us()});
    };
    auto open = std::make_shared<bool>(true);
    raw->subscribe(channels, guard1<Error>(a, [this, p, &s, k, raw, for_ms, open](Error e) {
                     if (!e.ok()) emit(*p, "subscribe_failed", sid(s), e.text);
                     after(*p, ms_to_us(for_ms), [raw, k, open] {
                       *open = false;
                       raw->close();
                       k();
                     });
                   }));
    // A slow reader takes handle_ms per message and reads the next one only then: what it
    // has not read waits in the server's output buffer (client-output-buffer-limit pubsub).
    if (handle_ms > 0) slow_reader(a, raw, ms_to_us(handle_ms), open);
  }
  void slow_reader(ActorRt& a, client::PubSub* raw, TimeUs every_us, std::shared_ptr<bool> open) {
    ActorRt* p = &a;
    // A process timer: a paused subscriber reads nothing either.
    p->process->after(every_us, [this, p, raw, every_us, open] {
      if (!*open || p->finished) return;
      net::ConnId conn = raw->conn_id();
      if (conn >= 0 && raw->connected()) {
        if (!fabric_->paced(conn)) fabric_->set_paced(conn);
        fabric_->read_one(conn);
      }
      slow_reader(*p, raw, every_us, open);
    });
  }

  void do_publish(ActorRt& a, const Step& s, K k) {
    std::string channel = step_str(a, s, "channel");
    std::string message = step_str(a, s, "message");
    if (s.n("pad_to")) {
      // Big messages fill a slow subscriber's output buffer sooner.
      int64_t pad = num(*s.n("pad_to"), &a, field(s, "pad_to"));
      if (pad < 0 || pad > 64 * 1024 * 1024) fail(field(s, "pad_to"), "expected 0 to 64 MB");
      if (int64_t(message.size()) < pad)
        message += " " + std::string(size_t(pad) - message.size() - 1, '.');
    }
    size_t idx = facts_.publishes.size();
    facts_.publishes.push_back(
        Facts::Publish{channel, message, a.name, false, -1, scheduler_.now_us()});
    ActorRt* p = &a;
    a.client->do_command(ctx(a, s), {"PUBLISH", channel, message},
                         guard1<Result>(a, [this, p, &s, k, idx](Result r) {
                           if (r.ok() && r.reply.kind == Reply::Kind::Integer)
                             facts_.publishes[idx].receivers = r.reply.integer;
                           save(*p, s, reply_text(r));
                           k();
                         }));
  }

  void do_stream_add(ActorRt& a, const Step& s, K k) {
    std::string stream = step_str(a, s, "stream");
    auto fields = step_list(a, s, "fields");
    if (fields.size() % 2 != 0) fail(field(s, "fields"), "fields come in name/value pairs");
    Argv argv{"XADD", stream};
    if (s.n("maxlen")) {
      argv.push_back("MAXLEN");
      argv.push_back(std::to_string(num(*s.n("maxlen"), &a, field(s, "maxlen"))));
    }
    argv.push_back("*");
    std::string message;
    for (auto& f : fields) {
      argv.push_back(f);
      message += (message.empty() ? "" : " ") + f;
    }
    size_t idx = facts_.publishes.size();
    facts_.publishes.push_back(
        Facts::Publish{stream, message, a.name, true, -1, scheduler_.now_us()});
    ActorRt* p = &a;
    a.client->do_command(ctx(a, s), argv, guard1<Result>(a, [this, p, &s, k, idx](Result r) {
                           // A failed XADD added nothing (or we cannot know): not counted as sent.
                           if (!r.ok()) facts_.publishes[idx].receivers = -2;
                           save(*p, s, reply_text(r));
                           k();
                         }));
  }

  // Entries of an XREADGROUP/XAUTOCLAIM reply: (id, "f1 v1 ...").
  static std::vector<std::pair<std::string, std::string>> entries(const Reply& list) {
    std::vector<std::pair<std::string, std::string>> out;
    if (list.kind != Reply::Kind::Array) return out;
    for (const Reply& e : list.elements) {
      if (e.kind != Reply::Kind::Array || e.elements.size() != 2) continue;
      std::string text;
      for (const Reply& f : e.elements[1].elements) text += (text.empty() ? "" : " ") + f.str;
      out.emplace_back(e.elements[0].str, text);
    }
    return out;
  }

  void deliver_entries(ActorRt& a, const Step& s, const std::string& stream,
                       const std::string& group,
                       const std::vector<std::pair<std::string, std::string>>& got, bool ack, K k) {
    if (got.empty()) return k();
    for (auto& [id, text] : got) {
      facts_.deliveries.push_back(
          Facts::Delivery{stream, text, a.name, group, scheduler_.now_us()});
      emit(a, "stream_message", sid(s), stream + " " + id + " " + text);
    }
    if (!ack) return k();
    Argv x{"XACK", stream, group};
    for (auto& [id, text] : got) x.push_back(id);
    a.client->do_command(ctx(a, s), x, guard1<Result>(a, [k](Result) { k(); }));
  }

  void do_stream_consume(ActorRt& a, const Step& s, K k) {
    std::string stream = step_str(a, s, "stream");
    std::string group = step_str(a, s, "group");
    std::string consumer = step_str(a, s, "consumer", a.name);
    TimeUs until = scheduler_.now_us() + ms_to_us(step_ms(a, s, "for_ms", 0));
    facts_.listens.push_back(
        Facts::Listen{stream, a.name, group, true, scheduler_.now_us(), until});
    ActorRt* p = &a;
    a.client->do_command(
        ctx(a, s), {"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"},
        guard1<Result>(a, [this, p, &s, k, stream, group, consumer, until](Result) {
          consume_loop(*p, s, stream, group, consumer, until, k);
        }));
  }
  void consume_loop(ActorRt& a, const Step& s, const std::string& stream, const std::string& group,
                    const std::string& consumer, TimeUs until, K k) {
    TimeUs now = scheduler_.now_us();
    if (now >= until) return k();
    int64_t count = s.n("count") ? num(*s.n("count"), &a, field(s, "count")) : 10;
    int64_t block = step_ms(a, s, "block_ms", 1000);
    // Do not block past the end of the listening window.
    block = std::max<int64_t>(1, std::min<int64_t>(block, (until - now) / 1000));
    bool ack = s.f("ack", true);
    ActorRt* p = &a;
    a.client->do_command(
        ctx(a, s),
        {"XREADGROUP", "GROUP", group, consumer, "COUNT", std::to_string(count), "BLOCK",
         std::to_string(block), "STREAMS", stream, ">"},
        guard1<Result>(a, [this, p, &s, k, stream, group, consumer, until, ack](Result r) {
          auto again = [this, p, &s, k, stream, group, consumer, until] {
            consume_loop(*p, s, stream, group, consumer, until, k);
          };
          if (!r.ok()) {
            // The worker loop of the seeds: log, back off, read again from where the group is.
            emit(*p, "consume_error", sid(s), r.error.text);
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

  void do_autoclaim(ActorRt& a, const Step& s, K k) {
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

  void do_repeat(ActorRt& a, const Step& s, int64_t i, K k) {
    int64_t times = num(*s.n("times"), &a, field(s, "times"));
    if (times < 0 || times > 1000000) fail(field(s, "times"), "expected 0 to 1000000 repetitions");
    if (i == 1) {
      // A nested repeat must not leave its own i behind for the outer loop.
      auto prev = a.vars.find("i");
      std::optional<std::string> saved;
      if (prev != a.vars.end()) saved = prev->second;
      ActorRt* p = &a;
      k = [p, saved, k = std::move(k)] {
        if (saved)
          p->vars["i"] = *saved;
        else
          p->vars.erase("i");
        k();
      };
    }
    if (i > times) return k();
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

  // ---------------------------------------------------------------------------------
  // Faults and narration
  // ---------------------------------------------------------------------------------
  std::vector<ActorRt*> actors_named(const std::string& def_name) {
    std::vector<ActorRt*> out;
    for (auto& a : actors_)
      if (a->def->name == def_name) out.push_back(a.get());
    return out;
  }

  void schedule_faults() {
    for (const FaultDef& f : sc_.faults) {
      if (f.when && !test(*f.when, nullptr, f.where)) continue;
      TimeUs at = ms_to_us(dur_ms(f.at_ms, nullptr, Where{f.where.pos, f.where.path + ".at_ms"}));
      const FaultDef* fp = &f;
      scheduler_.schedule_at(at, [this, fp] { fire(*fp); });
    }
  }

  void fault_event(const std::string& who, const std::string& text) {
    trace_.append(TraceEvent{scheduler_.now_us(), "fault", who, -1, -1, -1, text});
  }

  void fire(const FaultDef& f) {
    Where w_for{f.where.pos, f.where.path + ".for_ms"};
    Where w_by{f.where.pos, f.where.path + ".by_ms"};
    TimeUs for_us = f.for_ms ? ms_to_us(dur_ms(*f.for_ms, nullptr, w_for)) : 0;
    int64_t by_ms = f.by_ms ? num(*f.by_ms, nullptr, w_by) : 0;
    by_ms = by_ms < 0 ? -scaled_ms(-by_ms) : scaled_ms(by_ms);
    std::string why = f.why.get(opt_.lang);
    auto hosts = [&] {
      std::vector<std::string> out;
      for (ActorRt* a : actors_named(f.actor))
        if (std::find(out.begin(), out.end(), a->process->name()) == out.end())
          out.push_back(a->process->name());
      return out;
    };
    if (f.op == "pause") {
      for (ActorRt* a : actors_named(f.actor)) {
        if (a->process->paused()) continue;
        fault_event(a->process->name(),
                    "pause for " + format_time(for_us) + (why.empty() ? "" : ": " + why));
        a->process->pause_for(for_us);
        std::string name = a->process->name();
        scheduler_.schedule_after(for_us, [this, name] { fault_event(name, "resume"); });
      }
    } else if (f.op == "disconnect") {
      for (const std::string& h : hosts()) {
        fault_event(h, "connections dropped" + (why.empty() ? "" : ": " + why));
        for (net::ConnId c : fabric_->connections_of(h)) fabric_->disconnect(c);
      }
    } else if (f.op == "refuse" || f.op == "partition") {
      for (const std::string& h : hosts()) {
        bool refuse = f.op == "refuse";
        fault_event(h, std::string(refuse ? "new connections refused" : "partitioned from ") +
                           (refuse ? " by " : "") + f.server + " for " + format_time(for_us) +
                           (why.empty() ? "" : ": " + why));
        if (refuse)
          fabric_->set_refused(h, f.server, true);
        else
          fabric_->set_partition(h, f.server, true);
        std::string server = f.server;
        scheduler_.schedule_after(for_us, [this, h, server, refuse] {
          if (refuse)
            fabric_->set_refused(h, server, false);
          else
            fabric_->set_partition(h, server, false);
          fault_event(h, refuse ? "connections accepted again" : "partition healed");
        });
      }
    } else if (f.op == "latency") {
      if (by_ms < 0) fail(w_by, "extra latency cannot be negative (" + std::to_string(by_ms) + ")");
      for (const std::string& h : hosts()) {
        fault_event(h, "+" + std::to_string(by_ms) + " ms latency on its open connections" +
                           (for_us > 0 ? " for " + format_time(for_us) : std::string()));
        std::vector<net::ConnId> conns = fabric_->connections_of(h);
        for (net::ConnId c : conns) fabric_->set_extra_latency(c, ms_to_us(by_ms));
        if (for_us > 0)
          scheduler_.schedule_after(for_us, [this, h, conns] {
            for (net::ConnId c : conns) fabric_->set_extra_latency(c, 0);
            fault_event(h, "extra latency removed");
          });
      }
    } else if (f.op == "clock_jump") {
      fault_event(f.server, "clock jumps by " + std::to_string(by_ms) + " ms");
      backend_->jump_clock(f.server, ms_to_us(by_ms));
    } else if (f.op == "restart") {
      fault_event(f.server, "restart: data and script cache lost");
      backend_->restart(f.server);
    } else if (f.op == "script_flush") {
      fault_event(f.server, "SCRIPT FLUSH");
      backend_->server_command(f.server, {"SCRIPT", "FLUSH"});
    } else if (f.op == "stall") {
      // DEBUG SLEEP takes seconds; whole milliseconds are written exactly.
      int64_t ms = for_us / 1000;
      std::string secs =
          std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
      fault_event(f.server, "stalls for " + format_time(for_us));
      backend_->server_command(f.server, {"DEBUG", "SLEEP", secs});
    }
  }

  void schedule_narration() {
    for (const Note& n : sc_.narration) {
      if (n.when && !test(*n.when, nullptr, Where{n.where.pos, n.where.path + ".when"})) continue;
      TimeUs at = ms_to_us(dur_ms(n.at_ms, nullptr, Where{n.where.pos, n.where.path + ".at_ms"}));
      std::string text = n.text.get(opt_.lang);
      scheduler_.schedule_at(at, [this, text] {
        trace_.append(TraceEvent{scheduler_.now_us(), "narration", "", -1, -1, -1, text});
      });
    }
  }

  // ---------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------
  void evaluate_checks() {
    std::map<std::string, bool> expected;
    for (const Expectation& e : sc_.expect)
      if (test(e.when, nullptr, e.where))
        for (auto& [k, v] : e.checks) {
          if (v)
            expected[k] = *v;
          else
            expected.erase(k);
        }
    for (const CheckDef& def : sc_.checks) {
      CheckArgs args;
      for (auto& [k, t] : def.args) args.text[k] = str(t, nullptr, def.where);
      for (auto& [k, e] : def.numbers) args.number[k] = num(e, nullptr, def.where);
      CheckResult r = run_check(def.check, args, result_.facts, trace_);
      r.name = def.name;
      if (auto it = expected.find(def.name); it != expected.end()) {
        r.expected = it->second;
        if (r.ok != it->second) result_.expectation_met = false;
      }
      trace_.append(TraceEvent{result_.end_us, "check", "", -1, -1, -1,
                               def.name + ": " + (r.ok ? "holds" : "violated") + ": " + r.summary});
      result_.checks.push_back(std::move(r));
    }
  }

  const Scenario& sc_;
  RunOptions opt_;
  RunResult result_;
  Facts facts_;
  Trace trace_;
  Scheduler scheduler_;
  // The backend outlives the clients below (declared first, destroyed last).
  std::unique_ptr<Backend> own_backend_;
  Backend* backend_ = nullptr;
  net::Fabric* fabric_ = nullptr;
  std::map<std::string, client::Script> scripts_;
  std::map<std::string, Resource> resources_;
  std::map<std::string, std::unique_ptr<ClientRt>> shared_clients_;
  std::vector<std::unique_ptr<ClientRt>> own_clients_;
  std::vector<std::unique_ptr<ActorRt>> actors_;
  std::map<const Step*, int64_t> step_ids_;
  int64_t next_step_id_ = 0;
};

}  // namespace

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  Engine engine(scenario, options);
  return engine.run();
}

}  // namespace redlab::scenario
