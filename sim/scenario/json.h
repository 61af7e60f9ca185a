// A small strict JSON (RFC 8259) parser that remembers where every value came from.
//
// Scenario files are written by hand, so a mistake must be reported as file:line:column
// with the JSON path; nlohmann/json keeps no per-value positions, hence this parser. It is
// strict on purpose: no comments, trailing commas, NaN or leading zeros, and an integer
// literal that does not fit int64 is an error rather than a silent double (durations are
// integers, and 2^63 ns turning into a rounded double would hide the mistake).
//
// Positions are 1-based lines and columns, columns counting UTF-8 bytes like gcc does. Only
// '\n' starts a line ("\r\n" works because '\r' is just whitespace before it). A UTF-8 BOM at
// the start is skipped and not counted in columns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::scenario {

struct Pos {
  int line = 1;
  int column = 1;
};

class JsonValue {
 public:
  enum class Type { Null, Bool, Int, Double, String, Array, Object };
  struct Member;  // defined below: it holds a JsonValue, which is incomplete here

  JsonValue() = default;  // null at 1:1
  static JsonValue null(Pos pos);
  static JsonValue boolean(bool b, Pos pos);
  static JsonValue integer(int64_t i, Pos pos);
  static JsonValue number(double d, Pos pos);
  static JsonValue string(std::string s, Pos pos);
  static JsonValue array(std::vector<JsonValue> items, Pos pos);
  static JsonValue object(std::vector<Member> members, Pos pos);

  Type type() const { return type_; }
  Pos pos() const { return pos_; }  // position of the value's first character

  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_int() const { return type_ == Type::Int; }
  bool is_number() const { return type_ == Type::Int || type_ == Type::Double; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  // The accessors assert the type (check it first: a wrong type in a file is an input error
  // to report, not a crash). as_double() also accepts an Int.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const std::vector<JsonValue>& items() const;        // array elements
  const std::vector<Member>& members() const;         // object members in file order
  const JsonValue* find(std::string_view key) const;  // object member; nullptr if absent

  // "null", "boolean", "integer", "number", "string", "array", "object".
  static const char* type_name(Type t);

 private:
  // One field per kind rather than a variant: documents are small and this stays obvious.
  Type type_ = Type::Null;
  Pos pos_;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

struct JsonValue::Member {
  std::string key;
  Pos key_pos;  // position of the key's opening quote
  JsonValue value;
};

struct JsonError {
  Pos pos;
  std::string message;
};

// Parses a whole document. On error returns nullopt and fills *error (if not null) with the
// position of the offending character and a short lowercase message. Never throws on bad
// input; nesting deeper than 256 arrays/objects is the error "nesting too deep".
std::optional<JsonValue> parse_json(std::string_view text, JsonError* error);

}  // namespace redlab::scenario
