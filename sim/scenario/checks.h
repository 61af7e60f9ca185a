// The checks: invariants judged from the trace of a run (through its TraceIndex), never from
// a client's guess or a script's reply where the server's own record exists. Each says ok,
// or how it was violated: what, when and who, in plain words; or that it had nothing to judge.
//
// The registry below is the one list of checks: the loader validates a scenario's checks
// against it (names, fields, types) and scenarios/README.md documents it. Each entry says
// what it is computed from. "Server events" are the fake server's own record of what it did
// (key_set / key_del / key_expired with the value a key held, and the command that caused
// it); on a real server the trace has only what clients observed, and a check that needs
// server events falls back to the clients' view or says it cannot judge.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"

namespace redlab::scenario {

struct CheckArgs {
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> number;
};

struct CheckField {
  enum class Type : uint8_t { Text, Num, Resource };
  const char* key;
  Type type;
  bool required;
};

struct CheckSpec {
  const char* name;
  std::vector<CheckField> fields;
  const char* judged_from;  // one sentence for the documentation
  CheckResult (*run)(const CheckArgs& args, const TraceIndex& index);
};

// Every check, in documentation order.
const std::vector<CheckSpec>& check_registry();
const CheckSpec* find_check(std::string_view name);

// Runs a registered check (asserted: the loader refuses unknown ones).
CheckResult run_check(const std::string& check, const CheckArgs& args, const TraceIndex& index);

}  // namespace redlab::scenario
