// The engine's world as the step, fault and check kinds see it (sim/scenario/steps/,
// faults/; kinds.h). Internal to sim/scenario: the public interface is engine.h.
//
// One Engine is one run. Its members are open to the kinds, which are its parts in files of
// their own: a step kind's run function gets the engine, the actor instance and the step,
// and continues with `next` when the step is done (continuation style: a step that waits
// returns at once and calls next later, from the event loop). Everything a kind needs is
// here: the values of the file (eval, num, dur_ms, str, step_ms, ...), the trace (ev, put,
// begin, end), the actor's continuations (guard, after) and the world (clients, servers,
// scripts, resources). Small helpers are inline: they run for every step.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/client/client.h"
#include "sim/client/pubsub.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/net/process.h"
#include "sim/scenario/backend.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/kinds.h"
#include "sim/scenario/run_needs.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {

using Argv = std::vector<std::string>;

// The text a step saves from a reply: what a Go program would print of cmd.Val().
std::string reply_text(const client::Result& r);
// A step "succeeded" for `record`: no error, and not nil, 0 or an empty array.
bool succeeded(const client::Result& r);

struct LockRt {
  std::string token;
  int64_t hold_span = 0;  // lock_acquired .. hold_end in the trace
  net::Process::TimerId watchdog = 0;
  TimeUs ttl_us = 0;
  bool extending = false;
  // A Redlock (steps/redlock.cpp): every server it was tried on (a release goes to all of
  // them, as go-redsync's does) and the per-server timeout; empty for a single-server lock.
  std::vector<std::string> servers;
  TimeUs node_timeout_us = 0;
};

struct ActorRt {
  std::string name;
  const ActorDef* def = nullptr;
  int64_t index = 1;
  net::Process* process = nullptr;
  client::Client* client = nullptr;
  std::map<std::string, std::string, std::less<>> vars;  // less<>: looked up by string_view
  Prng prng{0};
  uint64_t gen = 0;  // bumped when the actor abandons: stale continuations see it and stop
  bool finished = false;
  std::map<std::string, LockRt> locks;
  net::Process::TimerId timer = 0;  // the current sleep/work timer
  Next after_extend;                // work finished while an extend was in flight
  uint64_t running_serial = 0;      // run_block: the step running now (see there)
  uint64_t inline_done = 0;         // run_block: the last step that finished inside exec
  std::vector<std::unique_ptr<client::PubSub>> pubsubs;
  // Its clients on servers other than its own client's (client_on), made when first needed.
  std::map<std::string, client::Client*, std::less<>> server_clients;
};

// A fenced resource: a database outside Redis that takes writes with a fencing token.
struct ResourceRt {
  bool check = true;
  int64_t highest = 0;
  bool any = false;
  // A unique key on the value (INSERT ... ON CONFLICT DO NOTHING, a payment API's idempotency
  // key): the values accepted so far, each applied once.
  bool unique = false;
  std::set<std::string> values;
};

class Engine {
 public:
  Engine(const Scenario& sc, const RunOptions& opt) : sc_(sc), opt_(opt) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  RunResult run();

  // ---------------------------------------------------------------------------------
  // Inputs and values
  // ---------------------------------------------------------------------------------
  [[noreturn]] void fail(const Where& w, const std::string& message) const {
    throw_located(sc_.file, w, message);
  }
  // A field of a step, as the place an error is reported at: its Where (a JSON path) is
  // built only when an error is, not at every evaluation of the step.
  struct At {
    const Step* step;
    const char* key;
  };
  [[noreturn]] void fail(const At& at, const std::string& message) const {
    fail(Where{at.step->where.pos, at.step->where.path + "." + at.key}, message);
  }

  std::optional<std::string> lookup(const ActorRt* a, std::string_view name) const {
    if (a) {
      if (auto it = a->vars.find(name); it != a->vars.end()) return it->second;
    }
    // The seed, parameters and variants as text, made once (resolved_text_).
    if (auto it = resolved_text_.find(name); it != resolved_text_.end()) return it->second;
    return std::nullopt;
  }
  Env env(const ActorRt* a) const {
    return [this, a](std::string_view n) { return lookup(a, n); };
  }
  // Evaluates an expression, template or condition of the file; an EvalError becomes a
  // located ScenarioError.
  template <typename T, typename W>
  auto eval(const T& x, const ActorRt* a, const W& w) const {
    try {
      return x.eval(env(a));
    } catch (const EvalError& err) {
      fail(w, "\"" + x.source() + "\": " + err.message);
    }
  }
  template <typename W>
  int64_t num(const Expr& e, const ActorRt* a, const W& w) const {
    return eval(e, a, w);
  }
  template <typename W>
  int64_t dur_ms(const Expr& e, const ActorRt* a, const W& w) const {
    return scaled_ms(unscaled_ms(e, a, w));
  }
  // A non-negative number of the file, as written (counts, and durations before scaling).
  template <typename W>
  int64_t unscaled_ms(const Expr& e, const ActorRt* a, const W& w) const {
    int64_t v = num(e, a, w);
    if (v < 0)
      fail(w, "\"" + e.source() + "\" is " + std::to_string(v) + ": a duration cannot be negative");
    if (v > 1000LL * 1000 * 1000)
      fail(w, "\"" + e.source() + "\" is longer than a million seconds");
    return v;
  }
  // The line's first two words are DEBUG SLEEP (its argument may be a template with blanks).
  static bool is_debug_sleep(std::string_view line) {
    auto word = [&line]() {
      size_t from = line.find_first_not_of(" \t");
      if (from == std::string_view::npos) return std::string_view{};
      size_t to = std::min(line.find_first_of(" \t", from), line.size());
      std::string_view w = line.substr(from, to - from);
      line.remove_prefix(to);
      return w;
    };
    auto is = [](std::string_view w, std::string_view upper_word) {
      return w.size() == upper_word.size() &&
             std::equal(w.begin(), w.end(), upper_word.begin(), [](char c, char u) {
               return std::toupper(static_cast<unsigned char>(c)) == u;
             });
    };
    return is(word(), "DEBUG") && is(word(), "SLEEP");
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
  // see the file's own values (dur_ms scales their results instead). DEBUG SLEEP, whose
  // argument is seconds, is the command path's own (command_of).
  template <typename W>
  std::string str(const Template& t, const ActorRt* a, const W& w) const {
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
  template <typename W>
  bool test(const Cond& c, const ActorRt* a, const W& w) const {
    return eval(c, a, w);
  }
  At field(const Step& s, const char* key) const { return At{&s, key}; }
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
  // A text field with choices (FieldSpec::choices): its value, the first choice if absent; a
  // value that is none of them is a located error ("\"x\": expected del or lua").
  std::string step_choice(ActorRt& a, const Step& s, const char* key) const;
  // A step's command line, its template field `key` (split like redis-cli): a located error if
  // it is not one. The command path owns DEBUG SLEEP at a time scale (command_of).
  Argv command(ActorRt& a, const Step& s, const char* key) const;
  // Each command line of a step's list field `key`, as command().
  std::vector<Argv> commands(ActorRt& a, const Step& s, const char* key) const;
  template <typename W>
  Argv command_of(const Template& t, const ActorRt& a, const W& w) const;
  static std::string upper(std::string x);

  // ---------------------------------------------------------------------------------
  // The trace
  // ---------------------------------------------------------------------------------
  int64_t sid(const Step& s) const { return step_ids_.at(&s); }

  // An actor's event: add fields to what ev() returns, then put() it; emit() for plain ones.
  TraceEvent ev(ActorRt& a, std::string kind, int64_t step, std::string text = {},
                int64_t attempt = -1, int64_t conn = -1) const {
    return TraceEvent{scheduler_.now_us(), std::move(kind), a.name, conn, step, attempt,
                      std::move(text)};
  }
  void put(TraceEvent&& e) { trace_.append(std::move(e)); }
  void emit(ActorRt& a, std::string kind, int64_t step, std::string text, int64_t attempt = -1,
            int64_t conn = -1) {
    put(ev(a, std::move(kind), step, std::move(text), attempt, conn));
  }
  // An event that begins a span; returns the span's id.
  int64_t begin(TraceEvent e) {
    e.span = trace_.new_span();
    int64_t span = e.span;
    put(std::move(e));
    return span;
  }
  // An event that ends span `span` (0: none).
  void end(TraceEvent e, int64_t span) {
    e.ends = span;
    put(std::move(e));
  }
  client::Context ctx(ActorRt& a, const Step& s, TimeUs deadline_us = kTimeNeverUs) const {
    client::Context c{deadline_us, step_ids_.at(&s), a.name, nullptr};
    if (s.t("context")) use_context(a, s, c);
    return c;
  }
  // The step's `context` (a Go context a `context` step made): its state and deadline on c
  // (steps/context.cpp); a run error if no context has that name.
  void use_context(ActorRt& a, const Step& s, client::Context& c) const;
  // A continuation that runs only if the actor has not abandoned since it was made. Templates
  // over the continuation, so the guard and what it guards become one closure (one
  // std::function, one allocation, where the callee takes it) instead of one inside another.
  template <typename Fn>
  auto guard(ActorRt& a, Fn k) {
    uint64_t g = a.gen;
    ActorRt* p = &a;
    return [p, g, k = std::move(k)]() mutable {
      if (p->gen == g) k();
    };
  }
  template <typename T, typename Fn>
  auto guard1(ActorRt& a, Fn k) {
    uint64_t g = a.gen;
    ActorRt* p = &a;
    return [p, g, k = std::move(k)](T v) mutable {
      if (p->gen == g) k(std::move(v));
    };
  }
  // running_time: the delay counts only while the actor's process runs (work).
  template <typename Fn>
  void after(ActorRt& a, TimeUs delay_us, bool running_time, Fn k) {
    ActorRt* p = &a;
    auto cb = guard(a, [p, k = std::move(k)]() mutable {
      p->timer = 0;
      k();
    });
    a.timer = running_time ? a.process->after_running(delay_us, std::move(cb))
                           : a.process->after(delay_us, std::move(cb));
  }
  template <typename Fn>
  void after(ActorRt& a, TimeUs delay_us, Fn k) {
    after(a, delay_us, false, std::move(k));
  }

  // ---------------------------------------------------------------------------------
  // Actors (engine.cpp)
  // ---------------------------------------------------------------------------------
  void start_actor(ActorRt& a);
  void finish_actor(ActorRt& a, const std::string& why);
  // The actor gives up: its pending continuations never run, its remaining steps neither.
  void abandon(ActorRt& a, const std::string& why);
  void close_holds(ActorRt& a, const std::string& why);
  // The actor stops believing it holds `lock` (released, lost, abandoned, ended, ...).
  void end_hold(ActorRt& a, const std::string& lock, const std::string& why);
  // Runs steps[i..] then k, in constant stack however long the list (see engine.cpp).
  void run_block(ActorRt& a, const std::vector<Step>& steps, size_t i, Next k);
  void exec(ActorRt& a, const Step& s, Next k);
  // The actor's go-redis client on `server` (a step that names a server, a Redlock's masters):
  // its own client if that is where it goes, else a client of the same program, with the
  // same options, made when first asked for. `server` must be a server of the file.
  client::Client& client_on(ActorRt& a, const std::string& server);
  // A step's result: the variable reply, and its save variable if it has one.
  void save(ActorRt& a, const Step& s, const std::string& value);
  // The step's `record` event, when it succeeded.
  void record(ActorRt& a, const Step& s, bool success);

  // ---------------------------------------------------------------------------------
  // Faults (engine.cpp; the kinds are in faults/)
  // ---------------------------------------------------------------------------------
  // The actor instances a fault's `actor` names: every instance of that actor, or the one
  // instance of that name ("buyer7").
  std::vector<ActorRt*> targets(const FaultDef& f);
  // Their hosts (client processes: an instance's own, or a shared client's), once each, in
  // instance order.
  std::vector<std::string> hosts(const FaultDef& f);
  // The client process `host` dies (the crash fault): see engine.cpp. restart_after_us >= 0:
  // its actors start again from their first step that long after, on a fresh process.
  void crash_host(const std::string& host, const std::string& why, TimeUs restart_after_us);
  void restart_host(const std::string& host);
  // A fault's event on the lane of what it hits (a client process, a server).
  TraceEvent fault_ev(const std::string& who, const std::string& text, const std::string& fault) {
    return TraceEvent{scheduler_.now_us(), "fault", who, -1, -1, -1, text}.with(F::fault, fault);
  }
  // A fault's for_ms (0 if absent) in µs, and by_ms (0 if absent) in ms at the run's scale,
  // evaluated when it fires.
  TimeUs fault_for_us(const FaultDef& f) const;
  int64_t fault_by_ms(const FaultDef& f) const;
  // Its `why`, as the fault event adds it: ": a stop-the-world pause" or "".
  std::string because(const FaultDef& f) const {
    std::string why = f.why.get(opt_.lang);
    return why.empty() ? "" : ": " + why;
  }
  static constexpr const char* kRefusalHint =
      "use --backend spawn (private servers), or --allow-server-faults if that server is yours "
      "to disturb";

  // ---------------------------------------------------------------------------------
  // The run (engine.cpp)
  // ---------------------------------------------------------------------------------
  RunResult run_world();
  std::string lua_bound_text() const;
  void resolve_inputs();
  static std::string server_wide(const std::string& line);
  void check_steps_on_shared(const std::vector<Step>& steps, const std::string& whose) const;
  RunNeeds refuse_server_wide_faults() const;
  static std::string script_server_wide(const std::string& source, size_t* found_at = nullptr);
  void build_world();
  Where config_where(const ServerDef& def, size_t i) const;
  // Whether a server is in this run (its `when` holds; servers without one always are).
  bool in_run(const ServerDef& def) const {
    return !def.when || test(*def.when, nullptr, Where{def.where.pos, def.where.path + ".when"});
  }
  bool server_in_run(std::string_view name) const {
    for (const ServerDef& def : sc_.servers)
      if (def.name == name) return in_run(def);
    return false;
  }
  static std::string format_scale(double x);
  struct ClientRt {
    std::unique_ptr<net::Process> process;
    std::unique_ptr<client::Client> client;
    // The same program's clients on other servers (client_on): one pool per server, as
    // go-redsync keeps one per master. Declared last: destroyed before the process.
    std::map<std::string, std::unique_ptr<client::Client>> others;
  };
  std::unique_ptr<ClientRt> make_client(const ClientDef& cd, const std::string& host,
                                        const Prng& root);
  void number_steps(const std::vector<Step>& steps);
  void schedule_faults();
  void schedule_narration();
  void narrate(const std::string& text, const std::vector<std::string>& texts, int64_t index);
  void on_trace_event(const TraceEvent& e);
  void evaluate_checks();
  // The key_final event of each key a key_final check names: the server's own value when the
  // run ends (checks/keys.cpp), written before the servers go.
  void record_final_keys();

  // ---------------------------------------------------------------------------------
  // The world
  // ---------------------------------------------------------------------------------
  const Scenario& sc_;
  RunOptions opt_;
  RunResult result_;
  // What lookup() answers for a name that is not an actor's variable: "seed", then each
  // parameter, then each variant (the first of these wins, as lookup() always had it).
  std::map<std::string, std::string, std::less<>> resolved_text_;
  // What the run needs of a server (commands, faults), checked before anything is sent.
  RunNeeds needs_;
  Trace trace_;
  Scheduler scheduler_;
  // The backend outlives the clients below (declared first, destroyed last).
  std::unique_ptr<Backend> own_backend_;
  Backend* backend_ = nullptr;
  net::Fabric* fabric_ = nullptr;
  std::map<std::string, client::Script> scripts_;
  std::map<std::string, ResourceRt> resources_;
  // The Go contexts `context` steps made, by name (steps/context.cpp). One namespace for the
  // run, as one Go program's variables are for its goroutines: an HTTP handler's request
  // context, used by the goroutine it started (another actor on the same shared client).
  std::map<std::string, std::shared_ptr<client::ContextState>, std::less<>> contexts_;
  std::map<std::string, std::unique_ptr<ClientRt>> shared_clients_;
  std::vector<std::unique_ptr<ClientRt>> own_clients_;
  // Crashed clients: kept until the run ends, since the network and the scheduler may still
  // name their connections and (cancelled) events.
  std::vector<std::unique_ptr<ClientRt>> dead_clients_;
  std::vector<std::unique_ptr<client::PubSub>> dead_pubsubs_;
  Prng root_{0};  // the run's root random source (make_client derives a client's from it)
  std::vector<std::unique_ptr<ActorRt>> actors_;
  std::map<const Step*, int64_t> step_ids_;
  int64_t next_step_id_ = 0;
  struct AnchoredNote {
    const Note* note;
    int64_t index;
    std::string text;
    std::vector<std::string> texts;  // en, ru, cs (empty: the same in every language)
    int64_t seen;                    // matching events so far; -1 once told
    TimeUs after_us;
  };
  std::vector<AnchoredNote> anchored_;
  std::unordered_map<std::string, std::vector<size_t>> anchored_by_kind_;  // kind -> notes
  // Bounds of the run (RunOptions): steps run so far, the last one (named when a bound stops
  // the run), and which bound stopped it.
  uint64_t exec_serial_ = 0;
  uint64_t steps_run_ = 0;
  const Step* last_step_ = nullptr;
  const char* bound_reason_ = nullptr;
  std::string lua_bound_sha_;  // the script running when lua_instructions_max was reached
};

}  // namespace redlab::scenario
