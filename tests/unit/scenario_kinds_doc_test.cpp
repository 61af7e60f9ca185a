// scenarios/README.md cannot drift from the registries (sim/scenario/kinds.h): every step,
// fault and check kind is documented with exactly its fields, each with its type, unit and
// whether it is required (or what an absent one means); and nothing is documented that the
// registries do not have. Both ways: a kind or a field missing from the document fails, and
// so does one documented but absent from the registry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario/checks.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario {
namespace {

namespace fs = std::filesystem;

std::string readme() {
  std::ifstream in(fs::path(REDLAB_SOURCE_DIR) / "scenarios" / "README.md");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text of the section that starts with the line `heading` up to the next heading of the
// same level or higher.
std::string section(const std::string& text, const std::string& heading) {
  size_t at = text.find("\n" + heading + "\n");
  if (at == std::string::npos) return "";
  at++;
  size_t level = heading.find(' ');
  size_t end = at + heading.size();
  while (true) {
    end = text.find("\n#", end);
    if (end == std::string::npos) return text.substr(at);
    size_t hashes = text.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level) return text.substr(at, end - at);
    end++;
  }
}

std::vector<std::string> split(const std::string& s, const std::string& by) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    size_t next = s.find(by, at);
    out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) return out;
    at = next + by.size();
  }
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(' ');
  size_t b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The rows of the markdown table whose header row starts with `header`: each row's cells.
std::vector<std::vector<std::string>> table(const std::string& text, const std::string& header) {
  std::vector<std::vector<std::string>> rows;
  size_t at = text.find("\n" + header);
  if (at == std::string::npos) return rows;
  std::istringstream in(text.substr(at + 1));
  std::string line;
  std::getline(in, line);  // header
  std::getline(in, line);  // |---|
  while (std::getline(in, line) && line.rfind("|", 0) == 0) {
    // Cells: split on " | " between the outer bars (cells never contain " | ").
    std::vector<std::string> cells = split(line.substr(1, line.size() - 2), " | ");
    for (std::string& c : cells) c = trim(c);
    rows.push_back(cells);
  }
  return rows;
}

// The `words` in backticks of a cell, in order.
std::vector<std::string> code_words(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
    size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    out.push_back(cell.substr(at + 1, end - at - 1));
    at = end;
  }
  return out;
}

// "`a`: x; `b`: y" as one kind's fields list them, each item as field_inline_doc writes it.
std::vector<std::string> inline_fields(const std::string& cell) {
  if (cell == "—") return {};
  return split(cell, "; ");
}

// The kinds a "### a and b" / "### a" heading of the steps section documents.
std::vector<std::string> heading_kinds(const std::string& line) {
  std::vector<std::string> out;
  for (const std::string& part : split(line.substr(4), " and "))
    for (const std::string& name : split(part, ", ")) out.push_back(trim(name));
  return out;
}

TEST(ScenarioKindsDoc, StepsSectionIsTheStepRegistry) {
  std::string doc = section(readme(), "## steps");
  ASSERT_FALSE(doc.empty());
  // The overview lists every kind, and only those.
  std::set<std::string> listed;
  for (const auto& row : table(doc, "| Kind | What it does |"))
    for (const std::string& name : code_words(row[0])) listed.insert(name);
  std::set<std::string> registered;
  for (const StepKind* k : step_kinds()) registered.insert(k->name);
  EXPECT_EQ(listed, registered) << "the steps overview table";
  // Each kind has its section, whose field table is the kind's fields, in order, each with
  // its type (and unit) and its default.
  std::map<std::string, int> sections;
  std::istringstream in(doc);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) != 0) continue;
    std::vector<std::string> names = heading_kinds(line);
    std::string body = section(doc, line);
    for (const std::string& name : names) {
      sections[name]++;
      const StepKind* kind = find_step_kind(name);
      ASSERT_NE(kind, nullptr) << line << ": " << name << " is not in the step registry";
      std::vector<std::string> want, got;
      for (const FieldSpec& f : kind->fields)
        want.push_back(std::string("`") + f.key + "` | " + field_type_doc(f) + " | " +
                       field_default_doc(f));
      for (const auto& row : table(body, "| Field | Type | Default | Meaning |")) {
        ASSERT_EQ(row.size(), 4u) << name << ": " << row[0];
        got.push_back(row[0] + " | " + row[1] + " | " + row[2]);
      }
      EXPECT_EQ(got, want) << name << ": its fields (key | type | default)";
    }
  }
  for (const StepKind* k : step_kinds())
    EXPECT_EQ(sections[k->name], 1) << k->name << ": one \"### \" section in scenarios/README.md";
}

TEST(ScenarioKindsDoc, ChecksTableIsTheCheckRegistry) {
  std::string doc = section(readme(), "## checks");
  ASSERT_FALSE(doc.empty());
  auto rows = table(doc, "| Check | Arguments | Judged from |");
  ASSERT_FALSE(rows.empty());
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 3u) << row[0];
    std::vector<std::string> name = code_words(row[0]);
    ASSERT_EQ(name.size(), 1u) << row[0];
    documented.insert(name[0]);
    const CheckKind* kind = find_check(name[0]);
    ASSERT_NE(kind, nullptr) << name[0] << " is documented but is not in the check registry";
    EXPECT_NE(row[2].find(kind->judged_from), std::string::npos)
        << name[0] << ": the row does not say what the registry says it is judged from";
    std::vector<std::string> want;
    for (const FieldSpec& f : kind->fields) want.push_back(field_inline_doc(f));
    EXPECT_EQ(inline_fields(row[1]), want) << name[0] << ": its arguments";
  }
  for (const CheckKind* k : check_kinds())
    EXPECT_EQ(documented.count(k->name), 1u) << k->name << " has no row in scenarios/README.md";
}

TEST(ScenarioKindsDoc, FaultsSectionIsTheFaultRegistry) {
  std::string doc = section(readme(), "## faults");
  ASSERT_FALSE(doc.empty());
  auto rows = table(doc, "| Kind | Fields | What happens |");
  ASSERT_FALSE(rows.empty());
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 4u) << row[0];
    std::vector<std::string> name = code_words(row[0]);
    ASSERT_EQ(name.size(), 1u) << row[0];
    documented.insert(name[0]);
    const FaultKind* kind = find_fault_kind(name[0]);
    ASSERT_NE(kind, nullptr) << name[0] << " is documented but is not in the fault registry";
    std::vector<std::string> want;
    for (const FieldSpec& f : kind->fields) want.push_back(field_inline_doc(f));
    EXPECT_EQ(inline_fields(row[1]), want) << name[0] << ": its fields";
  }
  for (const FaultKind* k : fault_kinds())
    EXPECT_EQ(documented.count(k->name), 1u) << k->name << " has no row in scenarios/README.md";

  // The keys table: every field of every kind, with its type and unit (one key has one type
  // in every kind), and no key that no kind has.
  std::map<std::string, std::string> keys;  // key -> its Type cell
  for (const auto& row : table(doc, "| Key | Type | Default | Meaning |")) {
    std::vector<std::string> key = code_words(row[0]);
    ASSERT_EQ(key.size(), 1u) << row[0];
    keys[key[0]] = row[1];
  }
  std::set<std::string> used{"do", "at_ms", "when", "why"};
  for (const FaultKind* k : fault_kinds())
    for (const FieldSpec& f : k->fields) {
      used.insert(f.key);
      ASSERT_EQ(keys.count(f.key), 1u) << k->name << "." << f.key << " is not in the keys table";
      std::string type = field_type_doc(f);
      EXPECT_EQ(keys[f.key], type) << k->name << "." << f.key;
    }
  for (const auto& [key, type] : keys)
    EXPECT_EQ(used.count(key), 1u) << key << " is documented but no fault kind takes it";
}

TEST(ScenarioKindsDoc, UnknownCheckIsNeverAVerdict) {
  Trace trace;
  TraceIndex index(trace);
  CheckResult r = run_check("no_such_check", CheckArgs{}, index);
  EXPECT_FALSE(r.judged);
  EXPECT_NE(r.summary.find("no check named \"no_such_check\""), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace redlab::scenario
