// Pub/sub (Redis pubsub.c): SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH PUBSUB.
//
// Fire and forget, as in Redis: PUBLISH hands the message to whoever is subscribed at that
// instant and to nobody else, so a subscriber that connects (or reconnects) a moment later
// never sees it; that loss is one of the lessons the simulator exists to show. Messages go
// out through Server::emit at the time PUBLISH replies.
//
// Bookkeeping lives in two places kept in step: the server's channel/pattern -> subscribers
// maps (in subscribe order, which is the order Redis delivers in) and each client's own sets
// (Client::channels, and Client::patterns in subscribe order). Server::disconnect cleans both.
// Each subscribe-family command replies once per channel, with the client's total count of
// subscriptions after that step; a client with no subscription left leaves the RESP2
// subscriber context (dispatch checks Client::subscriptions()).
//
// Where Redis' own order comes from a hash table (UNSUBSCRIBE with no argument, PUBSUB
// CHANNELS, several patterns matching one message), ours is sorted: deterministic, and one
// of the orders Redis may produce.
#include <algorithm>

#include "sim/core/assert.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

using Registry = std::map<std::string, std::vector<ClientId>, std::less<>>;

Reply notice(const char* kind, const std::string* channel, size_t count) {
  return Reply::array({Reply::bulk(kind), channel ? Reply::bulk(*channel) : Reply::nil(),
                       Reply::integer_reply(static_cast<int64_t>(count))});
}

void registry_remove(Registry& registry, const std::string& name, ClientId id) {
  auto it = registry.find(name);
  REDLAB_ASSERT(it != registry.end() && "subscriptions are in the server registry");
  auto& ids = it->second;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  if (ids.empty()) registry.erase(it);
}

// pubsubSubscribeChannel: subscribing twice is harmless and still answered.
void subscribe_channel(Ctx& c, const std::string& channel) {
  Client& cl = c.client;
  if (cl.channels.insert(channel).second) c.server.pubsub_channels[channel].push_back(cl.id);
  c.reply(notice("subscribe", &channel, cl.subscriptions()));
}

void unsubscribe_channel(Ctx& c, const std::string& channel) {
  Client& cl = c.client;
  auto it = cl.channels.find(channel);
  if (it != cl.channels.end()) {
    cl.channels.erase(it);
    registry_remove(c.server.pubsub_channels, channel, cl.id);
  }
  c.reply(notice("unsubscribe", &channel, cl.subscriptions()));
}

void subscribe_pattern(Ctx& c, const std::string& pattern) {
  Client& cl = c.client;
  if (std::find(cl.patterns.begin(), cl.patterns.end(), pattern) == cl.patterns.end()) {
    cl.patterns.push_back(pattern);
    c.server.pubsub_patterns[pattern].push_back(cl.id);
  }
  c.reply(notice("psubscribe", &pattern, cl.subscriptions()));
}

void unsubscribe_pattern(Ctx& c, const std::string& pattern) {
  Client& cl = c.client;
  auto it = std::find(cl.patterns.begin(), cl.patterns.end(), pattern);
  if (it != cl.patterns.end()) {
    cl.patterns.erase(it);
    registry_remove(c.server.pubsub_patterns, pattern, cl.id);
  }
  c.reply(notice("punsubscribe", &pattern, cl.subscriptions()));
}

void subscribe_command(Ctx& c) {
  // Inside MULTI Redis allows it (for backward compatibility); scripts cannot call it at all
  // (the command is flagged kNoScript).
  for (size_t j = 1; j < c.argc(); j++) subscribe_channel(c, c.arg(j));
}

void unsubscribe_command(Ctx& c) {
  if (c.argc() > 1) {
    for (size_t j = 1; j < c.argc(); j++) unsubscribe_channel(c, c.arg(j));
    return;
  }
  // pubsubUnsubscribeAllChannels: one reply per channel; subscribed to none, still one.
  if (c.client.channels.empty())
    return c.reply(notice("unsubscribe", nullptr, c.client.subscriptions()));
  std::vector<std::string> all(c.client.channels.begin(), c.client.channels.end());
  for (const std::string& channel : all) unsubscribe_channel(c, channel);
}

void psubscribe_command(Ctx& c) {
  for (size_t j = 1; j < c.argc(); j++) subscribe_pattern(c, c.arg(j));
}

void punsubscribe_command(Ctx& c) {
  if (c.argc() > 1) {
    for (size_t j = 1; j < c.argc(); j++) unsubscribe_pattern(c, c.arg(j));
    return;
  }
  if (c.client.patterns.empty())
    return c.reply(notice("punsubscribe", nullptr, c.client.subscriptions()));
  std::vector<std::string> all = c.client.patterns;  // in subscribe order, as Redis 7.0
  for (const std::string& pattern : all) unsubscribe_pattern(c, pattern);
}

// pubsubPublishMessage: channel subscribers first, in subscribe order, then every matching
// pattern's subscribers. A client subscribed both ways gets the message twice (and counts
// twice).
void publish_command(Ctx& c) {
  const std::string& channel = c.arg(1);
  const std::string& message = c.arg(2);
  Server& s = c.server;
  int64_t receivers = 0;
  if (auto it = s.pubsub_channels.find(channel); it != s.pubsub_channels.end()) {
    for (ClientId id : it->second) {
      s.emit(id, c.reply_at_us,
             Reply::array({Reply::bulk("message"), Reply::bulk(channel), Reply::bulk(message)}));
      receivers++;
    }
  }
  for (const auto& [pattern, ids] : s.pubsub_patterns) {
    if (!glob_match(pattern, channel)) continue;
    for (ClientId id : ids) {
      s.emit(id, c.reply_at_us,
             Reply::array({Reply::bulk("pmessage"), Reply::bulk(pattern), Reply::bulk(channel),
                           Reply::bulk(message)}));
      receivers++;
    }
  }
  c.reply_int(receivers);
}

// channelList: the active channels matching an optional pattern.
Reply channel_list(const Registry& registry, const std::string* pattern) {
  Reply out = Reply::array();
  for (const auto& [name, ids] : registry)
    if (!pattern || glob_match(*pattern, name)) out.elements.push_back(Reply::bulk(name));
  return out;
}

void pubsub_help(Ctx& c) {
  static const char* const kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  Reply out = Reply::array();
  for (const char* line : kLines) out.elements.push_back(Reply::status(line));
  c.reply(std::move(out));
}

// PUBSUB is a container command in Redis 7.0: each subcommand has its own arity (checked
// first, "pubsub|numpat"), then pubsubCommand checks the argument count again and answers
// "unknown subcommand or wrong number of arguments" for CHANNELS with two patterns.
void pubsub_command(Ctx& c) {
  const std::string& sub = c.arg(1);
  size_t argc = c.argc();
  auto syntax_error = [&] {
    std::string name = sub.substr(0, 128);
    c.reply_error("ERR unknown subcommand or wrong number of arguments for '" + name +
                  "'. Try PUBSUB HELP.");
  };
  // Sharded pub/sub (SSUBSCRIBE) is not modelled: no shard channel ever has a subscriber.
  static const Registry kNoShardChannels;
  if (equals_nocase(sub, "help")) {
    if (argc != 2) return c.reply_arity_error("pubsub|help");
    pubsub_help(c);
  } else if (equals_nocase(sub, "channels") || equals_nocase(sub, "shardchannels")) {
    if (argc > 3) return syntax_error();
    const Registry& registry =
        equals_nocase(sub, "channels") ? c.server.pubsub_channels : kNoShardChannels;
    c.reply(channel_list(registry, argc == 3 ? &c.arg(2) : nullptr));
  } else if (equals_nocase(sub, "numsub") || equals_nocase(sub, "shardnumsub")) {
    const Registry& registry =
        equals_nocase(sub, "numsub") ? c.server.pubsub_channels : kNoShardChannels;
    Reply out = Reply::array();
    for (size_t j = 2; j < argc; j++) {
      auto it = registry.find(c.arg(j));
      out.elements.push_back(Reply::bulk(c.arg(j)));
      out.elements.push_back(
          Reply::integer_reply(it == registry.end() ? 0 : static_cast<int64_t>(it->second.size())));
    }
    c.reply(std::move(out));
  } else if (equals_nocase(sub, "numpat")) {
    if (argc != 2) return c.reply_arity_error("pubsub|numpat");
    // Redis 7.0 counts distinct patterns, not pattern subscriptions.
    c.reply_int(static_cast<int64_t>(c.server.pubsub_patterns.size()));
  } else {
    c.reply_unknown_subcommand();
  }
}

}  // namespace

void register_pubsub_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h) {
    t[name] = CommandSpec{name, arity, flags, h, 0, 0, 0};
  };
  uint32_t subscriber = kPubSub | kNoScript | kAllowInPubSub;
  add("subscribe", -2, subscriber, subscribe_command);
  add("unsubscribe", -1, subscriber, unsubscribe_command);
  add("psubscribe", -2, subscriber, psubscribe_command);
  add("punsubscribe", -1, subscriber, punsubscribe_command);
  add("publish", 3, kPubSub | kFast, publish_command);
  add("pubsub", -2, kPubSub, pubsub_command);
}

}  // namespace redlab::fake
