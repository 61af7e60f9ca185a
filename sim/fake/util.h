// Redis' own conversions, reproduced exactly: which strings are integers and floats, how
// numbers are printed back, and glob matching (KEYS, PSUBSCRIBE, CONFIG GET).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace redlab::fake
