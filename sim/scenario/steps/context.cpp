// context and cancel: Go contexts (sim/client/context.h) as a scenario makes and ends them.
//
// A `context` step is ctx, cancel := context.WithCancel(parent) (or WithTimeout with
// timeout_ms; WithoutCancel first with without_cancel), named so that later steps can pass it
// to a call (`"context": "req"` on command, pipeline, tx and eval) and a `cancel` step can run
// its CancelFunc. Names are one namespace for the run, like a Go program's variables seen by
// all its goroutines: an HTTP handler (one actor) makes the request's context, the goroutine it
// starts (another actor) uses it, and the handler's return cancels it (net/http cancels a
// request's context when ServeHTTP returns).
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

std::string describe(const std::string& parent, bool without_cancel, int64_t timeout_ms) {
  std::string from = parent.empty() ? "context.Background()" : parent;
  if (without_cancel) from = "context.WithoutCancel(" + from + ")";
  if (timeout_ms >= 0)
    return "context.WithTimeout(" + from + ", " + std::to_string(timeout_ms) + " ms)";
  return "context.WithCancel(" + from + ")";
}

void run_context(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string name = eng.step_str(a, s, "name");
  if (name.empty()) eng.fail(eng.field(s, "name"), "a context needs a name");
  std::string parent_name = eng.step_str(a, s, "parent");
  std::shared_ptr<client::ContextState> parent;
  if (!parent_name.empty()) {
    auto it = eng.contexts_.find(parent_name);
    if (it == eng.contexts_.end())
      eng.fail(eng.field(s, "parent"),
               "no context named \"" + parent_name + "\" (a context step makes one)");
    parent = it->second;
  }
  bool without_cancel = s.flag.count("without_cancel") && s.flag.at("without_cancel");
  // WithoutCancel(parent): not done when the parent is, and no Deadline(): a new root here
  // (what it keeps of the parent, its values, plays no part in a call).
  if (without_cancel) parent = nullptr;
  int64_t timeout_ms = s.n("timeout_ms") ? eng.step_ms(a, s, "timeout_ms", 0) : -1;
  TimeUs now = eng.scheduler_.now_us();
  TimeUs deadline = timeout_ms >= 0 ? add_saturating_us(now, ms_to_us(timeout_ms)) : kTimeNeverUs;
  eng.contexts_[name] = client::ContextState::derive(std::move(parent), deadline);
  TraceEvent e = eng.ev(a, "context", eng.sid(s),
                        name + " = " + describe(parent_name, without_cancel, timeout_ms));
  e.with(F::context, name);
  if (timeout_ms >= 0) e.with(F::duration_us, ms_to_us(timeout_ms));
  eng.put(std::move(e));
  k();
}

void run_cancel(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string name = eng.step_str(a, s, "context");
  auto it = eng.contexts_.find(name);
  if (it == eng.contexts_.end())
    eng.fail(eng.field(s, "context"),
             "no context named \"" + name + "\" (a context step makes one)");
  TimeUs now = eng.scheduler_.now_us();
  // The event first: the waits it ends (a pool wait, a backoff) end after it, on their
  // processes.
  client::ErrorKind before = it->second->err(now);
  eng.put(eng.ev(a, "context_cancel", eng.sid(s),
                 before == client::ErrorKind::None ? name + " cancelled"
                                                   : name + " cancelled (it was already done)")
              .with(F::context, name));
  it->second->cancel(now);
  k();
}

constexpr FieldSpec kContext[] = {
    {.key = "name", .type = FieldType::Text, .required = true},
    {.key = "parent", .type = FieldType::Text, .absent = "context.Background()"},
    {.key = "timeout_ms", .type = FieldType::Duration, .unit = "ms", .absent = "none"},
    {.key = "without_cancel", .type = FieldType::Bool, .absent = "`false`"}};
constexpr FieldSpec kCancel[] = {{.key = "context", .type = FieldType::Text, .required = true}};

}  // namespace

extern const StepKind context_step, cancel_step;
const StepKind context_step{"context", kContext, run_context, nullptr, nullptr, false};
const StepKind cancel_step{"cancel", kCancel, run_cancel, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps

namespace redlab::scenario {

void Engine::use_context(ActorRt& a, const Step& s, client::Context& c) const {
  std::string name = step_str(a, s, "context");
  auto it = contexts_.find(name);
  if (it == contexts_.end())
    fail(field(s, "context"), "no context named \"" + name + "\" (a context step makes one)");
  c.state = it->second;
  c.deadline_us = std::min(c.deadline_us, it->second->deadline_us());
}

}  // namespace redlab::scenario
