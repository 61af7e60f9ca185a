// sim/scenario/json: values and their positions, strictness (every rejected form with the
// exact line:column of the offending character), escapes, integer range, nesting limit, BOM.
#include "sim/scenario/json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace redlab::scenario {
namespace {

std::string at(Pos p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

JsonValue parse_ok(std::string_view text) {
  JsonError err;
  std::optional<JsonValue> v = parse_json(text, &err);
  if (!v) {
    ADD_FAILURE() << "parse of `" << text << "` failed: " << at(err.pos) << ": " << err.message;
    return JsonValue();
  }
  return *v;
}

// "line:column: message", so one comparison shows all three on a mismatch.
std::string parse_error(std::string_view text) {
  JsonError err;
  if (parse_json(text, &err)) return "(parsed)";
  return at(err.pos) + ": " + err.message;
}

TEST(JsonParse, ScalarsOfEveryType) {
  EXPECT_TRUE(parse_ok("null").is_null());
  EXPECT_TRUE(parse_ok("true").as_bool());
  EXPECT_FALSE(parse_ok("false").as_bool());
  EXPECT_EQ(parse_ok("42").as_int(), 42);
  EXPECT_EQ(parse_ok("-7").as_int(), -7);
  EXPECT_EQ(parse_ok("1.5").as_double(), 1.5);
  EXPECT_EQ(parse_ok(R"("hi")").as_string(), "hi");
  EXPECT_EQ(parse_ok(R"("")").as_string(), "");
  EXPECT_TRUE(parse_ok("[]").items().empty());
  EXPECT_TRUE(parse_ok("{}").members().empty());
  EXPECT_TRUE(parse_ok(" [ ] ").is_array());

  using T = JsonValue::Type;
  EXPECT_EQ(parse_ok("null").type(), T::Null);
  EXPECT_EQ(parse_ok("true").type(), T::Bool);
  EXPECT_EQ(parse_ok("3").type(), T::Int);
  EXPECT_EQ(parse_ok("3.0").type(), T::Double);
  EXPECT_EQ(parse_ok("\"3\"").type(), T::String);
  EXPECT_EQ(parse_ok("[3]").type(), T::Array);
  EXPECT_EQ(parse_ok("{}").type(), T::Object);
  EXPECT_STREQ(JsonValue::type_name(T::Null), "null");
  EXPECT_STREQ(JsonValue::type_name(T::Bool), "boolean");
  EXPECT_STREQ(JsonValue::type_name(T::Int), "integer");
  EXPECT_STREQ(JsonValue::type_name(T::Double), "number");
  EXPECT_STREQ(JsonValue::type_name(T::String), "string");
  EXPECT_STREQ(JsonValue::type_name(T::Array), "array");
  EXPECT_STREQ(JsonValue::type_name(T::Object), "object");
}

void check_document_positions(std::string_view text) {
  JsonValue root = parse_ok(text);
  ASSERT_TRUE(root.is_object());
  EXPECT_EQ(at(root.pos()), "1:1");
  const auto& m = root.members();
  ASSERT_EQ(m.size(), 3u);
  // File order, which here is not sorted order.
  EXPECT_EQ(m[0].key, "name");
  EXPECT_EQ(m[1].key, "steps");
  EXPECT_EQ(m[2].key, "ratio");
  EXPECT_EQ(at(m[0].key_pos), "2:3");
  EXPECT_EQ(at(m[0].value.pos()), "2:11");
  EXPECT_EQ(m[0].value.as_string(), "lost-update");
  EXPECT_EQ(at(m[1].key_pos), "3:3");
  const JsonValue& steps = m[1].value;
  EXPECT_EQ(at(steps.pos()), "3:12");
  ASSERT_EQ(steps.items().size(), 2u);
  EXPECT_EQ(at(steps.items()[0].pos()), "3:13");
  const JsonValue& inner = steps.items()[1];
  EXPECT_EQ(at(inner.pos()), "4:5");
  ASSERT_EQ(inner.members().size(), 1u);
  EXPECT_EQ(at(inner.members()[0].key_pos), "4:6");
  EXPECT_EQ(at(inner.members()[0].value.pos()), "4:11");
  EXPECT_TRUE(inner.members()[0].value.is_null());
  EXPECT_EQ(at(m[2].key_pos), "5:3");
  EXPECT_EQ(at(m[2].value.pos()), "5:12");
  EXPECT_EQ(m[2].value.as_double(), -0.25);
}

TEST(JsonParse, PositionsOfNestedValuesAndKeys) {
  check_document_positions(
      "{\n"
      "  \"name\": \"lost-update\",\n"
      "  \"steps\": [1,\n"
      "    {\"k\": null}],\n"
      "  \"ratio\": -2.5e-1\n"
      "}\n");
}

TEST(JsonParse, CrLfLineEndsGiveTheSamePositions) {
  check_document_positions(
      "{\r\n"
      "  \"name\": \"lost-update\",\r\n"
      "  \"steps\": [1,\r\n"
      "    {\"k\": null}],\r\n"
      "  \"ratio\": -2.5e-1\r\n"
      "}\r\n");
}

TEST(JsonParse, ColumnsCountUtf8Bytes) {
  // "é" is two bytes, so x is at byte column 8 though it is the 7th character.
  EXPECT_EQ(parse_error("[\"\xC3\xA9\", x]"), "1:8: expected value, found 'x'");
  JsonValue v = parse_ok("[\"\xC3\xA9\", 1]");
  EXPECT_EQ(at(v.items()[1].pos()), "1:8");
}

TEST(JsonParse, MemberOrderKeptAndFind) {
  JsonValue v = parse_ok(R"({"z": 1, "a": 2, "m": {"a": 3}})");
  ASSERT_EQ(v.members().size(), 3u);
  EXPECT_EQ(v.members()[0].key, "z");
  EXPECT_EQ(v.members()[1].key, "a");
  EXPECT_EQ(v.members()[2].key, "m");
  ASSERT_NE(v.find("a"), nullptr);
  EXPECT_EQ(v.find("a")->as_int(), 2);
  EXPECT_EQ(v.find("z")->as_int(), 1);
  EXPECT_EQ(v.find("b"), nullptr);
  EXPECT_EQ(v.find(""), nullptr);
  EXPECT_EQ(v.find("zz"), nullptr);
  ASSERT_NE(v.find("m"), nullptr);
  EXPECT_EQ(v.find("m")->find("a")->as_int(), 3);
}

TEST(JsonParse, SeparatorErrors) {
  EXPECT_EQ(parse_error(R"({"a": 1 "b": 2})"),
            "1:9: expected ',' or '}' after object member, found '\"'");
  EXPECT_EQ(parse_error("[1 2]"), "1:4: expected ',' or ']' after array element, found '2'");
  EXPECT_EQ(parse_error(R"({"a" 1})"), "1:6: expected ':' after object key, found '1'");
  EXPECT_EQ(parse_error("{a: 1}"), "1:2: expected string key or '}', found 'a'");
  EXPECT_EQ(parse_error("{'a': 1}"), "1:2: expected string key or '}', found '''");
  EXPECT_EQ(parse_error("{\xE2\x80\x9C"
                        "a\xE2\x80\x9D: 1}"),
            "1:2: expected string key or '}', found '\xE2\x80\x9C'");
}

TEST(JsonParse, TrailingCommasAndCommentsRejected) {
  EXPECT_EQ(parse_error(R"({"a": 1,})"), "1:9: expected string key after ',', found '}'");
  EXPECT_EQ(parse_error("[1,]"), "1:4: expected value, found ']'");
  EXPECT_EQ(parse_error("[1, 2,\n]"), "2:1: expected value, found ']'");
  EXPECT_EQ(parse_error("[,]"), "1:2: expected value, found ','");
  EXPECT_EQ(parse_error("{\n  // note\n}"), "2:3: expected string key or '}', found '/'");
  EXPECT_EQ(parse_error("/* c */ 1"), "1:1: expected value, found '/'");
}

TEST(JsonParse, BadLiteralsRejected) {
  EXPECT_EQ(parse_error("[NaN]"), "1:2: expected value, found 'NaN'");
  EXPECT_EQ(parse_error("Infinity"), "1:1: expected value, found 'Infinity'");
  EXPECT_EQ(parse_error("-Infinity"), "1:2: expected digit after '-', found 'I'");
  EXPECT_EQ(parse_error("True"), "1:1: expected value, found 'True'");
  EXPECT_EQ(parse_error("[truex]"), "1:2: expected value, found 'truex'");
  EXPECT_EQ(parse_error("nul"), "1:1: expected value, found 'nul'");
  EXPECT_EQ(parse_error("\x01"), "1:1: expected value, found control character U+0001");
  EXPECT_EQ(parse_error("\xFF"), "1:1: expected value, found invalid utf-8 byte 0xFF");
}

TEST(JsonParse, NumberSyntaxErrors) {
  EXPECT_EQ(parse_error("[01]"), "1:2: leading zero in number");
  EXPECT_EQ(parse_error("-012"), "1:2: leading zero in number");
  EXPECT_EQ(parse_error("1.e5"), "1:3: expected digit after '.', found 'e'");
  EXPECT_EQ(parse_error("1.\n"), "1:3: expected digit after '.', found end of line");
  EXPECT_EQ(parse_error("1e+x"), "1:4: expected digit in exponent, found 'x'");
  EXPECT_EQ(parse_error(".5"), "1:1: expected value, found '.'");
  EXPECT_EQ(parse_error("+1"), "1:1: expected value, found '+'");
  EXPECT_EQ(parse_error("- 1"), "1:2: expected digit after '-', found ' '");
  EXPECT_EQ(parse_error("0x10"), "1:2: trailing characters after the document");
  // A lone 0 and 0.x are fine; only a digit after a leading 0 is not.
  EXPECT_EQ(parse_ok("0").as_int(), 0);
  EXPECT_EQ(parse_ok("-0.5").as_double(), -0.5);
}

TEST(JsonParse, UnexpectedEndOfInput) {
  EXPECT_EQ(parse_error(""), "1:1: unexpected end of input");
  EXPECT_EQ(parse_error("  \n  "), "2:3: unexpected end of input");
  EXPECT_EQ(parse_error(R"({"a": [1, 2)"), "1:12: unexpected end of input");
  EXPECT_EQ(parse_error(R"({"a")"), "1:5: unexpected end of input");
  EXPECT_EQ(parse_error("{\n"), "2:1: unexpected end of input");
  EXPECT_EQ(parse_error("-"), "1:2: unexpected end of input");
  EXPECT_EQ(parse_error("1."), "1:3: unexpected end of input");
  EXPECT_EQ(parse_error("1e"), "1:3: unexpected end of input");
  EXPECT_EQ(parse_error(R"("\u12)"), "1:6: unexpected end of input");
  EXPECT_EQ(parse_error("\"\\"), "1:3: unexpected end of input");
  // A null error pointer is allowed.
  EXPECT_FALSE(parse_json("[", nullptr));
}

TEST(JsonParse, TrailingCharacters) {
  EXPECT_EQ(parse_error("{} {}"), "1:4: trailing characters after the document");
  EXPECT_EQ(parse_error("1 2"), "1:3: trailing characters after the document");
  EXPECT_EQ(parse_error("[1]\n]"), "2:1: trailing characters after the document");
  EXPECT_TRUE(parse_json("[1] \n\t\r\n", nullptr));
}

TEST(JsonParse, StringErrors) {
  EXPECT_EQ(parse_error(R"({"a": "abc)"), "1:7: unterminated string");
  // A raw line break means a missing closing quote: point at the string that was left open.
  EXPECT_EQ(parse_error("{\"a\": \"abc,\n \"b\": 1}"), "1:7: unterminated string");
  EXPECT_EQ(parse_error("\"a\tb\""), "1:3: unescaped control character U+0009 in string");
  EXPECT_EQ(parse_error("\"a\x1F\""), "1:3: unescaped control character U+001F in string");
  EXPECT_EQ(parse_error(R"("a\x")"), "1:4: invalid escape character 'x'");
  EXPECT_EQ(parse_error(R"("\U0041")"), "1:3: invalid escape character 'U'");
  EXPECT_EQ(parse_error(R"("\u12G4")"), "1:6: expected 4 hex digits after '\\u', found 'G'");
  EXPECT_EQ(parse_ok("\"a\x7F\"").as_string(), "a\x7F");  // DEL is not a control character
}

TEST(JsonParse, InvalidUtf8InStringsRejected) {
  EXPECT_EQ(parse_error("\"\xC3\x28\""), "1:2: invalid utf-8 byte 0xC3 in string");
  EXPECT_EQ(parse_error("\"a\xC0\xAF\""), "1:3: invalid utf-8 byte 0xC0 in string");  // overlong
  EXPECT_EQ(parse_error("\"\xE0\x80\xAF\""), "1:2: invalid utf-8 byte 0xE0 in string");
  EXPECT_EQ(parse_error("\"\xED\xA0\x80\""), "1:2: invalid utf-8 byte 0xED in string");
  EXPECT_EQ(parse_error("\"\xF4\x90\x80\x80\""), "1:2: invalid utf-8 byte 0xF4 in string");
  EXPECT_EQ(parse_error("\"\x80\""), "1:2: invalid utf-8 byte 0x80 in string");
  EXPECT_EQ(parse_error("\"\xE2\x82"), "1:2: invalid utf-8 byte 0xE2 in string");  // truncated
  // Well-formed 2, 3 and 4 byte sequences pass through unchanged.
  EXPECT_EQ(parse_ok("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\"").as_string(),
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
}

TEST(JsonParse, DuplicateKeys) {
  EXPECT_EQ(parse_error("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}"), "3:2: duplicate key \"a\"");
  // Keys are compared after unescaping.
  EXPECT_EQ(parse_error(R"({"a": 1, "\u0061": 2})"), "1:10: duplicate key \"a\"");
  // The same key in different objects is fine.
  JsonValue v = parse_ok(R"({"a": {"a": 1}, "b": {"a": 2}})");
  EXPECT_EQ(v.find("b")->find("a")->as_int(), 2);
}

TEST(JsonParse, Escapes) {
  EXPECT_EQ(parse_ok(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(parse_ok(R"("\u0041\u00e9\u20AC")").as_string(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse_ok(R"("\u0000")").as_string(), std::string(1, '\0'));
  // Surrogate pairs become one 4-byte UTF-8 sequence.
  EXPECT_EQ(parse_ok(R"("\uD83D\uDE00")").as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse_ok(R"("\udbff\udfff")").as_string(), "\xF4\x8F\xBF\xBF");
}

TEST(JsonParse, LoneSurrogatesRejected) {
  EXPECT_EQ(parse_error(R"("\uD800")"), "1:2: lone surrogate '\\uD800' in string");
  EXPECT_EQ(parse_error(R"("x\uDC00y")"), "1:3: lone surrogate '\\uDC00' in string");
  EXPECT_EQ(parse_error(R"("\uD83Dx")"), "1:2: lone surrogate '\\uD83D' in string");
  EXPECT_EQ(parse_error(R"("\uD83D\u0041")"), "1:2: lone surrogate '\\uD83D' in string");
  EXPECT_EQ(parse_error(R"("\uD800\uD800")"), "1:2: lone surrogate '\\uD800' in string");
  EXPECT_EQ(parse_error(R"("\uDE00\uD83D")"), "1:2: lone surrogate '\\uDE00' in string");
}

TEST(JsonParse, Int64RangeAndOverflow) {
  JsonValue max = parse_ok("9223372036854775807");
  ASSERT_TRUE(max.is_int());
  EXPECT_EQ(max.as_int(), std::numeric_limits<int64_t>::max());
  JsonValue min = parse_ok("-9223372036854775808");
  ASSERT_TRUE(min.is_int());
  EXPECT_EQ(min.as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parse_error("9223372036854775808"), "1:1: integer out of range");
  EXPECT_EQ(parse_error("-9223372036854775809"), "1:1: integer out of range");
  EXPECT_EQ(parse_error(R"({"d": 99999999999999999999})"), "1:7: integer out of range");
  // With a fraction or exponent the same magnitude is an ordinary double.
  EXPECT_EQ(parse_ok("9223372036854775808.0").as_double(), 9223372036854775808.0);
  EXPECT_EQ(parse_ok("-0").as_int(), 0);
}

TEST(JsonParse, Doubles) {
  EXPECT_EQ(parse_ok("0.1").as_double(), 0.1);  // correctly rounded, not approximately
  EXPECT_EQ(parse_ok("-2.5E+3").as_double(), -2500.0);
  JsonValue e = parse_ok("1e2");
  EXPECT_TRUE(e.is_number());
  EXPECT_FALSE(e.is_int());
  EXPECT_EQ(e.as_double(), 100.0);
  EXPECT_EQ(parse_ok("1E-2").as_double(), 0.01);
  EXPECT_EQ(parse_ok("4.9e-324").as_double(), std::numeric_limits<double>::denorm_min());
  // An Int is also a number.
  JsonValue i = parse_ok("3");
  EXPECT_TRUE(i.is_number());
  EXPECT_EQ(i.as_double(), 3.0);
  EXPECT_EQ(parse_error("[1e400]"), "1:2: number out of range");
  EXPECT_EQ(parse_error("1e-400"), "1:1: number out of range");
}

TEST(JsonParse, NestingLimit) {
  std::string ok = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(parse_json(ok, nullptr));
  std::string deep = std::string(257, '[') + std::string(257, ']');
  EXPECT_EQ(parse_error(deep), "1:257: nesting too deep");

  std::string objects;
  for (int i = 0; i < 256; i++) objects += "{\"a\":";
  EXPECT_TRUE(parse_json(objects + "1" + std::string(256, '}'), nullptr));
  EXPECT_EQ(parse_error(objects + "{\"a\":1" + std::string(257, '}')), "1:1281: nesting too deep");

  // Far deeper input is rejected at the limit, not by overflowing the stack.
  EXPECT_EQ(parse_error(std::string(1000000, '[')), "1:257: nesting too deep");
}

TEST(JsonParse, ByteOrderMarkSkipped) {
  JsonValue v = parse_ok("\xEF\xBB\xBF{\"a\": 1}");
  EXPECT_EQ(at(v.pos()), "1:1");
  EXPECT_EQ(at(v.find("a")->pos()), "1:7");
  EXPECT_EQ(parse_error("\xEF\xBB\xBF"), "1:1: unexpected end of input");
  // Only at the very start: elsewhere it is an unexpected character.
  EXPECT_EQ(parse_error(" \xEF\xBB\xBF"
                        "1"),
            "1:2: expected value, found '\xEF\xBB\xBF'");
}

}  // namespace
}  // namespace redlab::scenario
