#include "app/scenario_cli.h"

#include "app/backend.h"
#include "app/branch.h"
#include "app/files.h"
#include "app/grade.h"
#include "app/lab.h"
#include "app/report.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "sim/scenario/checks.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/export.h"
#include "sim/scenario/intervention.h"
#include "sim/scenario/scenario.h"

namespace redlab::app {

namespace fs = std::filesystem;
using namespace redlab::scenario;
using ojson = nlohmann::ordered_json;

namespace {

// Bad input: one line on stderr, exit status 2.
struct UsageError {
  std::string message;
};

struct Common {
  std::string scenario;
  RunOptions run;
  BackendChoice backend;
  std::string trace_file;
  std::string chrome_file;
  bool json = false;
  int64_t seeds = 0;
  std::map<std::string, std::string> script_files;
  std::vector<std::string> faults;  // --fault: interventions, added to the scenario at load
  // A branch file given as the SCENARIO (app/branch.h): its path; its inputs are in the fields
  // above, under what the command line gave.
  std::string branch_path;
  bool seed_given = false, lang_given = false;
  // sweep
  std::string param;
  std::optional<int64_t> from, to, steps;
};

int64_t parse_number(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  auto v = parse_int(text);
  if (!v || *v < min || *v > max)
    throw UsageError{flag + " " + text + ": expected an integer from " + std::to_string(min) +
                     " to " + std::to_string(max)};
  return *v;
}

std::pair<std::string, std::string> split_pair(const std::string& flag, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{flag + " " + text + ": expected NAME=VALUE"};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// Splits "--flag=value" into the flag and its value (every flag that takes a value also takes
// it this way); other arguments come back whole, with no value.
std::pair<std::string, std::optional<std::string>> split_inline(const std::string& arg) {
  if (arg.rfind("--", 0) != 0) return {arg, std::nullopt};
  auto eq = arg.find('=');
  if (eq == std::string::npos) return {arg, std::nullopt};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// A branch file given where a SCENARIO goes: its inputs become the run's, and what the
// command line gives too wins (a --seed, a --set, a --variant, a --script, --lang); its
// interventions come first, any --fault after them. A regular file only: it is read twice.
void apply_branch(const std::string& cmd, Common& c) {
  std::error_code ec;
  if (!c.scenario.ends_with(".json") || !fs::is_regular_file(c.scenario, ec)) return;
  std::string text;
  if (app::read_input(c.scenario, InputKind::scenario, &text) || !looks_like_branch(text)) return;
  // An exercise is graded on its own seeds and settings, with no interventions.
  if (cmd == "check")
    throw UsageError{c.scenario + ": a branch file; 'check' grades a scenario's exercise"};
  std::string error;
  std::optional<Branch> b = branch_from_json(text, c.scenario, &error);
  if (!b) throw UsageError{error};
  c.branch_path = c.scenario;
  c.scenario = b->scenario;
  if (!c.seed_given) c.run.seed = b->seed;
  if (!c.lang_given) c.run.lang = b->lang;
  for (auto& [k, v] : b->variant) c.run.variant.emplace(k, v);
  for (auto& [k, v] : b->params) c.run.set.emplace(k, v);
  for (auto& [k, v] : b->scripts) c.run.scripts.emplace(k, v);
  std::vector<std::string> faults = b->interventions;
  faults.insert(faults.end(), c.faults.begin(), c.faults.end());
  if (faults.size() > scenario::kInterventionsMax)
    throw UsageError{c.branch_path + ": at most " + std::to_string(scenario::kInterventionsMax) +
                     " interventions, with the --fault ones"};
  c.faults = std::move(faults);
}

// Flags shared by run, explore and check; `allowed` says which this subcommand takes.
Common parse_common(const std::string& cmd, const std::vector<std::string>& args,
                    const std::string& allowed) {
  Common c;
  auto takes = [&](const std::string& flag) {
    return allowed.find(flag + " ") != std::string::npos;
  };
  for (size_t i = 0; i < args.size(); i++) {
    const auto [a, inline_value] = split_inline(args[i]);
    auto value = [&, &a = a, &inline_value = inline_value]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw UsageError{a + " needs a value"};
      return args[++i];
    };
    // A flag that is only a switch: "--json=1" is a mistake, not a value.
    auto no_value = [&, &a = a, &inline_value = inline_value] {
      if (inline_value) throw UsageError{a + " takes no value (got " + args[i] + ")"};
    };
    if (a.rfind("--", 0) == 0 && !takes(a))
      throw UsageError{"unknown option " + a + " for '" + cmd + "' (see redlab " + cmd +
                       " --help)"};
    if (a == "--seed") {
      c.run.seed = uint64_t(parse_number(a, value(), 0, INT64_MAX));
      c.seed_given = true;
    } else if (a == "--set") {
      auto [k, v] = split_pair(a, value());
      auto n = parse_int(v);
      if (!n) throw UsageError{"--set " + k + "=" + v + ": expected an integer value"};
      c.run.set[k] = *n;
    } else if (a == "--variant") {
      auto [k, v] = split_pair(a, value());
      c.run.variant[k] = v;
    } else if (a == "--backend") {
      c.backend.backend = value();
    } else if (a == "--time-scale") {
      std::string v = value();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || !end || *end != '\0' || !(x > 0) || x > 1000)
        throw UsageError{"--time-scale " + v +
                         ": expected a number above 0 (0.1 = ten times faster)"};
      c.backend.time_scale = x;
    } else if (a == "--allow-server-faults") {
      no_value();
      c.backend.allow_server_faults = true;
    } else if (a == "--trace") {
      c.trace_file = value();
      if (c.trace_file.empty()) throw UsageError{"--trace needs a file name (or - for stdout)"};
    } else if (a == "--chrome-trace") {
      c.chrome_file = value();
      if (c.chrome_file.empty())
        throw UsageError{"--chrome-trace needs a file name (or - for stdout)"};
    } else if (a == "--json") {
      no_value();
      c.json = true;
    } else if (a == "--lang") {
      c.run.lang = value();
      c.lang_given = true;
      if (c.run.lang != "en" && c.run.lang != "ru" && c.run.lang != "cs")
        throw UsageError{"--lang " + c.run.lang + ": expected en, ru or cs"};
    } else if (a == "--seeds") {
      c.seeds = parse_number(a, value(), 1, 10000000);
    } else if (a == "--script") {
      auto [k, v] = split_pair(a, value());
      c.script_files[k] = v;
    } else if (a == "--fault") {
      // An intervention (sim/scenario/intervention.h), read against the scenario at load.
      c.faults.push_back(value());
      if (c.faults.size() > scenario::kInterventionsMax)
        throw UsageError{"--fault: at most " + std::to_string(scenario::kInterventionsMax) +
                         " interventions"};
    } else if (a == "--param") {
      c.param = value();
      if (c.param.empty()) throw UsageError{"--param needs a parameter name"};
    } else if (a == "--from") {
      c.from = parse_number(a, value(), INT64_MIN, INT64_MAX);
    } else if (a == "--to") {
      c.to = parse_number(a, value(), INT64_MIN, INT64_MAX);
    } else if (a == "--steps") {
      c.steps = parse_number(a, value(), 1, kSweepStepsMax);
    } else if (a == "--lua-instructions-max") {
      // RunOptions::lua_instructions_max: the fake's scripts, all of one run together.
      c.run.lua_instructions_max = uint64_t(parse_number(a, value(), 1000, INT64_MAX));
    } else if (a.rfind("-", 0) == 0) {
      throw UsageError{"unknown option " + a + " for '" + cmd + "' (see redlab " + cmd +
                       " --help)"};
    } else if (c.scenario.empty()) {
      c.scenario = a;
    } else {
      throw UsageError{"unexpected argument '" + a + "' (one scenario at a time)"};
    }
  }
  if (c.scenario.empty())
    throw UsageError{"'" + cmd + "' needs a SCENARIO (an id from 'redlab list', or a file)"};
  apply_branch(cmd, c);
  try {
    validate_backend(c.backend);
  } catch (const BackendError& e) {
    throw UsageError{e.what()};
  }
  if (c.backend.time_scale != 1.0 && c.backend.backend == "fake")
    throw UsageError{
        "--time-scale: only for real backends (the fake runs on virtual time: as fast as it "
        "can, whatever the durations)"};
  c.run.time_scale = c.backend.time_scale;
  c.run.allow_server_faults = c.backend.allow_server_faults;
  return c;
}

// Output files (--trace, --chrome-trace): written through the path given, a regular file
// whole or not at all, "-" to stdout (app/files.h).
void write_output(const std::string& path, const std::string& text) {
  if (auto error = app::write_output(path, text)) throw UsageError{*error};
}

// A --script NAME=FILE.lua, within the limit for a Lua script.
std::string read_script(const std::string& name, const std::string& path) {
  std::string text;
  if (auto error = app::read_input(path, InputKind::script, &text))
    throw UsageError{"--script " + name + ": " + *error};
  return text;
}

// An output that is an input (the scenario, a --script file), or the same file as another
// output, would destroy what the user wrote or one of the two outputs: refused before the
// run. Paths that only stream (stdout, /dev/null) may be shared.
void refuse_overwriting_inputs(const Common& c, const std::string& scenario_path) {
  struct Named {
    std::string what;  // "the scenario file", "--trace"
    std::string path;
  };
  std::vector<Named> inputs{{"the scenario file", scenario_path}};
  if (!c.branch_path.empty()) inputs.push_back({"the branch file", c.branch_path});
  for (auto& [name, file] : c.script_files)
    inputs.push_back({"the --script " + name + " file", file});
  std::vector<Named> outputs;
  if (!c.trace_file.empty()) outputs.push_back({"--trace", c.trace_file});
  if (!c.chrome_file.empty()) outputs.push_back({"--chrome-trace", c.chrome_file});
  for (size_t i = 0; i < outputs.size(); i++) {
    const Named& out = outputs[i];
    if (app::is_stream_path(out.path)) continue;
    for (const Named& in : inputs)
      if (app::same_file(out.path, in.path))
        throw UsageError{out.what + " " + out.path + ": that is " + in.what + " (" + in.path +
                         "); an output must not overwrite an input"};
    for (size_t j = 0; j < i; j++)
      if (app::same_file(out.path, outputs[j].path))
        throw UsageError{out.what + " " + out.path + ": the " + outputs[j].what +
                         " file too; two outputs cannot share one file"};
  }
}

std::string variant_line(const RunResult& r) {
  std::string out;
  for (auto& [k, v] : r.variant) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

// One argument as a POSIX shell reads it: bare when it is safe, else in single quotes.
std::string shell_word(const std::string& w) {
  bool safe = !w.empty();
  for (char ch : w)
    safe = safe && (std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("-_=./:,+@%", ch));
  if (safe) return w;
  std::string out = "'";
  for (char ch : w) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// The command that reruns one run of a subcommand exactly: its seed, variants, parameters,
// replaced scripts and interventions (what explore, check and sweep print as "replay").
std::string replay_command(const Common& c, const std::string& id, const RunOptions& o) {
  std::string cmd = "redlab run " + id + " --seed " + std::to_string(o.seed);
  for (auto& [k, v] : o.variant) cmd += " --variant " + shell_word(k + "=" + v);
  for (auto& [k, v] : o.set) cmd += " --set " + shell_word(k + "=" + std::to_string(v));
  for (auto& [k, f] : c.script_files) cmd += " --script " + shell_word(k + "=" + f);
  for (const std::string& f : c.faults) cmd += " --fault " + shell_word(f);
  return cmd;
}

// The scenario of a subcommand, read through app/files (its size limit, a FIFO's deadline),
// after refusing outputs that would overwrite an input.
Scenario load(const Common& c) {
  std::string path;
  try {
    path = resolve_scenario(c.scenario);
  } catch (const UsageError& e) {
    if (c.branch_path.empty()) throw;
    throw UsageError{c.branch_path + ": \"scenario\": " + e.message};
  }
  refuse_overwriting_inputs(c, path);
  std::string text;
  if (auto error = app::read_input(path, InputKind::scenario, &text)) throw UsageError{*error};
  Scenario sc = load_scenario_text(text, path);
  // Once, before any run: a bad one is reported up front, and explore's and sweep's runs share
  // the scenario instead of reading the lines again each.
  try {
    add_interventions(sc, c.faults);
  } catch (const ScenarioError& e) {
    // An intervention of a branch file: the file is named too.
    if (c.branch_path.empty()) throw;
    throw UsageError{c.branch_path + ": " + e.what()};
  }
  return sc;
}

template <typename F>
int guarded(F f) {
  try {
    return f();
  } catch (const UsageError& e) {
    std::cerr << "redlab: " << e.message << "\n";
    return 2;
  } catch (const ScenarioError& e) {
    std::cerr << "redlab: " << e.what() << "\n";
    return 2;
  } catch (const BackendError& e) {
    std::cerr << "redlab: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

std::string scenarios_dir() {
  if (const char* env = std::getenv("REDLAB_SCENARIOS"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (fs::is_directory(dir / "scenarios", ec) && fs::exists(dir / "CMakeLists.txt", ec))
        return (dir / "scenarios").string();
    }
  }
#ifdef REDLAB_SOURCE_DIR
  if (fs::is_directory(fs::path(REDLAB_SOURCE_DIR) / "scenarios", ec))
    return (fs::path(REDLAB_SOURCE_DIR) / "scenarios").string();
#endif
  return "scenarios";
}

namespace {

// LINE:COLUMN of the value of the top-level key `key` in a JSON text ("1:1" if not found):
// where a duplicate id is pointed at. A scan of strings and nesting only; the text has been
// loaded as a scenario already, so it is well-formed JSON.
std::string top_level_value_position(std::string_view text, std::string_view key) {
  int depth = 0;
  size_t line = 1, column = 1;
  size_t i = 0;
  auto advance = [&](size_t to) {
    for (; i < to && i < text.size(); i++) {
      if (text[i] == '\n') {
        line++;
        column = 1;
      } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
        column++;  // columns count characters, as the loader's do
      }
    }
  };
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '{' || ch == '[') depth++;
    if (ch == '}' || ch == ']') depth--;
    if (ch != '"') {
      advance(i + 1);
      continue;
    }
    size_t start = i + 1, end = start;
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    std::string_view name = text.substr(start, std::min(end, text.size()) - start);
    advance(end + 1);
    if (depth != 1 || name != key) continue;
    size_t colon = i;
    while (colon < text.size() && std::isspace(static_cast<unsigned char>(text[colon]))) colon++;
    if (colon >= text.size() || text[colon] != ':') continue;  // a value, not the key
    size_t value = colon + 1;
    while (value < text.size() && std::isspace(static_cast<unsigned char>(text[value]))) value++;
    advance(value);
    return std::to_string(line) + ":" + std::to_string(column);
  }
  return "1:1";
}

// Levenshtein distance, for "did you mean" (names are short: bounded by the caller).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

constexpr size_t kSuggestNameBytesMax = 200;  // longer names get no suggestion
constexpr size_t kSuggestionsMax = 3;

// "; did you mean ttl-double-holder?" for the closest scenario ids, or "".
std::string did_you_mean(const std::string& name) {
  if (name.empty() || name.size() > kSuggestNameBytesMax) return "";
  std::vector<std::pair<size_t, std::string>> ranked;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(scenarios_dir(), ec)) {
    if (entry.path().extension() != ".json") continue;
    std::string id = entry.path().stem().string();
    if (id.size() > kSuggestNameBytesMax) continue;
    size_t d = edit_distance(name, id);
    // Close enough to be a typo (a third of the name, at least 2 edits), or a part of the id
    // ("pool" for pool-exhaustion), ranked after the typos.
    if (d <= std::max<size_t>(2, name.size() / 3))
      ranked.push_back({d, id});
    else if (name.size() >= 3 && id.find(name) != std::string::npos)
      ranked.push_back({kSuggestNameBytesMax + d, id});
  }
  if (ranked.empty()) return "";
  std::sort(ranked.begin(), ranked.end());
  std::string out = "; did you mean ";
  for (size_t i = 0; i < ranked.size() && i < kSuggestionsMax; i++) {
    if (i > 0) out += i + 1 == std::min(ranked.size(), kSuggestionsMax) ? " or " : ", ";
    out += ranked[i].second;
  }
  return out + "?";
}

}  // namespace

std::vector<LibraryFile> scenario_library(std::string* dir_error) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(scenarios_dir(), ec))
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  if (ec && dir_error) *dir_error = "cannot read " + scenarios_dir() + ": " + ec.message();
  std::sort(paths.begin(), paths.end());
  std::vector<LibraryFile> out;
  std::map<std::string, std::string> first_path_of_id;
  for (auto& p : paths) {
    LibraryFile f{p.string(), std::nullopt, ""};
    std::string text;
    if (auto error = app::read_input(f.path, InputKind::scenario, &text)) {
      f.error = *error;
      out.push_back(std::move(f));
      continue;
    }
    try {
      Scenario sc = load_scenario_text(text, f.path);
      // One id, one scenario: the first file (by name) is listed, a later one is an error.
      auto [it, fresh] = first_path_of_id.emplace(sc.id, f.path);
      if (fresh)
        f.scenario = std::move(sc);
      else
        f.error = f.path + ":" + top_level_value_position(text, "id") + ": id: \"" + sc.id +
                  "\" is also the id of " + it->second + " (ids must be unique; " + it->second +
                  " is listed)";
    } catch (const ScenarioError& e) {
      f.error = e.what();
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string resolve_scenario(const std::string& name) {
  std::error_code ec;
  if (name.find('/') != std::string::npos ||
      (name.size() > 5 && name.substr(name.size() - 5) == ".json")) {
    if (!fs::exists(name, ec)) throw UsageError{"scenario file " + name + ": no such file"};
    return name;
  }
  fs::path p = fs::path(scenarios_dir()) / (name + ".json");
  if (!fs::exists(p, ec)) {
    // A file of that name here, given without a directory: said, since it reads as an id.
    std::string here = fs::exists(name, ec) ? " (for the file " + name + ", write ./" + name + ")"
                                            : " (see redlab list)";
    throw UsageError{"no scenario \"" + name + "\" in " + scenarios_dir() + did_you_mean(name) +
                     here};
  }
  return p.string();
}

int list_main(const std::vector<std::string>& args) {
  return guarded([&] {
    bool json = false;
    std::string lang = "en";
    for (size_t i = 0; i < args.size(); i++) {
      auto [a, inline_value] = split_inline(args[i]);
      if (a == "--json" && !inline_value) {
        json = true;
      } else if (a == "--lang") {
        if (!inline_value && i + 1 >= args.size()) throw UsageError{"--lang needs a value"};
        lang = inline_value ? *inline_value : args[++i];
        if (lang != "en" && lang != "ru" && lang != "cs")
          throw UsageError{"--lang " + lang + ": expected en, ru or cs"};
      } else {
        throw UsageError{"unknown argument '" + args[i] + "' for 'list' (see redlab list --help)"};
      }
    }
    std::string dir_error;
    std::vector<LibraryFile> files = scenario_library(&dir_error);
    if (!dir_error.empty()) throw UsageError{dir_error};
    ojson out = ojson::array();
    int bad = 0;
    for (const LibraryFile& f : files) {
      if (!f.scenario) {
        std::cerr << "redlab: " << f.error << "\n";
        bad++;
        continue;
      }
      {
        const Scenario& sc = *f.scenario;
        if (json) {
          ojson j;
          j["id"] = sc.id;
          j["title"] = sc.title.get(lang);
          j["topic"] = sc.topic;
          ojson vars = ojson::object();
          for (auto& v : sc.variants) vars[v.name] = v.values;
          j["variants"] = vars;
          out.push_back(j);
        } else {
          std::string id = sc.id;
          std::cout << id << std::string(id.size() < 24 ? 24 - id.size() : 1, ' ')
                    << sc.title.get(lang) << "\n";
        }
      }
    }
    if (json) std::cout << out.dump(2) << "\n";
    return bad ? 2 : 0;
  });
}

int run_main(const std::vector<std::string>& args) {
  return guarded([&] {
    Common c = parse_common("run", args,
                            "--seed --set --variant --backend --time-scale --allow-server-faults "
                            "--trace --chrome-trace "
                            "--json --lang --script --fault --lua-instructions-max ");
    Scenario sc = load(c);
    for (auto& [name, file] : c.script_files) {
      c.run.scripts[name] = read_script(name, file);
      c.run.script_paths[name] = file;
    }
    RunResult r;
    try {
      r = run_on_backend(sc, c.run, c.backend);
    } catch (const ScenarioError& e) {
      // A choice of a branch file the scenario refuses (a variant's value, a parameter).
      if (c.branch_path.empty()) throw;
      throw UsageError{c.branch_path + ": " + e.what()};
    }
    if (!c.trace_file.empty()) write_output(c.trace_file, trace_to_json(r.trace));
    if (!c.chrome_file.empty()) write_output(c.chrome_file, chrome_trace_json(r.trace));
    // The report comes from the trace alone: `redlab show` of the trace prints the same.
    if (c.json)
      std::cout << report_json(r.trace).dump(2) << "\n";
    else
      std::cout << report_text(r.trace);
    // A run stopped by one of its bounds: on the record too, but not a finished run.
    if (!r.bound.empty()) {
      std::cout.flush();
      std::cerr << "redlab: " << r.bound << "\n";
      return 2;
    }
    // A server that died mid-run: the run is on the record (trace, verdicts), but it is not
    // the lesson's run, and the backend was not usable to the end.
    if (!r.backend_trouble.empty()) {
      std::cout.flush();
      std::cerr << "redlab: " << r.backend_trouble << "\n";
      return 2;
    }
    return r.expectation_met ? 0 : 1;
  });
}

int explore_main(const std::vector<std::string>& args) {
  return guarded([&] {
    Common c =
        parse_common("explore", args,
                     "--seeds --set --variant --backend --time-scale --allow-server-faults --json "
                     "--lang --script --fault --lua-instructions-max ");
    if (c.seeds == 0) c.seeds = 1000;
    Scenario sc = load(c);
    for (auto& [name, file] : c.script_files) {
      c.run.scripts[name] = read_script(name, file);
      c.run.script_paths[name] = file;
    }
    // Validate the inputs once, on seed 1, so a bad flag is one clear error.
    RunResult first = run_on_backend(
        sc,
        [&] {
          RunOptions o = c.run;
          o.seed = 1;
          return o;
        }(),
        c.backend);
    if (!first.backend_trouble.empty()) throw BackendError(first.backend_trouble);
    if (!first.bound.empty()) throw UsageError{"seed 1: " + first.bound};
    struct Tally {
      int64_t violated = 0;
      int64_t first_seed = -1;
      std::string first_summary;
    };
    std::vector<Tally> tally(first.checks.size());
    int64_t unmet = 0, first_unmet = -1;
    struct Outcome {
      int64_t seed = 0;
      std::vector<bool> ok;
      std::vector<std::string> summaries;  // of the violated checks
      bool met = true;
    };
    auto outcome_of = [](int64_t seed, const RunResult& r) {
      Outcome o{seed, {}, {}, r.expectation_met};
      for (auto& ch : r.checks) {
        o.ok.push_back(ch.ok);
        o.summaries.push_back(ch.ok ? std::string() : ch.summary);
      }
      return o;
    };
    auto t0 = std::chrono::steady_clock::now();
    // Seed 1 ran above; the others are independent runs, split over the cores and merged in
    // seed order. A run-time error in any seed is reported once, for the smallest such seed.
    // A real backend runs one seed at a time (its servers are shared by the runs).
    unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    if (c.backend.backend != "fake") threads = 1;
    std::vector<std::vector<Outcome>> outs(threads);
    std::vector<std::optional<std::pair<int64_t, std::string>>> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++) {
      pool.emplace_back([&, t] {
        for (int64_t seed = 2 + t; seed <= c.seeds; seed += threads) {
          RunOptions o = c.run;
          o.seed = uint64_t(seed);
          try {
            RunResult r = run_on_backend(sc, o, c.backend);
            if (!r.backend_trouble.empty()) throw BackendError(r.backend_trouble);
            if (!r.bound.empty()) throw ScenarioError(r.bound);
            outs[t].push_back(outcome_of(seed, r));
          } catch (const ScenarioError& e) {
            errors[t] = {seed, e.what()};
            return;
          } catch (const BackendError& e) {
            errors[t] = {seed, e.what()};
            return;
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    std::optional<std::pair<int64_t, std::string>> error;
    for (auto& e : errors)
      if (e && (!error || e->first < error->first)) error = e;
    if (error) throw UsageError{"seed " + std::to_string(error->first) + ": " + error->second};
    std::vector<Outcome> all{outcome_of(1, first)};
    for (auto& o : outs) all.insert(all.end(), o.begin(), o.end());
    std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.seed < b.seed; });
    for (auto& [seed, ok, summaries, met] : all) {
      for (size_t i = 0; i < ok.size() && i < tally.size(); i++)
        if (!ok[i]) {
          tally[i].violated++;
          if (tally[i].first_seed < 0) {
            tally[i].first_seed = seed;
            tally[i].first_summary = summaries[i];
          }
        }
      if (!met) {
        unmet++;
        if (first_unmet < 0) first_unmet = seed;
      }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto replay = [&](int64_t seed) {
      RunOptions o = c.run;
      o.seed = uint64_t(seed);
      return replay_command(c, sc.id, o);
    };
    if (c.json) {
      ojson j;
      j["scenario"] = sc.id;
      j["seeds"] = c.seeds;
      ojson variant = ojson::object();
      for (auto& [k, v] : first.variant) variant[k] = v;
      j["variant"] = variant;
      if (!c.faults.empty()) j["interventions"] = c.faults;
      ojson checks = ojson::array();
      for (size_t i = 0; i < tally.size(); i++) {
        ojson cj;
        cj["name"] = first.checks[i].name;
        cj["violated"] = tally[i].violated;
        if (tally[i].first_seed >= 0) {
          cj["first_seed"] = tally[i].first_seed;
          cj["replay"] = replay(tally[i].first_seed);
        }
        checks.push_back(cj);
      }
      j["checks"] = checks;
      j["expectation_unmet"] = unmet;
      j["runs_per_second"] = int64_t(double(c.seeds) / std::max(secs, 1e-9));
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "explore " << sc.id << " over seeds 1.." << c.seeds;
      std::string v = variant_line(first);
      if (!v.empty()) std::cout << " (" << v << ")";
      std::cout << "\n";
      for (size_t i = 0; i < tally.size(); i++) {
        const std::string& name = first.checks[i].name;
        std::cout << "  " << name << std::string(name.size() < 20 ? 20 - name.size() : 1, ' ');
        if (tally[i].violated == 0) {
          std::cout << "held in every seed\n";
        } else {
          std::cout << "violated in " << tally[i].violated << " of " << c.seeds
                    << " seeds; smallest: seed " << tally[i].first_seed << "\n      "
                    << tally[i].first_summary << "\n      replay: " << replay(tally[i].first_seed)
                    << "\n";
        }
      }
      if (unmet)
        std::cout << "  expectation not met in " << unmet << " seeds (first: " << first_unmet
                  << ")\n";
      char rate[64];
      std::snprintf(rate, sizeof rate, "%.2f s (%.0f runs/s)", secs,
                    double(c.seeds) / std::max(secs, 1e-9));
      std::cout << c.seeds << " runs in " << rate << " on " << threads << " threads\n";
    }
    return 0;
  });
}

// The grader (`redlab check`): runs the exercise over its seeds and requires each check the
// exercise names to come out as it says — judged from what the server and the resources did
// (checks.h), never from what the student's script replied. It says what it checks, and on a
// failure what went wrong in the run, at which seed, and how to replay it.
int check_main(const std::vector<std::string>& args) {
  return guarded([&] {
    Common c = parse_common("check", args,
                            "--script --variant --set --seeds --backend --time-scale "
                            "--allow-server-faults --json --lang --lua-instructions-max ");
    Scenario sc = load(c);
    if (!sc.exercise) throw UsageError{sc.id + " has no exercise to check"};
    const Exercise& ex = *sc.exercise;
    bool settings = !ex.choose.empty();
    auto chosen = [&](const std::string& name) {
      return std::find(ex.choose.begin(), ex.choose.end(), name) != ex.choose.end();
    };
    // The student answers with a script, or with the settings the exercise leaves open;
    // nothing else may change, or the grade would be about another run.
    for (auto& [k, v] : c.run.variant)
      if (!chosen(k))
        throw UsageError{"--variant " + k + "=" + v + ": " +
                         (settings ? "not one of the settings this exercise lets you choose (" +
                                         comma_list(ex.choose) + ")"
                                   : "this exercise fixes its settings; answer with --script " +
                                         ex.script + "=FILE.lua")};
    for (auto& [k, v] : c.run.set)
      if (!chosen(k))
        throw UsageError{"--set " + k + "=" + std::to_string(v) + ": " +
                         (settings ? "not one of the settings this exercise lets you choose (" +
                                         comma_list(ex.choose) + ")"
                                   : "this exercise fixes its settings; answer with --script " +
                                         ex.script + "=FILE.lua")};
    RunOptions base = c.run;
    for (auto& [name, file] : c.script_files) {
      if (!sc.script(name))
        throw UsageError{"--script " + name + ": " + sc.id + " has no script \"" + name + "\""};
      if (settings || name != ex.script)
        throw UsageError{"--script " + name + ": " +
                         (settings ? "this exercise is answered with settings (" +
                                         comma_list(ex.choose) + "), not a script"
                                   : "this exercise's script is " + ex.script)};
      base.scripts[name] = read_script(name, file);
      base.script_paths[name] = file;
    }
    int64_t seeds = c.seeds ? c.seeds : ex.seeds;
    auto replay = [&](const RunOptions& o) { return replay_command(c, sc.id, o); };
    // What the grader checks, from the checks' own registry.
    std::vector<std::string> graded;
    std::string graded_text;
    for (auto& [name, want] : ex.expect) {
      const CheckDef* def = nullptr;
      for (const CheckDef& d : sc.checks)
        if (d.name == name) def = &d;
      const CheckKind* spec = def ? find_check(def->check) : nullptr;
      graded.push_back(name);
      graded_text += "  " + name + (want ? " must hold" : " must be violated") +
                     (spec ? std::string(": judged from ") + spec->judged_from : "") + "\n";
    }
    if (!c.json) {
      std::cout << "grading " << sc.id << " over seeds 1.." << seeds;
      if (settings) std::cout << " (your settings: " << comma_list(ex.choose) << ")";
      std::cout << "\n" << graded_text;
      if (!settings && c.script_files.empty())
        std::cout << "(no --script " << ex.script << "=FILE.lua given: grading the scenario's own "
                  << ex.script << " script)\n";
      std::cout.flush();
    }
    const bool progress = !c.json && isatty(2);
    // The grader (grade.h, shared with the GUI's exercise panel).
    GradeResult g = grade_exercise(sc, base, seeds, c.backend, [&](int64_t seed, int64_t all) {
      if (progress) std::cerr << "\rseed " << seed << "/" << all << std::flush;
    });
    if (progress) std::cerr << "\r\033[K";
    if (!g.pass) {
      // The first seed that fails, with every graded check that failed there, in plain words.
      if (c.json) {
        ojson j;
        j["scenario"] = sc.id;
        j["pass"] = false;
        j["seed"] = g.failed_seed;
        ojson failed = ojson::array();
        for (const GradeFailure& f : g.failed) {
          ojson o;
          if (!f.check.empty()) o["check"] = f.check;
          o["summary"] = f.text();
          failed.push_back(o);
        }
        j["failed"] = failed;
        j["replay"] = replay(g.failed_options);
        j["graded"] = graded;
        std::cout << j.dump(2) << "\n";
      } else {
        std::cout << "FAIL " << sc.id << ": seed " << g.failed_seed << ":\n";
        for (const GradeFailure& f : g.failed) std::cout << "  " << f.text() << "\n";
        std::cout << "  replay: " << replay(g.failed_options) << "\n";
      }
      return 1;
    }
    if (c.json) {
      ojson j;
      j["scenario"] = sc.id;
      j["pass"] = true;
      j["seeds"] = seeds;
      j["graded"] = graded;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "PASS " << sc.id << ": every graded check as required over seeds 1.." << seeds
                << "\n";
    }
    return 0;
  });
}

// `redlab sweep`: one parameter over a range, each check's outcome at every point (lab.h).
int sweep_main(const std::vector<std::string>& args) {
  return guarded([&] {
    Common c = parse_common("sweep", args,
                            "--param --from --to --steps --seeds --set --variant --script --json "
                            "--lang --fault --lua-instructions-max ");
    if (c.param.empty()) throw UsageError{"'sweep' needs --param NAME (the parameter to move)"};
    Scenario sc = load(c);
    const Param* p = sc.param(c.param);
    SweepRequest request;
    request.param = c.param;
    request.from = c.from.value_or(p ? p->min : 0);
    request.to = c.to.value_or(p ? p->max : 0);
    request.steps = c.steps.value_or(11);
    request.seeds = c.seeds ? c.seeds : 1;
    request.base = c.run;
    for (auto& [name, file] : c.script_files) {
      if (!sc.script(name))
        throw UsageError{"--script " + name + ": " + sc.id + " has no script \"" + name + "\""};
      request.base.scripts[name] = read_script(name, file);
      request.base.script_paths[name] = file;
    }
    try {
      validate_sweep(sc, request);
    } catch (const ScenarioError& e) {
      throw UsageError{e.what()};
    }
    // Bad --variant / --set values are the engine's to judge: one run says it clearly.
    {
      RunOptions o = request.base;
      o.set[request.param] = request.from;
      o.seed = 1;
      run_scenario(sc, o);
    }
    unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    const bool progress = !c.json && isatty(2);
    auto t0 = std::chrono::steady_clock::now();
    SweepResult result = run_sweep(sc, request, threads, [&](int64_t done, int64_t total) {
      if (progress && (done % 64 == 0 || done == total))
        std::cerr << "\r" << done << "/" << total << " runs" << std::flush;
    });
    if (progress) std::cerr << "\r\033[K";
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto replay = [&](int64_t value, int64_t seed) {
      RunOptions o = c.run;
      o.seed = uint64_t(seed);
      o.set[request.param] = value;  // the point's value, over a --set of the same name
      return replay_command(c, sc.id, o);
    };
    if (c.json) {
      ojson j;
      j["scenario"] = sc.id;
      j["param"] = request.param;
      j["from"] = request.from;
      j["to"] = request.to;
      j["steps"] = request.steps;
      j["seeds"] = request.seeds;
      ojson variant = ojson::object(), set = ojson::object();
      for (auto& [k, v] : c.run.variant) variant[k] = v;
      for (auto& [k, v] : c.run.set) set[k] = v;
      j["variant"] = variant;
      if (!c.faults.empty()) j["interventions"] = c.faults;
      j["set"] = set;
      j["expectation"] = result.expectation;
      ojson points = ojson::array();
      for (const SweepPoint& pt : result.points) {
        ojson pj;
        pj["value"] = pt.value;
        ojson checks = ojson::array();
        for (const SweepCheck& ch : pt.checks) {
          ojson cj;
          cj["name"] = ch.name;
          cj["violated"] = ch.violated;
          cj["not_judged"] = ch.not_judged;
          if (ch.first_seed >= 0) {
            cj["first_seed"] = ch.first_seed;
            cj["replay"] = replay(pt.value, ch.first_seed);
          }
          checks.push_back(cj);
        }
        pj["checks"] = checks;
        if (result.expectation) pj["expectation_unmet"] = pt.expectation_unmet;
        points.push_back(pj);
      }
      j["points"] = points;
      j["runs"] = result.runs;
      j["runs_per_second"] = int64_t(double(result.runs) / std::max(secs, 1e-9));
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    // A table: a row per value, a column per check; then where each check changes its mind.
    std::cout << "sweep " << sc.id << ": " << request.param << " from " << request.from << " to "
              << request.to << " in " << request.steps << " steps, seeds 1.." << request.seeds;
    std::string fixed;
    for (auto& [k, v] : c.run.variant) fixed += (fixed.empty() ? "" : " ") + k + "=" + v;
    for (auto& [k, v] : c.run.set)
      fixed += (fixed.empty() ? "" : " ") + k + "=" + std::to_string(v);
    if (!fixed.empty()) std::cout << " (" << fixed << ")";
    std::cout << "\n";
    auto cell = [&](const SweepCheck& ch) -> std::string {
      std::string of = "/" + std::to_string(request.seeds);
      if (ch.violated) return "violated " + std::to_string(ch.violated) + of;
      if (ch.not_judged == request.seeds) return "n/a";
      if (ch.not_judged) return "held, n/a " + std::to_string(ch.not_judged) + of;
      return "held";
    };
    std::vector<size_t> width;
    size_t value_width = request.param.size();
    for (const SweepPoint& pt : result.points)
      value_width = std::max(value_width, std::to_string(pt.value).size());
    const std::vector<SweepCheck>& names = result.points.front().checks;
    for (size_t i = 0; i < names.size(); i++) {
      size_t w = names[i].name.size();
      for (const SweepPoint& pt : result.points) w = std::max(w, cell(pt.checks[i]).size());
      width.push_back(w);
    }
    auto pad = [](const std::string& s, size_t w) {
      return s + std::string(w > s.size() ? w - s.size() : 0, ' ');
    };
    std::cout << "  " << std::string(value_width - request.param.size(), ' ') << request.param;
    for (size_t i = 0; i < names.size(); i++) std::cout << "  " << pad(names[i].name, width[i]);
    std::cout << (result.expectation ? "  expectation\n" : "\n");
    for (const SweepPoint& pt : result.points) {
      std::string v = std::to_string(pt.value);
      std::cout << "  " << std::string(value_width - v.size(), ' ') << v;
      for (size_t i = 0; i < pt.checks.size(); i++)
        std::cout << "  " << pad(cell(pt.checks[i]), width[i]);
      if (result.expectation)
        std::cout << "  "
                  << (pt.expectation_unmet ? "NOT met in " + std::to_string(pt.expectation_unmet) +
                                                 "/" + std::to_string(request.seeds)
                                           : std::string("met"));
      std::cout << "\n";
    }
    // Where each check flips between held (in every seed) and violated (in some).
    for (size_t i = 0; i < names.size(); i++) {
      std::string flips;
      for (size_t k = 1; k < result.points.size(); k++) {
        bool was = result.points[k - 1].checks[i].violated > 0;
        bool is = result.points[k].checks[i].violated > 0;
        if (was == is) continue;
        flips += std::string(flips.empty() ? "" : "; ") + (is ? "violated" : "held") + " from " +
                 std::to_string(result.points[k].value) + " (" + (was ? "violated" : "held") +
                 " at " + std::to_string(result.points[k - 1].value) + ")";
      }
      const SweepCheck* first = nullptr;
      int64_t first_value = 0;
      for (const SweepPoint& pt : result.points)
        if (!first && pt.checks[i].violated) {
          first = &pt.checks[i];
          first_value = pt.value;
        }
      std::cout << "  " << names[i].name << ": "
                << (!first          ? "held at every point"
                    : flips.empty() ? "violated at every point"
                                    : flips)
                << "\n";
      if (first)
        std::cout << "      first: " << request.param << "=" << first_value << " seed "
                  << first->first_seed << ": " << first->first_summary
                  << "\n      replay: " << replay(first_value, first->first_seed) << "\n";
    }
    if (!result.expectation)
      std::cout << "no expectation (the runs have interventions; the file's expectations are for "
                   "its own run)\n";
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.2f s (%.0f runs/s)", secs,
                  double(result.runs) / std::max(secs, 1e-9));
    std::cout << result.runs << " runs in " << rate << " on " << threads << " threads\n";
    return 0;
  });
}

}  // namespace redlab::app
