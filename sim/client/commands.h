// What the client model needs to know about a command by its name: whether it blocks, and
// for how long. go-redis gives such commands their own read timeout (cmd.setReadTimeout in
// commands.go: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, XREAD
// and XREADGROUP with BLOCK, WAIT), and redis.go's cmdTimeout reads them with that timeout
// + 10 s, or with no deadline at all for a timeout of 0 (wait forever).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/clock.h"

namespace redlab::client {

// nullopt: not a blocking command. Otherwise the command's own timeout (0 = forever).
// Unparsable timeouts count as 0: the server will answer with an error at once anyway.
std::optional<TimeUs> blocking_timeout_us(const std::vector<std::string>& argv);

// "1.5" seconds -> 1500000 us, exactly, without floating point. nullopt if not a plain
// non-negative decimal.
std::optional<TimeUs> parse_seconds_us(const std::string& text);

}  // namespace redlab::client
