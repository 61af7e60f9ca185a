// all_recorded: every actor's step that was meant to succeed did, as the actors saw it. Record
// events are written only when the server confirmed the step (see `record` in
// scenarios/README.md), so this is what the application believes happened; the lessons set it
// beside a check of the server's record to show where the two part.
#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

CheckResult all_recorded(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t want = args.number.at("count");
  std::string name = arg(args, "record");
  int64_t got = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) got++;
  if (got < want)
    r.violations.push_back(Violation{ix.end_us(),
                                     ix.end_us(),
                                     {},
                                     "only " + std::to_string(got) + " of " + std::to_string(want) +
                                         " '" + name + "' steps succeeded (as the actors saw it)"});
  finish(r, "all " + std::to_string(want) + " '" + name + "' steps succeeded (" +
                std::to_string(got) + ", as the actors saw it)");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "count", .type = FieldType::Count, .required = true, .unit = "steps"},
    {.key = "record", .type = FieldType::Text, .required = true}};

}  // namespace

extern const CheckKind all_recorded_check;
const CheckKind all_recorded_check{
    "all_recorded", kFields,
    "record events, which a step writes only when the server confirmed it: at least `count` of "
    "them",
    all_recorded};

}  // namespace redlab::scenario::checks
