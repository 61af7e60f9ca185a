// The vocabulary of a scenario file as data: every step kind, fault kind and check kind is one
// entry of a registry, with its name, its fields (type, unit, required or not, what an absent
// one means) and its behaviour. The loader validates a file against these entries, the engine
// runs them, and scenarios/README.md documents them (a test holds the document against the
// registries, both ways: tests/unit/scenario_kinds_doc_test.cpp).
//
// A kind is one unit in its own file (sim/scenario/steps/, faults/, checks/; tiny related kinds
// share one: steps/lock.cpp). Adding one is that file, one line in registry.cpp and its section
// of scenarios/README.md. The registries are constant data (constinit): no order of static
// initialisation to worry about, no lookup by string on the hot path (a loaded step, fault or
// check points at its kind).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::scenario {

// How a field is written in the file and read by the loader (scenarios/README.md, "Value
// types").
enum class FieldType : uint8_t {
  Text,            // a template: "lock:job:${n}"
  CommandLine,     // a template that is a command line: "SET stock ${n}"
  Number,          // an integer expression, any sign (checked by the kind when it runs)
  Count,           // an integer expression that cannot be negative (checked at load if fixed)
  Duration,        // milliseconds, never negative (checked at load if fixed, else at run)
  SignedDuration,  // milliseconds that may be negative (a clock jump)
  Bool,            // true / false
  List,            // an array of templates
  Commands,        // an array of command lines (templates)
  Script,          // the name of a script of the file
  Resource,        // the name of a resource of the file
  Steps,           // nested steps
  Cond,            // a condition
  Says,            // a Text (per language), never a template
  Actor,           // an actor (every instance) or one instance of it ("buyer7")
  Server,          // the name of a server of the file
};

// The words scenarios/README.md uses for a type ("duration", "list of command lines").
std::string_view field_type_name(FieldType type);

struct FieldSpec {
  const char* key;
  FieldType type;
  bool required = false;
  // The unit of a number: "ms" for every duration, "bytes", "entries", ... ("" for none).
  const char* unit = "";
  // What an absent optional field means, as the documentation says it ("100", "until the run
  // ends"); for a required one, what else the documentation adds ("non-empty").
  const char* absent = "";
  // A text field whose literal value must be one of these words, space-separated ("del lua");
  // a template is checked when the step runs.
  const char* choices = nullptr;
  bool non_empty = false;  // a list that must have an item
  // A required field's missing-key message adds this, with % replaced by the kind's name
  // ("who the % hits"); "" adds nothing.
  const char* missing_hint = "";
};

// The words of a choices string ("del lua" -> {"del", "lua"}).
std::vector<std::string> choice_words(const char* choices);
// "\"del\" or \"lua\"" (quoted = true) / "del or lua": what an error offers.
std::string choice_list(const char* choices, bool quoted);

// How scenarios/README.md writes a field (the documentation test holds it to these):
// its type with the unit, "duration (ms)", or for a text with choices "`del` or `lua`";
std::string field_type_doc(const FieldSpec& f);
// its Default column: "**required**" (", non-empty"), or what an absent one means ("—");
std::string field_default_doc(const FieldSpec& f);
// in one line, where a kind's fields are listed together (checks, faults):
// "`stock`: count (items), **required**", "`record`: text (absent: `sale`)".
std::string field_inline_doc(const FieldSpec& f);

// The field named key of a kind, or nullptr.
const FieldSpec* find_field(std::span<const FieldSpec> fields, std::string_view key);

class Engine;  // engine_impl.h: the run, as the kinds see it
struct ActorRt;
struct Step;
struct FaultDef;
class StepNeeds;

// What runs when a step is done (continuation style: a step that waits calls it later).
using Next = std::function<void()>;

// A step kind (sim/scenario/steps/). Besides its fields a step may carry do, when and save.
struct StepKind {
  const char* name;
  std::span<const FieldSpec> fields;
  // Runs the step for an actor and continues with next when it is done (at once, or later
  // from the event loop). Run-time errors are located (Engine::fail).
  void (*run)(Engine& engine, ActorRt& actor, const Step& step, Next next);
  // What the loader checks across fields, after each field's own checks (types, choices,
  // non-empty lists): an error message located at the step, or nullptr. nullptr: nothing.
  const char* (*validate)(const Step& step) = nullptr;
  // The scripts the step may run, for the run's user on a shared server (run_needs.h; its
  // command lines are found from its fields' types). nullptr: none.
  void (*needs)(const Step& step, StepNeeds& needs) = nullptr;
  bool requires_save = false;  // `set`: the variable it sets is its save
};

// Every step kind, in documentation order.
std::span<const StepKind* const> step_kinds();
const StepKind* find_step_kind(std::string_view name);

// A fault kind (sim/scenario/faults/). Its fields are among the keys every fault may carry
// besides do, at_ms, when and why: actor, server, for_ms and by_ms (accepted by every kind,
// ignored by those that do not use them) and keys of its own.
struct FaultKind {
  const char* name;
  std::span<const FieldSpec> fields;
  // Before anything runs: refuses (Engine::fail) what the backend cannot stage (a real
  // server's clock) or must not (a server redlab did not start). `at` is " at 2.0 s".
  // nullptr: it can run anywhere.
  void (*refuse)(const Engine& engine, const FaultDef& fault, const std::string& at);
  // The server-wide command it sends ("DEBUG SLEEP"), which a shared server's run user must
  // be allowed (run_needs.h); nullptr: none.
  const char* server_command;
  // Strikes, at its time.
  void (*fire)(Engine& engine, const FaultDef& fault);
};

// Every fault kind, in documentation order.
std::span<const FaultKind* const> fault_kinds();
const FaultKind* find_fault_kind(std::string_view name);

}  // namespace redlab::scenario
