// `redlab diff RUN_A RUN_B`: two runs compared (sim/core/trace_diff.h). Each RUN is a trace
// (`run --trace`) or the object `run --json` printed. Two traces are compared event by event;
// where one side is only a `--json` object, only the verdicts can be. Exit status 1 when a
// verdict differs (a check, or the expectation), 0 when none does, 2 on bad input.
#include "app/diff_cli.h"

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "app/files.h"
#include "sim/core/trace_diff.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/expr.h"

namespace redlab::app {

using ojson = nlohmann::ordered_json;

namespace {

struct UsageError {
  std::string message;
};

// A run's verdicts and inputs, from a trace or from a `run --json` object.
struct Verdicts {
  std::string scenario, backend, seed, scenario_sha1;
  std::map<std::string, std::string> inputs;  // variant.NAME, param.NAME
  struct Check {
    bool ok = true, judged = true;
    int64_t violations = 0;
  };
  std::vector<std::pair<std::string, Check>> checks;  // in the run's order
  std::optional<bool> expectation_met;
  int64_t tolerance_ms = -1;  // the scenario's, if the trace says
};

struct Run {
  std::string path;
  std::optional<Trace> trace;  // when it is a trace
  Verdicts verdicts;
};

Verdicts verdicts_of_trace(const Trace& trace) {
  Verdicts v;
  v.scenario = trace.meta_or("scenario");
  v.backend = trace.meta_or("backend");
  v.seed = trace.meta_or("seed");
  v.scenario_sha1 = trace.meta_or("scenario_sha1");
  for (const auto& [k, value] : trace.meta())
    if (k.rfind("variant.", 0) == 0 || k.rfind("param.", 0) == 0) v.inputs[k] = value;
  if (auto t = scenario::parse_int(trace.meta_or("tolerance_ms"))) v.tolerance_ms = *t;
  TraceIndex ix(trace);
  for (const TraceCheck& c : ix.checks())
    v.checks.emplace_back(c.name, Verdicts::Check{c.ok, c.judged, c.violations});
  v.expectation_met = ix.expectation_met();
  return v;
}

Verdicts verdicts_of_json(const ojson& j, const std::string& path) {
  Verdicts v;
  auto bad = [&](const std::string& what) {
    throw UsageError{path + ": not a redlab run (" + what +
                     "); expected a trace from `redlab "
                     "run --trace` or the output of `redlab run --json`"};
  };
  if (!j.is_object() || !j.contains("scenario") || !j["scenario"].is_string()) bad("no scenario");
  if (!j.contains("checks") || !j["checks"].is_array()) bad("no checks");
  v.scenario = j["scenario"].get<std::string>();
  if (j.contains("backend") && j["backend"].is_string()) v.backend = j["backend"];
  if (j.contains("seed") && j["seed"].is_number_integer())
    v.seed = std::to_string(j["seed"].get<int64_t>());
  for (const char* section : {"variant", "params"})
    if (j.contains(section) && j[section].is_object())
      for (const auto& [k, value] : j[section].items())
        v.inputs[std::string(section == std::string("params") ? "param." : "variant.") + k] =
            value.is_string() ? value.get<std::string>() : value.dump();
  for (const auto& c : j["checks"]) {
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("ok") ||
        !c["ok"].is_boolean())
      bad("a check without a name or ok");
    Verdicts::Check check;
    check.ok = c["ok"].get<bool>();
    check.judged = !(c.contains("judged") && c["judged"].is_boolean() && !c["judged"].get<bool>());
    if (c.contains("violations") && c["violations"].is_number_integer())
      check.violations = c["violations"].get<int64_t>();
    v.checks.emplace_back(c["name"].get<std::string>(), check);
  }
  if (j.contains("expectation_met") && j["expectation_met"].is_boolean())
    v.expectation_met = j["expectation_met"].get<bool>();
  return v;
}

Run read_run(const std::string& path) {
  Run run;
  run.path = path;
  std::string text;
  if (auto error = read_input(path, InputKind::trace, &text)) throw UsageError{*error};
  ojson j = ojson::parse(text, nullptr, false);
  if (j.is_discarded())
    throw UsageError{path +
                     ": not JSON; expected a trace from `redlab run --trace` or the "
                     "output of `redlab run --json`"};
  if (j.is_object() && j.contains("format")) {
    std::string error;
    run.trace = trace_from_json(text, &error);
    if (!run.trace) throw UsageError{path + ": " + error};
    run.verdicts = verdicts_of_trace(*run.trace);
  } else {
    run.verdicts = verdicts_of_json(j, path);
  }
  return run;
}

std::string verdict_word(const Verdicts::Check& c) {
  if (!c.judged) return "not judged";
  return c.ok ? "held" : "violated (" + std::to_string(c.violations) + ")";
}

// Verdict differences from the verdicts alone (when a side is a --json object).
std::vector<std::string> verdict_differences(const Verdicts& a, const Verdicts& b) {
  std::vector<std::string> out;
  std::vector<std::string> names;
  for (auto& [n, c] : a.checks) names.push_back(n);
  for (auto& [n, c] : b.checks)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  for (const std::string& n : names) {
    const Verdicts::Check *x = nullptr, *y = nullptr;
    for (auto& [m, c] : a.checks)
      if (m == n) x = &c;
    for (auto& [m, c] : b.checks)
      if (m == n) y = &c;
    if (x && y && x->ok == y->ok && x->judged == y->judged) continue;
    out.push_back(n + ": " + (x ? verdict_word(*x) : "not checked") + " / " +
                  (y ? verdict_word(*y) : "not checked"));
  }
  if (a.expectation_met && b.expectation_met && *a.expectation_met != *b.expectation_met)
    out.push_back(std::string("expectation: ") + (*a.expectation_met ? "met" : "not met") + " / " +
                  (*b.expectation_met ? "met" : "not met"));
  return out;
}

std::string describe(const Verdicts& v) {
  std::string out = v.scenario + ", seed " + v.seed + ", " + v.backend;
  std::string variants;
  for (auto& [k, value] : v.inputs)
    if (k.rfind("variant.", 0) == 0) variants += " " + k.substr(8) + "=" + value;
  return out + variants;
}

std::string time_text(TimeUs t) {
  return scenario::format_time(t);
}

}  // namespace

int diff_main(const std::vector<std::string>& args) {
  try {
    std::vector<std::string> paths;
    bool json = false, all = false;
    std::optional<int64_t> tolerance_ms;
    for (size_t i = 0; i < args.size(); i++) {
      std::string a = args[i], value;
      bool inline_value = false;
      if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
        value = a.substr(a.find('=') + 1);
        a = a.substr(0, a.find('='));
        inline_value = true;
      }
      if (a == "--json" || a == "--all") {
        if (inline_value) throw UsageError{a + " takes no value"};
        (a == "--json" ? json : all) = true;
      } else if (a == "--tolerance-ms") {
        if (!inline_value) {
          if (i + 1 >= args.size()) throw UsageError{"--tolerance-ms needs a value"};
          value = args[++i];
        }
        auto n = scenario::parse_int(value);
        if (!n || *n < 0 || *n > 3'600'000)
          throw UsageError{"--tolerance-ms " + value + ": expected 0..3600000 (ms)"};
        tolerance_ms = *n;
      } else if (a.rfind("-", 0) == 0 && a != "-") {
        throw UsageError{"unknown option " + a + " for 'diff' (see redlab diff --help)"};
      } else {
        paths.push_back(args[i]);
      }
    }
    if (paths.size() != 2)
      throw UsageError{
          "'diff' needs two runs: RUN_A RUN_B (traces from `redlab run --trace`, or "
          "`redlab run --json` outputs)"};
    Run a = read_run(paths[0]), b = read_run(paths[1]);
    // The tolerance: the user's, else the scenario's (from the traces), else 50 ms.
    int64_t tol = tolerance_ms.value_or(
        std::max({a.verdicts.tolerance_ms, b.verdicts.tolerance_ms, int64_t(-1)}));
    if (tol < 0) tol = 50;

    std::vector<std::string> inputs;  // inputs that differ
    auto input_line = [&](const std::string& what, const std::string& x, const std::string& y) {
      if (x != y)
        inputs.push_back(what + " " + (x.empty() ? "(none)" : x) + " / " +
                         (y.empty() ? "(none)" : y));
    };
    input_line("scenario", a.verdicts.scenario, b.verdicts.scenario);
    if (!a.verdicts.scenario_sha1.empty() && !b.verdicts.scenario_sha1.empty())
      input_line("scenario file sha1", a.verdicts.scenario_sha1, b.verdicts.scenario_sha1);
    input_line("seed", a.verdicts.seed, b.verdicts.seed);
    input_line("backend", a.verdicts.backend, b.verdicts.backend);
    std::set<std::string> keys;
    for (auto& [k, v] : a.verdicts.inputs) keys.insert(k);
    for (auto& [k, v] : b.verdicts.inputs) keys.insert(k);
    for (const std::string& k : keys) {
      auto x = a.verdicts.inputs.find(k), y = b.verdicts.inputs.find(k);
      input_line(k, x == a.verdicts.inputs.end() ? "" : x->second,
                 y == b.verdicts.inputs.end() ? "" : y->second);
    }

    std::optional<TraceDiff> d;
    std::vector<std::string> verdicts;
    if (a.trace && b.trace) {
      TraceDiffOptions o;
      o.tolerance_us = tol * 1000;
      d = diff_traces(*a.trace, *b.trace, o);
      for (const TraceDifference& x : d->differences)
        if (x.kind == TraceDifference::Kind::verdict) verdicts.push_back(x.what);
    } else {
      verdicts = verdict_differences(a.verdicts, b.verdicts);
    }
    const int status = verdicts.empty() ? 0 : 1;
    const size_t kShown = 40;

    if (json) {
      ojson j;
      j["a"] = paths[0];
      j["b"] = paths[1];
      j["inputs_differ"] = inputs;
      j["verdicts_differ"] = !verdicts.empty();
      j["verdicts"] = verdicts;
      j["tolerance_ms"] = tol;
      if (d) {
        j["aligned"] = d->aligned;
        ojson counts;
        counts["only_in_a"] = d->count_only_in_a;
        counts["only_in_b"] = d->count_only_in_b;
        counts["value"] = d->count_value;
        counts["timing"] = d->count_timing;
        j["counts"] = counts;
        j["not_compared"] = {{"a", d->kinds_only_in_a}, {"b", d->kinds_only_in_b}};
        if (d->first_divergence) {
          j["first_divergence"] = {{"kind", difference_kind_name(d->first_divergence->kind)},
                                   {"at_us", d->first_divergence->at_us},
                                   {"what", d->first_divergence->what}};
        }
        ojson list = ojson::array();
        for (const TraceDifference& x : d->differences) {
          if (x.kind == TraceDifference::Kind::verdict) continue;
          if (!all && list.size() >= 1000) break;
          list.push_back(
              {{"kind", difference_kind_name(x.kind)}, {"at_us", x.at_us}, {"what", x.what}});
        }
        j["differences"] = list;
      } else {
        j["compared"] = "verdicts only (a side is a `run --json` object, not a trace)";
      }
      std::cout << j.dump(2) << "\n";
      return status;
    }

    std::cout << "A: " << describe(a.verdicts) << " (" << paths[0] << ")\n"
              << "B: " << describe(b.verdicts) << " (" << paths[1] << ")\n";
    if (!inputs.empty()) {
      std::cout << "inputs that differ:\n";
      for (const std::string& line : inputs) std::cout << "  " << line << "\n";
    }
    if (verdicts.empty()) {
      std::cout << "verdicts: the same (" << a.verdicts.checks.size() << " checks"
                << (a.verdicts.expectation_met
                        ? std::string(", expectation ") +
                              (*a.verdicts.expectation_met ? "met" : "not met")
                        : std::string())
                << ")\n";
    } else {
      std::cout << "VERDICTS DIFFER:\n";
      for (const std::string& line : verdicts) std::cout << "  " << line << "\n";
    }
    if (!d) {
      std::cout << "(only verdicts compared: a side is a `redlab run --json` object, not a "
                   "trace)\n";
      return status;
    }
    if (d->first_divergence)
      std::cout << "first divergence at " << time_text(d->first_divergence->at_us) << ": "
                << d->first_divergence->what << "\n";
    else
      std::cout << "no event differs";
    if (!d->first_divergence)
      std::cout << (d->count_timing ? "" : " (and no timing beyond the tolerance)") << "\n";
    std::cout << "differences: " << d->count_only_in_a << " only in A, " << d->count_only_in_b
              << " only in B, " << d->count_value << " in their fields, " << d->count_timing
              << " in timing beyond " << tol << " ms (" << d->aligned << " events aligned)\n";
    auto kinds = [](const std::vector<std::string>& v) {
      std::string out;
      for (const std::string& k : v) out += (out.empty() ? "" : ", ") + k;
      return out;
    };
    if (!d->kinds_only_in_a.empty())
      std::cout << "not compared, recorded by A only: " << kinds(d->kinds_only_in_a) << "\n";
    if (!d->kinds_only_in_b.empty())
      std::cout << "not compared, recorded by B only: " << kinds(d->kinds_only_in_b) << "\n";
    size_t shown = 0, events = 0;
    for (const TraceDifference& x : d->differences) {
      if (x.kind == TraceDifference::Kind::verdict) continue;
      events++;
      if (!all && shown >= kShown) continue;
      shown++;
      const char* tag = x.kind == TraceDifference::Kind::only_in_a   ? "only in A"
                        : x.kind == TraceDifference::Kind::only_in_b ? "only in B"
                        : x.kind == TraceDifference::Kind::value     ? "differs  "
                                                                     : "timing   ";
      std::cout << "  " << time_text(x.at_us) << "  " << tag << "  " << x.what << "\n";
    }
    if (shown < events)
      std::cout << "  ... and " << events - shown << " more (--all lists every one)\n";
    return status;
  } catch (const UsageError& e) {
    std::cerr << "redlab: " << e.message << "\n";
    return 2;
  }
}

}  // namespace redlab::app
