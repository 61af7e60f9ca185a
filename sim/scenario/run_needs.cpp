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
  void step(const Step& s, const std::string& whose) {
    for (const char* key : {"cmd", "read"})
      if (const Template* t = s.t(key)) line(*t, whose);
    for (const char* key : {"cmds", "exec"})
      if (const auto* l = s.l(key))
        for (const Template& t : *l) line(t, whose);
    std::string named = s.nm("script");
    auto or_default = [&](const char* def) { return named.empty() ? std::string(def) : named; };
    if (s.op == "eval") {
      script(named);
    } else if (s.op == "fenced_acquire") {
      script(or_default("fenced_acquire"));
    } else if (s.op == "lock_extend" || s.op == "watchdog") {
      script(or_default("lock_extend"));
    } else if (s.op == "lock_release") {
      bool lua = false;  // the default method is del
      if (const Template* method = s.t("method")) {
        try {
          lua = eval_.text(*method, Where{s.where.pos, s.where.path + ".method"}) != "del";
        } catch (const ScenarioError&) {
          lua = true;
        }
      }
      if (lua) script(or_default("lock_release"));
    }
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
