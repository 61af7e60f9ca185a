// Steps that send commands: command (one), pipeline and tx (several in one write, the
// second in MULTI ... EXEC) and eval (a script, EVALSHA falling back to EVAL).
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

void run_command(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::vector<std::string> argv;
  if (s.t("cmd"))
    argv = eng.command(a, s, "cmd");
  else
    argv = eng.step_list(a, s, "args");
  if (argv.empty()) eng.fail(s.where, "an empty command");
  TimeUs deadline = kTimeNeverUs;
  if (s.n("deadline_ms"))
    deadline = eng.scheduler_.now_us() + ms_to_us(eng.step_ms(a, s, "deadline_ms", 0));
  ActorRt* p = &a;
  eng.client_on(a, s.nm("server"))
      .do_command(eng.ctx(a, s, deadline), argv, eng.guard1<Result>(a, [&eng, p, &s, k](Result r) {
        eng.save(*p, s, reply_text(r));
        p->vars["result_class"] = client::result_class(r);
        eng.record(*p, s, succeeded(r));
        k();
      }));
}

void run_pipeline(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::vector<Argv> cmds = eng.commands(a, s, "cmds");
  ActorRt* p = &a;
  auto done = eng.guard1<client::PipelineResult>(a, [&eng, p, &s, k](client::PipelineResult r) {
    std::string text =
        r.error.ok() ? (r.results.empty() ? "" : reply_text(r.results.back())) : r.error.text;
    eng.save(*p, s, text);
    p->vars["result_class"] = r.error.ok() ? "ok" : client::error_class(r.error.kind);
    eng.record(*p, s, r.error.ok());
    k();
  });
  if (s.op == "tx")
    a.client->tx_pipeline(eng.ctx(a, s), std::move(cmds), std::move(done));
  else
    a.client->pipeline(eng.ctx(a, s), std::move(cmds), std::move(done));
}

void run_eval(Engine& eng, ActorRt& a, const Step& s, Next k) {
  const client::Script& script = eng.scripts_.at(s.nm("script"));
  ActorRt* p = &a;
  a.client->run_script(eng.ctx(a, s), script, eng.step_list(a, s, "keys"),
                       eng.step_list(a, s, "args"),
                       eng.guard1<Result>(a, [&eng, p, &s, k](Result r) {
                         eng.save(*p, s, reply_text(r));
                         p->vars["result_class"] = client::result_class(r);
                         eng.record(*p, s, succeeded(r));
                         k();
                       }));
}

const char* validate_command(const Step& s) {
  if ((s.t("cmd") != nullptr) == (s.l("args") != nullptr))
    return "a command step needs exactly one of \"cmd\" and \"args\"";
  return nullptr;
}

void needs_eval(const Step& s, StepNeeds& needs) {
  needs.script(s.nm("script"));
}

constexpr FieldSpec kCommand[] = {
    {.key = "cmd", .type = FieldType::CommandLine, .absent = "one of `cmd`/`args`"},
    {.key = "args", .type = FieldType::List, .absent = "one of `cmd`/`args`"},
    {.key = "deadline_ms", .type = FieldType::Duration, .unit = "ms", .absent = "none"},
    {.key = "context", .type = FieldType::Text, .absent = "context.Background()"},
    {.key = "record", .type = FieldType::Text},
    {.key = "server", .type = FieldType::Server, .absent = "the actor's client's server"}};
constexpr FieldSpec kPipeline[] = {
    {.key = "cmds",
     .type = FieldType::Commands,
     .required = true,
     .absent = "non-empty",
     .non_empty = true},
    {.key = "context", .type = FieldType::Text, .absent = "context.Background()"}};
constexpr FieldSpec kTx[] = {
    {.key = "cmds",
     .type = FieldType::Commands,
     .required = true,
     .absent = "non-empty",
     .non_empty = true},
    {.key = "context", .type = FieldType::Text, .absent = "context.Background()"},
    {.key = "record", .type = FieldType::Text}};
constexpr FieldSpec kEval[] = {
    {.key = "script", .type = FieldType::Script, .required = true},
    {.key = "keys", .type = FieldType::List, .absent = "`[]`"},
    {.key = "args", .type = FieldType::List, .absent = "`[]`"},
    {.key = "context", .type = FieldType::Text, .absent = "context.Background()"},
    {.key = "record", .type = FieldType::Text}};

}  // namespace

extern const StepKind command_step, pipeline_step, tx_step, eval_step;
const StepKind command_step{"command", kCommand, run_command, validate_command, nullptr, false};
const StepKind pipeline_step{"pipeline", kPipeline, run_pipeline, nullptr, nullptr, false};
const StepKind tx_step{"tx", kTx, run_pipeline, nullptr, nullptr, false};
const StepKind eval_step{"eval", kEval, run_eval, nullptr, needs_eval, false};

}  // namespace redlab::scenario::steps
