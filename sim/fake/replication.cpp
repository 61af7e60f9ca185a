// Replication in the fake (Redis 7.0 replication.c, server.c call()/propagatePendingCommands,
// t_string.c setGenericCommand, expire.c expireGenericCommand).
//
// A primary turns each successful write into what Redis 7.0 propagates, checked against
// redis-server 7.0.15 (a replica's MONITOR shows what arrives from its primary):
//   SET a 1 EX 100           ->  SET a 1 PXAT <unix ms>   (also SETEX, PSETEX; NX/GET dropped)
//   EXPIRE a 50              ->  PEXPIREAT a <unix ms>    (EXPIRE, PEXPIRE, EXPIREAT)
//   EVAL with two writes     ->  MULTI, SET l x PXAT <ms>, INCR f, EXEC   (effects replication,
//                                the only mode of 7.0; one effect goes alone)
//   a key expiring           ->  DEL key
// preceded by SELECT when the database differs from the stream's last one. Relative times
// become absolute so that a replica that receives the stream late does not lengthen a TTL:
// after a failover a lock taken on the old primary expires on the new one when it would have.
//
// master_repl_offset counts the RESP bytes of the stream, as the backlog does, from the moment
// a replica was attached (no backlog before: the offset of a lone primary stays 0). A replica
// processes what reaches it and acks its offset (REPLCONF ACK: once a second, and at once when
// the primary asks with REPLCONF GETACK, which WAIT does). WAIT numreplicas timeout answers how
// many replicas have acked the client's last write (c->woff), at once when enough have, or
// when its timeout (ms, 0 = forever) passes.
//
// The link between the servers (latency, partitions, lag) is the network's (sim/net/
// replication.cpp); the server only says what leaves and takes what arrives.
#include <algorithm>

#include "sim/core/assert.h"
#include "sim/fake/server.h"
#include "sim/fake/sha1.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

// The RESP bytes of one command in the stream: *N\r\n and $len\r\narg\r\n per argument.
int64_t resp_bytes(const Argv& argv) {
  int64_t n = 1 + static_cast<int64_t>(std::to_string(argv.size()).size()) + 2;
  for (const std::string& a : argv)
    n += 1 + static_cast<int64_t>(std::to_string(a.size()).size()) + 2 +
         static_cast<int64_t>(a.size()) + 2;
  return n;
}

bool is_container(std::string_view name) {
  // Their own argv is never propagated: what they ran is (effects replication).
  return name == "exec" || name == "eval" || name == "evalsha" || name == "eval_ro" ||
         name == "evalsha_ro" || name == "fcall" || name == "fcall_ro";
}

bool has_relative_expire(const Argv& argv) {
  for (size_t i = 3; i < argv.size(); i++)
    if (equals_nocase(argv[i], "ex") || equals_nocase(argv[i], "px") ||
        equals_nocase(argv[i], "exat"))
      return true;
  return false;
}

// A replication event of the server's own record: when, the stream offset it concerns, and
// the other server (detail); the kinds add their own fields.
ServerEvent repl_event(ServerEvent::Kind kind, TimeUs at_us, int64_t offset, std::string other) {
  ServerEvent e;
  e.kind = kind;
  e.at_us = at_us;
  e.offset = offset;
  e.detail = std::move(other);
  return e;
}

}  // namespace

void Server::propagate_note(const Client& c, const CommandSpec& spec, const Argv& argv) {
  if (is_replica() || is_container(spec.name)) return;
  int db = c.db;
  const std::string_view name = spec.name;
  // The key's TTL as the command left it: what the rewritten command states absolutely.
  auto expire_of = [&](const std::string& key) -> int64_t {
    const Db& d = dbs_[static_cast<size_t>(db)];
    auto it = d.dict.find(key);
    return it == d.dict.end() ? -2 : it->second.expire_at_ms;
  };
  if ((name == "set" && has_relative_expire(argv)) || name == "setex" || name == "psetex") {
    const std::string& key = argv[1];
    const std::string& value = name == "set" ? argv[2] : argv[3];
    int64_t at_ms = expire_of(key);
    if (at_ms >= 0) {
      repl_pending_.push_back(Propagated{db, {"SET", key, value, "PXAT", std::to_string(at_ms)}});
      return;
    }
  } else if (name == "expire" || name == "pexpire" || name == "expireat") {
    const std::string& key = argv[1];
    int64_t at_ms = expire_of(key);
    // A time in the past deleted the key: the replicas delete it too.
    repl_pending_.push_back(at_ms >= 0 ? Propagated{db, {"PEXPIREAT", key, std::to_string(at_ms)}}
                                       : Propagated{db, {"DEL", key}});
    return;
  }
  repl_pending_.push_back(Propagated{db, argv});
}

void Server::propagate_flush(TimeUs at_us, ClientId client) {
  if (repl_pending_.empty()) return;
  std::vector<Propagated> pending = std::exchange(repl_pending_, {});
  if (!repl_backlog_ || is_replica()) return;
  // propagatePendingCommands: several effects of one call go as one transaction.
  if (pending.size() > 1) {
    int first_db = pending.front().db;
    pending.insert(pending.begin(), Propagated{first_db, {"MULTI"}});
    pending.push_back(Propagated{pending.back().db, {"EXEC"}});
  }
  std::vector<Argv> commands;
  for (Propagated& p : pending) {
    if (p.db != repl_stream_db_) {
      commands.push_back({"SELECT", std::to_string(p.db)});
      repl_stream_db_ = p.db;
    }
    commands.push_back(std::move(p.argv));
  }
  for (const Argv& a : commands) repl_offset_ += resp_bytes(a);
  if (Client* c = client != 0 ? this->client(client) : nullptr) c->repl_write_offset = repl_offset_;
  if (observing()) {
    ServerEvent e = repl_event(ServerEvent::Kind::ReplPropagated, at_us, repl_offset_, "");
    e.client = client;
    e.cause = origin_.cause;
    e.count = static_cast<int64_t>(commands.size());
    for (const Argv& a : commands) {
      std::string line;
      for (const std::string& arg : a) line += (line.empty() ? "" : " ") + arg;
      e.argv.push_back(std::move(line));
    }
    observer(e);
  }
  if (on_propagate) on_propagate(at_us, commands, repl_offset_);
}

void Server::propagate_raw(TimeUs at_us, Argv argv) {
  if (!repl_backlog_ || is_replica()) return;
  std::vector<Argv> commands{std::move(argv)};
  repl_offset_ += resp_bytes(commands.front());
  if (on_propagate) on_propagate(at_us, commands, repl_offset_);
}

void Server::attach_replica(const std::string& name, TimeUs now_us) {
  for (const ReplicaLink& r : replicas_) REDLAB_ASSERT(r.name != name && "attached once");
  repl_backlog_ = true;
  replicas_.push_back(ReplicaLink{name, repl_offset_, now_us});
}

void Server::detach_replica(const std::string& name) {
  replicas_.erase(std::remove_if(replicas_.begin(), replicas_.end(),
                                 [&](const ReplicaLink& r) { return r.name == name; }),
                  replicas_.end());
}

int64_t Server::count_acks(int64_t offset) const {
  int64_t n = 0;
  for (const ReplicaLink& r : replicas_)
    if (r.ack_offset >= offset) n++;
  return n;
}

void Server::replica_acked(const std::string& name, int64_t offset, TimeUs now_us) {
  for (ReplicaLink& r : replicas_) {
    if (r.name != name) continue;
    r.ack_offset = std::max(r.ack_offset, offset);
    r.ack_at_us = now_us;
    if (observing()) {
      observer(repl_event(ServerEvent::Kind::ReplAcked, now_us, offset, name));
    }
  }
  wake_waits(now_us);
}

void Server::wake_waits(TimeUs now_us) {
  // processClientsWaitingReplicas: each WAIT that now has enough acks is answered.
  for (auto& [id, c] : clients_) {
    if (!c->blocked || c->block.wait_offset < 0) continue;
    int64_t acks = count_acks(c->block.wait_offset);
    if (acks < c->block.wait_replicas) continue;
    if (observing()) note_unblocked(*c, now_us, "served");
    unblock(*c);
    emit(id, now_us, Reply::integer_reply(acks));
  }
}

ClientId Server::become_replica(const std::string& primary, const std::string& replid,
                                int64_t offset, TimeUs now_us) {
  master_name_ = primary;
  replid_ = replid;
  repl_offset_ = offset;
  repl_backlog_ = true;
  master_client_ = connect(now_us);
  client(master_client_)->is_master = true;
  master_link_up_ = true;
  master_link_changed_us_ = now_us;
  master_last_io_us_ = now_us;
  return master_client_;
}

bool Server::replicated(const std::vector<Argv>& commands, int64_t offset, TimeUs now_us) {
  if (!is_replica()) return false;
  bool ack_now = false;
  int64_t count = 0;
  for (const Argv& a : commands) {
    if (a.size() == 3 && equals_nocase(a[0], "replconf") && equals_nocase(a[1], "getack")) {
      ack_now = true;
      continue;
    }
    submit(master_client_, a, now_us);
    count++;
  }
  repl_offset_ = std::max(repl_offset_, offset);
  master_last_io_us_ = now_us;
  if (observing()) {
    ServerEvent e = repl_event(ServerEvent::Kind::ReplApplied, now_us, offset, master_name_);
    e.client = master_client_;
    e.count = count;
    observer(e);
  }
  return ack_now;
}

void Server::set_master_link(bool up, TimeUs now_us) {
  if (up == master_link_up_) return;
  master_link_up_ = up;
  master_link_changed_us_ = now_us;
  if (up) master_last_io_us_ = now_us;
}

void Server::promote(TimeUs now_us) {
  if (!is_replica()) return;
  // replicationUnsetMaster -> shiftReplicationId: the old history stays known as replid2.
  replid2_ = replid_;
  second_repl_offset_ = repl_offset_ + 1;
  replid_ = sha1_hex("redlab promoted " + replid_);
  std::string former = std::exchange(master_name_, std::string());
  // The primary's connection is freed: what it had sent and this server had not yet run is
  // lost with it.
  if (connected(master_client_)) disconnect(master_client_, now_us);
  master_client_ = 0;
  master_link_up_ = false;
  repl_stream_db_ = -1;
  if (observing()) {
    observer(repl_event(ServerEvent::Kind::ReplPromoted, now_us, repl_offset_, former));
  }
}

std::string replication_info(Server& s, TimeUs now_us) {
  // genericInfoString, section "replication", in Redis 7.0's order. The fake has names, not
  // addresses: a server's host is its name and every port is 6379.
  auto secs = [&](TimeUs since_us) { return std::to_string((now_us - since_us) / 1000000); };
  std::string out = "# Replication\r\nrole:";
  out += s.is_replica() ? "slave\r\n" : "master\r\n";
  if (s.is_replica()) {
    out += "master_host:" + s.master_name_ + "\r\nmaster_port:6379\r\nmaster_link_status:";
    out += s.master_link_up_ ? "up\r\n" : "down\r\n";
    out += "master_last_io_seconds_ago:" + (s.master_link_up_ ? secs(s.master_last_io_us_) : "-1") +
           "\r\nmaster_sync_in_progress:0\r\nslave_read_repl_offset:" +
           std::to_string(s.repl_offset_) +
           "\r\nslave_repl_offset:" + std::to_string(s.repl_offset_) + "\r\n";
    if (!s.master_link_up_)
      out += "master_link_down_since_seconds:" + secs(s.master_link_changed_us_) + "\r\n";
    out += "slave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\n";
  }
  out += "connected_slaves:" + std::to_string(s.replicas_.size()) + "\r\n";
  for (size_t i = 0; i < s.replicas_.size(); i++) {
    const auto& r = s.replicas_[i];
    out += "slave" + std::to_string(i) + ":ip=" + r.name +
           ",port=6379,state=online,offset=" + std::to_string(r.ack_offset) +
           ",lag=" + secs(r.ack_at_us) + "\r\n";
  }
  out += "master_failover_state:no-failover\r\nmaster_replid:" + s.replid_ +
         "\r\nmaster_replid2:" + s.replid2_ +
         "\r\nmaster_repl_offset:" + std::to_string(s.repl_offset_) +
         "\r\nsecond_repl_offset:" + std::to_string(s.second_repl_offset_) +
         "\r\nrepl_backlog_active:" + (s.repl_backlog_ ? "1" : "0") +
         "\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:" +
         (s.repl_backlog_ ? "1" : "0") +
         "\r\nrepl_backlog_histlen:" + std::to_string(std::min<int64_t>(s.repl_offset_, 1048576)) +
         "\r\n";
  return out;
}

// WAIT numreplicas timeout (replication.c waitCommand).
void wait_command(Ctx& c) {
  Server& s = c.server;
  if (s.is_replica())
    return c.reply_error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to replicas "
        "are just local and are not propagated.");
  int64_t numreplicas = 0;
  if (!c.int_arg(1, numreplicas)) return;
  // getTimeoutFromObjectOrReply(UNIT_MILLISECONDS): an integer, not negative.
  int64_t timeout_ms = 0;
  if (!c.int_arg(2, timeout_ms, "ERR timeout is not an integer or out of range")) return;
  if (timeout_ms < 0) return c.reply_error(err::kTimeoutNegative);
  int64_t offset = c.client.repl_write_offset;
  int64_t acks = s.count_acks(offset);
  if (acks >= numreplicas || c.in_exec) return c.reply_int(acks);
  constexpr int64_t kTimeoutMsMax = INT64_MAX / 4000;  // the deadline in us cannot overflow
  c.block({}, std::min(timeout_ms, kTimeoutMsMax) * 1000, Reply::integer_reply(0));
  c.client.block.wait_offset = offset;
  c.client.block.wait_replicas = numreplicas;
  // replicationRequestAckFromSlaves: beforeSleep sends REPLCONF GETACK * down the stream.
  s.propagate_raw(c.reply_at_us, {"REPLCONF", "GETACK", "*"});
}

void register_replication_commands(CommandTable& t) {
  t["wait"] = CommandSpec{"wait", 3, kNoScript, wait_command, 0, 0, 0};
}

}  // namespace redlab::fake
