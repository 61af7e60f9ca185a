// The window: GLFW + OpenGL 3 + Dear ImGui's GLFW/OpenGL3 backends, fonts, the light look,
// synthetic input for tests and reading pixels back for screenshots and PNG export.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "app/files.h"
#include "app/gui/gui_app.h"

namespace redlab::gui {

namespace {

constexpr const char* kFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

std::string g_glfw_error;  // the last GLFW error, for a one-line message

void on_glfw_error(int code, const char* description) {
  g_glfw_error = std::string(description ? description : "unknown") + " (GLFW error " +
                 std::to_string(code) + ")";
}

// Latin-1, Latin Extended-A (Czech: č ř š ž ů ě ...), Cyrillic, and the punctuation the
// scenario texts use (— “ „ … → ≤ ≥).
const ImWchar kGlyphRanges[] = {
    0x0020, 0x00FF,  // Basic Latin + Latin-1 Supplement
    0x0100, 0x017F,  // Latin Extended-A
    0x0400, 0x052F,  // Cyrillic + Cyrillic Supplement
    0x2000, 0x206F,  // General Punctuation
    0x2190, 0x21FF,  // Arrows
    0x2200, 0x22FF,  // Mathematical Operators
    0x25A0, 0x25FF,  // Geometric Shapes
    0,
};

// GLFW's keys to the app's. '?' is Shift+/ (on a US layout; H and F1 work on any).
struct KeyMapping {
  int glfw_key;
  Key key;
  bool repeat;  // held down, it repeats (stepping, speed)
};
const KeyMapping kKeyMap[] = {
    {GLFW_KEY_SPACE, Key::space, false},
    {GLFW_KEY_LEFT, Key::left, true},
    {GLFW_KEY_RIGHT, Key::right, true},
    {GLFW_KEY_UP, Key::up, true},
    {GLFW_KEY_DOWN, Key::down, true},
    {GLFW_KEY_PAGE_UP, Key::page_up, true},
    {GLFW_KEY_PAGE_DOWN, Key::page_down, true},
    {GLFW_KEY_1, Key::digit1, false},
    {GLFW_KEY_2, Key::digit2, false},
    {GLFW_KEY_3, Key::digit3, false},
    {GLFW_KEY_4, Key::digit4, false},
    {GLFW_KEY_5, Key::digit5, false},
    {GLFW_KEY_6, Key::digit6, false},
    {GLFW_KEY_7, Key::digit7, false},
    {GLFW_KEY_8, Key::digit8, false},
    {GLFW_KEY_9, Key::digit9, false},
    {GLFW_KEY_R, Key::r, false},
    {GLFW_KEY_V, Key::v, false},
    {GLFW_KEY_H, Key::h, false},
    {GLFW_KEY_F1, Key::f1, false},
    {GLFW_KEY_P, Key::p, false},
    {GLFW_KEY_F5, Key::f5, false},
    {GLFW_KEY_N, Key::n, true},
    {GLFW_KEY_E, Key::e, true},
    {GLFW_KEY_F, Key::f, false},
    {GLFW_KEY_S, Key::s, false},
    {GLFW_KEY_ESCAPE, Key::escape, false},
};

// This frame's presses of the app's keys (ImGui 1.86 indexes KeysDown by GLFW's key codes).
std::vector<KeyPress> pressed_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  std::vector<KeyPress> keys;
  if (io.KeyCtrl && !io.KeyAlt && !io.KeySuper) {  // the UI scale; any other Ctrl+ is not ours
    if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, true) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, true))
      keys.push_back({Key::zoom_in, io.KeyShift});
    if (ImGui::IsKeyPressed(GLFW_KEY_MINUS, true) ||
        ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, true))
      keys.push_back({Key::zoom_out, io.KeyShift});
    if (ImGui::IsKeyPressed(GLFW_KEY_0, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_0, false))
      keys.push_back({Key::zoom_reset, io.KeyShift});
    if (ImGui::IsKeyPressed(GLFW_KEY_Z, true))
      keys.push_back({io.KeyShift ? Key::redo : Key::undo, io.KeyShift});
    return keys;
  }
  if (io.KeyAlt || io.KeySuper) return keys;  // not ours
  for (const KeyMapping& m : kKeyMap)
    if (ImGui::IsKeyPressed(m.glfw_key, m.repeat)) keys.push_back({m.key, io.KeyShift});
  if (io.KeyShift && ImGui::IsKeyPressed(GLFW_KEY_SLASH, false))
    keys.push_back({Key::question, true});
  return keys;
}

// The clipboard while a host captures the text of its frame.
void append_captured(void* text, const char* part) {
  static_cast<std::string*>(text)->append(part).append("\n");
}

}  // namespace

void resume_text_capture() {
  if (ImGui::GetIO().SetClipboardTextFn == &append_captured) ImGui::LogToClipboard(0);
}

void apply_light_style(float font_px) {
  ImGui::StyleColorsLight();
  ImGuiStyle& s = ImGui::GetStyle();
  float scale = font_px / 13.0f;
  s.WindowPadding = {8 * scale, 6 * scale};
  s.FramePadding = {6 * scale, 3 * scale};
  s.ItemSpacing = {7 * scale, 5 * scale};
  s.ItemInnerSpacing = {4 * scale, 4 * scale};
  s.ScrollbarSize = 12 * scale;
  s.GrabMinSize = 10 * scale;
  s.WindowRounding = 0;
  s.ChildRounding = 3;
  s.FrameRounding = 3;
  s.GrabRounding = 3;
  s.FrameBorderSize = 1;
  ImVec4* c = s.Colors;
  // Near-white panels with strong text: readable on a washed-out projector.
  c[ImGuiCol_Text] = {0.08f, 0.08f, 0.10f, 1};
  c[ImGuiCol_TextDisabled] = {0.45f, 0.45f, 0.50f, 1};
  c[ImGuiCol_WindowBg] = {0.96f, 0.96f, 0.97f, 1};
  c[ImGuiCol_ChildBg] = {1, 1, 1, 1};
  c[ImGuiCol_PopupBg] = {1, 1, 1, 0.98f};
  c[ImGuiCol_Border] = {0.75f, 0.76f, 0.80f, 1};
  c[ImGuiCol_FrameBg] = {1, 1, 1, 1};
  c[ImGuiCol_FrameBgHovered] = {0.90f, 0.94f, 1, 1};
  c[ImGuiCol_Button] = {0.86f, 0.90f, 0.97f, 1};
  c[ImGuiCol_ButtonHovered] = {0.72f, 0.82f, 0.98f, 1};
  c[ImGuiCol_ButtonActive] = {0.55f, 0.70f, 0.95f, 1};
  c[ImGuiCol_Header] = {0.80f, 0.87f, 0.98f, 1};
  c[ImGuiCol_HeaderHovered] = {0.70f, 0.80f, 0.97f, 1};
  c[ImGuiCol_PlotLines] = {0.15f, 0.40f, 0.75f, 1};
  c[ImGuiCol_TableRowBgAlt] = {0.93f, 0.94f, 0.97f, 1};
}

std::unique_ptr<Host> Host::open(const HostOptions& options, std::string* error) {
  glfwSetErrorCallback(on_glfw_error);
  g_glfw_error.clear();
  // An X server that is there can still refuse a connection for a moment (Xvfb under load,
  // seen in the tests): a few short retries before "no display". Without DISPLAY, one try.
  const bool display_named = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
  const int tries_max = display_named ? 4 : 1;
  bool initialised = false;
  for (int attempt = 0; attempt < tries_max && !initialised; attempt++) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    initialised = glfwInit() == GLFW_TRUE;
  }
  if (!initialised) {
    *error = "cannot open a window: no display (" + g_glfw_error +
             "); set DISPLAY, or run under xvfb-run";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(options.width_px, options.height_px, options.title.c_str(),
                                        nullptr, nullptr);
  if (!window) {
    *error = "cannot open an OpenGL 3 window (" + g_glfw_error + ")";
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(options.vsync ? 1 : 0);

  std::unique_ptr<Host> host(new Host());
  host->window_ = window;
  host->ini_path_ = options.ini_path;

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = host->ini_path_.empty() ? nullptr : host->ini_path_.c_str();
  if (!host->ini_path_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(host->ini_path_).parent_path(), ec);
  }
  host->font_px_ = options.font_px;
  host->large_font_px_ = options.large_font_px;
  host->content_scale_ = host->window_content_scale();
  host->build_fonts(host->content_scale_);
  apply_light_style(options.font_px * host->content_scale_);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
  return host;
}

float Host::window_content_scale() const {
  float x = 1, y = 1;
  glfwGetWindowContentScale(window_, &x, &y);
  return std::clamp(std::max(x, y), 0.5f, 4.0f);
}

// The type at `scale` times its size, rasterised at that size: a font scaled after the fact
// (FontGlobalScale) is a stretched bitmap, soft on a projector.
void Host::build_fonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  large_font_ = nullptr;
  font_loaded_ = false;
  const float font_px = std::round(font_px_ * scale), large_px = std::round(large_font_px_ * scale);
  // Horizontal oversampling sharpens small type; large type does not need it (and it would
  // double the atlas a large UI scale rasterises).
  auto oversample = [](float px) { return px < 24 ? 2 : 1; };
  std::error_code ec;
  if (std::filesystem::exists(kFontPath, ec)) {
    ImFontConfig config;
    config.OversampleH = oversample(font_px);
    font_loaded_ =
        io.Fonts->AddFontFromFileTTF(kFontPath, font_px, &config, kGlyphRanges) != nullptr;
  }
  if (!font_loaded_) {
    // ImGui's own font covers ASCII only; Czech and Russian text will show as '?'.
    ImFontConfig config;
    config.SizePixels = font_px;
    io.Fonts->AddFontDefault(&config);
  }
  // The presenter's type, rasterised at its size (a scaled small font would be blurred).
  if (font_loaded_) {
    ImFontConfig config;
    config.OversampleH = oversample(large_px);
    large_font_ = io.Fonts->AddFontFromFileTTF(kFontPath, large_px, &config, kGlyphRanges);
  }
  if (!large_font_) {
    ImFontConfig config;
    config.SizePixels = large_px;
    large_font_ = io.Fonts->AddFontDefault(&config);
  }
  io.FontGlobalScale = 1.0f;
  fonts_scale_ = scale;
}

Host::~Host() {
  if (!window_) return;
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window_);
  glfwTerminate();
}

int Host::framebuffer_width() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return w;
}

int Host::framebuffer_height() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return h;
}

std::vector<uint8_t> Host::read_pixels(int x, int y, int width_px, int height_px) const {
  const int fb_w = framebuffer_width(), fb_h = framebuffer_height();
  x = std::clamp(x, 0, fb_w);
  y = std::clamp(y, 0, fb_h);
  width_px = std::clamp(width_px, 0, fb_w - x);
  height_px = std::clamp(height_px, 0, fb_h - y);
  std::vector<uint8_t> rgba(size_t(width_px) * height_px * 4);
  if (rgba.empty()) return rgba;
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  // GL's origin is the bottom left; read the rows and flip them to top-down.
  std::vector<uint8_t> flipped(rgba.size());
  glReadPixels(x, fb_h - y - height_px, width_px, height_px, GL_RGBA, GL_UNSIGNED_BYTE,
               flipped.data());
  const size_t row_bytes = size_t(width_px) * 4;
  for (int r = 0; r < height_px; r++)
    std::copy_n(flipped.data() + size_t(height_px - 1 - r) * row_bytes, row_bytes,
                rgba.data() + size_t(r) * row_bytes);
  // The framebuffer's alpha is whatever blending left there; a PNG wants opaque pixels.
  for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;
  return rgba;
}

bool Host::frame(App& app, const FrameInput* input) {
  glfwPollEvents();
  if (glfwWindowShouldClose(window_)) return false;
  // The window's DPI (it moved to another monitor) and the UI scale: the style and the type
  // follow before this frame begins.
  const float content_scale = window_content_scale();
  if (content_scale != content_scale_) {
    content_scale_ = content_scale;
    apply_light_style(font_px_ * content_scale_);
    app.restyle();
  }
  const float wanted = app.ui_scale() * content_scale_;
  if (wanted != fonts_scale_) {
    build_fonts(wanted);
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGuiIO& io = ImGui::GetIO();
  if (input) {
    // After the backend read the real mouse: the synthetic one wins.
    io.MousePos = input->mouse_pos;
    io.MouseDown[0] = input->mouse_down;
    io.MouseDown[1] = input->right_down;
    io.MouseWheel = input->wheel;
    io.DeltaTime = input->dt_s > 0 ? input->dt_s : 1.0f / 60;
    // Typing (tests): Ctrl+A as ImGui's text fields read it, then the characters.
    io.KeyCtrl = input->select_all;
    if (io.KeyMap[ImGuiKey_A] >= 0 && io.KeyMap[ImGuiKey_A] < IM_ARRAYSIZE(io.KeysDown))
      io.KeysDown[io.KeyMap[ImGuiKey_A]] = input->select_all;
    if (!input->text.empty()) io.AddInputCharactersUTF8(input->text.c_str());
  }
  ImGui::NewFrame();
  app.set_keys(input ? input->keys : pressed_keys());
  app.set_large_font(large_font_);
  // The design size at 1x: the timeline's marks and name column grow with the window's DPI
  // as the type does (at 192 dpi "lock:job:42" needs twice the pixels).
  app.set_base_font_px(font_px_);
  // ImGui's log to the "clipboard" flushes each top-level window's text at its End(); while
  // capturing, the clipboard is this host's captured text (depth 0: no tree node is opened).
  const auto set_clipboard = io.SetClipboardTextFn;
  void* const clipboard_data = io.ClipboardUserData;
  if (capture_text) {
    captured_text_.clear();
    io.SetClipboardTextFn = &append_captured;
    io.ClipboardUserData = &captured_text_;
    ImGui::LogToClipboard(0);
  }
  app.frame(io.DeltaTime);
  if (capture_text) {
    ImGui::LogFinish();
    io.SetClipboardTextFn = set_clipboard;
    io.ClipboardUserData = clipboard_data;
  }
  ImGui::Render();

  const int fb_w = framebuffer_width(), fb_h = framebuffer_height();
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.96f, 0.96f, 0.97f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

  // Pixels are read from the back buffer before the swap, where this frame is complete.
  const float scale_x = io.DisplaySize.x > 0 ? float(fb_w) / io.DisplaySize.x : 1;
  const float scale_y = io.DisplaySize.y > 0 ? float(fb_h) / io.DisplaySize.y : 1;
  if (auto path = app.take_png_request()) {
    const DrawRecord& d = app.view().last_draw;
    int x = int(d.area_min.x * scale_x), y = int(d.area_min.y * scale_y);
    int w = int((d.area_max.x - d.area_min.x) * scale_x);
    int h = int((d.area_max.y - d.area_min.y) * scale_y);
    std::string error;
    std::vector<uint8_t> rgba = read_pixels(x, y, w, h);
    int out_w = std::clamp(w, 0, fb_w - std::clamp(x, 0, fb_w));
    int out_h = std::clamp(h, 0, fb_h - std::clamp(y, 0, fb_h));
    std::optional<std::string> failed = app::write_png(*path, out_w, out_h, rgba);
    bool ok = !failed;
    if (failed) error = *failed;
    app.report_png_result(ok, *path, error);
  }
  if (keep_pixels || !screenshot_path_.empty()) last_pixels_ = read_pixels(0, 0, fb_w, fb_h);
  if (!screenshot_path_.empty()) {
    screenshot_error_.clear();
    if (auto failed = app::write_png(screenshot_path_, fb_w, fb_h, last_pixels_))
      screenshot_error_ = *failed;
    screenshot_path_.clear();
  }
  glfwSwapBuffers(window_);
  return true;
}

}  // namespace redlab::gui
