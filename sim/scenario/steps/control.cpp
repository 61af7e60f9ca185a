// Control flow and the actor's own bookkeeping: repeat, if, note, set. A body runs through
// Engine::run_block, in constant stack however long or often it runs.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

// k is shared, not copied: each iteration's continuation holds a pointer to it, so the
// cost of an iteration does not grow with the nesting depth of the loops around it.
void repeat_from(Engine& eng, ActorRt& a, const Step& s, int64_t i, std::shared_ptr<const Next> k) {
  int64_t times = eng.num(*s.n("times"), &a, eng.field(s, "times"));
  if (times < 0 || times > 1000000)
    eng.fail(eng.field(s, "times"), "expected 0 to 1000000 repetitions");
  if (i == 1) {
    // A nested repeat must not leave its own i behind for the outer loop.
    auto prev = a.vars.find("i");
    std::optional<std::string> saved;
    if (prev != a.vars.end()) saved = prev->second;
    ActorRt* p = &a;
    k = std::make_shared<const Next>([p, saved, k] {
      if (saved)
        p->vars["i"] = *saved;
      else
        p->vars.erase("i");
      (*k)();
    });
  }
  if (i > times) return (*k)();
  int64_t every = eng.step_ms(a, s, "every_ms", 0);
  TimeUs started = eng.scheduler_.now_us();
  a.vars["i"] = std::to_string(i);
  ActorRt* p = &a;
  eng.run_block(a, s.body, 0, [&eng, p, &s, i, k, every, started] {
    TimeUs next = started + ms_to_us(every);
    TimeUs now = eng.scheduler_.now_us();
    // Always through the event loop, even with no delay: a body that takes no time must
    // not grow the C++ stack with every iteration.
    eng.after(*p, next > now ? next - now : 0,
              [&eng, p, &s, i, k] { repeat_from(eng, *p, s, i + 1, k); });
  });
}

void run_repeat(Engine& eng, ActorRt& a, const Step& s, Next k) {
  repeat_from(eng, a, s, 1, std::make_shared<const Next>(std::move(k)));
}

void run_if(Engine& eng, ActorRt& a, const Step& s, Next k) {
  bool yes = eng.test(*s.cond, &a, eng.field(s, "cond"));
  eng.run_block(a, yes ? s.body : s.orelse, 0, std::move(k));
}

void run_note(Engine& eng, ActorRt& a, const Step& s, Next k) {
  eng.emit(a, "note", eng.sid(s), s.says.at("text").get(eng.opt_.lang));
  k();
}

void run_set(Engine& eng, ActorRt& a, const Step& s, Next k) {
  a.vars[s.save] = eng.step_str(a, s, "value");
  k();
}

constexpr FieldSpec kRepeat[] = {
    {.key = "times", .type = FieldType::Number, .required = true, .unit = "iterations"},
    {.key = "every_ms", .type = FieldType::Duration, .unit = "ms", .absent = "0"},
    {.key = "steps", .type = FieldType::Steps, .required = true}};
constexpr FieldSpec kIf[] = {{.key = "cond", .type = FieldType::Cond, .required = true},
                             {.key = "then", .type = FieldType::Steps, .required = true},
                             {.key = "else", .type = FieldType::Steps, .absent = "`[]`"}};
constexpr FieldSpec kNote[] = {{.key = "text", .type = FieldType::Says, .required = true}};
constexpr FieldSpec kSet[] = {{.key = "value", .type = FieldType::Text, .required = true}};

}  // namespace

extern const StepKind repeat_step, if_step, note_step, set_step;
const StepKind repeat_step{"repeat", kRepeat, run_repeat, nullptr, nullptr, false};
const StepKind if_step{"if", kIf, run_if, nullptr, nullptr, false};
const StepKind note_step{"note", kNote, run_note, nullptr, nullptr, false};
const StepKind set_step{"set", kSet, run_set, nullptr, nullptr, true};

}  // namespace redlab::scenario::steps
