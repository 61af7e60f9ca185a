// Branch files (see branch.h): written with nlohmann's ordered JSON, read with the scenario
// loader's located parser so every mistake names its line and column.
#include "app/branch.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/files.h"
#include "sim/scenario/intervention.h"
#include "sim/scenario/json.h"

namespace redlab::app {

namespace fs = std::filesystem;
using scenario::JsonValue;

namespace {

// How far into a file its "format" is looked for (a branch written by redlab has it first).
constexpr size_t kSniffBytes = 4096;
constexpr size_t kScriptsMax = 100;  // replaced scripts in one branch
constexpr size_t kNameBytesMax = 200;

struct Bad {
  scenario::Pos pos;
  std::string what;
};

std::string quoted(const std::string& key) {
  return "\"" + key + "\"";
}

const std::string& string_of(const JsonValue& v, const std::string& what) {
  if (!v.is_string())
    throw Bad{v.pos(), what + ": expected a string, got " + JsonValue::type_name(v.type())};
  return v.as_string();
}

const JsonValue& object_of(const JsonValue& v, const std::string& what) {
  if (!v.is_object())
    throw Bad{v.pos(), what + ": expected an object, got " + JsonValue::type_name(v.type())};
  return v;
}

void check_name(const JsonValue::Member& m, const std::string& what) {
  if (m.key.empty() || m.key.size() > kNameBytesMax)
    throw Bad{m.key_pos,
              what + ": a name of 1 to " + std::to_string(kNameBytesMax) + " characters expected"};
}

Branch read(const JsonValue& root, const std::string& path) {
  if (!root.is_object())
    throw Bad{root.pos(), std::string("a branch file is a JSON object, got ") +
                              JsonValue::type_name(root.type())};
  Branch b;
  const JsonValue* format = root.find("format");
  if (!format || !format->is_string() || format->as_string() != kBranchFormat)
    throw Bad{format ? format->pos() : root.pos(),
              std::string("\"format\": expected \"") + kBranchFormat + "\" (not a branch file)"};
  const JsonValue* version = root.find("version");
  if (!version) throw Bad{root.pos(), "missing \"version\" (1)"};
  if (!version->is_int() || version->as_int() != kBranchVersion)
    throw Bad{version->pos(),
              "\"version\": expected 1 (this redlab reads branch files of "
              "version 1)"};
  bool has_scenario = false;
  for (const JsonValue::Member& m : root.members()) {
    const JsonValue& v = m.value;
    const std::string what = quoted(m.key);
    if (m.key == "format" || m.key == "version") {
      continue;
    } else if (m.key == "scenario") {
      b.scenario = string_of(v, what);
      if (b.scenario.empty()) throw Bad{v.pos(), what + ": an id or a path expected"};
      has_scenario = true;
    } else if (m.key == "seed") {
      if (!v.is_int() || v.as_int() < 0)
        throw Bad{v.pos(), what + ": expected an integer, 0 or more"};
      b.seed = uint64_t(v.as_int());
    } else if (m.key == "lang") {
      b.lang = string_of(v, what);
      if (b.lang != "en" && b.lang != "ru" && b.lang != "cs")
        throw Bad{v.pos(), what + ": expected \"en\", \"ru\" or \"cs\""};
    } else if (m.key == "variant") {
      for (const JsonValue::Member& e : object_of(v, what).members()) {
        check_name(e, what);
        b.variant[e.key] = string_of(e.value, what + "." + e.key);
      }
    } else if (m.key == "params") {
      for (const JsonValue::Member& e : object_of(v, what).members()) {
        check_name(e, what);
        if (!e.value.is_int())
          throw Bad{e.value.pos(), what + "." + e.key + ": expected an integer"};
        b.params[e.key] = e.value.as_int();
      }
    } else if (m.key == "interventions") {
      if (!v.is_array())
        throw Bad{v.pos(), what + ": expected an array of lines (\"pause A at 3000 for 14000\")"};
      if (v.items().size() > scenario::kInterventionsMax)
        throw Bad{v.pos(), what + ": at most " + std::to_string(scenario::kInterventionsMax)};
      for (size_t i = 0; i < v.items().size(); i++)
        b.interventions.push_back(string_of(v.items()[i], what + "[" + std::to_string(i) + "]"));
    } else if (m.key == "scripts") {
      if (object_of(v, what).members().size() > kScriptsMax)
        throw Bad{v.pos(), what + ": at most " + std::to_string(kScriptsMax)};
      for (const JsonValue::Member& e : v.members()) {
        check_name(e, what);
        b.scripts[e.key] = string_of(e.value, what + "." + e.key);
      }
    } else {
      throw Bad{m.key_pos, "unknown key " + what +
                               " (expected format, version, scenario, seed, lang, variant, "
                               "params, interventions, scripts)"};
    }
  }
  if (!has_scenario) throw Bad{root.pos(), "missing \"scenario\" (an id or a scenario file)"};
  // A path in the file is read from where the file is, wherever redlab runs.
  const bool is_path = b.scenario.find('/') != std::string::npos ||
                       (b.scenario.size() > 5 && b.scenario.ends_with(".json"));
  if (is_path && fs::path(b.scenario).is_relative())
    b.scenario = (fs::path(path).parent_path() / b.scenario).lexically_normal().string();
  return b;
}

}  // namespace

std::string branch_to_json(const Branch& b) {
  nlohmann::ordered_json j;
  j["format"] = kBranchFormat;
  j["version"] = kBranchVersion;
  j["scenario"] = b.scenario;
  j["seed"] = b.seed;
  j["lang"] = b.lang;
  j["variant"] = nlohmann::ordered_json::object();
  for (auto& [k, v] : b.variant) j["variant"][k] = v;
  j["params"] = nlohmann::ordered_json::object();
  for (auto& [k, v] : b.params) j["params"][k] = v;
  j["interventions"] = b.interventions;
  j["scripts"] = nlohmann::ordered_json::object();
  for (auto& [k, v] : b.scripts) j["scripts"][k] = v;
  return j.dump(2) + "\n";
}

bool looks_like_branch(const std::string& text) {
  return text.substr(0, kSniffBytes).find(std::string("\"") + kBranchFormat + "\"") !=
         std::string::npos;
}

std::optional<Branch> branch_from_json(const std::string& text, const std::string& path,
                                       std::string* error) {
  auto located = [&](scenario::Pos pos, const std::string& what) {
    if (error)
      *error =
          path + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) + ": " + what;
  };
  scenario::JsonError parse_error;
  std::optional<JsonValue> root = scenario::parse_json(text, &parse_error);
  if (!root) {
    located(parse_error.pos, parse_error.message);
    return std::nullopt;
  }
  try {
    return read(*root, path);
  } catch (const Bad& bad) {
    located(bad.pos, bad.what);
    return std::nullopt;
  }
}

std::optional<Branch> load_branch(const std::string& path, std::string* error) {
  std::string text;
  if (auto read_error = read_input(path, InputKind::scenario, &text)) {
    if (error) *error = *read_error;
    return std::nullopt;
  }
  return branch_from_json(text, path, error);
}

}  // namespace redlab::app
