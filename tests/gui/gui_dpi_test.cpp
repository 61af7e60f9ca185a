// The window's DPI: on a 192-dpi screen (Xft.dpi, what desktops set for a HiDPI monitor and
// what GLFW reads as the window's content scale) the type is rasterised at twice its size and
// the timeline's marks and name column grow with it, so "lock:job:42" still fits its column.
// Runs as its own ctest (gui_dpi_test): the resource must be on the X server before GLFW
// starts, so it cannot share the process of the other GUI tests; the other GUI tests skip it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "app/gui/gui_app.h"

namespace redlab::gui {
namespace {}  // namespace

namespace test {
// Xft.dpi on the root window, as xrdb would put it (xft_dpi.cpp). The X server keeps it while it
// runs with -noreset; otherwise it would be reset when that connection closes.
bool set_xft_dpi(int dpi);
}  // namespace test

namespace {

TEST(GuiDpi, AtTwiceTheDpiTheTypeAndTheNameColumnAreTwiceAsLarge) {
  if (!std::getenv("REDLAB_DPI_TEST")) GTEST_SKIP() << "run by ctest's gui_dpi_test";
  ::setenv("REDLAB_SCENARIOS", REDLAB_SOURCE_DIR "/scenarios", 1);
  ASSERT_TRUE(test::set_xft_dpi(192)) << "no X display";
  HostOptions options;
  options.width_px = 2560;
  options.height_px = 1440;
  options.vsync = false;
  std::string error;
  auto host = Host::open(options, &error);
  ASSERT_TRUE(host) << error;
  AppOptions app_options;
  app_options.persist = false;
  App app(app_options);
  ASSERT_TRUE(app.open_scenario("ttl-double-holder"));
  ASSERT_TRUE(app.run(false));
  app.view().record_texts = true;
  FrameInput still;
  for (int i = 0; i < 3; i++) ASSERT_TRUE(host->frame(app, &still));
  EXPECT_FLOAT_EQ(host->fonts_scale(), 2.0f);
  EXPECT_FLOAT_EQ(app.view().scale, 2.0f);
  EXPECT_FLOAT_EQ(app.view().label_width_px, 220.0f);
  // The rows' names are drawn whole, not elided.
  int whole = 0;
  for (const std::string& t : app.view().last_draw.texts)
    if (t == "lock:job:42") whole++;
  EXPECT_GE(whole, 4);  // A's, B's and C's lock rows, and the server's key row
}

}  // namespace
}  // namespace redlab::gui
