// The GUI application shell: the state of one lab session (scenario, choices, the trace being
// shown, playback) and the panels around G1's timeline (timeline_view.h).
//
// Split by feature (Tracy's View): gui_app.cpp holds the state and everything that is not
// drawing (runs, playback, files, settings); gui_panels.cpp draws the panels; gui_host.cpp
// owns the GLFW window, the GL context, fonts and screenshots; gui_main.cpp parses
// `redlab gui` arguments.
//
// Runs: a fake run is a pure, fast function, so it happens on the UI thread and the finished
// trace is then *played*: the playhead moves at the chosen speed (1x = the scenario's own
// time). Other backends run on a worker thread; its events are copied into a mutex-protected
// buffer and the UI thread moves them into its trace each frame, so the timeline grows while
// the run goes on and the UI never waits for a server.
//
// Time as the class experiences it: until the playhead reaches the end (or V reveals it), the
// timeline shows only what has happened and the verdicts read "so far" (verdicts()), so a
// teacher can pause and ask what happens next. Presenter mode (--presenter, P or F5) is the
// same session laid out for a projector: the timeline alone in large type, the current note
// as a caption, the verdicts so far, everything driven from the keyboard (keys_help()).
//
// Tests drive the app through Host::frame with a FrameInput (synthetic mouse and keys) and
// read its state through the accessors at the end of App (playhead, view, errors, widget
// rects, the verdicts shown).
//
// Words: the GUI's own come from one catalogue in English, Russian and Czech (strings.h); the
// scenario's texts (titles, story, notes) come in the chosen language from the scenario file;
// the checks' verdicts are worded from the trace's facts (verdict_words.h).
#pragma once

#include <imgui.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/backend.h"
#include "app/branch.h"
#include "app/grade.h"
#include "app/gui/background_job.h"
#include "app/gui/compare_view.h"
#include "app/gui/strings.h"
#include "app/gui/sweep_panel.h"
#include "app/gui/timeline_model.h"
#include "app/gui/timeline_view.h"
#include "app/gui/verdict_words.h"
#include "app/gui/whatif.h"
#include "sim/core/trace.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

struct GLFWwindow;

namespace redlab::gui {

// ---- Settings: the last choices, kept between sessions ------------------------------------

struct Settings {
  std::string lang = "en";
  std::string backend = "fake";  // "fake", "spawn" or a redis:// URL
  float time_scale = 1.0f;       // real backends: every duration of the scenario times this
  uint64_t seed = 1;
  float speed = 1.0f;
  bool follow = true;
  std::string scenario;                        // the last scenario's id
  std::map<std::string, std::string> variant;  // of the last scenario
  std::map<std::string, int64_t> param;        // of the last scenario
  // Layout, as fractions of the window (the app lays out its panels itself).
  float left_fraction = 0.16f;
  float right_fraction = 0.24f;
  float bottom_fraction = 0.26f;
  // The UI scale (Ctrl +, Ctrl -, Ctrl 0): everything, type included, times this.
  float ui_scale = 1.0f;
};
inline constexpr float kUiScaleMin = 0.5f, kUiScaleMax = 3.0f, kUiScaleStep = 0.1f;

// $XDG_CONFIG_HOME/redlab, else $HOME/.config/redlab; "" if neither is set.
std::string config_dir();
// Reads "key=value" lines; unknown keys and bad values are skipped (an old or hand-edited
// file must never stop the app). Returns false if the file cannot be read.
bool load_settings(const std::string& path, Settings* settings);
// Atomic (temporary file + rename); creates the directory. Returns false on failure.
bool save_settings(const std::string& path, const Settings& settings);

// "12.345 s": the millisecond precision that verdicts, notes and the inspector name moments in.
inline std::string seconds_text(TimeUs t_us, Lang lang = Lang::en) {
  return seconds_words(t_us, lang);
}

// True if `path` is a file whose opening says it is a redlab trace (not a scenario).
bool looks_like_trace(const std::string& path);

// ---- The application ----------------------------------------------------------------------

// The keys the app acts on (the host maps GLFW's keys to these; tests send them directly).
enum class Key : uint8_t {
  space,
  left,
  right,
  up,
  down,
  page_up,
  page_down,
  digit1,  // digit1 .. digit9 are consecutive
  digit2,
  digit3,
  digit4,
  digit5,
  digit6,
  digit7,
  digit8,
  digit9,
  r,
  v,
  h,
  question,  // '?' (Shift+/ on most layouts)
  f1,
  p,
  f5,
  n,
  e,
  f,
  s,
  escape,
  zoom_in,     // Ctrl + (or Ctrl =, keypad +): the UI scale up
  zoom_out,    // Ctrl -: down
  zoom_reset,  // Ctrl 0: back to 1
  undo,        // Ctrl Z: the last what-if edit undone
  redo,        // Ctrl Shift Z: redone
};
struct KeyPress {
  Key key = Key::space;
  bool shift = false;
};
// The keys and what they do, as the help overlay lists them.
std::vector<std::pair<std::string, std::string>> keys_help(Lang lang = Lang::en);

struct ScenarioEntry {
  std::string id;
  std::string path;
  std::string topic;
  scenario::Text title;
};

struct AppOptions {
  // Read and write the settings file (off in tests and for --screenshot: reproducible).
  bool persist = true;
  std::string settings_path;  // default: config_dir()/settings.txt
  // The exercises' progress (which passed, when, with which answer): read at start and
  // written after each check, also when persist is off (a student's pass is never dropped).
  bool keep_progress = true;
  std::string progress_path;  // default: config_dir()/progress.json
};

// ---- Exercises: the progress file ---------------------------------------------------------

// One exercise's record: passed (ever), when it was last checked (UTC, ISO 8601) and the answer
// checked then (the script's text, or the settings as "name=value" lines).
struct ProgressEntry {
  bool passed = false;
  std::string when;
  std::string answer;
  bool operator==(const ProgressEntry&) const = default;
};
using Progress = std::map<std::string, ProgressEntry>;  // by exercise (scenario) id
// Reads progress.json: nullopt and *error when it cannot be read or is not a progress file
// (a missing file is an empty progress, not an error).
std::optional<Progress> load_progress(const std::string& path, std::string* error);
// Atomic (temporary file + rename); creates the directory. nullopt, or why it failed.
std::optional<std::string> save_progress(const std::string& path, const Progress& progress);

// Where a Lua script does not compile: its line (1-based) and Lua's message.
struct ScriptError {
  int line = 0;
  std::string message;
};
// nullopt if `source` compiles as a Lua 5.1 chunk (the fake's Lua and Redis 7's).
std::optional<ScriptError> lua_compile_error(const std::string& source);

// Where a widget was drawn in the last frame (screen pixels), for tests.
struct WidgetRect {
  ImVec2 min{0, 0}, max{0, 0};
  ImVec2 center() const { return {(min.x + max.x) / 2, (min.y + max.y) / 2}; }
  bool valid() const { return max.x > min.x && max.y > min.y; }
};

class App {
 public:
  explicit App(AppOptions options = {});
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // ---- Commands (the UI calls them; so do gui_main and tests) ----
  // Each returns false and sets error() on failure, leaving what is shown intact.
  // A scenario id from the library or a path to a scenario file; becomes the current one.
  bool open_scenario(const std::string& name_or_path);
  // A saved trace: replayed as it is, no server needed.
  bool open_trace(const std::string& path);
  // A path that holds either (decided by the file's "format").
  bool open_path(const std::string& path);
  // Runs the current scenario with the current choices. Fake: done when this returns, the
  // playhead at 0 and playing (play = false: paused at the end, as for screenshots).
  // Other backends: starts the worker and returns.
  bool run(bool play = true);
  bool save_trace(const std::string& path);
  bool export_chrome_trace(const std::string& path);
  // The timeline's pixels are read after the frame is rendered: the host does it.
  void request_timeline_png(const std::string& path) { png_request_ = path; }

  void play();
  void pause();
  void step_to_next_event();
  void restart();
  void seek(TimeUs t_us);
  // Steps by meaning (each pauses; direction +1 next, -1 previous; false if there is none):
  // the narration notes, the violations (by their start; the violation is selected), and the
  // events of the selected event's actor (the event is selected).
  bool step_note(int direction);
  bool step_violation(int direction);
  bool step_actor_event(int direction);
  // The playhead to violation i's start (model().violations() order), paused, the violation
  // selected and in view.
  void jump_to_violation(size_t i);
  // Variant i (scenario order): on/off flips, other values go round; the run is redone.
  bool toggle_variant(size_t i);
  void speed_up();
  void speed_down();
  // Everything at once (the future and the full verdicts) instead of what has happened.
  void set_reveal(bool reveal) { reveal_ = reveal; }
  bool reveal() const { return reveal_; }
  // Whether what is shown is the whole run: revealed, or the playhead at the end of a
  // finished run.
  bool everything_shown() const;
  void set_future_faint(bool faint) { future_faint_ = faint; }
  bool future_faint() const { return future_faint_; }
  // Playing stops at each narration note it reaches (Space goes on).
  void set_stop_at_notes(bool stop) { stop_at_notes_ = stop; }
  bool stop_at_notes() const { return stop_at_notes_; }
  // The UI scale, kept in the settings: the style's sizes from the next frame, and the type,
  // which the host rasterises again at the new size (sharp, not a stretched bitmap); the
  // timeline's marks follow the type.
  void set_ui_scale(float scale);
  // The host's style changed (another DPI): the UI scale is applied to it afresh.
  void restyle() {
    base_style_.reset();
    applied_ui_scale_ = 0;
  }
  float ui_scale() const { return settings_.ui_scale; }
  void set_presenter(bool on) { presenter_ = on; }
  bool presenter() const { return presenter_; }
  bool help_open() const { return help_open_; }
  // The host hands over this frame's key presses, the presenter's large font and the size the
  // type has at UI scale 1 (the timeline's marks grow with the type past it).
  void set_keys(std::vector<KeyPress> keys) { keys_ = std::move(keys); }
  void set_large_font(ImFont* font) { large_font_ = font; }
  void set_base_font_px(float px) { base_font_px_ = px; }

  // Choices for the next run (validated against the scenario when it runs).
  std::map<std::string, std::string>& variant() { return variant_; }
  std::map<std::string, int64_t>& params() { return params_; }
  void set_seed(uint64_t seed) { seed_ = seed; }
  void set_lang(const std::string& lang);
  void set_backend(const std::string& backend) { backend_ = backend; }
  void set_speed(float speed);
  // After a choice changed: the fake run is redone at once (what-if) and the view and the
  // playhead stay where they were, so the new future appears in place. No-op otherwise.
  void rerun_in_place();

  // ---- The exercise panel (exercise.cpp) ----
  // Opens the current scenario's exercise (false if it has none): its task, hints one at a
  // time, and the answer: the script in an editor, or the settings it lets the student choose.
  bool open_exercise();
  void close_exercise() { exercise_open_ = false; }
  bool exercise_open() const { return exercise_open_; }
  // The editor's text (a script exercise): the scenario's script at first.
  std::string& exercise_script() { return exercise_script_; }
  // Why the editor's script does not compile, as of the last frame (or a check).
  const std::optional<ScriptError>& exercise_script_error() const { return script_error_; }
  size_t hints_shown() const { return hints_shown_; }
  void show_hint();
  // Grades the answer over the exercise's seeds on a worker thread (the fake backend). False
  // (with the reason shown) if the script does not compile or a check is already going.
  bool check_exercise();
  void cancel_check();
  bool checking() const { return check_ != nullptr; }
  // Seeds started / seeds of the running check.
  std::pair<int64_t, int64_t> check_progress() const;
  struct ExerciseVerdict {
    enum class State : uint8_t { none, pass, fail, cancelled, error };
    State state = State::none;
    int64_t seeds = 0;
    int64_t failed_seed = -1;
    std::vector<app::GradeFailure> failed;
    scenario::RunOptions failed_options;
    // What went wrong, per failed check, in each language (made once, from the failing run).
    std::vector<std::array<std::string, kLangCount>> words;
    std::string error;  // State::error: why the check could not run
  };
  const ExerciseVerdict& exercise_verdict() const { return exercise_verdict_; }
  // The failing seed's run, shown with the playhead at the first failed check's first
  // violation (paused). False if the last check did not fail.
  bool open_failing_seed();
  const Progress& progress() const { return progress_; }
  bool exercise_passed(const std::string& id) const {
    auto it = progress_.find(id);
    return it != progress_.end() && it->second.passed;
  }
  const std::string& progress_path() const { return options_.progress_path; }
  // The progress file could not be read: said once, and it is not overwritten until reset.
  const std::string& progress_error() const { return progress_error_; }
  // Forgets every exercise's progress (the UI asks first) and writes the empty file.
  bool reset_progress();

  // ---- What-if interventions (whatif.cpp; the design in whatif.h) ----
  // Each edit redoes the fake run from the start with the whole list (the view and the
  // playhead stay) and is one undo step; false (with the reason in error()) if the run
  // refuses it, and then nothing changed.
  const std::vector<Intervention>& interventions() const { return interventions_; }
  bool add_intervention(Intervention iv);
  bool replace_intervention(size_t i, Intervention iv);
  bool remove_intervention(size_t i);
  bool undo();
  bool redo();
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  // The shown run's inputs and interventions as a branch file, and back (a branch opened is
  // run at once, paused at its end).
  app::Branch branch() const;
  bool save_branch(const std::string& path);
  bool open_branch(const std::string& path);
  // The run without the interventions, drawn faintly under the lanes (empty without any).
  const Trace& original_trace() const { return original_trace_; }
  const TimelineModel& original_model() const { return original_model_; }

  // ---- Two runs compared (compare_view.cpp) ----
  // Opens the view on the run shown (A), B's choices set to A's. False without a run.
  bool open_compare();
  // A (the run shown) against B: the current scenario with these choices on the fake, or a
  // saved trace; or two trace files. Each compares with trace_diff; false and error() on failure.
  bool compare_with_run(const std::map<std::string, std::string>& variant,
                        const std::map<std::string, int64_t>& params, uint64_t seed);
  bool compare_with_file(const std::string& path);
  bool compare_files(const std::string& a_path, const std::string& b_path);
  void close_compare() { compare_.open = false; }
  bool compare_open() const { return compare_.open; }
  // What the view compares: the differences, each side's trace (on the scenario's axis; nullptr
  // before a comparison) and the view's shared playhead.
  const TraceDiff& compare_diff() const { return compare_.diff; }
  const Trace* compare_trace(bool b) const;
  TimeUs compare_playhead_us() const { return compare_.playhead_us; }
  int64_t selected_difference() const { return compare_.selected; }
  // The playhead to difference i (a verdict: the first violation of its check), its events
  // selected on both sides.
  void select_difference(size_t i);

  // ---- A parameter swept (sweep_panel.cpp) ----
  // Opens the panel for the current scenario (false if it has no parameter).
  bool open_sweep();
  void close_sweep() { sweep_.open = false; }
  bool sweep_open() const { return sweep_.open; }
  // The panel's fields: the parameter, its range, the points and the seeds.
  app::SweepRequest& sweep_request() { return sweep_.request; }
  // Starts run_sweep on a worker thread (the fake backend, the current variants and other
  // parameters). False (and the reason shown) if the request does not fit the scenario.
  bool start_sweep();
  void cancel_sweep();
  bool sweeping() const { return sweep_.job != nullptr; }
  std::pair<int64_t, int64_t> sweep_progress() const;  // runs done, of how many
  const std::optional<app::SweepResult>& sweep_result() const { return sweep_.result; }
  const std::string& sweep_error() const { return sweep_.error; }
  // The run behind a point, on the timeline: the parameter at the point's value and the first
  // seed where `check` was violated there (check "": where the expectation was not met), else
  // seed 1; the playhead at that check's first violation. The panel closes.
  bool open_sweep_point(size_t point, const std::string& check);

  // ---- Per frame ----
  // Between ImGui::NewFrame and ImGui::Render: takes in live events, moves the playhead by
  // dt_s at the chosen speed and draws every panel.
  void frame(float dt_s);
  // The host asks after rendering: a pending timeline PNG (path), and clears it.
  std::optional<std::string> take_png_request();
  void report_png_result(bool ok, const std::string& path, const std::string& error);

  // ---- State (tests and the host read it) ----
  TimeUs playhead_us() const { return view_.playhead_us; }
  bool playing() const { return playing_; }
  bool running() const { return worker_ != nullptr; }  // a live run is in progress
  const std::string& error() const { return error_; }
  const std::string& status() const { return status_; }
  const TimelineView& view() const { return view_; }
  TimelineView& view() { return view_; }
  const TimelineModel& model() const { return model_; }
  const Trace& trace() const { return trace_; }
  const scenario::Scenario* scenario() const { return scenario_ ? &*scenario_ : nullptr; }
  const std::vector<ScenarioEntry>& library() const { return library_; }
  const std::string& lang() const { return lang_; }
  Lang ui_lang() const { return lang_of(lang_); }
  // A violation's words (model().violations() index) as of a time, in the chosen language.
  ViolationWords words_of(size_t violation, TimeUs at_us);
  // A check's name as the screen shows it (verdict_words.h check_title).
  std::string title_of(const std::string& check) const {
    return check_title(check, model_.check_kind(check), ui_lang());
  }
  float speed() const { return speed_; }
  bool follow() const { return follow_; }
  void set_follow(bool follow) { follow_ = follow; }
  // "run", "pause", "step", "restart", "timeline", "library", "inspector", "narration", ...
  WidgetRect widget(const std::string& name) const;
  const Settings& settings() const { return settings_; }

  // The verdicts shown under the timeline: the trace's check events (TraceIndex::checks).
  struct CheckLine {
    std::string name;
    bool ok = true;
    bool judged = true;  // false: the check had nothing to judge from
    std::string summary;
    std::optional<bool> expected;
    bool operator==(const CheckLine&) const = default;
  };
  const std::vector<CheckLine>& checks() const { return checks_; }
  // A verdict as the class sees it at the playhead: so far (only violations that have
  // begun), or final once everything is shown. The panel draws these; tests read them.
  struct Verdict {
    enum class State : uint8_t { none_yet, violated, holds, not_judged };
    std::string check;
    State state = State::none_yet;
    bool final = false;
    std::string text;                // "at 10.081 s: A and B held ..." or the check's summary
    std::vector<size_t> violations;  // into model().violations(), by start; shown ones only
    std::optional<bool> expected;    // final verdicts only
  };
  const std::vector<Verdict>& verdicts() const { return verdicts_; }
  // Presenter mode: the note shown as the caption in the last frame ("" if none).
  const std::string& caption() const { return caption_shown_; }
  // What the keyspace panel showed in the last frame: per server, its keys at the playhead
  // (empty and not observed for a real server).
  struct ServerKeys {
    std::string server;
    bool observed = true;
    std::vector<KeyRow> keys;
    bool operator==(const ServerKeys&) const = default;
  };
  const std::vector<ServerKeys>& keyspace_shown() const { return keyspace_; }
  // What the SLOWLOG panel showed in the last frame: per server, its entries (newest first).
  const std::vector<std::pair<std::string, std::vector<SlowlogRow>>>& slowlog_shown() const {
    return slowlog_;
  }

 private:
  struct Worker;  // a live run on another thread

  void scan_library();
  const ScenarioEntry* find_entry(const std::string& id) const;
  void set_error(std::string message);
  void set_status(std::string message);
  // Replaces what is shown by a finished run or a loaded trace.
  // The checks come from the trace itself, so a reopened trace shows what the run showed.
  void show_trace(Trace trace);
  void poll_worker();
  void fit_view();  // the whole run, or its busy part when the rest is idle
  void cancel_worker();
  void advance_playhead(float dt_s);
  scenario::RunOptions run_options() const;
  void remember_choices();
  void save_settings_now();
  void apply_ui_scale();
  std::optional<ImGuiStyle> base_style_;  // the host's style, before the UI scale
  float applied_ui_scale_ = 0;  // 0: not applied yet (the first frame applies the setting)
  void handle_keys();
  void bring_into_view(TimeUs t_us);  // pans the view (keeping its zoom) if t is outside it
  void update_verdicts();
  // The facts of every violation, found once per trace (verdict_words.h).
  void ensure_facts();
  CheckInfo check_info(const std::string& name) const;
  std::vector<ViolationFacts> facts_;
  uint64_t facts_generation_ = UINT64_MAX;
  std::map<std::string, CheckInfo> check_infos_;
  std::vector<ViolationWords> final_words_;  // of every violation, over, in final_words_lang_
  Lang final_words_lang_ = Lang::en;
  void record(const std::string& name);         // the last item's rect under `name`
  void record_window(const std::string& name);  // the current (child) window's rect

  // Panels (gui_panels.cpp).
  void draw_menu_bar();
  void draw_top_bar();
  void draw_presenter();
  void draw_help();
  // The verdicts, each line (and each of its violations) a button that jumps there; compact:
  // the checks without a violation fold into one line (presenter mode).
  void draw_verdicts(bool compact);
  // The timeline view in the current window: the horizon, the row height, the scale.
  void draw_timeline_view(ImVec2 size);
  void draw_library(ImVec2 size);
  void draw_timeline(ImVec2 size);
  void draw_inspector(ImVec2 size);
  void draw_narration(ImVec2 size);
  void draw_exercise();
  void draw_script_editor(const Lang L);
  void draw_reset_progress();
  void poll_check();
  void load_progress_file();
  void record_progress(const std::string& id, bool passed, const std::string& answer);
  void check_script();  // script_error_ for the editor's text, when it changed
  std::string exercise_answer_text() const;
  // A check's final summary in `lang`, from the trace shown (as the verdicts panel says it).
  std::string check_summary_in(const std::string& check, Lang lang);
  void draw_selected_event();
  // What-if (whatif.cpp).
  bool whatif_possible() const;
  void clear_whatif();
  const scenario::Scenario& scenario_for_run();  // with the interventions; throws if refused
  void update_original();
  bool rerun_whatif();
  bool apply_interventions(std::vector<Intervention> list, bool record_undo);
  void draw_whatif_timeline(ImVec2 size);  // the timeline view with the what-if layers
  void draw_whatif_ghost();
  void whatif_marker_input();
  void draw_whatif_markers();
  void draw_whatif_menu();
  void draw_whatif_panel();
  std::vector<Intervention> interventions_;
  std::vector<std::vector<Intervention>> undo_, redo_;
  std::optional<scenario::Scenario> run_scenario_;  // the scenario with the interventions
  Trace original_trace_;
  TimelineModel original_model_;
  std::string original_key_;                           // the choices original_trace_ was run with
  std::map<std::string, std::string> branch_scripts_;  // scripts a branch file replaced
  std::string scenario_path_;                          // the file the scenario came from
  struct WhatIfMenu {
    std::string lane;
    bool server = false;
    int64_t at_ms = 0;
    int choice = -1;
    std::vector<Intervention::Value> values;
    bool with_optional = false;
    std::string on;
  };
  WhatIfMenu menu_;
  std::vector<WidgetRect> marker_rects_;  // last frame's, for the drag buttons
  int dragging_ = -1;
  std::vector<Intervention> drag_start_;
  float drag_grab_px_ = 0;  // where on its flag the marker was grabbed
  std::vector<Intervention> panel_edit_;
  std::string branch_path_;
  void draw_keyspace();
  void draw_pool_stats();
  void draw_slowlog();
  // The compare view and the sweep panel (compare_view.cpp, sweep_panel.cpp).
  void draw_compare();
  void draw_compare_side(CompareSide& side, bool is_b, ImVec2 size);
  std::string difference_words(const TraceDifference& d) const;
  bool compare_with(Trace b, const std::string& b_file);
  void draw_sweep();
  void poll_sweep();
  CompareState compare_;
  SweepState sweep_;
  bool splitter(const char* id, bool vertical, float* fraction, float total_px, float min_fraction,
                float max_fraction, ImVec2 size);

  AppOptions options_;
  Settings settings_;

  std::vector<ScenarioEntry> library_;
  std::string library_filter_;
  std::optional<scenario::Scenario> scenario_;
  // What is shown: a run of a scenario (source_: its id), a live run, or a trace file (its path).
  enum class SourceKind : uint8_t { none, run, live, trace };
  SourceKind source_kind_ = SourceKind::none;
  std::string source_;
  bool replay_ = false;  // showing a loaded trace, not a run of ours

  // Choices.
  std::string lang_ = "en";
  std::string backend_ = "fake";
  float time_scale_ = 1.0f;
  bool allow_server_faults_ = false;
  uint64_t seed_ = 1;
  std::map<std::string, std::string> variant_;
  std::map<std::string, int64_t> params_;
  float speed_ = 1.0f;
  bool follow_ = true;  // the "follow" checkbox; the view follows while playing

  // What is shown.
  Trace trace_;
  TimelineModel model_;
  TimelineView view_;
  std::vector<CheckLine> checks_;
  bool playing_ = false;
  double playhead_carry_us_ = 0;  // sub-microsecond remainder of the playhead's motion
  bool reveal_ = false;
  bool future_faint_ = false;
  bool stop_at_notes_ = false;
  bool presenter_ = false;
  bool help_open_ = false;
  std::vector<KeyPress> keys_;  // this frame's
  ImFont* large_font_ = nullptr;
  float base_font_px_ = 17.0f;
  std::vector<Verdict> verdicts_;
  std::string caption_shown_;

  // The exercise panel.
  // A grade going on, on another thread over its own copies (progress: the seed started last,
  // of how many), with what the progress file will record when it ends.
  struct CheckJob {
    BackgroundJob<app::GradeResult> job;
    std::string scenario_id;
    std::string answer;
  };
  bool exercise_open_ = false;
  std::string exercise_id_;  // whose exercise the panel's state is
  std::string exercise_script_;
  std::string checked_script_;  // the text script_error_ was found for
  std::optional<ScriptError> script_error_;
  size_t hints_shown_ = 0;
  std::unique_ptr<CheckJob> check_;
  ExerciseVerdict exercise_verdict_;
  Progress progress_;
  std::string progress_error_;
  bool confirm_reset_ = false;
  // The student's script goes into the runs while their exercise is open (so a run shows it).
  bool answer_in_runs() const;

  std::unique_ptr<Worker> worker_;
  std::vector<std::unique_ptr<Worker>> retired_workers_;  // cancelled, joined at the end
  // The backend as shown and saved: a URL without its user and password.
  std::string shown_backend() const;

  // Inspector caches: recomputed when the playhead crosses an event or the trace changes.
  uint64_t trace_generation_ = 0;  // +1 whenever trace_ is replaced or grows
  // What a panel read at the playhead is good until: the next event, or a new trace.
  struct AtEvent {
    size_t event = SIZE_MAX;  // model_.first_event_after(the playhead)
    uint64_t generation = UINT64_MAX;
    bool operator==(const AtEvent&) const = default;
  };
  // True when the playhead has crossed an event or the trace changed since `read` (which
  // then becomes now): the panel re-reads the trace.
  bool moved_since(AtEvent& read) const;
  AtEvent keyspace_read_;
  std::vector<ServerKeys> keyspace_;
  AtEvent slowlog_read_;
  std::vector<std::pair<std::string, std::vector<SlowlogRow>>> slowlog_;  // per observed server

  int64_t selected_span_event_ = -1;  // the selection whose span is in selected_span_
  uint64_t selected_span_generation_ = UINT64_MAX;
  std::optional<Item> selected_span_;
  std::map<std::string, std::vector<float>> pool_plots_;  // host -> connections in use
  uint64_t pool_plots_generation_ = UINT64_MAX;
  size_t notes_shown_ = SIZE_MAX;  // notes listed last frame (scroll to a new one)

  std::string path_field_;  // the Files row's path
  std::string error_;
  std::string status_;
  std::optional<std::string> png_request_;
  std::map<std::string, WidgetRect> widgets_;
};

// ---- The window ---------------------------------------------------------------------------

struct HostOptions {
  int width_px = 1600;
  int height_px = 900;
  std::string title = "redlab";
  std::string ini_path;  // imgui.ini; "" = none (tests, screenshots)
  bool vsync = true;
  float font_px = 17.0f;
  // Presenter mode's type: 1080 px seen from the back of a room (or scaled to half) still
  // reads at twice the desk size.
  float large_font_px = 34.0f;
};

// Synthetic input for one frame (tests): replaces the real mouse and the frame time.
struct FrameInput {
  ImVec2 mouse_pos{-1, -1};
  bool mouse_down = false;
  bool right_down = false;  // the right button (context menus)
  float wheel = 0;
  float dt_s = 1.0f / 60;
  std::vector<KeyPress> keys;  // pressed in this frame
  // Typing into the focused text field: Ctrl+A held this frame (select all), then characters.
  bool select_all = false;
  std::string text;
};

// One GLFW window with an OpenGL 3 context and a Dear ImGui context (one at a time).
class Host {
 public:
  // nullptr and a one-line reason if there is no display or no GL 3 context.
  static std::unique_ptr<Host> open(const HostOptions& options, std::string* error);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // One frame of the app; false once the window has been asked to close.
  bool frame(App& app, const FrameInput* input = nullptr);
  // The whole window as a PNG, written after the next frame is rendered; the result is in
  // screenshot_error() ("" = written).
  void request_screenshot(const std::string& path) { screenshot_path_ = path; }
  const std::string& screenshot_error() const { return screenshot_error_; }
  // RGBA of a region of the last rendered frame, rows top to bottom (valid inside frame()).
  std::vector<uint8_t> read_pixels(int x, int y, int width_px, int height_px) const;
  int framebuffer_width() const;
  int framebuffer_height() const;
  // Pixels of the last frame (kept for tests when keep_pixels is on).
  bool keep_pixels = false;
  const std::vector<uint8_t>& last_pixels() const { return last_pixels_; }
  bool font_loaded() const { return font_loaded_; }
  // Every text ImGui's widgets rendered in the last frame (ImGui's log, tree nodes left as
  // they are), when capture_text is on (tests). ImGui ends its log at the End() of every
  // top-level window, so a window begun after the main one calls resume_text_capture().
  bool capture_text = false;
  const std::string& captured_text() const { return captured_text_; }
  // The scale the type is rasterised at now (UI scale times the window's DPI scale).
  float fonts_scale() const { return fonts_scale_; }

 private:
  Host() = default;
  float window_content_scale() const;
  void build_fonts(float scale);
  float font_px_ = 17, large_font_px_ = 34;
  float content_scale_ = 1;  // the window's DPI over 96
  float fonts_scale_ = 0;
  GLFWwindow* window_ = nullptr;
  std::string ini_path_;
  std::string screenshot_path_;
  std::string screenshot_error_;
  std::vector<uint8_t> last_pixels_;
  std::string captured_text_;
  bool font_loaded_ = false;
  ImFont* large_font_ = nullptr;
};

// Inside a top-level window begun after the main one (the keys' list): its text goes to the
// host's capture too, when one is on.
void resume_text_capture();

// The projector-friendly light look.
void apply_light_style(float font_px);

}  // namespace redlab::gui
