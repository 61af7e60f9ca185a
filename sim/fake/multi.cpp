// Transactions (Redis multi.c): MULTI EXEC DISCARD WATCH UNWATCH.
//
// Errors found while queuing (unknown command, wrong arity) make EXEC answer EXECABORT;
// errors at run time are replies inside EXEC's array and the other commands still apply.
// A watched key is "touched" by any write to it, also by the watcher itself, also one that
// writes the same value, also the creation of a missing key, and by its expiry; EXEC then
// answers a nil array. EXEC, DISCARD, UNWATCH and disconnecting clear the watches.
#include <algorithm>

#include "sim/fake/server.h"

namespace redlab::fake {
namespace {

void discard_transaction(Server& s, Client& c) {
  c.in_multi = false;
  c.multi_dirty = false;
  c.queued.clear();
  s.unwatch_all(c);
}

void multi_command(Ctx& c) {
  if (c.client.in_multi) return c.reply_error("ERR MULTI calls can not be nested");
  c.client.in_multi = true;
  c.reply_ok();
}

void discard_command(Ctx& c) {
  if (!c.client.in_multi) return c.reply_error("ERR DISCARD without MULTI");
  discard_transaction(c.server, c.client);
  c.reply_ok();
}

void exec_command(Ctx& c) {
  Client& cl = c.client;
  if (!cl.in_multi) return c.reply_error("ERR EXEC without MULTI");
  if (cl.multi_dirty) {
    discard_transaction(c.server, cl);
    return c.reply_error(err::kExecAbort);
  }
  if (cl.watch_dirty) {
    discard_transaction(c.server, cl);
    return c.reply(Reply::nil_array());
  }
  c.server.unwatch_all(cl);
  std::vector<Argv> queued = std::move(cl.queued);
  cl.queued.clear();
  cl.in_multi = false;
  std::vector<Reply> replies;
  replies.reserve(queued.size());
  for (const Argv& argv : queued) {
    c.server.execute(cl, argv, c.now_us, &replies, true, c.in_script);
  }
  cl.multi_dirty = false;
  c.reply(Reply::array(std::move(replies)));
}

void watch_command(Ctx& c) {
  if (c.client.in_multi) return c.reply_error("ERR WATCH inside MULTI is not allowed");
  // A client that is already dirty stays dirty: no point watching more.
  for (size_t j = 1; j < c.argc(); j++) c.server_watch(c.arg(j));
  c.reply_ok();
}

void unwatch_command(Ctx& c) {
  c.server.unwatch_all(c.client);
  c.reply_ok();
}

}  // namespace

void register_multi_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int first_key = 0,
                 int last_key = 0) {
    t[name] = CommandSpec{name, arity, flags, h, first_key, last_key, first_key ? 1 : 0};
  };
  add("multi", 1, kFast | kNoScript | kAllowBusy, multi_command);
  add("exec", 1, kNoScript, exec_command);
  add("discard", 1, kFast | kNoScript | kAllowBusy, discard_command);
  add("watch", -2, kFast | kNoScript | kAllowBusy, watch_command, 1, -1);
  add("unwatch", 1, kFast | kNoScript | kAllowBusy, unwatch_command);
}

}  // namespace redlab::fake
