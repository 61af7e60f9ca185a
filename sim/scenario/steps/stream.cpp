// Streams with consumer groups: stream_add (XADD), stream_consume (XREADGROUP and XACK in a
// loop, or the XREAD $ mistake) and stream_autoclaim (XAUTOCLAIM). A consumer's handler (steps
// run for each entry before the batch is acknowledged) is what processing an entry does.
#include <memory>

#include "sim/scenario/engine_impl.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario::steps {
namespace {

using client::Context;
using client::Error;
using client::ErrorKind;
using client::Result;

void run_stream_add(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string stream = eng.step_str(a, s, "stream");
  auto fields = eng.step_list(a, s, "fields");
  if (fields.size() % 2 != 0) eng.fail(eng.field(s, "fields"), "fields come in name/value pairs");
  Argv argv{"XADD", stream};
  if (s.n("maxlen")) {
    // MAXLEN n keeps the newest n entries; 0 means no trimming (not MAXLEN 0).
    int64_t maxlen = eng.num(*s.n("maxlen"), &a, eng.field(s, "maxlen"));
    if (maxlen < 0) eng.fail(eng.field(s, "maxlen"), "a stream length cannot be negative");
    if (maxlen > 0) {
      argv.push_back("MAXLEN");
      argv.push_back(std::to_string(maxlen));
    }
  }
  argv.push_back("*");
  // The entry as the checks and the timeline name it: "field=value ..." (the same text as
  // the consumer's side, entries() below).
  std::string message;
  for (size_t i = 0; i < fields.size(); i++) {
    argv.push_back(fields[i]);
    if (i % 2 == 0)
      message += (message.empty() ? "" : " ") + fields[i];
    else
      message += "=" + fields[i];
  }
  int64_t span =
      eng.begin(eng.ev(a, "publish", eng.sid(s), stream + ": " + trace_excerpt(message, 60))
                    .with(F::channel, stream)
                    .with(F::message, trace_excerpt(message))
                    .with(F::method, "stream"));
  ActorRt* p = &a;
  a.client->do_command(eng.ctx(a, s), argv, eng.guard1<Result>(a, [&eng, p, &s, k, span](Result r) {
    TraceEvent e = eng.ev(*p, "published", eng.sid(s), reply_text(r));
    // A failed XADD added nothing (or we cannot know): not counted as sent.
    if (!r.ok()) {
      e.with(F::error, r.error.text).with(F::error_class, client::error_class(r.error.kind));
    } else {
      e.with(F::id, reply_text(r));
    }
    eng.end(std::move(e), span);
    eng.save(*p, s, reply_text(r));
    k();
  }));
}

// Entries of an XREADGROUP/XAUTOCLAIM reply: (id, "f1 v1 ...").
std::vector<std::pair<std::string, std::string>> entries(const Reply& list) {
  std::vector<std::pair<std::string, std::string>> out;
  if (list.kind != Reply::Kind::Array) return out;
  for (const Reply& e : list.elements) {
    if (e.kind != Reply::Kind::Array || e.elements.size() != 2) continue;
    std::string text;
    const auto& fv = e.elements[1].elements;
    for (size_t i = 0; i < fv.size(); i++)
      text += i % 2 == 0 ? (text.empty() ? "" : " ") + fv[i].str : "=" + fv[i].str;
    out.emplace_back(e.elements[0].str, text);
  }
  return out;
}

using Entries = std::vector<std::pair<std::string, std::string>>;

// The consumer is done with the first `handled` entries of a batch: XACK them (if ack).
void ack_entries(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
                 const std::string& group, const Entries& got, size_t handled, bool ack, Next k) {
  if (!ack || handled == 0) return k();
  Argv x{"XACK", stream, group};
  for (size_t i = 0; i < handled && i < got.size(); i++) x.push_back(got[i].first);
  a.client->do_command(eng.ctx(a, s), x, eng.guard1<Result>(a, [k](Result) { k(); }));
}

void put_entry(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
               const std::string& group, const std::pair<std::string, std::string>& entry) {
  const auto& [id, text] = entry;
  eng.put(eng.ev(a, "stream_message", eng.sid(s), stream + " " + id + " " + trace_excerpt(text, 60))
              .with(F::channel, stream)
              .with(F::id, id)
              .with(F::message, trace_excerpt(text))
              .with(F::group, group));
}

// A slow consumer (handle_ms): it takes entry i (stream_message), handles it for handle_us,
// then takes the next, but none after `until` (the end of its window): what it read and
// never got to stays pending in the group, unacknowledged.
void handle_entries(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
                    const std::string& group, std::shared_ptr<const Entries> got, size_t i,
                    bool ack, TimeUs handle_us, TimeUs until, Next k) {
  if (i == got->size() || eng.scheduler_.now_us() >= until)
    return ack_entries(eng, a, s, stream, group, *got, i, ack, std::move(k));
  put_entry(eng, a, s, stream, group, (*got)[i]);
  ActorRt* p = &a;
  eng.after(a, handle_us, [&eng, p, &s, stream, group, got, i, ack, handle_us, until, k]() mutable {
    handle_entries(eng, *p, s, stream, group, std::move(got), i + 1, ack, handle_us, until,
                   std::move(k));
  });
}

// A consumer with a handler: it takes each entry of the batch in turn (stream_message), runs
// the handler's steps with entry_id and entry set, and only when the whole batch is handled
// acknowledges it (XACK), as a worker loop does: a crash in between leaves every entry of the
// batch pending in the group, the handled ones too.
void handle_with(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
                 const std::string& group, std::shared_ptr<const Entries> got, size_t i, bool ack,
                 Next k) {
  if (i == got->size()) return ack_entries(eng, a, s, stream, group, *got, i, ack, std::move(k));
  put_entry(eng, a, s, stream, group, (*got)[i]);
  a.vars["entry_id"] = (*got)[i].first;
  a.vars["entry"] = (*got)[i].second;
  ActorRt* p = &a;
  TimeUs handle_us = ms_to_us(eng.step_ms(a, s, "handle_ms", 0));
  eng.run_block(a, s.body, 0, [&eng, p, &s, stream, group, got, i, ack, handle_us, k]() mutable {
    // Through the event loop even with no delay: a long batch must not grow the stack.
    eng.after(*p, handle_us, [&eng, p, &s, stream, group, got, i, ack, k]() mutable {
      handle_with(eng, *p, s, stream, group, std::move(got), i + 1, ack, std::move(k));
    });
  });
}

void deliver_entries(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
                     const std::string& group, const Entries& got, bool ack, Next k) {
  if (got.empty()) return k();
  if (!s.body.empty())
    return handle_with(eng, a, s, stream, group, std::make_shared<const Entries>(got), 0, ack,
                       std::move(k));
  for (const auto& entry : got) put_entry(eng, a, s, stream, group, entry);
  ack_entries(eng, a, s, stream, group, got, got.size(), ack, std::move(k));
}

void consume_loop(Engine& eng, ActorRt& a, const Step& s, const std::string& stream,
                  const std::string& group, const std::string& consumer, TimeUs until, Next k) {
  TimeUs now = eng.scheduler_.now_us();
  if (now >= until) return k();
  int64_t count = s.n("count") ? eng.num(*s.n("count"), &a, eng.field(s, "count")) : 10;
  int64_t block = eng.step_ms(a, s, "block_ms", 1000);
  // Do not block past the end of the listening window.
  block = std::max<int64_t>(1, std::min<int64_t>(block, (until - now) / 1000));
  bool ack = s.f("ack", true) && !group.empty();
  ActorRt* p = &a;
  Argv read =
      group.empty()
          ? Argv{"XREAD", "COUNT", std::to_string(count), "BLOCK", std::to_string(block), "STREAMS",
                 stream,  "$"}
          : Argv{"XREADGROUP", "GROUP",
                 group,        consumer,
                 "COUNT",      std::to_string(count),
                 "BLOCK",      std::to_string(block),
                 "STREAMS",    stream,
                 ">"};
  a.client->do_command(
      eng.ctx(a, s), std::move(read),
      eng.guard1<Result>(a, [&eng, p, &s, k, stream, group, consumer, until, ack](Result r) {
        auto again = [&eng, p, &s, k, stream, group, consumer, until] {
          consume_loop(eng, *p, s, stream, group, consumer, until, k);
        };
        if (!r.ok()) {
          // The worker loop of the seeds: log, back off, read again from where the group is.
          eng.put(eng.ev(*p, "consume_error", eng.sid(s), r.error.text)
                      .with(F::error, r.error.text)
                      .with(F::error_class, client::error_class(r.error.kind)));
          return eng.after(*p, ms_to_us(100), again);
        }
        std::vector<std::pair<std::string, std::string>> got;
        if (r.reply.kind == Reply::Kind::Array)
          for (const Reply& st : r.reply.elements)
            if (st.kind == Reply::Kind::Array && st.elements.size() == 2) {
              auto e = entries(st.elements[1]);
              got.insert(got.end(), e.begin(), e.end());
            }
        TimeUs handle_us = ms_to_us(eng.step_ms(*p, s, "handle_ms", 0));
        if (handle_us > 0 && !got.empty() && s.body.empty())
          return handle_entries(eng, *p, s, stream, group,
                                std::make_shared<const Entries>(std::move(got)), 0, ack, handle_us,
                                until, again);
        deliver_entries(eng, *p, s, stream, group, got, ack, again);
      }));
}

void run_stream_consume(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string stream = eng.step_str(a, s, "stream");
  std::string group = eng.step_str(a, s, "group");
  std::string consumer = eng.step_str(a, s, "consumer", a.name);
  std::string mode = eng.step_choice(a, s, "mode");
  // "latest" is the classic mistake: XREAD BLOCK ... STREAMS s $ each time, so whatever
  // arrived while the consumer was not blocked in XREAD is never read. It listens as itself.
  if (mode == "latest") group.clear();
  int64_t for_ms = eng.step_ms(a, s, "for_ms", 0);
  TimeUs until = eng.scheduler_.now_us() + ms_to_us(for_ms);
  int64_t span =
      eng.begin(eng.ev(a, "listen", eng.sid(s),
                       stream + (group.empty() ? " (new entries only)" : " group " + group))
                    .with(F::channel, stream)
                    .with(F::group, group)
                    .with(F::method, "stream")
                    .with(F::for_us, ms_to_us(for_ms)));
  ActorRt* p = &a;
  Next done = [&eng, p, &s, stream, span, k] {
    eng.end(eng.ev(*p, "listen_end", eng.sid(s), stream).with(F::channel, stream), span);
    k();
  };
  if (mode == "latest") return consume_loop(eng, a, s, stream, "", consumer, until, done);
  a.client->do_command(
      eng.ctx(a, s), {"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"},
      eng.guard1<Result>(a, [&eng, p, &s, done, stream, group, consumer, until](Result) {
        consume_loop(eng, *p, s, stream, group, consumer, until, done);
      }));
}

void run_autoclaim(Engine& eng, ActorRt& a, const Step& s, Next k) {
  std::string stream = eng.step_str(a, s, "stream");
  std::string group = eng.step_str(a, s, "group");
  std::string consumer = eng.step_str(a, s, "consumer", a.name);
  int64_t idle = eng.step_ms(a, s, "min_idle_ms", 0);
  ActorRt* p = &a;
  a.client->do_command(
      eng.ctx(a, s), {"XAUTOCLAIM", stream, group, consumer, std::to_string(idle), "0-0"},
      eng.guard1<Result>(a, [&eng, p, &s, k, stream, group](Result r) {
        if (!r.ok() || r.reply.kind != Reply::Kind::Array || r.reply.elements.size() < 2) {
          eng.save(*p, s, reply_text(r));
          return k();
        }
        auto got = entries(r.reply.elements[1]);
        eng.save(*p, s, std::to_string(got.size()));
        deliver_entries(eng, *p, s, stream, group, got, true, k);
      }));
}

constexpr FieldSpec kAdd[] = {{.key = "stream", .type = FieldType::Text, .required = true},
                              {.key = "fields",
                               .type = FieldType::List,
                               .required = true,
                               .absent = "non-empty",
                               .non_empty = true},
                              {.key = "maxlen", .type = FieldType::Number, .unit = "entries"}};
constexpr FieldSpec kConsume[] = {
    {.key = "stream", .type = FieldType::Text, .required = true},
    {.key = "group", .type = FieldType::Text, .required = true},
    {.key = "consumer", .type = FieldType::Text, .absent = "the actor's name"},
    {.key = "for_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "count", .type = FieldType::Number, .unit = "entries", .absent = "10"},
    {.key = "block_ms", .type = FieldType::Duration, .unit = "ms", .absent = "1000"},
    {.key = "ack", .type = FieldType::Bool, .absent = "`true`"},
    {.key = "mode", .type = FieldType::Text, .absent = "`group`", .choices = "group latest"},
    {.key = "handle_ms", .type = FieldType::Duration, .unit = "ms", .absent = "0"},
    {.key = "handler", .type = FieldType::Steps, .absent = "none"}};
constexpr FieldSpec kAutoclaim[] = {
    {.key = "stream", .type = FieldType::Text, .required = true},
    {.key = "group", .type = FieldType::Text, .required = true},
    {.key = "consumer", .type = FieldType::Text, .absent = "the actor's name"},
    {.key = "min_idle_ms", .type = FieldType::Duration, .required = true, .unit = "ms"},
    {.key = "handler", .type = FieldType::Steps, .absent = "none"}};

}  // namespace

extern const StepKind stream_add_step, stream_consume_step, stream_autoclaim_step;
const StepKind stream_add_step{"stream_add", kAdd, run_stream_add, nullptr, nullptr, false};
const StepKind stream_consume_step{"stream_consume", kConsume, run_stream_consume,
                                   nullptr,          nullptr,  false};
const StepKind stream_autoclaim_step{
    "stream_autoclaim", kAutoclaim, run_autoclaim, nullptr, nullptr, false};

}  // namespace redlab::scenario::steps
