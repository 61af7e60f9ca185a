// Which commands act on the whole server rather than on the caller's own keys: FLUSHALL,
// DEBUG, CONFIG SET, CLIENT PAUSE, SCRIPT FLUSH, SELECT, ... One list for the two places that
// must agree on it: the scenario engine, which refuses such a command in a scenario before a
// run on a server redlab does not own, and the real fabric, which refuses to send one there.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace redlab::fake {

// "DEBUG acts on the whole server", "COPY ... DB writes outside the run's database", or
// nullopt for a command that stays with its keys and its connection. Names are matched
// case-insensitively; a command this table does not know is not judged here.
std::optional<std::string> server_wide_command(const std::vector<std::string>& argv);

}  // namespace redlab::fake
