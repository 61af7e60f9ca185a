// Redis' own conversions, reproduced exactly: which strings are integers and floats, how
// numbers are printed back, and glob matching (KEYS, PSUBSCRIBE, CONFIG GET). Also the short
// rendering of a value that the server's key events carry (value_summary).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/fake/types.h"

namespace redlab::fake {

// string2ll: no blanks, no '+', no leading zeros, must fit int64.
std::optional<int64_t> parse_int64(std::string_view s);
// string2ld/strtod as getDoubleFromObject uses it: no leading blank, whole string consumed,
// no NaN; "inf" and "-inf" accepted.
std::optional<double> parse_double(std::string_view s);
// string2ld as INCRBYFLOAT/HINCRBYFLOAT parse (strtold, long double precision).
std::optional<long double> parse_long_double(std::string_view s);
// A double as Redis 7.0 replies it (RESP2 addReplyDouble: "%.17g", inf/-inf).
std::string format_double(double d);
// A double as INCRBYFLOAT/HINCRBYFLOAT store it ("%.17Lf" with trailing zeros trimmed).
std::string format_long_double(long double d);

// stringmatchlen: *, ?, [...] with ranges and ^, backslash escapes; optionally case-blind.
bool glob_match(std::string_view pattern, std::string_view str, bool nocase = false);

std::string to_lower(std::string_view s);
bool equals_nocase(std::string_view a, std::string_view b);

// TYPE's answer for a value type: "string", "list", "hash", "set", "zset", "stream".
const char* type_name(ValueType t);

// Bounds of value_summary.
inline constexpr size_t kSummaryStringBytesMax = 200;  // a string value: longer ones are cut
inline constexpr size_t kSummaryElementBytesMax = 64;  // one element inside a container
inline constexpr size_t kSummaryItemsMax = 10;         // elements shown of a container

// A short, deterministic, printable rendering of a value, for the trace's key events (and
// whoever rebuilds a keyspace from them, which compares with this function's output):
//   string  its bytes, non-printable ones escaped as redis-cli quotes them (\n, \xHH, ...);
//           past 200 bytes the first 200 and "... (N bytes)"
//   list    [a, b, c]            in list order
//   hash    {f1: v1, f2: v2}     by field, byte order
//   set     {a, b, c}            byte order
//   zset    {m1: 1, m2: 2.5}     by score, then member (ZRANGE order); shortest exact scores
//   stream  3 entries, last 5-0  (the last entry's ID; "0 entries" when there is none)
// A container shows at most 10 elements, each cut at 64 bytes, then ", ... (N items)" (list),
// "(N fields)" (hash) or "(N members)" (set, zset), N being the total.
std::string value_summary(const Value& value);

// value_summary of a string value, without building a Value.
std::string string_summary(std::string_view bytes, size_t bytes_max = kSummaryStringBytesMax);

}  // namespace redlab::fake
