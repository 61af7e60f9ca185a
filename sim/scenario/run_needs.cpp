// See run_needs.h. Steps nest (repeat, if): walked with an explicit stack, so the depth of a
// file's nesting never becomes the depth of this process's stack.
#include "sim/scenario/run_needs.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/core/cmdline.h"
#include "sim/fake/server_wide.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario {
namespace {

class Collector {
 public:
  Collector(const Scenario& sc, const std::map<std::string, std::string>& scripts,
            bool allow_server_faults, const NeedsEval& eval)
      : sc_(sc), scripts_(scripts), allow_server_faults_(allow_server_faults), eval_(eval) {}

  RunNeeds take() { return std::move(needs_); }

  bool runs(const std::optional<Cond>& when, const Where& where) const {
    if (!when) return true;
    try {
      return eval_.test(*when, where);
    } catch (const ScenarioError&) {
      return true;  // decided by an actor's variables at run time: it may run
    }
  }

  void server_command(std::vector<std::string> words) {
    if (std::find(needs_.server_commands.begin(), needs_.server_commands.end(), words) ==
        needs_.server_commands.end())
      needs_.server_commands.push_back(std::move(words));
  }

  void script(const std::string& name) {
    const ScriptDef* def = sc_.script(name);
    if (!def) return;  // the engine says so, located, when the step runs
    for (const RunNeeds::Script& s : needs_.scripts)
      if (s.name == name) return;
    auto it = scripts_.find(name);
    bool replaced = it != scripts_.end();
    needs_.scripts.push_back({name, replaced ? it->second : def->source, replaced});
  }

  void line(const Template& t, const std::string& whose) {
    RunNeeds::Command c{{}, whose};
    auto argv = split_args(t.source());
    if (argv)
      for (size_t i = 0; i < argv->size() && i < 2; i++)
        c.words.push_back((*argv)[i].find("${") == std::string::npos ? (*argv)[i] : "");
    // A server-wide line runs on a shared server only with --allow-server-faults (the engine
    // refuses it otherwise): then the run user needs that command.
    if (allow_server_faults_ && argv && fake::server_wide_command(*argv) && !c.words.empty() &&
        !c.words[0].empty()) {
      std::vector<std::string> words = {c.words[0]};
      if (c.words.size() > 1 && !c.words[1].empty()) words.push_back(c.words[1]);
      server_command(std::move(words));
    }
    needs_.commands.push_back(std::move(c));
  }

  void steps(const std::vector<Step>& top, const std::string& whose) {
    std::vector<const Step*> stack;
    for (auto it = top.rbegin(); it != top.rend(); ++it) stack.push_back(&*it);
    while (!stack.empty()) {
      const Step& s = *stack.back();
      stack.pop_back();
      if (!runs(s.when, Where{s.where.pos, s.where.path + ".when"})) continue;
      step(s, whose);
      for (auto it = s.orelse.rbegin(); it != s.orelse.rend(); ++it) stack.push_back(&*it);
      for (auto it = s.body.rbegin(); it != s.body.rend(); ++it) stack.push_back(&*it);
    }
  }

 private:
  // What a step kind needs is told through this (StepKind::needs).
  struct Needs final : StepNeeds {
    explicit Needs(Collector& c) : c(c) {}
    void script(const std::string& name) override { c.script(name); }
    std::optional<std::string> text(const Template& t, const Where& where) override {
      try {
        return c.eval_.text(t, where);
      } catch (const ScenarioError&) {
        return std::nullopt;
      }
    }
    Collector& c;
  };

  void step(const Step& s, const std::string& whose) {
    // Command lines, wherever the kind has them (its fields' types say where).
    for (const FieldSpec& f : s.kind->fields) {
      if (f.type == FieldType::CommandLine) {
        if (const Template* t = s.t(f.key)) line(*t, whose);
      } else if (f.type == FieldType::Commands) {
        if (const auto* l = s.l(f.key))
          for (const Template& t : *l) line(t, whose);
      }
    }
    Needs needs(*this);
    if (s.kind->needs) s.kind->needs(s, needs);
  }

  const Scenario& sc_;
  const std::map<std::string, std::string>& scripts_;
  bool allow_server_faults_;
  const NeedsEval& eval_;
  RunNeeds needs_;
};

}  // namespace

RunNeeds run_needs(const Scenario& sc, const std::map<std::string, std::string>& scripts,
                   bool allow_server_faults, const NeedsEval& eval) {
  Collector c(sc, scripts, allow_server_faults, eval);
  for (const FaultDef& f : sc.faults) {
    if (!c.runs(f.when, Where{f.where.pos, f.where.path + ".when"})) continue;
    if (f.kind && f.kind->server_command) c.server_command(choice_words(f.kind->server_command));
  }
  for (const SetupCommand& s : sc.setup)
    if (c.runs(s.when, Where{s.where.pos, s.where.path + ".when"})) c.line(s.cmd, "setup");
  for (const ActorDef& a : sc.actors)
    if (c.runs(a.when, Where{a.where.pos, a.where.path + ".when"}))
      c.steps(a.steps, "actor " + a.name);
  return c.take();
}

}  // namespace redlab::scenario
