// See trace.h. Writing goes through nlohmann::ordered_json one event at a time so that the
// field order is the order below (time first, for a reader), and the layout (one event per
// line) is ours; reading validates every field and reports where the input is wrong.
#include "sim/core/trace.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

namespace redlab {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

std::string dump(const OrderedJson& j) {
  // replace: invalid UTF-8 becomes U+FFFD instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
}

OrderedJson event_json(const TraceEvent& e) {
  OrderedJson j;
  j["time_us"] = e.time_us;
  j["kind"] = e.kind;
  j["actor"] = e.actor;
  j["connection"] = e.connection;
  j["step"] = e.step;
  j["attempt"] = e.attempt;
  j["text"] = e.text;
  return j;
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool read_int(const Json& j, const std::string& where, int64_t& out, std::string* error) {
  if (!j.is_number_integer()) return fail(error, where + ": expected an integer");
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return fail(error, where + ": integer out of range");
  out = j.get<int64_t>();
  return true;
}

bool read_string(const Json& j, const std::string& where, std::string& out, std::string* error) {
  if (!j.is_string()) return fail(error, where + ": expected a string");
  out = j.get<std::string>();
  return true;
}

bool read_event(const Json& j, const std::string& where, TraceEvent& e, std::string* error) {
  if (!j.is_object()) return fail(error, where + ": expected an object");
  if (!j.contains("time_us")) return fail(error, where + ": missing field 'time_us'");
  if (!j.contains("kind")) return fail(error, where + ": missing field 'kind'");
  for (const auto& [key, value] : j.items()) {
    std::string at = where + "." + key;
    bool ok = true;
    if (key == "time_us") {
      ok = read_int(value, at, e.time_us, error);
    } else if (key == "kind") {
      ok = read_string(value, at, e.kind, error);
    } else if (key == "actor") {
      ok = read_string(value, at, e.actor, error);
    } else if (key == "connection") {
      ok = read_int(value, at, e.connection, error);
    } else if (key == "step") {
      ok = read_int(value, at, e.step, error);
    } else if (key == "attempt") {
      ok = read_int(value, at, e.attempt, error);
    } else if (key == "text") {
      ok = read_string(value, at, e.text, error);
    } else {
      ok = fail(error, where + ": unknown field '" + key + "'");
    }
    if (!ok) return false;
  }
  return true;
}

// ---- A fast reader for well-formed traces ----
//
// nlohmann's DOM costs about 4 s for a 130 MB, million-event trace, over the GUI's 2 s budget
// for opening one. trace_from_json therefore first tries this single-pass reader, which
// accepts only input that the validating reader below would accept with the same result
// (structure, field types, integers, JSON strings with valid UTF-8), and gives up on anything
// else — \u escapes, numbers that are not plain int64, duplicate top-level keys, unknown
// fields, a BOM — so that the validating reader runs and reports errors exactly as before.
class FastReader {
 public:
  explicit FastReader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<Trace> read() {
    Trace trace;
    bool format = false, version = false, meta = false, events = false;
    if (!ws_then('{')) return std::nullopt;
    if (ws_then('}')) return std::nullopt;  // no format: the validating reader says so
    for (;;) {
      std::string key;
      if (!ws_then('"') || !string_body(key) || !ws_then(':')) return std::nullopt;
      if (key == "format") {
        std::string value;
        if (format || !ws_then('"') || !string_body(value) || value != kTraceFormat)
          return std::nullopt;
        format = true;
      } else if (key == "version") {
        int64_t v = 0;
        if (version || !integer(v) || v != kTraceVersion) return std::nullopt;
        version = true;
      } else if (key == "meta") {
        if (meta || !read_meta(trace)) return std::nullopt;
        meta = true;
      } else if (key == "events") {
        // trace_to_json writes one event per line: the line count bounds the events, and
        // reserving once saves re-copying a growing vector of a million events (the largest
        // cost after the strings themselves).
        const size_t lines = static_cast<size_t>(std::count(p_, end_, '\n'));
        trace.reserve(lines + 1);
        if (events || !read_events(trace)) return std::nullopt;
        events = true;
      } else {
        return std::nullopt;
      }
      if (ws_then(',')) continue;
      if (ws_then('}')) break;
      return std::nullopt;
    }
    skip_ws();
    if (p_ != end_ || !format || !version) return std::nullopt;
    return trace;
  }

 private:
  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) p_++;
  }
  bool ws_then(char c) {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      p_++;
      return true;
    }
    return false;
  }
  // After the opening quote: the string's value, up to and including the closing quote.
  bool string_body(std::string& out) {
    out.clear();
    for (;;) {
      const char* start = p_;
      while (p_ < end_ && kPlain[static_cast<unsigned char>(*p_)]) p_++;
      out.append(start, static_cast<size_t>(p_ - start));
      if (p_ >= end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        p_++;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (end_ - p_ < 2) return false;
        char e = p_[1];
        // The short escapes; \u and anything else: the validating reader decides.
        constexpr std::string_view kEscaped = "\"\\/bfnrt", kDecoded = "\"\\/\b\f\n\r\t";
        size_t which = kEscaped.find(e);
        if (which == std::string_view::npos) return false;
        char decoded = kDecoded[which];
        out.push_back(decoded);
        p_ += 2;
        continue;
      }
      // A multi-byte UTF-8 sequence, valid as JSON requires (RFC 3629: no overlong forms,
      // no surrogates, nothing above U+10FFFF).
      int length = 0;
      unsigned char lo = 0x80, hi = 0xBF;
      if (c >= 0xC2 && c <= 0xDF)
        length = 2;
      else if (c == 0xE0)
        length = 3, lo = 0xA0;
      else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        length = 3;
      else if (c == 0xED)
        length = 3, hi = 0x9F;
      else if (c == 0xF0)
        length = 4, lo = 0x90;
      else if (c >= 0xF1 && c <= 0xF3)
        length = 4;
      else if (c == 0xF4)
        length = 4, hi = 0x8F;
      else
        return false;
      if (end_ - p_ < length) return false;
      for (int i = 1; i < length; i++) {
        const auto b = static_cast<unsigned char>(p_[i]);
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
      }
      out.append(p_, static_cast<size_t>(length));
      p_ += length;
    }
  }
  // A JSON integer that fits int64 (no fraction, no exponent, no leading zeros).
  bool integer(int64_t& out) {
    skip_ws();
    bool negative = p_ < end_ && *p_ == '-';
    if (negative) p_++;
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') return false;
    uint64_t magnitude = 0;
    constexpr int kDigitsMax = 18;  // below 10^18: no overflow check needed per digit
    int digits = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      if (++digits > kDigitsMax) return false;
      magnitude = magnitude * 10 + static_cast<uint64_t>(*p_ - '0');
      p_++;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }
  bool read_meta(Trace& trace) {
    if (!ws_then('{')) return false;
    if (ws_then('}')) return true;
    std::string key, value;
    for (;;) {
      if (!ws_then('"') || !string_body(key) || !ws_then(':') || !ws_then('"') ||
          !string_body(value))
        return false;
      trace.set_meta(key, value);  // a repeated key: the last wins, as in the DOM
      if (ws_then(',')) continue;
      return ws_then('}');
    }
  }
  bool read_events(Trace& trace) {
    if (!ws_then('[')) return false;
    if (ws_then(']')) return true;
    std::string key;
    for (;;) {
      TraceEvent e;
      bool time = false, kind = false;
      if (!ws_then('{')) return false;
      if (!ws_then('}')) {
        for (;;) {
          if (!ws_then('"') || !string_body(key) || !ws_then(':')) return false;
          bool ok = false;
          if (key == "time_us")
            ok = time = integer(e.time_us);
          else if (key == "kind")
            ok = kind = ws_then('"') && string_body(e.kind);
          else if (key == "actor")
            ok = ws_then('"') && string_body(e.actor);
          else if (key == "connection")
            ok = integer(e.connection);
          else if (key == "step")
            ok = integer(e.step);
          else if (key == "attempt")
            ok = integer(e.attempt);
          else if (key == "text")
            ok = ws_then('"') && string_body(e.text);
          if (!ok) return false;
          if (ws_then(',')) continue;
          if (ws_then('}')) break;
          return false;
        }
      }
      if (!time || !kind) return false;
      trace.append(std::move(e));
      if (ws_then(',')) continue;
      return ws_then(']');
    }
  }

  // Bytes copied as they are: printable ASCII other than '"' and '\\'.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; c++) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
  }();

  const char* p_;
  const char* end_;
};

}  // namespace

std::string trace_to_json(const Trace& trace) {
  OrderedJson meta = OrderedJson::object();
  for (const auto& [key, value] : trace.meta()) meta[key] = value;  // std::map: sorted keys
  std::string out;
  out += "{\"format\":" + dump(OrderedJson(kTraceFormat)) +
         ",\"version\":" + std::to_string(kTraceVersion) + ",\n";
  out += "\"meta\":" + dump(meta) + ",\n";
  out += "\"events\":[";
  bool first = true;
  for (const TraceEvent& e : trace.events()) {
    out += first ? "\n" : ",\n";
    first = false;
    out += dump(event_json(e));
  }
  out += "\n]}\n";
  return out;
}

std::optional<Trace> trace_from_json(std::string_view text, std::string* error) {
  // Well-formed traces take the fast path; anything else is read (and its error located) by
  // the validating reader below.
  if (std::optional<Trace> trace = FastReader(text).read()) return trace;
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.what() says "[json.exception.parse_error.101] parse error at line 2, column 5: ...".
    fail(error, std::string("trace: ") + e.what());
    return std::nullopt;
  }
  if (!root.is_object()) {
    fail(error, "trace: expected a JSON object");
    return std::nullopt;
  }
  auto format = root.find("format");
  if (format == root.end() || !format->is_string() || *format != kTraceFormat) {
    fail(error, "format: expected \"" + std::string(kTraceFormat) + "\"");
    return std::nullopt;
  }
  auto version = root.find("version");
  int64_t v = 0;
  if (version == root.end()) {
    fail(error, "version: missing");
    return std::nullopt;
  }
  if (!read_int(*version, "version", v, error)) return std::nullopt;
  if (v != kTraceVersion) {
    fail(error, "version: " + std::to_string(v) + " is not supported (this build reads " +
                    std::to_string(kTraceVersion) + ")");
    return std::nullopt;
  }
  Trace trace;
  for (const auto& [key, value] : root.items()) {
    if (key == "format" || key == "version") continue;
    if (key == "meta") {
      if (!value.is_object()) {
        fail(error, "meta: expected an object");
        return std::nullopt;
      }
      for (const auto& [mkey, mvalue] : value.items()) {
        std::string s;
        if (!read_string(mvalue, "meta." + mkey, s, error)) return std::nullopt;
        trace.set_meta(mkey, std::move(s));
      }
    } else if (key == "events") {
      if (!value.is_array()) {
        fail(error, "events: expected an array");
        return std::nullopt;
      }
      for (size_t i = 0; i < value.size(); i++) {
        TraceEvent e;
        if (!read_event(value[i], "events[" + std::to_string(i) + "]", e, error))
          return std::nullopt;
        trace.append(std::move(e));
      }
    } else {
      fail(error, "trace: unknown field '" + key + "'");
      return std::nullopt;
    }
  }
  return trace;
}

}  // namespace redlab
