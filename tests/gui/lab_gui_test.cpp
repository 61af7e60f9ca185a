// Issue 12's compare view and sweep plot under a real window (ctest runs the GuiApp* tests
// under xvfb-run): ttl-double-holder with the watchdog off against on shows mutual_exclusion's
// verdict flip and where the runs part, and a click on a difference moves the playhead there;
// a sweep started from the GUI gives the points `redlab sweep --json` gives, can be cancelled,
// and a click on a point opens that run; both views in Russian and Czech without English.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "app/gui/gui_app.h"
#include "sim/core/trace_diff.h"
#include "tests/gui/english_words.h"
#include "tests/gui/gui_fixture.h"

namespace redlab::gui {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The output of a command (stdout), and its exit status.
std::pair<int, std::string> command_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {-1, ""};
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class GuiAppLab : public GuiFixture {
 protected:
  // ttl-double-holder as it is (the watchdog off) against the watchdog on, from the button.
  void compare_watchdog_off_on() {
    open_and_run_to_end("ttl-double-holder");
    click_widget("compare");
    ASSERT_TRUE(app->compare_open());
    auto variant = app->variant();
    variant["watchdog"] = "on";
    ASSERT_TRUE(app->compare_with_run(variant, app->params(), 1)) << app->error();
    frames(3);
  }
  // A sweep asked for in the panel and started with its button, to its end.
  void sweep_in_gui(const std::string& param, int64_t from, int64_t to, int64_t steps,
                    int64_t seeds) {
    click_widget("sweep");
    ASSERT_TRUE(app->sweep_open());
    app::SweepRequest& rq = app->sweep_request();
    rq.param = param;
    rq.from = from;
    rq.to = to;
    rq.steps = steps;
    rq.seeds = seeds;
    frames(1);
    click_widget("sw_start");
    EXPECT_TRUE(app->sweeping() || app->sweep_result());
    wait_for_sweep();
    ASSERT_TRUE(app->sweep_result()) << app->sweep_error();
  }
  // Every text on screen: ImGui's widgets and what the views draw themselves.
  std::string screen_text() {
    app->view().record_texts = true;
    host->capture_text = true;
    frames(2);
    std::string all = host->captured_text();
    host->capture_text = false;
    for (const std::string& t : app->view().last_draw.texts) all += "\n" + t;
    app->view().record_texts = false;
    return all;
  }
  // A text the views drew by itself (screen_text() puts each on a line of its own).
  static bool drawn(const std::string& screen, const std::string& text) {
    const std::string line = "\n" + text;
    for (size_t at = screen.find(line); at != std::string::npos; at = screen.find(line, at + 1))
      if (at + line.size() == screen.size() || screen[at + line.size()] == '\n') return true;
    return false;
  }
  void wait_for_sweep() {
    for (int i = 0; i < 6000 && app->sweeping(); i++) {
      frames(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_FALSE(app->sweeping());
    frames(2);
  }
};

TEST_F(GuiAppLab, CompareWatchdogOffOnShowsTheVerdictFlipAndWhereTheRunsPart) {
  compare_watchdog_off_on();
  const TraceDiff& d = app->compare_diff();
  // The view's differences are trace_diff's own, for the two runs it shows.
  ASSERT_NE(app->compare_trace(false), nullptr);
  ASSERT_NE(app->compare_trace(true), nullptr);
  TraceDiff again = diff_traces(*app->compare_trace(false), *app->compare_trace(true),
                                {.tolerance_us = 50 * kUsPerMs});
  EXPECT_EQ(d.differences.size(), again.differences.size());
  // mutual_exclusion: violated with the watchdog off, held with it on.
  bool flip = false;
  for (const TraceDifference& x : d.differences)
    flip = flip || (x.kind == TraceDifference::Kind::verdict && x.check == "mutual_exclusion");
  EXPECT_TRUE(flip);
  host->capture_text = true;
  frames(2);
  const std::string screen = host->captured_text();
  host->capture_text = false;
  EXPECT_NE(screen.find("mutual_exclusion: in A violated"), std::string::npos) << screen;
  EXPECT_NE(screen.find("in B holds"), std::string::npos) << screen;
  EXPECT_TRUE(app->widget("verdict_flip:mutual_exclusion").valid());
  // The first divergence: said, and marked on both timelines.
  ASSERT_TRUE(d.first_divergence);
  EXPECT_NE(screen.find("The runs part at"), std::string::npos) << screen;
  EXPECT_TRUE(app->widget("first_divergence").valid());
  EXPECT_TRUE(app->widget("compare_a").valid());
  EXPECT_TRUE(app->widget("compare_b").valid());

  // A click on a difference in the list: the playhead goes to it, on both sides.
  size_t row = 0;
  for (size_t i = 0; i < d.differences.size(); i++)
    if (d.differences[i].kind != TraceDifference::Kind::verdict &&
        d.differences[i].at_us > d.first_divergence->at_us) {
      row = i;
      break;
    }
  ASSERT_GT(row, 0u);
  click_widget("difference:" + std::to_string(row));
  EXPECT_EQ(app->selected_difference(), int64_t(row));
  EXPECT_EQ(app->compare_playhead_us(), d.differences[row].at_us);
  // The first divergence's line: the playhead to where the runs part.
  click_widget("first_divergence");
  EXPECT_EQ(app->compare_playhead_us(), d.first_divergence->at_us);
  // The verdict's line: the playhead to the first violation of mutual_exclusion (in A).
  click_widget("verdict_flip:mutual_exclusion");
  TimeUs first = -1;
  for (const ViolationRegion& v : app->model().violations())
    if (v.check == "mutual_exclusion" && (first < 0 || v.from_us < first)) first = v.from_us;
  EXPECT_EQ(app->compare_playhead_us(), first);
  click_widget("cmp_close");
  EXPECT_FALSE(app->compare_open());
}

// `redlab gui --compare A.json B.json`: two trace files side by side, pictured.
TEST_F(GuiAppLab, CompareTwoTraceFilesFromTheCommandLine) {
  fs::path dir = fs::path(::testing::TempDir()) / "redlab-lab-gui-test";
  fs::create_directories(dir);
  const std::string bin = REDLAB_BINARY;
  command_output(bin + " run ttl-double-holder --trace " + (dir / "off.json").string());
  command_output(bin + " run ttl-double-holder --variant watchdog=on --trace " +
                 (dir / "on.json").string());
  ASSERT_TRUE(fs::exists(dir / "off.json") && fs::exists(dir / "on.json"));
  auto [status, out] = command_output(bin + " gui --compare " + (dir / "off.json").string() + " " +
                                      (dir / "on.json").string() + " --screenshot " +
                                      (dir / "compare.png").string() + " --size 1280x720 2>&1");
  EXPECT_EQ(status, 0) << out;
  EXPECT_GT(fs::file_size(dir / "compare.png"), 10'000u);
  // In the app: the same differences as `redlab diff` counts.
  ASSERT_TRUE(app->open_trace((dir / "off.json").string())) << app->error();
  ASSERT_TRUE(app->compare_files((dir / "off.json").string(), (dir / "on.json").string()))
      << app->error();
  frames(2);
  auto [diff_status, diff_out] = command_output(bin + " diff " + (dir / "off.json").string() + " " +
                                                (dir / "on.json").string() + " --json");
  EXPECT_EQ(diff_status, 1);  // a verdict differs
  json j = json::parse(diff_out);
  const TraceDiff& d = app->compare_diff();
  EXPECT_EQ(j.at("counts").at("only_in_a").get<size_t>(), d.count_only_in_a);
  EXPECT_EQ(j.at("counts").at("only_in_b").get<size_t>(), d.count_only_in_b);
  EXPECT_EQ(j.at("counts").at("value").get<size_t>(), d.count_value);
  EXPECT_EQ(j.at("verdicts").size(), d.count_verdict);
  EXPECT_EQ(j.at("first_divergence").at("at_us").get<TimeUs>(), d.first_divergence->at_us);
}

// The sweep from the GUI gives what `redlab sweep --json` gives for the same request, and a
// click on a point opens that run.
TEST_F(GuiAppLab, SweepFromTheGuiMatchesTheCliAndAPointOpensItsRun) {
  open_and_run_to_end("ttl-double-holder");
  app->variant()["watchdog"] = "on";
  ASSERT_NO_FATAL_FAILURE(sweep_in_gui("pause_ms", 0, 30000, 16, 4));
  const app::SweepResult& gui = *app->sweep_result();
  EXPECT_FALSE(gui.cancelled);
  EXPECT_EQ(gui.runs, 64);
  EXPECT_TRUE(gui.expectation);
  const std::string screen = screen_text();
  EXPECT_TRUE(drawn(screen, "expected outcome")) << screen;  // its row
  EXPECT_TRUE(drawn(screen, "expectation not met")) << screen;
  EXPECT_FALSE(app->widget("sw_interventions").valid());

  auto [status, out] = command_output(std::string(REDLAB_BINARY) +
                                      " sweep ttl-double-holder --param pause_ms --from 0 --to "
                                      "30000 --steps 16 --seeds 4 --variant watchdog=on --json");
  ASSERT_EQ(status, 0) << out;
  json cli = json::parse(out);
  ASSERT_EQ(cli.at("points").size(), gui.points.size());
  size_t violated_points = 0, first_violated = SIZE_MAX;
  for (size_t i = 0; i < gui.points.size(); i++) {
    const json& p = cli.at("points")[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(p.at("value").get<int64_t>(), gui.points[i].value);
    EXPECT_EQ(p.at("expectation_unmet").get<int64_t>(), gui.points[i].expectation_unmet);
    ASSERT_EQ(p.at("checks").size(), gui.points[i].checks.size());
    for (size_t c = 0; c < gui.points[i].checks.size(); c++) {
      const app::SweepCheck& g = gui.points[i].checks[c];
      EXPECT_EQ(p.at("checks")[c].at("name").get<std::string>(), g.name);
      EXPECT_EQ(p.at("checks")[c].at("violated").get<int64_t>(), g.violated);
      EXPECT_EQ(p.at("checks")[c].at("not_judged").get<int64_t>(), g.not_judged);
      EXPECT_EQ(p.at("checks")[c].value("first_seed", int64_t(-1)), g.first_seed);
      if (g.name == "mutual_exclusion" && g.violated > 0) {
        violated_points++;
        first_violated = std::min(first_violated, i);
      }
    }
  }
  // The watchdog protects short pauses and not long ones: the plot has both.
  EXPECT_GT(violated_points, 0u);
  EXPECT_LT(violated_points, gui.points.size());

  // A click on the first point where mutual_exclusion was violated: that run, on the timeline.
  ASSERT_NE(first_violated, SIZE_MAX);
  const app::SweepPoint& point = gui.points[first_violated];
  int64_t seed = 0;
  for (const app::SweepCheck& c : point.checks)
    if (c.name == "mutual_exclusion") seed = c.first_seed;
  click_widget("sweep_point:mutual_exclusion:" + std::to_string(first_violated));
  EXPECT_FALSE(app->sweep_open());
  EXPECT_EQ(app->params().at("pause_ms"), point.value);
  EXPECT_EQ(app->trace().meta_or("param.pause_ms"), std::to_string(point.value));
  EXPECT_EQ(app->trace().meta_or("seed"), std::to_string(seed));
  EXPECT_EQ(app->trace().meta_or("variant.watchdog"), "on");
  bool violated = false;
  for (const TraceCheck& c : app->model().index().checks())
    if (c.name == "mutual_exclusion") violated = !c.ok;
  EXPECT_TRUE(violated);
  // The playhead at that violation.
  bool at_violation = false;
  for (const ViolationRegion& v : app->model().violations())
    at_violation =
        at_violation || (v.check == "mutual_exclusion" && v.from_us == app->playhead_us());
  EXPECT_TRUE(at_violation);
}

// A sweep from a what-if branch runs with its interventions, as `redlab sweep --fault` does, and
// has no expectation (the interventions take the file's away): no row for one.
TEST_F(GuiAppLab, SweepOfAWhatIfBranchRunsItsInterventionsAndHasNoExpectationRow) {
  open_and_run_to_end("ttl-double-holder");
  app->variant()["watchdog"] = "on";
  app->params()["pause_ms"] = 0;
  std::string error;
  auto iv = parse_intervention(*app->scenario(), "pause A at 2500 for 14000", &error);
  ASSERT_TRUE(iv) << error;
  ASSERT_TRUE(app->add_intervention(*iv)) << app->error();
  ASSERT_NO_FATAL_FAILURE(sweep_in_gui("work_ms", 3000, 12000, 4, 2));
  const app::SweepResult& gui = *app->sweep_result();
  EXPECT_FALSE(gui.expectation);
  auto [status, out] = command_output(
      std::string(REDLAB_BINARY) +
      " sweep ttl-double-holder --param work_ms --from 3000 --to 12000 --steps 4 --seeds 2"
      " --variant watchdog=on --set pause_ms=0 --fault 'pause A at 2500 for 14000' --json");
  ASSERT_EQ(status, 0) << out;
  json cli = json::parse(out);
  EXPECT_EQ(cli.at("expectation"), false);
  ASSERT_EQ(cli.at("points").size(), gui.points.size());
  for (size_t i = 0; i < gui.points.size(); i++)
    for (size_t c = 0; c < gui.points[i].checks.size(); c++) {
      const app::SweepCheck& g = gui.points[i].checks[c];
      EXPECT_EQ(cli["points"][i]["checks"][c].at("violated").get<int64_t>(), g.violated);
      // The 14 s pause outlives the watchdog's TTL at every point: that is the intervention.
      if (g.name == "mutual_exclusion") {
        EXPECT_EQ(g.violated, 2) << i;
      }
    }
  const std::string screen = screen_text();
  EXPECT_NE(screen.find("mutual"), std::string::npos) << screen;  // the checks' rows are there
  // Neither its row's name nor its colour in the legend (each drawn as a text of its own).
  EXPECT_FALSE(drawn(screen, "expected outcome")) << screen;
  EXPECT_FALSE(drawn(screen, "expectation not met")) << screen;
  // What the plot is of: the branch's intervention, in words, and why there is no such row.
  EXPECT_TRUE(app->widget("sw_interventions").valid());
  EXPECT_NE(screen.find("With the what-if interventions in every run: 2.500 s: pause A for "
                        "14000 ms. They take the scenario's expected outcome away"),
            std::string::npos)
      << screen;
}

TEST_F(GuiAppLab, SweepCanBeCancelled) {
  open_and_run_to_end("ttl-double-holder");
  click_widget("sweep");
  app::SweepRequest& rq = app->sweep_request();
  rq.param = "pause_ms";
  rq.steps = 200;
  rq.seeds = 1000;  // 200,000 runs: minutes, unless cancelled
  frames(1);
  click_widget("sw_start");
  ASSERT_TRUE(app->sweeping());
  frames(5);
  EXPECT_TRUE(app->widget("sw_progress").valid());
  click_widget("sw_cancel");
  wait_for_sweep();
  ASSERT_TRUE(app->sweep_result());
  EXPECT_TRUE(app->sweep_result()->cancelled);
  EXPECT_LT(app->sweep_result()->runs, 200 * 1000);
  size_t unfinished = 0;
  for (const app::SweepPoint& p : app->sweep_result()->points) unfinished += !p.finished;
  EXPECT_GT(unfinished, 0u);
  // It can start again.
  rq.steps = 3;
  rq.seeds = 1;
  frames(1);
  click_widget("sw_start");
  wait_for_sweep();
  ASSERT_TRUE(app->sweep_result());
  EXPECT_FALSE(app->sweep_result()->cancelled);
  EXPECT_EQ(app->sweep_result()->runs, 3);
}

// The words a Russian or Czech screen may hold in Latin letters (tests/gui/gui_app_test.cpp's
// allowed_words, for both runs of a comparison): identifiers, the scenario's own words.
std::set<std::string> allowed_words(const App& app, const std::string& lang) {
  std::set<std::string> out;
  auto add = [&](std::string_view text) {
    for (std::string& w : test_words::ascii_words(text)) out.insert(w);
  };
  for (const Trace* t : {&app.trace(), app.compare_trace(false), app.compare_trace(true)}) {
    if (!t) continue;
    for (const TraceEvent& e : t->events()) {
      add(e.actor);
      for (F f : {F::lock, F::key, F::channel, F::resource, F::server, F::group, F::cmd, F::message,
                  F::value, F::reply, F::error, F::type, F::record})
        if (const std::string* v = e.str(f)) add(*v);
      if (const auto* argv = e.list(F::argv))
        for (const std::string& a : *argv) add(a);
    }
  }
  if (const scenario::Scenario* sc = app.scenario()) {
    add(sc->id);
    add(sc->title.get(lang));
    for (const auto& p : sc->params) add(p.label.get(lang));
    for (const auto& v : sc->variants) {
      add(v.label.get(lang));
      for (const auto& [value, label] : v.value_labels) add(label.get(lang));
    }
  }
  return out;
}

TEST_F(GuiAppLab, CompareAndSweepInRussianAndCzechHaveNoEnglishLeft) {
  for (const char* code : {"ru", "cs"}) {
    SCOPED_TRACE(code);
    const Lang lang = lang_of(code);
    app->set_lang(code);
    compare_watchdog_off_on();
    app->view().record_texts = true;
    auto screen_leaks = [&](const char* where) {
      host->capture_text = true;
      frames(2);
      std::string all = host->captured_text();
      host->capture_text = false;
      for (const std::string& t : app->view().last_draw.texts) all += "\n" + t;
      EXPECT_GT(all.size(), 300u) << where;
      EXPECT_EQ(test_words::english_leaks(all, lang, allowed_words(*app, code)),
                std::vector<std::string>{})
          << where << ":\n"
          << all;
    };
    screen_leaks("the compare view");
    // Each kind of difference on screen, selected.
    std::set<TraceDifference::Kind> kinds;
    for (size_t i = 0; i < app->compare_diff().differences.size(); i++)
      if (kinds.insert(app->compare_diff().differences[i].kind).second) {
        app->select_difference(i);
        screen_leaks("a difference selected");
      }
    EXPECT_GE(kinds.size(), 4u);
    app->close_compare();
    frames(1);
    ASSERT_TRUE(app->open_sweep());
    app->sweep_request().steps = 5;
    app->sweep_request().seeds = 2;
    frames(1);
    screen_leaks("the sweep panel before a sweep");
    ASSERT_TRUE(app->start_sweep());
    frames(1);
    wait_for_sweep();
    screen_leaks("the sweep plot");
    app->close_sweep();
    app->view().record_texts = false;
  }
}

}  // namespace
}  // namespace redlab::gui
