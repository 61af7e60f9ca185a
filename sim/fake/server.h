// The deterministic fake Redis server.
//
// Like the real one it is single-threaded: commands from all connections queue at the server
// and are served one at a time, each taking a modelled service time of virtual time, so a
// DEBUG SLEEP or a slow script delays everyone else. Nothing here reads the wall clock: the
// host says what time it is (submit/advance), and the server reports what it sends and when
// (take_outputs). Keys expire on the server's own clock (virtual time plus an offset that a
// fault can jump), lazily on access and actively at the exact moment of expiry, so an expiry
// shows on a timeline when it happens.
//
// Commands are a table (commands.cpp): name, arity, flags, handler. Arity, unknown commands,
// MULTI queuing, pub/sub context and BUSY are checked once, in dispatch(), as processCommand
// does in Redis; every error text lives in the err namespace below.
//
// What the server did, from its own state, goes to `observer` as ServerEvents (the trace's
// server lane): commands served, keys written / deleted / expired, blocked clients, long
// scripts, clients it cut. Key events are not emitted by the data types: every write reaches
// Ctx (set_key, delete_key, set_expire, remove_expire, signal_modified), which only notes the
// key; after each command (each command of an EXEC, each redis.call of a script) the server
// reads the noted keys' state and reports it. With no observer the notes cost one branch.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/prng.h"
#include "sim/core/reply.h"
#include "sim/fake/types.h"

namespace redlab::fake {

using TimeUs = int64_t;
using ClientId = int64_t;
using Argv = std::vector<std::string>;

inline constexpr TimeUs kNever = INT64_MAX;

// One place for each error text (Redis 7.0 shared.* objects and addReplyError* strings).
namespace err {
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kIndexOutOfRange = "ERR index out of range";
inline constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
// shared.slowevalerr, the BUSY answer while an EVAL runs; shared.slowscripterr while a
// function (FCALL) does.
inline constexpr std::string_view kBusy =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";
// server.c createSharedObjects: shared.roslaveerr.
inline constexpr std::string_view kReadOnlyReplica =
    "READONLY You can't write against a read only replica.";
}  // namespace err

// Command flags (a subset of Redis' CMD_*).
enum CommandFlag : uint32_t {
  kWrite = 1u << 0,
  kReadOnly = 1u << 1,
  kAdmin = 1u << 2,
  kPubSub = 1u << 3,
  kNoScript = 1u << 4,   // not callable from Lua ("This Redis command is not allowed from script")
  kAllowBusy = 1u << 5,  // runs while a script is past busy-reply-threshold
  kBlocking = 1u << 6,
  kFast = 1u << 7,
  kNoMulti = 1u << 8,        // not queued by MULTI: executed (or refused) at once
  kAllowInPubSub = 1u << 9,  // allowed in RESP2 subscriber context
};

class Server;
struct Client;
struct CommandSpec;
class Ctx;

using Handler = void (*)(Ctx&);

struct CommandSpec {
  std::string name;  // lower case
  int arity = 0;     // negative: at least -arity arguments (the name counts)
  uint32_t flags = 0;
  Handler handler = nullptr;
  int first_key = 0;  // key positions (0 = no keys), for scripts and future cluster logic
  int last_key = 0;   // -1 = last argument
  int key_step = 0;
  bool has_subcommands = false;  // CLIENT, CONFIG, ...: set from the subcommand table
  TimeUs service_us = 0;         // 0 = the server's default service time
  // DEBUG, KEYS: the service time depends on argv or the keyspace. Set by the server.
  bool variable_cost = false;
  std::string upper_name{};  // "GET": the name in Served events. Set by the server.
};

using CommandTable = std::unordered_map<std::string, CommandSpec, StringHash, std::equal_to<>>;

// Registration, one function per command family (each in its own file).
void register_string_commands(CommandTable& table);
void register_key_commands(CommandTable& table);
void register_server_commands(CommandTable& table);
void register_multi_commands(CommandTable& table);
void register_hash_commands(CommandTable& table);
void register_list_commands(CommandTable& table);
void register_set_commands(CommandTable& table);
void register_zset_commands(CommandTable& table);
void register_stream_commands(CommandTable& table);
void register_pubsub_commands(CommandTable& table);
void register_scripting_commands(CommandTable& table);
void register_replication_commands(CommandTable& table);

// Why a client is blocked and how it is woken (BLPOP, BLMOVE, XREAD BLOCK ...). When one of
// the keys becomes ready the command is run again from its argv; if it can serve now it
// replies, otherwise it blocks again and keeps its place in the queue.
struct BlockState {
  int db = 0;
  std::vector<std::string> keys;
  TimeUs timeout_at_us = kNever;
  Reply timeout_reply;
  Argv argv;
  std::shared_ptr<void> extra;  // command-specific state kept across wake-ups (e.g. XREAD ids)
  // Set before each retry: the key whose readiness woke the client. Redis serves a client
  // blocked on several keys from the key that became ready, not from its first key.
  std::string ready_key;
  int64_t cause = 0;  // the blocking command's cause tag (Server::submit), for its wake-up
  // WAIT (replication.cpp): the offset its replicas must ack and how many; -1: not a WAIT.
  int64_t wait_offset = -1;
  int64_t wait_replicas = 0;
};

struct Client {
  ClientId id = 0;
  std::string name;
  int db = 0;
  TimeUs created_us = 0;
  TimeUs last_interaction_us = 0;
  std::string last_command = "NULL";
  // The spec last_command was copied from (run_command skips the copy while it is the same).
  const CommandSpec* last_command_spec = nullptr;
  std::string address;  // a made-up peer address for CLIENT LIST

  bool in_multi = false;
  bool multi_dirty = false;  // an error while queuing: EXEC answers EXECABORT
  std::vector<Argv> queued;

  std::vector<std::pair<int, std::string>> watched;
  bool watch_dirty = false;

  bool blocked = false;
  BlockState block;

  std::set<std::string, std::less<>> channels;
  // In subscribe order (a list in Redis 7.0): PUNSUBSCRIBE with no argument goes in that order.
  std::vector<std::string> patterns;
  size_t subscriptions() const { return channels.size() + patterns.size(); }

  // Output buffer accounting (client-output-buffer-limit): bytes sent but not yet read.
  bool auto_read = true;
  int64_t unread_bytes = 0;
  TimeUs soft_limit_since_us = -1;

  bool close_after_reply = false;

  // Replication (replication.cpp): the primary's offset after this client's last propagated
  // write (Redis' c->woff, what WAIT waits for); on a replica, the primary's own connection,
  // whose writes are not refused as READONLY.
  int64_t repl_write_offset = 0;
  bool is_master = false;
};

// What the server sends: a reply or a push, stamped with when it leaves the server.
struct Output {
  ClientId client = 0;
  TimeUs at_us = 0;
  Reply reply;
};

// What the server itself did, for the trace (Server::observer). Times are virtual time. Events
// come in the order the server decides them; a Served or ScriptStart event is reported when
// its command has finished or become long-running, with at_us = when it started, so at_us
// may be earlier than that of the event before it. client is the connection the event is
// about; cause is the tag its command arrived with (Server::submit; 0 = none, or the server
// itself: expiry, output limits).
struct ServerEvent {
  enum class Kind : uint8_t {
    // A command from a client was served: at_us = start, duration_us = its service time,
    // command = upper-case name ("SET", "EVALSHA", "CLIENT SETNAME" for subcommand
    // containers). detail: "" when it ran, "queued" (inside MULTI), "blocked" (it blocked
    // the client: see Blocked), "woken" (a blocked command run again that now replied), or
    // the error of a command refused before it ran (unknown command, arity, ...). Not for
    // commands run inside EXEC or by a script (they are part of the EXEC / the script call).
    // A script call that does not finish in its first slice: ScriptStart ... ScriptEnd.
    Served,
    // A key was created or modified: db, key, type ("string", "list", "hash", "set", "zset",
    // "stream"), value (value_summary of the new value), expire_at_ms (server unix ms; -1 =
    // no TTL). TTL changes (EXPIRE, PERSIST, ...) are KeyWritten with the new expire_at_ms.
    KeyWritten,
    // A command removed a key (DEL, UNLINK, GETDEL, a list popped empty, RENAME's and MOVE's
    // source, FLUSHDB / FLUSHALL / SWAPDB: one event per key, ...): db, key, type, value =
    // what it held before.
    KeyDeleted,
    // A key's TTL passed (lazily on access or actively): db, key, type, value it held,
    // expire_at_ms. cause 0.
    KeyExpired,
    // A client blocked (BLPOP, XREAD BLOCK, ...): detail = the keys (blank-separated),
    // timeout_at_us (kNever = none), db.
    Blocked,
    // It was woken: detail = "served" | "timeout" | "disconnected" (its connection closed) |
    // "killed" (the server closed it). cause = the blocking command's.
    Unblocked,
    // A script call became long-running (it did not finish in its first slice): at_us = its
    // start, command ("EVAL", "EVALSHA", ...).
    ScriptStart,
    // The running script passed busy-reply-threshold: from now others get BUSY.
    ScriptBusy,
    // A client got a BUSY error reply (or EXECABORT because of BUSY): client, cause.
    BusyReply,
    // SCRIPT KILL ended the running script: client and cause are the script's, by_client
    // the client that sent SCRIPT KILL (0 when the simulator's own time limit killed it, as
    // call() does). Followed by the script's ScriptEnd.
    ScriptKilled,
    // A long-running script finished: at_us = its end, duration_us = from its start,
    // command, detail = "killed" when it was killed.
    ScriptEnd,
    // The server closed a client itself: detail = why ("client-output-buffer-limit pubsub:
    // ...", "CLIENT KILL", "QUIT"); by_client = the client whose command did it (0: the
    // server's own limits).
    ClientCut,
    // The server's clock jumped by delta_us: detail ("+30000 ms").
    ClockJump,
    // SLOWLOG gained an entry (slowlogPushEntryIfNeeded): argv as logged (cut as Redis cuts
    // it), duration_us, count = the log's length after the push (max-len applied). at_us is
    // the command's start, or a script's end (when it is reported); logged_at_us is when the
    // entry was made: the command's end.
    Slowlogged,
    // SLOWLOG RESET emptied the log.
    SlowlogReset,
    // Replication (replication.cpp). A primary sent its replicas a part of its replication
    // stream: argv = its commands, one "SET k v PXAT 1767225610000" per element; count = how
    // many; offset = master_repl_offset after it (RESP bytes since the stream began).
    ReplPropagated,
    // A replica received the stream up to offset from its primary (detail: the primary's name)
    // and queued its commands; count = how many.
    ReplApplied,
    // A primary learned that the replica `detail` has processed its stream up to offset
    // (REPLCONF ACK).
    ReplAcked,
    // A replica became a primary (REPLICAOF NO ONE, a failover): offset = its
    // master_repl_offset, what it had received; detail = its former primary.
    ReplPromoted,
  };
  Kind kind = Kind::Served;
  TimeUs at_us = 0;
  TimeUs duration_us = 0;
  ClientId client = 0;
  int64_t cause = 0;
  int db = 0;
  std::string key;
  std::string type;
  std::string value;
  int64_t expire_at_ms = -1;
  std::string command;
  std::string detail;
  TimeUs timeout_at_us = kNever;
  TimeUs delta_us = 0;
  ClientId by_client = 0;
  std::vector<std::string> argv;  // Slowlogged
  int64_t count = 0;              // Slowlogged
  TimeUs logged_at_us = 0;        // Slowlogged
  int64_t offset = 0;             // Repl*: a replication offset
};

struct Db {
  std::unordered_map<std::string, Entry, StringHash, std::equal_to<>> dict;
  // (expire_at_ms, key). Add only through Ctx::set_expire: the server keeps a lower bound of
  // all expiry times there, so that a call walks no database when nothing can expire.
  std::set<std::pair<int64_t, std::string>, std::less<>> expires;
};

// A command that takes many slices of virtual time (a Lua script). The server resumes it and,
// once it has run past busy-reply-threshold, answers other clients with BUSY between slices.
class LongRunning {
 public:
  virtual ~LongRunning() = default;
  // Runs from now_us for at most budget_us of virtual time; returns the time used. Sets done
  // when finished (its reply already sent through the server).
  virtual TimeUs resume(Server& server, TimeUs now_us, TimeUs budget_us, bool& done) = 0;
  // SCRIPT KILL: end at the next resume. Returns false when the script has written and can
  // no longer be killed.
  virtual bool kill() = 0;
  // Redis' SCRIPT_WRITE_DIRTY: it has written, and no KILL can stop it any more.
  virtual bool has_written() const = 0;
  // A function (FCALL): FUNCTION KILL stops it, not SCRIPT KILL, and others are answered
  // err::kBusyFunction.
  virtual bool is_function() const = 0;
};

// What a server's disk holds (its AOF or RDB file, as loading would find it): the data, keys
// with their absolute expiry, and the function libraries (FUNCTION LOAD payloads), which Redis
// 7.0 keeps in both files. The script cache is never persisted.
struct PersistedState {
  std::vector<Db> dbs;
  std::vector<std::string> libraries;
};

// INFO's "# Replication" section, as Redis 7.0 writes it (replication.cpp).
std::string replication_info(Server& server, TimeUs now_us);

// The function libraries of a server (FUNCTION LOAD payloads, by library name), for
// persistence (scripting.cpp).
std::vector<std::string> function_library_codes(Server& server);

struct ServerOptions {
  std::string name = "redis";
  // The server's unix time (us) at virtual time 0: a fixed date keeps runs reproducible.
  TimeUs epoch_us = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z
  TimeUs service_us = 2;                     // modelled time to serve one plain command
  int databases = 16;
};

// Execution context of one command: who asked, when, and where replies go.
class Ctx {
 public:
  Ctx(Server& s, Client& c, const Argv& a, const CommandSpec& spec, TimeUs now_us,
      std::vector<Reply>* sink);

  Server& server;
  Client& client;
  const Argv& argv;
  const CommandSpec& cmd;
  TimeUs now_us;           // virtual time the command runs at
  int64_t now_ms;          // the server's unix time in ms at that moment (what expiry compares to)
  bool in_exec = false;    // inside EXEC: blocking commands answer as if timed out
  bool in_script = false;  // called from Lua
  bool retrying = false;   // a blocked command run again because a key became ready
  bool blocked_now = false;
  TimeUs reply_at_us = 0;  // when the reply leaves the server (start + service time)

  size_t argc() const { return argv.size(); }
  const std::string& arg(size_t i) const { return argv[i]; }

  void reply(Reply r);
  // The same as reply(Reply::ok()) etc., written in place when they are call()'s answer.
  void reply_ok();
  void reply_int(int64_t v);
  void reply_bulk(std::string_view s);
  void reply_nil();
  void reply_error(std::string_view msg);
  // "ERR unknown subcommand 'x'. Try CLIENT HELP."
  void reply_unknown_subcommand();
  // "ERR wrong number of arguments for 'client|id' command"
  void reply_arity_error(std::string_view fullname);

  bool can_block() const { return !in_exec && !in_script; }
  // Blocks the client; no reply now. timeout_us = 0 waits forever.
  void block(std::vector<std::string> keys, TimeUs timeout_us, Reply timeout_reply,
             std::shared_ptr<void> extra = {});

  Db& db();
  // Lookups with lazy expiry. lookup_write is for commands about to modify the key.
  Entry* lookup_read(std::string_view key);
  Entry* lookup_write(std::string_view key) { return lookup_read(key); }
  // Typed lookup: nullptr if missing; replies WRONGTYPE and sets wrong_type if another type.
  template <typename T>
  T* lookup_typed(std::string_view key, bool& wrong_type);
  // Creates or replaces the value (clears any TTL unless keep_ttl).
  Entry& set_key(std::string_view key, Value value, bool keep_ttl = false);
  // Deletes the key; with take, its value is moved there (RENAME, MOVE) instead of freed.
  bool delete_key(std::string_view key, Value* take = nullptr);
  void set_expire(std::string_view key, int64_t at_ms);
  bool remove_expire(std::string_view key);
  // Every write calls this: it invalidates WATCH and marks blocked waiters' keys ready.
  void signal_modified(std::string_view key);
  void signal_key_ready(std::string_view key);
  // WATCH key for this client.
  void server_watch(std::string_view key);

  // Argument parsing that answers the error itself (Redis' ...OrReply); false = answered.
  bool int_arg(size_t i, int64_t& out, std::string_view msg = err::kNotInteger);
  bool double_arg(size_t i, double& out, std::string_view msg = err::kNotFloat);
  // BLPOP-style timeout in seconds (float), into a relative timeout in us (0 = forever).
  bool timeout_arg(size_t i, TimeUs& out);
  // *SCAN key cursor [MATCH pattern] [COUNT n]: the cursor (parseScanCursorOrReply) and the
  // options from argv[3] on. pattern is null for "match everything". Answers errors itself.
  bool scan_cursor_arg();
  bool scan_options(const std::string*& pattern);
  // The random source of SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER: the simulator's PRNG
  // seeded from the key and the command counter, so a run stays a pure function of its input.
  Prng random_source(std::string_view key) const;

 private:
  // call()'s first reply when this command's reply is it, to be written in place; null when
  // the reply goes through emit (another destination, or unread bytes to count).
  Reply* direct_reply();

  std::vector<Reply>* sink_;
  friend class Server;
};

class Server {
 public:
  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const ServerOptions& options() const { return options_; }

  // ---- Connections ----
  ClientId connect(TimeUs now_us);
  void disconnect(ClientId id, TimeUs now_us);
  bool connected(ClientId id) const { return clients_.count(id) != 0; }
  Client* client(ClientId id);
  const std::map<ClientId, std::unique_ptr<Client>>& clients() const { return clients_; }

  // ---- Event-driven use (scenarios, the repl) ----
  // A command arrives at the server at arrive_us (not before the last advance). cause is an
  // opaque tag (the client's span id for the command) that every ServerEvent the command
  // produces carries: its Served, key events, Blocked, BusyReply, ... also those of the
  // commands of its EXEC, of its script's redis.call()s and of its wake-up when it blocked.
  void submit(ClientId id, Argv argv, TimeUs arrive_us, int64_t cause = 0);
  // The next virtual time at which the server has something to do, or kNever.
  TimeUs next_event_us() const;
  // Does everything due up to and including now_us.
  void advance(TimeUs now_us);
  // Replies and pushes produced so far, in the order they leave the server.
  std::vector<Output> take_outputs();
  bool has_outputs() const { return !outputs_.empty(); }
  // Connections the server closed itself (CLIENT KILL, output buffer limits, QUIT).
  std::vector<std::pair<ClientId, TimeUs>> take_closed();
  // The client read `bytes` of its output (for client-output-buffer-limit).
  void client_read(ClientId id, int64_t bytes);
  // Commands of this client that arrived but were not served yet. A connection closed by its
  // client still has them run first (Redis reads the bytes before the EOF); the network uses
  // this to deliver a close after them.
  size_t pending_commands(ClientId id) const;

  // ---- Immediate use (benchmarks, unit tests, fuzzing) ----
  // Runs one command now, at the current virtual time, and returns the caller's replies
  // (several for SUBSCRIBE a b c). A script runs to its end, or is killed after
  // script_call_limit_us of virtual time so that no input can hang the caller.
  std::vector<Reply> call_all(ClientId id, const Argv& argv, int64_t cause = 0);
  Reply call(ClientId id, const Argv& argv, int64_t cause = 0);

  // ---- Clock ----
  TimeUs clock_us() const { return clock_us_; }
  // The server's unix time at virtual time t (includes clock offset and jumps).
  int64_t unix_us(TimeUs t) const { return options_.epoch_us + t + clock_offset_us_; }
  int64_t unix_ms(TimeUs t) const { return unix_us(t) / 1000; }
  // A fault: the server's wall clock jumps by delta (keys may expire at once).
  void jump_clock(TimeUs delta_us, TimeUs now_us);
  // Virtual time at which the server's unix clock reads at_ms.
  TimeUs virtual_time_of_unix_ms(int64_t at_ms) const;

  // ---- Replication (replication.cpp; Redis 7.0 replication.c) ----
  // A primary propagates every write after it succeeded, as Redis 7.0 does (call() and
  // propagatePendingCommands): a SET with EX/PX/EXAT as SET key value PXAT ms, an EXPIRE as
  // PEXPIREAT (relative times become absolute, so a late replica does not extend a TTL), a
  // script by its effects, an EXEC's commands, and the effects of one call wrapped in
  // MULTI/EXEC when there are several; a SELECT first when the database changes; a key's
  // expiry as DEL. The stream starts once a replica is attached (the backlog exists: before
  // that master_repl_offset stays 0). on_propagate carries each part to the replicas (the
  // network: a simulated link between the servers); offset = master_repl_offset after it.
  std::function<void(TimeUs at_us, const std::vector<Argv>& commands, int64_t offset)> on_propagate;
  // A replica named `name` was attached (its first sync is instant here: it starts with the
  // primary's data, at the primary's offset).
  void attach_replica(const std::string& name, TimeUs now_us);
  void detach_replica(const std::string& name);
  // REPLCONF ACK from `name`: it has processed the stream up to offset. Wakes WAITs.
  void replica_acked(const std::string& name, int64_t offset, TimeUs now_us);
  int64_t master_repl_offset() const { return repl_offset_; }
  // This server becomes a replica of `primary`: writes from anyone but the primary's
  // connection are refused (READONLY); returns that connection's client id.
  ClientId become_replica(const std::string& primary, const std::string& replid, int64_t offset,
                          TimeUs now_us);
  bool is_replica() const { return !master_name_.empty(); }
  // Part of the primary's stream arrived (up to offset): its commands are queued for the
  // primary's connection. Returns true when it asks for an ACK at once (REPLCONF GETACK).
  bool replicated(const std::vector<Argv>& commands, int64_t offset, TimeUs now_us);
  // What this replica has processed (slave_repl_offset), for its ACKs.
  int64_t replica_offset() const { return repl_offset_; }
  // The link to the primary went down or came back (INFO: master_link_status).
  void set_master_link(bool up, TimeUs now_us);
  // REPLICAOF NO ONE: this replica becomes a primary with what it has (a failover).
  void promote(TimeUs now_us);
  const std::string& replid() const { return replid_; }

  // ---- Observer (the trace) ----
  // Set it before the first command: key events report what changed since the observer was
  // set, and a KeyDeleted's value for a container the command emptied (a list popped empty)
  // comes from what was last reported for the key. An observer must not call the server.
  std::function<void(const ServerEvent&)> observer;
  bool observing() const { return static_cast<bool>(observer); }

  // ---- For command implementations ----
  const CommandSpec* find_command(std::string_view name) const;
  std::vector<Db>& dbs() { return dbs_; }
  // Runs a command for `client` at now_us with replies going to sink, applying the same
  // checks as a command from the network (used by EXEC and by redis.call).
  void execute(Client& client, const Argv& argv, TimeUs now_us, std::vector<Reply>* sink,
               bool in_exec, bool in_script);
  // Sends a reply or push to a client at time at_us.
  void emit(ClientId id, TimeUs at_us, Reply&& reply);
  void emit(ClientId id, TimeUs at_us, const Reply& reply) { emit(id, at_us, Reply(reply)); }
  // The modelled time to serve argv (scripts add it up for the commands they call).
  TimeUs service_time(const CommandSpec& spec, const Argv& argv) const;
  void expire_if_needed(Db& db, int db_index, std::string_view key, int64_t now_ms, TimeUs now_us);
  void touch_watched_key(int db, std::string_view key);
  void touch_all_watched_keys();
  // FLUSHDB, FLUSHALL and SWAPDB: whole databases change (WATCH, key events, blocked clients).
  void empty_db(int db_index);
  void empty_all_dbs();
  void swap_dbs(int a, int b);
  // FUNCTION LOAD / DELETE / FLUSH changed the libraries: data to persist, like a key write.
  void note_functions_changed() { dirty_++; }

  // ---- Persistence (config appendonly, appendfsync, save; Redis 7.0 aof.c, rdb.c) ----
  // The server keeps an image of what has reached its disk, taken when Redis would fsync its
  // AOF or fork for a BGSAVE:
  // - appendonly yes, appendfsync always: every command's writes, before its reply.
  // - appendonly yes, appendfsync everysec: flushAppendOnlyFile fsyncs once the unix second
  //   has changed since the last fsync (`server.unixtime > server.aof_last_fsync`): after the
  //   first command served in a new second, or at the next cron tick (1000/hz ms) when idle.
  //   Writes of the current second are in the kernel's page cache only.
  // - appendonly yes, appendfsync no: the kernel writes dirty pages back about 30 s later
  //   (vm.dirty_expire_centisecs); modelled as a sync every 30 s of the server's clock.
  // - appendonly no with save points ("900 1 300 10"): a BGSAVE at the first cron tick where
  //   `changes` writes are older than the last save by `seconds` (serverCron).
  // A process crash (kill -9) loses nothing written: the kernel still has it. What is lost is
  // what a crash of the machine (power loss, kernel panic) finds only in the page cache.
  // The state a clean restart loads (SHUTDOWN: the AOF flushed and fsynced, an RDB written
  // when there are save points and not save_rdb = false, SHUTDOWN NOSAVE); nullopt: nothing was
  // persisted (appendonly no, save "", or NOSAVE without an earlier snapshot).
  std::optional<PersistedState> persisted_on_shutdown(TimeUs now_us, bool save_rdb = true);
  // The state a crash of the machine at now_us leaves on disk; nullopt: nothing.
  std::optional<PersistedState> persisted_on_crash(TimeUs now_us);
  // Loads it into this fresh server at now_us (libraries first, then the keys; a key whose
  // TTL has passed is not loaded).
  void load_persisted(const PersistedState& state, TimeUs now_us);
  void watch_key(Client& c, std::string_view key);
  void unwatch_all(Client& c);
  void unblock(Client& c);
  void close_client_later(ClientId id, const std::string& reason);
  void start_long_running(ClientId id, std::unique_ptr<LongRunning> job, TimeUs now_us);
  // SCRIPT KILL from client `by`: false when the running script can no longer be killed.
  bool kill_long_running(ClientId by);
  bool long_running_active() const { return running_ != nullptr; }
  const LongRunning* long_running() const { return running_.get(); }
  // What a command that may not run while a script is busy is answered (processCommand).
  std::string_view busy_error() const {
    return running_ && running_->is_function() ? err::kBusyFunction : err::kBusy;
  }
  LongRunning* long_running() { return running_.get(); }
  ClientId long_running_client() const { return running_client_; }
  void mark_key_ready(int db, std::string_view key);

  // Config (CONFIG GET/SET): canonical names, values as strings Redis prints. The map may be
  // changed through the reference, so each call counts as a change: run_command's cached
  // slowlog-log-slower-than entry is looked up again. Do not keep the reference for later.
  std::map<std::string, std::string>& config() {
    config_generation_++;
    return config_;
  }
  int64_t config_int(std::string_view name) const;
  TimeUs busy_threshold_us() const { return config_int("busy-reply-threshold") * 1000; }

  // Slowlog and stats.
  struct SlowlogEntry {
    int64_t id;
    int64_t unix_s;
    int64_t duration_us;
    Argv argv;
    std::string peer;
    std::string name;
    TimeUs logged_at_us = 0;  // virtual time the entry was made (the command's end)
  };
  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  void slowlog_reset(TimeUs now_us);
  int64_t& slowlog_next_id() { return slowlog_next_id_; }
  int64_t commands_processed() const { return commands_processed_; }

  // Pub/sub registry (pubsub.cpp): subscribers per channel / pattern, in subscribe order.
  std::map<std::string, std::vector<ClientId>, std::less<>> pubsub_channels;
  std::map<std::string, std::vector<ClientId>, std::less<>> pubsub_patterns;

  // Scripting state (scripting.cpp): opaque here.
  std::shared_ptr<void> scripting_state;

  // Bounds (TigerBeetle style: everything has a limit).
  TimeUs script_call_limit_us = 60LL * 1000 * 1000;  // call(): a script is killed past this
  static constexpr size_t kSlowlogMaxLenLimit = 100000;

 private:
  struct Pending {
    ClientId client;
    Argv argv;
    TimeUs arrive_us;
    int64_t cause;
  };
  // A connection the server will close: who asked (CLIENT KILL's client, or 0) and why.
  struct Closing {
    ClientId id;
    std::string reason;
    ClientId by_client;
    int64_t cause;
  };

  // ---- Observation (only used while observer is set) ----
  // Who the work in progress is for: set by each entry point (a command taken from the
  // queue, a wake-up, a script slice, call()), restored when it returns.
  struct Origin {
    ClientId client = 0;
    int64_t cause = 0;
    TimeUs at_us = 0;
  };
  class OriginScope;
  // A key the current command wrote or deleted, in the order first noted.
  struct TouchedKey {
    int db = 0;
    std::string key;
    bool existed = true;    // false: the command created it (a key created and deleted
                            // again by one command reports nothing)
    bool captured = false;  // deleted: type and value are what it held then
    const char* type = "";
    std::string value;
  };
  // What was last reported of a key that holds a list, hash, set or sorted set (per
  // database): the value a container held before the command that emptied and deleted it.
  // (Not kept for strings and streams, which are never emptied: SET pays nothing for it.)
  struct Reported {
    const char* type = "";
    std::string value;
  };
  using ReportedKeys = std::unordered_map<std::string, Reported, StringHash, std::equal_to<>>;
  enum class Touch : uint8_t { Written, Created, Deleted };
  // Called only while observing (the callers test observing(): one branch per write).
  void note_key(int db, std::string_view key, Touch how, const Entry* entry);
  // Notes every key of a database as deleted (FLUSHDB, FLUSHALL, SWAPDB), in key order.
  void note_db_deleted(int db_index);
  // Reports the noted keys (KeyWritten / KeyDeleted) and forgets them.
  void flush_key_events();
  // After each command run_command ran: its key events and (top level) its Served. Not
  // inlined: run_command, the hot path, keeps its small frame.
  [[gnu::noinline]] void note_command_end(const Client& c, const CommandSpec& spec,
                                          const Argv& argv, TimeUs now_us, TimeUs cost_us,
                                          bool nested, bool retrying, bool blocked);
  void note_served(const Client& c, const CommandSpec* spec, const Argv& argv, TimeUs at_us,
                   TimeUs duration_us, std::string detail);
  void note_busy_reply(ClientId id, TimeUs at_us, int64_t cause);
  void note_unblocked(const Client& c, TimeUs at_us, const char* why);
  // After each resume of the running script (events only).
  void note_script_slice(TimeUs end_us, bool done);

  void dispatch(Client& c, const Argv& argv, TimeUs now_us, std::vector<Reply>* sink);
  // call_all and call: runs argv now; this client's replies go to all, or the first to
  // first_reply (the others are dropped).
  void call_collect(ClientId id, const Argv& argv, std::vector<Reply>* all, Reply* first_reply,
                    int64_t cause);
  void run_command(Client& c, const CommandSpec& spec, const Argv& argv, TimeUs now_us,
                   std::vector<Reply>* sink, bool in_exec, bool in_script, bool retrying,
                   bool& blocked);
  void handle_ready_keys(TimeUs now_us);
  // Expires what is due by now_us; runs before every call(), so the common case is inline.
  void expire_due(TimeUs now_us) {
    if (unix_ms(now_us) > expire_floor_ms_) return expire_walk(now_us);
#ifndef NDEBUG
    check_expire_floor();  // debug builds: no expiry bypassed Ctx::set_expire
#endif
  }
  void expire_walk(TimeUs now_us);
  void check_expire_floor() const;
  // service_time, without the call for the many commands whose cost is fixed.
  TimeUs command_cost(const CommandSpec& spec, const Argv& argv) const {
    if (spec.variable_cost) return service_time(spec, argv);
    return spec.service_us > 0 ? spec.service_us : options_.service_us;
  }
  void timeout_blocked(TimeUs now_us);
  TimeUs next_expiry_us() const;
  TimeUs next_block_timeout_us() const;
  std::optional<size_t> next_runnable() const;
  void serve_pending(TimeUs now_us);
  void serve_while_busy(TimeUs now_us);
  void resume_long_running(TimeUs now_us);
  void check_output_limits(TimeUs now_us);
  int64_t slowlog_threshold();
  // slowlogCreateEntry's copy of a command: at most 32 arguments, each at most 128 bytes.
  static Argv slowlog_argv(const Argv& argv);
  // Adds an entry for a command that started at started_us and ran duration_us, if it is
  // over slowlog-log-slower-than; at_us dates its event (see ServerEvent::Slowlogged).
  void slowlog_push(SlowlogEntry entry, TimeUs at_us, TimeUs started_us, ClientId client,
                    int64_t cause);
  // A script that ended: its EVAL's entry, timed from the script's start to end_us.
  void slowlog_script_end(TimeUs end_us);
  TimeUs next_output_limit_us() const;
  void finish_close(const Closing& closing, TimeUs now_us);

  ServerOptions options_;
  std::vector<Db> dbs_;
  // No key in any database expires before this (unix ms): lowered by Ctx::set_expire, exact
  // again after expire_due walks the databases. Deletions only leave it too low (harmless).
  int64_t expire_floor_ms_ = INT64_MAX;
  // While call()/call_all() runs a command: where the caller's replies go, straight from emit
  // instead of through outputs_ (those of other clients still go to outputs_). A chain, the
  // innermost first, should a call() be made from inside another (an observer).
  struct Capture {
    ClientId id = 0;
    Client* client = nullptr;  // cleared if the client disconnects meanwhile
    std::vector<Reply>* all = nullptr;
    Reply* first = nullptr;
    bool have_first = false;
    Capture* outer = nullptr;
  };
  Capture* capture_ = nullptr;
  Capture* capture_for(ClientId id) {
    for (Capture* cap = capture_; cap; cap = cap->outer)
      if (cap->id == id) return cap;
    return nullptr;
  }
  std::map<ClientId, std::unique_ptr<Client>> clients_;
  ClientId next_client_id_ = 3;  // real Redis 7 hands its first connection id 3 or so
  std::deque<Pending> queue_;
  std::vector<Output> outputs_;
  std::vector<std::pair<ClientId, TimeUs>> closed_;
  std::vector<Closing> to_close_;
  TimeUs clock_us_ = 0;
  TimeUs busy_until_us_ = 0;
  TimeUs clock_offset_us_ = 0;
  // WATCH registry: (db, key) -> watching clients.
  std::map<std::pair<int, std::string>, std::vector<ClientId>, std::less<>> watched_keys_;
  // Blocking registry: (db, key) -> blocked clients in the order they blocked.
  std::map<std::pair<int, std::string>, std::vector<ClientId>, std::less<>> blocking_keys_;
  std::vector<std::pair<int, std::string>> ready_keys_;
  std::unique_ptr<LongRunning> running_;
  ClientId running_client_ = 0;
  TimeUs running_started_us_ = 0;
  TimeUs running_next_us_ = 0;
  // The running script, for its events: the command that started it and its cause, how far
  // its story has been told, who killed it.
  int64_t running_cause_ = 0;
  const CommandSpec* running_spec_ = nullptr;
  bool running_fresh_ = false;  // started by the command now running: no Served for it
  int running_slices_ = 0;
  bool running_busy_reported_ = false;
  bool running_kill_requested_ = false;
  ClientId running_killed_by_ = 0;
  // The script's SLOWLOG entry, made when it ends (call() times the EVAL to the script's end):
  // unlogged until the command that started it was seen, then armed with its argv.
  bool running_unlogged_ = false;
  bool running_slowlog_armed_ = false;
  SlowlogEntry running_slowlog_{};
  // slowlog_threshold() keeps a pointer to an entry, looked up again after each config().
  std::map<std::string, std::string> config_;
  uint64_t config_generation_ = 0;  // bumped by config(): entries may have been added/erased
  // slowlog-log-slower-than, as run_command needs it before every command: the entry (looked
  // up again after config() was called) and the last text parsed, instead of a map lookup and
  // a string2ll per command.
  const std::pair<const std::string, std::string>* slowlog_threshold_entry_ = nullptr;
  uint64_t slowlog_threshold_generation_ = 0;
  std::string slowlog_threshold_text_;
  int64_t slowlog_threshold_ = 0;
  std::deque<SlowlogEntry> slowlog_;
  int64_t slowlog_next_id_ = 0;
  int64_t commands_processed_ = 0;
  Origin origin_;
  std::vector<TouchedKey> touched_;
  // touched_'s positions by "db key" once it is long (FLUSHALL of a big database).
  std::unordered_map<std::string, size_t> touched_index_;
  std::vector<ReportedKeys> reported_containers_;  // per database, empty until observed
  // Changes to the data (and the function libraries) since the server started: Redis'
  // server.dirty, which decides what persistence has still to write.
  uint64_t dirty_ = 0;
  // Persistence (see persisted_on_crash): the image of the fsynced AOF and of the last RDB.
  enum class Fsync : uint8_t { Off, Always, EverySec, No };
  Fsync fsync_mode();
  // The persistence settings, parsed again only after config() was called.
  uint64_t persist_config_generation_ = UINT64_MAX;
  Fsync persist_mode_ = Fsync::Off;
  std::vector<std::pair<int64_t, int64_t>> save_points_;  // (seconds, changes)
  TimeUs cron_tick_us_ = 100000;
  PersistedState snapshot();
  // Before an event at now_us: what the cron did since the last event (a periodic fsync, a
  // BGSAVE). After it: what beforeSleep does (fsync always, or once the second changed).
  void persist_before(TimeUs now_us);
  void persist_after(TimeUs now_us);
  std::shared_ptr<const PersistedState> aof_image_;
  uint64_t aof_image_dirty_ = 0;
  int64_t aof_synced_period_ = INT64_MIN;  // unix ms / period of the last fsync
  std::shared_ptr<const PersistedState> rdb_image_;
  uint64_t rdb_image_dirty_ = 0;
  int64_t last_save_unix_ms_ = INT64_MIN;  // INT64_MIN: the server's start
  TimeUs persist_checked_us_ = 0;          // the last event persist_after saw

  // ---- Replication (replication.cpp) ----
  struct ReplicaLink {
    std::string name;
    int64_t ack_offset = 0;
    TimeUs ack_at_us = 0;
  };
  struct Propagated {
    int db = 0;
    Argv argv;
  };
  friend std::string replication_info(Server& server, TimeUs now_us);
  friend void wait_command(Ctx& c);
  // After a command that changed the data: what it propagates, kept until its call ends.
  void propagate_note(const Client& c, const CommandSpec& spec, const Argv& argv);
  // The call has ended: its effects go out as one part of the stream.
  void propagate_flush(TimeUs at_us, ClientId client);
  void propagate_raw(TimeUs at_us, Argv argv);  // REPLCONF GETACK: outside any call
  int64_t count_acks(int64_t offset) const;
  void wake_waits(TimeUs now_us);
  bool repl_backlog_ = false;  // a replica was attached once: the stream is counted
  int64_t repl_offset_ = 0;    // master_repl_offset (on a replica: what it processed)
  int repl_stream_db_ = -1;    // the database the stream last SELECTed
  std::vector<Propagated> repl_pending_;
  std::vector<ReplicaLink> replicas_;
  std::string replid_;
  std::string replid2_ = std::string(40, '0');
  int64_t second_repl_offset_ = -1;
  std::string master_name_;  // non-empty: this server is a replica of it
  ClientId master_client_ = 0;
  bool master_link_up_ = false;
  TimeUs master_link_changed_us_ = 0;
  TimeUs master_last_io_us_ = 0;
  friend class Ctx;
};

template <typename T>
T* Ctx::lookup_typed(std::string_view key, bool& wrong_type) {
  wrong_type = false;
  Entry* e = lookup_read(key);
  if (!e) return nullptr;
  T* v = std::get_if<T>(&e->value.data);
  if (!v) {
    wrong_type = true;
    reply_error(err::kWrongType);
  }
  return v;
}

}  // namespace redlab::fake
