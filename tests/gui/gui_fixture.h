// What the GUI test suites share: one window for a whole suite (opening and closing X
// connections test after test is slow and, under Xvfb, now and then refused), a fresh App for
// each test, and synthetic input as ImGui sees it. ctest runs these suites under xvfb-run.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "app/gui/gui.h"
#include "app/gui/gui_app.h"

namespace redlab::gui {

class GuiFixture : public ::testing::Test {
 protected:
  // keep_pixels: the suite reads the frame back (pixel checks, screenshots of every frame).
  static void open_host(bool keep_pixels) {
    ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
    HostOptions options;
    options.width_px = 1600;
    options.height_px = 900;
    options.vsync = false;
    host_ = Host::open(options, &host_error_).release();
    if (host_) host_->keep_pixels = keep_pixels;
  }
  static void SetUpTestSuite() { open_host(false); }
  static void TearDownTestSuite() {
    delete host_;
    host_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(host_) << host_error_ << " (run these tests through ctest: it starts xvfb-run)";
    host = host_;
    AppOptions app_options;
    app_options.persist = false;
    app_options.keep_progress = false;  // the exercise tests give theirs a scratch file
    app = std::make_unique<App>(app_options);
    frames(1);  // let go of whatever the previous test's mouse was doing
  }
  void TearDown() override { app.reset(); }

  static inline Host* host_ = nullptr;
  static inline std::string host_error_;
  Host* host = nullptr;
  std::unique_ptr<App> app;

  // n frames with the mouse at `pos`, button as given, no wheel.
  void frames(int n, ImVec2 pos = {-1, -1}, bool down = false, float dt_s = 1.0f / 60) {
    FrameInput in;
    in.mouse_pos = pos;
    in.mouse_down = down;
    in.dt_s = dt_s;
    for (int i = 0; i < n; i++) ASSERT_TRUE(host->frame(*app, &in));
  }
  // Hover, press, release: what a click is to ImGui (buttons fire on release).
  void click(ImVec2 pos) {
    frames(1, pos, false);
    frames(1, pos, true);
    frames(1, pos, false);
  }
  void click_widget(const std::string& name) {
    WidgetRect w = app->widget(name);
    ASSERT_TRUE(w.valid()) << "no widget " << name;
    click(w.center());
  }
  void open_and_run_to_end(const std::string& id) {
    ASSERT_TRUE(app->open_scenario(id)) << app->error();
    ASSERT_TRUE(app->run(false)) << app->error();
    frames(3);
  }
};

}  // namespace redlab::gui
