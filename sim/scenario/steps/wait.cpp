// sleep and work: the actor waits. Both run on the actor's process timer (a pause stretches
// them); work counts running time and, ending while a watchdog's extend is in flight, waits
// for its answer.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

void run_wait(Engine& eng, ActorRt& a, const Step& s, Next k) {
  int64_t ms = eng.step_ms(a, s, "ms", 0);
  int64_t span = eng.begin(
      eng.ev(a, s.op, eng.sid(s), std::to_string(ms) + " ms").with(F::duration_us, ms_to_us(ms)));
  ActorRt* p = &a;
  // Work counts the time the actor runs: a stop-the-world pause in the middle of 12 s of
  // work ends it 12 s plus the pause after it began. A sleep is a timer, which a pause
  // only delays (it fires at the resume if it became due meanwhile).
  bool running_time = s.op == "work";
  eng.after(a, ms_to_us(ms), running_time, [&eng, p, &s, k, span] {
    eng.end(eng.ev(*p, s.op + "_done", eng.sid(s)), span);
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

constexpr FieldSpec kWait[] = {
    {.key = "ms", .type = FieldType::Duration, .required = true, .unit = "ms"}};

}  // namespace

extern const StepKind sleep_step, work_step;
const StepKind sleep_step{"sleep", kWait, run_wait, nullptr, nullptr, false};
const StepKind work_step{"work", kWait, run_wait, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps
