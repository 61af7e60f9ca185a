// The scenario model: what a scenarios/*.json file says, validated and parsed.
//
// A scenario is data; one engine (engine.h) runs any of them. The loader rejects a file
// that is malformed in any way (JSON syntax, unknown keys, wrong types, negative
// durations, names that refer to nothing) with "file:line:column: path: message", and
// never crashes. Every expression, template and condition is parsed at load time.
// The format is documented in scenarios/README.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario/expr.h"
#include "sim/scenario/json.h"

namespace redlab::scenario {

struct CheckKind;
struct FaultKind;
struct StepKind;

// A located error in a scenario file ("scenarios/x.json:12:7: actors[0].steps[2]: ...").
struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Text shown to people, per language ("en", "ru", "cs"); a plain JSON string is English.
struct Text {
  std::map<std::string, std::string> by_lang;
  // The text in `lang`, else English, else any; empty if none.
  const std::string& get(const std::string& lang = "en") const;
  bool empty() const { return by_lang.empty(); }
};

struct Where {
  Pos pos;
  std::string path;  // JSON path: "actors[0].steps[2]"
};

struct Param {
  std::string name;
  int64_t def = 0;
  int64_t min = 0;
  int64_t max = 0;
  std::string unit;  // "ms", "count", ...: shown next to a slider
  Text label;
};

struct Variant {
  std::string name;
  std::vector<std::string> values;  // the first is the default unless `default` says otherwise
  std::string def;
  Text label;
  std::map<std::string, Text> value_labels;
};

struct ServerDef {
  std::string name;
  std::vector<std::pair<std::string, Template>> config;  // CONFIG SET name value, in order
  std::vector<Pos> config_pos;                           // where each config value is
  Expr clock_offset_ms = Expr::constant(0);
  std::string replica_of;  // a replica of that server ("": a primary)
  // The server exists only in runs where this holds (a replica one variant adds). Not on the
  // first server, the default of clients and faults.
  std::optional<Cond> when;
  Where where;
};

struct ClientOptionsDef {
  std::string profile = "v9.0";  // "v9.0" (v9.0..v9.7), "v9.8" (v9.8..v9.21) or "v9.22"
  // pool_size, read_timeout_ms, ...: go-redis meanings (0 = default, -1 = off; loader)
  std::map<std::string, Expr> numbers;
  std::map<std::string, bool> flags;  // context_timeout_enabled, retry_pool_timeout, ...
};

struct ClientDef {
  std::string name;
  std::string server;
  bool shared = false;  // one client (one pool, one process) for every actor that names it
  ClientOptionsDef options;
  Where where;
};

struct ScriptDef {
  std::string name;
  std::string source;
  Where where;
};

struct ResourceDef {
  std::string name;
  Cond check_fence;  // true: writes with a fence below the highest seen are rejected
  // true: one write per value (a unique key): a value already accepted is not applied
  // again. Absent: false.
  std::optional<Cond> unique_values;
  Where where;
};

struct Step {
  std::string op;  // "command", "lock_acquire", ... (scenarios/README.md lists them)
  const StepKind* kind = nullptr;  // its entry in the step registry (set by the loader)
  Where where;
  std::optional<Cond> when;
  std::string save;  // the variable that receives the step's result
  std::map<std::string, Template> text;
  std::map<std::string, Expr> number;
  std::map<std::string, bool> flag;
  std::map<std::string, std::vector<Template>> list;
  std::map<std::string, std::string> name;  // references: script, resource
  std::map<std::string, Text> says;         // note text
  std::optional<Cond> cond;                 // "if"
  std::vector<Step> body;                   // "repeat" steps, "if" then
  std::vector<Step> orelse;                 // "if" else

  const Template* t(const std::string& key) const;
  const Expr* n(const std::string& key) const;
  const std::vector<Template>* l(const std::string& key) const;
  bool f(const std::string& key, bool def) const;
  std::string nm(const std::string& key) const;
};

struct ActorDef {
  std::string name;
  Expr count = Expr::constant(1);  // replicas: name1..nameN (count 1: just name)
  std::string client = "default";
  Expr start_ms = Expr::constant(0);
  Expr start_jitter_ms = Expr::constant(0);
  std::optional<Cond> when;
  Text role;
  std::vector<Step> steps;
  Where where;
};

// A fault at a time. Its target is given by the keys its kind takes: `actor` (every instance
// of an actor, or one instance: "buyer7"), `server`, or both (the connections between them).
struct FaultDef {
  std::string op;  // pause, disconnect, refuse, partition, latency, clock_jump, restart, ...
  const FaultKind* kind = nullptr;  // its entry in the fault registry (set by the loader)
  Expr at_ms = Expr::constant(0);
  std::optional<Expr> for_ms;
  std::optional<Expr> by_ms;
  std::map<std::string, Expr> number;  // the kind's own numbers and durations
  std::string actor;                   // an actor or one instance of it; "" = none
  std::string server;                  // the first server unless given
  std::optional<Cond> when;
  Text why;
  Where where;

  const Expr* n(const std::string& key) const;
};

struct CheckDef {
  std::string name;                 // what expectations call it (defaults to the check)
  std::string check;                // mutual_exclusion, no_foreign_unlock, ...
  const CheckKind* kind = nullptr;  // its entry in the check registry (set by the loader)
  std::map<std::string, Template> args;
  std::map<std::string, Expr> numbers;
  Where where;
};

struct Expectation {
  Cond when;
  std::map<std::string, std::optional<bool>> checks;  // nullopt (JSON null): no expectation
  Where where;
};

// A narration note. It is shown either at a time (at_ms) or when something happens (on):
// the first (or nth) trace event of a kind, optionally by one actor and about one key or
// lock, then after_ms later. An anchored note never describes something that has not
// happened. Its text may use ${...} like any template (${ttl_ms}, ${ttl_ms/1000}).
struct NoteAnchor {
  std::string kind;   // a trace event kind: lock_acquired, key_expired, lock_released, ...
  std::string actor;  // "" = anyone (for server events the server's name)
  std::string key;    // "" = any; else the event's key or lock field
  std::string value;  // "" = any; else the event's value field (a key's new value)
  int64_t nth = 1;    // the nth matching event
};
struct Note {
  Expr at_ms = Expr::constant(0);
  std::optional<NoteAnchor> on;
  Expr after_ms = Expr::constant(0);
  std::optional<Cond> when;
  Text text;
  std::map<std::string, Template> templates;  // text by language, parsed
  Where where;
};

struct SetupCommand {
  std::string server;
  Template cmd;
  std::optional<Cond> when;
  Where where;
};

// An exercise: the student answers either with a script (`script`: redlab check --script
// NAME=FILE.lua replaces that script) or with settings (`choose`: the variants and parameters
// the student sets with --variant / --set; everything else is fixed). The grader runs every
// seed and requires each check in `expect` to come out as written, judged (checks.h).
struct Exercise {
  Text task;
  std::vector<Text> hints;                     // revealed one at a time
  std::string script;                          // a script exercise: the script the student replaces
  std::vector<std::string> choose;             // a settings exercise: what the student may set
  std::map<std::string, std::string> variant;  // fixed by the exercise
  std::map<std::string, int64_t> set;          // fixed by the exercise
  int64_t seeds = 20;
  std::map<std::string, bool> expect;  // checks that must come out this way for every seed
};

struct Scenario {
  std::string file;
  std::string id;
  Text title;
  std::string topic;
  Text story;
  std::vector<Param> params;
  std::vector<Variant> variants;
  std::vector<ServerDef> servers;
  int64_t latency_us = 200;  // network: one-way latency and jitter
  int64_t jitter_us = 50;
  std::vector<ClientDef> clients;
  std::vector<ScriptDef> scripts;
  std::vector<ResourceDef> resources;
  std::vector<SetupCommand> setup;
  std::vector<ActorDef> actors;
  std::vector<FaultDef> faults;
  // Faults added from outside the file for one run (intervention.h), as given, in order: they
  // are the last entries of `faults`, and they take the file's expectations away.
  std::vector<std::string> interventions;
  std::vector<CheckDef> checks;
  std::vector<Expectation> expect;
  std::vector<Note> narration;
  std::optional<Exercise> exercise;
  Expr duration_ms = Expr::constant(30000);
  Where duration_where{{}, "duration_ms"};
  // Two runs whose aligned events are at most this far apart tell the same story: `redlab
  // diff` lists timing differences within it as such (a real server's jitter, another seed).
  int64_t tolerance_ms = 50;
  std::string sha1;  // of the file's bytes: a trace names the exact scenario it ran

  const Param* param(const std::string& name) const;
  const Variant* variant(const std::string& name) const;
  const ScriptDef* script(const std::string& name) const;
  const ClientDef* client(const std::string& name) const;
};

// Throws ScenarioError("file:line:column: path: message"); the one format of located errors,
// at load and at run time.
[[noreturn]] void throw_located(const std::string& file, const Where& where,
                                const std::string& message);
// "a, b, c": the choices an error message offers.
std::string comma_list(const std::vector<std::string>& names);

// Parses and validates. Throws ScenarioError ("file:line:column: path: message").
Scenario load_scenario_text(std::string_view text, const std::string& file);
// Reads the file first (a missing or unreadable file is a ScenarioError too).
Scenario load_scenario_file(const std::string& path);

}  // namespace redlab::scenario
