// The GUI application under a real window (ctest runs these under xvfb-run, see
// CMakeLists.txt): every core scenario rendered and captured, the violation region of
// ttl-double-holder drawn, synthetic clicks, scrubbing and wheel zoom, files that must be
// refused while the current trace stays, and `redlab gui --screenshot` through gui_main.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/gui/gui.h"
#include "app/gui/gui_app.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"
#include "tests/gui/english_words.h"
#include "tests/gui/gui_fixture.h"

namespace redlab::gui {
namespace {

namespace fs = std::filesystem;

const char* kCoreScenarios[] = {"ttl-double-holder", "forged-fence", "pubsub-reconnect-loss",
                                "pool-exhaustion", "watch-retry-storm"};

// Screenshots and files of the last run stay here for a look (one directory, reused).
fs::path out_dir() {
  fs::path dir = fs::path(::testing::TempDir()) / "redlab-gui-test";
  fs::create_directories(dir);
  return dir;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

class GuiApp : public GuiFixture {
 protected:
  static void SetUpTestSuite() { open_host(true); }
  // One frame with the key pressed (the app sees each press once).
  void press(Key key, bool shift = false) {
    FrameInput in;
    in.keys.push_back({key, shift});
    ASSERT_TRUE(host->frame(*app, &in));
    frames(1);
  }
  void wheel(ImVec2 pos, float amount) {
    frames(1, pos, false);
    FrameInput in;
    in.mouse_pos = pos;
    in.wheel = amount;
    ASSERT_TRUE(host->frame(*app, &in));
  }
  // ---- The exercise panel ----
  // The app anew, keeping its progress in `progress_path` ("" = the default place).
  void new_app(const std::string& progress_path) {
    app.reset();
    AppOptions options;
    options.persist = false;
    options.keep_progress = true;
    options.progress_path = progress_path;
    app = std::make_unique<App>(options);
    frames(1);
  }
  void open_panel(const std::string& id) {
    open_and_run_to_end(id);
    WidgetRect button = app->widget("exercise");
    ASSERT_TRUE(button.valid()) << "no Exercise button for " << id;
    if (!app->exercise_open()) click(button.center());  // the button opens and closes it
    frames(2);
    ASSERT_TRUE(app->exercise_open());
    ASSERT_TRUE(app->widget("exercise_panel").valid());
  }
  // Replaces the editor's text as a student does: click into it, Ctrl+A, type.
  void type_into_editor(const std::string& text) {
    WidgetRect editor = app->widget("script_editor");
    ASSERT_TRUE(editor.valid());
    click({editor.min.x + 30, editor.min.y + 8});
    FrameInput select;
    select.select_all = true;
    ASSERT_TRUE(host->frame(*app, &select));
    frames(1);
    FrameInput typing;
    typing.text = text;
    ASSERT_TRUE(host->frame(*app, &typing));
    frames(2);
  }
  void click_check_and_wait() {
    WidgetRect check = app->widget("check");
    ASSERT_TRUE(check.valid());
    click(check.center());
    for (int i = 0; i < 3000 && app->checking(); i++) {
      frames(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_FALSE(app->checking());
    frames(2);
  }
  // The pixel at (x, y) of the last frame.
  std::array<uint8_t, 3> pixel(int x, int y) const {
    const auto& px = host->last_pixels();
    size_t i = (size_t(y) * host->framebuffer_width() + x) * 4;
    return {px[i], px[i + 1], px[i + 2]};
  }
};

TEST_F(GuiApp, EveryCoreScenarioRendersAPicture) {
  fs::path dir = out_dir();
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    open_and_run_to_end(id);
    EXPECT_TRUE(app->error().empty()) << app->error();
    EXPECT_FALSE(app->playing());
    EXPECT_EQ(app->playhead_us(), app->model().end_us());
    EXPECT_GT(app->view().last_draw.items_drawn + app->view().last_draw.folds_drawn, 10);
    fs::path png = dir / (std::string(id) + ".png");
    host->request_screenshot(png.string());
    frames(1);
    ASSERT_EQ(host->screenshot_error(), "");
    int w = 0, h = 0, channels = 0;
    unsigned char* data = stbi_load(png.c_str(), &w, &h, &channels, 3);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(w, host->framebuffer_width());
    EXPECT_EQ(h, host->framebuffer_height());
    // Not blank: a real picture of lanes, text and coloured spans has many colours, and a
    // good part of it differs from the window background.
    std::set<uint32_t> colours;
    size_t differ = 0;
    for (int i = 0; i < w * h; i++) {
      uint32_t c = uint32_t(data[i * 3]) << 16 | uint32_t(data[i * 3 + 1]) << 8 | data[i * 3 + 2];
      colours.insert(c);
      if (c != 0xF5F5F7 && c != 0xFFFFFF) differ++;
    }
    stbi_image_free(data);
    EXPECT_GT(colours.size(), 200u);
    EXPECT_GT(differ, size_t(w) * h / 20);
  }
}

TEST_F(GuiApp, TtlDoubleHolderViolationRegionIsDrawn) {
  open_and_run_to_end("ttl-double-holder");
  const DrawRecord& d = app->view().last_draw;
  ASSERT_FALSE(d.violations.empty());
  WidgetRect timeline = app->widget("timeline");
  ASSERT_TRUE(timeline.valid());
  bool overlap_of_a_and_b = false;
  for (auto& r : d.violations) {
    // Inside the timeline, and where the times say: A and B overlap from 10 s to 12 s.
    EXPECT_GE(r.min.x, timeline.min.x - 1);
    EXPECT_LE(r.max.x, timeline.max.x + 1);
    EXPECT_GE(r.max.x - r.min.x, 2);  // an instant (a foreign DEL) still gets a few pixels
    EXPECT_GT(r.max.y - r.min.y, 5);
    // A and B both believed they held the lock from 10 s (A's TTL ran out) to 12 s (A done).
    if (r.check != "mutual_exclusion" || std::abs(app->view().t_of(r.min.x) / 1e6 - 10.0) > 0.2)
      continue;
    overlap_of_a_and_b = true;
    EXPECT_NEAR(app->view().t_of(r.max.x) / 1e6, 12.0, 0.2);
    // The region's border is drawn in red: look at the pixels along its left edge.
    int red = 0, rows = 0;
    for (int y = int(r.min.y) + 2; y < int(r.max.y) - 2; y++) {
      rows++;
      for (int dx = -1; dx <= 1; dx++) {
        auto p = pixel(int(r.min.x) + dx, y);
        if (p[0] > 170 && p[1] < 130 && p[2] < 130) {
          red++;
          break;
        }
      }
    }
    EXPECT_GT(red, rows / 2) << "the left edge of the violation region is not red";
  }
  EXPECT_TRUE(overlap_of_a_and_b);
}

TEST_F(GuiApp, ClickRunPlaysPauseStopsStepMoves) {
  open_and_run_to_end("ttl-double-holder");
  ASSERT_FALSE(app->playing());
  WidgetRect run = app->widget("run");
  ASSERT_TRUE(run.valid());
  click(run.center());
  EXPECT_TRUE(app->playing());
  EXPECT_LT(app->playhead_us(), 100'000);  // restarted from 0, one frame of play since
  TimeUs before_us = app->playhead_us();
  frames(4, {-1, -1}, false, 0.5f);  // 2 s of wall time at 1x
  EXPECT_NEAR(double(app->playhead_us() - before_us), 2e6, 1e3);

  click(app->widget("pause").center());
  EXPECT_FALSE(app->playing());
  TimeUs paused_us = app->playhead_us();
  frames(5, {-1, -1}, false, 0.5f);
  EXPECT_EQ(app->playhead_us(), paused_us);

  click(app->widget("step").center());
  EXPECT_GT(app->playhead_us(), paused_us);
  auto next = app->model().next_event_after(paused_us);
  ASSERT_TRUE(next);
  EXPECT_EQ(app->playhead_us(), *next);

  click(app->widget("restart").center());
  EXPECT_TRUE(app->playing());
  EXPECT_LT(app->playhead_us(), 100'000);
}

TEST_F(GuiApp, PlaybackSpeedAndEnd) {
  open_and_run_to_end("ttl-double-holder");
  app->set_speed(20);
  app->restart();
  frames(2, {-1, -1}, false, 0.25f);  // 0.5 s at 20x = 10 s of the scenario
  EXPECT_NEAR(double(app->playhead_us()), 10e6, 1e4);
  frames(4, {-1, -1}, false, 0.5f);  // past the end: stops there
  EXPECT_EQ(app->playhead_us(), app->model().end_us());
  EXPECT_FALSE(app->playing());
}

TEST_F(GuiApp, ScrubbingTheRulerMovesThePlayhead) {
  open_and_run_to_end("ttl-double-holder");
  const DrawRecord& d = app->view().last_draw;
  ASSERT_GT(d.ruler_max.x, d.ruler_min.x);
  ImVec2 at{d.ruler_min.x + (d.ruler_max.x - d.ruler_min.x) * 0.4f,
            (d.ruler_min.y + d.ruler_max.y) / 2};
  TimeUs expected_us = app->view().t_of(at.x);
  click(at);
  EXPECT_NEAR(double(app->playhead_us()), double(expected_us), 0.01 * double(d.to_us - d.from_us));
  // Dragging along the ruler follows the mouse.
  ImVec2 to{d.ruler_min.x + (d.ruler_max.x - d.ruler_min.x) * 0.7f, at.y};
  frames(1, at, true);
  frames(1, {(at.x + to.x) / 2, at.y}, true);
  frames(1, to, true);
  TimeUs dragged_us = app->view().t_of(to.x);
  frames(1, to, false);
  EXPECT_NEAR(double(app->playhead_us()), double(dragged_us), 0.01 * double(d.to_us - d.from_us));
}

TEST_F(GuiApp, WheelZoomsAtTheMouse) {
  open_and_run_to_end("ttl-double-holder");
  const DrawRecord& d = app->view().last_draw;
  ImVec2 at{d.area_min.x + (d.area_max.x - d.area_min.x) * 0.6f, (d.area_min.y + d.area_max.y) / 2};
  TimeUs width_before_us = app->view().view_to_us - app->view().view_from_us;
  TimeUs t_under_mouse_us = app->view().t_of(at.x);
  wheel(at, 2);
  frames(1, at);
  TimeUs width_after_us = app->view().view_to_us - app->view().view_from_us;
  EXPECT_LT(width_after_us, width_before_us * 9 / 10);
  // Anchored: the time under the mouse stays under the mouse.
  EXPECT_NEAR(double(app->view().t_of(at.x)), double(t_under_mouse_us),
              0.02 * double(width_after_us));
  wheel(at, -4);
  frames(1, at);
  EXPECT_GT(app->view().view_to_us - app->view().view_from_us, width_after_us);
}

TEST_F(GuiApp, ChoosingAScenarioInTheLibraryRunsIt) {
  open_and_run_to_end("ttl-double-holder");
  WidgetRect entry = app->widget("library:forged-fence");
  ASSERT_TRUE(entry.valid());
  click(entry.center());
  ASSERT_NE(app->scenario(), nullptr);
  EXPECT_EQ(app->scenario()->id, "forged-fence");
  EXPECT_EQ(app->trace().meta().at("scenario"), "forged-fence");
  EXPECT_TRUE(app->playing());
}

TEST_F(GuiApp, BadTraceFilesShowAMessageAndKeepTheCurrentTrace) {
  fs::path dir = out_dir();
  open_and_run_to_end("forged-fence");
  fs::path good = dir / "good.json";
  ASSERT_TRUE(app->save_trace(good.string())) << app->error();
  const std::string text = read_text(good);
  const size_t events_before = app->trace().size();
  ASSERT_GT(events_before, 10u);

  fs::path truncated = dir / "truncated.json";
  write_text(truncated, text.substr(0, text.size() / 2));
  ASSERT_NE(text.find("\"version\":2"), std::string::npos);
  fs::path newer = dir / "newer.json";
  std::string newer_text = text;
  newer_text.replace(newer_text.find("\"version\":2"), 11, "\"version\":3");
  write_text(newer, newer_text);
  fs::path older = dir / "older.json";  // a version 1 trace: text only, refused with advice
  std::string older_text = text;
  older_text.replace(older_text.find("\"version\":2"), 11, "\"version\":1");
  write_text(older, older_text);
  fs::path garbage = dir / "garbage.json";
  write_text(garbage,
             "{\"format\":\"redlab-trace\",\"version\":2,\"events\":[{\"time_us\":\"x\"}]}");

  for (const fs::path& bad : {truncated, newer, older, garbage}) {
    SCOPED_TRACE(bad.string());
    EXPECT_FALSE(app->open_path(bad.string()));
    EXPECT_NE(app->error().find(bad.string()), std::string::npos) << app->error();
    EXPECT_EQ(app->trace().size(), events_before);
    EXPECT_EQ(app->trace().meta().at("scenario"), "forged-fence");
    frames(2);
    EXPECT_TRUE(app->widget("error").valid()) << "the message is not in the window";
  }
  EXPECT_NE(app->error().find("events[0]"), std::string::npos) << app->error();
  EXPECT_FALSE(app->open_path(newer.string()));
  EXPECT_NE(app->error().find("version"), std::string::npos) << app->error();
  EXPECT_FALSE(app->open_path(older.string()));
  EXPECT_NE(app->error().find("version 1"), std::string::npos) << app->error();
  EXPECT_NE(app->error().find("--trace"), std::string::npos) << app->error();

  // The good file replays: the same events, the verdicts from the trace.
  ASSERT_TRUE(app->open_path(good.string())) << app->error();
  EXPECT_EQ(trace_to_json(app->trace()), text);
  frames(2);
  EXPECT_TRUE(app->error().empty());
  EXPECT_FALSE(app->view().last_draw.violations.empty());
}

// The pixels of a rectangle of the last frame.
std::vector<uint8_t> crop(const Host& host, const WidgetRect& r) {
  std::vector<uint8_t> out;
  const auto& px = host.last_pixels();
  const int w = host.framebuffer_width(), h = host.framebuffer_height();
  for (int y = std::max(0, int(r.min.y)); y < std::min(h, int(r.max.y)); y++)
    for (int x = std::max(0, int(r.min.x)); x < std::min(w, int(r.max.x)); x++)
      for (int c = 0; c < 4; c++) out.push_back(px[(size_t(y) * w + x) * 4 + c]);
  return out;
}

// What the app shows of a run, besides the top bar and the timeline's one-line header (which
// name the source): the timeline's drawing, the verdicts, the keyspace panel, their pixels.
struct Shown {
  DrawRecord draw;
  std::vector<App::CheckLine> checks;
  std::vector<App::ServerKeys> keyspace;
  std::vector<uint8_t> timeline_px, narration_px, inspector_px;
  TimeUs playhead_us = 0;
};

TEST_F(GuiApp, AReopenedTraceShowsWhatTheLiveRunShowed) {
  fs::path dir = out_dir();
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    auto capture = [&] {
      frames(3);
      Shown s;
      s.draw = app->view().last_draw;
      s.checks = app->checks();
      s.keyspace = app->keyspace_shown();
      s.playhead_us = app->playhead_us();
      const DrawRecord& d = app->view().last_draw;
      s.timeline_px = crop(*host, {d.area_min, d.area_max});
      s.narration_px = crop(*host, app->widget("narration"));
      s.inspector_px = crop(*host, app->widget("inspector"));
      return s;
    };
    open_and_run_to_end(id);
    Shown live = capture();
    fs::path saved = dir / (std::string(id) + "-reopened.json");
    ASSERT_TRUE(app->save_trace(saved.string())) << app->error();
    ASSERT_TRUE(app->open_path(saved.string())) << app->error();
    Shown reopened = capture();

    EXPECT_EQ(live.playhead_us, reopened.playhead_us);
    EXPECT_FALSE(live.checks.empty());
    EXPECT_EQ(live.checks, reopened.checks);
    EXPECT_FALSE(live.keyspace.empty());
    EXPECT_EQ(live.keyspace, reopened.keyspace);
    EXPECT_EQ(live.draw.items_drawn, reopened.draw.items_drawn);
    EXPECT_EQ(live.draw.folds_drawn, reopened.draw.folds_drawn);
    EXPECT_EQ(live.draw.arrows_drawn, reopened.draw.arrows_drawn);
    EXPECT_EQ(live.draw.from_us, reopened.draw.from_us);
    EXPECT_EQ(live.draw.to_us, reopened.draw.to_us);
    ASSERT_EQ(live.draw.violations.size(), reopened.draw.violations.size());
    for (size_t i = 0; i < live.draw.violations.size(); i++) {
      EXPECT_EQ(live.draw.violations[i].text, reopened.draw.violations[i].text);
      EXPECT_EQ(live.draw.violations[i].min.x, reopened.draw.violations[i].min.x);
      EXPECT_EQ(live.draw.violations[i].max.x, reopened.draw.violations[i].max.x);
    }
    ASSERT_FALSE(live.timeline_px.empty());
    EXPECT_TRUE(live.timeline_px == reopened.timeline_px) << "the timeline's pixels differ";
    EXPECT_TRUE(live.narration_px == reopened.narration_px) << "the verdicts' pixels differ";
    EXPECT_TRUE(live.inspector_px == reopened.inspector_px) << "the inspector's pixels differ";
  }
}

// The first event of a kind by an actor.
const TraceEvent* event_of(const Trace& trace, const std::string& kind, const std::string& actor) {
  for (const TraceEvent& e : trace.events())
    if (e.kind == kind && e.actor == actor) return &e;
  return nullptr;
}

TEST_F(GuiApp, SlowlogPanelNamesTheSlowCommandOnceItHasRun) {
  // timeout-does-not-cancel: the report's slow command (staged as DEBUG SLEEP) is in the
  // server's SLOWLOG from its end on, not before, with the time it ran.
  ASSERT_TRUE(app->open_scenario("timeout-does-not-cancel"));
  ASSERT_TRUE(app->run(false)) << app->error();
  const TraceEvent* logged = nullptr;
  for (const TraceEvent& e : app->trace().events())
    if (e.kind == "slowlog" && e.list(F::argv) && e.list(F::argv)->at(0) == "DEBUG") {
      logged = &e;
      break;
    }
  ASSERT_NE(logged, nullptr) << "no SLOWLOG entry for the slow command";
  const TimeUs logged_at = logged->num_or(F::logged_at_us, -1);
  ASSERT_GT(logged_at, logged->time_us);
  EXPECT_EQ(logged_at - logged->time_us, logged->num_or(F::duration_us, -1));
  app->seek(logged_at - 1000);
  frames(2);
  ASSERT_EQ(app->slowlog_shown().size(), 1u);
  for (const SlowlogRow& row : app->slowlog_shown()[0].second)
    EXPECT_LT(row.logged_at_us, logged_at) << "an entry shown before the command ended";
  app->seek(logged_at);
  frames(2);
  const auto& rows = app->slowlog_shown()[0].second;
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].argv, *logged->list(F::argv));
  EXPECT_EQ(rows[0].duration_us, logged->num_or(F::duration_us, -1));
  EXPECT_GE(rows[0].duration_us, 10'000) << "under slowlog-log-slower-than";
}

TEST_F(GuiApp, KeyspacePanelShowsTheServersRecordAtThePlayhead) {
  // ttl-double-holder with the Lua release: at 16 s, C holds the lock; its token is the key.
  ASSERT_TRUE(app->open_scenario("ttl-double-holder"));
  app->variant()["release"] = "lua";
  ASSERT_TRUE(app->run(false)) << app->error();
  app->seek(16'000'000);
  frames(2);
  const TraceEvent* c_acquired = event_of(app->trace(), "lock_acquired", "C");
  ASSERT_NE(c_acquired, nullptr);
  ASSERT_EQ(app->keyspace_shown().size(), 1u);
  const App::ServerKeys& redis = app->keyspace_shown()[0];
  EXPECT_EQ(redis.server, "redis");
  EXPECT_TRUE(redis.observed);
  ASSERT_EQ(redis.keys.size(), 1u);
  EXPECT_EQ(redis.keys[0].key, "lock:job:42");
  EXPECT_EQ(redis.keys[0].value, c_acquired->str_or(F::token));
  EXPECT_GT(redis.keys[0].ttl_ms, 0);
  // After C's release, nothing.
  app->seek(app->model().end_us());
  frames(2);
  EXPECT_TRUE(app->keyspace_shown()[0].keys.empty());

  // forged-fence without the resource's check: the fence counter is the server's own value,
  // the last fence a holder took.
  ASSERT_TRUE(app->open_scenario("forged-fence"));
  app->variant()["resource"] = "no-check";
  ASSERT_TRUE(app->run(false)) << app->error();
  frames(2);
  int64_t last_fence = -1;
  for (const TraceEvent& e : app->trace().events())
    if (e.kind == "lock_acquired" && e.has(F::fence)) last_fence = e.num_or(F::fence, -1);
  ASSERT_GT(last_fence, 0);
  bool fence_key = false;
  for (const KeyRow& k : app->keyspace_shown().at(0).keys)
    if (k.key.find("fence") != std::string::npos) {
      fence_key = true;
      EXPECT_EQ(k.value, std::to_string(last_fence));
      EXPECT_EQ(k.ttl_ms, -1);
    }
  EXPECT_TRUE(fence_key);

  // watch-retry-storm with the atomic Lua decrement: the stock is sold out at the end.
  ASSERT_TRUE(app->open_scenario("watch-retry-storm"));
  app->variant()["atomic"] = "lua";
  ASSERT_TRUE(app->run(false)) << app->error();
  frames(2);
  ASSERT_EQ(app->keyspace_shown().at(0).keys.size(), 1u);
  EXPECT_EQ(app->keyspace_shown()[0].keys[0].value, "0");
}

TEST_F(GuiApp, BadScenarioFileShowsALocatedMessageAndKeepsTheCurrentOne) {
  fs::path dir = out_dir();
  open_and_run_to_end("ttl-double-holder");
  const size_t events_before = app->trace().size();
  fs::path bad = dir / "bad-scenario.json";
  write_text(bad, "{\n  \"format\": \"redlab-scenario\",\n  \"version\": 1,\n  \"id\": 5\n}\n");
  EXPECT_FALSE(app->open_path(bad.string()));
  EXPECT_NE(app->error().find(bad.string() + ":4:"), std::string::npos) << app->error();
  EXPECT_EQ(app->scenario()->id, "ttl-double-holder");
  EXPECT_EQ(app->trace().size(), events_before);
  fs::path newer = dir / "newer-scenario.json";
  write_text(newer, "{\"format\": \"redlab-scenario\", \"version\": 99, \"id\": \"x\"}");
  EXPECT_FALSE(app->open_path(newer.string()));
  EXPECT_NE(app->error().find("version"), std::string::npos) << app->error();
  EXPECT_EQ(app->scenario()->id, "ttl-double-holder");
}

TEST_F(GuiApp, ExportsTimelinePngAndChromeTrace) {
  fs::path dir = out_dir();
  open_and_run_to_end("pool-exhaustion");
  fs::path png = dir / "timeline.png";
  app->request_timeline_png(png.string());
  frames(1);
  ASSERT_TRUE(app->error().empty()) << app->error();
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &w, &h, &channels, 4);
  ASSERT_NE(data, nullptr);
  stbi_image_free(data);
  const DrawRecord& d = app->view().last_draw;
  EXPECT_NEAR(w, d.area_max.x - d.area_min.x, 2);
  EXPECT_NEAR(h, d.area_max.y - d.area_min.y, 2);

  fs::path chrome = dir / "chrome.json";
  ASSERT_TRUE(app->export_chrome_trace(chrome.string()));
  EXPECT_EQ(read_text(chrome).rfind("{\"traceEvents\":[", 0), 0u);
  // Atomic writes leave no temporary files behind.
  for (auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST_F(GuiApp, LanguageSwitchRerunsWithTranslatedNarration) {
  open_and_run_to_end("ttl-double-holder");
  EXPECT_TRUE(host->font_loaded());
  app->set_lang("ru");
  app->rerun_in_place();
  frames(2);
  bool cyrillic = false;
  for (auto& n : app->model().notes())
    cyrillic = cyrillic || n.text.find("\xd0") != std::string::npos ||
               n.text.find("\xd1") != std::string::npos;
  EXPECT_TRUE(cyrillic);
  EXPECT_EQ(app->playhead_us(), app->model().end_us());  // the view stayed where it was
}

TEST_F(GuiApp, UnusableBackendShowsAnErrorWithoutBlocking) {
  ASSERT_TRUE(app->open_scenario("ttl-double-holder"));
  app->set_backend("redis://127.0.0.1:1");  // nothing listens on port 1
  ASSERT_TRUE(app->run(true));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (app->running() && std::chrono::steady_clock::now() < deadline) {
    auto start = std::chrono::steady_clock::now();
    frames(1);
    // The UI thread never waits for the server.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  }
  EXPECT_FALSE(app->running());
  EXPECT_FALSE(app->error().empty());
  frames(2);
  EXPECT_TRUE(app->widget("error").valid());
}

// A live run on a private redis-server: the timeline grows frame by frame while the UI keeps
// drawing, and the finished result (meta, verdicts) replaces the live events at the end.
TEST_F(GuiApp, LiveRunOnSpawnedServerGrowsWhileTheUiDraws) {
  if (std::system("command -v redis-server > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "redis-server is not installed";
  ASSERT_TRUE(app->open_scenario("pubsub-reconnect-loss"));
  app->set_backend("spawn");
  ASSERT_TRUE(app->run(true));
  std::set<size_t> sizes_while_running;
  auto slowest = std::chrono::steady_clock::duration::zero();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (app->running() && std::chrono::steady_clock::now() < deadline) {
    auto start = std::chrono::steady_clock::now();
    frames(1);
    slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
    if (app->running()) sizes_while_running.insert(app->trace().size());
  }
  ASSERT_FALSE(app->running()) << "the live run did not finish within 60 s";
  EXPECT_EQ(app->error(), "");
  EXPECT_GT(sizes_while_running.size(), 10u) << "the timeline did not grow during the run";
  EXPECT_LT(slowest, std::chrono::milliseconds(1000));
  EXPECT_EQ(app->trace().meta().at("scenario"), "pubsub-reconnect-loss");
  bool has_check = false;
  for (auto& e : app->trace().events()) has_check = has_check || e.kind == "check";
  EXPECT_TRUE(has_check);
}

TEST_F(GuiApp, FollowKeepsThePlayheadInView) {
  open_and_run_to_end("ttl-double-holder");
  app->set_follow(true);
  app->view().view_from_us = 0;
  app->view().view_to_us = 2'000'000;  // zoomed in on the first 2 s
  app->restart();
  frames(10, {-1, -1}, false, 0.5f);  // 5 s in
  EXPECT_GE(app->playhead_us(), app->view().view_from_us);
  EXPECT_LE(app->playhead_us(), app->view().view_to_us);
  EXPECT_NEAR(double(app->view().view_to_us - app->view().view_from_us), 2e6, 2e4);
}

TEST_F(GuiApp, ClickingASpanSelectsItForTheInspector) {
  open_and_run_to_end("ttl-double-holder");
  const DrawRecord& d = app->view().last_draw;
  const DrawRecord::LaneRect* lane_a = nullptr;
  for (auto& lane : d.lanes)
    if (lane.name == "A") lane_a = &lane;
  ASSERT_NE(lane_a, nullptr);
  // A's first row holds its 12 s of work; click it at 5 s.
  ImVec2 at{app->view().x_of(5'000'000), lane_a->rows_y[0] + lane_a->row_h / 2};
  click(at);
  ASSERT_GE(app->view().selected_event, 0);
  const TraceEvent& e = app->trace().events()[size_t(app->view().selected_event)];
  EXPECT_EQ(e.actor, "A");
  EXPECT_EQ(e.kind, "work");
}

// ---- The classroom: what has happened, the moment of failure, presenter mode ----

// The violations of the run, earliest start first.
std::vector<const ViolationRegion*> by_start(const TimelineModel& model) {
  std::vector<const ViolationRegion*> v;
  for (const ViolationRegion& r : model.violations()) v.push_back(&r);
  std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->from_us < b->from_us; });
  // The model keeps the same order itself (the GUI steps and lists by it).
  std::vector<const ViolationRegion*> kept;
  for (size_t i : model.violations_by_start()) kept.push_back(&model.violations()[i]);
  EXPECT_EQ(kept, v);
  return v;
}

const App::Verdict* verdict_of(const App& app, const std::string& check) {
  for (const App::Verdict& v : app.verdicts())
    if (v.check == check) return &v;
  return nullptr;
}

TEST_F(GuiApp, NoViolationBeforeItsMomentInEveryCoreScenarioThenItIsDrawnAndReported) {
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    open_and_run_to_end(id);
    const auto violations = by_start(app->model());
    ASSERT_FALSE(violations.empty()) << "the default variant of a core scenario fails";
    const ViolationRegion& first = *violations.front();
    // The teaching moment needs a before: no core scenario fails at its very start.
    ASSERT_GT(first.from_us, 0) << first.text;

    app->seek(0);
    frames(2);
    const DrawRecord& d = app->view().last_draw;
    EXPECT_TRUE(d.violations.empty());
    EXPECT_TRUE(d.markers.empty());
    EXPECT_LE(d.latest_from_us, app->playhead_us()) << "the future is drawn";
    ASSERT_FALSE(app->verdicts().empty());
    for (const App::Verdict& v : app->verdicts()) {
      EXPECT_FALSE(v.final) << v.check;
      EXPECT_EQ(v.state, App::Verdict::State::none_yet) << v.check << ": " << v.text;
      EXPECT_EQ(v.text, "no violation yet");
    }

    // Just before the moment: still nothing; at it: drawn on its lanes and reported with it.
    app->seek(first.from_us - 1);
    frames(2);
    EXPECT_TRUE(d.markers.empty());
    EXPECT_EQ(verdict_of(*app, first.check)->state, App::Verdict::State::none_yet);
    const size_t first_index = size_t(&first - app->model().violations().data());
    app->jump_to_violation(first_index);
    frames(2);
    ASSERT_FALSE(d.violations.empty());
    std::set<std::string> lanes_marked;
    for (const DrawRecord::Marker& m : d.markers) {
      EXPECT_LE(m.from_us, app->playhead_us());
      EXPECT_FALSE(m.future);
      if (m.event == first.event) lanes_marked.insert(m.lane);
    }
    // Its actors' lanes (the first one is scrolled into view when there are many), and the
    // first server's (the servers are always in view): one label for the servers' one store.
    ASSERT_FALSE(first.who.empty());
    for (const std::string& who : first.who)
      for (const DrawRecord::LaneRect& l : d.lanes)
        if (l.name == who && l.max.y > l.min.y) {
          EXPECT_TRUE(lanes_marked.count(who)) << who;
        }
    EXPECT_TRUE(lanes_marked.count(first.who.front())) << first.who.front();
    const std::vector<std::string>& servers = app->model().servers();
    ASSERT_FALSE(servers.empty());
    EXPECT_TRUE(lanes_marked.count(servers.front())) << servers.front();
    for (size_t k = 1; k < servers.size(); k++)
      EXPECT_FALSE(lanes_marked.count(servers[k])) << servers[k];
    const App::Verdict* v = verdict_of(*app, first.check);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->state, App::Verdict::State::violated);
    EXPECT_FALSE(v->final);
    EXPECT_NE(v->text.find(seconds_text(first.from_us)), std::string::npos) << v->text;
    EXPECT_NE(v->text.find(app->words_of(first_index, app->playhead_us()).sentence),
              std::string::npos)
        << v->text;

    // At the end, the full verdicts: the trace's own.
    app->seek(app->model().end_us());
    frames(2);
    ASSERT_EQ(app->verdicts().size(), app->checks().size());
    for (size_t i = 0; i < app->checks().size(); i++) {
      const App::CheckLine& c = app->checks()[i];
      const App::Verdict& f = app->verdicts()[i];
      EXPECT_TRUE(f.final);
      EXPECT_EQ(f.text, c.summary);
      EXPECT_EQ(f.state == App::Verdict::State::violated, c.judged && !c.ok) << c.name;
    }
  }
}

// Redlock's five masters: a violation's label on one server lane (the first), not on five;
// its actors' lanes keep theirs.
TEST_F(GuiApp, AViolationIsLabelledOnOneServerLaneOfMany) {
  open_and_run_to_end("redlock-clock-jump");
  const std::vector<std::string>& servers = app->model().servers();
  ASSERT_EQ(servers.size(), 5u);
  const auto violations = by_start(app->model());
  ASSERT_FALSE(violations.empty()) << "the default variant has two holders";
  const ViolationRegion& first = *violations.front();
  app->jump_to_violation(size_t(&first - app->model().violations().data()));
  frames(2);
  std::map<std::string, int> marked;
  for (const DrawRecord::Marker& m : app->view().last_draw.markers)
    if (m.event == first.event) marked[m.lane]++;
  EXPECT_EQ(marked[servers.front()], 1) << servers.front();
  for (size_t k = 1; k < servers.size(); k++) EXPECT_EQ(marked[servers[k]], 0) << servers[k];
  ASSERT_FALSE(first.who.empty());
  EXPECT_EQ(marked[first.who.front()], 1) << first.who.front();
}

// A violation's text names its end ("... from 10.0 s to 12.0 s"): while it is still going, the
// verdict, the label and the tooltip say only what has happened.
TEST_F(GuiApp, AViolationStillGoingDoesNotTellItsEnd) {
  open_and_run_to_end("ttl-double-holder");
  const ViolationRegion& first = *by_start(app->model()).front();  // A and B, 10.08 .. 12.0 s
  ASSERT_GT(first.to_us, first.from_us + 1);
  ASSERT_NE(first.text.find(" to "), std::string::npos) << first.text;

  app->seek((first.from_us + first.to_us) / 2);
  frames(2);
  const App::Verdict* v = verdict_of(*app, first.check);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->state, App::Verdict::State::violated);
  EXPECT_EQ(v->text.find(first.text), std::string::npos) << v->text;
  EXPECT_NE(v->text.find("not over yet"), std::string::npos) << v->text;
  EXPECT_NE(v->text.find("both hold lock:job:42"), std::string::npos) << v->text;
  for (const std::string& who : first.who) EXPECT_NE(v->text.find(who), std::string::npos);
  const DrawRecord& d = app->view().last_draw;
  ASSERT_FALSE(d.markers.empty());
  for (const DrawRecord::Marker& m : d.markers)
    if (m.event == first.event) {
      EXPECT_EQ(m.label.find(" to "), std::string::npos) << m.label;
    }

  // Once it is over, its own words.
  app->seek(first.to_us);
  frames(2);
  EXPECT_NE(verdict_of(*app, first.check)->text.find(first.text), std::string::npos);
  // Faint or revealed, the future is on screen anyway: the full words.
  EXPECT_EQ(app->words_of(size_t(&first - app->model().violations().data()), kTimeNeverUs).sentence,
            first.text);
}

// forged-fence: A freezes at 1 s for 15 s in the middle of its work. The pause is drawn over
// A's rows, so the work bar visibly stops under it, and it ends where the pause ends.
TEST_F(GuiApp, APauseIsDrawnOverTheWorkItInterrupts) {
  open_and_run_to_end("forged-fence");
  app->seek(17'500'000);
  frames(2);
  const DrawRecord& d = app->view().last_draw;
  const DrawRecord::Pause* pause = nullptr;
  for (const DrawRecord::Pause& p : d.pauses)
    if (p.lane == "A") pause = &p;
  ASSERT_NE(pause, nullptr) << "no pause drawn over A's lane";
  EXPECT_EQ(pause->from_us, 1'000'000);
  const TimelineView& v = app->view();
  EXPECT_NEAR(v.t_of(pause->min.x), 1'000'000, 100'000);
  EXPECT_NEAR(v.t_of(pause->max.x), 16'000'000, 100'000);
  // It covers A's rows (the work row among them), not only a band behind them.
  bool over_work_row = false;
  for (const DrawRecord::LaneRect& r : d.lanes)
    if (r.name == "A") over_work_row = pause->min.y <= r.min.y + 1 && pause->max.y >= r.max.y - 1;
  EXPECT_TRUE(over_work_row);
  // Before it begins, none.
  app->seek(500'000);
  frames(2);
  for (const DrawRecord::Pause& p : d.pauses) EXPECT_NE(p.lane, "A");
}

// Readable from the back row: Ctrl + makes everything larger (type, paddings, the timeline's
// marks and name column), Ctrl - smaller, Ctrl 0 normal; bounded.
TEST_F(GuiApp, CtrlPlusMinusAndZeroScaleTheWholeUi) {
  open_and_run_to_end("ttl-double-holder");
  frames(2);
  const float font0 = ImGui::GetFontSize();
  const float mark0 = app->view().scale;
  const float pad0 = ImGui::GetStyle().FramePadding.y;
  for (int i = 0; i < 3; i++) press(Key::zoom_in);
  frames(1);
  EXPECT_FLOAT_EQ(app->ui_scale(), 1.3f);
  // The type is rasterised at the new size (sharp), not stretched by FontGlobalScale.
  EXPECT_FLOAT_EQ(ImGui::GetIO().FontGlobalScale, 1.0f);
  EXPECT_FLOAT_EQ(host->fonts_scale(), 1.3f);
  EXPECT_NEAR(ImGui::GetFontSize(), std::round(font0 * 1.3f), 0.01f);
  EXPECT_NEAR(app->view().scale, mark0 * 1.3f, 0.01f);
  EXPECT_FLOAT_EQ(ImGui::GetStyle().FramePadding.y, std::floor(pad0 * 1.3f));  // ImGui rounds
  EXPECT_GT(app->view().label_width_px, 110 * mark0);
  press(Key::zoom_out);
  EXPECT_FLOAT_EQ(app->ui_scale(), 1.2f);
  press(Key::zoom_reset);
  frames(1);
  EXPECT_FLOAT_EQ(app->ui_scale(), 1.0f);
  EXPECT_NEAR(ImGui::GetFontSize(), font0, 0.01f);
  EXPECT_NEAR(ImGui::GetStyle().FramePadding.y, pad0, 0.01f);
  // Bounded: past the largest, a press changes nothing (each scale rasterises the type anew,
  // so the bounds are reached directly rather than by forty presses).
  app->set_ui_scale(kUiScaleMax + 1);
  EXPECT_FLOAT_EQ(app->ui_scale(), kUiScaleMax);
  press(Key::zoom_in);
  EXPECT_FLOAT_EQ(app->ui_scale(), kUiScaleMax);
  EXPECT_FLOAT_EQ(host->fonts_scale(), kUiScaleMax);
  app->set_ui_scale(kUiScaleMin - 1);
  press(Key::zoom_out);
  EXPECT_FLOAT_EQ(app->ui_scale(), kUiScaleMin);
  press(Key::zoom_reset);
}

// pool-exhaustion with server=slow: DEBUG SLEEP 5 at 2 s keeps the single-threaded server busy
// for 5 s; the band covers every lane (the waiting clients queue behind it), from its start,
// as far as the playhead. Blocked BLPOPs are not the server being busy: none in the default.
TEST_F(GuiApp, ALongCommandIsABandTheClientsQueueBehind) {
  ASSERT_TRUE(app->open_scenario("pool-exhaustion")) << app->error();
  app->variant()["server"] = "slow";
  ASSERT_TRUE(app->run(false)) << app->error();
  frames(3);
  ASSERT_EQ(app->model().busy().size(), 1u);
  const TimelineModel::Busy& busy = app->model().busy().front();
  EXPECT_NEAR(busy.from_us, 2'000'000, 50'000);
  EXPECT_NEAR(busy.to_us - busy.from_us, 5'000'000, 50'000);
  EXPECT_EQ(app->model().lanes()[size_t(busy.lane)].kind, LaneKind::server);

  app->seek(1'000'000);
  frames(2);
  const DrawRecord& d = app->view().last_draw;
  EXPECT_TRUE(d.busy.empty());
  app->seek(5'500'000);
  frames(2);
  ASSERT_EQ(d.busy.size(), 1u);
  float lanes_top = 1e9f, lanes_bottom = -1e9f;
  for (const DrawRecord::LaneRect& r : d.lanes) {
    lanes_top = std::min(lanes_top, r.min.y);
    lanes_bottom = std::max(lanes_bottom, r.max.y);
  }
  EXPECT_LE(d.busy[0].min.y, lanes_top + 1);
  EXPECT_GE(d.busy[0].max.y, lanes_bottom - 1);
  bool in_legend = false;
  for (const auto& entry : d.legend) in_legend = in_legend || entry.name == "server busy";
  EXPECT_TRUE(in_legend);

  app->variant()["server"] = "fast";
  ASSERT_TRUE(app->run(false)) << app->error();
  frames(2);
  EXPECT_TRUE(app->model().busy().empty());
}

TEST_F(GuiApp, TheFutureIsHiddenShownFaintOrRevealed) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(11'000'000);  // A and B overlap since 10.08 s; B and C from 12.01 s
  frames(2);
  const DrawRecord& d = app->view().last_draw;
  EXPECT_LE(d.latest_from_us, 11'000'000);
  for (auto& r : d.violations) EXPECT_LE(app->view().t_of(r.min.x), 11'000'000 + 100'000);
  const size_t shown = d.violations.size();
  EXPECT_EQ(shown, 1u);

  app->set_future_faint(true);
  frames(2);
  EXPECT_GT(d.latest_from_us, 11'000'000);
  size_t future = 0;
  for (auto& r : d.violations) future += r.future ? 1 : 0;
  EXPECT_EQ(future, app->model().violations().size() - shown);
  EXPECT_FALSE(verdict_of(*app, "mutual_exclusion")->final);  // faint is not revealed

  app->set_future_faint(false);
  press(Key::v);
  EXPECT_TRUE(app->reveal());
  EXPECT_EQ(d.violations.size(), app->model().violations().size());
  for (auto& r : d.violations) EXPECT_FALSE(r.future);
  EXPECT_TRUE(verdict_of(*app, "mutual_exclusion")->final);
  press(Key::v);
  EXPECT_FALSE(app->reveal());
  EXPECT_EQ(d.violations.size(), shown);
}

TEST_F(GuiApp, ClickingAVerdictAndEachOfItsMoreMovesThePlayheadToTheViolation) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(13'000'000);
  frames(3);
  const App::Verdict* v = verdict_of(*app, "mutual_exclusion");
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->violations.size(), 2u);  // A and B from 10.08 s, B and C from 12.01 s
  const ViolationRegion second = app->model().violations()[v->violations[1]];
  const ViolationRegion first = app->model().violations()[v->violations[0]];
  WidgetRect more = app->widget("verdict:mutual_exclusion:1");
  ASSERT_TRUE(more.valid());
  click(more.center());
  EXPECT_EQ(app->playhead_us(), second.from_us);
  EXPECT_EQ(app->view().selected_event, second.event);
  EXPECT_FALSE(app->playing());
  WidgetRect line = app->widget("verdict:mutual_exclusion");
  ASSERT_TRUE(line.valid());
  click(line.center());
  EXPECT_EQ(app->playhead_us(), first.from_us);
  EXPECT_EQ(app->view().selected_event, first.event);
  // The selected violation's marker is where the playhead is, and clicking a marker on the
  // timeline selects its violation too.
  const DrawRecord& d = app->view().last_draw;
  const DrawRecord::Marker* on_a = nullptr;
  for (auto& m : d.markers)
    if (m.lane == "A" && m.event == first.event && !m.label.empty()) on_a = &m;
  ASSERT_NE(on_a, nullptr);
  // It begins at the moment, just past a mark that may sit there.
  EXPECT_GE(on_a->min.x, app->view().x_of(first.from_us));
  EXPECT_LE(on_a->min.x, app->view().x_of(first.from_us) + 12);
  app->view().selected_event = -1;
  click({(on_a->min.x + on_a->max.x) / 2, (on_a->min.y + on_a->max.y) / 2});
  EXPECT_EQ(app->view().selected_event, first.event);
  // The inspector names the span, not the time the verdict was written.
}

TEST_F(GuiApp, RightStepsThroughTheNarrationNotesInOrderAndLeftBack) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(0);
  frames(1);
  std::vector<TimeUs> times;
  for (const Note& n : app->model().notes())
    if (n.time_us > 0 && (times.empty() || times.back() != n.time_us)) times.push_back(n.time_us);
  ASSERT_GE(times.size(), 3u);
  for (size_t i = 0; i < times.size(); i++) {
    press(i % 2 == 0 ? Key::right : Key::page_down);
    EXPECT_EQ(app->playhead_us(), times[i]) << "note " << i;
    EXPECT_FALSE(app->playing());
  }
  press(Key::right);  // past the last note: stays
  EXPECT_EQ(app->playhead_us(), times.back());
  for (size_t i = times.size() - 1; i-- > 0;) {
    press(i % 2 == 0 ? Key::left : Key::page_up);
    EXPECT_EQ(app->playhead_us(), times[i]) << "note " << i;
  }
  // The buttons do the same.
  click(app->widget("next_note").center());
  EXPECT_EQ(app->playhead_us(), times[1]);
  click(app->widget("prev_note").center());
  EXPECT_EQ(app->playhead_us(), times[0]);
}

TEST_F(GuiApp, NStepsThroughTheViolationsAndEThroughTheSelectedActorsEvents) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(0);
  frames(1);
  const auto violations = by_start(app->model());
  for (const ViolationRegion* v : violations) {
    press(Key::n);
    EXPECT_EQ(app->playhead_us(), v->from_us) << v->text;
    EXPECT_EQ(app->view().selected_event, v->event) << v->text;
  }
  press(Key::n, true);  // Shift+N: back one
  EXPECT_EQ(app->playhead_us(), violations[violations.size() - 2]->from_us);

  // Select A's work, then E walks A's own events forward and Shift+E back.
  const TraceEvent* work = event_of(app->trace(), "work", "A");
  ASSERT_NE(work, nullptr);
  const int64_t work_index = work - app->trace().events().data();
  app->view().selected_event = work_index;
  app->seek(work->time_us);
  frames(1);
  press(Key::e);
  ASSERT_GT(app->view().selected_event, work_index);
  const TraceEvent& next = app->trace().events()[size_t(app->view().selected_event)];
  EXPECT_EQ(next.actor, "A");
  EXPECT_EQ(app->playhead_us(), next.time_us);
  for (int64_t i = work_index + 1; i < app->view().selected_event; i++)
    EXPECT_NE(app->trace().events()[size_t(i)].actor, "A");
  press(Key::e, true);
  EXPECT_EQ(app->view().selected_event, work_index);
}

TEST_F(GuiApp, PresenterModeAndItsKeys) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(0);
  frames(1);
  ASSERT_TRUE(app->widget("library").valid());
  press(Key::p);
  ASSERT_TRUE(app->presenter());
  frames(1);
  // The timeline takes the window; the side panels are gone; the type is large.
  EXPECT_FALSE(app->widget("library").valid());
  EXPECT_FALSE(app->widget("inspector").valid());
  EXPECT_FALSE(app->widget("narration").valid());
  WidgetRect timeline = app->widget("timeline");
  ASSERT_TRUE(timeline.valid());
  EXPECT_GT(timeline.max.x - timeline.min.x, 0.95f * host->framebuffer_width());
  EXPECT_GT(timeline.max.y - timeline.min.y, 0.5f * host->framebuffer_height());
  EXPECT_GE(app->view().scale, 1.8f);
  EXPECT_TRUE(app->widget("caption").valid());
  EXPECT_TRUE(app->widget("verdicts").valid());

  // Space plays and pauses.
  press(Key::space);
  EXPECT_TRUE(app->playing());
  press(Key::space);
  EXPECT_FALSE(app->playing());
  // Up and Down change the speed in steps.
  const float speed = app->speed();
  press(Key::up);
  EXPECT_GT(app->speed(), speed);
  press(Key::down);
  EXPECT_FLOAT_EQ(app->speed(), speed);
  // Right: the next note, shown as the caption; Left: back.
  app->seek(0);
  frames(1);
  press(Key::right);
  const Note* first_note = nullptr;
  for (const Note& n : app->model().notes())
    if (!first_note && n.time_us > 0) first_note = &n;
  ASSERT_NE(first_note, nullptr);
  EXPECT_EQ(app->playhead_us(), first_note->time_us);
  EXPECT_NE(app->caption().find(first_note->text), std::string::npos) << app->caption();
  press(Key::page_down);
  EXPECT_GT(app->playhead_us(), first_note->time_us);
  press(Key::page_up);
  EXPECT_EQ(app->playhead_us(), first_note->time_us);
  // S: playing stops at each note it reaches; S again plays through.
  app->seek(0);
  press(Key::s);
  ASSERT_TRUE(app->stop_at_notes());
  press(Key::space);
  frames(20, {-1, -1}, false, 0.5f);  // 10 s of play: it stops at the first note
  EXPECT_FALSE(app->playing());
  EXPECT_EQ(app->playhead_us(), first_note->time_us);
  press(Key::space);
  frames(20, {-1, -1}, false, 0.5f);
  EXPECT_FALSE(app->playing());
  EXPECT_GT(app->playhead_us(), first_note->time_us);
  EXPECT_TRUE(std::any_of(app->model().notes().begin(), app->model().notes().end(),
                          [&](const Note& n) { return n.time_us == app->playhead_us(); }));
  press(Key::s);
  EXPECT_FALSE(app->stop_at_notes());
  // 1 toggles the first variant (release: del -> lua) and the run is redone in place.
  const scenario::Variant& release = app->scenario()->variants.at(0);
  ASSERT_EQ(release.name, "release");
  const std::string before = app->variant().at("release");
  const TimeUs at_us = app->playhead_us();
  press(Key::digit1);
  EXPECT_NE(app->variant().at("release"), before);
  EXPECT_EQ(app->trace().meta().at("variant.release"), app->variant().at("release"));
  EXPECT_EQ(app->playhead_us(), at_us);
  press(Key::digit1);
  EXPECT_EQ(app->variant().at("release"), before);
  // R restarts from 0, playing.
  app->seek(5'000'000);
  press(Key::r);
  EXPECT_TRUE(app->playing());
  EXPECT_LT(app->playhead_us(), 100'000);
  press(Key::space);
  // V reveals everything: the full verdicts.
  press(Key::v);
  EXPECT_TRUE(app->reveal());
  ASSERT_FALSE(app->verdicts().empty());
  EXPECT_TRUE(app->verdicts()[0].final);
  press(Key::v);
  EXPECT_FALSE(app->verdicts()[0].final);
  // H (or ?) opens the list of keys, and closes it.
  press(Key::h);
  EXPECT_TRUE(app->help_open());
  host->request_screenshot((out_dir() / "presenter-help.png").string());  // for a look
  frames(1);
  EXPECT_EQ(host->screenshot_error(), "");
  EXPECT_TRUE(app->widget("help").valid());
  press(Key::question, true);
  EXPECT_FALSE(app->help_open());
  frames(1);
  EXPECT_FALSE(app->widget("help").valid());
  // F5 leaves presenter mode (as P does), and the panels come back.
  press(Key::f5);
  EXPECT_FALSE(app->presenter());
  frames(1);
  EXPECT_TRUE(app->widget("library").valid());
  EXPECT_FLOAT_EQ(app->view().scale, 1.0f);
  press(Key::f5);
  EXPECT_TRUE(app->presenter());
  press(Key::escape);
  EXPECT_FALSE(app->presenter());
}

// The legend lists what is on screen (so far), with the shapes.
TEST_F(GuiApp, LegendListsOnlyWhatIsDrawn) {
  auto legend = [&] {
    std::set<std::string> names;
    for (auto& e : app->view().last_draw.legend) names.insert(e.name);
    return names;
  };
  open_and_run_to_end("ttl-double-holder");
  app->seek(1'000'000);
  frames(2);
  EXPECT_FALSE(legend().count("violation")) << "the legend tells of a violation to come";
  app->seek(app->model().end_us());
  frames(2);
  std::set<std::string> at_end = legend();
  EXPECT_TRUE(at_end.count("violation"));
  EXPECT_TRUE(at_end.count("lock held / key TTL"));
  EXPECT_FALSE(at_end.count("lost"));      // no pub/sub here
  EXPECT_FALSE(at_end.count("accepted"));  // no protected resource
  open_and_run_to_end("pubsub-reconnect-loss");
  EXPECT_TRUE(legend().count("lost"));
  EXPECT_TRUE(legend().count("message"));
  // Error, rejected, lost and violation: four colours.
  const TimelinePalette& p = app->view().palette;
  std::set<ImU32> colours = {p.error, p.reject, p.lost, p.violation_border};
  EXPECT_EQ(colours.size(), 4u);
}

TEST_F(GuiApp, KeysAreNotCommandsWhileTypingInAField) {
  open_and_run_to_end("ttl-double-holder");
  app->seek(0);
  WidgetRect seed = app->widget("seed");
  ASSERT_TRUE(seed.valid());
  click(seed.center());  // the seed field takes the keyboard
  press(Key::right);
  press(Key::v);
  press(Key::p);
  EXPECT_EQ(app->playhead_us(), 0);
  EXPECT_FALSE(app->reveal());
  EXPECT_FALSE(app->presenter());
}

// ---- Every word in the chosen language ----

// The words a Russian or Czech screen may hold in Latin letters: the run's identifiers
// (actors, servers, keys, locks, channels, commands), the scenario's id, and whatever the
// scenario's own texts in that language use (its authors' words, e.g. "watchdog").
std::set<std::string> allowed_words(const App& app, const std::string& lang) {
  std::set<std::string> out;
  auto add = [&](std::string_view text) {
    for (std::string& w : test_words::ascii_words(text)) out.insert(w);
  };
  for (const TraceEvent& e : app.trace().events()) {
    add(e.actor);
    // Names from the scenario file and the server's own words: a key's type is TYPE's reply
    // ("string"), a record is the name a step gives its success ("served").
    for (F f : {F::lock, F::key, F::channel, F::resource, F::server, F::group, F::cmd, F::message,
                F::value, F::reply, F::error, F::type, F::record})
      if (const std::string* v = e.str(f)) add(*v);
    if (const auto* argv = e.list(F::argv))
      for (const std::string& a : *argv) add(a);
    if (e.kind == "narration" || e.kind == "note") add(e.text);
  }
  if (const scenario::Scenario* sc = app.scenario()) {
    add(sc->id);
    add(sc->title.get(lang));
    add(sc->story.get(lang));
    for (const auto& p : sc->params) add(p.label.get(lang));
    for (const auto& v : sc->variants) {
      add(v.label.get(lang));
      for (const auto& [value, label] : v.value_labels) add(label.get(lang));
    }
  }
  for (const ScenarioEntry& e : app.library()) add(e.title.get(lang));
  return out;
}

// Everything on screen in Russian and in Czech, in each core scenario at its moment of failure,
// at the end, in presenter mode with the keys' list open: no English word of the GUI's own
// (every text ImGui's widgets rendered, and every text drawn on the timeline).
TEST_F(GuiApp, RussianAndCzechScreensHaveNoEnglishLeft) {
  host->capture_text = true;
  for (const char* lang_code_text : {"ru", "cs"}) {
    const Lang lang = lang_of(lang_code_text);
    std::set<std::string> inspected;  // the event kinds the inspector has shown
    for (const char* id : kCoreScenarios) {
      SCOPED_TRACE(std::string(lang_code_text) + " " + id);
      app->set_lang(lang_code_text);
      open_and_run_to_end(id);
      app->view().record_texts = true;
      const std::set<std::string> allowed = allowed_words(*app, lang_code_text);
      auto screen_leaks = [&](const char* where) {
        frames(2);
        std::string all = host->captured_text();
        for (const std::string& t : app->view().last_draw.texts) all += "\n" + t;
        EXPECT_GT(all.size(), 100u) << where;  // the capture works
        EXPECT_EQ(test_words::english_leaks(all, lang, allowed), std::vector<std::string>{})
            << where << ":\n"
            << all;
      };
      screen_leaks("at the end");
      const auto violations = by_start(app->model());
      ASSERT_FALSE(violations.empty());
      app->jump_to_violation(size_t(violations.front() - app->model().violations().data()));
      screen_leaks("at the moment of failure");
      // The inspector on events with typed fields (a command, a reply, a key write, ...): their
      // kinds and field names come in the language too. Each kind once per language.
      for (size_t i = 0; i < app->trace().size(); i++) {
        const TraceEvent& e = app->trace().events()[i];
        if (e.kind == "violation" || e.fields.empty() || !inspected.insert(e.kind).second) continue;
        app->view().selected_event = int64_t(i);
        app->view().playhead_us = app->model().end_us();
        screen_leaks(("the inspector on " + e.kind).c_str());
      }
      app->view().selected_event = -1;
      app->set_presenter(true);
      press(Key::h);
      screen_leaks("presenter mode, the keys' list");
      press(Key::h);
      app->set_presenter(false);
    }
    EXPECT_GE(inspected.size(), 20u) << lang_code_text;
  }
  host->capture_text = false;
  // The detector sees an English screen as English.
  app->set_lang("en");
  open_and_run_to_end("ttl-double-holder");
  host->capture_text = true;
  frames(2);
  EXPECT_FALSE(test_words::english_leaks(host->captured_text(), Lang::ru, {}).empty())
      << host->captured_text();
  host->capture_text = false;
}

// Every check kind of the registry on a Russian and a Czech screen: for each kind, the first
// lesson (in file order) that uses it is opened and run to the end, and its screen (the checks
// panel with each check's title and summary) and its first violation's moment show no English
// word of the GUI's own. The kinds and lessons are found, not listed: a kind added tomorrow is
// opened too.
TEST_F(GuiApp, EveryCheckKindReadsWithoutEnglishInRussianAndCzech) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(REDLAB_SOURCE_DIR "/scenarios"))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::map<std::string, std::string> lesson_of;  // kind -> the first lesson using it
  for (const fs::path& file : files)
    for (const scenario::CheckDef& c : scenario::load_scenario_file(file.string()).checks)
      lesson_of.try_emplace(c.check, file.stem().string());
  std::set<std::string> lessons;
  for (const scenario::CheckKind* kind : scenario::check_kinds()) {
    auto it = lesson_of.find(kind->name);
    EXPECT_NE(it, lesson_of.end()) << "no lesson uses " << kind->name;
    if (it != lesson_of.end()) lessons.insert(it->second);
  }
  host->capture_text = true;
  for (const char* lang_code_text : {"ru", "cs"}) {
    const Lang lang = lang_of(lang_code_text);
    for (const std::string& id : lessons) {
      SCOPED_TRACE(std::string(lang_code_text) + " " + id);
      app->set_lang(lang_code_text);
      open_and_run_to_end(id);
      app->view().record_texts = true;
      const std::set<std::string> allowed = allowed_words(*app, lang_code_text);
      auto screen_leaks = [&](const char* where) {
        frames(2);
        std::string all = host->captured_text();
        for (const std::string& t : app->view().last_draw.texts) all += "\n" + t;
        EXPECT_GT(all.size(), 100u) << where;
        EXPECT_EQ(test_words::english_leaks(all, lang, allowed), std::vector<std::string>{})
            << where << ":\n"
            << all;
      };
      screen_leaks("at the end");
      const auto violations = by_start(app->model());
      if (violations.empty()) continue;
      app->jump_to_violation(size_t(violations.front() - app->model().violations().data()));
      screen_leaks("at the moment of failure");
    }
  }
  host->capture_text = false;
  EXPECT_GE(lessons.size(), 10u);
}

// ---- The exercise panel ----

const fs::path kExercises = REDLAB_SOURCE_DIR "/tests/exercises";

// A fresh scratch directory per test (progress files).
fs::path scratch(const std::string& name) {
  fs::path dir = out_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The check a wrong answer names on its "-- fails: CHECK" line.
std::string fails_line(const std::string& script) {
  std::smatch m;
  static const std::regex re("-- fails: ([a-z_]+)");
  return std::regex_search(script, m, re) ? m[1].str() : "";
}

TEST_F(GuiApp, ExerciseHintsAreRevealedOneAtATime) {
  open_panel("lost-update");
  const scenario::Exercise& ex = *app->scenario()->exercise;
  ASSERT_EQ(ex.hints.size(), 3u);
  EXPECT_TRUE(app->widget("exercise_task").valid());
  EXPECT_EQ(app->hints_shown(), 0u);
  EXPECT_FALSE(app->widget("hint:1").valid());
  for (size_t n = 1; n <= ex.hints.size(); n++) {
    WidgetRect show = app->widget("show_hint");
    ASSERT_TRUE(show.valid()) << n;
    click(show.center());
    frames(1);
    EXPECT_EQ(app->hints_shown(), n);
    EXPECT_TRUE(app->widget("hint:" + std::to_string(n)).valid()) << n;
    EXPECT_FALSE(app->widget("hint:" + std::to_string(n + 1)).valid()) << n;
  }
  EXPECT_FALSE(app->widget("show_hint").valid());  // no more to show
  // The editor starts from the scenario's own script.
  EXPECT_EQ(app->exercise_script(), app->scenario()->script(ex.script)->source);
  // A settings exercise shows what it lets the student change, not an editor.
  open_panel("pool-exhaustion");
  const scenario::Exercise& settings = *app->scenario()->exercise;
  ASSERT_FALSE(settings.choose.empty());
  EXPECT_FALSE(app->widget("script_editor").valid());
  for (const std::string& name : settings.choose)
    EXPECT_TRUE(app->widget("ex_v:" + name).valid() || app->widget("ex_p:" + name).valid()) << name;
}

TEST_F(GuiApp, ExerciseLuaSyntaxErrorShowsItsLineAndIsNotGraded) {
  new_app((scratch("syntax") / "progress.json").string());
  open_panel("lost-update");
  type_into_editor("local left = 1\nif left > 0 then\n  return = 1\nend\nreturn 0\n");
  ASSERT_EQ(app->exercise_script(),
            "local left = 1\nif left > 0 then\n  return = 1\nend\nreturn 0\n");
  ASSERT_TRUE(app->exercise_script_error());
  EXPECT_EQ(app->exercise_script_error()->line, 3);
  EXPECT_NE(app->exercise_script_error()->message.find("near"), std::string::npos)
      << app->exercise_script_error()->message;
  EXPECT_TRUE(app->widget("script_error").valid());
  // The marked line is the third line of the editor.
  WidgetRect line = app->widget("script_error_line");
  WidgetRect editor = app->widget("script_editor");
  ASSERT_TRUE(line.valid());
  const float line_px = line.max.y - line.min.y;
  EXPECT_NEAR((line.min.y - editor.min.y) / line_px, 2.0, 0.5);
  // Check does nothing with a script that does not load.
  click(app->widget("check").center());
  frames(2);
  EXPECT_FALSE(app->checking());
  EXPECT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::none);
  EXPECT_FALSE(app->check_exercise());
  // Fixed, the mark goes.
  type_into_editor("return 0\n");
  EXPECT_FALSE(app->exercise_script_error());
  EXPECT_FALSE(app->widget("script_error_line").valid());
}

// Every wrong answer of the model lesson, typed into the editor, fails with the check it names
// (the words `redlab check` prints), and the failing seed opens at its violation.
TEST_F(GuiApp, ExerciseWrongAnswerTypedInFailsWithItsMessageAndOpensTheFailingSeed) {
  const fs::path progress = scratch("wrong") / "progress.json";
  new_app(progress.string());
  open_panel("lost-update");
  std::vector<fs::path> wrong;
  for (const auto& e : fs::directory_iterator(kExercises / "lost-update" / "wrong"))
    wrong.push_back(e.path());
  std::sort(wrong.begin(), wrong.end());
  ASSERT_GE(wrong.size(), 5u);
  for (const fs::path& file : wrong) {
    SCOPED_TRACE(file.filename().string());
    const std::string script = read_text(file);
    const std::string names = fails_line(script);
    ASSERT_FALSE(names.empty());
    type_into_editor(script);
    ASSERT_EQ(app->exercise_script(), script);
    ASSERT_FALSE(app->exercise_script_error());
    click_check_and_wait();
    const App::ExerciseVerdict& v = app->exercise_verdict();
    ASSERT_EQ(v.state, App::ExerciseVerdict::State::fail) << v.error;
    EXPECT_TRUE(app->widget("exercise_verdict").valid());
    EXPECT_TRUE(app->widget("open_seed").valid());
    bool named = false;
    ASSERT_EQ(v.words.size(), v.failed.size());
    for (size_t i = 0; i < v.failed.size(); i++) {
      named = named || v.failed[i].check == names;
      // In English the words are the grader's own (what `redlab check` prints).
      EXPECT_EQ(v.words[i][size_t(Lang::en)], v.failed[i].text());
      EXPECT_TRUE(app->widget("exercise_failure:" + std::to_string(i)).valid());
    }
    EXPECT_TRUE(named) << "the verdict does not name " << names;
    // The failing seed is what the timeline shows, with the student's script in it.
    EXPECT_EQ(app->trace().meta().at("seed"), std::to_string(v.failed_seed));
    EXPECT_EQ(app->scenario()->id, "lost-update");
    EXPECT_FALSE(app->playing());
    // The playhead at the first violation of the first failed check that should hold.
    const app::GradeFailure* first = nullptr;
    for (const app::GradeFailure& f : v.failed)
      if (!first && f.why == app::GradeFailure::Why::should_hold) first = &f;
    if (first) {
      const ViolationRegion* at = nullptr;
      for (size_t i : app->model().violations_by_start())
        if (!at && app->model().violations()[i].check == first->check)
          at = &app->model().violations()[i];
      ASSERT_NE(at, nullptr) << first->check;
      EXPECT_EQ(app->playhead_us(), at->from_us);
      EXPECT_EQ(app->view().selected_event, at->event);
    }
    // Moved away, "Open seed N" brings it back.
    app->seek(0);
    click(app->widget("open_seed").center());
    frames(1);
    if (first) {
      EXPECT_GT(app->playhead_us(), 0);
    }
  }
  // A failed attempt is recorded, not passed.
  EXPECT_FALSE(app->exercise_passed("lost-update"));
  std::string error;
  auto p = load_progress(progress.string(), &error);
  ASSERT_TRUE(p) << error;
  ASSERT_TRUE(p->count("lost-update"));
  EXPECT_FALSE(p->at("lost-update").passed);
  EXPECT_EQ(p->at("lost-update").answer, read_text(wrong.back()));
}

// The solution passes; the progress file under $XDG_CONFIG_HOME/redlab records the pass, when
// and the answer; the library marks the scenario; a later fail keeps the pass; reset clears it
// after a confirmation.
TEST_F(GuiApp, ExerciseSolutionPassesAndTheProgressFileRecordsIt) {
  const fs::path xdg = scratch("xdg");
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string kept = old_xdg ? old_xdg : "";
  ::setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
  new_app("");
  const fs::path progress = xdg / "redlab" / "progress.json";
  EXPECT_EQ(app->progress_path(), progress.string());
  open_panel("lost-update");
  const std::string solution = read_text(kExercises / "lost-update" / "solution.lua");
  type_into_editor(solution);
  click_check_and_wait();
  EXPECT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::pass)
      << app->exercise_verdict().error;
  EXPECT_EQ(app->exercise_verdict().seeds, app->scenario()->exercise->seeds);
  EXPECT_TRUE(app->widget("exercise_verdict").valid());
  EXPECT_TRUE(app->exercise_passed("lost-update"));
  ASSERT_TRUE(fs::exists(progress));
  auto json = nlohmann::json::parse(read_text(progress));
  EXPECT_EQ(json["format"], "redlab-progress");
  auto entry = json["exercises"]["lost-update"];
  EXPECT_EQ(entry["passed"], true);
  EXPECT_EQ(entry["answer"], solution);
  EXPECT_TRUE(std::regex_match(entry["when"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << entry["when"];
  // The library marks it, now and in the next session.
  EXPECT_TRUE(app->widget("passed:lost-update").valid());
  EXPECT_FALSE(app->widget("passed:forged-fence").valid());
  new_app("");
  EXPECT_TRUE(app->exercise_passed("lost-update"));
  frames(2);
  EXPECT_TRUE(app->widget("passed:lost-update").valid());
  // A wrong answer afterwards does not take the pass away.
  open_panel("lost-update");
  type_into_editor(read_text(kExercises / "lost-update" / "wrong" / "decrby-no-guard.lua"));
  click_check_and_wait();
  EXPECT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::fail);
  EXPECT_TRUE(app->exercise_passed("lost-update"));
  EXPECT_EQ(nlohmann::json::parse(read_text(progress))["exercises"]["lost-update"]["answer"],
            solution);
  // Reset asks first; "keep" keeps, "forget" forgets (and writes the file).
  click(app->widget("reset_progress").center());
  frames(1);
  ASSERT_TRUE(app->widget("reset_no").valid());
  click(app->widget("reset_no").center());
  frames(1);
  EXPECT_TRUE(app->exercise_passed("lost-update"));
  click(app->widget("reset_progress").center());
  frames(1);
  click(app->widget("reset_yes").center());
  frames(2);
  EXPECT_FALSE(app->exercise_passed("lost-update"));
  EXPECT_FALSE(app->widget("passed:lost-update").valid());
  EXPECT_TRUE(nlohmann::json::parse(read_text(progress))["exercises"].empty());
  if (old_xdg)
    ::setenv("XDG_CONFIG_HOME", kept.c_str(), 1);
  else
    ::unsetenv("XDG_CONFIG_HOME");
}

// While a check runs: its progress bar and Cancel; a cancelled check records nothing.
TEST_F(GuiApp, ExerciseCheckShowsItsProgressAndCancels) {
  const fs::path progress = scratch("cancel") / "progress.json";
  new_app(progress.string());
  open_panel("lost-update");
  ASSERT_TRUE(app->check_exercise());
  EXPECT_TRUE(app->checking());
  frames(1);
  if (app->checking()) {  // a fast machine may have graded every seed within the frame
    EXPECT_TRUE(app->widget("check_progress").valid());
    EXPECT_FALSE(app->widget("check").valid());
    auto [seed, seeds] = app->check_progress();
    EXPECT_EQ(seeds, app->scenario()->exercise->seeds);
    EXPECT_GE(seed, 1);
  }
  const bool still_going = app->checking();
  app->cancel_check();
  frames(2);
  EXPECT_FALSE(app->checking());
  if (!still_going) GTEST_SKIP() << "every seed was graded before Cancel could be pressed";
  EXPECT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::cancelled);
  EXPECT_TRUE(app->widget("check").valid());
  EXPECT_FALSE(app->exercise_passed("lost-update"));
  EXPECT_FALSE(fs::exists(progress));
}

// A progress file that cannot be read is reported and never overwritten behind the student's
// back; a settings exercise's answer (pool-exhaustion's solution) passes and is not saved there.
TEST_F(GuiApp, ExerciseCorruptProgressFileIsReportedAndNotOverwritten) {
  const fs::path progress = scratch("corrupt") / "progress.json";
  write_text(progress, "{ this is not json");
  new_app(progress.string());
  EXPECT_FALSE(app->progress_error().empty());
  EXPECT_NE(app->error().find(progress.string()), std::string::npos) << app->error();
  open_panel("pool-exhaustion");
  // pool-exhaustion's solution: --variant blocking=dedicated-client.
  app->variant()["blocking"] = "dedicated-client";
  click_check_and_wait();
  EXPECT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::pass)
      << app->exercise_verdict().error;
  EXPECT_TRUE(app->exercise_passed("pool-exhaustion"));  // for this session
  EXPECT_EQ(read_text(progress), "{ this is not json");
  EXPECT_FALSE(app->error().empty());
  EXPECT_TRUE(app->progress().at("pool-exhaustion").answer.find("blocking=dedicated-client") !=
              std::string::npos);
}

// The panel in Russian and Czech, the hints out and a failed check's verdict on it: no English
// word of the GUI's own.
TEST_F(GuiApp, ExercisePanelInRussianAndCzechHasNoEnglishLeft) {
  new_app((scratch("langs") / "progress.json").string());
  host->capture_text = true;
  for (const char* code : {"ru", "cs"}) {
    SCOPED_TRACE(code);
    app->set_lang(code);
    open_panel("lost-update");
    const std::string wrong =
        read_text(kExercises / "lost-update" / "wrong" / "returns-decrby.lua");
    type_into_editor(wrong);
    ASSERT_EQ(app->exercise_script(), wrong);
    click_check_and_wait();
    for (int i = 0; i < 3; i++) app->show_hint();
    ASSERT_EQ(app->exercise_verdict().state, App::ExerciseVerdict::State::fail);
    app->view().record_texts = true;
    std::set<std::string> allowed = allowed_words(*app, code);
    const scenario::Exercise& ex = *app->scenario()->exercise;
    for (std::string_view text :
         {std::string_view(ex.task.get(code)), std::string_view(app->exercise_script())})
      for (std::string& w : test_words::ascii_words(text)) allowed.insert(w);
    for (const scenario::Text& hint : ex.hints)
      for (std::string& w : test_words::ascii_words(hint.get(code))) allowed.insert(w);
    frames(2);
    std::string all = host->captured_text();
    EXPECT_NE(all.find(tr(S::ex_check, lang_of(code))), std::string::npos) << all;
    EXPECT_NE(all.find(app->exercise_verdict().words[0][size_t(lang_of(code))]), std::string::npos)
        << all;
    EXPECT_EQ(test_words::english_leaks(all, lang_of(code), allowed), std::vector<std::string>{})
        << all;
    // The library's reset control too.
    click(app->widget("reset_progress").center());
    frames(2);
    EXPECT_EQ(test_words::english_leaks(host->captured_text(), lang_of(code), allowed),
              std::vector<std::string>{});
    click(app->widget("reset_no").center());
    frames(1);
  }
  host->capture_text = false;
}

// ---- Lanes: folded, scrolled, the server and resources always in view ----

TEST_F(GuiApp, ManyActorsFoldAndScrollWhileTheServerLaneStaysInView) {
  open_and_run_to_end("watch-retry-storm");  // 20 buyers
  frames(2);
  const DrawRecord& d = app->view().last_draw;
  auto lane_rect = [&](const std::string& name) -> const DrawRecord::LaneRect* {
    for (const auto& l : d.lanes)
      if (l.name == name) return &l;
    return nullptr;
  };
  // The buyers are one group; they do not all fit: each folds onto a row, then they scroll.
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].name, "buyer");
  EXPECT_EQ(d.groups[0].members, 20);
  EXPECT_GT(d.scroll_max_px, 0);
  for (int i = 1; i <= 20; i++) {
    const auto* l = lane_rect("buyer" + std::to_string(i));
    ASSERT_NE(l, nullptr);
    EXPECT_TRUE(l->folded);
    EXPECT_EQ(l->group, "buyer");
  }
  const auto* redis = lane_rect("redis");
  ASSERT_NE(redis, nullptr);
  EXPECT_TRUE(redis->pinned);
  const ImVec2 redis_min = redis->min, redis_max = redis->max;
  EXPECT_GT(redis_max.y - redis_min.y, 10);
  EXPECT_LE(redis_max.y, d.area_max.y);
  EXPECT_GE(redis_min.y, d.actors_max.y);
  // The wheel over the names scrolls the buyers; the server lane does not move.
  const float before = d.scroll_px;
  const ImVec2 names((d.names_min.x + d.names_max.x) / 2, (d.actors_min.y + d.actors_max.y) / 2);
  wheel(names, -3);
  frames(1);
  EXPECT_GT(d.scroll_px, before);
  // (It may move by a legend line: the legend lists what is drawn, and that changes.)
  EXPECT_NEAR(lane_rect("redis")->min.y, redis_min.y, 2 * ImGui::GetTextLineHeight());
  EXPECT_FLOAT_EQ(lane_rect("redis")->max.y - lane_rect("redis")->min.y, redis_max.y - redis_min.y);
  // A violation's actor out of view is scrolled to when the class goes there.
  const DrawRecord::LaneRect* last = lane_rect("buyer20");
  app->view().scroll_px = 0;
  frames(2);
  ASSERT_LE(last->max.y - last->min.y, 0.5f) << "buyer20 starts out of view";
  for (size_t i = 0; i < app->model().violations().size(); i++)
    if (app->model().violations()[i].who.front() == "buyer20") app->jump_to_violation(i);
  frames(2);
  last = lane_rect("buyer20");
  EXPECT_GT(last->max.y - last->min.y, 5);
  // A click on the group's header folds all the buyers onto one row (no scrolling left); a
  // second unfolds them.
  app->view().scroll_px = 0;
  frames(2);
  ASSERT_EQ(d.groups.size(), 1u);
  click({(d.groups[0].min.x + d.names_max.x) / 2, (d.groups[0].min.y + d.groups[0].max.y) / 2});
  frames(1);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_TRUE(d.groups[0].folded);
  EXPECT_EQ(d.scroll_max_px, 0);
  const float row_y = lane_rect("buyer1")->rows_y.at(0);
  for (int i = 2; i <= 20; i++)
    EXPECT_EQ(lane_rect("buyer" + std::to_string(i))->rows_y.at(0), row_y);
  click({(d.groups[0].min.x + d.names_max.x) / 2, (d.groups[0].min.y + d.groups[0].max.y) / 2});
  frames(1);
  EXPECT_FALSE(d.groups[0].folded);
  // A click on a lane's name unfolds it (its rows one under another), a second folds it again.
  app->view().scroll_px = 0;
  frames(1);
  const auto* b1 = lane_rect("buyer1");
  ASSERT_TRUE(b1->folded);
  ASSERT_GE(b1->rows_y.size(), 2u);
  click({(d.names_min.x + d.names_max.x) / 2, (b1->min.y + b1->max.y) / 2});
  frames(1);
  b1 = lane_rect("buyer1");
  EXPECT_FALSE(b1->folded);
  EXPECT_GT(b1->rows_y[1], b1->rows_y[0]);
  click({(d.names_min.x + d.names_max.x) / 2, (b1->min.y + b1->max.y) / 2});
  frames(1);
  EXPECT_TRUE(lane_rect("buyer1")->folded);
}

// Labels never overlap: every text drawn on a row (items, fences, marks, the violations'
// markers) keeps to its own span of the row, in each core scenario, at its moment of failure
// and with everything revealed.
TEST_F(GuiApp, LabelsOnTheLanesNeverOverlap) {
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    open_and_run_to_end(id);
    for (bool reveal : {false, true}) {
      app->set_reveal(reveal);
      if (!reveal) {
        const auto violations = by_start(app->model());
        app->jump_to_violation(size_t(violations.front() - app->model().violations().data()));
      }
      frames(2);
      const auto& labels = app->view().last_draw.labels;
      EXPECT_GE(labels.size(), 2u);
      for (size_t i = 0; i < labels.size(); i++)
        for (size_t j = i + 1; j < labels.size(); j++) {
          const auto& a = labels[i];
          const auto& b = labels[j];
          const bool same_row = a.min.y < b.max.y && b.min.y < a.max.y;
          const bool overlap = a.min.x < b.max.x - 0.5f && b.min.x < a.max.x - 0.5f;
          EXPECT_FALSE(same_row && overlap) << "\"" << a.text << "\" and \"" << b.text << "\"";
        }
    }
    app->set_reveal(false);
  }
}

// One time axis per scenario: every variant and every seed shows the same range (the run's
// duration), so two runs compare by eye.
TEST_F(GuiApp, OneTimeAxisPerScenarioForEveryVariantAndSeed) {
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(app->open_scenario(id));
    std::set<std::pair<TimeUs, TimeUs>> ranges;
    const scenario::Scenario& sc = *app->scenario();
    for (uint64_t seed : {1, 7}) {
      app->set_seed(seed);
      for (const scenario::Variant& v : sc.variants)
        for (const std::string& value : v.values) {
          app->variant()[v.name] = value;
          ASSERT_TRUE(app->run(false)) << app->error();
          ranges.insert({app->view().view_from_us, app->view().view_to_us});
        }
    }
    EXPECT_EQ(ranges.size(), 1u);
    EXPECT_GE(ranges.begin()->second, app->model().end_us());
  }
}

// forged-fence with a database that checks nothing: the stale write accepted at 17.0 s is not
// a plain green dot: its mark says stale, and the violation's label is on the database's lane.
TEST_F(GuiApp, AStaleWriteAcceptedIsLabelledOnTheResourceLane) {
  ASSERT_TRUE(app->open_scenario("forged-fence"));
  app->variant()["resource"] = "no-check";
  ASSERT_TRUE(app->run(false));
  app->seek(17'500'000);
  frames(2);
  const DrawRecord& d = app->view().last_draw;
  const DrawRecord::Marker* on_db = nullptr;
  for (const auto& m : d.markers)
    if (m.lane == "db") on_db = &m;
  ASSERT_NE(on_db, nullptr);
  EXPECT_EQ(on_db->label, "stale write accepted: fence 33 < 34");
  bool stale_in_legend = false;
  for (const auto& e : d.legend) stale_in_legend = stale_in_legend || e.name == "stale accepted";
  EXPECT_TRUE(stale_in_legend);
  // The label does not cover the writes it is about: it is above the lane's marks.
  const DrawRecord::LaneRect* db = nullptr;
  for (const auto& l : d.lanes)
    if (l.name == "db") db = &l;
  ASSERT_NE(db, nullptr);
  EXPECT_LE(on_db->max.y, db->rows_y.at(0) + 1);
  // In Russian too.
  app->set_lang("ru");
  app->rerun_in_place();
  frames(2);
  on_db = nullptr;
  for (const auto& m : d.markers)
    if (m.lane == "db") on_db = &m;
  ASSERT_NE(on_db, nullptr);
  EXPECT_EQ(on_db->label, "принята устаревшая запись: токен 33 < 34");
}

// At 1920x1080 in Czech the keyspace's three columns: the TTL's words ("zbývá 9,5 s") fit their
// column, which ends inside the panel.
TEST_F(GuiApp, TheKeyspacesTtlFitsItsColumnInEveryLanguage) {
  for (const char* lang : {"en", "ru", "cs"}) {
    SCOPED_TRACE(lang);
    app->set_lang(lang);
    ASSERT_TRUE(app->open_scenario("ttl-double-holder"));
    ASSERT_TRUE(app->run(false));
    app->seek(12'500'000);
    frames(3);
    const WidgetRect ttl = app->widget("ttl:redis:lock:job:42");
    ASSERT_TRUE(ttl.valid());
    const WidgetRect table = app->widget("keys_table:redis");
    ASSERT_TRUE(table.valid());
    EXPECT_LE(ttl.max.x, table.max.x);
    EXPECT_LE(table.max.x, app->widget("inspector").max.x);
  }
}

// A mark's words (a write's fence) end before the next mark on its row: zoomed out, B's two
// accepted writes 1.5 s apart leave "token 34" too little room, and it is elided, not covered
// by the second disc.
TEST_F(GuiApp, AMarksWordsStopBeforeTheNextMark) {
  ASSERT_TRUE(app->open_scenario("forged-fence"));
  app->variant()["resource"] = "no-check";
  ASSERT_TRUE(app->run(false));
  app->set_reveal(true);
  const DrawRecord& d = app->view().last_draw;
  std::vector<TimeUs> accepts;
  const int db = app->model().lane_index("db");
  ASSERT_GE(db, 0);
  for (const auto& row : app->model().lanes()[size_t(db)].rows)
    for (const Item& item : row.items)
      if (item.kind == ItemKind::accept) accepts.push_back(item.from_us);
  ASSERT_EQ(accepts.size(), 3u);
  for (TimeUs range_us : {22'000'000, 60'000'000, 120'000'000}) {
    SCOPED_TRACE(range_us);
    app->view().view_from_us = 0;
    app->view().view_to_us = range_us;
    frames(2);
    const DrawRecord::LaneRect* lane = nullptr;
    for (const auto& l : d.lanes)
      if (l.name == "db") lane = &l;
    ASSERT_NE(lane, nullptr);
    int fence_labels = 0;
    for (const auto& label : d.labels) {
      if (label.min.y < lane->min.y || label.max.y > lane->max.y) continue;
      if (label.text.find("stale") != std::string::npos) continue;  // the violation's, above
      fence_labels++;
      for (TimeUs t : accepts) {
        const float x = d.x0 + float(double(t - d.from_us) * d.px_per_us);
        EXPECT_FALSE(label.min.x < x && x < label.max.x)
            << "\"" << label.text << "\" covers the mark at " << t;
      }
    }
    EXPECT_GE(fence_labels, 1);
  }
}

// A recovered error is drawn as one: Script.Run's NOSCRIPT, zoomed in on, is in the legend as
// "recovered error", not "error reply".
TEST_F(GuiApp, ARecoveredErrorIsNotDrawnAsAFailure) {
  ASSERT_TRUE(app->open_path(REDLAB_SOURCE_DIR "/tests/gui/scenarios/server-events.json"))
      << app->error();
  ASSERT_TRUE(app->run(false));
  app->set_reveal(true);
  // The first EVALSHA and its EVAL, 0.9 .. 1.8 ms.
  app->view().view_from_us = 0;
  app->view().view_to_us = 3'000;
  frames(2);
  std::set<std::string> legend;
  for (const auto& e : app->view().last_draw.legend) legend.insert(e.name);
  EXPECT_TRUE(legend.count("recovered error"));
  EXPECT_FALSE(legend.count("error reply"));
}

// ---- What-if interventions ----

App::Verdict::State final_verdict(const App& app, const std::string& check) {
  for (const App::Verdict& v : app.verdicts())
    if (v.check == check) {
      EXPECT_TRUE(v.final) << check;
      return v.state;
    }
  ADD_FAILURE() << "no verdict for " << check;
  return App::Verdict::State::none_yet;
}

// The issue's lesson by mouse: ttl-double-holder with the watchdog on holds its lock; a
// right-click on A's lane at 3 s, "pause it" for 15 s (past the 10 s TTL: the watchdog is
// frozen with its process) and mutual exclusion is violated, the original drawn faintly;
// Ctrl+Z takes it back, Ctrl+Shift+Z and the buttons step again.
TEST_F(GuiApp, WhatIfPauseByMouseFlipsMutualExclusionAndUndoBringsItBack) {
  ASSERT_TRUE(app->open_scenario("ttl-double-holder")) << app->error();
  app->variant()["watchdog"] = "on";
  ASSERT_TRUE(app->run(false)) << app->error();
  app->set_reveal(true);
  frames(3);
  using St = App::Verdict::State;
  ASSERT_EQ(final_verdict(*app, "mutual_exclusion"), St::holds);
  EXPECT_EQ(app->original_trace().size(), 0u);  // nothing to compare with yet

  const DrawRecord& d = app->view().last_draw;
  const DrawRecord::LaneRect* lane_a = nullptr;
  for (const auto& l : d.lanes)
    if (l.name == "A") lane_a = &l;
  ASSERT_NE(lane_a, nullptr);
  const ImVec2 at(app->view().x_of(3 * kUsPerSecond), lane_a->min.y + lane_a->row_h * 1.5f);
  FrameInput right;
  right.mouse_pos = at;
  ASSERT_TRUE(host->frame(*app, &right));
  right.right_down = true;
  ASSERT_TRUE(host->frame(*app, &right));
  right.right_down = false;
  ASSERT_TRUE(host->frame(*app, &right));
  frames(1, at);
  ASSERT_TRUE(app->widget("whatif_menu").valid()) << "no context menu on A's lane";
  // A client's lane offers the client's faults only.
  EXPECT_TRUE(app->widget("whatif_kind:pause").valid());
  EXPECT_TRUE(app->widget("whatif_kind:partition").valid());
  EXPECT_FALSE(app->widget("whatif_kind:clock_jump").valid());
  click(app->widget("whatif_kind:pause").center());
  WidgetRect for_ms = app->widget("whatif_value:for");
  ASSERT_TRUE(for_ms.valid());
  click(for_ms.center());
  FrameInput select;
  select.mouse_pos = for_ms.center();
  select.select_all = true;
  ASSERT_TRUE(host->frame(*app, &select));
  FrameInput typing;
  typing.mouse_pos = for_ms.center();
  typing.text = "15000";
  ASSERT_TRUE(host->frame(*app, &typing));
  frames(1, for_ms.center());
  ASSERT_TRUE(app->widget("whatif_add").valid());
  click(app->widget("whatif_add").center());
  frames(2);

  ASSERT_EQ(app->interventions().size(), 1u) << app->error();
  const Intervention& iv = app->interventions().front();
  EXPECT_EQ(iv.kind, "pause");
  EXPECT_EQ(iv.target, "A");
  EXPECT_EQ(iv.at_ms, 3000);  // where the click was, rounded to the zoom's step
  ASSERT_NE(iv.value("for"), nullptr);
  EXPECT_EQ(*iv.value("for"), 15000);
  EXPECT_EQ(iv.line, "pause A at 3000 for 15000");
  EXPECT_EQ(app->trace().meta().at("intervention.1"), iv.line);
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), St::violated);
  // The original stays, faint, under the new future; its verdict is the old one.
  ASSERT_GT(app->original_trace().size(), 0u);
  EXPECT_TRUE(app->original_model().violations().empty());
  EXPECT_TRUE(app->widget("whatif_line:0").valid());
  EXPECT_TRUE(app->widget("whatif_marker:0").valid());

  press(Key::undo);
  EXPECT_TRUE(app->interventions().empty());
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), St::holds);
  EXPECT_EQ(app->trace().meta().count("intervention.1"), 0u);
  press(Key::redo, true);
  ASSERT_EQ(app->interventions().size(), 1u);
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), St::violated);
  // The buttons act when released, in the middle of a frame: the next one shows the result.
  click(app->widget("whatif_undo").center());
  frames(1);
  EXPECT_TRUE(app->interventions().empty());
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), St::holds);
  click(app->widget("whatif_redo").center());
  frames(1);
  EXPECT_EQ(app->interventions().size(), 1u);
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), St::violated);
}

// A marker dragged along the timeline moves its intervention in time (one undo step for the
// whole drag); a value edited in the list and a removal are steps too, undone one by one.
TEST_F(GuiApp, WhatIfMarkerDragsInTimeAndEveryEditIsOneUndoStep) {
  ASSERT_TRUE(app->open_scenario("ttl-double-holder")) << app->error();
  app->variant()["watchdog"] = "on";
  ASSERT_TRUE(app->run(false)) << app->error();
  app->set_reveal(true);
  std::string error;
  auto iv = parse_intervention(*app->scenario(), "pause A at 3000 for 15000", &error);
  ASSERT_TRUE(iv) << error;
  ASSERT_TRUE(app->add_intervention(*iv)) << app->error();
  frames(3);
  WidgetRect marker = app->widget("whatif_marker:0");
  ASSERT_TRUE(marker.valid());
  // Grabbed anywhere on its flag, the marker's line follows the mouse.
  const float from_x = app->view().x_of(3 * kUsPerSecond);
  const float to_x = app->view().x_of(14 * kUsPerSecond);
  ImVec2 p = marker.center();
  frames(1, p);
  frames(1, p, true);
  for (int step = 1; step <= 10; step++)
    frames(1, {p.x + (to_x - from_x) * float(step) / 10, p.y}, true);
  frames(1, {p.x + (to_x - from_x), p.y}, false);
  frames(2);
  ASSERT_EQ(app->interventions().size(), 1u);
  EXPECT_NEAR(double(app->interventions()[0].at_ms), 14000.0, 300.0);
  // Paused from 14 s, after A's release: nothing overlaps.
  EXPECT_EQ(final_verdict(*app, "mutual_exclusion"), App::Verdict::State::holds);
  Intervention longer = app->interventions()[0];
  *longer.value("for") = 20000;
  longer.at_ms = 3000;
  ASSERT_TRUE(app->replace_intervention(0, longer));
  EXPECT_EQ(app->interventions()[0].line, "pause A at 3000 for 20000");
  ASSERT_TRUE(app->remove_intervention(0));
  frames(1);
  EXPECT_TRUE(app->interventions().empty());
  ASSERT_TRUE(app->undo());
  EXPECT_EQ(app->interventions()[0].line, "pause A at 3000 for 20000");
  ASSERT_TRUE(app->undo());
  EXPECT_NEAR(double(app->interventions()[0].at_ms), 14000.0, 300.0);
  ASSERT_TRUE(app->undo());  // the drag, whole
  EXPECT_EQ(app->interventions()[0].line, "pause A at 3000 for 15000");
  ASSERT_TRUE(app->undo());
  EXPECT_TRUE(app->interventions().empty());
  EXPECT_FALSE(app->undo());
  EXPECT_TRUE(app->can_redo());
  // A line the engine refuses changes nothing.
  Intervention bad = *iv;
  bad.target = "nobody";
  EXPECT_FALSE(app->add_intervention(with_line(bad)));
  EXPECT_TRUE(app->interventions().empty());
  EXPECT_NE(app->error().find("nobody"), std::string::npos) << app->error();
}

// A branch saved from the GUI reopens exactly: `redlab run BRANCH.json` and the GUI's open
// path give the trace the GUI showed, byte for byte.
TEST_F(GuiApp, WhatIfBranchSavedReopensTheSameTraceByteForByte) {
  ASSERT_TRUE(app->open_scenario("ttl-double-holder")) << app->error();
  app->variant()["watchdog"] = "on";
  app->set_seed(3);
  app->params()["work_ms"] = 13000;
  ASSERT_TRUE(app->run(false)) << app->error();
  std::string error;
  for (const char* line : {"pause A at 3000 for 15000", "clock_jump redis at 20000 by 2000"}) {
    auto iv = parse_intervention(*app->scenario(), line, &error);
    ASSERT_TRUE(iv) << error;
    ASSERT_TRUE(app->add_intervention(*iv)) << app->error();
  }
  frames(2);
  const fs::path dir = out_dir();
  const fs::path branch = dir / "what-if.json", gui_trace = dir / "what-if-gui-trace.json",
                 cli_trace = dir / "what-if-cli-trace.json";
  fs::remove(cli_trace);
  ASSERT_TRUE(app->save_trace(gui_trace.string())) << app->error();
  // Through the panel: its path field and its button.
  WidgetRect path = app->widget("whatif_path");
  ASSERT_TRUE(path.valid());
  click(path.center());
  FrameInput select;
  select.mouse_pos = path.center();
  select.select_all = true;
  ASSERT_TRUE(host->frame(*app, &select));
  FrameInput typing;
  typing.mouse_pos = path.center();
  typing.text = branch.string();
  ASSERT_TRUE(host->frame(*app, &typing));
  frames(1, path.center());
  fs::remove(branch);
  click(app->widget("whatif_save").center());
  ASSERT_TRUE(fs::exists(branch)) << app->error();
  const nlohmann::json saved = nlohmann::json::parse(read_text(branch));
  EXPECT_EQ(saved["format"], "redlab-branch");
  EXPECT_EQ(saved["scenario"], "ttl-double-holder");
  EXPECT_EQ(saved["seed"], 3);
  EXPECT_EQ(saved["variant"]["watchdog"], "on");
  EXPECT_EQ(saved["params"]["work_ms"], 13000);
  EXPECT_EQ(saved["interventions"].size(), 2u);

  const std::string command = std::string("REDLAB_SCENARIOS=") + REDLAB_SOURCE_DIR + "/scenarios " +
                              REDLAB_BINARY + " run " + branch.string() + " --trace " +
                              cli_trace.string() + " > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(read_text(cli_trace), read_text(gui_trace));

  app = std::make_unique<App>([] {
    AppOptions o;
    o.persist = false;
    o.keep_progress = false;
    return o;
  }());
  ASSERT_TRUE(app->open_path(branch.string())) << app->error();
  frames(2);
  EXPECT_EQ(app->interventions().size(), 2u);
  EXPECT_GT(app->original_trace().size(), 0u);
  EXPECT_EQ(trace_to_json(app->trace()), read_text(gui_trace));
}

// The what-if panel and its context menu in Russian and Czech, with an intervention of each
// kind on the list: no English word of the GUI's own.
TEST_F(GuiApp, WhatIfPanelInRussianAndCzechHasNoEnglishLeft) {
  host->capture_text = true;
  for (const char* code : {"ru", "cs"}) {
    SCOPED_TRACE(code);
    app->set_lang(code);
    open_and_run_to_end("ttl-double-holder");
    std::string error;
    for (const char* line :
         {"pause A at 3000 for 15000", "crash B at 4000 restart_after 1000", "disconnect C at 5000",
          "latency C at 6000 by 100 for 500", "partition B on redis at 7000 for 200",
          "clock_jump redis at 8000 by 10", "stall redis at 9000 for 50",
          "restart redis at 24000"}) {
      auto iv = parse_intervention(*app->scenario(), line, &error);
      ASSERT_TRUE(iv) << error;
      ASSERT_TRUE(app->add_intervention(*iv)) << app->error();
    }
    app->view().record_texts = true;
    frames(2);
    const std::set<std::string> allowed = allowed_words(*app, code);
    std::string all = host->captured_text();
    for (const std::string& t : app->view().last_draw.texts) all += "\n" + t;
    EXPECT_NE(all.find(tr(S::wi_header, lang_of(code))), std::string::npos);
    EXPECT_EQ(test_words::english_leaks(all, lang_of(code), allowed), std::vector<std::string>{})
        << all;
  }
  host->capture_text = false;
}

// 1280x720, a projector's smallest: nothing cut off. The toolbar's controls are inside the
// window and do not overlap; the pool's numbers, the keyspace's TTL and the playhead's time are
// inside their panels.
TEST(GuiAppSmall, At1280x720NothingIsClipped) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  HostOptions options;
  options.width_px = 1280;
  options.height_px = 720;
  options.vsync = false;
  std::string error;
  auto host = Host::open(options, &error);
  ASSERT_TRUE(host) << error;
  for (const char* lang : {"en", "ru", "cs"}) {
    for (const char* id : {"pool-exhaustion", "ttl-double-holder", "forged-fence"}) {
      SCOPED_TRACE(std::string(lang) + " " + id);
      const std::string scenario_id = id;
      AppOptions app_options;
      app_options.persist = false;
      App app(app_options);
      app.set_lang(lang);
      ASSERT_TRUE(app.open_scenario(id));
      if (scenario_id == "forged-fence") app.variant()["resource"] = "no-check";
      ASSERT_TRUE(app.run(false));
      app.seek(scenario_id == "pool-exhaustion" ? 5'500'000
               : scenario_id == "forged-fence"  ? 17'500'000
                                                : 12'500'000);
      FrameInput still;
      host->capture_text = true;
      for (int i = 0; i < 4; i++) ASSERT_TRUE(host->frame(app, &still));
      host->capture_text = false;
      // Wrapped lines (the verdicts) never split a time: not after its decimal point or comma
      // ("17," / "004 s"), not between the number and its unit ("10,081" / "s:").
      const std::string text = host->captured_text();
      EXPECT_GT(text.size(), 200u);
      static const std::regex split_number(R"(\d[,.]\n\s*\d{1,3} (s|ms|с|мс)[ :,.)])");
      static const std::regex split_unit(R"(\d\n\s*(s|ms|с|мс)[ :,.)])");
      EXPECT_FALSE(std::regex_search(text, split_number)) << text;
      EXPECT_FALSE(std::regex_search(text, split_unit)) << text;
      // The keyspace's TTL words are inside the panel, in every language.
      if (scenario_id == "ttl-double-holder") {
        const WidgetRect ttl = app.widget("ttl:redis:lock:job:42");
        ASSERT_TRUE(ttl.valid());
        EXPECT_LE(ttl.max.x, app.widget("keys_table:redis").max.x);
        EXPECT_LE(app.widget("keys_table:redis").max.x, app.widget("inspector").max.x);
      }
      const float width = 1280, height = 720;
      std::vector<std::pair<std::string, WidgetRect>> bar;
      for (const char* w : {"run", "pause", "step", "restart", "prev_note", "next_note",
                            "next_violation", "next_actor_event", "reveal", "speed", "seed"})
        bar.push_back({w, app.widget(w)});
      for (const auto& [name, r] : bar) {
        ASSERT_TRUE(r.valid()) << name;
        EXPECT_GE(r.min.x, 0) << name;
        EXPECT_LE(r.max.x, width) << name;
        EXPECT_LE(r.max.y, height) << name;
      }
      for (size_t i = 0; i < bar.size(); i++)
        for (size_t j = i + 1; j < bar.size(); j++) {
          const WidgetRect& a = bar[i].second;
          const WidgetRect& b = bar[j].second;
          const bool overlap =
              a.min.x < b.max.x && b.min.x < a.max.x && a.min.y < b.max.y && b.min.y < a.max.y;
          EXPECT_FALSE(overlap) << bar[i].first << " and " << bar[j].first;
        }
      const WidgetRect inspector = app.widget("inspector");
      ASSERT_TRUE(inspector.valid());
      for (const char* host_name : {"app", "A", "B", "C"}) {
        const WidgetRect pool = app.widget(std::string("pool:") + host_name);
        if (!pool.valid()) continue;
        EXPECT_LE(pool.max.x, inspector.max.x) << host_name;
      }
      const WidgetRect timeline = app.widget("timeline");
      const WidgetRect playhead = app.widget("playhead_text");
      ASSERT_TRUE(playhead.valid());
      EXPECT_LE(playhead.max.x, timeline.max.x);
      EXPECT_GE(playhead.min.x, timeline.min.x);
    }
  }
}

// Settings need no window.
TEST(GuiSettings, RoundTripAndLastChoicesComeBack) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  fs::path path = out_dir() / "config" / "settings.txt";
  AppOptions options;
  options.persist = true;
  options.settings_path = path.string();
  {
    App app(options);
    ASSERT_TRUE(app.open_scenario("ttl-double-holder")) << app.error();
    app.set_lang("cs");
    app.set_seed(7);
    app.variant()["release"] = "lua";
    app.params()["ttl_ms"] = 5000;
    ASSERT_TRUE(app.run(false)) << app.error();
  }
  ASSERT_TRUE(fs::exists(path));
  App again(options);
  EXPECT_EQ(again.lang(), "cs");
  EXPECT_EQ(again.settings().seed, 7u);
  EXPECT_EQ(again.settings().scenario, "ttl-double-holder");
  ASSERT_TRUE(again.open_scenario("ttl-double-holder"));
  EXPECT_EQ(again.variant().at("release"), "lua");
  EXPECT_EQ(again.params().at("ttl_ms"), 5000);
  // Another scenario starts from its own defaults.
  ASSERT_TRUE(again.open_scenario("forged-fence"));
  EXPECT_EQ(again.params().at("ttl_ms"), again.scenario()->param("ttl_ms")->def);

  // A damaged file is read as far as it makes sense; nothing throws.
  std::ofstream(path) << "lang=xx\nseed=-4\nspeed=1000\nlayout.left=abc\nnonsense\n";
  Settings s;
  EXPECT_TRUE(load_settings(path.string(), &s));
  EXPECT_EQ(s.lang, "en");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_FLOAT_EQ(s.speed, 1.0f);
  EXPECT_FLOAT_EQ(s.left_fraction, Settings{}.left_fraction);

  // The UI scale is remembered, and a value out of its range is not taken.
  {
    App app(options);
    app.set_ui_scale(1.7f);
  }
  EXPECT_FLOAT_EQ(App(options).ui_scale(), 1.7f);
  std::ofstream(path) << "ui_scale=40\n";
  Settings big;
  EXPECT_TRUE(load_settings(path.string(), &big));
  EXPECT_FLOAT_EQ(big.ui_scale, 1.0f);
}

// gui_main owns its window, so these run without the fixture's.
TEST(GuiAppMain, ScreenshotFromTheCommandLine) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  fs::path png = out_dir() / "cli.png";
  // Both spellings of an option's value: "--size 1024x640" and "--at-ms=11000".
  int status = app::gui_main({"ttl-double-holder", "--screenshot", png.string(), "--size",
                              "1024x640", "--at-ms=11000", "--variant=release=lua"});
  ASSERT_EQ(status, 0);
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(data, nullptr);
  stbi_image_free(data);
  EXPECT_EQ(w, 1024);
  EXPECT_EQ(h, 640);
}

// The exercise panel from the command line: a wrong answer checked, then pictured; an answer
// that cannot be one (a script for a settings exercise, a script that does not load) is
// refused with exit 2 and no picture.
TEST(GuiAppMain, ExercisePanelScreenshotWithACheckedAnswer) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  const fs::path png = out_dir() / "exercise-cli.png";
  fs::remove(png);
  const std::string wrong =
      REDLAB_SOURCE_DIR "/tests/exercises/lost-update/wrong/guard-on-argv.lua";
  ASSERT_EQ(app::gui_main({"lost-update", "--screenshot", png.string(), "--size", "1024x640",
                           "--hints=2", "--answer", wrong}),
            0);
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(data, nullptr);
  stbi_image_free(data);
  EXPECT_EQ(w, 1024);
  const fs::path refused = out_dir() / "exercise-refused.png";
  fs::remove(refused);
  EXPECT_EQ(app::gui_main({"pool-exhaustion", "--screenshot", refused.string(), "--answer", wrong}),
            2);
  const fs::path bad = out_dir() / "bad.lua";
  write_text(bad, "if then\n");
  EXPECT_EQ(
      app::gui_main({"lost-update", "--screenshot", refused.string(), "--answer", bad.string()}),
      2);
  EXPECT_FALSE(fs::exists(refused));
}

TEST(GuiAppMain, PresenterScreenshotFromTheCommandLine) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  fs::path png = out_dir() / "presenter.png";
  int status = app::gui_main({"ttl-double-holder", "--presenter", "--screenshot", png.string(),
                              "--size", "1920x1080", "--at-ms", "12500"});
  ASSERT_EQ(status, 0);
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(data, nullptr);
  stbi_image_free(data);
  EXPECT_EQ(w, 1920);
  EXPECT_EQ(h, 1080);
  EXPECT_EQ(app::gui_main({"ttl-double-holder", "--presenter=yes", "--screenshot", png.string()}),
            2);
}

TEST(GuiAppMain, BadInputExitsTwoAndWritesNothing) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  fs::path png = out_dir() / "never.png";
  const std::vector<std::vector<std::string>> bad = {
      {"no-such-scenario", "--screenshot", png.string()},
      {"ttl-double-holder", "--screenshot", png.string(), "--variant", "release=nope"},
      {"ttl-double-holder", "--screenshot", png.string(), "--set", "ttl_ms=1"},
      {"ttl-double-holder", "--screenshot", png.string(), "--size", "12x"},
      {"ttl-double-holder", "--screenshot", png.string(), "--lang", "de"},
      {"ttl-double-holder", "--screenshot", png.string(), "--bogus"},
  };
  for (auto& args : bad) {
    testing::internal::CaptureStderr();
    int status = app::gui_main(args);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2) << args[args.size() - 1];
    EXPECT_EQ(err.rfind("redlab: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(png));
  }
  // A screenshot over its own input: refused, the input untouched (a trace, the same trace
  // spelled another way, a scenario file).
  fs::path trace = out_dir() / "input-trace.json";
  {
    scenario::RunResult r = scenario::run_scenario(
        scenario::load_scenario_file(REDLAB_SOURCE_DIR "/scenarios/forged-fence.json"), {});
    write_text(trace, trace_to_json(r.trace));
  }
  const std::string before = read_text(trace);
  fs::path scenario_copy = out_dir() / "input-scenario.json";
  fs::copy_file(REDLAB_SOURCE_DIR "/scenarios/forged-fence.json", scenario_copy,
                fs::copy_options::overwrite_existing);
  const std::string scenario_before = read_text(scenario_copy);
  const fs::path cwd = fs::current_path();
  fs::current_path(out_dir());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {trace.string(), "--screenshot", trace.string()},
           {trace.string(), "--screenshot=./input-trace.json"},
           {scenario_copy.string(), "--screenshot", scenario_copy.string()}}) {
    testing::internal::CaptureStderr();
    int status = app::gui_main(args);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2) << args.back();
    EXPECT_NE(err.find("is the"), std::string::npos) << err;
  }
  fs::current_path(cwd);
  EXPECT_EQ(read_text(trace), before);
  EXPECT_EQ(read_text(scenario_copy), scenario_before);
}

// `redlab gui BRANCH.json` opens the branch (its run with the interventions, the original
// faint under it) and pictures it; a bad branch file is one located line and exit 2.
TEST(GuiAppMain, BranchFileOpensAndPictures) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  const fs::path branch = out_dir() / "main-branch.json", png = out_dir() / "main-branch.png";
  write_text(branch,
             R"({"format": "redlab-branch", "version": 1, "scenario": "ttl-double-holder",)"
             R"( "variant": {"watchdog": "on"}, "interventions": ["pause A at 3000 for 15000"]})");
  fs::remove(png);
  EXPECT_EQ(app::gui_main({branch.string(), "--screenshot", png.string(), "--at-ms", "16000"}), 0);
  EXPECT_TRUE(fs::exists(png));
  const fs::path bad = out_dir() / "main-bad-branch.json", bad_png = out_dir() / "bad.png";
  write_text(bad, R"({"format": "redlab-branch", "version": 1, "scenario": 7})");
  fs::remove(bad_png);
  testing::internal::CaptureStderr();
  EXPECT_EQ(app::gui_main({bad.string(), "--screenshot", bad_png.string()}), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(bad.string() + ":1:"), std::string::npos) << err;
  EXPECT_NE(err.find("\"scenario\": expected a string"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(bad_png));
}

TEST(GuiAppMain, NoDisplayIsAClearErrorNotACrash) {
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  const char* display = std::getenv("DISPLAY");
  std::string saved = display ? display : "";
  ::unsetenv("DISPLAY");
  fs::path png = out_dir() / "no-display.png";
  testing::internal::CaptureStderr();
  int status = app::gui_main({"ttl-double-holder", "--screenshot", png.string()});
  std::string err = testing::internal::GetCapturedStderr();
  if (!saved.empty()) ::setenv("DISPLAY", saved.c_str(), 1);
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("display"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(png));
}

}  // namespace
}  // namespace redlab::gui
