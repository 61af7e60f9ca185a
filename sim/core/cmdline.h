// redis-cli's line splitting (sdssplitargs): blanks separate arguments, "double quotes" take
// \n \r \t \b \a \xHH and \<any> escapes, 'single quotes' take only \', and a closing quote
// must be followed by a blank or the end of the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab {

// Returns the arguments, or nullopt for unbalanced quotes or a closing quote followed by
// something other than a blank (redis-cli answers those with "Invalid argument(s)").
// A NUL byte ends the line, as it does in the C original.
std::optional<std::vector<std::string>> split_args(std::string_view line);

// The other way: a command line for people (traces, timelines). Words joined by blanks,
// quoted with redis-cli's "..." rendering where needed, cut to max_chars (then "...").
std::string command_line(const std::vector<std::string>& argv, size_t max_chars = 120);

}  // namespace redlab
