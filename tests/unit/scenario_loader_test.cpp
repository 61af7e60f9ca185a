// sim/scenario loader and its little languages, in process: the shipped example loads with
// everything it declares; expressions, templates and conditions parse (or fail at the right
// offset) and evaluate; names are checked at load time; load errors are located.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "sim/scenario/expr.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

// ---- helpers ---------------------------------------------------------------------------------

Env env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view n) -> std::optional<std::string> {
    auto it = vars.find(std::string(n));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

NameCheck names_of(std::set<std::string> known) {
  return [known = std::move(known)](std::string_view n) { return known.count(std::string(n)) > 0; };
}

const NameCheck kAnyName = [](std::string_view) { return true; };

int64_t eval_expr(std::string_view text, const std::map<std::string, std::string>& vars = {}) {
  std::string error;
  size_t at = 0;
  auto e = Expr::parse(text, kAnyName, &error, &at);
  if (!e) {
    ADD_FAILURE() << "`" << text << "` did not parse: " << error << " at " << at;
    return 0;
  }
  return e->eval(env_of(vars));
}

// "offset: message" of a failed parse, or "(parsed)".
std::string expr_error(std::string_view text, const NameCheck& known = kAnyName) {
  std::string error;
  size_t at = 0;
  if (Expr::parse(text, known, &error, &at)) return "(parsed)";
  return std::to_string(at) + ": " + error;
}

std::string eval_error(std::string_view text, const std::map<std::string, std::string>& vars) {
  try {
    eval_expr(text, vars);
  } catch (const EvalError& e) {
    return e.message;
  }
  return "(no error)";
}

std::string tmpl_eval(std::string_view text, const std::map<std::string, std::string>& vars) {
  std::string error;
  size_t at = 0;
  auto t = Template::parse(text, kAnyName, &error, &at);
  if (!t) {
    ADD_FAILURE() << "`" << text << "` did not parse: " << error << " at " << at;
    return "";
  }
  return t->eval(env_of(vars));
}

std::string tmpl_error(std::string_view text, const NameCheck& known) {
  std::string error;
  size_t at = 0;
  if (Template::parse(text, known, &error, &at)) return "(parsed)";
  return std::to_string(at) + ": " + error;
}

bool cond_eval(std::string_view text, const std::map<std::string, std::string>& vars) {
  std::string error;
  size_t at = 0;
  auto c = Cond::parse(text, kAnyName, &error, &at);
  if (!c) {
    ADD_FAILURE() << "`" << text << "` did not parse: " << error << " at " << at;
    return false;
  }
  return c->eval(env_of(vars));
}

std::string cond_error(std::string_view text, const NameCheck& known = kAnyName) {
  std::string error;
  size_t at = 0;
  if (Cond::parse(text, known, &error, &at)) return "(parsed)";
  return std::to_string(at) + ": " + error;
}

std::string read_example() {
  std::ifstream in(std::string(REDLAB_SOURCE_DIR) + "/scenarios/ttl-double-holder.json",
                   std::ios::binary);
  EXPECT_TRUE(in) << "cannot open the example";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of `doc` from `pos` on (to check what a position points at).
std::string text_at(const std::string& doc, Pos pos) {
  size_t start = 0;
  for (int line = 1; line < pos.line; line++) start = doc.find('\n', start) + 1;
  return doc.substr(start + size_t(pos.column - 1));
}

// "t.json:7:COLUMN: ", COLUMN being where `needle` first occurs on line 7 of `doc`.
std::string at_line7(const std::string& doc, const std::string& needle) {
  size_t start = 0;
  for (int line = 1; line < 7; line++) start = doc.find('\n', start) + 1;
  size_t at = doc.find(needle, start);
  EXPECT_LT(at, doc.find('\n', start)) << needle << " is not on line 7";
  return "t.json:7:" + std::to_string(at - start + 1) + ": ";
}

// A small valid scenario with `extra` members spliced in before "actors" and `steps` as A's
// steps; the header takes 6 lines, so "actors" is on line 7 plus extra's line count.
std::string scenario_text(const std::string& extra, const std::string& steps) {
  return "{\n"
         "  \"format\": \"redlab-scenario\",\n"
         "  \"version\": 1,\n"
         "  \"id\": \"t\",\n"
         "  \"title\": \"t\",\n"
         "  \"params\": {\"ttl_ms\": {\"default\": 3000, \"min\": 1000, \"max\": 9000}},\n" +
         extra + "  \"actors\": [{\"name\": \"A\", \"steps\": " + steps + "}]\n}\n";
}

// The ScenarioError message of loading `text` as "t.json", or "(loaded)".
std::string load_error(const std::string& text) {
  try {
    load_scenario_text(text, "t.json");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

// ---- the shipped example ---------------------------------------------------------------------

TEST(ScenarioLoader, ExampleLoadsWithEverythingItDeclares) {
  Scenario sc = load_scenario_text(read_example(), "ttl-double-holder.json");
  EXPECT_EQ(sc.file, "ttl-double-holder.json");
  EXPECT_EQ(sc.id, "ttl-double-holder");
  EXPECT_EQ(sc.topic, "locks");
  EXPECT_EQ(sc.title.get("en"), "Expired TTL: two holders of one lock");
  EXPECT_EQ(sc.title.get("cs"), "Vypršelé TTL: dva držitelé jednoho zámku");
  EXPECT_EQ(sc.title.get("fr"), sc.title.get("en"));  // an unknown language falls back

  ASSERT_EQ(sc.params.size(), 3u);  // in file order
  EXPECT_EQ(sc.params[0].name, "ttl_ms");
  EXPECT_EQ(sc.params[1].name, "work_ms");
  EXPECT_EQ(sc.params[2].name, "pause_ms");
  const Param* ttl = sc.param("ttl_ms");
  ASSERT_NE(ttl, nullptr);
  EXPECT_EQ(ttl->def, 10000);
  EXPECT_EQ(ttl->min, 1000);
  EXPECT_EQ(ttl->max, 60000);
  EXPECT_EQ(ttl->unit, "ms");
  EXPECT_EQ(ttl->label.get("ru"), "TTL блокировки");
  EXPECT_EQ(sc.param("pause_ms")->def, 0);
  EXPECT_EQ(sc.param("nope"), nullptr);

  ASSERT_EQ(sc.variants.size(), 2u);
  const Variant* release = sc.variant("release");
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(release->values, (std::vector<std::string>{"del", "lua"}));
  EXPECT_EQ(release->def, "del");  // the first value
  EXPECT_EQ(release->value_labels.at("lua").get("en"), "compare-and-delete (Lua)");
  EXPECT_EQ(sc.variant("watchdog")->values, (std::vector<std::string>{"off", "on"}));
  EXPECT_EQ(sc.variant("watchdog")->def, "off");

  EXPECT_EQ(sc.latency_us, 250);
  EXPECT_EQ(sc.jitter_us, 100);
  // The run lasts until the story is told, whatever the sliders: 25 s at the defaults.
  auto defaults = env_of({{"ttl_ms", "10000"}, {"work_ms", "12000"}, {"pause_ms", "0"}});
  EXPECT_EQ(sc.duration_ms.eval(defaults), 25000);
  EXPECT_EQ(
      sc.duration_ms.eval(env_of({{"ttl_ms", "60000"}, {"work_ms", "3000"}, {"pause_ms", "0"}})),
      122000);
  ASSERT_EQ(sc.servers.size(), 1u);  // the default server
  EXPECT_EQ(sc.servers[0].name, "redis");
  ASSERT_NE(sc.client("default"), nullptr);       // the default client
  EXPECT_NE(sc.script("lock_release"), nullptr);  // built-ins
  EXPECT_NE(sc.script("lock_extend"), nullptr);

  ASSERT_EQ(sc.actors.size(), 3u);
  EXPECT_EQ(sc.actors[0].name, "A");
  EXPECT_EQ(sc.actors[1].name, "B");
  EXPECT_EQ(sc.actors[2].name, "C");
  EXPECT_EQ(sc.actors[0].start_ms.eval(env_of({})), 0);
  EXPECT_EQ(sc.actors[1].start_ms.eval(env_of({})), 1000);
  EXPECT_EQ(sc.actors[2].start_jitter_ms.eval(env_of({})), 100);
  EXPECT_EQ(sc.actors[0].role.get("en"), "the slow worker");
  EXPECT_EQ(sc.actors[0].where.path, "actors[0]");
  EXPECT_EQ(text_at(read_example(), sc.actors[0].where.pos).substr(0, 20),
            "{\n      \"name\": \"A\",");

  const std::vector<Step>& a = sc.actors[0].steps;
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].op, "lock_acquire");
  EXPECT_EQ(a[0].t("lock")->source(), "lock:job:42");
  // "ttl_ms" is an expression over the parameter, evaluated per run.
  EXPECT_EQ(a[0].n("ttl_ms")->eval(env_of({{"ttl_ms", "7000"}})), 7000);
  EXPECT_EQ(a[0].where.path, "actors[0].steps[0]");
  EXPECT_EQ(text_at(read_example(), a[0].where.pos).substr(0, 21), "{\"do\": \"lock_acquire\"");
  EXPECT_EQ(text_at(read_example(), sc.actors[2].steps[3].where.pos).substr(0, 21),
            "{\"do\": \"lock_release\"");
  EXPECT_FALSE(a[0].when.has_value());
  EXPECT_EQ(a[1].op, "watchdog");
  ASSERT_TRUE(a[1].when.has_value());
  EXPECT_TRUE(a[1].when->eval(env_of({{"watchdog", "on"}})));
  EXPECT_FALSE(a[1].when->eval(env_of({{"watchdog", "off"}})));
  EXPECT_EQ(a[2].n("ms")->source(), "work_ms");
  EXPECT_EQ(a[3].t("method")->eval(env_of({{"release", "lua"}})), "lua");
  EXPECT_FALSE(a[3].t("method")->is_literal());
  EXPECT_EQ(sc.actors[1].steps[2].n("ms")->eval(env_of({{"ttl_ms", "10000"}})), 5000);
  EXPECT_EQ(sc.actors[1].steps[0].n("retry_ms")->eval(env_of({})), 200);

  ASSERT_EQ(sc.faults.size(), 1u);
  EXPECT_EQ(sc.faults[0].op, "pause");
  EXPECT_EQ(sc.faults[0].actor, "A");
  EXPECT_EQ(sc.faults[0].server, "redis");
  EXPECT_EQ(sc.faults[0].at_ms.eval(env_of({})), 2000);
  ASSERT_TRUE(sc.faults[0].for_ms.has_value());
  EXPECT_EQ(sc.faults[0].for_ms->eval(env_of({{"pause_ms", "15000"}})), 15000);
  EXPECT_FALSE(sc.faults[0].when->eval(env_of({{"pause_ms", "0"}})));
  EXPECT_TRUE(sc.faults[0].when->eval(env_of({{"pause_ms", "1"}})));

  ASSERT_EQ(sc.checks.size(), 4u);
  EXPECT_EQ(sc.checks[0].name, "mutual_exclusion");  // named after the check by default
  EXPECT_EQ(sc.checks[1].check, "no_foreign_unlock");
  EXPECT_EQ(sc.checks[2].check, "release_removes_own_lock");
  EXPECT_EQ(sc.checks[3].check, "script_keys_declared");
  ASSERT_GE(sc.expect.size(), 4u);
  EXPECT_TRUE(sc.expect[0].when.always());
  // The watchdog's real bound: a pause at 2 s outlasting the TTL left since the last extend
  // (ttl - 2000 % (ttl/3)), with work still going on at the pause.
  const Cond* bound = nullptr;
  for (const Expectation& e : sc.expect)
    if (e.when.source().find("pause_ms>ttl_ms-2000%(ttl_ms/3)+300") != std::string::npos)
      bound = &e.when;
  ASSERT_NE(bound, nullptr);
  auto at = [](const char* pause, const char* ttl) {
    return env_of({{"watchdog", "on"}, {"work_ms", "12000"}, {"pause_ms", pause}, {"ttl_ms", ttl}});
  };
  EXPECT_TRUE(bound->eval(at("9000", "10000")));  // 8 s left at 2 s: a 9 s pause loses it
  EXPECT_FALSE(bound->eval(at("7000", "10000")));
  EXPECT_FALSE(bound->eval(at("5000", "6000")));  // extended at 2 s: 6 s left
  EXPECT_TRUE(bound->eval(at("6500", "6000")));   // ... so a pause past 6.3 s loses it
  EXPECT_FALSE(bound->eval(at("5000", "9000")));  // extended at 0: 7 s left
  EXPECT_EQ(sc.narration.size(), 9u);
  ASSERT_TRUE(sc.narration[0].on.has_value());
  EXPECT_EQ(sc.narration[0].on->kind, "lock_acquired");
  EXPECT_EQ(sc.narration[0].on->actor, "A");

  ASSERT_TRUE(sc.exercise.has_value());
  EXPECT_EQ(sc.exercise->script, "lock_release");
  EXPECT_EQ(sc.exercise->variant, (std::map<std::string, std::string>{{"release", "lua"}}));
  EXPECT_EQ(sc.exercise->seeds, 20);
  EXPECT_EQ(sc.exercise->expect, (std::map<std::string, bool>{{"no_foreign_unlock", true},
                                                              {"release_removes_own_lock", true},
                                                              {"script_keys_declared", true}}));
  EXPECT_EQ(sc.exercise->hints.size(), 3u);
}

TEST(ScenarioLoader, MinimalScenarioLoads) {
  Scenario sc =
      load_scenario_text(scenario_text("", R"([{"do": "sleep", "ms": "ttl_ms/3"}])"), "t.json");
  EXPECT_EQ(sc.id, "t");
  ASSERT_EQ(sc.actors.size(), 1u);
  EXPECT_EQ(sc.actors[0].steps[0].n("ms")->eval(env_of({{"ttl_ms", "3000"}})), 1000);
  EXPECT_EQ(sc.duration_ms.eval(env_of({})), 30000);  // the default
}

// ---- Expr ------------------------------------------------------------------------------------

TEST(ScenarioLoader, ExprPrecedenceAndAssociativity) {
  EXPECT_EQ(eval_expr("2+3*4"), 14);
  EXPECT_EQ(eval_expr("(2+3)*4"), 20);
  EXPECT_EQ(eval_expr("10-4-3"), 3);  // left to right
  EXPECT_EQ(eval_expr("100/10/5"), 2);
  EXPECT_EQ(eval_expr("2*10%7"), 6);  // * and % bind alike, left to right
  EXPECT_EQ(eval_expr("20/3"), 6);
  EXPECT_EQ(eval_expr("-7/2"), -3);  // truncates toward zero, like C++
  EXPECT_EQ(eval_expr("-7%3"), -1);
  EXPECT_EQ(eval_expr("-(2+3)"), -5);
  EXPECT_EQ(eval_expr("2*-3"), -6);
  EXPECT_EQ(eval_expr("- -4"), 4);
  EXPECT_EQ(eval_expr(" 1 +  2 "), 3);
  EXPECT_EQ(eval_expr("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(eval_expr("ttl_ms/3 + 500", {{"ttl_ms", "9000"}}), 3500);
  EXPECT_EQ(eval_expr("n*100", {{"n", "-2"}}), -200);
  EXPECT_TRUE(Expr::parse("42", kAnyName, nullptr, nullptr)->is_constant());
  EXPECT_FALSE(Expr::parse("n", kAnyName, nullptr, nullptr)->is_constant());
  EXPECT_EQ(Expr::parse("ttl_ms / 3", kAnyName, nullptr, nullptr)->source(), "ttl_ms / 3");
  // min and max: whichever comes first or last, nesting like parentheses.
  EXPECT_EQ(eval_expr("max(25000, w + p)", {{"w", "12000"}, {"p", "0"}}), 25000);
  EXPECT_EQ(eval_expr("max(25000, w + p)", {{"w", "12000"}, {"p", "20000"}}), 32000);
  EXPECT_EQ(eval_expr("min(3, -4) * 2"), -8);
  EXPECT_EQ(eval_expr("1 + max(min(5, 9), max(2, 3)) * 10"), 51);
  EXPECT_EQ(eval_expr("max (1, 2)"), 2);  // a space before '(' is allowed
  EXPECT_EQ(eval_expr("min + max", {{"min", "1"}, {"max", "2"}}), 3);  // still names
}

TEST(ScenarioLoader, ExprEvalErrors) {
  EXPECT_EQ(eval_error("1/0", {}), "division by zero");
  EXPECT_EQ(eval_error("5%zero", {{"zero", "0"}}), "division by zero");
  EXPECT_EQ(eval_error("ttl_ms/(n-n)", {{"ttl_ms", "1"}, {"n", "3"}}), "division by zero");
  EXPECT_EQ(eval_error("9223372036854775807+1", {}), "integer overflow");
  EXPECT_EQ(eval_error("-9223372036854775807-2", {}), "integer overflow");
  EXPECT_EQ(eval_error("4611686018427387904*2", {}), "integer overflow");
  EXPECT_EQ(eval_error("x/-1", {{"x", "-9223372036854775808"}}), "integer overflow");
  EXPECT_EQ(eval_error("x+1", {}), "'x' has no value");
  EXPECT_EQ(eval_error("x+1", {{"x", "lua"}}), "'x' is \"lua\", not an integer");
  EXPECT_EQ(eval_error("x+1", {{"x", "1.5"}}), "'x' is \"1.5\", not an integer");
}

TEST(ScenarioLoader, ExprParseErrorsPointAtTheProblem) {
  EXPECT_EQ(expr_error("ttl_ms * / 3"), "9: unexpected '/' in expression");
  EXPECT_EQ(expr_error("(1+2"), "4: expected ')'");
  EXPECT_EQ(expr_error("1+"), "2: expected a number or a name, found the end");
  EXPECT_EQ(expr_error(""), "0: expected a number or a name, found the end");
  EXPECT_EQ(expr_error("3 4"), "2: unexpected '4' in expression");
  EXPECT_EQ(expr_error("1.5"), "1: unexpected '.' in expression");
  EXPECT_EQ(expr_error("1 + 99999999999999999999"), "4: number out of range");
  EXPECT_EQ(expr_error(std::string(40, '(') + "1" + std::string(40, ')')),
            "32: expression nested too deep (32 levels at most)");
  // Unknown names are rejected when parsing, at the name.
  EXPECT_EQ(expr_error("ttl_ms + ttl", names_of({"ttl_ms"})), "9: unknown name 'ttl'");
  EXPECT_EQ(expr_error("ttl_ms + 1", names_of({"ttl_ms"})), "(parsed)");
  EXPECT_EQ(expr_error("abs(3)"), "0: unknown function 'abs' (min and max are the functions)");
  EXPECT_EQ(expr_error("max(1 2)"), "6: expected ',' between max's two values");
  EXPECT_EQ(expr_error("min(1, 2"), "8: expected ')'");
  EXPECT_EQ(expr_error("max(1,)"), "6: unexpected ')' in expression");
  // The 33rd max( is refused at its parenthesis.
  std::string nested;
  for (int i = 0; i < 40; i++) nested += "max(1, ";
  nested += "1" + std::string(40, ')');
  EXPECT_EQ(expr_error(nested), "227: expression nested too deep (32 levels at most)");
}

// ---- Template --------------------------------------------------------------------------------

TEST(ScenarioLoader, TemplateSubstitution) {
  EXPECT_EQ(tmpl_eval("job-${n}: ${token}", {{"n", "7"}, {"token", "A:1:abc"}}), "job-7: A:1:abc");
  // A single name is replaced by its value as text, whatever it is.
  EXPECT_EQ(tmpl_eval("${release}", {{"release", "lua"}}), "lua");
  // Anything else is an integer expression.
  EXPECT_EQ(tmpl_eval("PEXPIRE k ${ttl_ms/3}", {{"ttl_ms", "9000"}}), "PEXPIRE k 3000");
  EXPECT_EQ(tmpl_eval("${n+1}${n+2}", {{"n", "1"}}), "23");
  EXPECT_EQ(tmpl_eval("no substitution: $ {x} $x", {}), "no substitution: $ {x} $x");
  EXPECT_EQ(tmpl_eval("", {}), "");
  EXPECT_TRUE(Template::parse("SET k v", kAnyName, nullptr, nullptr)->is_literal());
  EXPECT_FALSE(Template::parse("SET k ${n}", kAnyName, nullptr, nullptr)->is_literal());
  EXPECT_EQ(Template::literal("${not parsed}").eval(env_of({})), "${not parsed}");
  try {
    tmpl_eval("SET k ${v}", {});
    ADD_FAILURE() << "no EvalError";
  } catch (const EvalError& e) {
    EXPECT_EQ(e.message, "'v' has no value");
  }
  try {
    tmpl_eval("${n*2}", {{"n", "two"}});
    ADD_FAILURE() << "no EvalError";
  } catch (const EvalError& e) {
    EXPECT_EQ(e.message, "'n' is \"two\", not an integer");
  }
}

TEST(ScenarioLoader, TemplateParseErrors) {
  auto known = names_of({"ttl_ms", "actor"});
  EXPECT_EQ(tmpl_error("SET job:${jobid} done", known), "10: unknown name 'jobid'");
  EXPECT_EQ(tmpl_error("x ${ttl_ms/}", known), "11: expected a number or a name, found the end");
  EXPECT_EQ(tmpl_error("SET owner ${actor", known), "10: unterminated '${'");
  EXPECT_EQ(tmpl_error("${}", known), "2: expected a number or a name, found the end");
  EXPECT_EQ(tmpl_error("${actor}-${ttl_ms}", known), "(parsed)");
}

// ---- Cond ------------------------------------------------------------------------------------

TEST(ScenarioLoader, CondComparisons) {
  std::map<std::string, std::string> v{{"release", "lua"}, {"n", "5"}, {"m", "05"}};
  EXPECT_TRUE(cond_eval("release=lua", v));
  EXPECT_FALSE(cond_eval("release=del", v));
  EXPECT_TRUE(cond_eval("release!=del", v));
  EXPECT_FALSE(cond_eval("release!=lua", v));
  EXPECT_TRUE(cond_eval("n=5", v));
  EXPECT_TRUE(cond_eval("n=05", v));  // integers compare as numbers
  // = compares with the literal on its right, even when it is also a name...
  EXPECT_FALSE(cond_eval("n=m", v));
  EXPECT_TRUE(cond_eval("n!=m", v));
  // ...the ordering operators with the name's value.
  EXPECT_TRUE(cond_eval("n<=m", v));
  EXPECT_FALSE(cond_eval("n<m", v));
  EXPECT_TRUE(cond_eval("n<6", v));
  EXPECT_FALSE(cond_eval("n<5", v));
  EXPECT_TRUE(cond_eval("n<=5", v));
  EXPECT_TRUE(cond_eval("n>4", v));
  EXPECT_FALSE(cond_eval("n>5", v));
  EXPECT_TRUE(cond_eval("n>=5", v));
  EXPECT_TRUE(cond_eval("n>-1", v));
  EXPECT_TRUE(cond_eval("n > 4", v));
  EXPECT_TRUE(cond_eval("", v));  // an empty condition is true
  // 'and': every term must hold.
  EXPECT_TRUE(cond_eval("release=lua and n>4", v));
  EXPECT_FALSE(cond_eval("release=lua and n>5", v));
  EXPECT_FALSE(cond_eval("release=del and n>4", v));
  EXPECT_TRUE(cond_eval("release=lua and n>4 and n<=m", v));
  // 'or': either side of it (and binds tighter).
  EXPECT_TRUE(cond_eval("release=del or n>4", v));
  EXPECT_FALSE(cond_eval("release=del or n>5", v));
  EXPECT_TRUE(cond_eval("release=del and n>9 or release=lua and n<9", v));
  EXPECT_FALSE(cond_eval("release=del and n<9 or release=lua and n>9", v));
  // Orderings compare integer expressions.
  EXPECT_TRUE(cond_eval("n*2>m+1", v));
  EXPECT_TRUE(cond_eval("n-1<=(m*2)/2-1", v));
  EXPECT_TRUE(cond_eval("n%3>1", v));
  EXPECT_FALSE(cond_eval("n%3>2", v));
  try {
    cond_eval("release>1", v);
    ADD_FAILURE() << "no EvalError";
  } catch (const EvalError&) {
  }
  try {
    cond_eval("missing=1", v);
    ADD_FAILURE() << "no EvalError";
  } catch (const EvalError& e) {
    EXPECT_EQ(e.message, "'missing' has no value");
  }
  auto c = Cond::parse("", kAnyName, nullptr, nullptr);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->always());
  EXPECT_FALSE(Cond::parse("n=1", kAnyName, nullptr, nullptr)->always());
}

TEST(ScenarioLoader, CondParseErrors) {
  auto known = names_of({"release", "n", "ttl_ms"});
  EXPECT_EQ(cond_error("release==lua", known),
            "8: expected a value after '=' (a word or an integer)");
  EXPECT_EQ(cond_error("release=lua or n=1", known), "(parsed)");
  EXPECT_EQ(cond_error("release", known), "7: expected =, !=, <, <=, > or >= in 'release'");
  EXPECT_EQ(cond_error("n<lots", known), "2: unknown name 'lots'");
  EXPECT_EQ(cond_error("n<ttl_ms+", known), "9: expected a number or a name, found the end");
  EXPECT_EQ(cond_error("=1", known), "0: expected a name before '='");
  EXPECT_EQ(cond_error("n=1 and mode=fast", known), "8: unknown name 'mode'");
  EXPECT_EQ(cond_error("n>ttl_ms and release!=del", known), "(parsed)");
}

// ---- names and positions at load time ----------------------------------------------------------

TEST(ScenarioLoader, UnknownNamesAreRejectedAtLoad) {
  // Each error points at the unknown name itself, inside the string.
  std::string doc = scenario_text("", R"([{"do": "sleep", "ms": "ttl / 2"}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "ttl / 2") + "actors[0].steps[0].ms: unknown name 'ttl'");
  doc = scenario_text("", R"([{"do": "sleep", "ms": 1, "when": "ttl_ms>1 and mode=x"}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "mode=x") + "actors[0].steps[0].when: unknown name 'mode'");
  doc = scenario_text("", R"([{"do": "command", "cmd": "GET ${key}"}])");
  EXPECT_EQ(load_error(doc), at_line7(doc, "key}") + "actors[0].steps[0].cmd: unknown name 'key'");
  // An escape before the name takes more bytes in the file than in the value.
  doc = scenario_text("", R"([{"do": "command", "cmd": "SET \"k\" caf\u00e9 ${ttl_ms + nope}"}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "nope}") + "actors[0].steps[0].cmd: unknown name 'nope'");
  // A name saved by any step is known everywhere (it may hold a value by then)...
  EXPECT_EQ(load_error(scenario_text("", R"([{"do": "command", "cmd": "GET k", "save": "v"},
      {"do": "command", "cmd": "SET k2 ${v}"}])")),
            "(loaded)");
  // ...and parameters, variants and built-in names are known.
  EXPECT_EQ(load_error(scenario_text(
                "  \"variants\": {\"mode\": {\"values\": [\"a\", \"b\"]}},\n",
                R"([{"do": "sleep", "ms": "ttl_ms / n", "when": "mode=a and i>0"}])")),
            "(loaded)");
}

TEST(ScenarioLoader, LoadErrorsAreLocated) {
  std::string doc = scenario_text("", R"([{"do": "sleep", "ms": -1}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "-1") + "actors[0].steps[0].ms: a duration cannot be negative (-1)");
  // An expression without names is evaluated at load: its mistakes are located at the value.
  doc = scenario_text("", R"([{"do": "sleep", "ms": "2 - 3"}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "\"2 - 3") + "actors[0].steps[0].ms: a duration cannot be negative (-1)");
  doc = scenario_text("", R"([{"do": "sleep", "ms": "1000/0"}])");
  EXPECT_EQ(load_error(doc),
            at_line7(doc, "\"1000/0") + "actors[0].steps[0].ms: \"1000/0\": division by zero");
  // With a name, the value is known only per run.
  EXPECT_EQ(load_error(scenario_text("", R"([{"do": "sleep", "ms": "ttl_ms - 9000"}])")),
            "(loaded)");
  doc = scenario_text("  \"unknown\": 1,\n", "[]");
  EXPECT_EQ(
      load_error(doc).rfind("t.json:7:3: unknown: unknown key \"unknown\" (expected one of: ", 0),
      0u)
      << load_error(doc);
  doc = scenario_text("", R"([{"do": "sleep", "ms": 1}, {"do": "nap"}])");
  EXPECT_EQ(load_error(doc).rfind(at_line7(doc, "\"nap\"") +
                                      "actors[0].steps[1].do: unknown step \"nap\" (expected "
                                      "one of: ",
                                  0),
            0u)
      << load_error(doc);
  EXPECT_EQ(load_error("{\"a\": 1,}"), "t.json:1:9: expected string key after ',', found '}'");
  EXPECT_EQ(load_error(""), "t.json:1:1: unexpected end of input");
  EXPECT_EQ(load_error("[]"), "t.json:1:1: expected an object, found array");
  EXPECT_EQ(load_error("{}"), "t.json:1:1: missing key \"id\"");
}

// ---- bounds: nothing recurses with the input's size, and limits are located -------------

// "1+1+...+1" of n terms (and the same with the other left-associative operators).
std::string chain(size_t n, const std::string& op = "+") {
  std::string s = "1";
  s.reserve(n * (op.size() + 1));
  for (size_t i = 1; i < n; i++) s += op + "1";
  return s;
}

TEST(ScenarioLoader, LongChainsAreLoopsNotRecursions) {
  // A left-associative chain is compiled flat: parsing, evaluating and destroying a
  // million-term expression take no stack depth (a recursion this deep would overflow it).
  EXPECT_EQ(eval_expr(chain(1'000'000)), 1'000'000);
  EXPECT_EQ(eval_expr(chain(1'000'000, "*")), 1);
  EXPECT_EQ(eval_expr("0-" + chain(500'000, "-")), -500'000);
  std::string names = "n";
  for (int i = 1; i < 300'000; i++) names += "+n";
  EXPECT_EQ(eval_expr(names, {{"n", "2"}}), 600'000);
  // Evaluation still goes left to right: the first name without a value is reported.
  EXPECT_EQ(eval_error(chain(100'000) + "+a+b", {{"b", "1"}}), "'a' has no value");
  EXPECT_EQ(eval_error("9223372036854775800+" + chain(10), {}), "integer overflow");
  // A template and a condition holding such an expression.
  EXPECT_EQ(tmpl_eval("n=${" + chain(200'000) + "}", {}), "n=200000");
  EXPECT_TRUE(cond_eval(chain(200'000) + ">199999 and " + chain(3) + "<4", {}));
}

TEST(ScenarioLoader, NestingIsBoundedAndLocated) {
  // Parentheses and unary minuses nest 32 deep; the error points at the first one too many.
  EXPECT_EQ(expr_error(std::string(100'000, '(') + "1" + std::string(100'000, ')')),
            "32: expression nested too deep (32 levels at most)");
  EXPECT_EQ(expr_error(std::string(100'000, '-') + "1"),
            "32: expression nested too deep (32 levels at most)");
  EXPECT_EQ(expr_error("1+" + std::string(20, '(') + std::string(20, '-') + "1"),
            "34: expression nested too deep (32 levels at most)");
  EXPECT_EQ(eval_expr(std::string(32, '(') + "1" + std::string(32, ')')), 1);
  EXPECT_EQ(eval_expr(std::string(16, '-') + "(" + std::string(15, '-') + "3)"), -3);
  EXPECT_EQ(eval_expr("- - 2 * - 3"), -6);
  EXPECT_EQ(eval_error("-x", {{"x", "-9223372036854775808"}}), "integer overflow");
  // In a file: located at the character, with the path.
  std::string doc =
      scenario_text("", R"([{"do": "sleep", "ms": ")" + std::string(100'000, '(') + R"(1"}])");
  size_t open = doc.find("((((");
  size_t line_start = doc.rfind('\n', open) + 1;
  EXPECT_EQ(load_error(doc), "t.json:7:" + std::to_string(open - line_start + 1 + 32) +
                                 ": actors[0].steps[0].ms: expression nested too deep (32 "
                                 "levels at most)");
  // JSON: the depth is checked before descending, and the error is at the bracket too many.
  EXPECT_EQ(load_error(std::string(1'000'000, '[')), "t.json:1:257: nesting too deep");
  EXPECT_EQ(load_error("{\"actors\": " + std::string(1'000'000, '[')),
            "t.json:1:267: nesting too deep");
}

TEST(ScenarioLoader, ExprRangeBoundsEveryValue) {
  auto range = [](const std::string& text) -> std::string {
    auto e = Expr::parse(text, kAnyName, nullptr, nullptr);
    if (!e) return "(no parse)";
    auto r = e->range([](std::string_view n) -> std::optional<Expr::Range> {
      if (n == "k") return Expr::Range{2, 10};
      if (n == "z") return Expr::Range{-3, 4};
      return std::nullopt;
    });
    return r ? std::to_string(r->lo) + ".." + std::to_string(r->hi) : "unknown";
  };
  EXPECT_EQ(range("k"), "2..10");
  EXPECT_EQ(range("k*100+1"), "201..1001");
  EXPECT_EQ(range("-k"), "-10..-2");
  EXPECT_EQ(range("k-z"), "-2..13");
  EXPECT_EQ(range("k*z"), "-30..40");
  EXPECT_EQ(range("100/k"), "10..50");
  EXPECT_EQ(range("100/z"), "-100..100");  // 0 is an error, not a value: -1 and 1 are the ends
  EXPECT_EQ(range("k%3"), "0..2");
  EXPECT_EQ(range("z%k"), "-3..4");
  EXPECT_EQ(range("seed"), "unknown");
  EXPECT_EQ(range("9223372036854775807+k"), "unknown");
  EXPECT_EQ(range("max(k, z)"), "2..10");
  EXPECT_EQ(range("min(k, z)"), "-3..4");
  EXPECT_EQ(range("max(k*10, 25)"), "25..100");
  // Every value of a sample lies inside the range.
  for (const char* text :
       {"k*z-7", "(k+z)*(k-z)", "1000/(z+4)", "k%z", "-(z*z)+k/3", "max(k, z*3) - min(z, k/4)"}) {
    auto e = Expr::parse(text, kAnyName, nullptr, nullptr);
    ASSERT_TRUE(e) << text;
    auto r = e->range([](std::string_view n) -> std::optional<Expr::Range> {
      return n == "k" ? Expr::Range{2, 10} : Expr::Range{-3, 4};
    });
    ASSERT_TRUE(r) << text;
    for (int k = 2; k <= 10; k++)
      for (int z = -3; z <= 4; z++) {
        try {
          int64_t v = e->eval(env_of({{"k", std::to_string(k)}, {"z", std::to_string(z)}}));
          EXPECT_GE(v, r->lo) << text << " k=" << k << " z=" << z;
          EXPECT_LE(v, r->hi) << text << " k=" << k << " z=" << z;
        } catch (const EvalError&) {
          // division by zero: no value
        }
      }
  }
}

// A scenario of `actors` (a JSON array) with `extra` top-level members; all on one line.
std::string one_line(const std::string& actors, const std::string& extra = "") {
  return "{\"format\": \"redlab-scenario\", \"version\": 1, \"id\": \"t\", \"title\": \"t\", "
         "\"params\": {\"k\": {\"default\": 5, \"min\": 1, \"max\": 800}}, " +
         extra + "\"actors\": " + actors + "}";
}

// "t.json:1:COLUMN: " with COLUMN where `needle` first occurs in `doc`.
std::string at(const std::string& doc, const std::string& needle) {
  size_t i = doc.find(needle);
  EXPECT_NE(i, std::string::npos) << needle;
  return "t.json:1:" + std::to_string(i + 1) + ": ";
}

TEST(ScenarioLoader, CountsAndActorsAreBounded) {
  const std::string note = R"([{"do": "note", "text": "x"}])";
  std::string doc = one_line(R"([{"name": "A", "count": -3, "steps": )" + note + "}]");
  EXPECT_EQ(load_error(doc), at(doc, "-3") + "actors[0].count: a count is 1 to 1000 (found -3)");
  doc = one_line(R"([{"name": "A", "count": "2000/2+1", "steps": )" + note + "}]");
  EXPECT_EQ(load_error(doc),
            at(doc, "\"2000/2+1") + "actors[0].count: a count is 1 to 1000 (found 1001)");
  EXPECT_EQ(load_error(one_line(R"([{"name": "A", "count": "k*1", "steps": )" + note + "}]")),
            "(loaded)");
  // Instances add up at each count's largest value: k's max is 800, so 12 actors of "k"
  // (9600) load and a 13th is refused at its count.
  std::string actors = "[";
  for (int i = 0; i < 13; i++)
    actors += std::string(i ? ", " : "") + "{\"name\": \"w" + std::to_string(i) +
              "x\", \"count\": \"k\", \"steps\": " + note + "}";
  doc = one_line(actors + "]");
  size_t thirteenth = doc.find("\"w12x\"");
  size_t count_at = doc.find("\"k\"", thirteenth);
  EXPECT_EQ(load_error(doc), "t.json:1:" + std::to_string(count_at + 1) +
                                 ": actors[12].count: more than 10000 actor instances in the "
                                 "file (counts at their largest: the parameters' max)");
  actors = "[";
  for (int i = 0; i < 1001; i++)
    actors +=
        std::string(i ? ", " : "") + "{\"name\": \"a" + std::to_string(i) + "x\", \"steps\": []}";
  doc = one_line(actors + "]");
  EXPECT_EQ(load_error(doc),
            at(doc, "{\"name\": \"a1000x\"") + "actors[1000]: more than 1000 actors");
}

TEST(ScenarioLoader, SectionsAreBounded) {
  // Lookups by name stay cheap: each section has a bound, located at the first entry too many.
  auto object_of = [](const std::string& prefix, int n, const std::string& value) {
    std::string out = "{";
    for (int i = 0; i < n; i++)
      out += std::string(i ? ", " : "") + "\"" + prefix + std::to_string(i) + "\": " + value;
    return out + "}";
  };
  auto array_of = [](int n, const std::string& item) {
    std::string out = "[";
    for (int i = 0; i < n; i++) out += std::string(i ? ", " : "") + item;
    return out + "]";
  };
  const std::string actors = R"([{"name": "A", "steps": []}])";
  std::string doc =
      "{\"id\": \"t\", \"title\": \"t\", \"params\": " + object_of("p", 1001, R"({"default": 0})") +
      ", \"actors\": []}";
  EXPECT_EQ(load_error(doc), at(doc, "\"p1000\"") + "params.p1000: more than 1000 parameters");
  doc = one_line(actors, "\"variants\": {\"v\": {\"values\": " + array_of(1001, "\"x\"") + "}}, ");
  EXPECT_NE(load_error(doc).find("variants.v.values[1000]: more than 1000 values"),
            std::string::npos)
      << load_error(doc);
  doc = one_line(actors, "\"servers\": " + object_of("s", 101, "{}") + ", ");
  EXPECT_EQ(load_error(doc), at(doc, "\"s100\"") + "servers.s100: more than 100 servers");
  doc = one_line(actors, "\"setup\": " + array_of(10001, "\"PING\"") + ", ");
  EXPECT_NE(load_error(doc).find(": setup[10000]: more than 10000 setup commands"),
            std::string::npos)
      << load_error(doc);
  // 1000 parameters and an expression naming one of them 100,000 times: a set lookup each.
  std::string sum = "p999";
  for (int i = 1; i < 100'000; i++) sum += "+p999";
  doc =
      "{\"format\": \"redlab-scenario\", \"version\": 1, \"id\": \"t\", \"title\": \"t\", "
      "\"params\": " +
      object_of("p", 1000, R"({"default": 0})") +
      R"(, "actors": [{"name": "A", "steps": [{"do": "sleep", "ms": ")" + sum + R"("}]}]})";
  EXPECT_EQ(load_error(doc), "(loaded)");
}

TEST(ScenarioLoader, StepsInAFileAreBounded) {
  std::string steps = "[";
  for (int i = 0; i < 100'000; i++)
    steps += std::string(i ? "," : "") + R"({"do":"note","text":""})";
  EXPECT_EQ(load_error(one_line(R"([{"name": "A", "steps": )" + steps + "]}]")), "(loaded)");
  // Nested steps count too: the 100,001st step of the file is refused where it is.
  std::string doc = one_line(
      R"([{"name": "A", "steps": )" + steps + "]}, " +
      R"({"name": "B", "steps": [{"do": "repeat", "times": 2, "steps": [{"do": "note", "text": "y"}]}]}])");
  EXPECT_EQ(load_error(doc), at(doc, "{\"do\": \"repeat\"") +
                                 "actors[1].steps[0]: more than 100000 steps in the file");
}

TEST(ScenarioLoader, MillisecondsThatOverflowMicrosecondsAreRefused) {
  const std::string note = R"([{"do": "note", "text": "x"}])";
  std::string doc =
      one_line(R"([{"name": "A", "steps": )" + note + "}]",
               R"("faults": [{"at_ms": 1, "do": "clock_jump", "by_ms": 9223372036854775807}], )");
  EXPECT_EQ(load_error(doc), at(doc, "9223372036854775807") +
                                 "faults[0].by_ms: 9223372036854775807 ms is more than a million "
                                 "seconds (1000000000 ms at most)");
  doc = one_line(R"([{"name": "A", "steps": )" + note + "}]",
                 R"("faults": [{"at_ms": 1, "do": "clock_jump", "by_ms": "-1000000001"}], )");
  EXPECT_EQ(load_error(doc), at(doc, "\"-1000000001") +
                                 "faults[0].by_ms: -1000000001 ms is more than a million seconds "
                                 "(1000000000 ms at most)");
  EXPECT_EQ(load_error(one_line(
                R"([{"name": "A", "steps": )" + note + "}]",
                R"("faults": [{"at_ms": 1, "do": "clock_jump", "by_ms": -1000000000}], )")),
            "(loaded)");
  doc = one_line(R"([{"name": "A", "steps": [{"do": "sleep", "ms": 9223372036854775}]}])");
  EXPECT_EQ(load_error(doc),
            at(doc, "9223372036854775") +
                "actors[0].steps[0].ms: 9223372036854775 ms is more than a million "
                "seconds (1000000000 ms at most)");
  doc = one_line(R"([{"name": "A", "start_ms": "1000000*1000+1", "steps": []}])");
  EXPECT_EQ(load_error(doc), at(doc, "\"1000000*") +
                                 "actors[0].start_ms: 1000000001 ms is more than a million "
                                 "seconds (1000000000 ms at most)");
  doc = one_line(
      "[]",
      R"("duration_ms": 4000000000, "servers": {"redis": {"clock_offset_ms": 2000000000}}, )");
  EXPECT_EQ(load_error(doc), at(doc, "4000000000") +
                                 "duration_ms: 4000000000 ms is more than a million seconds "
                                 "(1000000000 ms at most)");
  // Over a parameter, its range decides (k's max is 800).
  EXPECT_EQ(load_error(one_line(
                R"([{"name": "A", "steps": )" + note + "}]",
                R"("faults": [{"at_ms": 1, "do": "clock_jump", "by_ms": "k*1000000"}], )")),
            "(loaded)");
  doc = one_line(R"([{"name": "A", "steps": )" + note + "}]",
                 R"("faults": [{"at_ms": 1, "do": "clock_jump", "by_ms": "-k*10000000"}], )");
  EXPECT_EQ(load_error(doc), at(doc, "\"-k*") +
                                 "faults[0].by_ms: \"-k*10000000\" can be -8000000000 ms within "
                                 "its parameters' ranges: more than a million seconds (1000000000 "
                                 "ms at most)");
  doc = one_line("[]", R"("servers": {"redis": {"clock_offset_ms": -2000000000}}, )");
  EXPECT_EQ(load_error(doc), at(doc, "-2000000000") +
                                 "servers.redis.clock_offset_ms: -2000000000 ms is more than a "
                                 "million seconds (1000000000 ms at most)");
  doc = one_line("[]", R"("network": {"latency_us": 1000000000001}, )");
  EXPECT_EQ(load_error(doc),
            at(doc, "1000000000001") + "network.latency_us: more than a million seconds");
}

TEST(ScenarioLoader, ActorsCannotTakeAnotherLane) {
  const std::string note = R"([{"do": "note", "text": "x"}])";
  // The network's lane ("net", sim/net/network.cpp) and the servers' (the default "redis").
  std::string doc = one_line(R"([{"name": "net", "steps": )" + note + "}]");
  EXPECT_EQ(load_error(doc), at(doc, "\"net\"") +
                                 "actors[0].name: \"net\" is the network's lane in the trace: "
                                 "name the actor otherwise");
  doc = one_line(R"([{"name": "redis", "steps": )" + note + "}]");
  EXPECT_EQ(load_error(doc), at(doc, "\"redis\"") +
                                 "actors[0].name: \"redis\" is the name of a server in the "
                                 "trace: name the actor otherwise");
  doc = one_line(R"([{"name": "cache", "steps": )" + note + "}]",
                 R"("servers": {"main": {}, "cache": {}}, )");
  EXPECT_NE(load_error(doc).find("\"cache\" is the name of a server"), std::string::npos);
  // An instance name too: A with a count of 3 is A1, A2, A3.
  doc = one_line(R"([{"name": "A", "count": 3, "steps": )" + note + "}]",
                 R"("servers": {"A2": {}}, )");
  EXPECT_NE(load_error(doc).find("actors[0].name: \"A2\" is an instance name of this actor and "
                                 "the name of a server"),
            std::string::npos)
      << load_error(doc);
  EXPECT_EQ(load_error(one_line(R"([{"name": "A", "steps": )" + note + "}]",
                                R"("servers": {"A2": {}}, )")),
            "(loaded)");
  // Resources have lanes of their own as well; a server cannot be called "net" either.
  doc =
      one_line(R"([{"name": "store", "steps": )" + note + "}]", R"("resources": {"store": {}}, )");
  EXPECT_NE(load_error(doc).find("\"store\" is the name of a resource"), std::string::npos);
  doc = one_line(R"([{"name": "A", "steps": )" + note + "}]", R"("resources": {"redis": {}}, )");
  EXPECT_NE(load_error(doc).find("resources.redis: \"redis\" is already a server"),
            std::string::npos)
      << load_error(doc);
  doc = one_line(R"([{"name": "A", "steps": )" + note + "}]", R"("servers": {"net": {}}, )");
  EXPECT_NE(load_error(doc).find("servers.net: \"net\" is the network's lane"), std::string::npos)
      << load_error(doc);
}

}  // namespace
}  // namespace redlab::scenario
