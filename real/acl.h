// The run's own ACL user: on a server redlab did not start, the SERVER keeps a run inside its
// corner (DESIGN.md "Real servers: safety", docs/real-backend.md).
//
// Key prefixing (real/key_prefix.h) rewrites what redlab sends, but a Lua script computes its
// own command names and key names ('FLUSH' .. 'ALL', ARGV[1]), and no text scan can follow
// that. So at the start of a run on a user's server the backend creates an ACL user of its own
// (Redis 6.2+, Valkey) and every connection of the run's clients authenticates as it:
//
//   ACL SETUSER redlab-<run-id> reset on ><random password> resetkeys ~redlab:<run-id>:*
//       resetchannels &redlab:<run-id>:* -@all +get +set ... (run_user_commands())
//
// Then the server itself answers NOPERM to a command outside the list (FLUSHALL, KEYS,
// SELECT, SWAPDB ...) and to a key or channel outside the prefix, whoever computes it: a raw
// command, a script, a script inside MULTI. (CONFIG, DEBUG, SCRIPT from a script Redis refuses
// to every script before its ACL looks: is_noscript_refusal().) The list is explicit (no category
// is added whole): the data-type commands of the fake's table that act on their keys, the
// transaction and pub/sub commands, EVAL/EVALSHA (+ _RO), SCRIPT LOAD/EXISTS, and a few
// connection commands; nothing of @admin or @dangerous (tests/unit/real_backend_test.cpp
// checks that against the server's own ACL CAT). Deliberately left out although they name
// keys: KEYS and SCAN (their pattern is no key, an ACL cannot limit it: redlab's own cleanup
// scans on the admin connection), MOVE, COPY (COPY ... DB), SORT (BY/GET patterns).
//
// What a server cannot stop and redlab must: a connection may always AUTH, HELLO ... AUTH or
// RESET (they are no-auth commands, which the ACL does not check) and so become another user,
// the default user included. Scripts cannot call them (no-script); the fabric never sends them
// for a client on a URL backend (refused_identity_command()).
//
// Everything here is pure (no sockets): the fuzz target tests/fuzz/prefix_acl_fuzz.cpp checks
// that every command of the list is one key_prefix knows how to put under the prefix.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::real {

using AclArgv = std::vector<std::string>;

// The commands the run user may run, lower case, "name" or "name|sub" (ACL syntax).
const std::vector<std::string>& run_user_commands();

// The ACL rule name of a server-wide command a fault needs, lower case: {"DEBUG", "SLEEP"} ->
// "debug|sleep", {"SCRIPT", "FLUSH"} -> "script|flush", {"FLUSHALL"} -> "flushall". A command
// with no sub-command word gives its name alone. "" for an empty argv.
std::string acl_rule_name(const AclArgv& name_and_sub);

// The rules the run user gets for the server-wide commands a scenario's faults and steps
// send (RunNeeds::server_commands: {"DEBUG", "SLEEP"}, {"SCRIPT", "FLUSH"}, {"FLUSHALL"}),
// each once, in order. A container whose sub-command is not known ({"DEBUG"}: computed by a
// template) gets nothing: "+debug" would allow every DEBUG sub-command.
std::vector<std::string> fault_rules(const std::vector<std::vector<std::string>>& commands);

// Whether argv's command is in run_user_commands() or in extra (rule names as above): its name,
// or its name|sub-command for a container (CLIENT, SCRIPT, CONFIG, DEBUG ...).
bool run_user_may(const AclArgv& argv, const std::vector<std::string>& extra = {});

// Without an ACL user (credentials that cannot create one), what key prefixing alone can keep
// inside the prefix: run_user_may() without Lua (EVAL, EVALSHA, SCRIPT LOAD ...: a script
// computes its keys), plus extra.
bool prefix_only_may(const AclArgv& argv, const std::vector<std::string>& extra = {});

struct RunUser {
  std::string name;      // "redlab-<run-id>"
  std::string password;  // 32 random hex digits; never printed, traced or logged
};
RunUser make_run_user(std::string_view run_id);

// The ACL glob pattern that matches exactly the names that start with prefix: the prefix with
// the glob's special characters (* ? [ ] \) escaped, then "*" (Redis' stringmatchlen, which
// the server matches key and channel patterns with, takes "\x" as a literal x). A run id is
// hex, so today nothing is escaped; the escape keeps the rule true for any prefix.
std::string acl_prefix_pattern(std::string_view prefix);

// The ACL SETUSER command that creates the run user: only its prefix's keys and channels, and
// exactly the given commands (rule names; run_user_commands() plus what the faults need). db
// (the URL's database) other than 0 adds "+select|<db>", the one SELECT the connection's
// handshake sends.
AclArgv acl_setuser_argv(const RunUser& user, std::string_view key_prefix, int db,
                         const std::vector<std::string>& commands);

// Whether a command has sub-commands (CLIENT, CONFIG, DEBUG, SCRIPT, ...): its rule without a
// sub-command ("+debug") would allow every one of them.
bool is_container_command(std::string_view name);

// Whether argv runs a Lua script or a function (EVAL, EVALSHA, their _RO forms, FCALL,
// FCALL_RO): a script that does not end holds the whole server.
bool is_script_command(const AclArgv& argv);

// The rule an "ACL SETUSER" error names: "ERR Error in ACL SETUSER modifier '+lmpop': Unknown
// command or category name in ACL" -> "+lmpop" (a server older than the fake's command table
// does not know LMPOP); "" when the error names none.
std::string setuser_error_rule(std::string_view error);

// Whether an error reply is the server refusing the run user by its ACL: "NOPERM ..." (a
// command, a key, a channel at top level), and what a script gets from redis.call: "ERR The
// user executing the script can't ..." / "... is lacking the permissions ..." (Redis 6.2, 7.0:
// src/script.c scriptVerifyACL), "ERR ACL failure in script: ..." (Redis 7.2+, Valkey).
bool is_acl_refusal(std::string_view error);
// Whether an error reply is the server refusing a command no script may call (CONFIG, DEBUG,
// SCRIPT, ...: flag noscript), "ERR This Redis command is not allowed from script" (7.0;
// "... from scripts" in 6.2). Redis checks that before the ACL (src/script.c scriptCall), so
// such a call leaves no ACL LOG entry.
bool is_noscript_refusal(std::string_view error);
// The script a refusal inside a script names ("... script: <40 hex digits>, on
// @user_script:1."): its SHA-1, or "" when the text names none.
std::string script_sha_in(std::string_view error);
// The line of the script a refusal names ("... on @user_script:12."): 12, or 0 when none.
int script_line_in(std::string_view error);
// The command a refusal names ("... run the 'flushall' command", "... 'script|flush' ..."),
// upper case with a blank for '|' ("SCRIPT FLUSH"); "" when it names none.
std::string refused_command_in(std::string_view error);

// A command a client of a run on a user's server may never send, since the server would let
// it change the connection's user (AUTH, HELLO ... AUTH, RESET): why, or nullopt.
std::optional<std::string> refused_identity_command(const AclArgv& argv);

// Last resort for a second Ctrl-C, which ends redlab at once: the handler (app/backend.cpp)
// calls emergency_write(), which writes the prepared bytes (an "ACL DELUSER" in RESP) to the
// registered socket. Only send() runs there (async-signal-safe; MSG_NOSIGNAL, so a socket the
// server closed does not end redlab by SIGPIPE instead). A slot holds at most
// kEmergencyBytesMax bytes; register returns the slot, or -1 when all are taken.
constexpr size_t kEmergencySlots = 4;
constexpr size_t kEmergencyBytesMax = 256;
int register_emergency_write(int fd, std::string_view bytes);
void unregister_emergency_write(int slot);
void emergency_write() noexcept;

}  // namespace redlab::real
