// A RESP2 value: what a Redis server (fake or real) answers.
//
// One type serves the fake server, the real transport (hiredis replies are converted into it)
// and the client model, so that "byte-identical replies" can be checked by comparing two
// Reply values or their encodings. Two renderings are provided: the RESP2 wire bytes and the
// text `redis-cli --no-raw` prints (the reference output of the conformance tests).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace redlab {

struct Reply {
  enum class Kind : uint8_t { Status, Error, Integer, Bulk, Nil, Array, NilArray };

  Kind kind = Kind::Nil;
  int64_t integer = 0;
  std::string str;              // Status, Error, Bulk
  std::vector<Reply> elements;  // Array

  static Reply status(std::string s) { return Reply{Kind::Status, 0, std::move(s), {}}; }
  static Reply ok() { return status("OK"); }
  static Reply error(std::string s) { return Reply{Kind::Error, 0, std::move(s), {}}; }
  static Reply integer_reply(int64_t v) { return Reply{Kind::Integer, v, {}, {}}; }
  static Reply bulk(std::string s) { return Reply{Kind::Bulk, 0, std::move(s), {}}; }
  static Reply bulk(std::string_view s) { return Reply{Kind::Bulk, 0, std::string(s), {}}; }
  static Reply bulk(const char* s) { return Reply{Kind::Bulk, 0, std::string(s), {}}; }
  static Reply nil() { return Reply{}; }
  static Reply nil_array() { return Reply{Kind::NilArray, 0, {}, {}}; }
  static Reply array(std::vector<Reply> e = {}) { return Reply{Kind::Array, 0, {}, std::move(e)}; }

  bool is_error() const { return kind == Kind::Error; }
  bool operator==(const Reply&) const = default;
};

// RESP2 wire encoding ("+OK\r\n", "$3\r\nfoo\r\n", ...).
std::string to_resp(const Reply& reply);
void append_resp(std::string& out, const Reply& reply);
// to_resp(reply).size() without building the string (output-buffer accounting counts every
// message a subscriber is sent, and those may be megabytes).
size_t resp_size(const Reply& reply);

// Exactly what `redis-cli --no-raw` prints for this reply (cliFormatReplyTTY), including the
// trailing newline.
std::string format_cli(const Reply& reply);

// redis-cli's quoting of a bulk string (sdscatrepr): "..." with \n \r \t \a \b \\ \" and \xHH.
std::string quote_repr(std::string_view s);
// quote_repr's escapes without the quotes, appended to out.
void append_repr_escaped(std::string& out, std::string_view s);

// A one-line rendering for timelines and traces: OK, (integer) 3, "foo", (nil), [a b c].
std::string format_short(const Reply& reply, size_t max_chars = 120);

// GoogleTest prints a Reply with this (readable failures instead of object bytes).
void PrintTo(const Reply& reply, std::ostream* os);

}  // namespace redlab
