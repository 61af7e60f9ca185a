// resource_write: a write to a fenced resource (a database outside Redis), 2 ms away unless the
// step says how long it takes.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

void run_write(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string res = s.nm("resource");
  std::string fence_text = eng.step_str(a, s, "fence");
  auto fence = parse_int(fence_text);
  if (!fence) eng.fail(eng.field(s, "fence"), "\"" + fence_text + "\" is not an integer fence");
  std::string value = eng.step_str(a, s, "value", a.name);
  int64_t span = eng.begin(eng.ev(a, "resource_write", eng.sid(s),
                                  res + " fence=" + std::to_string(*fence) + " value=" + value)
                               .with(F::resource, res)
                               .with(F::fence, *fence)
                               .with(F::value, value));
  // The write travels to the database and back: a few ms, like a query (or `ms`, a slow one).
  // The database decides when the timer fires, on the writer's process: a writer frozen by a
  // pause in the middle of its write delivers it at the resume, with whatever fence it had.
  int64_t write_ms = s.n("ms") ? eng.step_ms(a, s, "ms", 2) : 2;
  ActorRt* p = &a;
  eng.after(a, ms_to_us(write_ms), [&eng, p, &s, k, res, f = *fence, value, span] {
    ResourceRt& r = eng.resources_[res];
    // A unique key refuses a value it already holds, whatever the fence: the second write of
    // one message changes nothing (an idempotent consumer's database).
    bool duplicate = r.unique && r.values.count(value) > 0;
    bool accepted = !duplicate && (!r.check || !r.any || f >= r.highest);
    int64_t highest_before = r.any ? r.highest : 0;
    std::string text = res + " fence=" + std::to_string(f) + " value=" + value;
    if (duplicate) {
      text += " rejected: " + value + " is already there (one write per value)";
    } else if (accepted) {
      if (r.unique) r.values.insert(value);
      if (r.any && f < r.highest)
        text += " accepted without a check (highest seen " + std::to_string(r.highest) + ")";
      else
        text += " accepted";
      r.highest = r.any ? std::max(r.highest, f) : f;
      r.any = true;
    } else {
      text += " rejected: fence " + std::to_string(f) + " < " + std::to_string(r.highest);
    }
    TraceEvent e = eng.ev(*p, accepted ? "resource_accept" : "resource_reject", eng.sid(s), text)
                       .with(F::resource, res)
                       .with(F::fence, f)
                       .with(F::highest, highest_before)
                       .with(F::value, value);
    if (duplicate) e.with(F::reason, "duplicate");
    eng.end(std::move(e), span);
    eng.save(*p, s, accepted ? "1" : "0");
    k();
  });
}

constexpr FieldSpec kWrite[] = {
    {.key = "resource", .type = FieldType::Resource, .required = true},
    {.key = "fence", .type = FieldType::Text, .required = true},
    {.key = "value", .type = FieldType::Text, .absent = "the actor's name"},
    {.key = "ms", .type = FieldType::Duration, .unit = "ms", .absent = "2"}};

}  // namespace

extern const StepKind resource_write_step;
const StepKind resource_write_step{"resource_write", kWrite, run_write, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps
