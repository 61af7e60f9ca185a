// no_lost_messages: what subscribers and consumers meant to hear, and what they got.
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// "msg-20, msg-21, ..., msg-34" for long lists.
std::string message_list(const std::vector<std::string>& all) {
  // A message's first word names it (padding and fields follow).
  std::vector<std::string> v;
  for (const auto& m : all) v.push_back(m.substr(0, m.find(' ')).substr(0, 40));
  if (v.size() <= 6) return names(v);
  return v[0] + ", " + v[1] + ", " + v[2] + ", ..., " + v[v.size() - 2] + ", " + v.back();
}

// Every message published while a subscriber meant to listen reached it: listen .. listen_end
// (what the subscriber intended), publish .. published (what was sent, and PUBLISH's count),
// pubsub_message / stream_message (what it received). Streams: any consumer of the group.
CheckResult no_lost_messages(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string only = arg(args, "channel");
  // A message published in the last moments of a listening window may still be in flight
  // when the subscriber stops: those do not count.
  constexpr TimeUs kGraceUs = 100000;
  struct Publish {
    std::string channel, message;
    bool stream = false, failed = false;
    int64_t receivers = -1;
    TimeUs at_us = 0;
  };
  std::vector<Publish> pubs;
  for (size_t i : ix.of_kind("publish")) {
    const TraceEvent& e = ix.event(i);
    Publish p{std::string(e.str_or(F::channel)),
              std::string(e.str_or(F::message)),
              e.str_or(F::method) == "stream",
              false,
              -1,
              e.time_us};
    size_t end = ix.end_of(i);
    if (end != kNoEvent) {
      const TraceEvent& d = ix.event(end);
      p.receivers = d.num_or(F::receivers, -1);
      p.failed = d.has(F::error);
    }
    pubs.push_back(std::move(p));
  }
  struct Delivery {
    std::string channel, message, actor, group;
  };
  std::vector<Delivery> got;
  for (size_t i : ix.of_kind("pubsub_message")) {
    const TraceEvent& e = ix.event(i);
    got.push_back(
        {std::string(e.str_or(F::channel)), std::string(e.str_or(F::message)), e.actor, ""});
  }
  for (size_t i : ix.of_kind("stream_message")) {
    const TraceEvent& e = ix.event(i);
    got.push_back({std::string(e.str_or(F::channel)), std::string(e.str_or(F::message)), e.actor,
                   std::string(e.str_or(F::group))});
  }
  size_t expected_total = 0, delivered_total = 0, listens = 0;
  std::set<std::pair<std::string, std::string>> groups_done;
  for (size_t i : ix.of_kind("listen")) {
    const TraceEvent& l = ix.event(i);
    std::string channel(l.str_or(F::channel));
    if (!only.empty() && channel != only) continue;
    bool stream = l.str_or(F::method) == "stream";
    std::string group(l.str_or(F::group));
    if (stream && !groups_done.insert({channel, group}).second) continue;
    listens++;
    TimeUs from = l.time_us;
    TimeUs to = end_time(ix, i);
    std::vector<std::string> lost;
    size_t zero_receivers = 0, counted = 0;
    TimeUs first = 0, last = 0;
    for (const Publish& p : pubs) {
      if (p.channel != channel || p.stream != stream) continue;
      if (p.stream && p.failed) continue;  // the XADD failed: nothing was sent
      if (!p.stream && (p.at_us < from || p.at_us + kGraceUs > to)) continue;
      expected_total++;
      bool received = false;
      for (const Delivery& d : got)
        if (d.channel == p.channel && d.message == p.message &&
            (stream ? d.group == group : d.actor == l.actor)) {
          received = true;
          break;
        }
      if (received) {
        delivered_total++;
        continue;
      }
      if (lost.empty()) first = p.at_us;
      last = p.at_us;
      lost.push_back(p.message);
      if (p.receivers == 0) zero_receivers++;
      if (p.receivers > 0) counted++;
    }
    if (lost.empty()) continue;
    std::string who = stream && !group.empty() ? "group " + group : l.actor;
    std::string text = who + " missed " + plural(lost.size(), "message", "messages") + " on " +
                       channel + ", published from " + format_time(first) + " to " +
                       format_time(last) + ": " + message_list(lost);
    if (zero_receivers > 0)
      text += " (PUBLISH returned 0 for " + std::to_string(zero_receivers) +
              " of them: nobody was subscribed)";
    // PUBLISH counts the subscribers the server queued a message for, not those that
    // processed it: the lost messages it counted are the silent part of the loss.
    if (counted > 0)
      text += " (PUBLISH counted a receiver for " + std::to_string(counted) +
              " of them: queued for the subscriber, never processed)";
    r.violations.push_back(Violation{first, last, {l.actor}, text});
  }
  if (listens == 0) return not_judged("nobody listened");
  finish(r, "every message arrived (" + std::to_string(delivered_total) + " of " +
                std::to_string(expected_total) + ")");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "channel", .type = FieldType::Text, .absent = "every channel and stream"}};

}  // namespace

extern const CheckKind no_lost_messages_check;
const CheckKind no_lost_messages_check{
    "no_lost_messages", kFields,
    "what subscribers meant to hear (listen .. listen_end), what was published, and what each "
    "received",
    no_lost_messages};

}  // namespace redlab::scenario::checks
