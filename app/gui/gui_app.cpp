// The application state: runs (fake on the UI thread, others on a worker), playback, files
// and settings. Drawing is in gui_panels.cpp; see gui_app.h for the design.
#include "app/gui/gui_app.h"

#include "app/files.h"

#include <stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "app/scenario_cli.h"
#include "sim/scenario/export.h"

namespace redlab::gui {

namespace fs = std::filesystem;

// How much of a file is looked at to tell a trace from a scenario.
constexpr size_t kSniffBytes = 4096;
// Events moved from a live run into the trace per frame, so one frame stays short even when
// the worker is far ahead (the rest follow on the next frames).
constexpr size_t kLiveEventsPerFrameMax = 200'000;
constexpr float kSpeedMin = 0.1f;
constexpr float kSpeedMax = 20.0f;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every file the GUI opens is read through app/files (its kind's size limit; a deadline for
// a FIFO or a pipe). Opening a path looks at it twice, once to tell a trace from a scenario
// and once to load it: the first read is kept, with its error, for the open that follows it.
// A FIFO or a pipe (`redlab gui <(cmd)`) cannot be read again at all; a regular file's kept
// bytes serve only while the file is unchanged (same inode, size and modification time).
struct ReadAhead {
  std::string path;
  std::string text;
  std::optional<std::string> error;
  bool regular = false;
  struct stat st {};
};
std::optional<ReadAhead>& read_ahead() {
  static std::optional<ReadAhead> kept;
  return kept;
}

bool unchanged(const ReadAhead& r) {
  if (!r.regular) return true;
  struct stat now {};
  return ::stat(r.path.c_str(), &now) == 0 && now.st_dev == r.st.st_dev &&
         now.st_ino == r.st.st_ino && now.st_size == r.st.st_size &&
         now.st_mtim.tv_sec == r.st.st_mtim.tv_sec && now.st_mtim.tv_nsec == r.st.st_mtim.tv_nsec;
}

std::optional<std::string> read_gui_file(const std::string& path, app::InputKind kind,
                                         std::string* text) {
  std::optional<ReadAhead> kept = std::move(read_ahead());
  read_ahead().reset();
  if (kept && kept->path == path && unchanged(*kept)) {
    if (kept->error) return kept->error;
    if (auto too_big = app::input_size_error(path, kind, kept->text.size())) return too_big;
    *text = std::move(kept->text);
    return std::nullopt;
  }
  return app::read_input(path, kind, text);
}

// Reads path to tell what it is (its first kSniffBytes come back in head), keeping what was
// read for the open that follows.
std::optional<std::string> sniff_gui_file(const std::string& path, std::string* head) {
  read_ahead().reset();
  ReadAhead r;
  r.path = path;
  r.regular = ::stat(path.c_str(), &r.st) == 0 && S_ISREG(r.st.st_mode);
  r.error = app::read_input(path, app::InputKind::scenario_or_trace, &r.text);
  *head = r.text.substr(0, kSniffBytes);
  read_ahead() = std::move(r);
  return read_ahead()->error;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> keys_help(Lang lang) {
  auto t = [&](S id) { return std::string(tr(id, lang)); };
  return {
      {t(S::key_space), t(S::key_space_does)},
      {t(S::key_right), t(S::key_right_does)},
      {t(S::key_left), t(S::key_left_does)},
      {t(S::key_up_down), t(S::key_up_down_does)},
      {"1 .. 9", t(S::key_digits_does)},
      {"R", t(S::key_r_does)},
      {"V", t(S::key_v_does)},
      {"F", t(S::key_f_does)},
      {"S", t(S::key_s_does)},
      {"N / Shift+N", t(S::key_n_does)},
      {"E / Shift+E", t(S::key_e_does)},
      {"P, F5", t(S::key_p_does)},
      {"H, ?, F1", t(S::key_h_does)},
      {"Esc", t(S::key_esc_does)},
      {"Ctrl +, Ctrl -, Ctrl 0", t(S::key_ctrl_does)},
      {"Ctrl+Z, Ctrl+Shift+Z", t(S::key_undo_does)},
  };
}

// ---- Settings -----------------------------------------------------------------------------

std::string config_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "redlab").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".config" / "redlab").string();
  return "";
}

bool load_settings(const std::string& path, Settings* s) {
  std::string text;
  if (app::read_input(path, app::InputKind::settings, &text)) return false;
  std::istringstream in(text);
  std::string line;
  auto fraction = [](const std::string& v, float lo, float hi, float* out) {
    char* end = nullptr;
    float f = std::strtof(v.c_str(), &end);
    if (end != v.c_str() && *end == 0 && f >= lo && f <= hi) *out = f;
  };
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "lang" && (value == "en" || value == "ru" || value == "cs")) {
      s->lang = value;
    } else if (key == "backend" && !value.empty()) {
      s->backend = value;
    } else if (key == "seed") {
      if (auto n = scenario::parse_int(value); n && *n >= 0) s->seed = uint64_t(*n);
    } else if (key == "time_scale") {
      fraction(value, 0.01f, 1.0f, &s->time_scale);
    } else if (key == "speed") {
      fraction(value, kSpeedMin, kSpeedMax, &s->speed);
    } else if (key == "follow") {
      s->follow = value == "1";
    } else if (key == "scenario") {
      s->scenario = value;
    } else if (key.rfind("variant.", 0) == 0) {
      s->variant[key.substr(8)] = value;
    } else if (key.rfind("param.", 0) == 0) {
      if (auto n = scenario::parse_int(value)) s->param[key.substr(6)] = *n;
    } else if (key == "layout.left") {
      fraction(value, 0.05f, 0.5f, &s->left_fraction);
    } else if (key == "layout.right") {
      fraction(value, 0.05f, 0.5f, &s->right_fraction);
    } else if (key == "layout.bottom") {
      fraction(value, 0.05f, 0.7f, &s->bottom_fraction);
    } else if (key == "ui_scale") {
      fraction(value, kUiScaleMin, kUiScaleMax, &s->ui_scale);
    }
  }
  return true;
}

bool save_settings(const std::string& path, const Settings& s) {
  std::ostringstream out;
  out << "# redlab GUI settings (written by redlab; safe to delete)\n";
  out << "lang=" << s.lang << "\nbackend=" << s.backend << "\ntime_scale=" << s.time_scale
      << "\nseed=" << s.seed << "\nspeed=" << s.speed << "\nfollow=" << (s.follow ? 1 : 0)
      << "\nscenario=" << s.scenario << "\n";
  for (auto& [k, v] : s.variant) out << "variant." << k << "=" << v << "\n";
  for (auto& [k, v] : s.param) out << "param." << k << "=" << v << "\n";
  out << "layout.left=" << s.left_fraction << "\nlayout.right=" << s.right_fraction
      << "\nlayout.bottom=" << s.bottom_fraction << "\nui_scale=" << s.ui_scale << "\n";
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  return !app::write_output(path, out.str());
}

// ---- The live run -------------------------------------------------------------------------

// Shared by the UI and a worker thread. The thread owns copies of everything it reads, and the
// state is shared_ptr-owned, so a run the UI abandons (a new run, closing the app) can finish
// or hang on its own without the UI ever waiting for it.
struct App::Worker {
  struct Shared {
    std::mutex mu;
    std::vector<TraceEvent> pending;  // events not yet taken by the UI
    bool done = false;
    std::string error;
    std::optional<scenario::RunResult> result;
    std::atomic<bool> cancel{false};
  };
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::thread thread;
};

App::App(AppOptions options) : options_(std::move(options)) {
  if (options_.persist) {
    if (options_.settings_path.empty() && !config_dir().empty())
      options_.settings_path = (fs::path(config_dir()) / "settings.txt").string();
    if (!options_.settings_path.empty()) load_settings(options_.settings_path, &settings_);
  }
  lang_ = settings_.lang;
  backend_ = settings_.backend;
  time_scale_ = settings_.time_scale;
  seed_ = settings_.seed;
  speed_ = settings_.speed;
  follow_ = settings_.follow;
  scan_library();
  load_progress_file();
}

App::~App() {
  cancel_check();
  cancel_worker();
  for (auto& w : retired_workers_)
    if (w->thread.joinable()) w->thread.join();
  save_settings_now();
  // The window (and its ImGui context) may outlive this app (the GUI tests open one for all):
  // leave its look as it was.
  if (base_style_ && ImGui::GetCurrentContext()) ImGui::GetStyle() = *base_style_;
}

void App::scan_library() {
  library_.clear();
  // A broken file in the library is reported when someone opens it by path; the list shows
  // the scenarios that load.
  for (const app::LibraryFile& f : app::scenario_library())
    if (f.scenario)
      library_.push_back({f.scenario->id, f.path,
                          f.scenario->topic.empty() ? "other" : f.scenario->topic,
                          f.scenario->title});
}

const ScenarioEntry* App::find_entry(const std::string& id) const {
  for (auto& e : library_)
    if (e.id == id) return &e;
  return nullptr;
}

void App::set_error(std::string message) {
  error_ = std::move(message);
  status_.clear();
}

void App::set_status(std::string message) {
  status_ = std::move(message);
  error_.clear();
}

void App::set_lang(const std::string& lang) {
  if (lang != "en" && lang != "ru" && lang != "cs") return;
  lang_ = lang;
  settings_.lang = lang;
}

void App::set_speed(float speed) {
  speed_ = std::clamp(speed, kSpeedMin, kSpeedMax);
}

WidgetRect App::widget(const std::string& name) const {
  auto it = widgets_.find(name);
  return it == widgets_.end() ? WidgetRect{} : it->second;
}

void App::record(const std::string& name) {
  widgets_[name] = {ImGui::GetItemRectMin(), ImGui::GetItemRectMax()};
}

void App::record_window(const std::string& name) {
  ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  widgets_[name] = {pos, {pos.x + size.x, pos.y + size.y}};
}

// ---- Opening ------------------------------------------------------------------------------

bool App::open_scenario(const std::string& name_or_path) {
  std::string path = name_or_path;
  bool is_path = name_or_path.find('/') != std::string::npos || ends_with(name_or_path, ".json");
  if (!is_path) {
    const ScenarioEntry* e = find_entry(name_or_path);
    if (!e) {
      set_error(trf(S::no_such_scenario, ui_lang(), {name_or_path, app::scenarios_dir()}));
      return false;
    }
    path = e->path;
  }
  try {
    std::string text;
    if (auto read_error = read_gui_file(path, app::InputKind::scenario, &text))
      throw scenario::ScenarioError(*read_error);
    scenario::Scenario sc = scenario::load_scenario_text(text, path);
    variant_.clear();
    params_.clear();
    for (auto& v : sc.variants) variant_[v.name] = v.def;
    for (auto& p : sc.params) params_[p.name] = p.def;
    // The last choices made for this scenario, where they still fit it.
    if (settings_.scenario == sc.id) {
      for (auto& [k, v] : settings_.variant)
        if (auto* var = sc.variant(k);
            var && std::find(var->values.begin(), var->values.end(), v) != var->values.end())
          variant_[k] = v;
      for (auto& [k, n] : settings_.param)
        if (auto* p = sc.param(k); p && n >= p->min && n <= p->max) params_[k] = n;
    }
    scenario_ = std::move(sc);
    scenario_path_ = path;
    clear_whatif();  // interventions belong to the scenario they were added to
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    set_error(scenario_ ? trf(S::current_kept, ui_lang(), {e.what()}) : std::string(e.what()));
    return false;
  }
}

bool looks_like_trace(const std::string& path) {
  std::string head;
  return !sniff_gui_file(path, &head) && head.find("\"redlab-trace\"") != std::string::npos;
}

bool App::open_path(const std::string& path) {
  std::string head;
  if (auto error = sniff_gui_file(path, &head)) {
    set_error(*error);
    return false;
  }
  if (head.find("\"redlab-trace\"") != std::string::npos) return open_trace(path);
  if (app::looks_like_branch(head)) return open_branch(path);
  return open_scenario(path);
}

bool App::open_trace(const std::string& path) {
  std::string text, error;
  if (auto read_error = read_gui_file(path, app::InputKind::trace, &text)) {
    set_error(*read_error);
    return false;
  }
  std::optional<Trace> trace = trace_from_json(text, &error);
  if (!trace) {
    const std::string message = trf(S::not_a_trace, ui_lang(), {path, error});
    set_error(trace_.size() > 0 ? trf(S::current_kept, ui_lang(), {message}) : message);
    return false;
  }
  cancel_worker();
  // The scenario the trace came from (when the library has it) gives the story and the
  // choices that made it; the trace itself is shown as it is.
  auto meta = trace->meta();
  if (auto it = meta.find("scenario"); it != meta.end() && find_entry(it->second)) {
    std::string keep_error = error_;
    if (open_scenario(it->second)) {
      for (auto& [k, v] : meta) {
        if (k.rfind("variant.", 0) == 0) variant_[k.substr(8)] = v;
        if (k.rfind("param.", 0) == 0)
          if (auto n = scenario::parse_int(v)) params_[k.substr(6)] = *n;
      }
      if (auto s = meta.find("seed"); s != meta.end())
        if (auto n = scenario::parse_int(s->second); n && *n >= 0) seed_ = uint64_t(*n);
    }
  }
  show_trace(std::move(*trace));
  replay_ = true;
  source_kind_ = SourceKind::trace;
  source_ = path;
  fit_view();
  seek(model_.end_us());
  playing_ = false;
  set_status(trf(S::replaying, ui_lang(),
                 {path, plural(int64_t(trace_.size()), S::events_plural, ui_lang())}));
  return true;
}

void App::show_trace(Trace trace) {
  trace_ = std::move(trace);
  model_.reset();
  model_.update(trace_);
  checks_.clear();
  for (const TraceCheck& c : model_.index().checks())
    checks_.push_back({c.name, c.ok, c.judged, c.summary, c.expected});
  view_.selected_event = -1;
  view_.hovered_event = -1;
  trace_generation_++;
}

// ---- Running ------------------------------------------------------------------------------

scenario::RunOptions App::run_options() const {
  scenario::RunOptions o;
  o.seed = seed_;
  o.variant = variant_;
  o.set = params_;
  o.lang = lang_;
  // While the student works on the exercise, the runs are of their script.
  if (answer_in_runs()) o.scripts[scenario_->exercise->script] = exercise_script_;
  for (auto& [name, source] : branch_scripts_) o.scripts.emplace(name, source);
  return o;
}

bool App::run(bool play) {
  if (!scenario_) {
    set_error(tr(S::open_scenario_first, ui_lang()));
    return false;
  }
  cancel_worker();
  // Cancelled runs that have finished their cleanup are joined now (at once: they are done).
  // One still cleaning up (deleting its keys, restoring a user's config) must end before a
  // new real run starts, or the new run could read the old run's config as the original.
  std::erase_if(retired_workers_, [](std::unique_ptr<Worker>& w) {
    bool done;
    {
      std::lock_guard<std::mutex> lock(w->shared->mu);
      done = w->shared->done;
    }
    if (done && w->thread.joinable()) w->thread.join();
    return done;
  });
  if (backend_ != "fake" && !retired_workers_.empty()) {
    set_error(tr(S::previous_run_finishing, ui_lang()));
    return false;
  }
  const scenario::Scenario* run_scenario = nullptr;
  try {
    run_scenario = &scenario_for_run();  // with the what-if interventions
  } catch (const std::exception& e) {
    set_error(e.what());
    return false;
  }
  remember_choices();
  app::BackendChoice choice;
  choice.backend = backend_;
  if (backend_ != "fake") {
    choice.time_scale = time_scale_;
    choice.allow_server_faults = allow_server_faults_;
  }
  try {
    app::validate_backend(choice);  // a bad URL is a message now, not a failed run later
  } catch (const std::exception& e) {
    set_error(e.what());
    return false;
  }
  if (backend_ != "fake") {
    // A real server may be slow or dead: the run goes to a worker and the UI keeps drawing.
    auto worker = std::make_unique<Worker>();
    std::shared_ptr<Worker::Shared> shared = worker->shared;
    scenario::RunOptions options = run_options();
    options.on_event = [shared](const TraceEvent& e) {
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->pending.push_back(e);
    };
    worker->thread = std::thread([shared, sc = *run_scenario, options, choice] {
      std::string error;
      std::optional<scenario::RunResult> result;
      try {
        result = app::run_on_backend(sc, options, choice, &shared->cancel);
      } catch (const std::exception& e) {
        error = e.what();
      }
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->error = std::move(error);
      shared->result = std::move(result);
      shared->done = true;
    });
    worker_ = std::move(worker);
    show_trace(Trace());
    replay_ = false;
    source_kind_ = SourceKind::live;
    source_ = scenario_->id;
    view_.fit(model_);
    seek(0);
    playing_ = play;
    set_status(trf(S::running_on, ui_lang(), {scenario_->id, shown_backend()}));
    return true;
  }
  try {
    scenario::RunResult r = app::run_on_backend(*run_scenario, run_options(), choice);
    show_trace(std::move(r.trace));
    update_original();
  } catch (const std::exception& e) {
    set_error(e.what());
    return false;
  }
  replay_ = false;
  source_kind_ = SourceKind::run;
  source_ = scenario_->id;
  error_.clear();
  status_.clear();
  fit_view();
  seek(play ? 0 : model_.end_us());
  playing_ = play;
  save_settings_now();
  return true;
}

void App::rerun_in_place() {
  if (!scenario_ || backend_ != "fake" || replay_ || running()) return;
  TimeUs from_us = view_.view_from_us, to_us = view_.view_to_us, playhead_us = view_.playhead_us;
  bool was_playing = playing_;
  if (!run(false)) return;
  view_.view_from_us = from_us;
  view_.view_to_us = to_us;
  seek(playhead_us);
  playing_ = was_playing && playhead_us < model_.end_us();
}

void App::fit_view() {
  // One time axis per scenario: the whole run (its duration), the same for every variant and
  // seed, so two runs can be compared by eye (a run that is busy only early is not zoomed).
  view_.fit(model_);
}

void App::cancel_worker() {
  if (!worker_) return;
  worker_->shared->cancel = true;
  // Not joined here (the UI does not wait for a slow server): the run ends within ~10 ms of
  // the cancel and then cleans up (the run's keys, a user's config, spawned servers). The
  // destructor joins every retired worker, so nothing outlives the app.
  retired_workers_.push_back(std::move(worker_));
}

void App::poll_worker() {
  if (!worker_) return;
  auto& shared = *worker_->shared;
  std::vector<TraceEvent> events;
  bool done = false;
  std::string error;
  std::optional<scenario::RunResult> result;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    if (shared.pending.size() <= kLiveEventsPerFrameMax) {
      events.swap(shared.pending);
      done = shared.done;
    } else {
      events.assign(std::make_move_iterator(shared.pending.begin()),
                    std::make_move_iterator(shared.pending.begin() + kLiveEventsPerFrameMax));
      shared.pending.erase(shared.pending.begin(), shared.pending.begin() + kLiveEventsPerFrameMax);
    }
    if (done) {
      error = shared.error;
      result = std::move(shared.result);
    }
  }
  for (auto& e : events) trace_.append(std::move(e));
  if (!events.empty()) {
    model_.update(trace_);
    trace_generation_++;
  }
  if (!done) return;
  // done is set as the thread's last act: the join returns at once.
  if (worker_->thread.joinable()) worker_->thread.join();
  worker_.reset();
  if (!error.empty()) {
    set_error(error);
    playing_ = false;
    return;
  }
  if (result) {
    // The finished result carries the meta and the checks, which the live events did not.
    TimeUs playhead_us = view_.playhead_us;
    show_trace(std::move(result->trace));
    // The whole run now exists: show all of it (with the verdicts' regions) unless the user
    // has taken the view over by turning follow off.
    if (follow_) fit_view();
    seek(playhead_us);
    set_status(trf(S::run_finished, ui_lang(), {shown_backend()}));
  }
}

// ---- Playback -----------------------------------------------------------------------------

void App::play() {
  if (view_.playhead_us >= model_.end_us() && !running()) seek(0);
  playing_ = true;
}

void App::pause() {
  playing_ = false;
}

void App::restart() {
  seek(0);
  playing_ = true;
}

void App::seek(TimeUs t_us) {
  view_.playhead_us = std::clamp<TimeUs>(t_us, 0, model_.end_us());
  playhead_carry_us_ = 0;
}

void App::step_to_next_event() {
  playing_ = false;
  if (auto t = model_.next_event_after(view_.playhead_us)) seek(*t);
}

void App::bring_into_view(TimeUs t_us) {
  const TimeUs span_us = view_.view_to_us - view_.view_from_us;
  if (span_us <= 0 || (t_us >= view_.view_from_us && t_us <= view_.view_to_us)) return;
  view_.view_from_us = t_us - span_us * 2 / 5;
  view_.view_to_us = view_.view_from_us + span_us;
}

bool App::step_note(int direction) {
  const TimeUs at_us = view_.playhead_us;
  std::optional<TimeUs> to_us;
  const auto& notes = model_.notes();  // in trace order, so by time
  if (direction > 0) {
    for (const Note& n : notes)
      if (n.time_us > at_us) {
        to_us = n.time_us;
        break;
      }
  } else {
    for (auto it = notes.rbegin(); it != notes.rend(); ++it)
      if (it->time_us < at_us) {
        to_us = it->time_us;
        break;
      }
  }
  if (!to_us) return false;
  playing_ = false;
  seek(*to_us);
  bring_into_view(*to_us);
  return true;
}

bool App::step_violation(int direction) {
  const auto& violations = model_.violations();
  const std::vector<size_t>& order = model_.violations_by_start();
  // Violations that start together are stepped one by one: the selected one (when the
  // playhead is at it) is where the step starts from.
  const TimeUs at_us = view_.playhead_us;
  std::optional<size_t> current;
  for (size_t k = 0; k < order.size(); k++)
    if (violations[order[k]].event == view_.selected_event && view_.selected_event >= 0 &&
        violations[order[k]].from_us == at_us)
      current = k;
  std::optional<size_t> to;
  if (current) {
    if (direction > 0 && *current + 1 < order.size()) to = order[*current + 1];
    if (direction < 0 && *current > 0) to = order[*current - 1];
  } else if (direction > 0) {
    for (size_t k = 0; k < order.size() && !to; k++)
      if (violations[order[k]].from_us >= at_us) to = order[k];
  } else {
    for (size_t k = order.size(); k > 0 && !to; k--)
      if (violations[order[k - 1]].from_us < at_us) to = order[k - 1];
  }
  if (!to) return false;
  jump_to_violation(*to);
  return true;
}

bool App::step_actor_event(int direction) {
  const int64_t selected = view_.selected_event;
  if (selected < 0 || size_t(selected) >= trace_.size() ||
      trace_.events()[size_t(selected)].actor.empty()) {
    set_status(tr(S::select_actor_event, ui_lang()));
    return false;
  }
  const std::string& actor = trace_.events()[size_t(selected)].actor;
  const TimeUs at_us = view_.playhead_us;
  const auto& events = trace_.events();
  std::optional<size_t> to;
  if (direction > 0) {
    for (size_t i = size_t(selected) + 1; i < events.size() && !to; i++)
      if (events[i].actor == actor && events[i].time_us >= at_us) to = i;
  } else {
    for (size_t i = size_t(selected); i > 0 && !to; i--)
      if (events[i - 1].actor == actor && events[i - 1].time_us <= at_us) to = i - 1;
  }
  if (!to) return false;
  playing_ = false;
  seek(events[*to].time_us);
  view_.selected_event = int64_t(*to);
  bring_into_view(events[*to].time_us);
  view_.scroll_to_lane = actor;
  return true;
}

void App::jump_to_violation(size_t i) {
  if (i >= model_.violations().size()) return;
  const ViolationRegion& v = model_.violations()[i];
  playing_ = false;
  seek(v.from_us);
  view_.selected_event = v.event;
  bring_into_view(v.from_us);
  if (!v.who.empty()) view_.scroll_to_lane = v.who.front();
}

bool App::toggle_variant(size_t i) {
  if (!scenario_ || i >= scenario_->variants.size()) return false;
  const scenario::Variant& v = scenario_->variants[i];
  if (v.values.empty()) return false;
  std::string& value = variant_[v.name];
  auto at = std::find(v.values.begin(), v.values.end(), value);
  size_t next = at == v.values.end() ? 0 : size_t(at - v.values.begin() + 1) % v.values.size();
  value = v.values[next];
  const std::string chosen = v.name + " = " + value;
  if (backend_ == "fake" && !replay_ && !running()) {
    rerun_in_place();
    if (error_.empty()) set_status(chosen);
  } else {
    set_status(trf(S::for_next_run, ui_lang(), {chosen}));
  }
  return true;
}

// Speeds a class can follow, each step a clear change.
constexpr float kSpeedSteps[] = {0.1f, 0.25f, 0.5f, 1.0f, 2.0f, 5.0f, 10.0f, 20.0f};

void App::speed_up() {
  for (float s : kSpeedSteps)
    if (s > speed_ * 1.001f) {
      set_speed(s);
      return;
    }
}

void App::speed_down() {
  for (auto it = std::rbegin(kSpeedSteps); it != std::rend(kSpeedSteps); ++it)
    if (*it < speed_ * 0.999f) {
      set_speed(*it);
      return;
    }
}

bool App::everything_shown() const {
  return reveal_ || (!running() && view_.playhead_us >= model_.end_us());
}

// ---- The checks' words ----

CheckInfo App::check_info(const std::string& name) const {
  return check_info_of(name, model_.index(), scenario_ ? &*scenario_ : nullptr);
}

void App::ensure_facts() {
  if (facts_generation_ == trace_generation_ && facts_.size() == model_.violations().size()) return;
  facts_generation_ = trace_generation_;
  facts_.clear();
  final_words_.clear();
  check_infos_.clear();
  for (const TraceCheck& c : model_.index().checks()) check_infos_[c.name] = check_info(c.name);
  for (const ViolationRegion& v : model_.violations()) {
    auto it = check_infos_.find(v.check);
    if (it == check_infos_.end()) it = check_infos_.emplace(v.check, check_info(v.check)).first;
    facts_.push_back(violation_facts(v, it->second, model_.index()));
  }
  final_words_lang_ = Lang(255);
}

ViolationWords App::words_of(size_t i, TimeUs at_us) {
  ensure_facts();
  if (i >= facts_.size()) return {};
  const ViolationRegion& v = model_.violations()[i];
  const Lang lang = ui_lang();
  if (at_us < v.to_us) return violation_words(v, facts_[i], at_us, lang);
  // Over: the same words every frame, made once per language.
  if (final_words_lang_ != lang || final_words_.size() != facts_.size()) {
    final_words_.clear();
    for (size_t k = 0; k < facts_.size(); k++)
      final_words_.push_back(
          violation_words(model_.violations()[k], facts_[k], kTimeNeverUs, lang));
    final_words_lang_ = lang;
  }
  return final_words_[i];
}

void App::update_verdicts() {
  verdicts_.clear();
  ensure_facts();
  const auto& violations = model_.violations();
  const bool final = everything_shown();
  const TimeUs at_us = view_.playhead_us;
  const Lang lang = ui_lang();
  for (const CheckLine& c : checks_) {
    Verdict v;
    v.check = c.name;
    v.final = final;
    for (size_t i : model_.violations_by_start())
      if (violations[i].check == c.name && (final || violations[i].from_us <= at_us))
        v.violations.push_back(i);
    if (final) {
      using St = Verdict::State;
      v.state = !c.judged ? St::not_judged : c.ok ? St::holds : St::violated;
      std::vector<const ViolationRegion*> regions;
      std::vector<const ViolationFacts*> facts;
      for (size_t i : v.violations) {
        regions.push_back(&violations[i]);
        facts.push_back(&facts_[i]);
      }
      const TraceCheck* check = nullptr;
      for (const TraceCheck& t : model_.index().checks())
        if (t.name == c.name) check = &t;
      v.text = check ? check_summary_words(*check, check_infos_[c.name], regions, facts,
                                           model_.index(), lang)
                     : c.summary;
      v.expected = c.expected;
    } else if (!v.violations.empty()) {
      // The moment it began; the check's summary (written at the end) would tell the future.
      const ViolationRegion& first = violations[v.violations.front()];
      v.state = Verdict::State::violated;
      v.text =
          trf(S::verdict_at, lang,
              {seconds_words(first.from_us, lang), words_of(v.violations.front(), at_us).sentence});
    } else {
      v.state = Verdict::State::none_yet;
      v.text = tr(S::no_violation_yet, lang);
    }
    verdicts_.push_back(std::move(v));
  }
}

void App::handle_keys() {
  std::vector<KeyPress> keys = std::move(keys_);
  keys_.clear();
  if (ImGui::GetIO().WantTextInput) return;  // typing in a field is not a command
  for (const KeyPress& k : keys) {
    switch (k.key) {
      case Key::space:
        if (playing_)
          pause();
        else
          play();
        break;
      case Key::right:
      case Key::page_down:
        step_note(+1);
        break;
      case Key::left:
      case Key::page_up:
        step_note(-1);
        break;
      case Key::up:
        speed_up();
        break;
      case Key::down:
        speed_down();
        break;
      case Key::r:
        restart();
        break;
      case Key::v:
        reveal_ = !reveal_;
        break;
      case Key::f:
        future_faint_ = !future_faint_;
        break;
      case Key::s:
        stop_at_notes_ = !stop_at_notes_;
        break;
      case Key::n:
        step_violation(k.shift ? -1 : +1);
        break;
      case Key::e:
        step_actor_event(k.shift ? -1 : +1);
        break;
      case Key::h:
      case Key::question:
      case Key::f1:
        help_open_ = !help_open_;
        break;
      case Key::p:
      case Key::f5:
        presenter_ = !presenter_;
        break;
      case Key::escape:
        if (help_open_)
          help_open_ = false;
        else
          presenter_ = false;
        break;
      case Key::zoom_in:
        set_ui_scale(settings_.ui_scale + kUiScaleStep);
        break;
      case Key::zoom_out:
        set_ui_scale(settings_.ui_scale - kUiScaleStep);
        break;
      case Key::zoom_reset:
        set_ui_scale(1.0f);
        break;
      case Key::undo:
        undo();
        break;
      case Key::redo:
        redo();
        break;
      case Key::digit1:
      case Key::digit2:
      case Key::digit3:
      case Key::digit4:
      case Key::digit5:
      case Key::digit6:
      case Key::digit7:
      case Key::digit8:
      case Key::digit9:
        toggle_variant(size_t(int(k.key) - int(Key::digit1)));
        break;
    }
  }
}

void App::advance_playhead(float dt_s) {
  if (!playing_) return;
  double delta_us = double(dt_s) * speed_ * 1e6 + playhead_carry_us_;
  TimeUs whole_us = TimeUs(delta_us);
  playhead_carry_us_ = delta_us - double(whole_us);
  TimeUs t = view_.playhead_us + whole_us;
  if (stop_at_notes_) {
    // The first note this step would pass: the playhead stops on it, so the class reads it.
    for (const Note& n : model_.notes())
      if (n.time_us > view_.playhead_us && n.time_us <= t) {
        t = n.time_us;
        playing_ = false;
        playhead_carry_us_ = 0;
        break;
      }
  }
  if (t >= model_.end_us()) {
    t = model_.end_us();
    if (!running()) playing_ = false;  // a live run keeps playing while it grows
  }
  view_.playhead_us = t;  // the view's `follow` keeps it in sight
}

std::optional<std::string> App::take_png_request() {
  auto r = std::move(png_request_);
  png_request_.reset();
  return r;
}

void App::report_png_result(bool ok, const std::string& path, const std::string& error) {
  if (ok)
    set_status(trf(S::wrote, ui_lang(), {path}));
  else
    set_error(error);
}

// ---- Saving -------------------------------------------------------------------------------

bool App::save_trace(const std::string& path) {
  if (trace_.size() == 0) {
    set_error(tr(S::nothing_to_save, ui_lang()));
    return false;
  }
  if (auto error = app::write_output(path, trace_to_json(trace_))) {
    set_error(*error);
    return false;
  }
  set_status(trf(S::saved_trace_to, ui_lang(), {path}));
  return true;
}

bool App::export_chrome_trace(const std::string& path) {
  if (trace_.size() == 0) {
    set_error(tr(S::nothing_to_export, ui_lang()));
    return false;
  }
  if (auto error = app::write_output(path, scenario::chrome_trace_json(trace_))) {
    set_error(*error);
    return false;
  }
  set_status(trf(S::wrote_chrome, ui_lang(), {path}));
  return true;
}

void App::remember_choices() {
  if (!scenario_) return;
  settings_.scenario = scenario_->id;
  settings_.variant = variant_;
  settings_.param = params_;
  settings_.seed = seed_;
  // Never a password in the settings file (REDIS_PASSWORD supplies it), and the permission to
  // disturb a server is given per session, not remembered.
  settings_.backend = app::without_credentials(backend_, "");
  settings_.time_scale = time_scale_;
}

std::string App::shown_backend() const {
  return app::without_credentials(backend_);
}

void App::save_settings_now() {
  settings_.lang = lang_;
  settings_.speed = speed_;
  settings_.follow = follow_;
  if (options_.persist && !options_.settings_path.empty())
    save_settings(options_.settings_path, settings_);
}

// ---- The frame ----------------------------------------------------------------------------

void App::set_ui_scale(float scale) {
  // In tenths, so that steps up and down come back to the same value.
  scale = std::round(std::clamp(scale, kUiScaleMin, kUiScaleMax) * 10) / 10;
  if (scale == settings_.ui_scale) return;
  settings_.ui_scale = scale;
  save_settings_now();
}

void App::apply_ui_scale() {
  // The style's sizes from the host's (taken once, before any scaling) times the scale. The
  // type is not scaled here: the host rasterises the fonts at the scale (ui_scale()), so
  // large type stays sharp.
  if (!base_style_) base_style_ = ImGui::GetStyle();
  if (applied_ui_scale_ == settings_.ui_scale) return;
  applied_ui_scale_ = settings_.ui_scale;
  ImGuiStyle style = *base_style_;
  if (applied_ui_scale_ != 1.0f) style.ScaleAllSizes(applied_ui_scale_);  // (it rounds down)
  ImGui::GetStyle() = style;
}

void App::frame(float dt_s) {
  widgets_.clear();  // only what this frame draws can be clicked (presenter mode hides panels)
  poll_worker();
  poll_check();
  poll_sweep();
  handle_keys();
  apply_ui_scale();
  advance_playhead(dt_s);
  update_verdicts();

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGuiWindowFlags root_flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings |
                                ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (!presenter_) root_flags |= ImGuiWindowFlags_MenuBar;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("redlab", nullptr, root_flags);
  ImGui::PopStyleVar();
  if (presenter_) {
    draw_presenter();
    ImGui::End();
    draw_help();
    return;
  }

  draw_menu_bar();
  draw_top_bar();
  ImGui::Separator();

  // Below the top bar: library | centre (timeline over narration) | inspector, with
  // draggable splitters; the fractions are remembered in the settings.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float splitter_px = 6;
  const float left_px = std::floor(avail.x * settings_.left_fraction);
  const float right_px = std::floor(avail.x * settings_.right_fraction);
  const float centre_px = std::max(100.0f, avail.x - left_px - right_px - 2 * splitter_px);

  draw_library({left_px, avail.y});
  ImGui::SameLine(0, 0);
  splitter("##split_left", true, &settings_.left_fraction, avail.x, 0.08f, 0.4f,
           {splitter_px, avail.y});
  ImGui::SameLine(0, 0);

  ImGui::BeginGroup();
  const float bottom_px = std::floor(avail.y * settings_.bottom_fraction);
  const float timeline_px = std::max(100.0f, avail.y - bottom_px - splitter_px);
  draw_timeline({centre_px, timeline_px});
  // Dragging down makes the narration smaller: the splitter moves the opposite way.
  float top_fraction = 1.0f - settings_.bottom_fraction;
  if (splitter("##split_bottom", false, &top_fraction, avail.y, 0.35f, 0.92f,
               {centre_px, splitter_px}))
    settings_.bottom_fraction = 1.0f - top_fraction;
  draw_narration({centre_px, bottom_px});
  ImGui::EndGroup();

  ImGui::SameLine(0, 0);
  float right_start = 1.0f - settings_.right_fraction;
  if (splitter("##split_right", true, &right_start, avail.x, 0.6f, 0.92f, {splitter_px, avail.y}))
    settings_.right_fraction = 1.0f - right_start;
  ImGui::SameLine(0, 0);
  draw_inspector({right_px, avail.y});

  ImGui::End();
  draw_exercise();
  draw_compare();
  draw_sweep();
  draw_help();
}

bool App::splitter(const char* id, bool vertical, float* fraction, float total_px,
                   float min_fraction, float max_fraction, ImVec2 size) {
  ImGui::InvisibleButton(id, size);
  bool changed = false;
  if (ImGui::IsItemActive() && total_px > 0) {
    float delta_px = vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
    *fraction = std::clamp(*fraction + delta_px / total_px, min_fraction, max_fraction);
    changed = true;
  }
  if (ImGui::IsItemHovered() || ImGui::IsItemActive())
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
  if (ImGui::IsItemDeactivated()) save_settings_now();
  ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  ImU32 colour = ImGui::GetColorU32(ImGui::IsItemActive()    ? ImGuiCol_SeparatorActive
                                    : ImGui::IsItemHovered() ? ImGuiCol_SeparatorHovered
                                                             : ImGuiCol_Separator);
  if (vertical)
    ImGui::GetWindowDrawList()->AddLine({(a.x + b.x) / 2, a.y}, {(a.x + b.x) / 2, b.y}, colour);
  else
    ImGui::GetWindowDrawList()->AddLine({a.x, (a.y + b.y) / 2}, {b.x, (a.y + b.y) / 2}, colour);
  return changed;
}

}  // namespace redlab::gui
