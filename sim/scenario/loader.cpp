// Scenario loading: JSON with positions -> a validated Scenario, or one located error.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "sim/client/options.h"
#include "sim/core/assert.h"
#include "sim/fake/sha1.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/intervention.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {

const std::string& Text::get(const std::string& lang) const {
  static const std::string kEmpty;
  if (auto it = by_lang.find(lang); it != by_lang.end()) return it->second;
  if (auto it = by_lang.find("en"); it != by_lang.end()) return it->second;
  return by_lang.empty() ? kEmpty : by_lang.begin()->second;
}

const Template* Step::t(const std::string& key) const {
  auto it = text.find(key);
  return it == text.end() ? nullptr : &it->second;
}
const Expr* Step::n(const std::string& key) const {
  auto it = number.find(key);
  return it == number.end() ? nullptr : &it->second;
}
const std::vector<Template>* Step::l(const std::string& key) const {
  auto it = list.find(key);
  return it == list.end() ? nullptr : &it->second;
}
bool Step::f(const std::string& key, bool def) const {
  auto it = flag.find(key);
  return it == flag.end() ? def : it->second;
}
const Expr* FaultDef::n(const std::string& key) const {
  auto it = number.find(key);
  return it == number.end() ? nullptr : &it->second;
}
std::string Step::nm(const std::string& key) const {
  auto it = name.find(key);
  return it == name.end() ? std::string() : it->second;
}

const Param* Scenario::param(const std::string& n) const {
  for (const Param& p : params)
    if (p.name == n) return &p;
  return nullptr;
}
const Variant* Scenario::variant(const std::string& n) const {
  for (const Variant& v : variants)
    if (v.name == n) return &v;
  return nullptr;
}
const ScriptDef* Scenario::script(const std::string& n) const {
  for (const ScriptDef& s : scripts)
    if (s.name == n) return &s;
  return nullptr;
}
const ClientDef* Scenario::client(const std::string& n) const {
  for (const ClientDef& c : clients)
    if (c.name == n) return &c;
  return nullptr;
}

namespace {

// The seeds' recipes as built-in scripts; a file may define its own under the same names
// (an exercise replaces one of them with a student's script).
const char* kBuiltinScripts[][2] = {
    {"lock_release",
     "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
     "  return redis.call('DEL', KEYS[1])\n"
     "end\n"
     "return 0\n"},
    {"lock_extend",
     "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
     "  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
     "end\n"
     "return 0\n"},
    {"fenced_acquire",
     "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
     "  return redis.call('INCR', KEYS[2])\n"
     "end\n"
     "return 0\n"},
};

bool is_word(const std::string& s) {
  if (s.empty()) return false;
  char c0 = s[0];
  if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}
bool is_ident(const std::string& s) {
  return is_word(s) && s.find('-') == std::string::npos;
}

const std::set<std::string> kOptionNumbers = {"gomaxprocs",
                                              "pool_size",
                                              "pool_timeout_ms",
                                              "dial_timeout_ms",
                                              "read_timeout_ms",
                                              "write_timeout_ms",
                                              "max_retries",
                                              "min_retry_backoff_ms",
                                              "max_retry_backoff_ms",
                                              "conn_max_idle_ms",
                                              "pubsub_reconnect_delay_ms"};
const std::set<std::string> kOptionFlags = {"context_timeout_enabled", "retry_pool_timeout",
                                            "pool_fifo", "hello_on_connect"};

// Bounds of a file (scenarios/README.md, "Limits"): a file that passes them loads in well
// under a second and a few hundred MB; past them it is refused with a located error.
constexpr size_t kActorsMax = 1000;       // entries of "actors"
constexpr int64_t kCountMax = 1000;       // an actor's "count" (the engine checks it too)
constexpr int64_t kInstancesMax = 10000;  // actor instances of constant counts, all together
constexpr size_t kStepsMax = 100000;      // steps in the file, nested ones included
// Entries of the other sections: enough for any lesson, and few enough that the loader's
// lookups by name stay cheap (a file is at most 4 MiB, so each is also bounded by that).
constexpr size_t kNamedMax = 1000;         // params, variants, values of a variant, scripts,
                                           // resources, checks, expect
constexpr size_t kServersMax = 100;        // servers
constexpr size_t kListMax = 10000;         // setup, faults, narration
constexpr int64_t kMsMax = 1000000000;     // a million seconds: any "_ms" value, either sign
constexpr int64_t kUsMax = kMsMax * 1000;  // the same for network.latency_us, jitter_us
// The trace's lanes that are not actors: the network's (sim/net/network.cpp names its events
// "net"); servers and resources have a lane of their own name.
constexpr const char* kNetLane = "net";

// Names every expression may use besides parameters, variants and saved variables.
const std::set<std::string> kBuiltinVars = {"i",        "n",     "actor",       "token",
                                            "fence",    "reply", "attempts",    "seed",
                                            "entry_id", "entry", "result_class"};

class Loader {
 public:
  Loader(std::string file) : file_(std::move(file)) {}

  Scenario load(std::string_view text) {
    text_ = text;
    JsonError err;
    auto doc = parse_json(text, &err);
    if (!doc) fail(err.pos, "", err.message);
    const JsonValue& root = *doc;
    expect_object(root, "");
    sc_.file = file_;
    check_keys(root, "",
               {"format",    "version",  "id",          "title",       "topic",   "story",
                "params",    "variants", "servers",     "network",     "clients", "scripts",
                "resources", "setup",    "actors",      "faults",      "checks",  "expect",
                "narration", "exercise", "duration_ms", "tolerance_ms"});
    if (auto* v = root.find("format")) {
      if (!v->is_string() || v->as_string() != "redlab-scenario")
        fail(v->pos(), "format", "expected \"redlab-scenario\"");
    }
    if (auto* v = root.find("version")) {
      if (!v->is_int()) type_error(*v, "version", "an integer");
      if (v->as_int() > 1)
        fail(v->pos(), "version",
             "written for a newer redlab (version " + std::to_string(v->as_int()) +
                 "; this one reads version 1)");
      if (v->as_int() < 1) fail(v->pos(), "version", "must be 1");
    }
    sc_.id = req_string(root, "id", "");
    if (!is_word(sc_.id))
      fail(root.find("id")->pos(), "id", "expected a word like ttl-double-holder");
    sc_.title = req_text(root, "title", "");
    if (auto* v = root.find("topic")) sc_.topic = string_of(*v, "topic");
    if (auto* v = root.find("story")) sc_.story = text_of(*v, "story");

    collect_saves(root);
    if (auto* v = root.find("params")) load_params(*v);
    if (auto* v = root.find("variants")) load_variants(*v);
    if (auto* v = root.find("duration_ms")) {
      sc_.duration_ms = duration(*v, "duration_ms");
      sc_.duration_where = Where{v->pos(), "duration_ms"};
    }
    if (auto* v = root.find("tolerance_ms")) {
      sc_.tolerance_ms = integer(*v, "tolerance_ms");
      if (sc_.tolerance_ms < 0 || sc_.tolerance_ms > 60000)
        fail(v->pos(), "tolerance_ms", "expected 0..60000 (ms)");
    }
    load_servers(root.find("servers"));
    if (auto* v = root.find("network")) load_network(*v);
    if (auto* v = root.find("scripts")) load_scripts(*v);
    for (auto& [name, source] : kBuiltinScripts)
      if (!sc_.script(name)) sc_.scripts.push_back(ScriptDef{name, source, {}});
    if (auto* v = root.find("resources")) load_resources(*v);
    load_clients(root.find("clients"));
    if (auto* v = root.find("setup")) load_setup(*v);
    const JsonValue* actors = root.find("actors");
    if (!actors) fail(root.pos(), "", "missing key \"actors\"");
    load_actors(*actors);
    if (auto* v = root.find("faults")) load_faults(*v);
    if (auto* v = root.find("checks")) load_checks(*v);
    if (auto* v = root.find("expect")) load_expect(*v);
    if (auto* v = root.find("narration")) load_narration(*v);
    if (auto* v = root.find("exercise")) load_exercise(*v);
    return std::move(sc_);
  }

  // An intervention's faults[] entry (sim/scenario/intervention.h), checked by the rules of a
  // fault in the file and added to `sc`; errors name `origin` instead of a place in a file.
  void add_fault(Scenario& sc, std::string_view entry, const std::string& origin) {
    text_ = entry;
    origin_ = origin;
    JsonError err;
    auto doc = parse_json(entry, &err);
    if (!doc) fail(err.pos, "", err.message);
    sc_ = std::move(sc);
    for (const Param& p : sc_.params) names_.insert(p.name);
    for (const Variant& v : sc_.variants) names_.insert(v.name);
    try {
      size_t first = sc_.faults.size();
      load_fault(*doc, origin_);
      for (size_t i = first; i < sc_.faults.size(); i++)
        sc_.faults[i].where = Where{Pos{0, 0}, origin_};
    } catch (...) {
      sc = std::move(sc_);
      throw;
    }
    sc = std::move(sc_);
  }

 private:
  [[noreturn]] void fail(Pos pos, const std::string& path, const std::string& message) const {
    if (!origin_.empty()) {
      // An intervention: the line is the place ("intervention \"...\": actor: ...").
      std::string rest = path.rfind(origin_, 0) == 0 ? path.substr(origin_.size()) : path;
      if (!rest.empty() && rest[0] == '.') rest = rest.substr(1);
      throw ScenarioError(file_ + ": " + origin_ + ": " + (rest.empty() ? "" : rest + ": ") +
                          message);
    }
    throw_located(file_, Where{pos, path}, message);
  }
  [[noreturn]] void type_error(const JsonValue& v, const std::string& path,
                               const std::string& wanted) const {
    fail(v.pos(), path,
         "expected " + wanted + ", found " + JsonValue::type_name(v.type()) + describe(v));
  }
  static std::string describe(const JsonValue& v) {
    if (v.is_string()) {
      std::string s = v.as_string();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return " \"" + s + "\"";
    }
    if (v.is_int()) return " " + std::to_string(v.as_int());
    return "";
  }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  void expect_object(const JsonValue& v, const std::string& path) const {
    if (!v.is_object()) type_error(v, path, "an object");
  }
  void expect_array(const JsonValue& v, const std::string& path) const {
    if (!v.is_array()) type_error(v, path, "an array");
  }
  void check_keys(const JsonValue& v, const std::string& path,
                  std::initializer_list<const char*> allowed) const {
    std::vector<std::string> a(allowed.begin(), allowed.end());
    check_keys(v, path, a);
  }
  void check_keys(const JsonValue& v, const std::string& path,
                  const std::vector<std::string>& allowed) const {
    for (const auto& m : v.members()) {
      bool ok = false;
      for (const auto& k : allowed) ok = ok || m.key == k;
      if (!ok) {
        std::string list = comma_list(allowed);
        fail(m.key_pos, join(path, m.key),
             "unknown key \"" + m.key + "\" (expected one of: " + list + ")");
      }
    }
  }
  std::string string_of(const JsonValue& v, const std::string& path) const {
    if (!v.is_string()) type_error(v, path, "a string");
    return v.as_string();
  }
  std::string req_string(const JsonValue& obj, const std::string& key,
                         const std::string& path) const {
    const JsonValue* v = obj.find(key);
    if (!v) fail(obj.pos(), path, "missing key \"" + key + "\"");
    return string_of(*v, join(path, key));
  }
  Text text_of(const JsonValue& v, const std::string& path) const {
    Text t;
    if (v.is_string()) {
      t.by_lang["en"] = v.as_string();
      return t;
    }
    if (!v.is_object()) type_error(v, path, "a string or an object of languages");
    check_keys(v, path, {"en", "ru", "cs"});
    for (const auto& m : v.members()) t.by_lang[m.key] = string_of(m.value, join(path, m.key));
    if (t.by_lang.empty()) fail(v.pos(), path, "expected at least one language");
    return t;
  }
  Text req_text(const JsonValue& obj, const std::string& key, const std::string& path) const {
    const JsonValue* v = obj.find(key);
    if (!v) fail(obj.pos(), path, "missing key \"" + key + "\"");
    return text_of(*v, join(path, key));
  }

  // A section holds at most `max` entries; the error points at the first one too many.
  void at_most(const JsonValue& v, const std::string& path, size_t max, const char* what) const {
    size_t n = v.is_object() ? v.members().size() : v.items().size();
    if (n <= max) return;
    if (v.is_object())
      fail(v.members()[max].key_pos, join(path, v.members()[max].key),
           "more than " + std::to_string(max) + " " + what);
    fail(v.items()[max].pos(), index(path, max), "more than " + std::to_string(max) + " " + what);
  }

  // Names known to expressions: parameters, variants, built-in and saved variables. Looked up
  // once per name in every expression, so in sets, not by a scan of the parameters.
  bool known(std::string_view name) const {
    std::string n(name);
    return names_.count(n) || kBuiltinVars.count(n) || saves_.count(n);
  }
  NameCheck names() const {
    return [this](std::string_view n) { return known(n); };
  }
  // The position of byte `offset` of a string value's decoded text. The value's column points
  // at its opening quote; the raw string is walked from there because an escape ("\"", "\u00e9")
  // takes more bytes in the file than in the value. A string never spans lines.
  Pos inside(const JsonValue& v, size_t offset) const {
    Pos p = v.pos();
    size_t start = text_.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // columns skip a BOM
    for (int line = 1; line < p.line && start < text_.size(); line++) {
      start = text_.find('\n', start);
      start = start == std::string_view::npos ? text_.size() : start + 1;
    }
    size_t quote = start + size_t(p.column - 1);
    size_t i = quote + 1;
    for (size_t decoded = 0; decoded < offset && i < text_.size() && text_[i] != '"';) {
      if (text_[i] != '\\') {
        i++;
        decoded++;
      } else if (i + 1 < text_.size() && text_[i + 1] != 'u') {
        i += 2;
        decoded++;
      } else {
        // \uXXXX: 1 to 3 bytes of UTF-8; a surrogate pair \uXXXX\uXXXX is 4.
        unsigned cp = 0;
        for (size_t k = i + 2; k < i + 6 && k < text_.size(); k++)
          cp = cp * 16 + unsigned(std::isdigit(uint8_t(text_[k])) ? text_[k] - '0'
                                                                  : (text_[k] | 0x20) - 'a' + 10);
        bool pair = cp >= 0xD800 && cp <= 0xDBFF;
        i += pair ? 12 : 6;
        decoded += pair ? 4 : cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
      }
    }
    p.column += int(i - quote);
    return p;
  }
  Expr expr(const JsonValue& v, const std::string& path) const {
    if (v.is_int()) return Expr::constant(v.as_int());
    if (!v.is_string()) type_error(v, path, "an integer or an expression");
    std::string s = v.as_string();
    // "${ttl_ms}" and "ttl_ms" mean the same here.
    if (s.size() > 3 && s.rfind("${", 0) == 0 && s.back() == '}' && s.find('}') == s.size() - 1) {
      std::string error;
      size_t at = 0;
      auto e = Expr::parse(std::string_view(s).substr(2, s.size() - 3), names(), &error, &at);
      if (!e) fail(inside(v, at + 2), path, error);
      return *e;
    }
    std::string error;
    size_t at = 0;
    auto e = Expr::parse(s, names(), &error, &at);
    if (!e) fail(inside(v, at), path, error);
    return *e;
  }
  // The value of an expression without names ("-5", "10/0"): known now, so its mistakes are
  // reported here at the value rather than in the middle of a run at the step.
  std::optional<int64_t> fixed_value(const Expr& e, const JsonValue& v,
                                     const std::string& path) const {
    bool named = false;
    try {
      return e.eval([&named](std::string_view) {
        named = true;
        return std::optional<std::string>();
      });
    } catch (const EvalError& err) {
      if (!named) fail(v.pos(), path, "\"" + e.source() + "\": " + err.message);
    }
    return std::nullopt;
  }
  // A non-negative number; for a time in ms (a key "ms" or "..._ms"), at most kMsMax, so that
  // its microseconds cannot overflow.
  Expr duration(const JsonValue& v, const std::string& path) const {
    Expr e = expr(v, path);
    if (auto value = fixed_value(e, v, path)) {
      if (*value < 0)
        fail(v.pos(), path, "a duration cannot be negative (" + std::to_string(*value) + ")");
      if (is_ms_key(path) && *value > kMsMax) fail(v.pos(), path, too_long(*value));
    }
    return e;
  }
  // A time in ms that may be negative (a clock jump, a clock offset). The engine converts it
  // to microseconds without a check of its own: a value over parameters is refused here when
  // their ranges let it pass the bound.
  Expr signed_ms(const JsonValue& v, const std::string& path) const {
    Expr e = expr(v, path);
    if (auto value = fixed_value(e, v, path); value && (*value > kMsMax || *value < -kMsMax))
      fail(v.pos(), path, too_long(*value));
    if (auto r = e.range(param_range()); r && (r->hi > kMsMax || r->lo < -kMsMax))
      fail(v.pos(), path,
           "\"" + e.source() + "\" can be " + std::to_string(r->hi > kMsMax ? r->hi : r->lo) +
               " ms within its parameters' ranges: more than a million seconds (" +
               std::to_string(kMsMax) + " ms at most)");
    return e;
  }
  // The declared range of a parameter, for Expr::range (--set stays inside it).
  Expr::RangeOf param_range() const {
    return [this](std::string_view n) -> std::optional<Expr::Range> {
      if (const Param* p = sc_.param(std::string(n))) return Expr::Range{p->min, p->max};
      return std::nullopt;
    };
  }
  static std::string too_long(int64_t ms) {
    return std::to_string(ms) + " ms is more than a million seconds (" + std::to_string(kMsMax) +
           " ms at most)";
  }
  static bool is_ms_key(const std::string& path) {
    std::string key = path.substr(path.find_last_of('.') + 1);  // npos + 1 == 0
    return key == "ms" || (key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0);
  }
  // An actor's number of instances.
  Expr count(const JsonValue& v, const std::string& path) const {
    Expr e = expr(v, path);
    if (auto value = fixed_value(e, v, path); value && (*value < 1 || *value > kCountMax))
      fail(v.pos(), path,
           "a count is 1 to " + std::to_string(kCountMax) + " (found " + std::to_string(*value) +
               ")");
    return e;
  }
  Template tmpl(const JsonValue& v, const std::string& path) const {
    if (v.is_int()) return Template::literal(std::to_string(v.as_int()));
    if (!v.is_string()) type_error(v, path, "a string");
    std::string error;
    size_t at = 0;
    auto t = Template::parse(v.as_string(), names(), &error, &at);
    if (!t) fail(inside(v, at), path, error);
    return *t;
  }
  Cond cond(const JsonValue& v, const std::string& path) const {
    if (!v.is_string()) type_error(v, path, "a condition string like \"release=lua\"");
    std::string error;
    size_t at = 0;
    auto c = Cond::parse(v.as_string(), names(), &error, &at);
    if (!c) fail(inside(v, at), path, error);
    return *c;
  }
  bool boolean(const JsonValue& v, const std::string& path) const {
    if (!v.is_bool()) type_error(v, path, "true or false");
    return v.as_bool();
  }
  int64_t integer(const JsonValue& v, const std::string& path) const {
    if (!v.is_int()) type_error(v, path, "an integer");
    return v.as_int();
  }

  void collect_saves(const JsonValue& v) {
    if (v.is_object()) {
      for (const auto& m : v.members()) {
        if (m.key == "save" && m.value.is_string()) saves_.insert(m.value.as_string());
        collect_saves(m.value);
      }
    } else if (v.is_array()) {
      for (const auto& item : v.items()) collect_saves(item);
    }
  }

  void load_params(const JsonValue& v) {
    expect_object(v, "params");
    at_most(v, "params", kNamedMax, "parameters");
    for (const auto& m : v.members()) {
      std::string path = "params." + m.key;
      if (!is_ident(m.key))
        fail(m.key_pos, path, "a parameter name is letters, digits and '_' (\"ttl_ms\")");
      if (kBuiltinVars.count(m.key)) fail(m.key_pos, path, "\"" + m.key + "\" is a built-in name");
      expect_object(m.value, path);
      check_keys(m.value, path, {"default", "min", "max", "unit", "label"});
      Param p;
      p.name = m.key;
      const JsonValue* d = m.value.find("default");
      if (!d) fail(m.value.pos(), path, "missing key \"default\"");
      p.def = integer(*d, path + ".default");
      p.min = m.value.find("min") ? integer(*m.value.find("min"), path + ".min") : p.def;
      p.max = m.value.find("max") ? integer(*m.value.find("max"), path + ".max") : p.def;
      if (p.min > p.max) fail(m.value.pos(), path, "min is above max");
      if (p.def < p.min || p.def > p.max) fail(d->pos(), path + ".default", "outside [min, max]");
      if (auto* u = m.value.find("unit")) p.unit = string_of(*u, path + ".unit");
      if (auto* l = m.value.find("label")) p.label = text_of(*l, path + ".label");
      names_.insert(p.name);
      sc_.params.push_back(std::move(p));
    }
  }

  void load_variants(const JsonValue& v) {
    expect_object(v, "variants");
    at_most(v, "variants", kNamedMax, "variants");
    for (const auto& m : v.members()) {
      std::string path = "variants." + m.key;
      if (!is_word(m.key)) fail(m.key_pos, path, "a variant name is a word (\"release\")");
      if (names_.count(m.key)) fail(m.key_pos, path, "\"" + m.key + "\" is also a parameter");
      expect_object(m.value, path);
      check_keys(m.value, path, {"values", "default", "label", "value_labels"});
      Variant var;
      var.name = m.key;
      const JsonValue* values = m.value.find("values");
      if (!values) fail(m.value.pos(), path, "missing key \"values\"");
      expect_array(*values, path + ".values");
      at_most(*values, path + ".values", kNamedMax, "values");
      for (size_t i = 0; i < values->items().size(); i++) {
        std::string value = string_of(values->items()[i], index(path + ".values", i));
        if (!is_word(value))
          fail(values->items()[i].pos(), index(path + ".values", i), "expected a word");
        var.values.push_back(value);
      }
      if (var.values.size() < 2)
        fail(values->pos(), path + ".values", "a variant needs two values or more");
      var.def = var.values[0];
      if (auto* d = m.value.find("default")) {
        var.def = string_of(*d, path + ".default");
        bool found = false;
        for (auto& x : var.values) found = found || x == var.def;
        if (!found)
          fail(d->pos(), path + ".default", "\"" + var.def + "\" is not one of the values");
      }
      if (auto* l = m.value.find("label")) var.label = text_of(*l, path + ".label");
      if (auto* l = m.value.find("value_labels")) {
        expect_object(*l, path + ".value_labels");
        for (const auto& vm : l->members()) {
          bool found = false;
          for (auto& x : var.values) found = found || x == vm.key;
          if (!found) fail(vm.key_pos, path + ".value_labels." + vm.key, "not one of the values");
          var.value_labels[vm.key] = text_of(vm.value, path + ".value_labels." + vm.key);
        }
      }
      names_.insert(var.name);
      sc_.variants.push_back(std::move(var));
    }
  }

  void load_servers(const JsonValue* v) {
    if (!v) {
      ServerDef def;
      def.name = "redis";
      sc_.servers.push_back(std::move(def));
      return;
    }
    expect_object(*v, "servers");
    at_most(*v, "servers", kServersMax, "servers");
    for (const auto& m : v->members()) {
      std::string path = "servers." + m.key;
      if (!is_word(m.key)) fail(m.key_pos, path, "a server name is a word (\"redis\")");
      if (m.key == kNetLane)
        fail(m.key_pos, path,
             "\"net\" is the network's lane in the trace: name the server otherwise");
      expect_object(m.value, path);
      check_keys(m.value, path, {"config", "clock_offset_ms", "replica_of", "when"});
      ServerDef s;
      s.where = Where{m.value.pos(), path};
      s.name = m.key;
      if (auto* c = m.value.find("config")) {
        expect_object(*c, path + ".config");
        for (const auto& cm : c->members()) {
          s.config.emplace_back(cm.key, tmpl(cm.value, path + ".config." + cm.key));
          s.config_pos.push_back(cm.value.pos());
        }
      }
      if (auto* o = m.value.find("clock_offset_ms"))
        s.clock_offset_ms = signed_ms(*o, path + ".clock_offset_ms");
      if (auto* r = m.value.find("replica_of")) {
        if (!r->is_string()) fail(r->pos(), path + ".replica_of", "expected a server name");
        s.replica_of = r->as_string();
      }
      if (auto* w = m.value.find("when")) {
        if (sc_.servers.empty())
          fail(w->pos(), path + ".when",
               "the first server is the default for clients and faults: it is in every run");
        s.when = cond(*w, path + ".when");
      }
      sc_.servers.push_back(std::move(s));
    }
    if (sc_.servers.empty()) fail(v->pos(), "servers", "declare at least one server");
    // A replica follows a primary declared in the file; no chains, the first server is a primary.
    for (const ServerDef& s : sc_.servers) {
      if (s.replica_of.empty()) continue;
      const JsonValue& at = *v->find(s.name)->find("replica_of");
      const ServerDef* primary = nullptr;
      for (const ServerDef& o : sc_.servers)
        if (o.name == s.replica_of) primary = &o;
      if (!primary || primary == &s)
        fail(at.pos(), s.where.path + ".replica_of",
             primary ? "a server cannot replicate itself"
                     : "no server named \"" + s.replica_of + "\"");
      if (!primary->replica_of.empty())
        fail(at.pos(), s.where.path + ".replica_of",
             "\"" + s.replica_of + "\" is itself a replica: chains of replicas are not modelled");
      if (&s == &sc_.servers.front())
        fail(at.pos(), s.where.path + ".replica_of",
             "the first server is the default for clients and faults: list the primary first");
    }
  }
  bool has_server(const std::string& name) const {
    for (auto& s : sc_.servers)
      if (s.name == name) return true;
    return false;
  }

  void load_network(const JsonValue& v) {
    expect_object(v, "network");
    check_keys(v, "network", {"latency_us", "jitter_us"});
    if (auto* l = v.find("latency_us")) {
      sc_.latency_us = integer(*l, "network.latency_us");
      if (sc_.latency_us < 0) fail(l->pos(), "network.latency_us", "a duration cannot be negative");
      if (sc_.latency_us > kUsMax)
        fail(l->pos(), "network.latency_us", "more than a million seconds");
    }
    if (auto* j = v.find("jitter_us")) {
      sc_.jitter_us = integer(*j, "network.jitter_us");
      if (sc_.jitter_us < 0) fail(j->pos(), "network.jitter_us", "a duration cannot be negative");
      if (sc_.jitter_us > kUsMax)
        fail(j->pos(), "network.jitter_us", "more than a million seconds");
    }
  }

  void load_scripts(const JsonValue& v) {
    expect_object(v, "scripts");
    at_most(v, "scripts", kNamedMax, "scripts");
    for (const auto& m : v.members()) {
      std::string path = "scripts." + m.key;
      if (!is_word(m.key)) fail(m.key_pos, path, "a script name is a word");
      ScriptDef s{m.key, {}, Where{m.value.pos(), path}};
      if (m.value.is_string()) {
        s.source = m.value.as_string();
      } else if (m.value.is_array()) {
        // Lines, for readability in JSON.
        for (size_t i = 0; i < m.value.items().size(); i++)
          s.source += string_of(m.value.items()[i], index(path, i)) + "\n";
      } else {
        type_error(m.value, path, "a string or an array of lines");
      }
      sc_.scripts.push_back(std::move(s));
    }
  }

  void load_resources(const JsonValue& v) {
    expect_object(v, "resources");
    at_most(v, "resources", kNamedMax, "resources");
    for (const auto& m : v.members()) {
      std::string path = "resources." + m.key;
      if (!is_word(m.key)) fail(m.key_pos, path, "a resource name is a word");
      if (std::string lane = lane_owner(m.key); !lane.empty())
        fail(m.key_pos, path,
             "\"" + m.key + "\" is already " + lane + ": a resource needs a lane of its own");
      expect_object(m.value, path);
      check_keys(m.value, path, {"check_fence", "unique_values"});
      ResourceDef r{m.key, Cond{}, std::nullopt, Where{m.value.pos(), path}};
      if (auto* c = m.value.find("check_fence")) {
        if (c->is_bool()) {
          std::string e;
          r.check_fence = *Cond::parse(c->as_bool() ? "" : "seed<0", names(), &e, nullptr);
        } else {
          r.check_fence = cond(*c, path + ".check_fence");
        }
      }
      if (auto* c = m.value.find("unique_values")) {
        if (c->is_bool()) {
          std::string e;
          r.unique_values = *Cond::parse(c->as_bool() ? "" : "seed<0", names(), &e, nullptr);
        } else {
          r.unique_values = cond(*c, path + ".unique_values");
        }
      }
      sc_.resources.push_back(std::move(r));
    }
  }

  // A client option's number means what the go-redis Options field means: 0 asks for the
  // default, -1 switches the thing off (max_retries: no retries; a backoff: none;
  // conn_max_idle_ms: never), and read/write timeouts also take -2 (no deadline at all).
  // docs/client-model.md has the table; sim/client/options.h resolves them.
  Expr client_number(const JsonValue& v, const std::string& path, const std::string& key) const {
    static const std::map<std::string, std::pair<int64_t, const char*>> kLowest = {
        {"gomaxprocs", {1, "at least 1"}},
        {"pool_size", {1, "at least 1"}},
        {"max_retries", {-1, "-1 (no retries), 0 (the default, 3) or more"}},
        {"read_timeout_ms", {-2, "-2 (no deadline), -1 (no timeout), 0 (the default) or more"}},
        {"write_timeout_ms",
         {-2, "-2 (no deadline), -1 (no timeout), 0 (= read_timeout_ms) or more"}},
        {"min_retry_backoff_ms", {-1, "-1 (no backoff), 0 (the default) or more"}},
        {"max_retry_backoff_ms", {-1, "-1 (no backoff), 0 (the default) or more"}},
        {"conn_max_idle_ms", {-1, "-1 (never), 0 (the default, 30 min) or more"}},
    };
    Expr e = expr(v, path);
    auto value = fixed_value(e, v, path);
    if (!value) return e;  // depends on parameters: the run checks it
    auto it = kLowest.find(key);
    int64_t lowest = it == kLowest.end() ? 0 : it->second.first;
    if (*value < lowest)
      fail(v.pos(), path,
           it == kLowest.end()
               ? "a duration cannot be negative (" + std::to_string(*value) + ")"
               : "expected " + std::string(it->second.second) + ", not " + std::to_string(*value));
    if (is_ms_key(path) && *value > kMsMax) fail(v.pos(), path, too_long(*value));
    return e;
  }

  ClientOptionsDef client_options(const JsonValue& v, const std::string& path) const {
    expect_object(v, path);
    ClientOptionsDef o;
    for (const auto& m : v.members()) {
      std::string p = join(path, m.key);
      if (m.key == "profile") {
        o.profile = string_of(m.value, p);
        const auto& names = client::Options::profile_names();
        if (std::find(names.begin(), names.end(), o.profile) == names.end())
          fail(m.value.pos(), p,
               "expected \"v9.0\" (v9.0 .. v9.7), \"v9.8\" (v9.8 .. v9.21) or \"v9.22\"");
      } else if (kOptionNumbers.count(m.key)) {
        o.numbers.emplace(m.key, client_number(m.value, p, m.key));
      } else if (kOptionFlags.count(m.key)) {
        o.flags[m.key] = boolean(m.value, p);
      } else {
        std::vector<std::string> all{"profile"};
        all.insert(all.end(), kOptionNumbers.begin(), kOptionNumbers.end());
        all.insert(all.end(), kOptionFlags.begin(), kOptionFlags.end());
        check_keys(v, path, all);
      }
    }
    return o;
  }

  void load_clients(const JsonValue* v) {
    if (v) {
      expect_object(*v, "clients");
      for (const auto& m : v->members()) {
        std::string path = "clients." + m.key;
        if (!is_word(m.key)) fail(m.key_pos, path, "a client name is a word");
        expect_object(m.value, path);
        check_keys(m.value, path, {"server", "shared", "options"});
        ClientDef c;
        c.name = m.key;
        c.where = Where{m.value.pos(), path};
        c.server = sc_.servers[0].name;
        if (auto* s = m.value.find("server")) {
          c.server = string_of(*s, path + ".server");
          if (!has_server(c.server))
            fail(s->pos(), path + ".server", "no server named \"" + c.server + "\"");
        }
        if (auto* s = m.value.find("shared")) c.shared = boolean(*s, path + ".shared");
        if (auto* o = m.value.find("options")) c.options = client_options(*o, path + ".options");
        sc_.clients.push_back(std::move(c));
      }
    }
    if (!sc_.client("default")) {
      ClientDef c;
      c.name = "default";
      c.server = sc_.servers[0].name;
      sc_.clients.push_back(std::move(c));
    }
  }

  void load_setup(const JsonValue& v) {
    expect_array(v, "setup");
    at_most(v, "setup", kListMax, "setup commands");
    for (size_t i = 0; i < v.items().size(); i++) {
      const JsonValue& item = v.items()[i];
      std::string path = index("setup", i);
      SetupCommand s{sc_.servers[0].name, Template::literal(""), std::nullopt,
                     Where{item.pos(), path}};
      if (item.is_string()) {
        s.cmd = tmpl(item, path);
      } else {
        expect_object(item, path);
        check_keys(item, path, {"server", "cmd", "when"});
        const JsonValue* c = item.find("cmd");
        if (!c) fail(item.pos(), path, "missing key \"cmd\"");
        s.cmd = tmpl(*c, path + ".cmd");
        if (auto* sv = item.find("server")) {
          s.server = string_of(*sv, path + ".server");
          if (!has_server(s.server))
            fail(sv->pos(), path + ".server", "no server named \"" + s.server + "\"");
        }
        if (auto* w = item.find("when")) s.when = cond(*w, path + ".when");
      }
      sc_.setup.push_back(std::move(s));
    }
  }

  std::vector<Step> steps(const JsonValue& v, const std::string& path, int depth) {
    expect_array(v, path);
    if (depth > 16) fail(v.pos(), path, "steps nested too deep (16 levels at most)");
    std::vector<Step> out;
    out.reserve(std::min(v.items().size(), kStepsMax));
    for (size_t i = 0; i < v.items().size(); i++)
      out.push_back(step(v.items()[i], index(path, i), depth));
    return out;
  }

  Step step(const JsonValue& v, const std::string& path, int depth) {
    if (++steps_total_ > kStepsMax)
      fail(v.pos(), path, "more than " + std::to_string(kStepsMax) + " steps in the file");
    expect_object(v, path);
    Step s;
    s.where = Where{v.pos(), path};
    const JsonValue* op = v.find("do");
    if (!op) fail(v.pos(), path, "missing key \"do\" (what the step does)");
    s.op = string_of(*op, path + ".do");
    // The step registry (kinds.h) says which kinds exist and what fields each takes.
    s.kind = find_step_kind(s.op);
    if (!s.kind) {
      std::vector<std::string> known;
      for (const StepKind* k : step_kinds()) known.push_back(k->name);
      std::sort(known.begin(), known.end());
      std::string list = comma_list(known);
      fail(op->pos(), path + ".do",
           "unknown step \"" + s.op + "\" (expected one of: " + list + ")");
    }
    std::vector<std::string> allowed{"do", "when", "save"};
    for (const FieldSpec& f : s.kind->fields) allowed.push_back(f.key);
    check_keys(v, path, allowed);
    if (auto* w = v.find("when")) s.when = cond(*w, path + ".when");
    if (auto* sv = v.find("save")) {
      s.save = string_of(*sv, path + ".save");
      if (!is_ident(s.save))
        fail(sv->pos(), path + ".save", "a variable name is letters, digits and '_'");
    } else if (s.kind->requires_save) {
      fail(v.pos(), path, "missing key \"save\" (the variable to set)");
    }
    for (const FieldSpec& f : s.kind->fields) {
      const JsonValue* fv = v.find(f.key);
      if (!fv) {
        if (f.required) fail(v.pos(), path, "missing key \"" + std::string(f.key) + "\"");
        continue;
      }
      step_field(s, f, *fv, path + "." + f.key, depth);
    }
    if (s.kind->validate)
      if (const char* error = s.kind->validate(s)) fail(v.pos(), path, error);
    // A literal value of a field with choices must be one of them (a template is checked when
    // the step runs); a list that must have items has some.
    for (const FieldSpec& f : s.kind->fields) {
      const JsonValue* fv = v.find(f.key);
      if (!fv) continue;
      if (const Template* t = s.t(f.key); t && f.choices && t->is_literal()) {
        std::vector<std::string> words = choice_words(f.choices);
        if (std::find(words.begin(), words.end(), t->source()) == words.end())
          fail(fv->pos(), path + "." + f.key, "expected " + choice_list(f.choices, true));
      }
      if (const auto* l = s.l(f.key); l && f.non_empty && l->empty())
        fail(fv->pos(), path + "." + f.key, "must not be empty");
    }
    return s;
  }
  // One field of a step, read as its type says.
  void step_field(Step& s, const FieldSpec& f, const JsonValue& fv, const std::string& fp,
                  int depth) {
    switch (f.type) {
      case FieldType::Text:
      case FieldType::CommandLine:
        s.text.emplace(f.key, tmpl(fv, fp));
        break;
      case FieldType::Number:
        s.number.emplace(f.key, expr(fv, fp));
        break;
      case FieldType::Count:
      case FieldType::Duration:
        s.number.emplace(f.key, duration(fv, fp));
        break;
      case FieldType::SignedDuration:
        s.number.emplace(f.key, signed_ms(fv, fp));
        break;
      case FieldType::Bool:
        s.flag[f.key] = boolean(fv, fp);
        break;
      case FieldType::List:
      case FieldType::Commands: {
        expect_array(fv, fp);
        std::vector<Template> items;
        for (size_t i = 0; i < fv.items().size(); i++)
          items.push_back(tmpl(fv.items()[i], index(fp, i)));
        s.list.emplace(f.key, std::move(items));
        break;
      }
      case FieldType::Script: {
        std::string n = string_of(fv, fp);
        if (!sc_.script(n)) fail(fv.pos(), fp, "no script named \"" + n + "\"");
        s.name[f.key] = n;
        break;
      }
      case FieldType::Resource: {
        std::string n = string_of(fv, fp);
        if (!has_resource(n)) fail(fv.pos(), fp, "no resource named \"" + n + "\"");
        s.name[f.key] = n;
        break;
      }
      case FieldType::Steps: {
        auto sub = steps(fv, fp, depth + 1);
        if (std::string_view(f.key) == "else")
          s.orelse = std::move(sub);
        else
          s.body = std::move(sub);
        break;
      }
      case FieldType::Cond:
        s.cond = cond(fv, fp);
        break;
      case FieldType::Says:
        s.says[f.key] = text_of(fv, fp);
        break;
      case FieldType::Server: {
        std::string n = string_of(fv, fp);
        if (!has_server(n)) fail(fv.pos(), fp, "no server named \"" + n + "\"");
        s.name[f.key] = n;
        break;
      }
      case FieldType::Actor:
        REDLAB_ASSERT(false && "no step kind has an actor field");
    }
  }
  bool has_resource(const std::string& n) const {
    for (auto& r : sc_.resources)
      if (r.name == n) return true;
    return false;
  }

  // What else has a lane of this name in the trace ("the network", "a server", ...); "" if
  // nothing.
  std::string lane_owner(const std::string& name) const {
    if (name == kNetLane) return "the network's lane";
    if (has_server(name)) return "a server";
    if (has_resource(name)) return "a resource";
    return "";
  }
  // An actor's instances are called name (count 1) or name1..nameN: does `lane` look like one?
  static bool instance_of(const std::string& lane, const std::string& name, bool one) {
    if (lane == name) return true;
    if (one || lane.size() <= name.size() || lane.compare(0, name.size(), name) != 0) return false;
    std::string digits = lane.substr(name.size());
    return digits[0] != '0' &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  void check_actor_lane(const ActorDef& d, const JsonValue& name_value, const std::string& path,
                        std::optional<int64_t> count) const {
    std::vector<std::pair<std::string, std::string>> lanes{{kNetLane, "the network's lane"}};
    for (const ServerDef& s : sc_.servers) lanes.emplace_back(s.name, "a server");
    for (const ResourceDef& r : sc_.resources) lanes.emplace_back(r.name, "a resource");
    for (const auto& [lane, what] : lanes)
      if (instance_of(lane, d.name, count == 1))
        fail(name_value.pos(), path + ".name",
             "\"" + lane + "\" is " +
                 (lane == d.name ? "" : "an instance name of this actor and ") +
                 (what == "the network's lane" ? what : "the name of " + what) +
                 " in the trace: name the actor otherwise");
  }

  void load_actors(const JsonValue& v) {
    expect_array(v, "actors");
    if (v.items().empty()) fail(v.pos(), "actors", "declare at least one actor");
    if (v.items().size() > kActorsMax)
      fail(v.items()[kActorsMax].pos(), index("actors", kActorsMax),
           "more than " + std::to_string(kActorsMax) + " actors");
    std::set<std::string> seen;
    int64_t instances = 0;
    for (size_t i = 0; i < v.items().size(); i++) {
      const JsonValue& a = v.items()[i];
      std::string path = index("actors", i);
      expect_object(a, path);
      check_keys(
          a, path,
          {"name", "count", "client", "start_ms", "start_jitter_ms", "when", "role", "steps"});
      ActorDef d;
      d.where = Where{a.pos(), path};
      d.name = req_string(a, "name", path);
      if (!is_word(d.name))
        fail(a.find("name")->pos(), path + ".name", "an actor name is a word (\"A\", \"buyer\")");
      // Two actors may share a name when each has a `when` (alternatives for variants).
      if (!seen.insert(d.name).second) {
        bool alternatives = a.find("when") != nullptr;
        for (const ActorDef& other : sc_.actors)
          if (other.name == d.name && !other.when) alternatives = false;
        if (!alternatives)
          fail(a.find("name")->pos(), path + ".name",
               "a second actor named \"" + d.name + "\" (allowed only when both have a \"when\")");
      }
      std::optional<int64_t> fixed_count = 1;
      int64_t most = 1;  // the instances this actor can have
      if (auto* c = a.find("count")) {
        d.count = count(*c, path + ".count");
        fixed_count = fixed_value(d.count, *c, path + ".count");
        // A count over parameters is bounded by their ranges (--set stays inside them);
        // anything else may be up to kCountMax at run time.
        auto r = d.count.range(param_range());
        most = r ? std::clamp(r->hi, int64_t(1), kCountMax) : kCountMax;
      }
      // Alternatives (actors with a `when`) all count: each may be the one that runs.
      if ((instances += most) > kInstancesMax)
        fail(a.find("count") ? a.find("count")->pos() : a.pos(),
             a.find("count") ? path + ".count" : path,
             "more than " + std::to_string(kInstancesMax) +
                 " actor instances in the file (counts at their largest: the parameters' max)");
      check_actor_lane(d, *a.find("name"), path, fixed_count);
      if (auto* c = a.find("client")) {
        d.client = string_of(*c, path + ".client");
        if (!sc_.client(d.client))
          fail(c->pos(), path + ".client", "no client named \"" + d.client + "\"");
      }
      if (auto* s = a.find("start_ms")) d.start_ms = duration(*s, path + ".start_ms");
      if (auto* s = a.find("start_jitter_ms"))
        d.start_jitter_ms = duration(*s, path + ".start_jitter_ms");
      if (auto* w = a.find("when")) d.when = cond(*w, path + ".when");
      if (auto* r = a.find("role")) d.role = text_of(*r, path + ".role");
      const JsonValue* st = a.find("steps");
      if (!st) fail(a.pos(), path, "missing key \"steps\"");
      d.steps = steps(*st, path + ".steps", 0);
      sc_.actors.push_back(std::move(d));
    }
  }
  bool actor_named(const std::string& n) const {
    for (auto& a : sc_.actors)
      if (a.name == n) return true;
    return false;
  }

  void load_faults(const JsonValue& v) {
    expect_array(v, "faults");
    at_most(v, "faults", kListMax, "faults");
    for (size_t i = 0; i < v.items().size(); i++) load_fault(v.items()[i], index("faults", i));
  }
  void load_fault(const JsonValue& f, const std::string& path) {
    {
      expect_object(f, path);
      // The fault registry (kinds.h) says which kinds exist and which keys each takes: the
      // shared ones (actor, server, for_ms, by_ms: accepted by every kind) and its own.
      const JsonValue* op = f.find("do");
      const FaultKind* kind = op && op->is_string() ? find_fault_kind(op->as_string()) : nullptr;
      std::vector<std::string> allowed{"at_ms",  "do",    "actor", "server",
                                       "for_ms", "by_ms", "when",  "why"};
      if (kind)
        for (const FieldSpec& fs : kind->fields)
          if (!shared_fault_key(fs.key)) allowed.push_back(fs.key);
      check_keys(f, path, allowed);
      FaultDef d;
      d.where = Where{f.pos(), path};
      d.op = req_string(f, "do", path);
      if (!kind) {
        std::vector<std::string> known;
        for (const FaultKind* k : fault_kinds()) known.push_back(k->name);
        std::sort(known.begin(), known.end());
        std::string list = comma_list(known);
        fail(f.find("do")->pos(), path + ".do",
             "unknown fault \"" + d.op + "\" (expected one of: " + list + ")");
      }
      d.kind = kind;
      const JsonValue* at = f.find("at_ms");
      if (!at) fail(f.pos(), path, "missing key \"at_ms\"");
      d.at_ms = duration(*at, path + ".at_ms");
      // A missing key the kind requires: "missing key "actor" (who the pause hits)".
      auto missing = [&](const char* key) {
        const FieldSpec* fs = find_field(kind->fields, key);
        if (!fs || !fs->required) return;
        std::string hint = fs->missing_hint;
        if (size_t pct = hint.find('%'); pct != std::string::npos) hint.replace(pct, 1, d.op);
        fail(f.pos(), path,
             "missing key \"" + std::string(key) + "\"" + (hint.empty() ? "" : " (" + hint + ")"));
      };
      if (auto* a = f.find("actor"))
        d.actor = fault_actor(*a, path + ".actor");
      else
        missing("actor");
      if (auto* s = f.find("server")) {
        d.server = string_of(*s, path + ".server");
        if (!has_server(d.server))
          fail(s->pos(), path + ".server", "no server named \"" + d.server + "\"");
      } else {
        d.server = sc_.servers[0].name;
      }
      if (auto* x = f.find("for_ms"))
        d.for_ms = duration(*x, path + ".for_ms");
      else
        missing("for_ms");
      if (auto* x = f.find("by_ms"))
        d.by_ms = signed_ms(*x, path + ".by_ms");
      else
        missing("by_ms");
      for (const FieldSpec& fs : kind->fields) {
        if (shared_fault_key(fs.key)) continue;
        const JsonValue* x = f.find(fs.key);
        if (!x) {
          missing(fs.key);
          continue;
        }
        std::string fp = path + "." + fs.key;
        switch (fs.type) {
          case FieldType::Duration:
            d.number.emplace(fs.key, duration(*x, fp));
            break;
          case FieldType::SignedDuration:
            d.number.emplace(fs.key, signed_ms(*x, fp));
            break;
          case FieldType::Number:
            d.number.emplace(fs.key, expr(*x, fp));
            break;
          default:
            REDLAB_ASSERT(false && "a fault's own field is a number or a duration");
        }
      }
      if (auto* w = f.find("when")) d.when = cond(*w, path + ".when");
      if (auto* w = f.find("why")) d.why = text_of(*w, path + ".why");
      sc_.faults.push_back(std::move(d));
    }
  }
  static bool shared_fault_key(std::string_view key) {
    return key == "actor" || key == "server" || key == "for_ms" || key == "by_ms";
  }
  // A fault's `actor`: an actor (every instance of it) or one instance of an actor with a
  // count ("buyer7" of "buyer"; with a count known now, it must be within it).
  std::string fault_actor(const JsonValue& v, const std::string& path) const {
    std::string name = string_of(v, path);
    if (actor_named(name)) return name;
    for (const ActorDef& a : sc_.actors) {
      if (!instance_of(name, a.name, false)) continue;
      auto n = parse_int(name.substr(a.name.size()));
      // A count without names is known now; one over parameters is checked at run time
      // (an instance the run does not have is hit by nothing).
      bool named = false;
      std::optional<int64_t> count;
      try {
        count = a.count.eval([&named](std::string_view) {
          named = true;
          return std::optional<std::string>();
        });
      } catch (const EvalError&) {
        count.reset();
      }
      if (!named && count && (*count == 1 || *n > *count))
        fail(v.pos(), path,
             "no instance \"" + name + "\": " + a.name +
                 (*count == 1 ? " has one, called " + a.name
                              : " has " + std::to_string(*count) + " (" + a.name + "1 to " +
                                    a.name + std::to_string(*count) + ")"));
      return name;
    }
    fail(v.pos(), path, "no actor named \"" + name + "\"");
  }

  void load_checks(const JsonValue& v) {
    expect_array(v, "checks");
    at_most(v, "checks", kNamedMax, "checks");
    std::set<std::string> seen;
    for (size_t i = 0; i < v.items().size(); i++) {
      const JsonValue& c = v.items()[i];
      std::string path = index("checks", i);
      expect_object(c, path);
      CheckDef d;
      d.where = Where{c.pos(), path};
      d.check = req_string(c, "check", path);
      // The check registry (checks.h) says which exist and what fields they take.
      d.kind = find_check(d.check);
      if (!d.kind) {
        std::vector<std::string> known;
        for (const CheckKind* k : check_kinds()) known.push_back(k->name);
        std::string list = comma_list(known);
        fail(c.find("check")->pos(), path + ".check",
             "unknown check \"" + d.check + "\" (expected one of: " + list + ")");
      }
      std::vector<std::string> allowed{"check", "name"};
      for (const FieldSpec& f : d.kind->fields) allowed.push_back(f.key);
      check_keys(c, path, allowed);
      d.name = c.find("name") ? string_of(*c.find("name"), path + ".name") : d.check;
      if (!seen.insert(d.name).second)
        fail(c.pos(), path, "a second check named \"" + d.name + "\" (give it a \"name\")");
      for (const FieldSpec& f : d.kind->fields) {
        const JsonValue* fv = c.find(f.key);
        if (!fv) {
          if (f.required) fail(c.pos(), path, "missing key \"" + std::string(f.key) + "\"");
          continue;
        }
        std::string fp = path + "." + f.key;
        switch (f.type) {
          case FieldType::Count:
            d.numbers.emplace(f.key, duration(*fv, fp));
            break;
          case FieldType::Resource: {
            std::string n = string_of(*fv, fp);
            if (!has_resource(n)) fail(fv->pos(), fp, "no resource named \"" + n + "\"");
            d.args.emplace(f.key, Template::literal(n));
            break;
          }
          case FieldType::Text: {
            Template t = tmpl(*fv, fp);
            // A literal value of a field with choices must be one of them, as for a step.
            if (f.choices && t.is_literal()) {
              std::vector<std::string> words = choice_words(f.choices);
              if (std::find(words.begin(), words.end(), t.source()) == words.end())
                fail(fv->pos(), fp, "expected " + choice_list(f.choices, true));
            }
            d.args.emplace(f.key, std::move(t));
            break;
          }
          default:
            REDLAB_ASSERT(false && "a check's field is text, a count or a resource");
        }
      }
      sc_.checks.push_back(std::move(d));
    }
  }
  bool check_named(const std::string& n) const {
    for (auto& c : sc_.checks)
      if (c.name == n) return true;
    return false;
  }
  // {"check name": true|false} (and null, which withdraws an earlier expectation, where
  // allow_null).
  std::map<std::string, std::optional<bool>> check_map(const JsonValue& v, const std::string& path,
                                                       bool allow_null) const {
    expect_object(v, path);
    std::map<std::string, std::optional<bool>> out;
    for (const auto& m : v.members()) {
      std::string mp = path + "." + m.key;
      if (!check_named(m.key)) fail(m.key_pos, mp, "no check named \"" + m.key + "\"");
      out[m.key] = allow_null && m.value.is_null() ? std::nullopt
                                                   : std::optional<bool>(boolean(m.value, mp));
    }
    return out;
  }

  void load_expect(const JsonValue& v) {
    expect_array(v, "expect");
    at_most(v, "expect", kNamedMax, "expectations");
    for (size_t i = 0; i < v.items().size(); i++) {
      const JsonValue& e = v.items()[i];
      std::string path = index("expect", i);
      expect_object(e, path);
      check_keys(e, path, {"when", "checks"});
      Expectation x;
      x.where = Where{e.pos(), path};
      if (auto* w = e.find("when")) x.when = cond(*w, path + ".when");
      const JsonValue* c = e.find("checks");
      if (!c) fail(e.pos(), path, "missing key \"checks\"");
      x.checks = check_map(*c, path + ".checks", true);
      sc_.expect.push_back(std::move(x));
    }
  }

  void load_narration(const JsonValue& v) {
    expect_array(v, "narration");
    at_most(v, "narration", kListMax, "notes");
    for (size_t i = 0; i < v.items().size(); i++) {
      const JsonValue& n = v.items()[i];
      std::string path = index("narration", i);
      expect_object(n, path);
      check_keys(n, path, {"at_ms", "on", "after_ms", "text", "when"});
      Note note;
      note.where = Where{n.pos(), path};
      const JsonValue* at = n.find("at_ms");
      const JsonValue* on = n.find("on");
      if (!at == !on)
        fail(n.pos(), path,
             "give either \"at_ms\" (a time) or \"on\" (the event the note is about)");
      if (at) note.at_ms = duration(*at, path + ".at_ms");
      if (on) {
        std::string p = path + ".on";
        expect_object(*on, p);
        check_keys(*on, p, {"kind", "actor", "key", "value", "nth"});
        NoteAnchor a;
        a.kind = req_string(*on, "kind", p);
        if (auto* x = on->find("actor")) a.actor = string_of(*x, p + ".actor");
        if (auto* x = on->find("key")) a.key = string_of(*x, p + ".key");
        if (auto* x = on->find("value"))
          a.value = x->is_int() ? std::to_string(x->as_int()) : string_of(*x, p + ".value");
        if (auto* x = on->find("nth")) {
          a.nth = integer(*x, p + ".nth");
          if (a.nth < 1 || a.nth > 1000000) fail(x->pos(), p + ".nth", "expected 1 to 1000000");
        }
        note.on = a;
      }
      if (auto* x = n.find("after_ms")) note.after_ms = duration(*x, path + ".after_ms");
      note.text = req_text(n, "text", path);
      // The text may name parameters and variants: ${ttl_ms/1000} s.
      const JsonValue* tv = n.find("text");
      for (const auto& [lang, text] : note.text.by_lang) {
        std::string error;
        size_t at_byte = 0;
        auto t = Template::parse(text, names(), &error, &at_byte);
        if (!t) fail(tv->pos(), path + ".text" + (tv->is_object() ? "." + lang : ""), error);
        note.templates.emplace(lang, *t);
      }
      if (auto* w = n.find("when")) note.when = cond(*w, path + ".when");
      sc_.narration.push_back(std::move(note));
    }
  }

  void load_exercise(const JsonValue& v) {
    expect_object(v, "exercise");
    check_keys(v, "exercise",
               {"task", "hints", "script", "choose", "variant", "set", "seeds", "expect"});
    Exercise x;
    x.task = req_text(v, "task", "exercise");
    if (auto* h = v.find("hints")) {
      expect_array(*h, "exercise.hints");
      for (size_t i = 0; i < h->items().size(); i++)
        x.hints.push_back(text_of(h->items()[i], index("exercise.hints", i)));
    }
    const JsonValue* script = v.find("script");
    const JsonValue* choose = v.find("choose");
    if (!script == !choose)
      fail(v.pos(), "exercise",
           "give either \"script\" (the student writes that script) or \"choose\" (the "
           "variants and parameters the student sets), not both and not neither");
    if (script) {
      x.script = string_of(*script, "exercise.script");
      if (!sc_.script(x.script))
        fail(script->pos(), "exercise.script", "no script named \"" + x.script + "\"");
    } else {
      expect_array(*choose, "exercise.choose");
      for (size_t i = 0; i < choose->items().size(); i++) {
        std::string path = index("exercise.choose", i);
        std::string name = string_of(choose->items()[i], path);
        if (!sc_.variant(name) && !sc_.param(name))
          fail(choose->items()[i].pos(), path, "no variant or parameter named \"" + name + "\"");
        x.choose.push_back(name);
      }
      if (x.choose.empty()) fail(choose->pos(), "exercise.choose", "name at least one");
    }
    if (auto* var = v.find("variant")) {
      expect_object(*var, "exercise.variant");
      for (const auto& m : var->members()) {
        const Variant* def = sc_.variant(m.key);
        if (!def)
          fail(m.key_pos, "exercise.variant." + m.key, "no variant named \"" + m.key + "\"");
        std::string value = string_of(m.value, "exercise.variant." + m.key);
        bool ok = false;
        for (auto& x2 : def->values) ok = ok || x2 == value;
        if (!ok)
          fail(m.value.pos(), "exercise.variant." + m.key,
               "\"" + value + "\" is not one of the values");
        x.variant[m.key] = value;
      }
    }
    if (auto* set = v.find("set")) {
      expect_object(*set, "exercise.set");
      for (const auto& m : set->members()) {
        if (!sc_.param(m.key))
          fail(m.key_pos, "exercise.set." + m.key, "no parameter named \"" + m.key + "\"");
        x.set[m.key] = integer(m.value, "exercise.set." + m.key);
      }
    }
    if (auto* s = v.find("seeds")) {
      x.seeds = integer(*s, "exercise.seeds");
      if (x.seeds < 1 || x.seeds > 100000) fail(s->pos(), "exercise.seeds", "expected 1 to 100000");
    }
    const JsonValue* e = v.find("expect");
    if (!e) fail(v.pos(), "exercise", "missing key \"expect\"");
    for (auto& [name, want] : check_map(*e, "exercise.expect", false)) x.expect[name] = *want;
    for (const std::string& name : x.choose)
      if (x.variant.count(name) || x.set.count(name))
        fail(v.pos(), "exercise",
             "\"" + name + "\" is both fixed by the exercise and the student's to choose");
    sc_.exercise = std::move(x);
  }

  std::string file_;
  std::string origin_;     // an intervention's words, when loading one (add_fault)
  std::string_view text_;  // the document being loaded, for positions inside strings
  Scenario sc_;
  std::set<std::string> saves_;
  std::set<std::string> names_;  // parameters and variants
  size_t steps_total_ = 0;       // steps loaded so far, against kStepsMax
};

}  // namespace

void throw_located(const std::string& file, const Where& where, const std::string& message) {
  // Line 0: no place in the file (an intervention, which names itself in the path).
  std::string text = where.pos.line == 0 ? file + ": "
                                         : file + ":" + std::to_string(where.pos.line) + ":" +
                                               std::to_string(where.pos.column) + ": ";
  if (!where.path.empty()) text += where.path + ": ";
  throw ScenarioError(text + message);
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Scenario load_scenario_text(std::string_view text, const std::string& file) {
  Scenario sc = Loader(file).load(text);
  sc.sha1 = fake::sha1_hex(text);
  return sc;
}

void add_interventions(Scenario& sc, const std::vector<std::string>& lines) {
  if (sc.interventions.size() + lines.size() > kInterventionsMax)
    throw ScenarioError(sc.file + ": more than " + std::to_string(kInterventionsMax) +
                        " interventions");
  for (const std::string& line : lines) {
    std::string shown = line.substr(0, 80) + (line.size() > 80 ? "..." : "");
    std::string entry;
    try {
      entry = intervention_entry(sc, line);
    } catch (const ScenarioError& e) {
      throw ScenarioError(sc.file + ": " + e.what());
    }
    Loader(sc.file).add_fault(sc, entry, "intervention \"" + shown + "\"");
    sc.interventions.push_back(line);
  }
}

Scenario load_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ScenarioError(path + ": cannot read the file");
  return load_scenario_text(ss.str(), path);
}

}  // namespace redlab::scenario
