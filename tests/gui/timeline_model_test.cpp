// The timeline model on real scenario runs (the structure a class must see: two overlapping
// holds, the violation region, a lost message, pool waits, the keyspace at a time), and the
// view drawn headless (an ImGui context with no window or renderer) for what it records.
#include <gtest/gtest.h>

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "app/gui/timeline_model.h"
#include "app/gui/timeline_view.h"
#include "app/report.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::gui {
namespace {

scenario::RunResult run(const std::string& id, std::map<std::string, std::string> variant = {}) {
  scenario::RunOptions options;
  options.variant = std::move(variant);
  return scenario::run_scenario(
      scenario::load_scenario_file(REDLAB_SOURCE_DIR "/scenarios/" + id + ".json"), options);
}

TimelineModel build(const Trace& trace) {
  TimelineModel model;
  model.update(trace);
  return model;
}

const Lane& lane(const TimelineModel& model, const std::string& name) {
  int index = model.lane_index(name);
  EXPECT_GE(index, 0) << "no lane " << name;
  return model.lanes().at(static_cast<size_t>(std::max(index, 0)));
}

std::vector<Item> items_of(const Lane& lane, ItemKind kind) {
  std::vector<Item> out;
  for (const Row& row : lane.rows)
    for (const Item& item : row.items)
      if (item.kind == kind) out.push_back(item);
  return out;
}

constexpr TimeUs kSecondUs = kUsPerSecond;

// ---- ttl-double-holder: the lesson's picture ----

// The first event of a kind (by an actor, if given).
const TraceEvent* first_of(const Trace& trace, const std::string& kind,
                           const std::string& actor = "") {
  for (const TraceEvent& e : trace.events())
    if (e.kind == kind && (actor.empty() || e.actor == actor)) return &e;
  return nullptr;
}

TEST(TimelineModel, TtlDoubleHolderHasTwoOverlappingHoldsAndTheViolation) {
  scenario::RunResult result = run("ttl-double-holder");
  const auto& events = result.trace.events();
  TimelineModel model = build(result.trace);
  ASSERT_EQ(model.event_count(), result.trace.size());
  EXPECT_EQ(model.end_us(), events.back().time_us);

  // Actor lanes in run_start's order, then the server lane exists too, with its record.
  ASSERT_GE(model.lanes().size(), 4u);
  EXPECT_EQ(model.lanes()[0].name, "A");
  EXPECT_EQ(model.lanes()[1].name, "B");
  EXPECT_EQ(model.lanes()[2].name, "C");
  EXPECT_EQ(lane(model, "redis").kind, LaneKind::server);
  EXPECT_EQ(lane(model, "redis").caption, "");  // the fake's own record, not what clients saw

  std::vector<Item> a = items_of(lane(model, "A"), ItemKind::hold);
  std::vector<Item> b = items_of(lane(model, "B"), ItemKind::hold);
  std::vector<Item> c = items_of(lane(model, "C"), ItemKind::hold);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(c.size(), 1u);
  // A believes it holds the lock from ~0 to ~12 s; its TTL (as A counts it) ran out at ~10 s.
  EXPECT_EQ(events[a[0].begin_event].kind, "lock_acquired");
  EXPECT_LT(a[0].from_us, 10'000);
  EXPECT_NEAR(static_cast<double>(a[0].to_us), 12.0 * kSecondUs, 10'000);
  EXPECT_EQ(a[0].deadline_us, a[0].from_us + 10 * kSecondUs);
  EXPECT_EQ(a[0].ttl_us, 10 * kSecondUs);
  EXPECT_FALSE(a[0].open());
  // The hold is the lock_acquired -> hold_end span.
  const TraceEvent& a_end = events[a[0].end_event];
  EXPECT_EQ(a_end.kind, "hold_end");
  EXPECT_EQ(a_end.ends, events[a[0].begin_event].span);
  EXPECT_EQ(a_end.str_or(F::reason), "released");
  // B's hold starts after A's deadline and before A lets go: they overlap; so do B and C.
  EXPECT_GT(b[0].from_us, a[0].deadline_us);
  EXPECT_LT(b[0].from_us, a[0].to_us);
  EXPECT_GT(b[0].to_us, a[0].to_us);
  EXPECT_LT(c[0].from_us, b[0].to_us);

  // The server lane, from the server's own key events: A's key drained and expired (the
  // key_expired event, a ms after its TTL reached 0), B's key was deleted by A's DEL
  // (foreign end) at ~12 s, before A's DEL reply came back and A let go.
  const Lane& redis = lane(model, "redis");
  std::vector<Item> ttl = items_of(redis, ItemKind::ttl);
  ASSERT_EQ(ttl.size(), 3u);  // A's, B's and C's keys
  EXPECT_EQ(events[ttl[0].begin_event].kind, "key_set");
  EXPECT_EQ(ttl[0].owner, model.lane_index("A"));
  EXPECT_EQ(ttl[1].owner, model.lane_index("B"));
  EXPECT_EQ(ttl[2].owner, model.lane_index("C"));
  EXPECT_EQ(events[ttl[0].end_event].kind, "key_expired");
  EXPECT_EQ(ttl[0].to_us, events[ttl[0].end_event].time_us);
  EXPECT_LE(ttl[0].deadline_us, ttl[0].to_us);
  EXPECT_LE(ttl[0].to_us - ttl[0].deadline_us, 1000);  // expired: the clock passed the TTL
  EXPECT_NEAR(static_cast<double>(ttl[0].deadline_us), 10.0 * kSecondUs, 2'000);
  EXPECT_NEAR(static_cast<double>(ttl[0].ttl_us), 10.0 * kSecondUs, 1'000);
  EXPECT_EQ(events[ttl[1].end_event].kind, "key_del");
  EXPECT_TRUE(ttl[1].flags & kItemForeignEnd);
  EXPECT_EQ(events[events[ttl[1].end_event].num_or(F::cause, 0) > 0
                       ? model.index().span_begin(events[ttl[1].end_event].num_or(F::cause, 0))
                       : 0]
                .actor,
            "A");
  EXPECT_LT(ttl[1].to_us, a[0].to_us);
  EXPECT_GT(ttl[1].to_us, a[0].to_us - 1000);
  std::vector<Item> expired = items_of(redis, ItemKind::expired);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].from_us, ttl[0].to_us);
  // The server's service of every command is on its lane: one served item per served event.
  int64_t served = std::count_if(events.begin(), events.end(),
                                 [](const TraceEvent& e) { return e.kind == "served"; });
  EXPECT_EQ(static_cast<int64_t>(items_of(redis, ItemKind::served).size()), served);

  // Every violation event is a region (both of each check, not only the first): A and B
  // overlap from B's acquisition until A begins its release (A's hold, drawn until the
  // release's reply, ends a round trip later), B and C from C's until B's release.
  auto release_start_us = [&](const std::string& actor) {
    for (const TraceEvent& e : events)
      if (e.kind == "lock_release" && e.actor == actor) return e.time_us;
    return TimeUs{-1};
  };
  ASSERT_EQ(model.violations().size(), 4u);
  const ViolationRegion& v = model.violations()[0];
  EXPECT_EQ(v.check, "mutual_exclusion");
  EXPECT_EQ(v.from_us, b[0].from_us);
  EXPECT_EQ(v.to_us, release_start_us("A"));
  EXPECT_LT(a[0].to_us - v.to_us, 2000);
  EXPECT_EQ(v.who, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(model.violations()[1].from_us, c[0].from_us);
  EXPECT_EQ(model.violations()[1].to_us, release_start_us("B"));
  EXPECT_EQ(model.violations()[1].who, (std::vector<std::string>{"B", "C"}));
  // Exactly what the run judged, in its order.
  std::vector<ViolationRegion> judged;
  for (const auto& check : result.checks)
    for (const auto& violation : check.violations)
      judged.push_back(
          {violation.from_us, violation.to_us, violation.who, violation.text, check.name, -1, {}});
  // Each region points back at its own violation event (the GUI selects it).
  for (size_t i = 0; i < judged.size() && i < model.violations().size(); i++) {
    const int64_t event = model.violations()[i].event;
    ASSERT_GE(event, 0);
    EXPECT_EQ(events[size_t(event)].kind, "violation");
    EXPECT_EQ(events[size_t(event)].text, judged[i].text);
    judged[i].event = event;
  }
  EXPECT_EQ(model.violations(), judged);
}

// Rows in the scenario's definition order, instances numbered 1..N in numeric order (not the
// order of their first events, nor buyer10 before buyer2), then the servers.
TEST(TimelineModel, ActorLanesComeInDefinitionOrderWithInstancesNumberedInOrder) {
  auto actor_lanes = [](const TimelineModel& model) {
    std::vector<std::string> names;
    for (const Lane& l : model.lanes())
      if (l.kind == LaneKind::actor) names.push_back(l.name);
    return names;
  };
  scenario::RunResult storm = run("watch-retry-storm");
  std::vector<std::string> buyers;
  for (int i = 1; i <= 20; i++) buyers.push_back("buyer" + std::to_string(i));
  EXPECT_EQ(actor_lanes(build(storm.trace)), buyers);

  scenario::RunResult pool = run("pool-exhaustion");
  std::vector<std::string> names = actor_lanes(build(pool.trace));
  const std::vector<std::string> first = {"worker1", "worker2",  "worker3",  "worker4", "worker5",
                                          "worker6", "handler1", "handler2", "handler3"};
  ASSERT_GE(names.size(), first.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + first.size()), first);
}

TEST(TimelineModel, WatchdogExtensionsPushTheKeysDeadline) {
  scenario::RunResult result = run("ttl-double-holder", {{"watchdog", "on"}, {"release", "lua"}});
  const auto& events = result.trace.events();
  TimelineModel model = build(result.trace);
  const int a_lane = model.lane_index("A");
  std::vector<Item> a_segments;
  for (const Item& seg : items_of(lane(model, "redis"), ItemKind::ttl))
    if (seg.owner == a_lane) a_segments.push_back(seg);
  ASSERT_GE(a_segments.size(), 4u);  // the acquisition and an extension every ~3.3 s for 12 s
  for (size_t i = 0; i < a_segments.size(); i++) {
    const Item& seg = a_segments[i];
    EXPECT_EQ(events[seg.begin_event].kind, "key_set");
    EXPECT_NEAR(static_cast<double>(seg.ttl_us), 10.0 * kSecondUs, 1'000);
    EXPECT_LT(seg.to_us, seg.deadline_us);  // each is cut before its TTL runs out
    if (i + 1 < a_segments.size()) {
      // ... by the next extension (a key_set of the same key), which pushes the deadline.
      EXPECT_EQ(seg.end_event, a_segments[i + 1].begin_event);
      EXPECT_GT(a_segments[i + 1].deadline_us, seg.deadline_us + 3 * kSecondUs);
    } else {
      // ... or by A's own release (the Lua script's DEL).
      EXPECT_EQ(events[seg.end_event].kind, "key_del");
      EXPECT_TRUE(seg.flags & kItemEndedByOwner);
    }
  }
  // A's hold: its deadline as A counts it moved with the extensions too.
  std::vector<Item> hold = items_of(lane(model, "A"), ItemKind::hold);
  ASSERT_EQ(hold.size(), 1u);
  EXPECT_GT(hold[0].deadline_us, hold[0].from_us + hold[0].ttl_us);
  EXPECT_GT(hold[0].deadline_us, hold[0].to_us);
  EXPECT_TRUE(items_of(lane(model, "redis"), ItemKind::expired).empty());
  EXPECT_TRUE(model.violations().empty());
}

TEST(TimelineModel, CommandSpansCarryTheirReplyAndLatency) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  const auto& events = result.trace.events();
  int64_t spans = 0;
  for (const Lane& l : model.lanes())
    for (const Row& row : l.rows)
      for (const Item& item : row.items) {
        if (item.kind != ItemKind::command) continue;
        spans++;
        ASSERT_GE(item.end_event, 0);
        const TraceEvent& command = events[item.begin_event];
        const TraceEvent& reply = events[item.end_event];
        EXPECT_EQ(command.kind, "command");
        EXPECT_EQ(reply.kind, "reply");
        EXPECT_EQ(reply.ends, command.span);  // the trace's own span, not a guess
        EXPECT_EQ(command.connection, reply.connection);
        EXPECT_EQ(row.connection >= 0, true);
        EXPECT_EQ(item.from_us, command.time_us);
        EXPECT_EQ(item.to_us, reply.time_us);
        EXPECT_GT(item.to_us - item.from_us, 0);
      }
  int64_t commands = std::count_if(events.begin(), events.end(),
                                   [](const TraceEvent& e) { return e.kind == "command"; });
  EXPECT_EQ(spans, commands);
  // A's first command is HELLO; the second, its SET, is answered OK.
  std::vector<Item> a_commands = items_of(lane(model, "A"), ItemKind::command);
  ASSERT_GE(a_commands.size(), 2u);
  const TraceEvent& set = events[a_commands[1].begin_event];
  ASSERT_NE(set.list(F::argv), nullptr);
  EXPECT_EQ((*set.list(F::argv))[0], "SET");
  EXPECT_EQ((*set.list(F::argv))[1], "lock:job:42");
  EXPECT_EQ(event_summary(set).rfind("SET lock:job:42 ", 0), 0u);
  EXPECT_EQ(events[a_commands[1].end_event].str_or(F::reply), "OK");
  EXPECT_FALSE(a_commands[1].flags & kItemErrorReply);
}

// The panel's rows next to `redlab show TRACE --keyspace --at-ms T` (app/report.cpp), at t.
void expect_keyspace_agrees_with_show(const TimelineModel& model, const Trace& trace, TimeUs t) {
  nlohmann::ordered_json shown = app::keyspace_json(trace, t);
  const std::string text = app::keyspace_text(trace, t);
  ASSERT_EQ(shown["servers"].size(), model.servers().size());
  for (const auto& server : shown["servers"]) {
    const std::string name = server["server"];
    EXPECT_EQ(model.server_observed(name), server["observed"].get<bool>());
    std::vector<KeyRow> keys = model.keyspace_at(name, t);
    ASSERT_EQ(keys.size(), server["keys"].size()) << name << " at " << t;
    for (size_t i = 0; i < keys.size(); i++) {
      const auto& k = server["keys"][i];
      EXPECT_EQ(keys[i].db, k["db"].get<int>());
      EXPECT_EQ(keys[i].key, k["key"].get<std::string>());
      EXPECT_EQ(keys[i].type, k["type"].get<std::string>());
      EXPECT_EQ(keys[i].value, k["value"].get<std::string>());
      EXPECT_EQ(keys[i].ttl_ms, k["ttl_ms"].get<int64_t>()) << keys[i].key << " at " << t;
      // The same words as the text report's "(9.2 s left)".
      EXPECT_NE(text.find("  " + keys[i].value + "  (" + ttl_left_text(keys[i]) + ")"),
                std::string::npos)
          << text;
    }
  }
}

TEST(TimelineModel, KeyspaceAtShowsTheTokenWhileHeldAndNothingAfterExpiry) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  std::vector<Item> a = items_of(lane(model, "A"), ItemKind::hold);
  std::vector<Item> b = items_of(lane(model, "B"), ItemKind::hold);
  std::vector<Item> c = items_of(lane(model, "C"), ItemKind::hold);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(c.size(), 1u);
  auto token_of = [&](const Item& hold) {
    return std::string(result.trace.events()[hold.begin_event].str_or(F::token));
  };
  ASSERT_EQ(token_of(a[0]).size(), 16u);

  std::vector<KeyRow> at5 = model.keyspace_at("redis", 5 * kSecondUs);
  ASSERT_EQ(at5.size(), 1u);
  EXPECT_EQ(at5[0].key, "lock:job:42");
  EXPECT_EQ(at5[0].type, "string");
  EXPECT_EQ(at5[0].value, token_of(a[0]));
  // The server's arithmetic: its TTL left at 5 s, from its absolute expiry and its clock.
  EXPECT_EQ(at5[0].ttl_ms,
            at5[0].expire_at_ms - model.index().server_clock_ms("redis", 5 * kSecondUs));
  EXPECT_NEAR(static_cast<double>(at5[0].ttl_ms), 5000, 2);
  EXPECT_EQ(ttl_left_text(at5[0]), "5.0 s left");

  // Between A's expiry and B's acquisition the key is gone.
  const Item ttl_a = items_of(lane(model, "redis"), ItemKind::ttl)[0];
  ASSERT_GT(b[0].from_us - ttl_a.to_us, 2) << "no instant between expiry and B's SET";
  EXPECT_TRUE(model.keyspace_at("redis", ttl_a.to_us).empty());
  EXPECT_TRUE(model.keyspace_at("redis", (ttl_a.to_us + b[0].from_us) / 2).empty());
  EXPECT_EQ(model.keyspace_at("redis", b[0].from_us).at(0).value, token_of(b[0]));
  // A's DEL at ~12 s removed B's key: nothing until C's SET, then C's token.
  EXPECT_TRUE(model.keyspace_at("redis", a[0].to_us).empty());
  EXPECT_EQ(model.keyspace_at("redis", c[0].from_us).at(0).value, token_of(c[0]));
  // Scrubbing back gives the same answer as the first time.
  EXPECT_EQ(model.keyspace_at("redis", 5 * kSecondUs), at5);
  EXPECT_TRUE(model.keyspace_at("no-such-server", 5 * kSecondUs).empty());

  // And at every event's time, what `redlab show --keyspace --at-ms` says.
  std::set<TimeUs> times;
  for (const TraceEvent& e : result.trace.events()) times.insert(e.time_us);
  for (TimeUs t : times) expect_keyspace_agrees_with_show(model, result.trace, t);
}

TEST(TimelineModel, ClockJumpShortensTheKeysTtlBar) {
  // A trace of a server whose clock jumps 4 s ahead while a key has 10 s left: the bar is cut
  // at the jump and goes on 4 s shorter (expire_at_ms is absolute on the server's clock).
  Trace trace;
  const int64_t clock0 = 1'767'225'600'000;
  trace.append(
      TraceEvent{0, "run_start", "", -1, -1, -1, ""}.with(F::who, std::vector<std::string>{"A"}));
  trace.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                   .with(F::server, "redis")
                   .with(F::source, "fake")
                   .with(F::clock_unix_ms, clock0));
  trace.append(TraceEvent{1000, "key_set", "redis", -1, -1, -1, ""}
                   .with(F::key, "k")
                   .with(F::type, "string")
                   .with(F::value, "v")
                   .with(F::expire_at_ms, clock0 + 10'001));
  trace.append(TraceEvent{2 * kSecondUs, "clock_jump", "net", -1, -1, -1, ""}
                   .with(F::server, "redis")
                   .with(F::by_us, 4 * kSecondUs)
                   .with(F::clock_unix_ms, clock0 + 6'000));
  trace.append(TraceEvent{6 * kSecondUs + 2000, "key_expired", "redis", -1, -1, -1, ""}
                   .with(F::key, "k")
                   .with(F::type, "string")
                   .with(F::value, "v")
                   .with(F::expire_at_ms, clock0 + 10'001));
  TimelineModel model = build(trace);
  std::vector<Item> ttl = items_of(lane(model, "redis"), ItemKind::ttl);
  ASSERT_EQ(ttl.size(), 2u);
  EXPECT_EQ(ttl[0].deadline_us, 10'001'000);
  EXPECT_EQ(ttl[0].to_us, 2 * kSecondUs);
  EXPECT_EQ(ttl[1].from_us, 2 * kSecondUs);
  EXPECT_EQ(ttl[1].deadline_us, 6'001'000);  // 4 s earlier
  EXPECT_EQ(ttl[1].ttl_us, ttl[0].ttl_us);   // the same full height: the bar starts lower
  EXPECT_EQ(ttl[1].to_us, 6 * kSecondUs + 2000);
  EXPECT_EQ(items_of(lane(model, "redis"), ItemKind::expired).size(), 1u);
  // The keyspace panel counts the TTL on the jumped clock too.
  EXPECT_EQ(model.keyspace_at("redis", 3 * kSecondUs).at(0).ttl_ms, 3001);
}

TEST(TimelineModel, ServedSpansShowTheServerBusy) {
  // A DEBUG SLEEP 5 served for 5 s, and a script that runs past its first slice: both are the
  // server busy on its lane, from the server's own record.
  Trace trace;
  trace.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                   .with(F::server, "redis")
                   .with(F::source, "fake"));
  trace.append(TraceEvent{1000, "served", "redis", 1, -1, -1, ""}
                   .with(F::cmd, "DEBUG")
                   .with(F::duration_us, 5 * kSecondUs));
  const int64_t script = trace.new_span();
  trace.append(TraceEvent{6 * kSecondUs, "script_start", "redis", 2, -1, -1, "", script}.with(
      F::cmd, "EVALSHA"));
  trace.append(TraceEvent{6 * kSecondUs + 10, "script_busy", "redis", 2, -1, -1, ""});
  trace.append(TraceEvent{8 * kSecondUs, "script_end", "redis", 2, -1, -1, "", 0, script}
                   .with(F::cmd, "EVALSHA")
                   .with(F::duration_us, 2 * kSecondUs));
  TimelineModel model = build(trace);
  const Lane& redis = lane(model, "redis");
  ASSERT_GE(redis.rows.size(), 2u);
  EXPECT_EQ(redis.rows[1].label, "served");
  std::vector<Item> served = items_of(redis, ItemKind::served);
  ASSERT_EQ(served.size(), 2u);
  EXPECT_EQ(served[0].from_us, 1000);
  EXPECT_EQ(served[0].to_us, 1000 + 5 * kSecondUs);
  EXPECT_EQ(served[1].from_us, 6 * kSecondUs);
  EXPECT_EQ(served[1].to_us, 8 * kSecondUs);
  EXPECT_FALSE(served[1].open());
  EXPECT_EQ(items_of(redis, ItemKind::fault).size(), 1u);  // past busy-reply-threshold
}

TEST(TimelineModel, IncrementalUpdateEqualsOneShotBuild) {
  for (const char* id : {"ttl-double-holder", "pubsub-reconnect-loss", "pool-exhaustion"}) {
    SCOPED_TRACE(id);
    scenario::RunResult result = run(id);
    TimelineModel one_shot = build(result.trace);
    TimelineModel live;
    Trace growing;
    for (const auto& [key, value] : result.trace.meta()) growing.set_meta(key, value);
    size_t i = 0;
    for (const TraceEvent& e : result.trace.events()) {
      growing.append(e);
      // Frames see 1..7 new events at a time, and some frames see nothing new.
      if (++i % 7 == 0 || i % 3 == 0) {
        live.update(growing);
        live.update(growing);
      }
    }
    live.update(growing);
    EXPECT_TRUE(live.same_content(one_shot));
    EXPECT_EQ(live.event_count(), result.trace.size());
    EXPECT_EQ(live.keyspace_at("redis", live.end_us() / 2),
              one_shot.keyspace_at("redis", one_shot.end_us() / 2));
    // Another trace (a new run) starts over.
    Trace fresh;
    fresh.append(result.trace.events()[0]);
    live.update(fresh);
    EXPECT_EQ(live.event_count(), 1u);
  }
}

TEST(TimelineModel, RealServerLaneIsAsSeenByClients) {
  // The same run as if on a real server: no server events, server_start says so.
  scenario::RunResult result = run("ttl-double-holder");
  Trace real;
  for (const auto& [key, value] : result.trace.meta()) real.set_meta(key, value);
  real.set_meta("backend", "spawn");
  const std::set<std::string> server_kinds = {"served", "key_set", "key_del", "key_expired"};
  for (TraceEvent e : result.trace.events()) {
    if (server_kinds.count(e.kind)) continue;
    if (e.kind == "server_start") e.with(F::source, "clients");
    real.append(std::move(e));
  }
  TimelineModel model = build(real);
  const Lane& redis = lane(model, "redis");
  EXPECT_EQ(redis.caption, kSeenByClients);
  EXPECT_FALSE(model.server_observed("redis"));
  EXPECT_TRUE(model.keyspace_at("redis", 5 * kSecondUs).empty());
  // Its "in flight" row: every client command as its client saw it (sent -> reply).
  std::vector<Item> seen = items_of(redis, ItemKind::served);
  int64_t commands = std::count_if(real.events().begin(), real.events().end(),
                                   [](const TraceEvent& e) { return e.kind == "command"; });
  EXPECT_EQ(static_cast<int64_t>(seen.size()), commands);
  for (const Item& item : seen) {
    EXPECT_TRUE(item.flags & kItemSeenByClients);
    EXPECT_EQ(real.events()[item.begin_event].kind, "command");
  }
  EXPECT_TRUE(items_of(redis, ItemKind::ttl).empty());
  // The holds are the clients' own: still there.
  EXPECT_EQ(items_of(lane(model, "A"), ItemKind::hold).size(), 1u);
}

// ---- pubsub-reconnect-loss: arrows and the lost messages in the gap ----

TEST(TimelineModel, PubsubReconnectLossMarksMessagesLostInTheGap) {
  scenario::RunResult result = run("pubsub-reconnect-loss");
  TimelineModel model = build(result.trace);
  const auto& events = result.trace.events();
  int64_t delivered = std::count_if(events.begin(), events.end(),
                                    [](const TraceEvent& e) { return e.kind == "pubsub_message"; });
  std::vector<Item> gaps = items_of(lane(model, "sub"), ItemKind::gap);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(events[gaps[0].begin_event].kind, "pubsub_disconnected");
  EXPECT_EQ(events[gaps[0].end_event].kind, "pubsub_resubscribe");

  int64_t arrows = 0, lost = 0;
  int sub = model.lane_index("sub"), pub = model.lane_index("pub");
  for (const Arrow& arrow : model.arrows()) {
    EXPECT_EQ(arrow.from_lane, pub);
    EXPECT_EQ(arrow.to_lane, sub);
    const auto* argv = events[arrow.from_event].list(F::argv);
    ASSERT_NE(argv, nullptr);
    EXPECT_EQ((*argv)[0], "PUBLISH");
    EXPECT_EQ((*argv)[1], "news");
    if (arrow.lost) {
      lost++;
      EXPECT_EQ(arrow.to_event, -1);
      // The lost mark sits in the gap.
      EXPECT_GE(arrow.to_us, gaps[0].from_us);
      EXPECT_LE(arrow.to_us, gaps[0].to_us);
    } else {
      arrows++;
      EXPECT_EQ(events[arrow.to_event].kind, "pubsub_message");
      EXPECT_GT(arrow.to_us, arrow.from_us);
    }
  }
  EXPECT_EQ(arrows, delivered);
  // Lost: the messages PUBLISH delivered to nobody (the subscriber was in its gap).
  int64_t to_nobody = std::count_if(events.begin(), events.end(), [](const TraceEvent& e) {
    return e.kind == "published" && e.num_or(F::receivers, -1) == 0;
  });
  EXPECT_GE(to_nobody, 10);
  EXPECT_EQ(lost, to_nobody);
  EXPECT_EQ(arrows + lost, 50);
  // Sorted by start time, with the running maximum of the ends for culling.
  EXPECT_TRUE(std::is_sorted(model.arrows().begin(), model.arrows().end(),
                             [](const Arrow& x, const Arrow& y) { return x.from_us < y.from_us; }));
  ASSERT_EQ(model.arrow_max_to_us().size(), model.arrows().size());
}

TEST(TimelineModel, SlowSubscriberFallsBehindAndTheLossIsAViolation) {
  // go-redis' Channel() takes every message off the socket; the application handles one every
  // handle_ms and stops listening with the rest still queued: those never arrive, and the
  // no_lost_messages violation says so (PUBLISH itself counted a receiver for each).
  scenario::RunResult result = run("pubsub-reconnect-loss", {{"slow-subscriber", "on"}});
  TimelineModel model = build(result.trace);
  int64_t lost = std::count_if(model.arrows().begin(), model.arrows().end(),
                               [](const Arrow& a) { return a.lost; });
  int64_t delivered = static_cast<int64_t>(model.arrows().size()) - lost;
  const auto& events = result.trace.events();
  EXPECT_EQ(delivered, std::count_if(events.begin(), events.end(), [](const TraceEvent& e) {
              return e.kind == "pubsub_message";
            }));
  EXPECT_GT(delivered, 0);
  EXPECT_LT(delivered, 50);
  TraceIndex ix(result.trace);
  size_t violations = 0;
  for (const TraceViolation& v : ix.violations()) violations += v.check == "no_lost_messages";
  EXPECT_GE(violations, 1u);
}

TEST(TimelineModel, StreamEntriesAreArrowsFromXaddToTheConsumer) {
  scenario::RunResult result = run("pubsub-reconnect-loss", {{"transport", "streams"}});
  TimelineModel model = build(result.trace);
  int64_t stream_arrows = std::count_if(model.arrows().begin(), model.arrows().end(),
                                        [](const Arrow& a) { return a.stream && !a.lost; });
  EXPECT_EQ(stream_arrows, 50);
  // The keyspace has the stream with all its entries at the end.
  std::vector<KeyRow> keys = model.keyspace_at("redis", model.end_us());
  auto news =
      std::find_if(keys.begin(), keys.end(), [](const KeyRow& k) { return k.key == "news"; });
  ASSERT_NE(news, keys.end());
  EXPECT_EQ(news->type, "stream");
  EXPECT_EQ(news->value.rfind("50 entries, last ", 0), 0u) << news->value;
  expect_keyspace_agrees_with_show(model, result.trace, model.end_us());
}

// ---- pool-exhaustion: waits, timeouts, statistics ----

TEST(TimelineModel, PoolExhaustionShowsPoolWaitsAndStatistics) {
  scenario::RunResult result = run("pool-exhaustion");
  TimelineModel model = build(result.trace);
  int64_t waits = 0, timed_out = 0;
  for (const Lane& l : model.lanes())
    for (const Item& item : items_of(l, ItemKind::pool_wait)) {
      waits++;
      // Only waits that began less than PoolTimeout before the run's end are still open.
      EXPECT_TRUE(!item.open() || item.from_us > model.end_us() - 4 * kSecondUs);
      if (item.flags & kItemErrorReply) {
        timed_out++;
        EXPECT_EQ(result.trace.events()[item.end_event].kind, "pool_timeout");
        // go-redis' PoolTimeout here is 4 s.
        EXPECT_NEAR(static_cast<double>(item.to_us - item.from_us), 4.0 * kSecondUs, 1000);
      }
    }
  const auto& events = result.trace.events();
  auto count = [&](const char* kind, const char* actor = nullptr) {
    return std::count_if(events.begin(), events.end(), [&](const TraceEvent& e) {
      return e.kind == kind && (!actor || e.actor == actor);
    });
  };
  EXPECT_GE(waits, 10);
  EXPECT_EQ(waits, count("pool_wait"));
  EXPECT_GE(timed_out, 5);
  EXPECT_EQ(timed_out, count("pool_timeout"));
  // The statistics are the events' typed fields, per client process.
  ASSERT_EQ(model.pool_stats().count("app"), 1u);
  const std::vector<PoolSample>& app = model.pool_stats().at("app");
  EXPECT_EQ(static_cast<int64_t>(app.size()),
            count("pool_stats", "app") + count("pool_stats_sample", "app"));
  EXPECT_EQ(app.back().total, 4);  // PoolSize 4
  EXPECT_EQ(app.back().timeouts, timed_out);
  EXPECT_EQ(model.client_options().at("app"),
            "app profile=v9.0 pool_size=4 pool_timeout=4.0 s read_timeout=3.0 s max_retries=3");
  // Every violation is a region: worker5's first pool timeout is an instant at its
  // pool_timeout, and the waits still open at the end run to the end.
  ASSERT_EQ(model.violations().size(), static_cast<size_t>(count("violation")));
  ASSERT_GE(model.violations().size(), 2u);
  const ViolationRegion& first = model.violations()[0];
  ASSERT_EQ(first.who.size(), 1u);
  const TraceEvent* first_timeout = first_of(result.trace, "pool_timeout", first.who[0]);
  ASSERT_NE(first_timeout, nullptr);
  EXPECT_EQ(first.from_us, first_timeout->time_us);
  EXPECT_EQ(first.to_us, first_timeout->time_us);
  bool open_at_end = false, region_to_end = false;
  for (const Lane& l : model.lanes())
    for (const Item& item : items_of(l, ItemKind::pool_wait)) open_at_end |= item.open();
  for (const ViolationRegion& v : model.violations()) region_to_end |= v.to_us == model.end_us();
  EXPECT_EQ(open_at_end, region_to_end);  // a wait still open at the end is a violation to it
}

TEST(TimelineModel, NextEventAfterStepsThroughDistinctTimes) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  auto first = model.next_event_after(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_GT(*first, 0);
  for (const TraceEvent& e : result.trace.events())
    if (e.time_us > 0) {
      EXPECT_EQ(*first, e.time_us);
      break;
    }
  EXPECT_FALSE(model.next_event_after(model.end_us()).has_value());
  EXPECT_EQ(model.first_event_after(model.end_us()), result.trace.size());
}

// ---- Honest drawing: what recovered, what the server did, what went in wrong ----

scenario::RunResult run_file(const std::string& path) {
  return scenario::run_scenario(scenario::load_scenario_file(path), scenario::RunOptions{});
}

// An error the client got over is not a failure: Script.Run's EVALSHA answered NOSCRIPT and it
// fell back to EVAL; a read that timed out was retried within its call and succeeded. An error
// whose call failed stays a failure.
TEST(TimelineModel, RecoveredErrorsAreNotFailures) {
  // A runs a script before and after a restart: both EVALSHAs answer NOSCRIPT (a fresh server
  // has no scripts), both EVALs succeed.
  scenario::RunResult events =
      run_file(REDLAB_SOURCE_DIR "/tests/gui/scenarios/server-events.json");
  TimelineModel model = build(events.trace);
  int evalsha = 0, eval = 0;
  for (const Item& item : items_of(lane(model, "A"), ItemKind::command)) {
    const auto* argv = events.trace.events()[size_t(item.begin_event)].list(F::argv);
    ASSERT_NE(argv, nullptr);
    if ((*argv)[0] == "EVALSHA") {
      evalsha++;
      EXPECT_TRUE(item.flags & kItemErrorReply);
      EXPECT_TRUE(item.flags & kItemRecovered) << "a NOSCRIPT that fell back to EVAL";
    } else if ((*argv)[0] == "EVAL") {
      eval++;
      EXPECT_FALSE(item.flags & (kItemErrorReply | kItemRecovered));
    }
  }
  EXPECT_EQ(evalsha, 2);
  EXPECT_EQ(eval, 2);

  // handler3's read times out once while DEBUG SLEEP holds the server; the call retries it and
  // gets its reply: its timeout mark and the timed-out command are recovered.
  scenario::RunResult retried =
      run("pool-exhaustion", {{"blocking", "dedicated-client"}, {"server", "slow"}});
  TimelineModel retried_model = build(retried.trace);
  const Lane& handler3 = lane(retried_model, "handler3");
  int timeouts = 0;
  for (const Item& mark : items_of(handler3, ItemKind::error))
    if (retried.trace.events()[size_t(mark.begin_event)].kind == "read_timeout") {
      timeouts++;
      EXPECT_TRUE(mark.flags & kItemRecovered);
    }
  EXPECT_EQ(timeouts, 1);
  int recovered_commands = 0;
  for (const Item& item : items_of(handler3, ItemKind::command))
    if (item.flags & kItemRecovered) recovered_commands++;
  EXPECT_EQ(recovered_commands, 1);

  // The report's read times out on the shared, drained client and its call fails: a failure.
  scenario::RunResult failed =
      run("pool-exhaustion", {{"blocking", "shared-client"}, {"server", "slow"}});
  TimelineModel failed_model = build(failed.trace);
  int failures = 0;
  for (const Item& mark : items_of(lane(failed_model, "report"), ItemKind::error))
    if (failed.trace.events()[size_t(mark.begin_event)].kind == "read_timeout") {
      failures++;
      EXPECT_FALSE(mark.flags & kItemRecovered);
    }
  EXPECT_EQ(failures, 1);
}

// The server's own events on its lane: a restart (its keys and scripts gone) and a slow
// subscriber cut at its output buffer limit, each its own mark at its moment.
TEST(TimelineModel, RestartAndClientCutAreMarkedOnTheServerLane) {
  scenario::RunResult result =
      run_file(REDLAB_SOURCE_DIR "/tests/gui/scenarios/server-events.json");
  TimelineModel model = build(result.trace);
  const Lane& redis = lane(model, "redis");
  std::vector<Item> restarts = items_of(redis, ItemKind::restart);
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_EQ(restarts[0].from_us, 1 * kSecondUs);
  EXPECT_TRUE(items_of(redis, ItemKind::fault).empty()) << "the restart is not a generic fault";
  std::vector<Item> cuts = items_of(redis, ItemKind::cut);
  ASSERT_EQ(cuts.size(), 1u);
  const TraceEvent& cut = result.trace.events()[size_t(cuts[0].begin_event)];
  EXPECT_EQ(cut.kind, "client_cut");
  EXPECT_EQ(model.index().connection_actor(cut.connection), "sub");
  EXPECT_LT(cuts[0].from_us, restarts[0].from_us);
}

// forged-fence with a database that checks nothing: A's write with fence 33 after B's 34 is
// accepted. The accept is marked stale (as no_stale_write judges it), and the violation names
// the resource lane, where the wrong write went in.
TEST(TimelineModel, AStaleWriteAcceptedIsMarkedAndItsViolationIsOnTheResourceLane) {
  scenario::RunResult result = run("forged-fence", {{"resource", "no-check"}});
  TimelineModel model = build(result.trace);
  const int db = model.lane_index("db");
  ASSERT_GE(db, 0);
  std::vector<std::pair<std::string, bool>> accepts;  // writer, stale
  for (const Item& item : items_of(lane(model, "db"), ItemKind::accept))
    accepts.push_back(
        {result.trace.events()[size_t(item.begin_event)].actor, (item.flags & kItemStale) != 0});
  EXPECT_EQ(accepts,
            (std::vector<std::pair<std::string, bool>>{{"B", false}, {"B", false}, {"A", true}}));
  bool stale_violation = false;
  for (const ViolationRegion& v : model.violations()) {
    if (model.check_kind(v.check) == "no_stale_write") {
      stale_violation = true;
      EXPECT_EQ(v.resource_lanes, std::vector<int32_t>{db});
    } else {
      EXPECT_TRUE(v.resource_lanes.empty()) << v.check;
    }
  }
  EXPECT_TRUE(stale_violation);

  // With M's forged fence 99 accepted first, B's genuine 34 is stale too; M's is not stale
  // (it is the highest), it is forged: another check.
  scenario::RunResult forged = run("forged-fence", {{"resource", "no-check"}, {"token", "forged"}});
  TimelineModel forged_model = build(forged.trace);
  accepts.clear();
  for (const Item& item : items_of(lane(forged_model, "db"), ItemKind::accept))
    accepts.push_back(
        {forged.trace.events()[size_t(item.begin_event)].actor, (item.flags & kItemStale) != 0});
  EXPECT_EQ(accepts, (std::vector<std::pair<std::string, bool>>{
                         {"B", false}, {"M", false}, {"B", true}, {"A", true}}));
}

// ---- The view, headless ----

// An ImGui context with no platform or renderer backend: fonts built into memory, frames
// produced and thrown away. Input is set on io before each frame.
class Headless {
 public:
  Headless(float width, float height) {
    context_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(width, height);
    io.IniFilename = nullptr;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~Headless() { ImGui::DestroyContext(context_); }
  void frame(const std::function<void()>& body) {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin(
        "timeline", nullptr,
        ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings);
    body();
    ImGui::End();
    ImGui::Render();
  }

 private:
  ImGuiContext* context_;
};

TEST(TimelineView, DrawsTheViolationRegionWhereItsTimesAre) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  Headless imgui(1200, 600);
  TimelineView view;
  view.view_from_us = 0;
  view.view_to_us = 25 * kSecondUs;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  const DrawRecord& d = view.last_draw;
  ASSERT_EQ(d.from_us, 0);
  ASSERT_EQ(d.to_us, 25 * kSecondUs);
  ASSERT_GT(d.px_per_us, 0);
  const float width_px = static_cast<float>(d.px_per_us * 25 * kSecondUs);
  // Every violation event is drawn (four: two overlaps, two foreign DELs).
  ASSERT_EQ(d.violations.size(), model.violations().size());
  ASSERT_EQ(d.violations.size(), 4u);
  const ViolationRegion& ab = model.violations()[0];  // A and B: ~10.1 s to ~12.0 s
  EXPECT_NEAR(d.violations[0].min.x,
              d.x0 + width_px * static_cast<float>(ab.from_us) / (25 * kSecondUs), 1.0);
  EXPECT_NEAR(d.violations[0].max.x,
              d.x0 + width_px * static_cast<float>(ab.to_us) / (25 * kSecondUs), 1.0);
  EXPECT_NEAR(static_cast<double>(ab.from_us), 10.0 * kSecondUs, 0.1 * kSecondUs);
  EXPECT_NEAR(static_cast<double>(ab.to_us), 12.0 * kSecondUs, 0.01 * kSecondUs);
  EXPECT_NE(d.violations[0].text.find("A and B held lock:job:42 together"), std::string::npos);
  EXPECT_EQ(d.violations[0].check, "mutual_exclusion");
  EXPECT_NE(d.violations[1].text.find("B and C held lock:job:42 together"), std::string::npos);
  EXPECT_EQ(view.x_of(ab.from_us), d.violations[0].min.x);
  EXPECT_NEAR(static_cast<double>(view.t_of(d.violations[0].max.x)), static_cast<double>(ab.to_us),
              1 / d.px_per_us);
  // Lanes: actors first, then the server.
  ASSERT_GE(d.lanes.size(), 4u);
  EXPECT_EQ(d.lanes[0].name, "A");
  EXPECT_EQ(d.lanes.back().name, "redis");
  EXPECT_GT(d.items_drawn, 20);

  // Another range moves the region with it; one that excludes it draws none.
  view.view_from_us = 9 * kSecondUs;
  view.view_to_us = 13 * kSecondUs;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  // A-B, B-C (from 12.0 s) and A's foreign DEL at 12.0 s; B's at 15.1 s is out of view.
  ASSERT_EQ(view.last_draw.violations.size(), 3u);
  EXPECT_NEAR(view.last_draw.violations[0].min.x, view.x_of(ab.from_us), 0.01);
  EXPECT_NEAR(
      view.last_draw.violations[0].max.x - view.last_draw.violations[0].min.x,
      static_cast<float>(view.last_draw.px_per_us * static_cast<double>(ab.to_us - ab.from_us)),
      1.0);
  view.view_from_us = 16 * kSecondUs;
  view.view_to_us = 20 * kSecondUs;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_TRUE(view.last_draw.violations.empty());
}

TEST(TimelineView, TheLegendWrapsInsteadOfCuttingEntriesOff) {
  scenario::RunResult result = run("pubsub-reconnect-loss");
  TimelineModel model = build(result.trace);
  for (float width : {1400.0f, 420.0f}) {
    SCOPED_TRACE(width);
    Headless imgui(width, 500);
    TimelineView view;
    view.fit(model);
    for (int i = 0; i < 2; i++)  // the second frame has the room the first one measured
      imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
    const DrawRecord& d = view.last_draw;
    ASSERT_GE(d.legend.size(), 5u);
    std::set<float> lines;
    for (const auto& e : d.legend) {
      EXPECT_LE(e.max.x, d.area_max.x) << e.name;
      EXPECT_LE(e.max.y, d.area_max.y) << e.name;
      EXPECT_GE(e.min.y, d.lanes.back().max.y - 1) << e.name << " is over the lanes";
      lines.insert(e.min.y);
    }
    if (width < 500) {
      EXPECT_GT(lines.size(), 1u);
    } else {
      EXPECT_EQ(lines.size(), 1u);
    }
  }
}

TEST(TimelineView, WheelZoomKeepsTheTimeUnderTheMouse) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  Headless imgui(1200, 600);
  TimelineView view;
  view.fit(model);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(700, 200);
  // Two frames so that the window exists and is hovered.
  for (int i = 0; i < 2; i++) imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  const TimeUs under_us = view.t_of(700);
  const TimeUs span_before_us = view.view_to_us - view.view_from_us;
  for (int notch = 0; notch < 3; notch++) {
    io.MouseWheel = 1;
    imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
    io.MouseWheel = 0;
  }
  const TimeUs span_after_us = view.view_to_us - view.view_from_us;
  EXPECT_NEAR(static_cast<double>(span_after_us),
              static_cast<double>(span_before_us) / (1.25 * 1.25 * 1.25),
              static_cast<double>(span_before_us) * 0.001);
  // Within a pixel's worth of time.
  EXPECT_NEAR(static_cast<double>(view.t_of(700)), static_cast<double>(under_us),
              1 / view.last_draw.px_per_us);
  // And back out: the range is clamped to a little more than the trace.
  for (int notch = 0; notch < 40; notch++) {
    io.MouseWheel = -1;
    imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  }
  io.MouseWheel = 0;
  EXPECT_LE(view.view_to_us - view.view_from_us, model.end_us() * 12 / 10 + 1);
  EXPECT_GE(view.view_from_us, -model.end_us() / 10);
}

TEST(TimelineView, ClickSelectsAndRulerDragScrubs) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  Headless imgui(1200, 600);
  TimelineView view;
  view.view_from_us = 0;
  view.view_to_us = 25 * kSecondUs;
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(-100, -100);
  for (int i = 0; i < 2; i++) imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  // A's hold row: the second row of lane A; click in the middle of the hold (5 s).
  std::vector<Item> holds = items_of(lane(model, "A"), ItemKind::hold);
  ASSERT_EQ(holds.size(), 1u);
  const DrawRecord::LaneRect& a = view.last_draw.lanes[0];
  ASSERT_EQ(a.name, "A");
  int hold_row = -1;
  for (size_t r = 0; r < lane(model, "A").rows.size(); r++)
    if (lane(model, "A").rows[r].label == "lock:job:42") hold_row = static_cast<int>(r);
  ASSERT_GE(hold_row, 0);
  const float y = a.rows_y[hold_row] + a.row_h / 2;
  io.MousePos = ImVec2(view.x_of(5 * kSecondUs), y);
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_EQ(view.hovered_event, holds[0].begin_event);
  io.MouseDown[0] = true;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  io.MouseDown[0] = false;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_EQ(view.selected_event, holds[0].begin_event);

  // Press in the ruler at 8 s, drag to 15 s: the playhead follows.
  const float ruler_y = (view.last_draw.ruler_min.y + view.last_draw.ruler_max.y) / 2;
  io.MousePos = ImVec2(view.x_of(8 * kSecondUs), ruler_y);
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  io.MouseDown[0] = true;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_NEAR(static_cast<double>(view.playhead_us), 8.0 * kSecondUs, 1 / view.last_draw.px_per_us);
  io.MousePos = ImVec2(view.x_of(15 * kSecondUs), ruler_y);
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_TRUE(view.playhead_changed);
  EXPECT_NEAR(static_cast<double>(view.playhead_us), 15.0 * kSecondUs,
              1 / view.last_draw.px_per_us);
  io.MouseDown[0] = false;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_EQ(view.selected_event, holds[0].begin_event);  // scrubbing is not a click
  EXPECT_EQ(view.view_from_us, 0);                       // nor a pan
}

TEST(TimelineView, DenseRowsFoldIntoCountedMarks) {
  // 200,000 commands on one connection over 100 s: far more than the pixels across.
  Trace trace;
  constexpr int kCommands = 200'000;
  for (int i = 0; i < kCommands; i++) {
    TimeUs t = static_cast<TimeUs>(i) * 500;
    const int64_t span = trace.new_span();
    trace.append(TraceEvent{t, "command", "A", 1, 0, 0, "", span}.with(
        F::argv, std::vector<std::string>{"GET", "k"}));
    trace.append(TraceEvent{t + 200, "reply", "A", 1, 0, 0, "", 0, span}.with(F::reply, "(nil)"));
  }
  TimelineModel model = build(trace);
  Headless imgui(1920, 1080);
  TimelineView view;
  view.fit(model);
  imgui.frame([&] { view.draw(model, trace, ImVec2(0, 0)); });
  const DrawRecord& d = view.last_draw;
  EXPECT_EQ(d.items_drawn + d.items_folded, kCommands);
  EXPECT_LT(d.items_drawn + d.folds_drawn, 2000);  // bounded by the pixels, not the items
  // Zoomed to 10 ms: every command in view is drawn on its own, none folded.
  view.view_from_us = 50 * kSecondUs;
  view.view_to_us = 50 * kSecondUs + 10'000;
  imgui.frame([&] { view.draw(model, trace, ImVec2(0, 0)); });
  EXPECT_EQ(view.last_draw.items_folded, 0);
  EXPECT_GE(view.last_draw.items_drawn, 20);
  EXPECT_LE(view.last_draw.items_drawn, 22);
}

// ---- A reopened trace draws exactly as the live run ----

// What one frame of the view produced: its draw record, and every vertex, index and draw
// command ImGui was given (positions, colours, the glyphs of every label, the tooltip).
struct Frame {
  DrawRecord record;
  std::string geometry;
  int64_t vertices = 0;
};

template <typename T>
void append_bytes(std::string& out, const T* data, size_t count) {
  out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

Frame draw_frame(Headless& imgui, TimelineView& view, const TimelineModel& model,
                 const Trace& trace) {
  // Three frames: the first ones settle ImGui's hover state and the tooltip's size.
  for (int i = 0; i < 3; i++) imgui.frame([&] { view.draw(model, trace, ImVec2(0, 0)); });
  Frame f;
  f.record = view.last_draw;
  const ImDrawData* data = ImGui::GetDrawData();
  for (int l = 0; l < data->CmdListsCount; l++) {
    const ImDrawList* list = data->CmdLists[l];
    append_bytes(f.geometry, list->VtxBuffer.Data, static_cast<size_t>(list->VtxBuffer.Size));
    append_bytes(f.geometry, list->IdxBuffer.Data, static_cast<size_t>(list->IdxBuffer.Size));
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      append_bytes(f.geometry, &cmd.ElemCount, 1);
      append_bytes(f.geometry, &cmd.ClipRect, 1);
    }
    f.vertices += list->VtxBuffer.Size;
  }
  return f;
}

bool same_point(ImVec2 a, ImVec2 b) {
  return a.x == b.x && a.y == b.y;
}

void expect_same_frame(const Frame& live, const Frame& reopened) {
  const DrawRecord& a = live.record;
  const DrawRecord& b = reopened.record;
  EXPECT_EQ(a.items_drawn, b.items_drawn);
  EXPECT_EQ(a.items_folded, b.items_folded);
  EXPECT_EQ(a.folds_drawn, b.folds_drawn);
  EXPECT_EQ(a.arrows_drawn, b.arrows_drawn);
  EXPECT_EQ(a.lost_drawn, b.lost_drawn);
  EXPECT_EQ(a.from_us, b.from_us);
  EXPECT_EQ(a.to_us, b.to_us);
  ASSERT_EQ(a.violations.size(), b.violations.size());
  for (size_t i = 0; i < a.violations.size(); i++) {
    EXPECT_TRUE(same_point(a.violations[i].min, b.violations[i].min)) << i;
    EXPECT_TRUE(same_point(a.violations[i].max, b.violations[i].max)) << i;
    EXPECT_EQ(a.violations[i].text, b.violations[i].text);
    EXPECT_EQ(a.violations[i].check, b.violations[i].check);
  }
  ASSERT_EQ(a.lanes.size(), b.lanes.size());
  for (size_t i = 0; i < a.lanes.size(); i++) {
    EXPECT_EQ(a.lanes[i].name, b.lanes[i].name);
    EXPECT_EQ(a.lanes[i].caption, b.lanes[i].caption);
    EXPECT_TRUE(same_point(a.lanes[i].min, b.lanes[i].min));
    EXPECT_TRUE(same_point(a.lanes[i].max, b.lanes[i].max));
  }
  EXPECT_EQ(live.vertices, reopened.vertices);
  EXPECT_TRUE(live.geometry == reopened.geometry) << "the drawn geometry differs";
}

// Every scenario of the library, with its defaults and with each other value of each variant.
std::vector<std::pair<std::string, std::map<std::string, std::string>>> every_run() {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> runs;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(REDLAB_SOURCE_DIR "/scenarios"))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    scenario::Scenario sc = scenario::load_scenario_file(file.string());
    runs.push_back({sc.id, {}});
    for (const auto& variant : sc.variants)
      for (const std::string& value : variant.values)
        if (value != variant.def) runs.push_back({sc.id, {{variant.name, value}}});
  }
  return runs;
}

TEST(ReopenedTrace, DrawsExactlyAsTheLiveRun) {
  const auto runs = every_run();
  ASSERT_GE(runs.size(), 5u);  // the core scenarios at least
  Headless imgui(1400, 800);
  for (const auto& [id, variant] : runs) {
    std::string label = id;
    for (const auto& [k, v] : variant) label += " " + k + "=" + v;
    SCOPED_TRACE(label);
    // A run that fails is a failure of its own; the other runs are still compared.
    scenario::RunResult result;
    try {
      result = run(id, variant);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the run failed: " << e.what();
      continue;
    }
    // The file the run writes, read back as `redlab gui TRACE.json` reads it.
    std::string error;
    std::optional<Trace> reopened = trace_from_json(trace_to_json(result.trace), &error);
    ASSERT_TRUE(reopened.has_value()) << error;
    TimelineModel live = build(result.trace);
    TimelineModel file = build(*reopened);
    EXPECT_TRUE(live.same_content(file));
    ASSERT_FALSE(live.lanes().empty());
    EXPECT_EQ(live.violations().size(), file.violations().size());

    // The same frames: the whole run, then zoomed on its middle, with the mouse over the
    // lanes (so the tooltip is drawn too) and the playhead at a third.
    ImGui::GetIO().MousePos = ImVec2(800, 330);
    for (int zoom = 0; zoom < 2; zoom++) {
      TimelineView a, b;
      a.fit(live);
      b.fit(file);
      if (zoom == 1) {
        a.view_from_us = b.view_from_us = live.end_us() / 2;
        a.view_to_us = b.view_to_us = live.end_us() / 2 + live.end_us() / 10 + 1000;
      }
      a.playhead_us = b.playhead_us = live.end_us() / 3;
      Frame from_live = draw_frame(imgui, a, live, result.trace);
      Frame from_file = draw_frame(imgui, b, file, *reopened);
      if (zoom == 0) {
        EXPECT_GT(from_live.record.items_drawn + from_live.record.folds_drawn, 0);
      }
      expect_same_frame(from_live, from_file);
    }
    ImGui::GetIO().MousePos = ImVec2(-100, -100);

    // The keyspace panel at many moments, per server.
    for (const std::string& server : live.servers())
      for (int k = 0; k <= 40; k++) {
        TimeUs t = live.end_us() * k / 40;
        EXPECT_EQ(live.keyspace_at(server, t), file.keyspace_at(server, t)) << server << " " << t;
      }
  }
}

}  // namespace
}  // namespace redlab::gui

// ---- Reading traces: the fast reader in trace_from_json gives what the validating one gives ----

namespace redlab::gui {
namespace {

TEST(TraceReading, RealTracesRoundTripIncludingCyrillicAndQuotedText) {
  for (const char* lang : {"en", "ru", "cs"}) {
    scenario::RunOptions options;
    options.lang = lang;
    options.variant = {{"slow-subscriber", "on"}};  // long quoted payloads, cut with "..."
    scenario::RunResult result = scenario::run_scenario(
        scenario::load_scenario_file(REDLAB_SOURCE_DIR "/scenarios/pubsub-reconnect-loss.json"),
        options);
    std::string error;
    std::optional<Trace> read = trace_from_json(trace_to_json(result.trace), &error);
    ASSERT_TRUE(read.has_value()) << lang << ": " << error;
    EXPECT_EQ(*read, result.trace) << lang;
  }
}

TEST(TraceReading, EscapesFieldOrderAndWhitespaceReadAlike) {
  // \u escapes go to the validating reader, raw UTF-8 to the fast one: the same trace.
  const std::string escaped =
      "{\"version\":2,\"format\":\"redlab-trace\",\"meta\":{\"k\":\"\\u00e9\"},\"events\":[\n"
      "{\"text\":\"caf\\u00e9 \\\"q\\\"\",\"kind\":\"note\",\"time_us\":5}]}";
  const std::string raw =
      "{ \"format\" : \"redlab-trace\" , \"version\" : 2 , \"meta\" : { \"k\" : \"\xc3\xa9\" } ,\n"
      "  \"events\" : [ { \"time_us\" : 5 , \"kind\" : \"note\" , \"text\" : \"caf\xc3\xa9 "
      "\\\"q\\\"\" } ] }\n";
  std::optional<Trace> a = trace_from_json(escaped);
  std::optional<Trace> b = trace_from_json(raw);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(b->events()[0].text, "caf\xc3\xa9 \"q\"");
  EXPECT_EQ(b->events()[0].connection, -1);
  // Errors are located: line, column, path.
  std::string error;
  EXPECT_FALSE(
      trace_from_json("{\"format\":\"redlab-trace\",\"version\":2,\"events\":[{\"time_us\":1.5,"
                      "\"kind\":\"x\"}]}",
                      &error));
  EXPECT_EQ(error.rfind("1:", 0), 0u) << error;
  EXPECT_NE(error.find("events[0].time_us: expected an integer"), std::string::npos) << error;
  EXPECT_FALSE(
      trace_from_json("{\"format\":\"redlab-trace\",\"version\":2,\"events\":[{\"time_us\":1,"
                      "\"kind\":\"x\",\"text\":\"\xff\"}]}",
                      &error));
  EXPECT_NE(error.find("events[0].text"), std::string::npos) << error;
  // A version 1 trace (text only) is refused with what to do instead.
  EXPECT_FALSE(trace_from_json(
      "{\"format\":\"redlab-trace\",\"version\":1,\"meta\":{},\"events\":[]}", &error));
  EXPECT_NE(error.find("--trace"), std::string::npos) << error;
}

}  // namespace
}  // namespace redlab::gui
