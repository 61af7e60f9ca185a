#include "sim/fake/util.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sim/core/reply.h"

namespace redlab::fake {

std::optional<int64_t> parse_int64(std::string_view s) {
  // Mirrors util.c string2ll.
  if (s.empty() || s.size() >= 21) return std::nullopt;
  size_t p = 0;
  bool negative = false;
  if (s.size() == 1 && s[0] == '0') return 0;
  if (s[0] == '-') {
    negative = true;
    p++;
    if (p == s.size()) return std::nullopt;
  }
  if (s[p] < '1' || s[p] > '9') return std::nullopt;
  uint64_t v = static_cast<uint64_t>(s[p] - '0');
  p++;
  for (; p < s.size(); p++) {
    if (s[p] < '0' || s[p] > '9') return std::nullopt;
    if (v > UINT64_MAX / 10) return std::nullopt;
    v *= 10;
    uint64_t d = static_cast<uint64_t>(s[p] - '0');
    if (v > UINT64_MAX - d) return std::nullopt;
    v += d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parse_double(std::string_view s) {
  if (s.empty() || s.size() > 5 * 1024) return std::nullopt;
  std::string buf(s);
  if (std::memchr(buf.data(), '\0', buf.size())) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO))
    return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<long double> parse_long_double(std::string_view s) {
  // util.c string2ld: at most 5k bytes, no leading blank, all consumed, no NaN.
  if (s.empty() || s.size() >= 5 * 1024) return std::nullopt;
  std::string buf(s);
  if (std::memchr(buf.data(), '\0', buf.size())) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || errno == ERANGE || std::isnan(v)) return std::nullopt;
  return v;
}

std::string format_double(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

std::string format_long_double(long double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[5 * 1024];
  int len = std::snprintf(buf, sizeof buf, "%.17Lf", d);
  if (len < 0) return "0";
  std::string out(buf, static_cast<size_t>(len));
  if (out.find('.') != std::string::npos) {
    while (!out.empty() && out.back() == '0') out.pop_back();
    if (!out.empty() && out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// util.c stringmatchlen_impl, with its recursion bounded the same way (skipLongerMatches).
bool match_impl(const char* pattern, size_t plen, const char* str, size_t slen, bool nocase,
                bool* skip_longer, int nesting) {
  if (nesting > 1000) return false;
  while (plen && slen) {
    switch (pattern[0]) {
      case '*':
        while (plen > 1 && pattern[1] == '*') {
          pattern++;
          plen--;
        }
        if (plen == 1) return true;
        while (slen) {
          if (match_impl(pattern + 1, plen - 1, str, slen, nocase, skip_longer, nesting + 1))
            return true;
          if (*skip_longer) return false;
          str++;
          slen--;
        }
        *skip_longer = true;
        return false;
      case '?':
        str++;
        slen--;
        break;
      case '[': {
        pattern++;
        plen--;
        bool negate = plen && pattern[0] == '^';
        if (negate) {
          pattern++;
          plen--;
        }
        bool matched = false;
        while (true) {
          if (plen == 0) break;
          if (pattern[0] == '\\' && plen >= 2) {
            pattern++;
            plen--;
            if (pattern[0] == str[0]) matched = true;
          } else if (pattern[0] == ']') {
            break;
          } else if (plen >= 3 && pattern[1] == '-') {
            char start = pattern[0];
            char end = pattern[2];
            char c = str[0];
            if (start > end) std::swap(start, end);
            if (nocase) {
              start = lower(start);
              end = lower(end);
              c = lower(c);
            }
            pattern += 2;
            plen -= 2;
            if (c >= start && c <= end) matched = true;
          } else {
            if (!nocase) {
              if (pattern[0] == str[0]) matched = true;
            } else if (lower(pattern[0]) == lower(str[0])) {
              matched = true;
            }
          }
          pattern++;
          plen--;
        }
        if (plen == 0) {  // "[" without "]": the pattern ran out.
          pattern--;
          plen++;
        }
        if (negate) matched = !matched;
        if (!matched) return false;
        str++;
        slen--;
        break;
      }
      case '\\':
        if (plen >= 2) {
          pattern++;
          plen--;
        }
        [[fallthrough]];
      default:
        if (!nocase) {
          if (pattern[0] != str[0]) return false;
        } else if (lower(pattern[0]) != lower(str[0])) {
          return false;
        }
        str++;
        slen--;
        break;
    }
    pattern++;
    plen--;
    if (slen == 0) {
      while (plen && *pattern == '*') {
        pattern++;
        plen--;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view str, bool nocase) {
  bool skip_longer = false;
  return match_impl(pattern.data(), pattern.size(), str.data(), str.size(), nocase, &skip_longer,
                    0);
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

bool equals_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// ---------------------------------------------------------------------------------------
// Types and value summaries
// ---------------------------------------------------------------------------------------

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::String:
      return "string";
    case ValueType::List:
      return "list";
    case ValueType::Hash:
      return "hash";
    case ValueType::Set:
      return "set";
    case ValueType::ZSet:
      return "zset";
    case ValueType::Stream:
      return "stream";
  }
  return "none";
}

namespace {

void append_string(std::string& out, std::string_view bytes, size_t bytes_max) {
  if (bytes.size() <= bytes_max) return append_repr_escaped(out, bytes);
  append_repr_escaped(out, bytes.substr(0, bytes_max));
  out += "... (";
  out += std::to_string(bytes.size());
  out += " bytes)";
}

// The shortest text that reads back as the same double (std::to_chars), inf as Redis writes it.
void append_score(std::string& out, double score) {
  if (std::isinf(score)) {
    out += score > 0 ? "inf" : "-inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, score);
  out.append(buf, static_cast<size_t>(res.ptr - buf));
}

// ", ... (N what)" after the shown elements of a container of n elements.
void append_more(std::string& out, size_t n, const char* what) {
  if (n <= kSummaryItemsMax) return;
  out += ", ... (";
  out += std::to_string(n);
  out += ' ';
  out += what;
  out += ')';
}

std::string list_summary(const ListValue& list) {
  std::string out = "[";
  size_t shown = std::min(list.size(), kSummaryItemsMax);
  for (size_t i = 0; i < shown; i++) {
    if (i) out += ", ";
    append_string(out, list[i], kSummaryElementBytesMax);
  }
  append_more(out, list.size(), "items");
  out += ']';
  return out;
}

std::string hash_summary(const HashValue& hash) {
  // The fields in byte order: the first kSummaryItemsMax of them, without sorting them all.
  using Field = const std::pair<std::string, std::string>*;
  std::vector<Field> fields;
  fields.reserve(hash.size());
  for (const auto& entry : hash.entries()) fields.push_back(&entry);
  size_t shown = std::min(fields.size(), kSummaryItemsMax);
  std::partial_sort(fields.begin(), fields.begin() + static_cast<ptrdiff_t>(shown), fields.end(),
                    [](Field a, Field b) { return a->first < b->first; });
  std::string out = "{";
  for (size_t i = 0; i < shown; i++) {
    if (i) out += ", ";
    append_string(out, fields[i]->first, kSummaryElementBytesMax);
    out += ": ";
    append_string(out, fields[i]->second, kSummaryElementBytesMax);
  }
  append_more(out, fields.size(), "fields");
  out += '}';
  return out;
}

std::string set_summary(const SetValue& set) {
  std::string out = "{";
  size_t i = 0;
  for (auto it = set.begin(); it != set.end() && i < kSummaryItemsMax; ++it, ++i) {
    if (i) out += ", ";
    append_string(out, *it, kSummaryElementBytesMax);
  }
  append_more(out, set.size(), "members");
  out += '}';
  return out;
}

std::string zset_summary(const ZSetValue& zset) {
  std::string out = "{";
  size_t i = 0;
  for (auto it = zset.by_score.begin(); it != zset.by_score.end() && i < kSummaryItemsMax;
       ++it, ++i) {
    if (i) out += ", ";
    append_string(out, it->second, kSummaryElementBytesMax);
    out += ": ";
    append_score(out, it->first);
  }
  append_more(out, zset.by_score.size(), "members");
  out += '}';
  return out;
}

std::string stream_summary(const StreamValue& stream) {
  std::string out = std::to_string(stream.length) + " entries";
  // The last live entry: tombstones are skipped, nodes and items are in ID order.
  for (auto node = stream.nodes.rbegin(); node != stream.nodes.rend(); ++node) {
    const auto& items = node->second.items;
    for (auto item = items.rbegin(); item != items.rend(); ++item) {
      if (item->deleted) continue;
      out += ", last ";
      out += item->id.str();
      return out;
    }
  }
  return out;
}

}  // namespace

std::string string_summary(std::string_view bytes, size_t bytes_max) {
  std::string out;
  append_string(out, bytes, bytes_max);
  return out;
}

std::string value_summary(const Value& value) {
  switch (value.type()) {
    case ValueType::String:
      return string_summary(std::get<std::string>(value.data));
    case ValueType::List:
      return list_summary(std::get<ListValue>(value.data));
    case ValueType::Hash:
      return hash_summary(std::get<HashValue>(value.data));
    case ValueType::Set:
      return set_summary(std::get<SetValue>(value.data));
    case ValueType::ZSet:
      return zset_summary(std::get<ZSetValue>(value.data));
    case ValueType::Stream: {
      const auto& stream = std::get<std::shared_ptr<StreamValue>>(value.data);
      return stream ? stream_summary(*stream) : "0 entries";
    }
  }
  return "";
}

}  // namespace redlab::fake
