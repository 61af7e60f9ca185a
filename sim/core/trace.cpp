// See trace.h. The writer and the reader are hand-written for the one fixed shape of a trace
// (an object with meta, and a flat array of flat event objects whose values are integers,
// strings or arrays of strings): the writer because a million events must be written in well
// under a second, the reader because it must both be fast (the GUI opens a million-event trace
// in under 2 s) and say exactly where a file is wrong. There is one reader, so there is one
// set of rules: nothing is accepted that the writer could not have written, except
// whitespace, escapes and field order.
#include "sim/core/trace.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "sim/core/assert.h"

namespace redlab {

// ---------------------------------------------------------------------------------------
// The registry and the event's fields
// ---------------------------------------------------------------------------------------

namespace {

constexpr std::array<FieldInfo, static_cast<size_t>(F::count_)> kFields = {{
#define REDLAB_FIELD_INFO(name, type, doc) {#name, FieldType::type, doc},
    REDLAB_TRACE_FIELDS(REDLAB_FIELD_INFO)
#undef REDLAB_FIELD_INFO
}};

}  // namespace

const FieldInfo& field_info(F field) {
  REDLAB_ASSERT(field < F::count_ && "a field of the registry");
  return kFields[static_cast<size_t>(field)];
}

std::optional<F> field_by_name(std::string_view name) {
  // A hash lookup: a reader asks once per field of every event (a million-event trace).
  static const std::unordered_map<std::string_view, F> kByName = [] {
    std::unordered_map<std::string_view, F> m;
    for (size_t i = 0; i < kFields.size(); i++) m.emplace(kFields[i].name, static_cast<F>(i));
    return m;
  }();
  auto it = kByName.find(name);
  if (it == kByName.end()) return std::nullopt;
  return it->second;
}

namespace {

// The field's slot: the existing one, or a new one at the end. Values are emplaced into the
// slot (never moved in as a whole variant: GCC 12 warns, wrongly, about variant moves).
TraceField& slot(TraceEvent& e, F key) {
  for (TraceField& f : e.fields)
    if (f.key == key) return f;
  TraceField& f = e.fields.emplace_back();
  f.key = key;
  return f;
}

template <typename T>
constexpr FieldType kTypeOf = std::is_same_v<T, int64_t>       ? FieldType::Int
                              : std::is_same_v<T, std::string> ? FieldType::Str
                                                               : FieldType::List;

template <typename T, typename V>
TraceEvent& set_field(TraceEvent& e, F key, V&& value) {
  REDLAB_ASSERT(kTypeOf<T> == field_info(key).type && "a field's value has the registry's type");
  slot(e, key).value.template emplace<T>(std::forward<V>(value));
  return e;
}

const FieldValue* find_field(const TraceEvent& e, F key) {
  for (const TraceField& f : e.fields)
    if (f.key == key) return &f.value;
  return nullptr;
}

}  // namespace

TraceEvent& TraceEvent::with(F key, int64_t value) & {
  return set_field<int64_t>(*this, key, value);
}
TraceEvent& TraceEvent::with(F key, std::string value) & {
  return set_field<std::string>(*this, key, std::move(value));
}
TraceEvent& TraceEvent::with(F key, std::vector<std::string> value) & {
  return set_field<std::vector<std::string>>(*this, key, std::move(value));
}

const int64_t* TraceEvent::num(F key) const {
  const FieldValue* v = find_field(*this, key);
  return v ? std::get_if<int64_t>(v) : nullptr;
}
const std::string* TraceEvent::str(F key) const {
  const FieldValue* v = find_field(*this, key);
  return v ? std::get_if<std::string>(v) : nullptr;
}
const std::vector<std::string>* TraceEvent::list(F key) const {
  const FieldValue* v = find_field(*this, key);
  return v ? std::get_if<std::vector<std::string>>(v) : nullptr;
}
bool TraceEvent::has(F key) const {
  return find_field(*this, key) != nullptr;
}

void Trace::charge(const TraceEvent& e) {
  size_t bytes = sizeof(TraceEvent) + e.kind.size() + e.actor.size() + e.text.size();
  for (const TraceField& f : e.fields) {
    bytes += sizeof(TraceField);
    if (const std::string* s = std::get_if<std::string>(&f.value))
      bytes += s->size();
    else if (const auto* l = std::get_if<std::vector<std::string>>(&f.value))
      for (const std::string& x : *l) bytes += sizeof(std::string) + x.size();
  }
  bytes_ += bytes;
  if (exceeded_) return;
  if (bytes_ > budget_.bytes_max || events_.size() + 1 > budget_.events_max) {
    exceeded_ = true;
    budget_.on_exceeded();
  }
}

std::string trace_excerpt(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t keep = max_bytes > 56 ? max_bytes - 56 : max_bytes;
  // Never cut inside a UTF-8 sequence: back up to a lead byte.
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) keep--;
  return std::string(s.substr(0, keep)) + "... (" + std::to_string(s.size()) + " bytes)";
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

namespace {

// The length of a valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), or 0 if the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80)
    return 1;
  else if (c >= 0xC2 && c <= 0xDF)
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
    return 0;
  if (s.size() - i < length) return 0;
  for (size_t k = 1; k < length; k++) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return length;
}

void write_string(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t plain_from = 0;
  auto flush = [&](size_t to) { out.append(s.data() + plain_from, to - plain_from); };
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      i++;
      continue;
    }
    if (c >= 0x80) {
      if (size_t n = utf8_length(s, i)) {
        i += n;
        continue;
      }
      flush(i);
      out += "\xEF\xBF\xBD";  // U+FFFD for each byte that is not valid UTF-8
      plain_from = ++i;
      continue;
    }
    flush(i);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        static const char* hex = "0123456789abcdef";
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
      }
    }
    plain_from = ++i;
  }
  flush(s.size());
  out.push_back('"');
}

void write_int(std::string& out, int64_t v) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (v < 0) *--p = '-';
  out.append(p, static_cast<size_t>(end - p));
}

void write_key(std::string& out, std::string_view key) {
  out.push_back(',');
  out.push_back('"');
  out.append(key);
  out += "\":";
}

void write_event(std::string& out, const TraceEvent& e) {
  out += "{\"time_us\":";
  write_int(out, e.time_us);
  out += ",\"kind\":";
  write_string(out, e.kind);
  if (!e.actor.empty()) {
    write_key(out, "actor");
    write_string(out, e.actor);
  }
  auto identity = [&](std::string_view key, int64_t v, int64_t def) {
    if (v == def) return;
    write_key(out, key);
    write_int(out, v);
  };
  identity("connection", e.connection, -1);
  identity("step", e.step, -1);
  identity("attempt", e.attempt, -1);
  identity("span", e.span, 0);
  identity("ends", e.ends, 0);
  for (const TraceField& f : e.fields) {
    write_key(out, field_info(f.key).name);
    if (const int64_t* n = std::get_if<int64_t>(&f.value)) {
      write_int(out, *n);
    } else if (const std::string* s = std::get_if<std::string>(&f.value)) {
      write_string(out, *s);
    } else {
      const auto& list = std::get<std::vector<std::string>>(f.value);
      out.push_back('[');
      for (size_t i = 0; i < list.size(); i++) {
        if (i) out.push_back(',');
        write_string(out, list[i]);
      }
      out.push_back(']');
    }
  }
  if (!e.text.empty()) {
    write_key(out, "text");
    write_string(out, e.text);
  }
  out.push_back('}');
}

}  // namespace

std::string trace_to_json(const Trace& trace) {
  std::string out;
  out.reserve(256 + trace.size() * 128);
  out += "{\"format\":";
  write_string(out, kTraceFormat);
  out += ",\"version\":";
  write_int(out, kTraceVersion);
  out += ",\n\"meta\":{";
  bool first = true;
  for (const auto& [key, value] : trace.meta()) {  // std::map: sorted keys
    if (!first) out.push_back(',');
    first = false;
    write_string(out, key);
    out.push_back(':');
    write_string(out, value);
  }
  out += "},\n\"events\":[";
  first = true;
  for (const TraceEvent& e : trace.events()) {
    out += first ? "\n" : ",\n";
    first = false;
    write_event(out, e);
  }
  out += "\n]}\n";
  return out;
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

namespace {

// Where a value is in the trace ("events[12].argv[3]", "meta.seed"), for an error message.
// Kept as parts and made into text only when an error is reported: a million events would
// otherwise build (and free) a path string for every value they hold.
struct TracePath {
  std::string_view head;                 // "trace", "meta", a top-level key; empty inside an event
  std::string_view key;                  // the member: "meta.KEY", "events[i].KEY"
  size_t index = SIZE_MAX;               // the event's index; SIZE_MAX: not in an event
  size_t item = SIZE_MAX;                // a list's item; SIZE_MAX: not in a list
  TracePath(const char* h) : head(h) {}  // NOLINT: a fixed path reads as its text
  TracePath(std::string_view h, std::string_view k = {}) : head(h), key(k) {}
  static TracePath event(size_t i, std::string_view k = {}) {
    TracePath p{std::string_view{}, k};
    p.index = i;
    return p;
  }
  TracePath at_item(size_t i) const {
    TracePath p = *this;
    p.item = i;
    return p;
  }
  std::string str() const {
    std::string out =
        index != SIZE_MAX ? "events[" + std::to_string(index) + "]" : std::string(head);
    if (!key.empty()) out += (out.empty() ? "" : ".") + std::string(key);
    if (item != SIZE_MAX) out += "[" + std::to_string(item) + "]";
    return out;
  }
};
std::string operator+(const TracePath& p, const char* s) {
  return p.str() + s;
}

// Each span id's state while reading: never seen, open (begun), ended. Ids as redlab writes
// them are 1, 2, 3, ... (at most one per event), kept in a flat table; any other id a file
// may hold goes to a set (a tree node per id was a tenth of loading a million events).
class SpanStates {
 public:
  enum State : uint8_t { kNone, kOpen, kEnded };
  explicit SpanStates(size_t dense_max) : dense_max_(dense_max) {}
  State get(int64_t id) const {
    if (dense(id)) return static_cast<size_t>(id) < table_.size() ? table_[size_t(id)] : kNone;
    if (open_.count(id)) return kOpen;
    return ended_.count(id) ? kEnded : kNone;
  }
  void set(int64_t id, State state) {
    if (dense(id)) {
      if (table_.size() <= static_cast<size_t>(id)) table_.resize(size_t(id) + 1, kNone);
      table_[size_t(id)] = state;
      return;
    }
    open_.erase(id);
    if (state == kOpen) open_.insert(id);
    if (state == kEnded) ended_.insert(id);
  }

 private:
  bool dense(int64_t id) const { return id > 0 && static_cast<uint64_t>(id) <= dense_max_; }
  size_t dense_max_;
  std::vector<State> table_;
  std::set<int64_t> open_, ended_;
};

}  // namespace

// One pass over the text. Every failure records a message and the position where it was
// found; read() then returns nullopt and the caller gets "line L, column C: path: message".
class TraceReader {
 public:
  explicit TraceReader(std::string_view text)
      : text_(text), p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<Trace> read(std::string* error) {
    Trace trace;
    bool ok = read_top(trace);
    if (!ok) {
      if (error) *error = located();
      return std::nullopt;
    }
    return trace;
  }

 private:
  // ---- errors ----
  bool fail(std::string message) {
    if (message_.empty()) {
      message_ = std::move(message);
      at_ = p_;
    }
    return false;
  }
  bool fail_at(const char* at, std::string message) {
    p_ = at;
    return fail(std::move(message));
  }
  std::string located() const {
    size_t line = 1, column = 1;
    for (const char* q = text_.data(); q < at_ && q < end_; q++) {
      if (*q == '\n') {
        line++;
        column = 1;
      } else if ((static_cast<unsigned char>(*q) & 0xC0) != 0x80) {
        column++;  // columns count characters, not UTF-8 continuation bytes
      }
    }
    return std::to_string(line) + ":" + std::to_string(column) + ": " + message_;
  }

  // ---- lexing ----
  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) p_++;
  }
  bool peek(char c) {
    skip_ws();
    return p_ < end_ && *p_ == c;
  }
  bool take(char c) {
    if (!peek(c)) return false;
    p_++;
    return true;
  }
  bool expect(char c, const TracePath& where) {
    if (take(c)) return true;
    if (p_ >= end_) return fail(where + ": unexpected end of input (a truncated trace?)");
    return fail(where + ": expected '" + std::string(1, c) + "'");
  }
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool hex4(uint32_t& out) {
    if (end_ - p_ < 4) return fail("a \\u escape needs four hex digits");
    out = 0;
    for (int i = 0; i < 4; i++) {
      int d = hex_digit(p_[i]);
      if (d < 0) return fail("a \\u escape needs four hex digits");
      out = out * 16 + static_cast<uint32_t>(d);
    }
    p_ += 4;
    return true;
  }
  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  // A JSON string, from its opening quote.
  bool string(std::string& out, const TracePath& where) {
    out.clear();
    skip_ws();
    if (p_ >= end_) return fail(where + ": unexpected end of input (a truncated trace?)");
    if (*p_ != '"') return fail(where + ": expected a string");
    p_++;
    for (;;) {
      const char* start = p_;
      while (p_ < end_ && kPlain[static_cast<unsigned char>(*p_)]) p_++;
      out.append(start, static_cast<size_t>(p_ - start));
      if (p_ >= end_) return fail(where + ": unexpected end of input inside a string");
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        p_++;
        return true;
      }
      if (c < 0x20) return fail(where + ": a control character inside a string");
      if (c == '\\') {
        if (end_ - p_ < 2) return fail(where + ": unexpected end of input inside a string");
        char e = p_[1];
        p_ += 2;
        switch (e) {
          case '"':
            out.push_back('"');
            break;
          case '\\':
            out.push_back('\\');
            break;
          case '/':
            out.push_back('/');
            break;
          case 'b':
            out.push_back('\b');
            break;
          case 'f':
            out.push_back('\f');
            break;
          case 'n':
            out.push_back('\n');
            break;
          case 'r':
            out.push_back('\r');
            break;
          case 't':
            out.push_back('\t');
            break;
          case 'u': {
            uint32_t cp = 0;
            if (!hex4(cp)) return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              uint32_t lo = 0;
              if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
                return fail(where + ": a lone UTF-16 surrogate in a \\u escape");
              p_ += 2;
              if (!hex4(lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF)
                return fail(where + ": a lone UTF-16 surrogate in a \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              return fail(where + ": a lone UTF-16 surrogate in a \\u escape");
            }
            append_utf8(out, cp);
            break;
          }
          default:
            p_ -= 2;
            return fail(where + ": an invalid escape in a string");
        }
        continue;
      }
      size_t n = utf8_length(std::string_view(p_, static_cast<size_t>(end_ - p_)), 0);
      if (n == 0) return fail(where + ": bytes that are not UTF-8 inside a string");
      out.append(p_, n);
      p_ += n;
    }
  }
  // A JSON integer that fits int64 (no fraction, no exponent).
  bool integer(int64_t& out, const TracePath& where) {
    skip_ws();
    const char* start = p_;
    bool negative = p_ < end_ && *p_ == '-';
    if (negative) p_++;
    if (p_ >= end_) return fail_at(start, where + ": unexpected end of input (a truncated trace?)");
    if (*p_ < '0' || *p_ > '9') return fail_at(start, where + ": expected an integer");
    if (*p_ == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9')
      return fail_at(start, where + ": a number with a leading zero");
    uint64_t magnitude = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      uint64_t d = static_cast<uint64_t>(*p_ - '0');
      if (magnitude > (UINT64_MAX - d) / 10)
        return fail_at(start, where + ": integer out of range");
      magnitude = magnitude * 10 + d;
      p_++;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E'))
      return fail_at(start, where + ": expected an integer (traces have no fractions)");
    uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    if (magnitude > limit) return fail_at(start, where + ": integer out of range");
    out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }
  // After a value inside an object: ',' (more) or '}' (done).
  bool next_member(bool& done, const TracePath& where) {
    if (take(',')) {
      done = false;
      return true;
    }
    if (take('}')) {
      done = true;
      return true;
    }
    if (p_ >= end_) return fail(where + ": unexpected end of input (a truncated trace?)");
    return fail(where + ": expected ',' or '}'");
  }

  // ---- structure ----
  bool read_top(Trace& trace) {
    skip_ws();
    if (p_ >= end_) return fail("trace: the file is empty");
    if (!take('{')) return fail("trace: expected a JSON object (is this a redlab trace?)");
    bool format = false, version = false, meta = false, events = false;
    std::string key;
    if (take('}')) return fail("format: missing (is this a redlab trace?)");
    for (bool done = false; !done;) {
      const char* key_at = (skip_ws(), p_);
      if (!string(key, "trace") || !expect(':', TracePath(key))) return false;
      if (key == "format") {
        std::string value;
        const char* at = (skip_ws(), p_);
        if (format) return fail_at(key_at, "format: given twice");
        if (!string(value, "format")) return false;
        if (value != kTraceFormat)
          return fail_at(at, "format: expected \"" + std::string(kTraceFormat) + "\", not \"" +
                                 value + "\" (is this a redlab trace?)");
        format = true;
      } else if (key == "version") {
        int64_t v = 0;
        const char* at = (skip_ws(), p_);
        if (version) return fail_at(key_at, "version: given twice");
        if (!integer(v, "version")) return false;
        if (v == 1)
          return fail_at(at,
                         "version: a version 1 trace, written by redlab before trace version 2; "
                         "this build reads version 2: run the scenario again with --trace");
        if (v != kTraceVersion)
          return fail_at(at, "version: " + std::to_string(v) +
                                 " is not supported (this build reads " +
                                 std::to_string(kTraceVersion) + ")");
        version = true;
      } else if (key == "meta") {
        if (meta) return fail_at(key_at, "meta: given twice");
        if (!version) return fail_at(key_at, "version: missing (it must come before meta)");
        if (!read_meta(trace)) return false;
        meta = true;
      } else if (key == "events") {
        if (events) return fail_at(key_at, "events: given twice");
        if (!version) return fail_at(key_at, "version: missing (it must come before events)");
        if (!read_events(trace)) return false;
        events = true;
      } else {
        return fail_at(key_at, "trace: unknown field '" + key + "'");
      }
      if (!next_member(done, "trace")) return false;
    }
    skip_ws();
    if (p_ != end_) return fail("trace: text after the end of the trace");
    if (!format) return fail("format: missing (is this a redlab trace?)");
    if (!version) return fail("version: missing");
    return true;
  }

  bool read_meta(Trace& trace) {
    if (!expect('{', "meta")) return false;
    if (take('}')) return true;
    std::string key, value;
    for (bool done = false; !done;) {
      const char* key_at = (skip_ws(), p_);
      if (!string(key, "meta") || !expect(':', TracePath("meta", key))) return false;
      if (!string(value, TracePath("meta", key))) return false;
      if (trace.meta_.count(key)) return fail_at(key_at, "meta." + key + ": given twice");
      trace.meta_.emplace(key, value);
      if (!next_member(done, "meta")) return false;
    }
    return true;
  }

  // The identity fields, in kIdentity's order (their bit in read_events' `seen`), or -1 for
  // a typed field: one comparison, chosen by the first letter, instead of nine.
  static constexpr std::array<std::string_view, 9> kIdentity = {
      "time_us", "kind", "actor", "connection", "step", "attempt", "span", "ends", "text"};
  static int identity_field(std::string_view key) {
    if (key.empty()) return -1;
    auto is = [&](int i) { return key == kIdentity[size_t(i)] ? i : -1; };
    switch (key[0]) {
      case 't':
        return key.size() == 4 ? is(8) : is(0);
      case 'k':
        return is(1);
      case 'a':
        return key.size() == 5 ? is(2) : is(5);
      case 'c':
        return is(3);
      case 's':
        return key[1 % key.size()] == 't' ? is(4) : is(6);
      case 'e':
        return is(7);
      default:
        return -1;
    }
  }

  bool read_events(Trace& trace) {
    if (!expect('[', "events")) return false;
    // trace_to_json writes one event per line: the line count bounds the events, and
    // reserving once saves re-copying a growing vector of a million events.
    size_t lines = 1;  // memchr, not std::count: it scans the (large) text word by word
    for (const char* q = p_; (q = static_cast<const char*>(std::memchr(q, '\n', size_t(end_ - q))));
         q++)
      lines++;
    trace.events_.reserve(std::min(lines, kTraceEventsReadMax));
    if (take(']')) return true;
    TimeUs last_us = 0;
    SpanStates spans(trace.events_.capacity() + 1);
    std::string key;
    for (size_t index = 0;; index++) {
      const TracePath where = TracePath::event(index);
      const char* event_at = (skip_ws(), p_);
      if (trace.events_.size() >= kTraceEventsReadMax)
        return fail_at(event_at, where + ": more than " + std::to_string(kTraceEventsReadMax) +
                                     " events, the most a run writes (a trace's limit)");
      // Read in place (no move of each event into the vector); a failed read fails the
      // whole trace, so a half-read event left at the end is never seen.
      TraceEvent& e = trace.events_.emplace_back();
      if (!expect('{', where)) return false;
      bool time = false, kind = false;
      uint64_t seen = 0;  // identity fields given, one bit each (duplicates are refused)
      std::array<bool, static_cast<size_t>(F::count_)> field_seen{};
      if (!take('}')) {
        for (bool done = false; !done;) {
          const char* key_at = (skip_ws(), p_);
          if (!string(key, where)) return false;
          const TracePath at = TracePath::event(index, key);
          if (!expect(':', at)) return false;
          const int which = identity_field(key);
          if (which >= 0) {
            uint64_t bit = uint64_t(1) << which;
            if (seen & bit) return fail_at(key_at, at + ": given twice");
            seen |= bit;
          }
          bool ok = true;
          if (which == 0) {
            ok = time = integer(e.time_us, at);
          } else if (which == 1) {
            ok = kind = string(e.kind, at);
          } else if (which == 2) {
            ok = string(e.actor, at);
          } else if (which == 3) {
            ok = integer(e.connection, at);
          } else if (which == 4) {
            ok = integer(e.step, at);
          } else if (which == 5) {
            ok = integer(e.attempt, at);
          } else if (which == 6) {
            ok = integer(e.span, at);
          } else if (which == 7) {
            ok = integer(e.ends, at);
          } else if (which == 8) {
            ok = string(e.text, at);
          } else if (std::optional<F> f = field_by_name(key)) {
            if (field_seen[static_cast<size_t>(*f)]) return fail_at(key_at, at + ": given twice");
            field_seen[static_cast<size_t>(*f)] = true;
            ok = read_field(e, *f, at);
          } else {
            return fail_at(key_at, where + ": unknown field '" + key + "'");
          }
          if (!ok) return false;
          if (!next_member(done, where)) return false;
        }
      }
      if (!time) return fail_at(event_at, where + ": missing field 'time_us'");
      if (!kind) return fail_at(event_at, where + ": missing field 'kind'");
      if (e.time_us < 0)
        return fail_at(event_at, where + ".time_us: " + std::to_string(e.time_us) +
                                     " is before the start of the run");
      if (e.time_us < last_us)
        return fail_at(event_at, where + ".time_us: " + std::to_string(e.time_us) +
                                     " is earlier than the event before it (" +
                                     std::to_string(last_us) + "): time never goes backwards");
      last_us = e.time_us;
      if (e.span < 0 || e.ends < 0) return fail_at(event_at, where + ": span ids are positive");
      if (e.ends > 0) {
        SpanStates::State state = spans.get(e.ends);
        if (state != SpanStates::kOpen)
          return fail_at(event_at, where + ".ends: span " + std::to_string(e.ends) +
                                       (state == SpanStates::kEnded ? " has already ended"
                                                                    : " was never begun"));
        spans.set(e.ends, SpanStates::kEnded);
      }
      if (e.span > 0) {
        if (spans.get(e.span) != SpanStates::kNone)
          return fail_at(event_at,
                         where + ".span: span " + std::to_string(e.span) + " was begun before");
        spans.set(e.span, SpanStates::kOpen);
        trace.last_span_ = std::max(trace.last_span_, e.span);
      }
      if (take(',')) continue;
      if (take(']')) return true;
      if (p_ >= end_) return fail("events: unexpected end of input (a truncated trace?)");
      return fail("events: expected ',' or ']' after " + where.str());
    }
  }

  bool read_field(TraceEvent& e, F f, const TracePath& at) {
    switch (field_info(f).type) {
      case FieldType::Int: {
        int64_t v = 0;
        if (!integer(v, at)) return false;
        e.with(f, v);
        return true;
      }
      case FieldType::Str: {
        std::string v;
        if (!string(v, at)) return false;
        e.with(f, std::move(v));
        return true;
      }
      case FieldType::List: {
        std::vector<std::string> list;
        if (!expect('[', at)) return false;
        if (!take(']')) {
          std::string item;
          for (;;) {
            if (!string(item, at.at_item(list.size()))) return false;
            list.push_back(std::move(item));  // string() clears it before the next
            if (take(',')) continue;
            if (take(']')) break;
            if (p_ >= end_) return fail(at + ": unexpected end of input (a truncated trace?)");
            return fail(at + ": expected ',' or ']'");
          }
        }
        e.with(f, std::move(list));
        return true;
      }
    }
    return false;
  }

  // Bytes copied as they are: printable ASCII other than '"' and '\\'.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; c++) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
  }();

  std::string_view text_;
  const char* p_;
  const char* end_;
  std::string message_;
  const char* at_ = nullptr;
};

std::optional<Trace> trace_from_json(std::string_view text, std::string* error) {
  return TraceReader(text).read(error);
}

}  // namespace redlab
