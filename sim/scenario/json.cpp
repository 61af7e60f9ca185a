#include "sim/scenario/json.h"

#include <charconv>
#include <cstdio>
#include <unordered_set>
#include <utility>

#include "sim/core/assert.h"

namespace redlab::scenario {

JsonValue JsonValue::null(Pos pos) {
  JsonValue v;
  v.pos_ = pos;
  return v;
}

JsonValue JsonValue::boolean(bool b, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::Bool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::integer(int64_t i, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::Int;
  v.int_ = i;
  return v;
}

JsonValue JsonValue::number(double d, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::Double;
  v.double_ = d;
  return v;
}

JsonValue JsonValue::string(std::string s, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::String;
  v.string_ = std::move(s);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> items, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::Array;
  v.items_ = std::move(items);
  return v;
}

JsonValue JsonValue::object(std::vector<Member> members, Pos pos) {
  JsonValue v = null(pos);
  v.type_ = Type::Object;
  v.members_ = std::move(members);
  return v;
}

bool JsonValue::as_bool() const {
  REDLAB_ASSERT(is_bool() && "as_bool() on a non-boolean");
  return bool_;
}

int64_t JsonValue::as_int() const {
  REDLAB_ASSERT(is_int() && "as_int() on a non-integer");
  return int_;
}

double JsonValue::as_double() const {
  REDLAB_ASSERT(is_number() && "as_double() on a non-number");
  return is_int() ? static_cast<double>(int_) : double_;
}

const std::string& JsonValue::as_string() const {
  REDLAB_ASSERT(is_string() && "as_string() on a non-string");
  return string_;
}

const std::vector<JsonValue>& JsonValue::items() const {
  REDLAB_ASSERT(is_array() && "items() on a non-array");
  return items_;
}

const std::vector<JsonValue::Member>& JsonValue::members() const {
  REDLAB_ASSERT(is_object() && "members() on a non-object");
  return members_;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const Member& m : members()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const char* JsonValue::type_name(Type t) {
  switch (t) {
    case Type::Null:
      return "null";
    case Type::Bool:
      return "boolean";
    case Type::Int:
      return "integer";
    case Type::Double:
      return "number";
    case Type::String:
      return "string";
    case Type::Array:
      return "array";
    case Type::Object:
      return "object";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 256;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string hex_code(const char* format, unsigned value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// Length (1-4) of the well-formed UTF-8 sequence at s[i], or 0. Rejects overlong forms,
// encoded surrogates and code points above U+10FFFF (the table in RFC 3629 section 4).
size_t utf8_length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; k++) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if (b < lo || b > hi) return 0;
    lo = 0x80;
    hi = 0xBF;
  }
  return n;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Recursive descent over the grammar of RFC 8259. Every function returns nullopt after
// recording the first error; depth is checked before recursing, so the stack stays bounded.
class Parser {
 public:
  Parser(std::string_view text, JsonError* error) : text_(text), error_(error) {}

  std::optional<JsonValue> parse_document() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") i_ = line_start_ = 3;
    skip_ws();
    std::optional<JsonValue> v = parse_value(0);
    if (!v) return std::nullopt;
    skip_ws();
    if (!at_end()) return fail(here(), "trailing characters after the document");
    return v;
  }

 private:
  bool at_end() const { return i_ >= text_.size(); }
  char peek() const { return text_[i_]; }
  // Line breaks occur only in whitespace (never inside a token), so the current line is the
  // line of every character a token can point at.
  Pos here() const { return {line_, static_cast<int>(i_ - line_start_) + 1}; }

  bool consume(char c) {
    if (at_end() || peek() != c) return false;
    i_++;
    return true;
  }

  void skip_ws() {
    for (; !at_end(); i_++) {
      char c = peek();
      if (c == '\n') {
        line_++;
        line_start_ = i_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        break;
      }
    }
  }

  std::nullopt_t fail(Pos pos, std::string message) {
    if (error_) *error_ = {pos, std::move(message)};
    return std::nullopt;
  }

  // "expected <what>, found <current character>". With whole_word a run of letters is shown
  // in full, so NaN, True or an unquoted key read as written.
  std::nullopt_t expected(const std::string& what, bool whole_word = false) {
    if (at_end()) return fail(here(), "unexpected end of input");
    std::string found;
    if (whole_word && is_alpha(peek())) {
      size_t end = i_;
      while (end < text_.size() && end - i_ < 32 &&
             (is_alpha(text_[end]) || is_digit(text_[end]) || text_[end] == '_')) {
        end++;
      }
      // (append, not "'" + std::string: GCC 12 -O3 warns falsely on that form, -Wrestrict)
      found = quoted(text_.substr(i_, end - i_));
    } else {
      found = describe_char();
    }
    return fail(here(), "expected " + what + ", found " + found);
  }

  std::string describe_char() const {
    auto c = static_cast<unsigned char>(peek());
    if (c >= 0x20 && c < 0x7F) return std::string("'") + peek() + "'";
    if (c == '\n') return "end of line";
    if (c < 0x80) return hex_code("control character U+%04X", c);
    size_t n = utf8_length(text_, i_);
    if (n == 0) return hex_code("invalid utf-8 byte 0x%02X", c);
    return quoted(text_.substr(i_, n));  // e.g. a typographic quote
  }

  static std::string quoted(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '\'';
    out.append(s);
    out += '\'';
    return out;
  }

  // Matches a literal (true/false/null) not followed by more of a word ("truex" is not one).
  bool literal(std::string_view word) {
    if (text_.substr(i_, word.size()) != word) return false;
    size_t end = i_ + word.size();
    if (end < text_.size() && (is_alpha(text_[end]) || is_digit(text_[end]))) return false;
    i_ = end;
    return true;
  }

  std::optional<JsonValue> parse_value(int depth) {
    if (at_end()) return expected("value");
    Pos pos = here();
    char c = peek();
    // The depth is checked here, before descending: the recursion (two frames a level) and
    // the tree's recursive destruction stay within kMaxDepth levels whatever the input.
    if ((c == '{' || c == '[') && depth + 1 > kMaxDepth) return fail(pos, "nesting too deep");
    if (c == '{') return parse_object(depth + 1);
    if (c == '[') return parse_array(depth + 1);
    if (c == '-' || is_digit(c)) return parse_number();
    if (c == '"') {
      std::optional<std::string> s = parse_string();
      if (!s) return std::nullopt;
      return JsonValue::string(std::move(*s), pos);
    }
    if (literal("true")) return JsonValue::boolean(true, pos);
    if (literal("false")) return JsonValue::boolean(false, pos);
    if (literal("null")) return JsonValue::null(pos);
    return expected("value", /*whole_word=*/true);
  }

  std::optional<JsonValue> parse_array(int depth) {
    REDLAB_ASSERT(depth <= kMaxDepth);
    Pos pos = here();
    i_++;  // '['
    std::vector<JsonValue> items;
    skip_ws();
    if (consume(']')) return JsonValue::array(std::move(items), pos);
    for (;;) {
      skip_ws();
      std::optional<JsonValue> v = parse_value(depth);
      if (!v) return std::nullopt;
      items.push_back(std::move(*v));
      skip_ws();
      if (consume(']')) return JsonValue::array(std::move(items), pos);
      if (!consume(',')) return expected("',' or ']' after array element");
    }
  }

  std::optional<JsonValue> parse_object(int depth) {
    REDLAB_ASSERT(depth <= kMaxDepth);
    Pos pos = here();
    i_++;  // '{'
    std::vector<JsonValue::Member> members;
    std::unordered_set<std::string> keys;  // a set, so a huge object is not quadratic
    skip_ws();
    if (consume('}')) return JsonValue::object(std::move(members), pos);
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"') {
        return expected(members.empty() ? "string key or '}'" : "string key after ','",
                        /*whole_word=*/true);
      }
      Pos key_pos = here();
      std::optional<std::string> key = parse_string();
      if (!key) return std::nullopt;
      if (!keys.insert(*key).second) return fail(key_pos, "duplicate key \"" + *key + "\"");
      skip_ws();
      if (!consume(':')) return expected("':' after object key");
      skip_ws();
      std::optional<JsonValue> v = parse_value(depth);
      if (!v) return std::nullopt;
      members.push_back({std::move(*key), key_pos, std::move(*v)});
      skip_ws();
      if (consume('}')) return JsonValue::object(std::move(members), pos);
      if (!consume(',')) return expected("',' or '}' after object member");
    }
  }

  std::optional<JsonValue> parse_number() {
    size_t start = i_;
    Pos pos = here();
    consume('-');
    if (at_end() || !is_digit(peek())) return expected("digit after '-'");
    Pos zero = here();
    if (consume('0')) {
      if (!at_end() && is_digit(peek())) return fail(zero, "leading zero in number");
    } else {
      skip_digits();
    }
    bool integral = true;
    if (consume('.')) {
      integral = false;
      if (at_end() || !is_digit(peek())) return expected("digit after '.'");
      skip_digits();
    }
    if (consume('e') || consume('E')) {
      integral = false;
      if (!consume('+')) consume('-');
      if (at_end() || !is_digit(peek())) return expected("digit in exponent");
      skip_digits();
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + i_;
    if (integral) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(first, last, v);
      if (ec == std::errc::result_out_of_range) return fail(pos, "integer out of range");
      REDLAB_ASSERT(ec == std::errc() && end == last);
      return JsonValue::integer(v, pos);
    }
    double d = 0;
    auto [end, ec] = std::from_chars(first, last, d);
    // Both overflow (1e400) and underflow to zero (1e-400) land here: neither is meant.
    if (ec == std::errc::result_out_of_range) return fail(pos, "number out of range");
    REDLAB_ASSERT(ec == std::errc() && end == last);
    return JsonValue::number(d, pos);
  }

  void skip_digits() {
    while (!at_end() && is_digit(peek())) i_++;
  }

  // At the opening quote; returns the decoded string (UTF-8).
  std::optional<std::string> parse_string() {
    Pos open = here();
    i_++;
    std::string out;
    for (;;) {
      // A raw line break inside a string almost always means a missing closing quote.
      if (at_end() || peek() == '\n' || peek() == '\r') return fail(open, "unterminated string");
      auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        i_++;
        return out;
      }
      if (c < 0x20) {
        return fail(here(), hex_code("unescaped control character U+%04X in string", c));
      }
      if (c == '\\') {
        std::optional<uint32_t> cp = parse_escape();
        if (!cp) return std::nullopt;
        append_utf8(out, *cp);
        continue;
      }
      size_t n = utf8_length(text_, i_);
      if (n == 0) return fail(here(), hex_code("invalid utf-8 byte 0x%02X in string", c));
      out.append(text_.substr(i_, n));
      i_ += n;
    }
  }

  // At a backslash inside a string; returns the code point it stands for.
  std::optional<uint32_t> parse_escape() {
    Pos esc = here();
    size_t esc_at = i_;
    i_++;
    if (at_end()) return expected("escape character");
    constexpr std::string_view kEscape = "\"\\/bfnrt", kMeaning = "\"\\/\b\f\n\r\t";
    if (size_t k = kEscape.find(peek()); k != std::string_view::npos) {
      i_++;
      return static_cast<unsigned char>(kMeaning[k]);
    }
    if (peek() != 'u') return fail(here(), "invalid escape character " + describe_char());
    i_++;
    std::optional<uint32_t> cp = hex4();
    if (!cp) return std::nullopt;
    auto lone = [&] {
      return fail(esc, "lone surrogate '" + std::string(text_.substr(esc_at, 6)) + "' in string");
    };
    if (*cp >= 0xDC00 && *cp <= 0xDFFF) return lone();
    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
      // UTF-16 pair: a high surrogate must be followed by an escaped low surrogate.
      if (text_.substr(i_, 2) != "\\u") return lone();
      i_ += 2;
      std::optional<uint32_t> low = hex4();
      if (!low) return std::nullopt;
      if (*low < 0xDC00 || *low > 0xDFFF) return lone();
      *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
    }
    return cp;
  }

  // The four hex digits after "\u".
  std::optional<uint32_t> hex4() {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
      if (at_end() || !is_hex(peek())) return expected("4 hex digits after '\\u'");
      char c = peek();
      v = v * 16 + (is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
      i_++;
    }
    return v;
  }

  std::string_view text_;
  JsonError* error_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;  // offset of the current line's first byte
};

}  // namespace

std::optional<JsonValue> parse_json(std::string_view text, JsonError* error) {
  return Parser(text, error).parse_document();
}

}  // namespace redlab::scenario
