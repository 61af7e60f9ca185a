// List commands (Redis t_list.c): pushes and pops at both ends, ranges, LMOVE, and the
// blocking pops BLPOP BRPOP BLMPOP BLMOVE BRPOPLPUSH.
//
// A list is a std::deque; an empty list never exists (the key is deleted with its last
// element, as Redis does). Argument checks run in the order Redis runs them, since that order
// decides which error a wrong command gets (LPOP parses its count before it looks at the key,
// LINDEX looks at the key before it parses the index).
//
// Blocking, as in Redis 7.0 (blocked.c): a pop on missing keys blocks the client on all of
// them. Only the creation of a list key wakes waiters (Redis signals readiness from dbAdd), and
// the server then re-runs each waiter's command in the order the clients blocked (FIFO), with
// ctx.retrying set and BlockState::ready_key naming the key that became ready. A retried
// command serves from that key only, like serveClientsBlockedOnListKey: if the key holds no
// list any more (an earlier waiter emptied it, or it became another type) the client stays
// blocked and keeps its place. So one LPUSH of three elements wakes three waiters, and a
// client blocked on several keys is served from whichever becomes ready first, even when a
// transaction fills another of its keys too. BLMOVE's push onto a list that others wait on
// makes that list ready in turn (handled in the next round of Server::handle_ready_keys).
//
// Inside MULTI/EXEC (and in a script, where of these only BLMPOP may be called: the others
// carry Redis' noscript flag) a blocking pop on empty keys answers at once as if it had
// timed out. The replies differ on the wire, and we copy Redis exactly: a timeout of any of
// these commands is a nil array (replyToBlockedClientTimedOut), but BLMOVE/BRPOPLPUSH that
// cannot block answer a nil bulk.
#include <algorithm>
#include <climits>

#include "sim/core/assert.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

enum class Where : uint8_t { Head, Tail };

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

// getListPositionFromObjectOrReply: LEFT or RIGHT, any case.
bool where_or_reply(Ctx& c, size_t i, Where& out) {
  if (equals_nocase(c.arg(i), "left")) {
    out = Where::Head;
  } else if (equals_nocase(c.arg(i), "right")) {
    out = Where::Tail;
  } else {
    c.reply_error(err::kSyntax);
    return false;
  }
  return true;
}

// getRangeLongFromObjectOrReply with a message: the same text for "not a number" and "out of
// range", as Redis does when a message is given.
bool range_arg(Ctx& c, size_t i, int64_t min, int64_t max, int64_t& out, std::string_view msg) {
  auto v = parse_int64(c.arg(i));
  if (!v || *v < min || *v > max) {
    c.reply_error(msg);
    return false;
  }
  out = *v;
  return true;
}

// The list at key, or nullptr when the key is missing or holds another type. Replies
// nothing: for blocked clients that are retried, where a wrong type means "not ready".
ListValue* list_if_any(Ctx& c, std::string_view key) {
  Entry* e = c.lookup_write(key);
  return e ? std::get_if<ListValue>(&e->value.data) : nullptr;
}

// Creates an empty list at key (the caller pushes at once: no empty list survives a command).
ListValue& create_list(Ctx& c, std::string_view key) {
  return std::get<ListValue>(c.set_key(key, Value{ListValue{}}).value.data);
}

void push(ListValue& list, std::string value, Where where) {
  if (where == Where::Head) {
    list.push_front(std::move(value));
  } else {
    list.push_back(std::move(value));
  }
}

std::string pop(ListValue& list, Where where) {
  REDLAB_ASSERT(!list.empty() && "an empty list never exists: its key is deleted");
  std::string value;
  if (where == Where::Head) {
    value = std::move(list.front());
    list.pop_front();
  } else {
    value = std::move(list.back());
    list.pop_back();
  }
  return value;
}

// listElementsRemoved: deletes the key with its last element; any removal touches WATCH.
void elements_removed(Ctx& c, std::string_view key, const ListValue& list) {
  if (list.empty()) c.delete_key(key);
  c.signal_modified(key);
}

// Pops up to count elements from one end, in pop order.
Reply pop_range(ListValue& list, Where where, int64_t count) {
  Reply out = Reply::array();
  size_t n = std::min(list.size(), static_cast<size_t>(count));
  out.elements.reserve(n);
  for (size_t i = 0; i < n; i++) out.elements.push_back(Reply::bulk(pop(list, where)));
  return out;
}

// addListRangeReply: start/end are inclusive and may be negative (from the end).
Reply range_reply(const ListValue& list, int64_t start, int64_t end) {
  auto len = static_cast<int64_t>(list.size());
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  // start >= 0 here, so this also catches end < 0.
  if (start > end || start >= len) return Reply::array();
  if (end >= len) end = len - 1;
  Reply out = Reply::array();
  out.elements.reserve(static_cast<size_t>(end - start + 1));
  for (int64_t i = start; i <= end; i++)
    out.elements.push_back(Reply::bulk(list[static_cast<size_t>(i)]));
  return out;
}

// ---------------------------------------------------------------------------------------
// Push and pop
// ---------------------------------------------------------------------------------------

// pushGenericCommand. xx: LPUSHX/RPUSHX, which never create the key.
void push_generic(Ctx& c, Where where, bool xx) {
  const std::string& key = c.arg(1);
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(key, wrong);
  if (wrong) return;
  bool created = false;
  if (!list) {
    if (xx) return c.reply_int(0);
    list = &create_list(c, key);
    created = true;
  }
  for (size_t j = 2; j < c.argc(); j++) push(*list, c.arg(j), where);
  c.reply_int(static_cast<int64_t>(list->size()));
  c.signal_modified(key);
  if (created) c.signal_key_ready(key);
}

void lpush_command(Ctx& c) {
  push_generic(c, Where::Head, false);
}
void rpush_command(Ctx& c) {
  push_generic(c, Where::Tail, false);
}
void lpushx_command(Ctx& c) {
  push_generic(c, Where::Head, true);
}
void rpushx_command(Ctx& c) {
  push_generic(c, Where::Tail, true);
}

// popGenericCommand: without a count one bulk (or nil); with one, an array (or a nil array).
void pop_generic(Ctx& c, Where where) {
  if (c.argc() > 3) return c.reply_arity_error(c.cmd.name);
  bool has_count = c.argc() == 3;
  int64_t count = 0;
  if (has_count &&
      !range_arg(c, 2, 0, INT64_MAX, count, "ERR value is out of range, must be positive"))
    return;
  const std::string& key = c.arg(1);
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(key, wrong);
  if (wrong) return;
  if (!list) return c.reply(has_count ? Reply::nil_array() : Reply::nil());
  if (has_count && count == 0) return c.reply(Reply::array());
  if (!has_count) {
    c.reply_bulk(pop(*list, where));
  } else {
    c.reply(pop_range(*list, where, count));
  }
  elements_removed(c, key, *list);
}

void lpop_command(Ctx& c) {
  pop_generic(c, Where::Head);
}
void rpop_command(Ctx& c) {
  pop_generic(c, Where::Tail);
}

// The [key, element] reply of BLPOP, or BLMPOP/LMPOP's [key, [elements]] when count >= 0.
void pop_with_key(Ctx& c, ListValue& list, const std::string& key, Where where, int64_t count) {
  if (count < 0) {
    c.reply(Reply::array({Reply::bulk(key), Reply::bulk(pop(list, where))}));
  } else {
    c.reply(Reply::array({Reply::bulk(key), pop_range(list, where, count)}));
  }
  elements_removed(c, key, list);
}

// Serves the first key (in argument order) holding a list. A key of another type found
// before it is WRONGTYPE. Returns false, having replied nothing, when all keys are missing.
bool pop_first_nonempty(Ctx& c, size_t first, size_t numkeys, Where where, int64_t count) {
  for (size_t j = first; j < first + numkeys; j++) {
    bool wrong = false;
    ListValue* list = c.lookup_typed<ListValue>(c.arg(j), wrong);
    if (wrong) return true;
    if (!list || list->empty()) continue;
    pop_with_key(c, *list, c.arg(j), where, count);
    return true;
  }
  return false;
}

// blockingPopGenericCommand (BLPOP, BRPOP, BLMPOP). count < 0: BLPOP's reply shape.
void blocking_pop_generic(Ctx& c, size_t first, size_t numkeys, Where where, size_t timeout_idx,
                          int64_t count) {
  TimeUs timeout_us = 0;
  if (!c.timeout_arg(timeout_idx, timeout_us)) return;
  if (c.retrying) {
    // Woken because ready_key became a list: serve from it or stay blocked (any other type,
    // or a list that earlier waiters emptied, is simply not ready for us).
    const std::string& key = c.client.block.ready_key;
    ListValue* list = key.empty() ? nullptr : list_if_any(c, key);
    if (list && !list->empty()) return pop_with_key(c, *list, key, where, count);
    if (key.empty()) {
      // No key named: serve from the first of ours that holds a list, skipping other types.
      for (size_t j = first; j < first + numkeys; j++) {
        ListValue* l = list_if_any(c, c.arg(j));
        if (l && !l->empty()) return pop_with_key(c, *l, c.arg(j), where, count);
      }
    }
    return c.block({}, timeout_us, Reply::nil_array());
  }
  if (pop_first_nonempty(c, first, numkeys, where, count)) return;
  // Not allowed to block (MULTI, scripts): answer as a timeout, even with timeout 0.
  if (!c.can_block()) return c.reply(Reply::nil_array());
  std::vector<std::string> keys(c.argv.begin() + static_cast<ptrdiff_t>(first),
                                c.argv.begin() + static_cast<ptrdiff_t>(first + numkeys));
  c.block(std::move(keys), timeout_us, Reply::nil_array());
}

void blpop_command(Ctx& c) {
  blocking_pop_generic(c, 1, c.argc() - 2, Where::Head, c.argc() - 1, -1);
}
void brpop_command(Ctx& c) {
  blocking_pop_generic(c, 1, c.argc() - 2, Where::Tail, c.argc() - 1, -1);
}

// lmpopGenericCommand: numkeys key [key ...] LEFT|RIGHT [COUNT count], parsed in this order.
void lmpop_generic(Ctx& c, size_t numkeys_idx, bool block) {
  int64_t numkeys = 0;
  if (!range_arg(c, numkeys_idx, 1, INT64_MAX, numkeys, "ERR numkeys should be greater than 0"))
    return;
  // Redis computes numkeys_idx + numkeys + 1 and compares it with argc; comparing numkeys
  // first keeps the sum from overflowing.
  if (numkeys >= static_cast<int64_t>(c.argc())) return c.reply_error(err::kSyntax);
  size_t where_idx = numkeys_idx + static_cast<size_t>(numkeys) + 1;
  if (where_idx >= c.argc()) return c.reply_error(err::kSyntax);
  Where where = Where::Head;
  if (!where_or_reply(c, where_idx, where)) return;
  int64_t count = -1;
  for (size_t j = where_idx + 1; j < c.argc(); j++) {
    bool more = j + 1 < c.argc();
    if (count == -1 && equals_nocase(c.arg(j), "count") && more) {
      j++;
      if (!range_arg(c, j, 1, INT64_MAX, count, "ERR count should be greater than 0")) return;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  if (count == -1) count = 1;
  size_t first = numkeys_idx + 1;
  auto n = static_cast<size_t>(numkeys);
  if (block) return blocking_pop_generic(c, first, n, where, 1, count);
  if (pop_first_nonempty(c, first, n, where, count)) return;
  c.reply(Reply::nil_array());
}

void lmpop_command(Ctx& c) {
  lmpop_generic(c, 1, false);
}
void blmpop_command(Ctx& c) {
  lmpop_generic(c, 2, true);
}

// ---------------------------------------------------------------------------------------
// LMOVE and its blocking forms
// ---------------------------------------------------------------------------------------

// Pops from src (non-empty) and pushes onto dst (lmoveHandlePush), replying the element. A
// dst of another type is WRONGTYPE and nothing moves. src and dst may be the same list.
void move_element(Ctx& c, ListValue& src, const std::string& src_key, const std::string& dst_key,
                  Where from, Where to) {
  bool wrong = false;
  ListValue* dst = c.lookup_typed<ListValue>(dst_key, wrong);
  if (wrong) return;
  std::string value = pop(src, from);
  bool created = false;
  if (!dst) {
    dst = &create_list(c, dst_key);  // node-based map: src stays valid
    created = true;
  }
  c.signal_modified(dst_key);
  push(*dst, value, to);
  c.reply_bulk(value);
  if (created) c.signal_key_ready(dst_key);
  if (src.empty()) c.delete_key(src_key);
  c.signal_modified(src_key);
}

// lmoveGenericCommand: nil when the source is missing (whatever the destination holds).
void lmove_generic(Ctx& c, Where from, Where to) {
  bool wrong = false;
  ListValue* src = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  if (!src) return c.reply_nil();
  move_element(c, *src, c.arg(1), c.arg(2), from, to);
}

void lmove_command(Ctx& c) {
  Where from = Where::Head, to = Where::Head;
  if (!where_or_reply(c, 3, from) || !where_or_reply(c, 4, to)) return;
  lmove_generic(c, from, to);
}

void rpoplpush_command(Ctx& c) {
  lmove_generic(c, Where::Tail, Where::Head);
}

// blmoveGenericCommand.
void blmove_generic(Ctx& c, Where from, Where to, size_t timeout_idx) {
  TimeUs timeout_us = 0;
  if (!c.timeout_arg(timeout_idx, timeout_us)) return;
  const std::string& src_key = c.arg(1);
  if (c.retrying) {
    // serveClientBlockedOnList: a destination of another type answers WRONGTYPE and ends
    // the wait; a source that is no list (any more) keeps the client blocked.
    ListValue* src = list_if_any(c, src_key);
    if (!src || src->empty()) return c.block({}, timeout_us, Reply::nil_array());
    return move_element(c, *src, src_key, c.arg(2), from, to);
  }
  bool wrong = false;
  ListValue* src = c.lookup_typed<ListValue>(src_key, wrong);
  if (wrong) return;
  if (!src) {
    if (!c.can_block()) return c.reply_nil();
    return c.block({src_key}, timeout_us, Reply::nil_array());
  }
  move_element(c, *src, src_key, c.arg(2), from, to);
}

void blmove_command(Ctx& c) {
  Where from = Where::Head, to = Where::Head;
  if (!where_or_reply(c, 3, from) || !where_or_reply(c, 4, to)) return;
  blmove_generic(c, from, to, 5);
}

void brpoplpush_command(Ctx& c) {
  blmove_generic(c, Where::Tail, Where::Head, 3);
}

// ---------------------------------------------------------------------------------------
// Reading and editing in place
// ---------------------------------------------------------------------------------------

void llen_command(Ctx& c) {
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  c.reply_int(list ? static_cast<int64_t>(list->size()) : 0);
}

void lrange_command(Ctx& c) {
  int64_t start = 0, end = 0;
  if (!c.int_arg(2, start) || !c.int_arg(3, end)) return;
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  if (!list) return c.reply(Reply::array());
  c.reply(range_reply(*list, start, end));
}

void lindex_command(Ctx& c) {
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  if (!list) return c.reply_nil();
  int64_t index = 0;
  if (!c.int_arg(2, index)) return;
  auto len = static_cast<int64_t>(list->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return c.reply_nil();
  c.reply_bulk((*list)[static_cast<size_t>(index)]);
}

void lset_command(Ctx& c) {
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  if (!list) return c.reply_error(err::kNoSuchKey);
  int64_t index = 0;
  if (!c.int_arg(2, index)) return;
  auto len = static_cast<int64_t>(list->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return c.reply_error(err::kIndexOutOfRange);
  (*list)[static_cast<size_t>(index)] = c.arg(3);
  c.reply_ok();
  c.signal_modified(c.arg(1));
}

void ltrim_command(Ctx& c) {
  int64_t start = 0, end = 0;
  if (!c.int_arg(2, start) || !c.int_arg(3, end)) return;
  const std::string& key = c.arg(1);
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(key, wrong);
  if (wrong) return;
  if (!list) return c.reply_ok();
  auto len = static_cast<int64_t>(list->size());
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  int64_t ltrim = 0, rtrim = 0;
  if (start > end || start >= len) {
    ltrim = len;  // an empty range empties the list
  } else {
    if (end >= len) end = len - 1;
    ltrim = start;
    rtrim = len - end - 1;
  }
  list->erase(list->begin(), list->begin() + ltrim);
  list->erase(list->end() - rtrim, list->end());
  // Even a trim that removes nothing touches WATCH (signalModifiedKey is unconditional).
  elements_removed(c, key, *list);
  c.reply_ok();
}

void lrem_command(Ctx& c) {
  int64_t to_remove = 0;
  if (!c.int_arg(2, to_remove)) return;
  const std::string& key = c.arg(1);
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(key, wrong);
  if (wrong) return;
  if (!list) return c.reply_int(0);
  const std::string& value = c.arg(3);
  // Negative: from the tail. INT64_MIN negates to itself in Redis and so removes all.
  bool from_tail = to_remove < 0;
  uint64_t limit = to_remove == INT64_MIN ? 0
                   : from_tail            ? static_cast<uint64_t>(-to_remove)
                                          : static_cast<uint64_t>(to_remove);
  uint64_t removed = 0;
  if (!from_tail) {
    for (auto it = list->begin(); it != list->end();) {
      if (*it != value) {
        ++it;
        continue;
      }
      it = list->erase(it);
      if (++removed == limit) break;
    }
  } else {
    for (size_t i = list->size(); i-- > 0;) {
      if ((*list)[i] != value) continue;
      list->erase(list->begin() + static_cast<ptrdiff_t>(i));
      if (++removed == limit) break;
    }
  }
  if (list->empty()) c.delete_key(key);
  if (removed) c.signal_modified(key);
  c.reply_int(static_cast<int64_t>(removed));
}

void linsert_command(Ctx& c) {
  Where where = Where::Head;
  if (equals_nocase(c.arg(2), "after")) {
    where = Where::Tail;
  } else if (equals_nocase(c.arg(2), "before")) {
    where = Where::Head;
  } else {
    return c.reply_error(err::kSyntax);
  }
  const std::string& key = c.arg(1);
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(key, wrong);
  if (wrong) return;
  if (!list) return c.reply_int(0);
  auto it = std::find(list->begin(), list->end(), c.arg(3));
  if (it == list->end()) return c.reply_int(-1);
  if (where == Where::Tail) ++it;
  list->insert(it, c.arg(4));
  c.signal_modified(key);
  c.reply_int(static_cast<int64_t>(list->size()));
}

void lpos_command(Ctx& c) {
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: no COUNT option
  for (size_t j = 3; j < c.argc(); j++) {
    const std::string& opt = c.arg(j);
    bool more = j + 1 < c.argc();
    if (equals_nocase(opt, "rank") && more) {
      j++;
      if (!c.int_arg(j, rank)) return;
      if (rank == 0)
        return c.reply_error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
    } else if (equals_nocase(opt, "count") && more) {
      j++;
      if (!range_arg(c, j, 0, INT64_MAX, count, "ERR COUNT can't be negative")) return;
    } else if (equals_nocase(opt, "maxlen") && more) {
      j++;
      if (!range_arg(c, j, 0, INT64_MAX, maxlen, "ERR MAXLEN can't be negative")) return;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  // A negative rank scans from the tail. Redis negates INT64_MIN into itself, which then
  // matches from the first hit: the same as rank 1.
  bool from_tail = rank < 0;
  if (from_tail) rank = rank == INT64_MIN ? 1 : -rank;
  bool wrong = false;
  ListValue* list = c.lookup_typed<ListValue>(c.arg(1), wrong);
  if (wrong) return;
  if (!list) return c.reply(count != -1 ? Reply::array() : Reply::nil());
  const std::string& ele = c.arg(2);
  auto len = static_cast<int64_t>(list->size());
  Reply found = Reply::array();
  int64_t matches = 0, match_index = -1;
  for (int64_t index = 0; index < len && (maxlen == 0 || index < maxlen); index++) {
    int64_t pos = from_tail ? len - index - 1 : index;
    if ((*list)[static_cast<size_t>(pos)] != ele) continue;
    matches++;
    if (matches < rank) continue;
    if (count == -1) {
      match_index = pos;
      break;
    }
    found.elements.push_back(Reply::integer_reply(pos));
    if (count != 0 && matches - rank + 1 >= count) break;
  }
  if (count != -1) return c.reply(std::move(found));
  if (match_index < 0) return c.reply_nil();
  c.reply_int(match_index);
}

}  // namespace

void register_list_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int first_key = 1,
                 int last_key = 1) {
    t[name] = CommandSpec{name, arity, flags, h, first_key, last_key, first_key ? 1 : 0};
  };
  add("lpush", -3, kWrite | kFast, lpush_command);
  add("rpush", -3, kWrite | kFast, rpush_command);
  add("lpushx", -3, kWrite | kFast, lpushx_command);
  add("rpushx", -3, kWrite | kFast, rpushx_command);
  add("lpop", -2, kWrite | kFast, lpop_command);
  add("rpop", -2, kWrite | kFast, rpop_command);
  add("lmpop", -4, kWrite, lmpop_command, 0, 0);  // keys follow numkeys
  add("llen", 2, kReadOnly | kFast, llen_command);
  add("lrange", 4, kReadOnly, lrange_command);
  add("lindex", 3, kReadOnly, lindex_command);
  add("lset", 4, kWrite, lset_command);
  add("ltrim", 4, kWrite, ltrim_command);
  add("lrem", 4, kWrite, lrem_command);
  add("linsert", 5, kWrite, linsert_command);
  add("lpos", -3, kReadOnly, lpos_command);
  add("lmove", 5, kWrite, lmove_command, 1, 2);
  add("rpoplpush", 3, kWrite, rpoplpush_command, 1, 2);
  add("blpop", -3, kWrite | kBlocking | kNoScript, blpop_command, 1, -2);
  add("brpop", -3, kWrite | kBlocking | kNoScript, brpop_command, 1, -2);
  add("blmpop", -5, kWrite | kBlocking, blmpop_command, 0, 0);
  add("blmove", 6, kWrite | kBlocking | kNoScript, blmove_command, 1, 2);
  add("brpoplpush", 4, kWrite | kBlocking | kNoScript, brpoplpush_command, 1, 2);
}

}  // namespace redlab::fake
