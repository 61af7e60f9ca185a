// `redlab gui [SCENARIO|TRACE.json] [--screenshot FILE.png] [--at-ms T] [--size WxH]
//             [--lang L] [--seed N] [--set P=V] [--variant N=V] [--backend B] [--presenter]
//             [--reveal] [--exercise] [--hints N] [--answer FILE.lua]
//             [--compare A.json B.json] [--sweep PARAM [--sweep-steps N] [--sweep-seeds S]]`
// Every option takes its value as the next argument or after '=' (`--at-ms=16000`), like
// the other subcommands.
//
// Everything that can be wrong with the input (arguments, the scenario, the trace, a run
// option) is found before a window opens, so bad input costs one line on stderr and exit 2,
// with or without a display, and never leaves a half-written screenshot.
#include "app/gui/gui.h"

#include <chrono>
#include <cinttypes>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "app/branch.h"
#include "app/files.h"
#include "app/gui/gui_app.h"

namespace redlab::app {

namespace {

constexpr int kWindowPxMin = 320;
constexpr int kWindowPxMax = 8192;
// Frames rendered before a screenshot is taken: ImGui sizes tables and wrapped text from the
// previous frame, so the first frames are not final.
constexpr int kScreenshotFrames = 4;
constexpr std::chrono::minutes kLiveRunWaitMax{10};
const char* kDefaultScenario = "ttl-double-holder";

struct GuiArgs {
  std::string input;  // scenario id/path or trace path; "" = the last (or default) scenario
  std::string screenshot;
  std::optional<int64_t> at_ms;
  int width_px = 1600;
  int height_px = 900;
  std::optional<std::string> lang;
  std::optional<uint64_t> seed;
  std::map<std::string, int64_t> set;
  std::map<std::string, std::string> variant;
  std::optional<std::string> backend;
  bool presenter = false;
  bool reveal = false;
  // The exercise panel: open, with this many hints shown, and an answer (a script file) in
  // its editor, checked before the picture is taken.
  bool exercise = false;
  int64_t hints = 0;
  std::string answer;
  // The lab: two trace files compared; a parameter swept (swept before the picture).
  std::vector<std::string> compare;
  std::string sweep;
  std::optional<int64_t> sweep_steps, sweep_seeds;
};

struct BadInput {
  std::string message;
};

GuiArgs parse_args(const std::vector<std::string>& args) {
  GuiArgs g;
  for (size_t i = 0; i < args.size(); i++) {
    std::string a = args[i];
    // "--flag=value": the value is the rest (a --variant's own '=' stays in it).
    std::optional<std::string> inline_value;
    if (a.rfind("--", 0) == 0)
      if (size_t eq = a.find('='); eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
      }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw BadInput{a + " needs a value"};
      return args[++i];
    };
    auto pair = [&](const std::string& text) {
      auto eq = text.find('=');
      if (eq == std::string::npos || eq == 0)
        throw BadInput{a + " " + text + ": expected NAME=VALUE"};
      return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
    };
    if (a == "--screenshot") {
      g.screenshot = value();
      if (g.screenshot.empty()) throw BadInput{"--screenshot needs a file name"};
    } else if (a == "--at-ms") {
      std::string v = value();
      auto n = scenario::parse_int(v);
      if (!n || *n < 0) throw BadInput{"--at-ms " + v + ": expected a time in ms, 0 or more"};
      g.at_ms = *n;
    } else if (a == "--size") {
      std::string v = value();
      auto x = v.find('x');
      auto w = x == std::string::npos ? std::nullopt : scenario::parse_int(v.substr(0, x));
      auto h = x == std::string::npos ? std::nullopt : scenario::parse_int(v.substr(x + 1));
      if (!w || !h || *w < kWindowPxMin || *h < kWindowPxMin || *w > kWindowPxMax ||
          *h > kWindowPxMax)
        throw BadInput{"--size " + v + ": expected WIDTHxHEIGHT in pixels, each " +
                       std::to_string(kWindowPxMin) + " to " + std::to_string(kWindowPxMax)};
      g.width_px = int(*w);
      g.height_px = int(*h);
    } else if (a == "--lang") {
      g.lang = value();
      if (*g.lang != "en" && *g.lang != "ru" && *g.lang != "cs")
        throw BadInput{"--lang " + *g.lang + ": expected en, ru or cs"};
    } else if (a == "--seed") {
      std::string v = value();
      auto n = scenario::parse_int(v);
      if (!n || *n < 0) throw BadInput{"--seed " + v + ": expected an integer, 0 or more"};
      g.seed = uint64_t(*n);
    } else if (a == "--set") {
      auto [k, v] = pair(value());
      auto n = scenario::parse_int(v);
      if (!n) throw BadInput{"--set " + k + "=" + v + ": expected an integer value"};
      g.set[k] = *n;
    } else if (a == "--variant") {
      auto [k, v] = pair(value());
      g.variant[k] = v;
    } else if (a == "--backend") {
      g.backend = value();
    } else if (a == "--exercise") {
      if (inline_value) throw BadInput{a + " takes no value"};
      g.exercise = true;
    } else if (a == "--hints") {
      std::string v = value();
      auto n = scenario::parse_int(v);
      if (!n || *n < 0 || *n > 100) throw BadInput{"--hints " + v + ": expected 0 to 100"};
      g.hints = *n;
      g.exercise = true;
    } else if (a == "--answer") {
      g.answer = value();
      if (g.answer.empty()) throw BadInput{"--answer needs a file name"};
      g.exercise = true;
    } else if (a == "--compare") {
      if (inline_value) throw BadInput{"--compare takes two trace files: --compare A.json B.json"};
      if (i + 2 >= args.size()) throw BadInput{"--compare needs two trace files: A.json B.json"};
      g.compare = {args[i + 1], args[i + 2]};
      i += 2;
    } else if (a == "--sweep") {
      g.sweep = value();
    } else if (a == "--sweep-steps" || a == "--sweep-seeds") {
      std::string v = value();
      auto n = scenario::parse_int(v);
      if (!n || *n < 1) throw BadInput{a + " " + v + ": expected an integer, 1 or more"};
      (a == "--sweep-steps" ? g.sweep_steps : g.sweep_seeds) = *n;
    } else if (a == "--presenter" || a == "--reveal") {
      if (inline_value) throw BadInput{a + " takes no value"};
      (a == "--presenter" ? g.presenter : g.reveal) = true;
    } else if (a.rfind("-", 0) == 0) {
      throw BadInput{"unknown option " + a + " for 'gui' (see redlab --help)"};
    } else if (g.input.empty()) {
      g.input = a;
    } else {
      throw BadInput{"unexpected argument '" + a + "' (one scenario or trace at a time)"};
    }
  }
  return g;
}

// Whether two paths name the same file: the same file on disk, or (when one does not exist
// yet) the same path once made absolute.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && pa == pb;
}

int gui_main_checked(const std::vector<std::string>& args) {
  GuiArgs g = parse_args(args);
  const bool screenshot = !g.screenshot.empty();
  // The picture must never overwrite what it pictures.
  if (screenshot && !g.input.empty() && same_file(g.screenshot, g.input))
    throw BadInput{"--screenshot " + g.screenshot + " is the input file " + g.input +
                   ": give the picture another name"};

  // Screenshots and tests must not depend on (or change) someone's saved settings.
  gui::AppOptions options;
  options.persist = !screenshot;
  options.keep_progress = !screenshot;  // a screenshot shows no one's progress
  gui::App app(options);
  if (g.lang) app.set_lang(*g.lang);
  if (g.backend) app.set_backend(*g.backend);
  app.set_presenter(g.presenter);
  app.set_reveal(g.reveal);

  bool replay = false, branch = false;
  if (!g.compare.empty()) {
    if (!g.input.empty())
      throw BadInput{"--compare names both runs; drop '" + g.input + "' (or compare it with B)"};
    for (const std::string& path : g.compare)
      if (screenshot && same_file(g.screenshot, path))
        throw BadInput{"--screenshot " + g.screenshot + " is the input file " + path +
                       ": give the picture another name"};
    g.input = g.compare[0];  // A is shown on the timeline too
  }
  if (!g.input.empty()) {
    replay = gui::looks_like_trace(g.input);
    // A what-if branch (app/branch.h): a regular file, read once to tell and once to open.
    std::string head;
    std::error_code ec;
    branch = !replay && std::filesystem::is_regular_file(g.input, ec) &&
             !read_input(g.input, InputKind::scenario, &head) && looks_like_branch(head);
    if (!(replay   ? app.open_trace(g.input)
          : branch ? app.open_branch(g.input)
                   : app.open_scenario(g.input)))
      throw BadInput{app.error()};
    // A scenario named by its id: its file is the input too.
    for (const auto& e : app.library())
      if (screenshot && !replay && e.id == g.input && same_file(g.screenshot, e.path))
        throw BadInput{"--screenshot " + g.screenshot + " is the scenario file " + e.path +
                       ": give the picture another name"};
  } else {
    std::string last = app.settings().scenario;
    bool in_library = false;
    for (auto& e : app.library()) in_library = in_library || e.id == last;
    if (!app.open_scenario(in_library ? last : kDefaultScenario)) throw BadInput{app.error()};
  }
  if (replay && (g.seed || !g.set.empty() || !g.variant.empty()))
    throw BadInput{"--seed, --set and --variant choose a run; " + g.input +
                   " is a saved trace (give a scenario instead)"};
  // A branch has run as it was saved; choices given here change it and run it again (its
  // own "lang" included: --lang wins, as with `redlab run BRANCH.json --lang`).
  if (!replay && (!branch || g.seed || !g.set.empty() || !g.variant.empty() || g.lang)) {
    if (g.lang) app.set_lang(*g.lang);
    if (g.seed) app.set_seed(*g.seed);
    for (auto& [k, v] : g.set) app.params()[k] = v;
    for (auto& [k, v] : g.variant) app.variant()[k] = v;
    // Unknown or out-of-range choices are refused by the run itself, with the engine's words.
    if (!app.run(!screenshot && !g.at_ms)) throw BadInput{app.error()};
  }
  if (g.at_ms) {
    app.seek(*g.at_ms * kUsPerMs);
    app.pause();
  }
  if (!g.compare.empty() && !app.compare_files(g.compare[0], g.compare[1]))
    throw BadInput{app.error()};
  if (!g.sweep.empty()) {
    if (!app.open_sweep()) throw BadInput{app.error()};
    const scenario::Param* p = app.scenario()->param(g.sweep);
    if (!p)
      throw BadInput{"--sweep " + g.sweep + ": " + app.scenario()->id + " has no such parameter"};
    app::SweepRequest& rq = app.sweep_request();
    rq.param = p->name;
    rq.from = p->min;
    rq.to = p->max;
    rq.steps = g.sweep_steps.value_or(std::min<int64_t>(21, p->max - p->min + 1));
    rq.seeds = g.sweep_seeds.value_or(10);
    if (!app.start_sweep()) throw BadInput{"--sweep: " + app.sweep_error()};
  }
  std::string answer_text;
  if (g.exercise) {
    if (replay) throw BadInput{"--exercise: " + g.input + " is a saved trace (give a scenario)"};
    if (!app.open_exercise()) throw BadInput{app.error()};
    for (int64_t i = 0; i < g.hints; i++) app.show_hint();
    if (!g.answer.empty()) {
      if (!app.scenario()->exercise->choose.empty())
        throw BadInput{"--answer: " + app.scenario()->id +
                       " is answered with settings (--variant, --set), not a script"};
      if (auto error = read_input(g.answer, InputKind::script, &answer_text))
        throw BadInput{*error};
      app.exercise_script() = answer_text;
    }
  }

  gui::HostOptions host_options;
  host_options.width_px = g.width_px;
  host_options.height_px = g.height_px;
  host_options.vsync = !screenshot;
  if (!screenshot && !gui::config_dir().empty())
    host_options.ini_path = (std::filesystem::path(gui::config_dir()) / "imgui.ini").string();
  std::string error;
  auto host = gui::Host::open(host_options, &error);
  if (!host) throw BadInput{error};

  if (!g.answer.empty() && !app.check_exercise()) {
    const auto& e = app.exercise_script_error();
    throw BadInput{e ? g.answer + ":" + std::to_string(e->line) + ": " + e->message : app.error()};
  }
  if (screenshot) {
    gui::FrameInput still;  // no mouse, no time passing: the picture shows the chosen moment
    still.dt_s = 1.0f / 60;
    // A check of --answer is pictured with its verdict (a fake grade: seconds at most).
    while (app.checking() || app.sweeping())
      if (!host->frame(app, &still)) throw BadInput{"the window was closed"};
    // A live run on a real backend is pictured when it has ended, like a fake run (bounded:
    // a run ends by its duration and its timeouts; this only guards against a bug).
    auto started = std::chrono::steady_clock::now();
    const bool live = app.running();
    while (app.running() && std::chrono::steady_clock::now() - started < kLiveRunWaitMax) {
      if (!host->frame(app, &still)) throw BadInput{"the window was closed"};
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (app.running()) throw BadInput{"the live run did not end within 10 minutes"};
    if (live && !app.error().empty()) throw BadInput{app.error()};
    // Like a fake run: the picture shows the end of the run unless --at-ms says otherwise.
    if (live) {
      app.seek(g.at_ms ? *g.at_ms * kUsPerMs : app.model().end_us());
      app.pause();
    }
    for (int i = 0; i < kScreenshotFrames; i++) {
      if (i + 1 == kScreenshotFrames) host->request_screenshot(g.screenshot);
      if (!host->frame(app, &still)) throw BadInput{"the window was closed"};
    }
    if (!host->screenshot_error().empty()) throw BadInput{host->screenshot_error()};
    return 0;
  }
  while (host->frame(app)) {
  }
  return 0;
}

}  // namespace

int gui_main(const std::vector<std::string>& args) {
  try {
    return gui_main_checked(args);
  } catch (const BadInput& e) {
    std::cerr << "redlab: " << e.message << "\n";
    return 2;
  }
}

}  // namespace redlab::app
