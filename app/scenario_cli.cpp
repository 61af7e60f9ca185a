#include "app/scenario_cli.h"

#include "app/backend.h"
#include "app/files.h"

#include <unistd.h>

#include <algorithm>
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

#include "sim/scenario/engine.h"
#include "sim/scenario/export.h"
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

// Flags shared by run, explore and check; `allowed` says which this subcommand takes.
Common parse_common(const std::string& cmd, const std::vector<std::string>& args,
                    const std::string& allowed) {
  Common c;
  auto takes = [&](const std::string& flag) {
    return allowed.find(flag + " ") != std::string::npos;
  };
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError{a + " needs a value"};
      return args[++i];
    };
    if (a.rfind("--", 0) == 0 && !takes(a))
      throw UsageError{"unknown option " + a + " for '" + cmd + "' (see redlab --help)"};
    if (a == "--seed") {
      c.run.seed = uint64_t(parse_number(a, value(), 0, INT64_MAX));
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
      c.backend.allow_server_faults = true;
    } else if (a == "--trace") {
      c.trace_file = value();
    } else if (a == "--chrome-trace") {
      c.chrome_file = value();
    } else if (a == "--json") {
      c.json = true;
    } else if (a == "--lang") {
      c.run.lang = value();
      if (c.run.lang != "en" && c.run.lang != "ru" && c.run.lang != "cs")
        throw UsageError{"--lang " + c.run.lang + ": expected en, ru or cs"};
    } else if (a == "--seeds") {
      c.seeds = parse_number(a, value(), 1, 10000000);
    } else if (a == "--script") {
      auto [k, v] = split_pair(a, value());
      c.script_files[k] = v;
    } else if (a.rfind("-", 0) == 0) {
      throw UsageError{"unknown option " + a + " for '" + cmd + "' (see redlab --help)"};
    } else if (c.scenario.empty()) {
      c.scenario = a;
    } else {
      throw UsageError{"unexpected argument '" + a + "' (one scenario at a time)"};
    }
  }
  if (c.scenario.empty())
    throw UsageError{"'" + cmd + "' needs a SCENARIO (an id from 'redlab list', or a file)"};
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

// Output files (--trace, --chrome-trace): whole or not at all (app/files.h).
void write_output(const std::string& path, const std::string& text) {
  if (auto error = app::write_file_atomically(path, text)) throw UsageError{*error};
}

std::string read_input(const std::string& path, const std::string& what) {
  std::string text;
  if (app::read_file(path, &text)) throw UsageError{what + path + ": cannot open the file"};
  return text;
}

std::string variant_line(const RunResult& r) {
  std::string out;
  for (auto& [k, v] : r.variant) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

// ---- the text timeline ----

// One row per actor: what it was doing in each column of time.
std::string chart(const RunResult& r, int width) {
  TimeUs end = std::max<TimeUs>(r.end_us, 1);
  // A round column size, so that the axis reads 0s 5s 10s.
  TimeUs col = 1000;
  for (TimeUs nice :
       {1000LL, 2000LL, 5000LL, 10000LL, 20000LL, 50000LL, 100000LL, 200000LL, 250000LL, 500000LL,
        1000000LL, 2000000LL, 5000000LL, 10000000LL, 30000000LL, 60000000LL}) {
    col = nice;
    if (nice * width >= end) break;
  }
  width = int(std::min<TimeUs>(width, (end + col - 1) / col));
  size_t name_w = 6;
  for (auto& a : r.actors) name_w = std::max(name_w, a.size() + 2);
  std::map<std::string, std::string> rows;
  for (auto& a : r.actors) rows[a] = std::string(width, ' ');
  auto paint = [&](const std::string& actor, TimeUs from, TimeUs to, char c, int rank) {
    static const std::string order = " .-w~#!P";  // later wins
    auto it = rows.find(actor);
    if (it == rows.end()) return;
    int a = int(std::min<TimeUs>(width - 1, from / col));
    int b = int(std::min<TimeUs>(width - 1, std::max(from, to - 1) / col));
    for (int i = a; i <= b; i++)
      if (int(order.find(it->second[i])) < rank) it->second[i] = c;
  };
  std::map<std::string, TimeUs> started, work_from, wait_from, pool_from;
  std::map<std::string, TimeUs> paused_from;
  std::set<std::string> ended;
  for (const auto& e : r.trace.events()) {
    if (e.kind == "actor_start") started[e.actor] = e.time_us;
    if (e.kind == "actor_end" && started.count(e.actor)) {
      paint(e.actor, started[e.actor], e.time_us, '.', 1);
      ended.insert(e.actor);
    }
    if (e.kind == "work") work_from[e.actor] = e.time_us;
    if (e.kind == "work_done" && work_from.count(e.actor))
      paint(e.actor, work_from[e.actor], e.time_us, '~', 4);
    if (e.kind == "pool_wait") pool_from[e.actor] = e.time_us;
    if ((e.kind == "pool_hit" || e.kind == "pool_miss" || e.kind == "pool_timeout" ||
         e.kind == "pool_wait_deadline") &&
        pool_from.count(e.actor)) {
      paint(e.actor, pool_from[e.actor], e.time_us, 'w', 3);
      pool_from.erase(e.actor);
    }
    if (e.kind == "sleep") wait_from[e.actor] = e.time_us;
    if (e.kind == "sleep_done" && wait_from.count(e.actor))
      paint(e.actor, wait_from[e.actor], e.time_us, '-', 2);
    if (e.kind == "read_timeout" || e.kind == "pool_timeout" || e.kind == "eof" ||
        e.kind == "lock_lost" || e.kind == "abandon" || e.kind == "tx_gave_up" ||
        e.kind == "resource_reject" || e.kind == "pubsub_disconnected")
      paint(e.actor, e.time_us, e.time_us + 1, '!', 6);
    if (e.kind == "fault" && e.text.rfind("pause", 0) == 0) paused_from[e.actor] = e.time_us;
    // A pause is traced on the paused host: an actor's own process, or a shared client's
    // (whose actors have no row of that name).
    if (e.kind == "fault" && e.text == "resume" && paused_from.count(e.actor))
      paint(e.actor, paused_from[e.actor], e.time_us, 'P', 7);
  }
  for (auto& [a, t] : started)
    if (!ended.count(a)) paint(a, t, end, '.', 1);
  for (auto& [a, t] : pool_from) paint(a, t, end, 'w', 3);  // still waiting at the end
  for (const auto& h : r.facts.holds) paint(h.actor, h.from_us, h.to_us, '#', 5);
  std::ostringstream out;
  // Axis: a label every 10 columns.
  std::string axis(width + 10, ' ');
  for (int i = 0; i < width; i += 10) {
    std::string label = i == 0 ? std::string("0s") : format_time(TimeUs(i) * col);
    if (label.size() > 3 && label.substr(label.size() - 4) == ".0 s")
      label = label.substr(0, label.size() - 4) + "s";
    axis.replace(i, label.size(), label);
  }
  out << std::string(name_w, ' ') << axis.substr(0, width + 6) << "\n";
  for (auto& a : r.actors) out << a << std::string(name_w - a.size(), ' ') << rows[a] << "\n";
  out << std::string(name_w, ' ') << "one column = " << format_time(col)
      << "   # holds a lock  ~ works  - sleeps  w waits for the pool  . active  ! error/lost  P "
         "paused\n";
  return out.str();
}

bool story_event(const TraceEvent& e) {
  static const char* kinds[] = {"lock_acquired",
                                "lock_busy",
                                "lock_released",
                                "lock_lost",
                                "lock_gave_up",
                                "lock_extend_failed",
                                "abandon",
                                "resource_accept",
                                "resource_reject",
                                "fault",
                                "watchdog_start",
                                "tx_committed",
                                "tx_gave_up",
                                "tx_skipped",
                                "pool_timeout",
                                "read_timeout",
                                "pubsub_disconnected",
                                "pubsub_resubscribe",
                                "subscribe_failed",
                                "consume_error",
                                "net_server_close",
                                "net_buffer_lost",
                                "note",
                                "narration",
                                "setup",
                                "lock_not_held",
                                "server_command",
                                "run_bound"};
  for (const char* k : kinds)
    if (e.kind == k) return true;
  return false;
}

void print_text(const Scenario& sc, const RunResult& r, const std::string& lang) {
  std::cout << sc.id << ": " << sc.title.get(lang) << "\n";
  std::cout << "seed " << r.trace.meta().at("seed");
  std::string v = variant_line(r);
  if (!v.empty()) std::cout << "   variant " << v;
  std::cout << "\n";
  if (!r.params.empty()) {
    std::cout << "params";
    for (auto& [k, val] : r.params) std::cout << " " << k << "=" << val;
    std::cout << "\n";
  }
  std::cout << "\n" << chart(r, 60) << "\n";
  std::cout << "events\n";
  size_t shown = 0, hidden = 0;
  for (const auto& e : r.trace.events()) {
    if (!story_event(e)) continue;
    if (shown >= 80) {
      hidden++;
      continue;
    }
    std::string t = format_time(e.time_us);
    std::cout << std::string(t.size() < 9 ? 9 - t.size() : 0, ' ') << t << "  "
              << (e.actor.empty() ? std::string("--") : e.actor) << "  " << e.kind;
    if (!e.text.empty()) std::cout << "  " << e.text;
    std::cout << "\n";
    shown++;
  }
  if (hidden) std::cout << "  ... " << hidden << " more (write them all with --trace FILE)\n";
  std::cout << "\nchecks\n";
  for (const auto& c : r.checks) {
    std::cout << "  " << (c.ok ? "holds   " : "VIOLATED") << "  " << c.name << ": " << c.summary;
    if (c.expected)
      std::cout << (c.ok == *c.expected ? "   [as expected]" : "   [NOT AS EXPECTED]");
    std::cout << "\n";
    for (size_t i = 1; i < c.violations.size() && i < 5; i++)
      std::cout << "            " << c.violations[i].text << "\n";
  }
  std::cout << "\n"
            << (r.expectation_met ? "expectation met" : "expectation NOT met") << " ("
            << r.trace.size() << " trace events, " << format_time(r.end_us)
            << (r.trace.meta().at("backend") == "fake" ? " of virtual time" : " of wall-clock time")
            << ")\n";
}

ojson checks_json(const RunResult& r) {
  ojson checks = ojson::array();
  for (const auto& c : r.checks) {
    ojson j;
    j["name"] = c.name;
    j["check"] = c.check;
    j["ok"] = c.ok;
    j["violations"] = c.violations.size();
    j["summary"] = c.summary;
    if (c.expected) j["expected"] = *c.expected;
    ojson details = ojson::array();
    for (const auto& v : c.violations) {
      ojson d;
      d["from_us"] = v.from_us;
      d["to_us"] = v.to_us;
      d["who"] = v.who;
      d["text"] = v.text;
      details.push_back(d);
    }
    j["details"] = details;
    checks.push_back(j);
  }
  return checks;
}

ojson run_json(const RunResult& r, const Common& c) {
  ojson j;
  j["scenario"] = r.trace.meta().at("scenario");
  j["backend"] = r.trace.meta().count("backend") ? r.trace.meta().at("backend") : c.backend.backend;
  if (c.backend.time_scale != 1.0) j["time_scale"] = c.backend.time_scale;
  j["seed"] = c.run.seed;
  ojson variant = ojson::object();
  for (auto& [k, v] : r.variant) variant[k] = v;
  j["variant"] = variant;
  ojson params = ojson::object();
  for (auto& [k, v] : r.params) params[k] = v;
  j["params"] = params;
  j["checks"] = checks_json(r);
  j["expectation_met"] = r.expectation_met;
  j["events"] = r.events;
  j["end_us"] = r.end_us;
  return j;
}

Scenario load(const Common& c) {
  return load_scenario_file(resolve_scenario(c.scenario));
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

std::vector<LibraryFile> scenario_library(std::string* dir_error) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(scenarios_dir(), ec))
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  if (ec && dir_error) *dir_error = "cannot read " + scenarios_dir() + ": " + ec.message();
  std::sort(paths.begin(), paths.end());
  std::vector<LibraryFile> out;
  for (auto& p : paths) {
    LibraryFile f{p.string(), std::nullopt, ""};
    try {
      f.scenario = load_scenario_file(f.path);
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
  if (!fs::exists(p, ec))
    throw UsageError{"no scenario \"" + name + "\" in " + scenarios_dir() + " (see redlab list)"};
  return p.string();
}

int list_main(const std::vector<std::string>& args) {
  return guarded([&] {
    bool json = false;
    std::string lang = "en";
    for (size_t i = 0; i < args.size(); i++) {
      if (args[i] == "--json")
        json = true;
      else if (args[i] == "--lang" && i + 1 < args.size())
        lang = args[++i];
      else
        throw UsageError{"unknown argument '" + args[i] + "' for 'list'"};
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
                            "--json --lang --script ");
    Scenario sc = load(c);
    for (auto& [name, file] : c.script_files)
      c.run.scripts[name] = read_input(file, "--script " + name + "=");
    RunResult r = run_on_backend(sc, c.run, c.backend);
    if (!c.trace_file.empty()) write_output(c.trace_file, trace_to_json(r.trace));
    if (!c.chrome_file.empty()) write_output(c.chrome_file, chrome_trace_json(r.trace));
    if (c.json)
      std::cout << run_json(r, c).dump(2) << "\n";
    else
      print_text(sc, r, c.run.lang);
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
                     "--lang --script ");
    if (c.seeds == 0) c.seeds = 1000;
    Scenario sc = load(c);
    for (auto& [name, file] : c.script_files)
      c.run.scripts[name] = read_input(file, "--script " + name + "=");
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
      std::string cmd = "redlab run " + sc.id + " --seed " + std::to_string(seed);
      for (auto& [k, v] : c.run.variant) cmd += " --variant " + k + "=" + v;
      for (auto& [k, v] : c.run.set) cmd += " --set " + k + "=" + std::to_string(v);
      return cmd;
    };
    if (c.json) {
      ojson j;
      j["scenario"] = sc.id;
      j["seeds"] = c.seeds;
      ojson variant = ojson::object();
      for (auto& [k, v] : first.variant) variant[k] = v;
      j["variant"] = variant;
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

int check_main(const std::vector<std::string>& args) {
  return guarded([&] {
    Common c = parse_common("check", args,
                            "--script --variant --set --seeds --backend --time-scale "
                            "--allow-server-faults --json --lang ");
    Scenario sc = load(c);
    if (!sc.exercise) throw UsageError{sc.id + " has no exercise to check"};
    const Exercise& ex = *sc.exercise;
    RunOptions base = c.run;
    for (auto& [k, v] : ex.variant)
      if (!base.variant.count(k)) base.variant[k] = v;
    for (auto& [k, v] : ex.set)
      if (!base.set.count(k)) base.set[k] = v;
    for (auto& [name, file] : c.script_files) {
      if (!sc.script(name))
        throw UsageError{"--script " + name + ": " + sc.id + " has no script \"" + name + "\""};
      base.scripts[name] = read_input(file, "--script " + name + "=");
    }
    int64_t seeds = c.seeds ? c.seeds : ex.seeds;
    // Said with the verdict, after every input was validated (bad input prints nothing).
    auto own_script_note = [&] {
      if (c.script_files.empty() && !c.json)
        std::cout << "(no --script " << ex.script << "=FILE.lua given: graded the scenario's own "
                  << ex.script << " script)\n";
    };
    for (int64_t seed = 1; seed <= seeds; seed++) {
      RunOptions o = base;
      o.seed = uint64_t(seed);
      RunResult r = run_on_backend(sc, o, c.backend);
      if (!r.backend_trouble.empty()) throw BackendError(r.backend_trouble);
      for (auto& [name, want] : ex.expect) {
        for (auto& ch : r.checks) {
          if (ch.name != name || ch.ok == want) continue;
          own_script_note();
          if (c.json) {
            ojson j;
            j["scenario"] = sc.id;
            j["pass"] = false;
            j["seed"] = seed;
            j["check"] = name;
            j["summary"] = ch.summary;
            std::cout << j.dump(2) << "\n";
          } else {
            std::cout << "FAIL " << sc.id << ": seed " << seed << ": " << name << " should "
                      << (want ? "hold" : "be violated") << " but "
                      << (ch.ok ? "holds" : "is violated") << ": " << ch.summary
                      << "\n  replay: redlab run " << sc.id << " --seed " << seed;
            for (auto& [k, v] : o.variant) std::cout << " --variant " << k << "=" << v;
            for (auto& [k, v] : o.set) std::cout << " --set " << k << "=" << v;
            for (auto& [k, f] : c.script_files) std::cout << " --script " << k << "=" << f;
            std::cout << "\n";
          }
          return 1;
        }
      }
    }
    own_script_note();
    if (c.json) {
      ojson j;
      j["scenario"] = sc.id;
      j["pass"] = true;
      j["seeds"] = seeds;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "PASS " << sc.id << ": every check as required over seeds 1.." << seeds << "\n";
    }
    return 0;
  });
}

}  // namespace redlab::app
