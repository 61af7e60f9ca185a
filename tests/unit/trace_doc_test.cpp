// The documentation cannot drift from the code: docs/trace-format.md names every field of the
// registry and every event kind and meta key that a run of any shipped scenario, in any variant,
// writes. (scenarios/README.md against the step, fault and check registries:
// scenario_kinds_doc_test.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/core/trace.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

namespace fs = std::filesystem;

std::string doc() {
  std::ifstream in(fs::path(REDLAB_SOURCE_DIR) / "docs" / "trace-format.md");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TraceFormatDoc, NamesEveryFieldOfTheRegistry) {
  std::string text = doc();
  for (size_t i = 0; i < static_cast<size_t>(F::count_); i++) {
    std::string name(field_info(static_cast<F>(i)).name);
    EXPECT_NE(text.find("`" + name + "`"), std::string::npos) << name;
  }
}

TEST(TraceFormatDoc, NamesEveryKindTheShippedScenariosWrite) {
  std::string text = doc();
  std::set<std::string> kinds, meta_keys;
  for (auto& entry : fs::directory_iterator(fs::path(REDLAB_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    Scenario sc = load_scenario_file(entry.path().string());
    // Every variant value at least once (the others at their defaults).
    std::vector<std::map<std::string, std::string>> runs{{}};
    for (const Variant& v : sc.variants)
      for (const std::string& value : v.values) runs.push_back({{v.name, value}});
    for (const auto& variant : runs) {
      RunOptions o;
      o.variant = variant;
      RunResult r = run_scenario(sc, o);
      for (const TraceEvent& e : r.trace.events()) kinds.insert(e.kind);
      for (const auto& [key, value] : r.trace.meta()) {
        // "variant.release" is documented as `variant.NAME`: its family, up to the dot.
        size_t dot = key.find('.');
        meta_keys.insert(dot == std::string::npos ? key + "`" : key.substr(0, dot + 1));
      }
    }
  }
  EXPECT_GE(kinds.size(), 50u);
  for (const std::string& k : kinds) EXPECT_NE(text.find("`" + k + "`"), std::string::npos) << k;
  // The meta keys too; a real run's own (`server.NAME`, `key_prefix`) are checked by
  // tests/real_cli_test.cpp on its traces.
  EXPECT_GE(meta_keys.size(), 8u);
  for (const std::string& k : meta_keys) EXPECT_NE(text.find("`" + k), std::string::npos) << k;
}

}  // namespace
}  // namespace redlab::scenario
