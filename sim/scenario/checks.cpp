// See checks.h. The check kinds themselves are in sim/scenario/checks/.
#include "sim/scenario/checks.h"

#include "sim/scenario/checks/common.h"

namespace redlab::scenario {

const CheckKind* find_check(std::string_view name) {
  for (const CheckKind* c : check_kinds())
    if (name == c->name) return c;
  return nullptr;
}

CheckResult run_check(const CheckKind& kind, const CheckArgs& args, const TraceIndex& index) {
  CheckResult r = kind.run(args, index);
  r.check = kind.name;
  return r;
}

CheckResult run_check(const std::string& check, const CheckArgs& args, const TraceIndex& index) {
  if (const CheckKind* kind = find_check(check)) return run_check(*kind, args, index);
  CheckResult r = checks::not_judged("there is no check named \"" + check + "\"");
  r.check = check;
  return r;
}

}  // namespace redlab::scenario
