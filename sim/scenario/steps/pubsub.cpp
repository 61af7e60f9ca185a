// Pub/sub: subscribe (a go-redis PubSub listening for a while, optionally a slow reader) and
// publish.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

// ---- pub/sub and streams ----
void run_subscribe(Engine& eng, ActorRt& a, const Step& s, Next k) {
  auto channels = eng.step_list(a, s, "channels");
  int64_t for_ms = eng.step_ms(a, s, "for_ms", 0);
  int64_t handle_ms = eng.step_ms(a, s, "handle_ms", 0);
  auto ps = std::make_unique<client::PubSub>(*a.client, eng.sid(s), a.name);
  client::PubSub* raw = ps.get();
  a.pubsubs.push_back(std::move(ps));
  // A slow subscriber receives the way go-redis applications do, through PubSub.Channel():
  // go-redis drains the socket into a 100-message Go channel and the application takes
  // one message every handle_ms (sim/client/pubsub.h). channel_size is WithChannelSize.
  if (handle_ms > 0) {
    client::ChannelOptions co;
    co.handle_us = ms_to_us(handle_ms);
    if (s.n("channel_size")) {
      co.size = eng.num(*s.n("channel_size"), &a, eng.field(s, "channel_size"));
      if (co.size < 1 || co.size > 1000000)
        eng.fail(eng.field(s, "channel_size"), "expected 1 to 1000000 messages");
    }
    raw->channel(co);
  }
  // The actor means to listen to each channel for for_ms: a span per channel, ended when
  // it stops (the messages it should have got are those published meanwhile).
  auto listen_spans = std::make_shared<std::vector<std::pair<std::string, int64_t>>>();
  for (auto& ch : channels) {
    listen_spans->emplace_back(ch, eng.begin(eng.ev(a, "listen", eng.sid(s), ch)
                                                 .with(F::channel, ch)
                                                 .with(F::method, "pubsub")
                                                 .with(F::for_us, ms_to_us(for_ms))));
  }
  ActorRt* p = &a;
  auto open = std::make_shared<bool>(true);
  raw->subscribe(channels,
                 eng.guard1<Error>(a, [&eng, p, &s, k, raw, for_ms, open, listen_spans](Error e) {
                   if (!e.ok())
                     eng.put(eng.ev(*p, "subscribe_failed", eng.sid(s), e.text)
                                 .with(F::error, e.text)
                                 .with(F::error_class, client::error_class(e.kind)));
                   eng.after(*p, ms_to_us(for_ms), [&eng, p, &s, raw, k, open, listen_spans] {
                     *open = false;
                     raw->close();
                     for (auto& [ch, span] : *listen_spans)
                       eng.end(eng.ev(*p, "listen_end", eng.sid(s), ch).with(F::channel, ch), span);
                     k();
                   });
                 }));
}

void run_publish(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string channel = eng.step_str(a, s, "channel");
  std::string message = eng.step_str(a, s, "message");
  if (s.n("pad_to")) {
    // Big messages fill a slow subscriber's output buffer sooner.
    int64_t pad = eng.num(*s.n("pad_to"), &a, eng.field(s, "pad_to"));
    if (pad < 0 || pad > 64 * 1024 * 1024) eng.fail(eng.field(s, "pad_to"), "expected 0 to 64 MB");
    if (int64_t(message.size()) < pad)
      message += " " + std::string(size_t(pad) - message.size() - 1, '.');
  }
  int64_t span =
      eng.begin(eng.ev(a, "publish", eng.sid(s), channel + ": " + trace_excerpt(message, 60))
                    .with(F::channel, channel)
                    .with(F::message, trace_excerpt(message))
                    .with(F::method, "pubsub"));
  ActorRt* p = &a;
  a.client->do_command(
      eng.ctx(a, s), {"PUBLISH", channel, message},
      eng.guard1<Result>(a, [&eng, p, &s, k, span](Result r) {
        TraceEvent e = eng.ev(*p, "published", eng.sid(s), reply_text(r));
        if (r.ok() && r.reply.kind == Reply::Kind::Integer) {
          e.with(F::receivers, r.reply.integer);
        } else if (!r.ok()) {
          e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
        }
        eng.end(std::move(e), span);
        eng.save(*p, s, reply_text(r));
        k();
      }));
}

constexpr FieldSpec kSubscribe[] = {
    {.key = "channels",
     .type = FieldType::List,
     .required = true,
     .absent = "non-empty",
     .non_empty = true},
    {.key = "for_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "handle_ms", .type = FieldType::Duration, .unit = "ms", .absent = "0"},
    {.key = "channel_size", .type = FieldType::Count, .unit = "messages", .absent = "100"}};
constexpr FieldSpec kPublish[] = {{.key = "channel", .type = FieldType::Text, .required = true},
                                  {.key = "message", .type = FieldType::Text, .required = true},
                                  {.key = "pad_to", .type = FieldType::Number, .unit = "bytes"}};

}  // namespace

extern const StepKind subscribe_step, publish_step;
const StepKind subscribe_step{"subscribe", kSubscribe, run_subscribe, nullptr, nullptr, false};
const StepKind publish_step{"publish", kPublish, run_publish, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps
