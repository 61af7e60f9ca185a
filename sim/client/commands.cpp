// See commands.h.
#include "sim/client/commands.h"

#include <cctype>

namespace redlab::client {

namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::optional<TimeUs> parse_ms_us(const std::string& text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  TimeUs ms = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    ms = ms * 10 + (ch - '0');
  }
  return ms_to_us(ms);
}

}  // namespace

std::optional<TimeUs> parse_seconds_us(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  TimeUs whole = 0, frac_us = 0, scale = 100000;
  size_t i = 0;
  for (; i < text.size() && text[i] != '.'; i++) {
    if (text[i] < '0' || text[i] > '9' || i >= 12) return std::nullopt;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i < text.size()) {
    for (i++; i < text.size(); i++) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      frac_us += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return seconds_to_us(whole) + frac_us;
}

std::optional<TimeUs> blocking_timeout_us(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return std::nullopt;
  // Every command below starts with b, w or x: the others (nearly all) end here.
  const char first = static_cast<char>(std::tolower(static_cast<unsigned char>(argv[0][0])));
  if (first != 'b' && first != 'w' && first != 'x') return std::nullopt;
  std::string name = lower(argv[0]);
  auto seconds_at = [&argv](size_t i) -> TimeUs {
    if (i >= argv.size()) return 0;
    return parse_seconds_us(argv[i]).value_or(0);
  };
  if (name == "blpop" || name == "brpop" || name == "bzpopmin" || name == "bzpopmax" ||
      name == "brpoplpush" || name == "blmove")
    return seconds_at(argv.size() - 1);
  if (name == "blmpop" || name == "bzmpop") return seconds_at(1);
  if (name == "wait") {
    if (argv.size() < 3) return TimeUs{0};
    return parse_ms_us(argv[2]).value_or(0);
  }
  if (name == "xread" || name == "xreadgroup") {
    for (size_t i = 1; i + 1 < argv.size(); i++) {
      if (lower(argv[i]) == "streams") break;
      if (lower(argv[i]) == "block") return parse_ms_us(argv[i + 1]).value_or(0);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace redlab::client
