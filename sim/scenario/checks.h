// The checks: invariants judged from the trace of a run (through its TraceIndex), never from
// a client's guess or a script's reply where the server's own record exists. Each says ok,
// or how it was violated: what, when and who, in plain words; or that it had nothing to judge.
//
// Every check kind is an entry of the check registry (kinds.h): its name, its fields, what it
// is judged from (one sentence, shown by `redlab check` and documented in scenarios/README.md)
// and its function. The kinds live in sim/scenario/checks/, registered in registry.cpp.
// "Server events" are the fake server's own record of what it did (key_set / key_del /
// key_expired with the value a key held, and the command that caused it); on a real server
// the trace has only what clients observed, and a check that needs server events falls back
// to the clients' view or says it cannot judge.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario {

// A check's arguments, evaluated at the end of the run: texts (templates, resource names) and
// counts.
struct CheckArgs {
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> number;
};

struct CheckKind {
  const char* name;
  std::span<const FieldSpec> fields;  // Text, Count or Resource
  const char* judged_from;            // one sentence for the documentation
  CheckResult (*run)(const CheckArgs& args, const TraceIndex& index);
};

// Every check kind, in documentation order.
std::span<const CheckKind* const> check_kinds();
const CheckKind* find_check(std::string_view name);

// Runs a check by its kind's name. An unknown name is never a verdict: it comes back not
// judged, with the reason.
CheckResult run_check(const std::string& check, const CheckArgs& args, const TraceIndex& index);
CheckResult run_check(const CheckKind& kind, const CheckArgs& args, const TraceIndex& index);

}  // namespace redlab::scenario
