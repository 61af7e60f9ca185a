// The exercise panel's state and work (gui_panels.cpp draws it): the student's answer (a
// script in the editor, or the settings the exercise leaves open), the grade on a worker
// thread through the one grader `redlab check` uses (app/grade.h), the verdict in the UI's
// language from the failing run's trace, and the progress file.
//
// The grade runs on the fake backend (every run a pure function of its seed, so seed N of
// the verdict is the run "Open seed N" shows). The progress file is written like the
// settings (temporary file + rename); one that cannot be read is reported and left as it is,
// never silently replaced, until the student resets progress.
#include <lua.hpp>

#include <cctype>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/files.h"
#include "app/gui/gui_app.h"

namespace redlab::gui {

namespace fs = std::filesystem;

namespace {

// A progress file holds a few scripts per exercise at most; far more is not one.
constexpr size_t kProgressFileBytesMax = size_t(4) << 20;
constexpr int kProgressReadDeadlineMs = 2000;

// The wall clock, in the app only (sim/ never reads it): when an exercise was checked.
std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

}  // namespace

// ---- Lua -----------------------------------------------------------------------------------

std::optional<ScriptError> lua_compile_error(const std::string& source) {
  lua_State* L = luaL_newstate();
  if (!L) return ScriptError{0, "not enough memory to load the script"};
  std::optional<ScriptError> out;
  // Named as the fake (and Redis) name a script, so the message reads as it would there.
  if (luaL_loadbuffer(L, source.data(), source.size(), "@user_script") != 0) {
    const char* text = lua_tostring(L, -1);
    ScriptError e;
    e.message = text ? text : "";
    // "user_script:3: '=' expected near 'x'": the line, then Lua's words.
    const std::string prefix = "user_script:";
    if (e.message.rfind(prefix, 0) == 0) {
      size_t i = prefix.size();
      int line = 0;
      while (i < e.message.size() && std::isdigit(static_cast<unsigned char>(e.message[i])) &&
             line < 10'000'000)
        line = line * 10 + (e.message[i++] - '0');
      if (i < e.message.size() && e.message[i] == ':') {
        e.line = line;
        e.message = e.message.substr(i + 1);
        while (!e.message.empty() && e.message.front() == ' ') e.message.erase(0, 1);
      }
    }
    out = std::move(e);
  }
  lua_close(L);
  return out;
}

// ---- The progress file ---------------------------------------------------------------------

std::optional<Progress> load_progress(const std::string& path, std::string* error) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Progress{};
  std::string text;
  if (auto read_error = app::read_bounded(path, kProgressFileBytesMax, "a progress file",
                                          kProgressReadDeadlineMs, &text)) {
    *error = *read_error;
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != "redlab-progress" ||
      !j.contains("exercises") || !j["exercises"].is_object()) {
    *error = "not a redlab progress file";
    return std::nullopt;
  }
  Progress out;
  for (auto& [id, e] : j["exercises"].items()) {
    if (!e.is_object() || !e.contains("passed") || !e["passed"].is_boolean() ||
        (e.contains("when") && !e["when"].is_string()) ||
        (e.contains("answer") && !e["answer"].is_string())) {
      *error = "the entry of " + id + " is not one the app writes";
      return std::nullopt;
    }
    out[id] = {e["passed"].get<bool>(), e.value("when", ""), e.value("answer", "")};
  }
  return out;
}

std::optional<std::string> save_progress(const std::string& path, const Progress& progress) {
  nlohmann::ordered_json j;
  j["format"] = "redlab-progress";
  j["version"] = 1;
  nlohmann::ordered_json exercises = nlohmann::ordered_json::object();
  for (auto& [id, e] : progress) {
    nlohmann::ordered_json entry;
    entry["passed"] = e.passed;
    entry["when"] = e.when;
    entry["answer"] = e.answer;
    exercises[id] = entry;
  }
  j["exercises"] = exercises;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  return app::write_output(path, j.dump(2) + "\n");
}

void App::load_progress_file() {
  if (!options_.keep_progress) return;
  if (options_.progress_path.empty() && !config_dir().empty())
    options_.progress_path = (fs::path(config_dir()) / "progress.json").string();
  if (options_.progress_path.empty()) return;
  std::string why;
  if (std::optional<Progress> p = load_progress(options_.progress_path, &why)) {
    progress_ = std::move(*p);
    progress_error_.clear();
  } else {
    progress_error_ = why;
    set_error(trf(S::ex_progress_unreadable, ui_lang(), {options_.progress_path, why}));
  }
}

void App::record_progress(const std::string& id, bool passed, const std::string& answer) {
  ProgressEntry& e = progress_[id];
  // A later failed attempt does not take a pass away: the record says it was passed, when,
  // and with which answer.
  if (!passed && e.passed) return;
  e = {passed, now_utc(), answer};
  if (!options_.keep_progress || options_.progress_path.empty()) return;
  if (!progress_error_.empty()) {
    // The file there could not be read: it is not replaced behind the student's back.
    set_error(trf(
        S::ex_progress_not_saved, ui_lang(),
        {trf(S::ex_progress_unreadable, ui_lang(), {options_.progress_path, progress_error_})}));
    return;
  }
  if (auto error = save_progress(options_.progress_path, progress_))
    set_error(trf(S::ex_progress_not_saved, ui_lang(), {*error}));
}

bool App::reset_progress() {
  progress_.clear();
  progress_error_.clear();
  confirm_reset_ = false;
  if (!options_.keep_progress || options_.progress_path.empty()) return true;
  if (auto error = save_progress(options_.progress_path, progress_)) {
    set_error(trf(S::ex_progress_not_saved, ui_lang(), {*error}));
    return false;
  }
  return true;
}

// ---- The panel's state ---------------------------------------------------------------------

bool App::open_exercise() {
  if (!scenario_ || !scenario_->exercise) {
    set_error(tr(S::ex_none, ui_lang()));
    return false;
  }
  if (exercise_id_ != scenario_->id) {
    // Another exercise: its own hints, answer and verdict.
    exercise_id_ = scenario_->id;
    hints_shown_ = 0;
    exercise_verdict_ = {};
    exercise_script_.clear();
    if (const scenario::ScriptDef* def = scenario_->script(scenario_->exercise->script))
      exercise_script_ = def->source;
    checked_script_.clear();
    script_error_.reset();
    check_script();
  }
  exercise_open_ = true;
  return true;
}

void App::check_script() {
  if (exercise_script_ == checked_script_ && (script_error_ || !checked_script_.empty())) return;
  checked_script_ = exercise_script_;
  script_error_ = lua_compile_error(exercise_script_);
}

bool App::answer_in_runs() const {
  return exercise_open_ && scenario_ && scenario_->exercise && scenario_->id == exercise_id_ &&
         scenario_->exercise->choose.empty() && !scenario_->exercise->script.empty() &&
         checked_script_ == exercise_script_ && !script_error_;
}

void App::show_hint() {
  if (scenario_ && scenario_->exercise && scenario_->id == exercise_id_ &&
      hints_shown_ < scenario_->exercise->hints.size())
    hints_shown_++;
}

std::string App::exercise_answer_text() const {
  if (!scenario_ || !scenario_->exercise) return "";
  const scenario::Exercise& ex = *scenario_->exercise;
  if (ex.choose.empty()) return exercise_script_;
  std::string out;
  for (const std::string& name : ex.choose) {
    if (scenario_->variant(name)) {
      auto it = variant_.find(name);
      out += name + "=" + (it == variant_.end() ? "" : it->second) + "\n";
    } else if (scenario_->param(name)) {
      auto it = params_.find(name);
      out += name + "=" + (it == params_.end() ? "" : std::to_string(it->second)) + "\n";
    }
  }
  return out;
}

bool App::check_exercise() {
  if (!scenario_ || !scenario_->exercise) {
    set_error(tr(S::ex_none, ui_lang()));
    return false;
  }
  if (check_) return false;
  if (exercise_id_ != scenario_->id) open_exercise();
  const scenario::Exercise& ex = *scenario_->exercise;
  scenario::RunOptions answer;
  answer.lang = lang_;
  if (ex.choose.empty()) {
    check_script();
    if (script_error_) return false;  // the editor shows where
    answer.scripts[ex.script] = exercise_script_;
  } else {
    for (const std::string& name : ex.choose) {
      if (scenario_->variant(name) && variant_.count(name)) answer.variant[name] = variant_[name];
      if (scenario_->param(name) && params_.count(name)) answer.set[name] = params_[name];
    }
  }
  // Built in place: a running job neither copies nor moves.
  check_.reset(new CheckJob{
      BackgroundJob<app::GradeResult>(
          [sc = *scenario_, answer](const auto& progress, const std::atomic<bool>* cancel) {
            return app::grade_exercise(sc, answer, 0, app::BackendChoice{}, progress, cancel);
          }),
      scenario_->id, exercise_answer_text()});
  exercise_verdict_ = {};
  return true;
}

void App::cancel_check() {
  if (!check_) return;
  // The grade stops between seeds (a fake run takes milliseconds): joined at once.
  check_->job.stop();
  check_.reset();
  exercise_verdict_ = {};
  exercise_verdict_.state = ExerciseVerdict::State::cancelled;
}

std::pair<int64_t, int64_t> App::check_progress() const {
  return check_ ? check_->job.progress() : std::pair<int64_t, int64_t>{0, 0};
}

void App::poll_check() {
  if (!check_) return;
  auto outcome = check_->job.poll();
  if (!outcome) return;
  std::optional<app::GradeResult> result = std::move(outcome->result);
  const std::string error = std::move(outcome->error);
  const std::string id = check_->scenario_id, answer = check_->answer;
  check_.reset();
  using St = ExerciseVerdict::State;
  ExerciseVerdict v;
  if (!error.empty() || !result) {
    v.state = St::error;
    v.error = error;
    exercise_verdict_ = std::move(v);
    return;
  }
  v.seeds = result->seeds;
  if (result->cancelled) {
    v.state = St::cancelled;
    exercise_verdict_ = std::move(v);
    return;
  }
  if (result->pass) {
    v.state = St::pass;
    exercise_verdict_ = std::move(v);
    record_progress(id, true, answer);
    return;
  }
  v.state = St::fail;
  v.failed_seed = result->failed_seed;
  v.failed = result->failed;
  v.failed_options = result->failed_options;
  exercise_verdict_ = std::move(v);
  record_progress(id, false, answer);
  // The failing seed on the timeline at once, and what went wrong in words from its trace.
  const bool shown = scenario_ && scenario_->id == id && open_failing_seed();
  for (const app::GradeFailure& f : exercise_verdict_.failed) {
    std::array<std::string, kLangCount> words;
    for (int l = 0; l < kLangCount; l++) {
      const Lang L = Lang(l);
      using Why = app::GradeFailure::Why;
      if (f.why == Why::did_not_finish || !shown) {
        words[size_t(l)] =
            f.why == Why::did_not_finish ? trf(S::ex_did_not_finish, L, {f.summary}) : f.text();
        continue;
      }
      const std::string title = check_title(f.check, model_.check_kind(f.check), L);
      const std::string summary = check_summary_in(f.check, L);
      words[size_t(l)] = trf(f.why == Why::should_hold          ? S::ex_should_hold
                             : f.why == Why::should_be_violated ? S::ex_should_be_violated
                                                                : S::ex_not_judged,
                             L, {title, summary.empty() ? f.summary : summary});
    }
    exercise_verdict_.words.push_back(std::move(words));
  }
}

bool App::open_failing_seed() {
  const ExerciseVerdict& v = exercise_verdict_;
  if (v.state != ExerciseVerdict::State::fail || !scenario_ || scenario_->id != exercise_id_)
    return false;
  // The graded run: its settings (the exercise's and the answer's) and its seed, on the fake
  // backend the grade ran on; the student's script comes in through run_options().
  for (auto& [k, value] : v.failed_options.variant) variant_[k] = value;
  for (auto& [k, n] : v.failed_options.set) params_[k] = n;
  seed_ = v.failed_options.seed;
  backend_ = "fake";
  if (!run(false)) return false;
  for (const app::GradeFailure& f : v.failed) {
    if (f.why != app::GradeFailure::Why::should_hold) continue;
    for (size_t i : model_.violations_by_start())
      if (model_.violations()[i].check == f.check) {
        jump_to_violation(i);
        return true;
      }
  }
  return true;
}

std::string App::check_summary_in(const std::string& check, Lang lang) {
  ensure_facts();
  const TraceCheck* found = nullptr;
  for (const TraceCheck& t : model_.index().checks())
    if (t.name == check) found = &t;
  if (!found) return "";
  std::vector<const ViolationRegion*> regions;
  std::vector<const ViolationFacts*> facts;
  for (size_t i : model_.violations_by_start())
    if (model_.violations()[i].check == check && i < facts_.size()) {
      regions.push_back(&model_.violations()[i]);
      facts.push_back(&facts_[i]);
    }
  return check_summary_words(*found, check_infos_[check], regions, facts, model_.index(), lang);
}

}  // namespace redlab::gui
