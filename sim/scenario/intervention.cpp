#include "sim/scenario/intervention.h"

#include <cctype>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

namespace redlab::scenario {
namespace {

constexpr size_t kLineMax = 1000;                   // characters of one intervention
constexpr int64_t kValueMaxMs = 1'000'000'000'000;  // |value|: no overflow once in µs

struct Word {
  std::string text;
  size_t column = 0;  // 1-based, in the line
};

std::vector<Word> split_words(std::string_view line) {
  std::vector<Word> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) i++;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i > start) out.push_back({std::string(line.substr(start, i - start)), start + 1});
  }
  return out;
}

// "3000", "3000ms", "3s", "1.5s", "-500": whole milliseconds, or nothing.
std::optional<int64_t> milliseconds(const std::string& w) {
  std::string_view s = w;
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  int64_t scale = 1;
  if (s.size() > 2 && s.substr(s.size() - 2) == "ms") {
    s.remove_suffix(2);
  } else if (s.size() > 1 && s.back() == 's') {
    s.remove_suffix(1);
    scale = 1000;
  }
  if (s.empty()) return std::nullopt;
  int64_t whole = 0, frac = 0, frac_scale = 1;
  size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++) {
    whole = whole * 10 + (s[i] - '0');
    if (whole > kValueMaxMs) return std::nullopt;
  }
  if (i == 0) return std::nullopt;
  if (i < s.size()) {
    if (s[i] != '.' || i + 1 == s.size()) return std::nullopt;
    for (i++; i < s.size(); i++) {
      if (!std::isdigit(static_cast<unsigned char>(s[i])) || frac_scale >= scale)
        return std::nullopt;  // a fraction of a millisecond, or not a number
      frac = frac * 10 + (s[i] - '0');
      frac_scale *= 10;
    }
  }
  int64_t ms = whole * scale + frac * (scale / frac_scale);
  if (ms > kValueMaxMs) return std::nullopt;
  return negative ? -ms : ms;
}

bool names_actor(const Scenario& sc, const std::string& n) {
  for (const auto& a : sc.actors) {
    if (a.name == n) return true;
    // An instance of an actor with a count: its name and a number (buyer7).
    if (n.size() > a.name.size() && n.compare(0, a.name.size(), a.name) == 0 &&
        std::isdigit(static_cast<unsigned char>(n[a.name.size()])))
      return true;
  }
  return false;
}

bool names_server(const Scenario& sc, const std::string& n) {
  for (const auto& s : sc.servers)
    if (s.name == n) return true;
  return false;
}

}  // namespace

std::string intervention_entry(const Scenario& sc, std::string_view line) {
  std::string shown(line.substr(0, 80));
  if (line.size() > 80) shown += "...";
  auto fail = [&](const std::string& what, size_t column) -> std::string {
    std::string where = column ? " (column " + std::to_string(column) + ")" : "";
    throw ScenarioError("intervention \"" + shown + "\"" + where + ": " + what);
  };
  if (line.size() > kLineMax) fail("longer than " + std::to_string(kLineMax) + " characters", 0);
  std::vector<Word> words = split_words(line);
  if (words.empty())
    fail("empty (expected KIND [TARGET] at MS ..., e.g. \"pause A at 3000 for 14000\")", 0);

  static const std::set<std::string> kStringFields = {"on", "key", "actor", "server"};
  auto is_field_word = [](const std::string& w) {
    return w == "at" || w == "for" || w == "by" || w == "on" || w == "why" ||
           kStringFields.count(w) || w.find('_') != std::string::npos;
  };

  nlohmann::ordered_json entry = nlohmann::ordered_json::object();
  entry["do"] = words[0].text;
  size_t i = 1;
  if (i < words.size() && (names_actor(sc, words[i].text) || names_server(sc, words[i].text) ||
                           !is_field_word(words[i].text))) {
    const std::string& t = words[i].text;
    if (!names_actor(sc, t) && names_server(sc, t))
      entry["server"] = t;
    else
      entry["actor"] = t;  // the loader says so if no actor has that name
    i++;
  }
  while (i < words.size()) {
    const Word& w = words[i];
    if (w.text == "why") {
      std::string rest(line.substr(w.column - 1 + 3));
      size_t b = rest.find_first_not_of(" \t");
      if (b == std::string::npos) fail("\"why\" needs the reason after it", w.column);
      entry["why"] = rest.substr(b);
      break;
    }
    if (!is_field_word(w.text))
      fail("unexpected \"" + w.text + "\" (expected at, for, by, on, key, why or a field name)",
           w.column);
    if (i + 1 == words.size()) fail("\"" + w.text + "\" needs a value after it", w.column);
    const Word& v = words[i + 1];
    std::string key;
    if (w.text == "on")
      key = "server";
    else if (kStringFields.count(w.text))
      key = w.text;
    else if (w.text.size() > 3 && w.text.compare(w.text.size() - 3, 3, "_ms") == 0)
      key = w.text;
    else
      key = w.text + "_ms";
    if (entry.contains(key)) fail("\"" + w.text + "\" given twice", w.column);
    if (kStringFields.count(w.text)) {
      entry[key] = v.text;
    } else {
      auto ms = milliseconds(v.text);
      if (!ms)
        fail("\"" + v.text + "\" is not a time (expected ms: 3000, 3000ms, 3s or 1.5s)", v.column);
      entry[key] = *ms;
    }
    i += 2;
  }
  if (!entry.contains("at_ms")) fail("missing \"at MS\" (when it happens)", 0);
  return entry.dump();
}

}  // namespace redlab::scenario
