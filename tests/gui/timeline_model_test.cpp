// The timeline model on real scenario runs (the structure a class must see: two overlapping
// holds, the violation region, a lost message, pool waits, the keyspace at a time), and the
// view drawn headless (an ImGui context with no window or renderer) for what it records.
#include <gtest/gtest.h>

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "app/gui/timeline_model.h"
#include "app/gui/timeline_view.h"
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

TEST(TimelineModel, TtlDoubleHolderHasTwoOverlappingHoldsAndTheViolation) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  ASSERT_EQ(model.event_count(), result.trace.size());
  EXPECT_EQ(model.end_us(), result.trace.events().back().time_us);

  // Actor lanes in order of appearance, then the server lane exists too.
  ASSERT_GE(model.lanes().size(), 4u);
  EXPECT_EQ(model.lanes()[0].name, "A");
  EXPECT_EQ(lane(model, "redis").kind, LaneKind::server);

  std::vector<Item> a = items_of(lane(model, "A"), ItemKind::hold);
  std::vector<Item> b = items_of(lane(model, "B"), ItemKind::hold);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_GE(b.size(), 1u);
  // A believes it holds the lock from ~0 to ~12 s; its TTL ran out at ~10 s.
  EXPECT_LT(a[0].from_us, 10'000);
  EXPECT_NEAR(static_cast<double>(a[0].to_us), 12.0 * kSecondUs, 10'000);
  EXPECT_NEAR(static_cast<double>(a[0].deadline_us), 10.0 * kSecondUs, 10'000);
  EXPECT_EQ(a[0].ttl_us, 10 * kSecondUs);
  EXPECT_FALSE(a[0].open());
  EXPECT_EQ(result.trace.events()[a[0].end_event].kind, "lock_released");
  // B's hold starts after A's deadline and before A lets go: they overlap.
  EXPECT_GT(b[0].from_us, a[0].deadline_us);
  EXPECT_LT(b[0].from_us, a[0].to_us);
  EXPECT_GT(b[0].to_us, a[0].to_us);

  // The server lane: A's key drained and expired (to == deadline, an expiry mark), B's key
  // was deleted by A (foreign end) at ~12 s.
  const Lane& redis = lane(model, "redis");
  std::vector<Item> ttl = items_of(redis, ItemKind::ttl);
  ASSERT_GE(ttl.size(), 2u);
  EXPECT_EQ(result.trace.events()[ttl[0].begin_event].actor, "A");
  EXPECT_EQ(ttl[0].to_us, ttl[0].deadline_us);
  EXPECT_EQ(result.trace.events()[ttl[1].begin_event].actor, "B");
  EXPECT_TRUE(ttl[1].flags & kItemForeignEnd);
  EXPECT_EQ(ttl[1].to_us, a[0].to_us);
  std::vector<Item> expired = items_of(redis, ItemKind::expired);
  ASSERT_GE(expired.size(), 1u);
  EXPECT_EQ(expired[0].from_us, ttl[0].deadline_us);

  // Parsed from the check events (no caller-given violations): 10.0 s .. 12.0 s, A and B.
  ASSERT_GE(model.violations().size(), 1u);
  const ViolationRegion& v = model.violations()[0];
  EXPECT_EQ(v.check, "mutual_exclusion");
  EXPECT_EQ(v.from_us, 10 * kSecondUs);
  EXPECT_EQ(v.to_us, 12 * kSecondUs);
  EXPECT_EQ(v.who, (std::vector<std::string>{"A", "B"}));

  // The run's own violations replace the parsed ones; an empty set brings them back.
  std::vector<ViolationRegion> given;
  for (const auto& check : result.checks)
    for (const auto& violation : check.violations)
      given.push_back(
          {violation.from_us, violation.to_us, violation.who, violation.text, check.name});
  ASSERT_FALSE(given.empty());
  model.set_violations(given);
  EXPECT_EQ(model.violations(), given);
  EXPECT_NEAR(static_cast<double>(model.violations()[0].from_us), 10.0 * kSecondUs, 100'000);
  model.set_violations({});
  EXPECT_EQ(model.violations()[0].from_us, 10 * kSecondUs);
}

TEST(TimelineModel, WatchdogExtensionsPushTheKeysDeadline) {
  scenario::RunResult result = run("ttl-double-holder", {{"watchdog", "on"}, {"release", "lua"}});
  TimelineModel model = build(result.trace);
  std::vector<Item> ttl = items_of(lane(model, "redis"), ItemKind::ttl);
  int64_t a_segments = 0;
  for (const Item& seg : ttl) {
    if (result.trace.events()[seg.begin_event].actor != "A") continue;
    a_segments++;
    EXPECT_EQ(seg.ttl_us, 10 * kSecondUs);
    EXPECT_LT(seg.to_us, seg.deadline_us);  // each is cut by the next extension or the release
  }
  EXPECT_GE(a_segments, 4);  // the acquisition and an extension every ~3.3 s for 12 s
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
        EXPECT_EQ(command.connection, reply.connection);
        EXPECT_EQ(row.connection >= 0, true);
        EXPECT_GT(item.to_us - item.from_us, 0);
      }
  int64_t commands = std::count_if(events.begin(), events.end(),
                                   [](const TraceEvent& e) { return e.kind == "command"; });
  EXPECT_EQ(spans, commands);
  // The first SET's reply is OK.
  std::vector<Item> a_commands = items_of(lane(model, "A"), ItemKind::command);
  ASSERT_GE(a_commands.size(), 2u);
  EXPECT_EQ(events[a_commands[1].begin_event].text.rfind("SET lock:job:42", 0), 0u);
  EXPECT_EQ(events[a_commands[1].end_event].text, "OK");
}

TEST(TimelineModel, KeyspaceAtShowsTheTokenWhileHeldAndNothingAfterExpiry) {
  scenario::RunResult result = run("ttl-double-holder");
  TimelineModel model = build(result.trace);
  std::vector<Item> a = items_of(lane(model, "A"), ItemKind::hold);
  std::vector<Item> b = items_of(lane(model, "B"), ItemKind::hold);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_GE(b.size(), 1u);
  const std::string& acquired = result.trace.events()[a[0].begin_event].text;
  std::string token = acquired.substr(acquired.find("token=") + 6, 16);

  std::vector<KeyState> at5 = model.keyspace_at("redis", 5 * kSecondUs);
  ASSERT_EQ(at5.size(), 1u);
  EXPECT_EQ(at5[0].key, "lock:job:42");
  EXPECT_EQ(at5[0].type, "string");
  EXPECT_EQ(at5[0].value, "\"" + token + "\"");
  // Replayed at the reply's time, a little after the server ran the SET: up to a ms more.
  EXPECT_GE(at5[0].ttl_ms, 4990);
  EXPECT_LE(at5[0].ttl_ms, 5002);

  // Between A's expiry and B's acquisition the key is gone.
  ASSERT_GT(b[0].from_us - a[0].deadline_us, 2) << "no instant between expiry and B's SET";
  TimeUs between_us = a[0].deadline_us + (b[0].from_us - a[0].deadline_us) / 2;
  EXPECT_TRUE(model.keyspace_at("redis", between_us).empty());
  // After A's DEL at ~12 s B's key is gone as well.
  EXPECT_TRUE(model.keyspace_at("redis", a[0].to_us + 1).empty() ||
              model.keyspace_at("redis", a[0].to_us + 1)[0].value != "\"" + token + "\"");
  // Scrubbing back gives the same answer as the first time (the replay starts over).
  EXPECT_EQ(model.keyspace_at("redis", 5 * kSecondUs), at5);
  EXPECT_TRUE(model.keyspace_at("no-such-server", 5 * kSecondUs).empty());
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
    // A shorter trace in the same object (a new run) starts over.
    Trace fresh;
    fresh.append(result.trace.events()[0]);
    live.update(fresh);
    EXPECT_EQ(live.event_count(), 1u);
  }
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
    EXPECT_EQ(events[arrow.from_event].text.rfind("PUBLISH news ", 0), 0u);
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
  // The check says: "sub missed 16 messages on news".
  EXPECT_EQ(lost, 16);
  EXPECT_EQ(arrows + lost, 50);
  // Sorted by start time, with the running maximum of the ends for culling.
  EXPECT_TRUE(std::is_sorted(model.arrows().begin(), model.arrows().end(),
                             [](const Arrow& x, const Arrow& y) { return x.from_us < y.from_us; }));
  ASSERT_EQ(model.arrow_max_to_us().size(), model.arrows().size());
}

TEST(TimelineModel, SlowSubscriberLosesItsBufferAtTheGap) {
  scenario::RunResult result = run("pubsub-reconnect-loss", {{"slow-subscriber", "on"}});
  TimelineModel model = build(result.trace);
  int64_t lost = std::count_if(model.arrows().begin(), model.arrows().end(),
                               [](const Arrow& a) { return a.lost; });
  int64_t delivered = static_cast<int64_t>(model.arrows().size()) - lost;
  EXPECT_GT(lost, 0);
  EXPECT_EQ(delivered, 22);  // pubsub_message events in this run
}

TEST(TimelineModel, StreamEntriesAreArrowsFromXaddToTheConsumer) {
  scenario::RunResult result = run("pubsub-reconnect-loss", {{"transport", "streams"}});
  TimelineModel model = build(result.trace);
  int64_t stream_arrows = std::count_if(model.arrows().begin(), model.arrows().end(),
                                        [](const Arrow& a) { return a.stream && !a.lost; });
  EXPECT_EQ(stream_arrows, 50);
  // The keyspace has the stream with all its entries at the end.
  std::vector<KeyState> keys = model.keyspace_at("redis", model.end_us());
  auto news =
      std::find_if(keys.begin(), keys.end(), [](const KeyState& k) { return k.key == "news"; });
  ASSERT_NE(news, keys.end());
  EXPECT_EQ(news->type, "stream");
  EXPECT_EQ(news->value, "(integer) 50 entries");
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
  EXPECT_EQ(waits, 23);
  EXPECT_EQ(timed_out, 20);
  ASSERT_EQ(model.pool_stats().count("app"), 1u);
  const std::vector<PoolSample>& app = model.pool_stats().at("app");
  EXPECT_EQ(app.size(), 28u);
  EXPECT_EQ(app.back().total, 4);
  EXPECT_EQ(app.back().timeouts, 20);
  EXPECT_EQ(model.client_options().at("app"),
            "app profile=v9.0 pool_size=4 pool_timeout=4.0 s read_timeout=3.0 s max_retries=3");
  // Its check summary has only "the first at 4.0 s": a one-instant region.
  ASSERT_FALSE(model.violations().empty());
  EXPECT_EQ(model.violations()[0].from_us, 4 * kSecondUs);
  EXPECT_EQ(model.violations()[0].who, std::vector<std::string>{"worker5"});
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
  ASSERT_GE(d.violations.size(), 1u);
  EXPECT_NEAR(d.violations[0].min.x, d.x0 + width_px * 10 / 25, 1.0);
  EXPECT_NEAR(d.violations[0].max.x, d.x0 + width_px * 12 / 25, 1.0);
  EXPECT_NE(d.violations[0].text.find("A and B held lock:job:42 together"), std::string::npos);
  EXPECT_EQ(view.x_of(10 * kSecondUs), d.violations[0].min.x);
  EXPECT_NEAR(static_cast<double>(view.t_of(d.violations[0].max.x)), 12.0 * kSecondUs,
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
  ASSERT_EQ(view.last_draw.violations.size(), 2u);  // and no_foreign_unlock at 12.0 s
  EXPECT_NEAR(view.last_draw.violations[0].min.x, view.x_of(10 * kSecondUs), 0.01);
  EXPECT_NEAR(view.last_draw.violations[0].max.x - view.last_draw.violations[0].min.x,
              static_cast<float>(view.last_draw.px_per_us * 2 * kSecondUs), 1.0);
  view.view_from_us = 14 * kSecondUs;
  view.view_to_us = 20 * kSecondUs;
  imgui.frame([&] { view.draw(model, result.trace, ImVec2(0, 0)); });
  EXPECT_TRUE(view.last_draw.violations.empty());
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
  const float y = a.min.y + 3 + view.row_height_px * (static_cast<float>(hold_row) + 0.5f);
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
    trace.append(TraceEvent{t, "command", "A", 1, 0, 0, "GET k"});
    trace.append(TraceEvent{t + 200, "reply", "A", 1, 0, 0, "(nil)"});
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
      "{\"version\":1,\"format\":\"redlab-trace\",\"meta\":{\"k\":\"\\u00e9\"},\"events\":[\n"
      "{\"text\":\"caf\\u00e9 \\\"q\\\"\",\"kind\":\"note\",\"time_us\":5}]}";
  const std::string raw =
      "{ \"format\" : \"redlab-trace\" , \"version\" : 1 , \"meta\" : { \"k\" : \"\xc3\xa9\" } ,\n"
      "  \"events\" : [ { \"time_us\" : 5 , \"kind\" : \"note\" , \"text\" : \"caf\xc3\xa9 "
      "\\\"q\\\"\" } ] }\n";
  std::optional<Trace> a = trace_from_json(escaped);
  std::optional<Trace> b = trace_from_json(raw);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(b->events()[0].text, "caf\xc3\xa9 \"q\"");
  EXPECT_EQ(b->events()[0].connection, -1);
  // Errors are still the validating reader's, located.
  std::string error;
  EXPECT_FALSE(
      trace_from_json("{\"format\":\"redlab-trace\",\"version\":1,\"events\":[{\"time_us\":1.5,"
                      "\"kind\":\"x\"}]}",
                      &error));
  EXPECT_EQ(error, "events[0].time_us: expected an integer");
  EXPECT_FALSE(
      trace_from_json("{\"format\":\"redlab-trace\",\"version\":1,\"events\":[{\"time_us\":1,"
                      "\"kind\":\"x\",\"text\":\"\xff\"}]}",
                      &error));
  EXPECT_EQ(error.rfind("trace: [json.exception.parse_error", 0), 0u) << error;
}

}  // namespace
}  // namespace redlab::gui
