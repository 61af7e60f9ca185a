// Keeping a run inside its own corner of a real server (DESIGN.md, "Real servers: safety").
//
// Every key, key pattern and pub/sub channel a run names is rewritten to live under
// `redlab:<run-id>:` before it leaves the process, and the prefix is stripped from what comes
// back, so the client model and the trace see the scenario's own names, exactly as with the
// fake. The prefix has no braces, so a hash tag inside a key ({user1}:a) still picks the same
// slot for all the keys that share it.
//
// Which arguments are keys comes from the fake server's command table (the same first_key /
// last_key / key_step data Redis' command table has), plus the commands whose keys the table
// cannot describe: numkeys forms (EVAL, FCALL, ZUNION, LMPOP, ...), XREAD's STREAMS, SORT's
// patterns, KEYS and SCAN MATCH patterns, and pub/sub channels. Commands that act on the
// whole server or on every key (FLUSHALL, DEBUG, CLIENT PAUSE, SELECT, ...) cannot be kept
// inside a prefix: server_wide_command() names them, and the fabric refuses them on a server
// redlab does not own. A command the table does not know is treated the same way, since its
// keys cannot be found.
//
// Limits: a Lua script that builds key names from ARGV instead of using KEYS[] escapes the
// prefix (the seeds' scripts do not); a value that starts with the prefix is stripped too.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/reply.h"

namespace redlab::real {

using Argv = std::vector<std::string>;

// 16 random hex digits (std::random_device: a real run is not deterministic anyway).
std::string make_run_id();
// "redlab:<run_id>:"
std::string key_prefix_for(std::string_view run_id);

// argv with every key, key pattern and channel under prefix. The command name and the other
// arguments are unchanged; an unknown command is returned unchanged.
Argv prefix_argv(const Argv& argv, std::string_view prefix);

// reply with prefix stripped from every status and bulk string that starts with it, at any
// depth (BLPOP's key, XREAD's stream names, pub/sub channels, KEYS and SCAN results).
Reply unprefix_reply(Reply reply, std::string_view prefix);

// Whether argv reaches outside the run's keys. nullopt for an ordinary command; otherwise a
// short reason naming the command, e.g. "FLUSHALL touches every key", "CLIENT PAUSE is
// server-wide", "FOO is not in redlab's command table (its keys cannot be prefixed)".
std::optional<std::string> server_wide_command(const Argv& argv);

}  // namespace redlab::real
