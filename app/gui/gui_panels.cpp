// The panels around the timeline: the menu bar (files, backend, view, help, language), the
// toolbar (transport, steps by meaning, seed) with the scenario's parameters and variants,
// the scenario library, the inspector and the narration. State and commands live in
// gui_app.cpp; this file only draws and calls them. Every word comes from the catalogue
// (strings.h) or from the scenario in the chosen language.
#include <imgui.h>
#include <imgui_stdlib.h>  // needs imgui.h first (IMGUI_API)

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <set>
#include <string_view>

#include "app/gui/gui_app.h"

namespace redlab::gui {

namespace {

const ImVec4 kHoldsColour{0.05f, 0.50f, 0.15f, 1};
const ImVec4 kViolatedColour{0.80f, 0.08f, 0.08f, 1};
const ImVec4 kMutedColour{0.36f, 0.36f, 0.42f, 1};

// Pool plots: how many points across the run.
constexpr int kPoolPlotPoints = 160;

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void help_marker(const char* text) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

const char* lang_names[][2] = {{"en", "English"}, {"ru", "Русский"}, {"cs", "Čeština"}};

// A variant's value in words (its label from the scenario, else the value itself).
std::string value_words(const scenario::Variant& v, const std::string& value,
                        const std::string& lang) {
  auto it = v.value_labels.find(value);
  std::string text = it == v.value_labels.end() ? value : it->second.get(lang);
  return text.empty() ? value : text;
}

// `text` with line breaks at spaces only, each line at most width_px wide (a longer word stays
// whole), and never between a number and its unit. ImGui's own wrapping also breaks after '.'
// and ',', which would split a time such as "17,004 s" into "17," and "004 s".
std::string wrap_at_spaces(std::string_view text, float width_px) {
  auto is_unit = [](std::string_view w) {
    while (!w.empty() && std::string_view(",.:;)").find(w.back()) != std::string_view::npos)
      w.remove_suffix(1);
    for (std::string_view unit : {"s", "ms", "min", "h", "с", "мс", "мин", "ч"})
      if (w == unit) return true;
    return false;
  };
  const float space_px = ImGui::CalcTextSize(" ").x;
  std::string out;
  float line_px = 0;
  bool line_empty = true;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      out += '\n';
      line_px = 0;
      line_empty = true;
      i++;
      continue;
    }
    if (text[i] == ' ') {
      i++;
      continue;
    }
    auto word_end = [&](size_t from) {
      while (from < text.size() && text[from] != ' ' && text[from] != '\n') from++;
      return from;
    };
    size_t j = word_end(i);
    // A number and its unit go together ("10,081 s:").
    if (j > i && std::isdigit(static_cast<unsigned char>(text[j - 1])) && j + 1 < text.size() &&
        text[j] == ' ' && is_unit(text.substr(j + 1, word_end(j + 1) - j - 1)))
      j = word_end(j + 1);
    const std::string_view word = text.substr(i, j - i);
    const float word_px = ImGui::CalcTextSize(word.data(), word.data() + word.size()).x;
    if (!line_empty && line_px + space_px + word_px > width_px) {
      out += '\n';
      line_px = 0;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      line_px += space_px;
    }
    out += word;
    line_px += word_px;
    line_empty = false;
    i = j;
  }
  return out;
}

// A parameter's unit as the scenario files write it, in words.
std::string unit_words(const std::string& unit, Lang lang) {
  if (unit == "ms") return tr(S::unit_ms, lang);
  if (unit == "conns") return tr(S::unit_conns, lang);
  if (unit == "entries") return tr(S::unit_entries, lang);
  if (unit == "items") return tr(S::unit_items, lang);
  if (unit == "batches") return tr(S::unit_batches, lang);
  if (unit == "events") return tr(S::unit_events, lang);
  if (unit == "messages") return tr(S::unit_messages, lang);
  if (unit == "requests") return tr(S::unit_requests, lang);
  if (unit == "retries") return tr(S::unit_retries, lang);
  return unit;
}

}  // namespace

// ---- Menu bar -----------------------------------------------------------------------------

void App::draw_menu_bar() {
  if (!ImGui::BeginMenuBar()) return;
  const Lang L = ui_lang();
  if (ImGui::BeginMenu(tr(S::menu_file, L))) {
    record("menu_file");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
    ImGui::InputTextWithHint("##path", tr(S::file_path_hint, L), &path_field_);
    record("path");
    auto need_path = [&]() {
      if (path_field_.empty()) set_error(tr(S::need_path, L));
      return !path_field_.empty();
    };
    if (ImGui::MenuItem(tr(S::file_open, L)) && need_path())
      if (open_path(path_field_) && scenario_ && !replay_) run(true);
    help_marker(tr(S::file_open_tip, L));
    if (ImGui::MenuItem(tr(S::file_save_trace, L)) && need_path()) save_trace(path_field_);
    if (ImGui::MenuItem(tr(S::file_export_png, L)) && need_path())
      request_timeline_png(path_field_);
    if (ImGui::MenuItem(tr(S::file_export_chrome, L)) && need_path())
      export_chrome_trace(path_field_);
    help_marker(tr(S::file_export_chrome_tip, L));
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr(S::menu_backend, L))) {
    const bool is_url = backend_ != "fake" && backend_ != "spawn";
    if (ImGui::MenuItem(tr(S::backend_fake, L), nullptr, backend_ == "fake")) backend_ = "fake";
    help_marker(tr(S::backend_tip, L));
    if (ImGui::MenuItem(tr(S::backend_spawn, L), nullptr, backend_ == "spawn")) backend_ = "spawn";
    if (ImGui::MenuItem(tr(S::backend_url, L), nullptr, is_url) && !is_url)
      backend_ = "redis://127.0.0.1:6379";
    settings_.backend = app::without_credentials(backend_, "");
    if (is_url) {
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18);
      ImGui::InputText("##url", &backend_);
      ImGui::Checkbox(tr(S::server_faults, L), &allow_server_faults_);
      help_marker(tr(S::server_faults_tip, L));
    }
    if (backend_ != "fake") {
      // A real run takes the scenario's own time unless scaled (0.1: 25 s in 2.5 s).
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      ImGui::SliderFloat(tr(S::time_scale, L), &time_scale_, 0.05f, 1.0f, "%.2fx",
                         ImGuiSliderFlags_Logarithmic);
      help_marker(tr(S::time_scale_tip, L));
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr(S::menu_view, L))) {
    record("menu_view");
    if (ImGui::MenuItem(tr(S::reveal, L), "V", reveal_)) reveal_ = !reveal_;
    help_marker(tr(S::reveal_tip, L));
    if (ImGui::MenuItem(tr(S::faint, L), "F", future_faint_)) future_faint_ = !future_faint_;
    help_marker(tr(S::faint_tip, L));
    if (ImGui::MenuItem(tr(S::stop_at_notes, L), "S", stop_at_notes_))
      stop_at_notes_ = !stop_at_notes_;
    help_marker(tr(S::stop_at_notes_tip, L));
    if (ImGui::MenuItem(tr(S::follow, L), nullptr, follow_)) follow_ = !follow_;
    help_marker(tr(S::follow_tip, L));
    ImGui::Separator();
    if (ImGui::MenuItem(tr(S::presenter, L), "P")) presenter_ = true;
    help_marker(tr(S::presenter_tip, L));
    if (ImGui::MenuItem(tr(S::larger, L), "Ctrl +"))
      set_ui_scale(settings_.ui_scale + kUiScaleStep);
    if (ImGui::MenuItem(tr(S::smaller, L), "Ctrl -"))
      set_ui_scale(settings_.ui_scale - kUiScaleStep);
    if (ImGui::MenuItem(tr(S::normal_size, L), "Ctrl 0")) set_ui_scale(1.0f);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(tr(S::menu_help, L))) {
    if (ImGui::MenuItem(tr(S::keys_item, L), "H")) help_open_ = true;
    ImGui::EndMenu();
  }
  int lang_index = 0;
  for (int i = 0; i < 3; i++)
    if (lang_ == lang_names[i][0]) lang_index = i;
  const std::string lang_menu =
      std::string(tr(S::menu_language, L)) + ": " + lang_names[lang_index][1];
  if (ImGui::BeginMenu((lang_menu + "###language").c_str())) {
    for (int i = 0; i < 3; i++) {
      if (ImGui::MenuItem(lang_names[i][1], nullptr, i == lang_index) && i != lang_index) {
        set_lang(lang_names[i][0]);
        rerun_in_place();  // narration and notes are written in the run's language
      }
      record(std::string("lang:") + lang_names[i][0]);
    }
    ImGui::EndMenu();
  }
  record("menu_language");
  // What is shown, then what happened last (elided to the room left; whole on hover).
  const std::string title = scenario_ ? scenario_->title.get(lang_) : "";
  const float right_px = ImGui::GetWindowContentRegionMax().x + ImGui::GetWindowPos().x;
  ImGui::Separator();
  const std::string status = error_.empty() ? status_ : "";
  const float status_px = status.empty()
                              ? 0
                              : std::min(ImGui::CalcTextSize(status.c_str()).x,
                                         (right_px - ImGui::GetCursorScreenPos().x) * 0.45f);
  const float title_room = right_px - ImGui::GetCursorScreenPos().x - status_px - 24;
  if (!title.empty() && title_room > 40) {
    std::string shown = title;
    while (shown.size() > 4 && ImGui::CalcTextSize(shown.c_str()).x > title_room) {
      size_t cut = shown.size() - 1;
      while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) cut--;
      shown = shown.substr(0, cut);
    }
    if (shown != title) shown += "\u2026";
    ImGui::TextUnformatted(shown.c_str());
    record("title");
    if (shown != title) help_marker(title.c_str());
  } else if (!scenario_) {
    ImGui::TextDisabled("%s", tr(S::no_scenario_hint, L));
  }
  if (!status.empty()) {
    ImGui::SetCursorScreenPos(ImVec2(std::max(ImGui::GetCursorScreenPos().x, right_px - status_px),
                                     ImGui::GetCursorScreenPos().y));
    ImGui::PushClipRect(ImGui::GetCursorScreenPos(),
                        ImVec2(right_px, ImGui::GetCursorScreenPos().y + ImGui::GetFrameHeight()),
                        true);
    ImGui::TextColored(kMutedColour, "%s", status.c_str());
    ImGui::PopClipRect();
    record("status");
    help_marker(status.c_str());
  }
  ImGui::EndMenuBar();
}

// ---- Top bar ------------------------------------------------------------------------------

void App::draw_top_bar() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const Lang L = ui_lang();

  // Controls flow like words: each group goes on the current line if it fits, else on the
  // next, so a narrow window (a projector at 1280x720) wraps instead of cutting them off.
  bool first = true;
  auto flow = [&](float item_px, float gap_px) {
    if (!first) {
      float right_px = ImGui::GetItemRectMax().x + gap_px + item_px;
      if (right_px <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
        ImGui::SameLine(0, gap_px);
    }
    first = false;
  };
  const float gap_px = style.ItemSpacing.x * 2;
  auto text_px = [](const char* text) { return ImGui::CalcTextSize(text).x; };
  auto button_px = [&](const char* text) { return text_px(text) + style.FramePadding.x * 2; };

  // Row 1: the transport, the steps by meaning, reveal, speed and seed.
  const char* run_label = running() ? tr(S::run_again, L) : tr(S::run, L);
  const char* play_label = playing_ ? tr(S::pause, L) : tr(S::play, L);
  const float play_px = std::max(button_px(tr(S::pause, L)), button_px(tr(S::play, L)));
  flow(button_px(run_label) + play_px + button_px(tr(S::step, L)) + button_px(tr(S::restart, L)) +
           3 * style.ItemSpacing.x,
       gap_px);
  ImGui::BeginGroup();
  if (ImGui::Button((std::string(run_label) + "###run").c_str())) run(true);
  record("run");
  help_marker(tr(S::run_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(play_label) + "###play").c_str(), {play_px, 0})) {
    if (playing_)
      pause();
    else
      play();
  }
  record("pause");
  help_marker(tr(S::play_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::step, L)) + "###step").c_str())) step_to_next_event();
  record("step");
  help_marker(tr(S::step_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::restart, L)) + "###restart").c_str())) restart();
  record("restart");
  help_marker(tr(S::restart_tip, L));
  ImGui::EndGroup();

  // Steps by meaning: a class follows the story note by note, not event by event.
  flow(button_px(tr(S::prev_note, L)) + button_px(tr(S::next_note, L)) +
           button_px(tr(S::next_violation, L)) + button_px(tr(S::next_actor, L)) +
           3 * style.ItemSpacing.x,
       gap_px);
  ImGui::BeginGroup();
  if (ImGui::Button((std::string(tr(S::prev_note, L)) + "###prev_note").c_str())) step_note(-1);
  record("prev_note");
  help_marker(tr(S::prev_note_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::next_note, L)) + "###next_note").c_str())) step_note(+1);
  record("next_note");
  help_marker(tr(S::next_note_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::next_violation, L)) + "###next_violation").c_str()))
    step_violation(+1);
  record("next_violation");
  help_marker(tr(S::next_violation_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::next_actor, L)) + "###next_actor").c_str()))
    step_actor_event(+1);
  record("next_actor_event");
  help_marker(tr(S::next_actor_tip, L));
  ImGui::EndGroup();

  const char* reveal_label = reveal_ ? tr(S::hide_future, L) : tr(S::reveal, L);
  flow(button_px(reveal_label), gap_px);
  if (ImGui::Button((std::string(reveal_label) + "###reveal").c_str())) reveal_ = !reveal_;
  record("reveal");
  help_marker(tr(S::reveal_tip, L));

  // The scenario's exercise (when it has one): the panel opens and closes.
  if (scenario_ && scenario_->exercise) {
    flow(button_px(tr(S::exercise_button, L)), gap_px);
    if (ImGui::Button((std::string(tr(S::exercise_button, L)) + "###exercise").c_str())) {
      if (exercise_open_ && exercise_id_ == scenario_->id)
        close_exercise();
      else
        open_exercise();
    }
    record("exercise");
    help_marker(tr(S::exercise_button_tip, L));
  }
  // The lab: this run against another, and a parameter swept (their own windows).
  flow(button_px(tr(S::cmp_button, L)) + button_px(tr(S::sw_button, L)) + style.ItemSpacing.x,
       gap_px);
  if (ImGui::Button((std::string(tr(S::cmp_button, L)) + "###compare").c_str())) open_compare();
  record("compare");
  help_marker(tr(S::cmp_button_tip, L));
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::sw_button, L)) + "###sweep").c_str())) open_sweep();
  record("sweep");
  help_marker(tr(S::sw_button_tip, L));

  // The slider shows the value in the language's words ("1,5×"): a format with no printf
  // directive is drawn as it is ('%' doubled), and typing a value in (Ctrl+click) is off.
  std::string speed_format;
  for (char c : std::string(tr(S::speed, L)) + " " + speed_words(speed_, L))
    speed_format += c == '%' ? std::string("%%") : std::string(1, c);
  const float speed_px =
      text_px((std::string(tr(S::speed, L)) + " " + speed_words(20.0, L)).c_str()) + 40;
  flow(speed_px, gap_px);
  ImGui::SetNextItemWidth(speed_px);
  float speed = speed_;
  if (ImGui::SliderFloat("##speed", &speed, 0.1f, 20.0f, speed_format.c_str(),
                         ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoInput))
    set_speed(speed);
  record("speed");
  help_marker(tr(S::speed_tip, L));

  const float seed_px = text_px("0000000000") + 24;
  flow(text_px(tr(S::seed, L)) + seed_px + style.ItemSpacing.x, gap_px);
  ImGui::BeginGroup();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr(S::seed, L));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(seed_px);
  ImGui::InputScalar("##seed", ImGuiDataType_U64, &seed_, nullptr, nullptr, "%" PRIu64);
  record("seed");
  if (ImGui::IsItemDeactivatedAfterEdit()) rerun_in_place();
  ImGui::EndGroup();
  help_marker(tr(S::seed_tip, L));
  if (backend_ != "fake") {
    flow(text_px(trf(S::backend_shown, L, {shown_backend()}).c_str()), gap_px);
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(kMutedColour, "%s", trf(S::backend_shown, L, {shown_backend()}).c_str());
  }

  // Row 2: the scenario's parameters and variants, on a new line.
  first = true;
  if (scenario_) {
    for (auto& p : scenario_->params) {
      std::string label = p.label.get(lang_);
      if (label.empty()) label = p.name;
      const float slider_px = ImGui::GetFontSize() * 9;
      flow(text_px(label.c_str()) + slider_px + style.ItemInnerSpacing.x, gap_px);
      ImGui::BeginGroup();
      int64_t& value = params_[p.name];
      // ('%' would be a format directive in a unit's words.)
      std::string unit = unit_words(p.unit, L);
      std::replace(unit.begin(), unit.end(), '%', ' ');
      std::string format = "%" PRId64 " " + unit;
      ImGui::SetNextItemWidth(slider_px);
      ImGui::SliderScalar(("##p_" + p.name).c_str(), ImGuiDataType_S64, &value, &p.min, &p.max,
                          format.c_str());
      if (ImGui::IsItemDeactivatedAfterEdit()) rerun_in_place();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", trf(S::param_tip, L,
                                    {p.name, std::to_string(p.min), std::to_string(p.max),
                                     unit_words(p.unit, L), std::to_string(p.def)})
                                    .c_str());
      ImGui::SameLine(0, style.ItemInnerSpacing.x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(label.c_str());
      ImGui::EndGroup();
    }
    for (auto& v : scenario_->variants) {
      std::string label = v.label.get(lang_);
      if (label.empty()) label = v.name;
      std::string& value = variant_[v.name];
      std::string values;
      for (auto& val : v.values) values += (values.empty() ? "" : ", ") + val;
      const std::string tip = trf(S::variant_tip, L, {v.name, values});
      const bool on_off = v.values.size() == 2 && v.values[0] == "off" && v.values[1] == "on";
      if (on_off) {
        flow(text_px(label.c_str()) + ImGui::GetFrameHeight() + style.ItemInnerSpacing.x, gap_px);
        bool on = value == "on";
        if (ImGui::Checkbox((label + "##v_" + v.name).c_str(), &on)) {
          value = on ? "on" : "off";
          rerun_in_place();
        }
        help_marker(tip.c_str());
      } else {
        float combo_px = 60;
        for (auto& val : v.values)
          combo_px = std::max(combo_px, text_px(value_words(v, val, lang_).c_str()) +
                                            ImGui::GetFrameHeight() + style.FramePadding.x * 2);
        flow(text_px(label.c_str()) + combo_px + style.ItemInnerSpacing.x, gap_px);
        ImGui::BeginGroup();
        ImGui::SetNextItemWidth(combo_px);
        if (ImGui::BeginCombo(("##v_" + v.name).c_str(), value_words(v, value, lang_).c_str())) {
          for (auto& val : v.values)
            if (ImGui::Selectable((value_words(v, val, lang_) + "##" + val).c_str(),
                                  val == value) &&
                val != value) {
              value = val;
              rerun_in_place();
            }
          ImGui::EndCombo();
        }
        help_marker(tip.c_str());
        ImGui::SameLine(0, style.ItemInnerSpacing.x);
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(label.c_str());
        ImGui::EndGroup();
      }
    }
  }

  // An error stays until dismissed or replaced; a long one (a located scenario error with its
  // path) wraps on a line of its own.
  if (!error_.empty()) {
    const std::string message = trf(S::error_prefix, L, {error_});
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetWindowContentRegionMax().x - ImGui::GetFrameHeight() * 2);
    ImGui::TextColored(kViolatedColour, "%s", message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    record("error");
    ImGui::SameLine();
    if (ImGui::SmallButton("x##dismiss")) error_.clear();
    help_marker(tr(S::dismiss_tip, L));
  }
}

// ---- Library ------------------------------------------------------------------------------

void App::draw_library(ImVec2 size) {
  const Lang L = ui_lang();
  ImGui::BeginChild("library", size, true);
  record_window("library");
  ImGui::TextUnformatted(tr(S::scenarios, L));
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##search", tr(S::search, L), &library_filter_);
  // Progress kept: a way to forget it, above the list (always in view).
  if (!progress_.empty() || !progress_error_.empty()) draw_reset_progress();
  const std::string needle = lower(library_filter_);
  auto matches = [&](const ScenarioEntry& e) {
    if (needle.empty()) return true;
    if (lower(e.id).find(needle) != std::string::npos) return true;
    if (lower(e.topic).find(needle) != std::string::npos) return true;
    for (auto& [lang, text] : e.title.by_lang)
      if (lower(text).find(needle) != std::string::npos) return true;
    return false;
  };
  std::set<std::string> topics;
  for (auto& e : library_) topics.insert(e.topic);
  int shown = 0;
  for (auto& topic : topics) {
    bool any = false;
    for (auto& e : library_) any = any || (e.topic == topic && matches(e));
    if (!any) continue;
    ImGui::SetNextItemOpen(true, ImGuiCond_Once);
    if (!ImGui::TreeNode((topic_words(topic, L) + "###topic_" + topic).c_str())) continue;
    for (auto& e : library_) {
      if (e.topic != topic || !matches(e)) continue;
      shown++;
      std::string title = e.title.get(lang_);
      if (title.empty()) title = e.id;
      bool current = scenario_ && scenario_->id == e.id;
      const bool passed = exercise_passed(e.id);
      const float mark_px = ImGui::GetFontSize();
      // Titles are sentences: wrap them instead of cutting them off (before a passed mark).
      const float wrap_px = ImGui::GetContentRegionAvail().x - (passed ? mark_px * 1.3f : 0);
      const ImVec2 text_size = ImGui::CalcTextSize(title.c_str(), nullptr, false, wrap_px);
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::Selectable(("##" + e.id).c_str(), current, 0, {0, text_size.y})) {
        if (open_scenario(e.id)) run(true);
      }
      ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at,
                                          ImGui::GetColorU32(ImGuiCol_Text), title.c_str(), nullptr,
                                          wrap_px);
      record("library:" + e.id);
      if (passed) {
        // A tick at the row's end: the exercise was passed (drawn, so no font needs a glyph).
        const ImVec2 row_max = ImGui::GetItemRectMax(), row_min = ImGui::GetItemRectMin();
        const float x = row_max.x - mark_px * 1.1f, y = row_min.y + mark_px * 0.55f;
        const ImVec2 tick[] = {{x, y},
                               {x + mark_px * 0.3f, y + mark_px * 0.3f},
                               {x + mark_px * 0.85f, y - mark_px * 0.35f}};
        ImGui::GetWindowDrawList()->AddPolyline(tick, 3, ImGui::GetColorU32(kHoldsColour), 0,
                                                std::max(2.0f, mark_px * 0.14f));
        widgets_["passed:" + e.id] = {{x, y - mark_px * 0.35f},
                                      {x + mark_px * 0.85f, y + mark_px * 0.3f}};
      }
      if (ImGui::IsItemHovered()) {
        std::string tip = e.id + "\n" + e.path;
        if (passed) tip += "\n" + trf(S::ex_passed_on, L, {progress_.at(e.id).when});
        ImGui::SetTooltip("%s", tip.c_str());
      }
    }
    ImGui::TreePop();
  }
  if (shown == 0 && !library_.empty()) ImGui::TextDisabled("%s", tr(S::nothing_matches, L));
  if (library_.empty()) ImGui::TextDisabled("%s", tr(S::no_scenarios, L));
  ImGui::EndChild();
}

// ---- Timeline -----------------------------------------------------------------------------

void App::draw_timeline_view(ImVec2 size) {
  // Marks, labels and the name column grow with the type (the UI scale, presenter mode).
  const float font_px = ImGui::GetFontSize();
  view_.scale = base_font_px_ > 0 ? font_px / base_font_px_ : 1.0f;
  view_.label_width_px = 110 * view_.scale;
  view_.ruler_height_px = font_px + 8 * view_.scale;
  // The app's look is always light: lane names in near-black, not the view's neutral grey.
  view_.palette.label_text = IM_COL32(25, 25, 35, 255);
  // Rows are readable (the type fits) and grow to fill the height, up to three lines of type.
  view_.row_height_px = font_px + 4 * view_.scale;
  view_.row_height_max_px = 3 * font_px;
  view_.lang = ui_lang();
  view_.words = [this](size_t vi, TimeUs at_us) { return words_of(vi, at_us); };
  view_.check_title = [this](const std::string& check) { return title_of(check); };
  // The view follows the playhead only while it moves: a paused playhead outside the view
  // (a screenshot of a run's busy part, the user zoomed elsewhere) must not pull it away.
  view_.follow = follow_ && (playing_ || running());
  // What has happened, unless everything is to be shown.
  view_.horizon_us = everything_shown() ? kTimeNeverUs : view_.playhead_us;
  view_.future_faint = future_faint_;
  draw_whatif_timeline(size);  // view_.draw with the what-if layers (whatif.cpp)
}

void App::draw_timeline(ImVec2 size) {
  const Lang L = ui_lang();
  ImGui::BeginChild("timeline", size, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  record_window("timeline");
  // One line that says what is on screen, so a screenshot explains itself.
  std::string head = source_kind_ == SourceKind::run ? trf(S::run_of, L, {source_})
                     : source_kind_ == SourceKind::live
                         ? trf(S::live_run_of, L, {source_, shown_backend()})
                     : source_kind_ == SourceKind::trace ? source_
                                                         : std::string(tr(S::nothing_yet, L));
  if (!trace_.meta().empty()) {
    auto& meta = trace_.meta();
    // (The variants are on the toolbar, in words; here the seed, which is not.)
    if (auto it = meta.find("seed"); it != meta.end())
      head += "  ·  " + trf(S::seed_is, L, {it->second});
  }
  if (!interventions_.empty() && source_kind_ == SourceKind::run)
    head +=
        "  ·  " + trf(S::wi_caption, L, {plural(int64_t(interventions_.size()), S::wi_plural, L)});
  std::string at = trf(S::playhead_of, L,
                       {seconds_words(view_.playhead_us, L), seconds_words(model_.end_us(), L)});
  if (running()) at += std::string("  ") + tr(S::running_dots, L);
  const float at_px = ImGui::CalcTextSize(at.c_str()).x;
  const float room_px = ImGui::GetContentRegionAvail().x - at_px - ImGui::GetStyle().ItemSpacing.x;
  // The head gives way to the playhead's time (which matters more), elided, whole on hover.
  std::string head_shown = head;
  while (head_shown.size() > 4 && ImGui::CalcTextSize(head_shown.c_str()).x > room_px) {
    size_t cut = head_shown.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(head_shown[cut]) & 0xC0) == 0x80) cut--;
    head_shown = head_shown.substr(0, cut);
  }
  if (head_shown != head) head_shown += "\u2026";
  ImGui::TextUnformatted(head_shown.c_str());
  if (head_shown != head) help_marker(head.c_str());
  ImGui::SameLine();
  ImGui::SetCursorPosX(
      std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - at_px));
  ImGui::TextColored(kMutedColour, "%s", at.c_str());
  record("playhead_text");
  draw_timeline_view(ImVec2(0, 0));
  ImGui::EndChild();
}

// ---- Verdicts -----------------------------------------------------------------------------

void App::draw_verdicts(bool compact) {
  // Again here: a panel drawn earlier in this frame may have replaced the run (the library,
  // a variant), and the verdicts point into its violations.
  update_verdicts();
  const Lang L = ui_lang();
  using St = Verdict::State;
  const auto& violations = model_.violations();
  const ImGuiStyle& style = ImGui::GetStyle();
  std::vector<std::string> quiet;  // compact: the checks with nothing to look at
  for (const Verdict& v : verdicts_) {
    const bool unexpected =
        v.final && v.expected && v.state != St::not_judged && *v.expected != (v.state == St::holds);
    if (compact && v.state != St::violated && !unexpected) {
      quiet.push_back(title_of(v.check));
      continue;
    }
    const char* word = v.state == St::violated   ? tr(S::word_violated, L)
                       : v.state == St::holds    ? tr(S::word_holds, L)
                       : v.state == St::none_yet ? tr(S::word_so_far, L)
                                                 : tr(S::word_not_judged, L);
    const ImVec4 colour = v.state == St::violated ? kViolatedColour
                          : v.state == St::holds  ? kHoldsColour
                                                  : kMutedColour;
    ImGui::TextColored(colour, "%s", word);
    ImGui::SameLine();
    const std::string line = title_of(v.check) + (v.final || L != Lang::en ? ": " : " ") + v.text;
    const float wrap_px = ImGui::GetContentRegionAvail().x;
    const std::string shown = wrap_at_spaces(line, wrap_px);
    if (v.violations.empty()) {
      ImGui::TextUnformatted(shown.c_str());
    } else {
      // The whole line is a button: it takes the class to the moment of failure.
      const ImVec2 text_size = ImGui::CalcTextSize(shown.c_str());
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::Selectable(("##verdict:" + v.check).c_str(), false, 0, {wrap_px, text_size.y}))
        jump_to_violation(v.violations.front());
      record("verdict:" + v.check);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s", trf(S::go_to, L,
                      {words_of(v.violations.front(), v.final ? kTimeNeverUs : view_.playhead_us)
                           .sentence,
                       seconds_words(violations[v.violations.front()].from_us, L)})
                      .c_str());
      // The words over the button, as text (so ImGui's log sees them too); the same height, so
      // the cursor ends where the button left it.
      ImGui::SetCursorScreenPos(at);
      ImGui::TextUnformatted(shown.c_str());
    }
    if (unexpected) {
      ImGui::Indent();
      ImGui::TextColored(kViolatedColour, "%s",
                         tr(*v.expected ? S::unexpected_hold : S::unexpected_fail, L));
      ImGui::Unindent();
    }
    // Each further violation: a small button at its moment, flowing like words.
    const size_t more = v.violations.size() > 1 ? v.violations.size() - 1 : 0;
    constexpr size_t kMoreShownMax = 24;
    if (more > 0) {
      ImGui::Indent();
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(
          kMutedColour, "%s",
          trf(v.final ? S::more : S::more_so_far, L, {std::to_string(more)}).c_str());
      for (size_t k = 1; k < v.violations.size() && k <= kMoreShownMax; k++) {
        const ViolationRegion& r = violations[v.violations[k]];
        std::string who;
        for (auto& w : r.who) who += (who.empty() ? "" : ", ") + w;
        const std::string label = seconds_words(r.from_us, L) + (who.empty() ? "" : " " + who) +
                                  "##" + v.check + std::to_string(k);
        const float w = ImGui::CalcTextSize(label.c_str(), nullptr, true).x +
                        style.FramePadding.x * 2 + style.ItemSpacing.x;
        if (ImGui::GetItemRectMax().x + w <
            ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
          ImGui::SameLine();
        if (ImGui::SmallButton(label.c_str())) jump_to_violation(v.violations[k]);
        record("verdict:" + v.check + ":" + std::to_string(k));
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s",
                            words_of(v.violations[k], v.final ? kTimeNeverUs : view_.playhead_us)
                                .sentence.c_str());
      }
      if (more > kMoreShownMax) {
        ImGui::SameLine();
        ImGui::TextColored(kMutedColour, "%s", tr(S::n_steps_all, L));
      }
      ImGui::Unindent();
    }
  }
  if (!quiet.empty()) {
    std::string names;
    for (auto& q : quiet) names += (names.empty() ? "" : ", ") + q;
    const bool final = !verdicts_.empty() && verdicts_.front().final;
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(kMutedColour, "%s",
                       trf(final ? S::quiet_final : S::quiet_so_far, L, {names}).c_str());
    ImGui::PopTextWrapPos();
  }
  if (!verdicts_.empty() && verdicts_.front().final) {
    if (auto met = model_.index().expectation_met())
      ImGui::TextColored(*met ? kHoldsColour : kViolatedColour, "%s",
                         tr(*met ? S::expectation_met : S::expectation_not_met, L));
  } else if (!verdicts_.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(kMutedColour, "%s", tr(S::so_far_note, L));
    ImGui::PopTextWrapPos();
  }
}

// ---- Presenter mode -----------------------------------------------------------------------

void App::draw_presenter() {
  const Lang L = ui_lang();
  if (large_font_) ImGui::PushFont(large_font_);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float right_x = ImGui::GetWindowContentRegionMax().x;

  // Line 1: what is shown, and where the playhead is.
  std::string state = std::string(tr(playing_ ? S::state_playing : S::state_paused, L)) + "   " +
                      seconds_words(view_.playhead_us, L) + " / " +
                      seconds_words(model_.end_us(), L);
  state += "   " + speed_words(speed_, L);
  if (reveal_) state += std::string("   ") + tr(S::state_revealed, L);
  if (stop_at_notes_) state += std::string("   ") + tr(S::state_stops, L);
  const float state_px = ImGui::CalcTextSize(state.c_str()).x;
  const std::string title = scenario_ ? scenario_->title.get(lang_) : source_;
  const float title_room = right_x - state_px - 2 * style.ItemSpacing.x;
  std::string title_shown = title;
  while (title_shown.size() > 4 && ImGui::CalcTextSize(title_shown.c_str()).x > title_room) {
    size_t cut = title_shown.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(title_shown[cut]) & 0xC0) == 0x80) cut--;
    title_shown = title_shown.substr(0, cut);
  }
  if (title_shown != title) title_shown += "\u2026";
  ImGui::TextUnformatted(title_shown.c_str());
  ImGui::SameLine();
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX() + style.ItemSpacing.x, right_x - state_px));
  ImGui::TextColored(kMutedColour, "%s", state.c_str());

  // Line 2: the variants with the digit that toggles each, and where the keys are.
  std::string variants;
  if (scenario_)
    for (size_t i = 0; i < scenario_->variants.size() && i < 9; i++) {
      const scenario::Variant& v = scenario_->variants[i];
      std::string label = v.label.get(lang_);
      if (label.empty()) label = v.name;
      variants += (variants.empty() ? "" : "     ") + std::to_string(i + 1) + ": " + label + ": " +
                  value_words(v, variant_[v.name], lang_);
    }
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(kMutedColour, "%s%s%s", variants.c_str(), variants.empty() ? "" : "     ",
                     tr(S::keys_hint, L));
  ImGui::PopTextWrapPos();
  record("presenter_variants");

  // The caption: the newest note at the playhead.
  const Note* current = nullptr;
  for (const Note& n : model_.notes())
    if (n.time_us <= view_.playhead_us) current = &n;
  std::string caption =
      current ? (current->actor.empty() ? "" : current->actor + ": ") + current->text_in(size_t(L))
              : std::string(tr(S::caption_hint, L));
  const float width_px = ImGui::GetContentRegionAvail().x;
  const float caption_px = std::min(ImGui::CalcTextSize(caption.c_str(), nullptr, false,
                                                        width_px - 4 * style.WindowPadding.x)
                                        .y,
                                    3 * ImGui::GetTextLineHeightWithSpacing()) +
                           2 * style.WindowPadding.y + 4;
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(1.0f, 0.97f, 0.82f, 1));
  ImGui::BeginChild("caption", {width_px, caption_px}, true, ImGuiWindowFlags_NoScrollbar);
  record_window("caption");
  ImGui::PushTextWrapPos(0);
  if (current)
    ImGui::TextUnformatted(caption.c_str());
  else
    ImGui::TextColored(kMutedColour, "%s", caption.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndChild();
  ImGui::PopStyleColor();
  caption_shown_ = current ? caption : "";

  // The verdicts so far under the timeline, the timeline taking the rest.
  size_t verdict_lines = 3;  // the line of quiet checks (it may wrap) and the "so far" line
  for (const Verdict& v : verdicts_)
    if (v.state == Verdict::State::violated) verdict_lines += v.violations.size() > 1 ? 2 : 1;
  const float verdicts_px = std::min(
      float(verdict_lines + 1) * ImGui::GetTextLineHeightWithSpacing() + 2 * style.WindowPadding.y,
      ImGui::GetContentRegionAvail().y * 0.3f);
  const float timeline_px =
      std::max(100.0f, ImGui::GetContentRegionAvail().y - verdicts_px - style.ItemSpacing.y);
  ImGui::BeginChild("timeline", {width_px, timeline_px}, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  record_window("timeline");
  draw_timeline_view(ImVec2(0, 0));
  ImGui::EndChild();
  ImGui::BeginChild("verdicts", {width_px, 0}, true);
  record_window("verdicts");
  draw_verdicts(true);
  ImGui::EndChild();
  if (large_font_) ImGui::PopFont();
}

void App::draw_help() {
  if (!help_open_) return;
  const Lang L = ui_lang();
  if (presenter_ && large_font_) ImGui::PushFont(large_font_);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x / 2, vp->WorkPos.y + vp->WorkSize.y / 2},
                          ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.97f);
  if (ImGui::Begin((std::string(tr(S::keys_item, L)) + "###keys").c_str(), &help_open_,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove |
                       ImGuiWindowFlags_NoScrollbar)) {
    record_window("help");
    resume_text_capture();
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& [key, what] : keys_help(L)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(key.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what.c_str());
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
  if (presenter_ && large_font_) ImGui::PopFont();
}

// ---- Inspector ----------------------------------------------------------------------------

void App::draw_inspector(ImVec2 size) {
  const Lang L = ui_lang();
  ImGui::BeginChild("inspector", size, true);
  record_window("inspector");
  if (ImGui::CollapsingHeader((std::string(tr(S::selected_event, L)) + "###selected").c_str(),
                              ImGuiTreeNodeFlags_DefaultOpen))
    draw_selected_event();
  draw_whatif_panel();
  if (ImGui::CollapsingHeader((std::string(tr(S::keyspace_header, L)) + "###keyspace").c_str(),
                              ImGuiTreeNodeFlags_DefaultOpen))
    draw_keyspace();
  if (ImGui::CollapsingHeader((std::string(tr(S::pools_header, L)) + "###pools").c_str(),
                              ImGuiTreeNodeFlags_DefaultOpen))
    draw_pool_stats();
  // Open when the run logged anything: then it names the command everyone waited behind.
  if (ImGui::CollapsingHeader(
          (std::string(tr(S::slowlog_header, L)) + "###slowlog").c_str(),
          model_.index().of_kind("slowlog").empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen))
    draw_slowlog();
  if (ImGui::CollapsingHeader((std::string(tr(S::client_options, L)) + "###options").c_str())) {
    if (model_.client_options().empty()) ImGui::TextDisabled("%s", tr(S::none_in_trace, L));
    for (auto& [host, text] : model_.client_options()) {
      ImGui::TextUnformatted(host.c_str());
      ImGui::Indent();
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(kMutedColour, "%s", text.c_str());
      ImGui::PopTextWrapPos();
      ImGui::Unindent();
    }
  }
  ImGui::EndChild();
}

void App::draw_selected_event() {
  const Lang L = ui_lang();
  int64_t index = view_.selected_event;
  if (index < 0 || size_t(index) >= trace_.size()) {
    ImGui::PushTextWrapPos(0);  // a narrow panel at 1280x720 must not cut the hint
    ImGui::TextDisabled("%s", tr(S::click_an_event, L));
    ImGui::PopTextWrapPos();
    return;
  }
  const TraceEvent& e = trace_.events()[size_t(index)];
  ImGui::PushTextWrapPos(0);
  if (e.kind == "violation") {
    // Written when the run ended; what matters is the span it covers.
    ImGui::TextColored(kViolatedColour, "%s",
                       trf(S::violated_from_to, L,
                           {title_of(std::string(e.str_or(F::check))),
                            seconds_words(e.num_or(F::from_us, e.time_us), L),
                            seconds_words(e.num_or(F::to_us, e.time_us), L)})
                           .c_str());
    for (size_t i = 0; i < model_.violations().size(); i++)
      if (model_.violations()[i].event == index)
        ImGui::TextUnformatted(words_of(i, kTimeNeverUs).sentence.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::TextUnformatted(
      trf(S::event_at, L, {event_kind_label(e.kind, L), seconds_words(e.time_us, L)}).c_str());
  if (!e.actor.empty()) ImGui::TextUnformatted(trf(S::actor_is, L, {e.actor}).c_str());
  if (e.connection >= 0) {
    std::string server = model_.server_of(e.connection);
    ImGui::TextUnformatted((server.empty()
                                ? trf(S::connection_n, L, {std::to_string(e.connection)})
                                : trf(S::connection_to, L, {std::to_string(e.connection), server}))
                               .c_str());
  }
  if (e.step >= 0) ImGui::TextUnformatted(trf(S::step_n, L, {std::to_string(e.step)}).c_str());
  if (e.attempt >= 0)
    ImGui::TextUnformatted(
        trf(e.attempt == 0 ? S::attempt_first : S::attempt_retry, L, {std::to_string(e.attempt)})
            .c_str());
  // The event's text: the engine's words (English), except notes, which the scenario gives in
  // the run's language. Its typed fields below say the same in any language.
  const bool text_in_language = L == Lang::en || e.kind == "note" || e.kind == "narration";
  if (!e.text.empty() && text_in_language) {
    ImGui::Separator();
    const auto* texts = e.list(F::texts);
    ImGui::TextUnformatted(texts && texts->size() == 3 ? (*texts)[size_t(L)].c_str()
                                                       : e.text.c_str());
  }
  // The typed fields: what the event says, exactly (argv, reply, token, TTL, fence, ...).
  if (!e.fields.empty()) {
    ImGui::Separator();
    const Lang lang = L;
    auto check_title = [this, lang](F field, std::string_view name) {
      const std::string n(name);
      return field == F::check ? title_of(n) : gui::check_title(n, n, lang);
    };
    for (const std::string& line : event_fields_words(e, L, check_title))
      ImGui::TextColored(kMutedColour, "%s", line.c_str());
  }
  if (e.span > 0)
    ImGui::TextColored(kMutedColour, "%s",
                       trf(S::begins_span, L, {std::to_string(e.span)}).c_str());
  if (e.ends > 0)
    ImGui::TextColored(kMutedColour, "%s", trf(S::ends_span, L, {std::to_string(e.ends)}).c_str());
  // A span that starts here (a command and its reply, a pool wait, work): its end and
  // length. Found once per selection: a long trace has millions of items.
  if (selected_span_event_ != index || selected_span_generation_ != trace_generation_) {
    selected_span_event_ = index;
    selected_span_generation_ = trace_generation_;
    selected_span_.reset();
    for (auto& lane : model_.lanes())
      for (auto& row : lane.rows)
        for (auto& item : row.items)
          if (!selected_span_ && item.begin_event == index && item.end_event != index)
            selected_span_ = item;
  }
  if (selected_span_) {
    const Item& item = *selected_span_;
    if (item.open()) {
      ImGui::TextColored(kMutedColour, "%s",
                         trf(S::still_open_what, L, {event_kind_label(e.kind, L)}).c_str());
    } else if (item.end_event >= 0 && size_t(item.end_event) < trace_.size()) {
      const TraceEvent& end = trace_.events()[size_t(item.end_event)];
      ImGui::Separator();
      ImGui::TextUnformatted(
          trf(S::ended_after, L,
              {event_kind_label(end.kind, L), seconds_words(item.to_us - item.from_us, L)})
              .c_str());
      std::string summary = event_summary(end, 120, !text_in_language);
      if (!summary.empty()) ImGui::TextUnformatted(summary.c_str());
    }
  }
  ImGui::PopTextWrapPos();
}

bool App::moved_since(AtEvent& read) const {
  const AtEvent now{model_.first_event_after(view_.playhead_us), trace_generation_};
  if (read == now) return false;
  read = now;
  return true;
}

void App::draw_slowlog() {
  const Lang L = ui_lang();
  // The log changes only at an event: re-read it when the playhead passes one.
  if (moved_since(slowlog_read_)) {
    slowlog_.clear();
    for (const std::string& server : model_.servers())
      slowlog_.push_back({server, model_.server_observed(server)
                                      ? model_.slowlog_at(server, view_.playhead_us)
                                      : std::vector<SlowlogRow>{}});
  }
  if (slowlog_.empty()) {
    ImGui::TextDisabled("%s", tr(S::no_servers, L));
    return;
  }
  ImGui::PushTextWrapPos(0);
  for (auto& [server, rows] : slowlog_) {
    if (!model_.server_observed(server)) {
      ImGui::TextUnformatted(trf(S::not_observed, L, {server}).c_str());
      ImGui::TextColored(kMutedColour, "%s", tr(S::slowlog_not_observed_why, L));
      continue;
    }
    ImGui::TextUnformatted(
        trf(S::slowlog_n, L, {server, plural(int64_t(rows.size()), S::entries_plural, L)}).c_str());
    const size_t rows_max = 20;  // SLOWLOG GET shows 10 by default; the newest matter
    for (size_t i = 0; i < rows.size() && i < rows_max; i++) {
      const SlowlogRow& r = rows[i];
      std::string line;
      for (const std::string& arg : r.argv) line += (line.empty() ? "" : " ") + arg;
      const std::string shown = line.size() > 60 ? line.substr(0, 57) + "..." : line;
      ImGui::TextUnformatted(
          trf(S::slowlog_entry, L, {std::to_string(r.id), time_words(r.duration_us, L), shown})
              .c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s",
                          trf(S::slowlog_entry_tip, L,
                              {line, time_words(r.duration_us, L), seconds_words(r.logged_at_us, L),
                               std::to_string(r.connection)})
                              .c_str());
    }
    if (rows.size() > rows_max)
      ImGui::TextColored(kMutedColour, "%s",
                         trf(S::n_more_rows, L, {std::to_string(rows.size() - rows_max)}).c_str());
  }
  ImGui::PopTextWrapPos();
}

void App::draw_keyspace() {
  const Lang L = ui_lang();
  // The keys change only at an event: re-read them when the playhead passes one. The TTL
  // left is the server's clock at the playhead, so it counts down between events.
  if (moved_since(keyspace_read_)) {
    keyspace_.clear();
    for (const std::string& server : model_.servers())
      keyspace_.push_back({server, model_.server_observed(server), {}});
  }
  for (auto& shown : keyspace_)
    if (shown.observed) shown.keys = model_.keyspace_at(shown.server, view_.playhead_us);
  if (keyspace_.empty()) {
    ImGui::TextDisabled("%s", tr(S::no_servers, L));
    return;
  }
  for (auto& [server, observed, keys] : keyspace_) {
    // A primary a failover took down holds nothing anyone can read: its keys are not shown
    // as if it still served them.
    const TimeUs down_us = model_.index().failed_over_at(server);
    if (down_us >= 0 && view_.playhead_us >= down_us) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(
          kMutedColour, "%s",
          trf(S::failed_over_keys, L,
              {server, time_words(down_us, L), model_.index().failed_over_to(server)})
              .c_str());
      ImGui::PopTextWrapPos();
      continue;
    }
    if (!observed) {
      ImGui::TextUnformatted(trf(S::not_observed, L, {server}).c_str());
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(kMutedColour, "%s", tr(S::not_observed_why, L));
      ImGui::PopTextWrapPos();
      continue;
    }
    ImGui::TextUnformatted(
        trf(S::n_keys, L, {server, plural(int64_t(keys.size()), S::keys_plural, L)}).c_str());
    if (keys.empty()) continue;
    // Key and TTL over the value on narrow panels: the TTL counting down matters most, and a
    // token's value is long. Wide panels get the three columns.
    const bool wide = ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 22;
    // The TTL column as wide as its longest words in this language ("zbývá 9,5 s"), so it is
    // never cut.
    const size_t rows_max = 200;  // a big keyspace is summarised, not listed
    std::vector<std::string> ttls;
    float ttl_px = ImGui::CalcTextSize(tr(S::col_ttl, L)).x;
    for (size_t i = 0; i < keys.size() && i < rows_max; i++) {
      const KeyRow& k = keys[i];
      ttls.push_back(k.expire_at_ms < 0 ? tr(S::no_ttl, L)
                     : k.ttl_ms == -2   ? tr(S::ttl_unknown, L)
                     : k.ttl_ms <= 0    ? tr(S::expiring, L)
                                     : trf(S::time_left, L, {time_words(k.ttl_ms * kUsPerMs, L)}));
      ttl_px = std::max(ttl_px, ImGui::CalcTextSize(ttls.back().c_str()).x);
    }
    if (ImGui::BeginTable(("keys_" + server).c_str(), wide ? 3 : 2,
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                              ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn(tr(S::col_key, L), ImGuiTableColumnFlags_WidthStretch, 1.4f);
      if (wide)
        ImGui::TableSetupColumn(tr(S::col_value, L), ImGuiTableColumnFlags_WidthStretch, 1.3f);
      ImGui::TableSetupColumn(tr(S::col_ttl, L), ImGuiTableColumnFlags_WidthFixed, ttl_px);
      ImGui::TableHeadersRow();
      for (size_t i = 0; i < keys.size() && i < rows_max; i++) {
        const KeyRow& k = keys[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        std::string name = (k.db != 0 ? "db" + std::to_string(k.db) + " " : "") + k.key;
        ImGui::TextUnformatted(name.c_str());
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s (%s)\n%s", name.c_str(), k.type.c_str(), k.value.c_str());
        if (!wide) {
          // The value under the key, muted and cut to the column.
          ImGui::PushTextWrapPos(0);
          ImGui::TextColored(kMutedColour, "%s", k.value.substr(0, 64).c_str());
          ImGui::PopTextWrapPos();
        }
        if (wide) {
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(k.value.c_str());
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.value.c_str());
        }
        ImGui::TableNextColumn();
        const std::string& ttl = ttls[i];
        if (k.expire_at_ms < 0)
          ImGui::TextDisabled("%s", ttl.c_str());
        else
          ImGui::TextUnformatted(ttl.c_str());
        record("ttl:" + server + ":" + name);
        if (ImGui::IsItemHovered() && k.ttl_ms >= 0)
          ImGui::SetTooltip(
              "%s", trf(S::ttl_tip, L, {std::to_string(k.ttl_ms), std::to_string(k.expire_at_ms)})
                        .c_str());
      }
      ImGui::EndTable();
      record("keys_table:" + server);
      if (keys.size() > rows_max)
        ImGui::TextDisabled(
            "%s", trf(S::n_more_rows, L, {std::to_string(keys.size() - rows_max)}).c_str());
    }
  }
}

void App::draw_pool_stats() {
  const Lang L = ui_lang();
  if (model_.pool_stats().empty()) {
    ImGui::TextDisabled("%s", tr(S::no_pool_stats, L));
    return;
  }
  const TimeUs end_us = std::max<TimeUs>(1, model_.end_us());
  const float plot_px = std::max(80.0f, ImGui::GetContentRegionAvail().x);
  for (auto& [host, samples] : model_.pool_stats()) {
    if (samples.empty()) continue;
    // The sample in force at time t: the last one at or before t.
    auto at = [&](TimeUs t) -> const PoolSample* {
      auto it = std::upper_bound(samples.begin(), samples.end(), t,
                                 [](TimeUs v, const PoolSample& s) { return v < s.time_us; });
      return it == samples.begin() ? nullptr : &*(it - 1);
    };
    // Each point is the most connections in use during its slice of the run, so a busy
    // moment shorter than a slice still shows. Rebuilt only when the trace grows.
    auto& plot = pool_plots_[host];
    if (pool_plots_generation_ != trace_generation_ || plot.size() != size_t(kPoolPlotPoints)) {
      plot.assign(kPoolPlotPoints, 0);
      for (int i = 0; i < kPoolPlotPoints; i++)
        if (const PoolSample* s = at(end_us * i / kPoolPlotPoints))
          plot[i] = float(s->total - s->idle);
      for (auto& s : samples) {
        int i = int(std::min<int64_t>(kPoolPlotPoints - 1, s.time_us * kPoolPlotPoints / end_us));
        plot[size_t(i)] = std::max(plot[size_t(i)], float(s.total - s.idle));
      }
    }
    // What has happened only: the peak so far; the plot's future is covered below.
    const bool so_far = !everything_shown();
    float peak_in_use = 0;
    for (int i = 0; i < kPoolPlotPoints; i++)
      if (!so_far || end_us * i / kPoolPlotPoints <= view_.playhead_us)
        peak_in_use = std::max(peak_in_use, plot[size_t(i)]);
    const int64_t peak = int64_t(peak_in_use);
    const float scale_max = std::max(peak_in_use, 1.0f) * 1.15f;  // never a zero range
    const PoolSample* now = at(view_.playhead_us);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        trf(so_far ? S::in_use_peak_so_far : S::in_use_peak, L, {host, std::to_string(peak)})
            .c_str());
    ImGui::PopTextWrapPos();
    ImGui::PlotLines(("##pool_" + host).c_str(), plot.data(), kPoolPlotPoints, 0, nullptr, 0,
                     scale_max, {plot_px, 3 * ImGui::GetFontSize()});
    // The playhead on the plot, so the numbers below can be matched to the curve.
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float x = a.x + (b.x - a.x) * float(double(view_.playhead_us) / double(end_us));
    if (so_far && x + 1 < b.x - 1)
      ImGui::GetWindowDrawList()->AddRectFilled({x + 1, a.y + 1}, {b.x - 1, b.y - 1},
                                                ImGui::GetColorU32(ImGuiCol_FrameBg));
    ImGui::GetWindowDrawList()->AddLine({x, a.y}, {x, b.y}, view_.palette.playhead, 1.5f);
    if (now) {
      // Two short lines that wrap rather than one long one cut at the panel's edge.
      const ImVec4 colour = now->timeouts > 0 ? kViolatedColour : kMutedColour;
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(colour, "%s",
                         trf(S::in_use_now, L,
                             {std::to_string(now->total - now->idle), std::to_string(now->total)})
                             .c_str());
      ImGui::TextColored(colour, "%s",
                         trf(S::pool_counts, L,
                             {std::to_string(now->hits), std::to_string(now->misses),
                              std::to_string(now->timeouts)})
                             .c_str());
      ImGui::PopTextWrapPos();
      record("pool:" + host);
    } else {
      ImGui::TextDisabled("%s", tr(S::no_connections_yet, L));
    }
  }
  pool_plots_generation_ = trace_generation_;
}

// ---- Narration ----------------------------------------------------------------------------

void App::draw_narration(ImVec2 size) {
  const Lang L = ui_lang();
  ImGui::BeginChild("narration", size, true);
  record_window("narration");
  if (ImGui::BeginTable("narration_columns", 2,
                        ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame,
                        ImGui::GetContentRegionAvail())) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::BeginChild("story_and_checks");
    // The story of the scenario this trace came from.
    bool story_fits = scenario_ && (trace_.meta().empty() || [&] {
                        auto it = trace_.meta().find("scenario");
                        return it == trace_.meta().end() || it->second == scenario_->id;
                      }());
    ImGui::PushTextWrapPos(0);
    // The verdicts first (so far, or final at the end): they must be visible at once.
    if (!verdicts_.empty()) {
      draw_verdicts(false);
      ImGui::Separator();
    }
    if (story_fits) ImGui::TextUnformatted(scenario_->story.get(lang_).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();

    ImGui::TableNextColumn();
    ImGui::BeginChild("notes");
    // Timed notes up to the playhead; the newest is highlighted and kept in view.
    const auto& notes = model_.notes();
    size_t shown = 0;
    while (shown < notes.size() && notes[shown].time_us <= view_.playhead_us) shown++;
    if (shown == 0) ImGui::TextDisabled("%s", tr(S::notes_hint, L));
    ImGui::PushTextWrapPos(0);
    for (size_t i = 0; i < shown; i++) {
      auto& n = notes[i];
      ImGui::TextColored(kMutedColour, "%s", seconds_words(n.time_us, L).c_str());
      ImGui::SameLine();
      const std::string& said = n.text_in(size_t(L));
      std::string text = n.actor.empty() ? said : n.actor + ": " + said;
      if (i + 1 == shown)
        ImGui::TextUnformatted(text.c_str());
      else
        ImGui::TextColored(kMutedColour, "%s", text.c_str());
    }
    ImGui::PopTextWrapPos();
    if (shown != notes_shown_) ImGui::SetScrollHereY(1.0f);
    notes_shown_ = shown;
    ImGui::EndChild();
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

// ---- Exercises ----------------------------------------------------------------------------

void App::draw_reset_progress() {
  const Lang L = ui_lang();
  if (!confirm_reset_) {
    if (ImGui::SmallButton(
            (std::string(tr(S::ex_reset_progress, L)) + "###reset_progress").c_str()))
      confirm_reset_ = true;
    record("reset_progress");
    return;
  }
  // Forgetting a class's progress is not undone: asked once more, in words.
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(tr(S::ex_reset_confirm, L));
  ImGui::PopTextWrapPos();
  if (ImGui::Button((std::string(tr(S::ex_reset_yes, L)) + "###reset_yes").c_str()))
    reset_progress();
  record("reset_yes");
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::ex_reset_no, L)) + "###reset_no").c_str()))
    confirm_reset_ = false;
  record("reset_no");
}

void App::draw_exercise() {
  if (!exercise_open_) return;
  if (!scenario_ || !scenario_->exercise || scenario_->id != exercise_id_) {
    exercise_open_ = false;  // another scenario was opened: its exercise is its own
    return;
  }
  const Lang L = ui_lang();
  const scenario::Exercise& ex = *scenario_->exercise;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(
      {vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.08f},
      ImGuiCond_Once);
  ImGui::SetNextWindowSize({vp->WorkSize.x * 0.46f, vp->WorkSize.y * 0.86f}, ImGuiCond_Once);
  ImGui::SetNextWindowBgAlpha(0.98f);
  const std::string title = trf(S::exercise_title, L, {scenario_->title.get(lang_)});
  if (!ImGui::Begin((title + "###exercise_panel").c_str(), &exercise_open_,
                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::End();
    return;
  }
  record_window("exercise_panel");
  resume_text_capture();
  ImGui::PushTextWrapPos(0);

  // The task, then the hints revealed so far.
  ImGui::TextColored(kMutedColour, "%s", tr(S::ex_task, L));
  ImGui::TextUnformatted(ex.task.get(lang_).c_str());
  record("exercise_task");
  for (size_t i = 0; i < hints_shown_ && i < ex.hints.size(); i++) {
    ImGui::Spacing();
    ImGui::TextColored(
        kMutedColour, "%s",
        trf(S::ex_hint_n, L, {std::to_string(i + 1), std::to_string(ex.hints.size())}).c_str());
    ImGui::TextUnformatted(ex.hints[i].get(lang_).c_str());
    record("hint:" + std::to_string(i + 1));
  }
  if (hints_shown_ < ex.hints.size()) {
    if (ImGui::Button((std::string(tr(S::ex_show_hint, L)) + "###show_hint").c_str())) show_hint();
    record("show_hint");
  } else if (!ex.hints.empty()) {
    ImGui::TextDisabled("%s", tr(S::ex_no_more_hints, L));
  }
  ImGui::Separator();

  // The answer.
  if (ex.choose.empty()) {
    draw_script_editor(L);
  } else {
    ImGui::TextColored(kMutedColour, "%s", tr(S::ex_your_settings, L));
    for (const std::string& name : ex.choose) {
      if (const scenario::Variant* v = scenario_->variant(name)) {
        std::string label = v->label.get(lang_);
        if (label.empty()) label = v->name;
        std::string& value = variant_[v->name];
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
        if (ImGui::BeginCombo((label + "##ex_v_" + v->name).c_str(),
                              value_words(*v, value, lang_).c_str())) {
          for (const std::string& val : v->values)
            if (ImGui::Selectable((value_words(*v, val, lang_) + "##" + val).c_str(),
                                  val == value) &&
                val != value) {
              value = val;
              rerun_in_place();
            }
          ImGui::EndCombo();
        }
        record("ex_v:" + v->name);
      } else if (const scenario::Param* p = scenario_->param(name)) {
        std::string label = p->label.get(lang_);
        if (label.empty()) label = p->name;
        int64_t& value = params_[p->name];
        std::string unit = unit_words(p->unit, L);
        std::replace(unit.begin(), unit.end(), '%', ' ');
        const std::string format = "%" PRId64 " " + unit;
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
        ImGui::SliderScalar((label + "##ex_p_" + p->name).c_str(), ImGuiDataType_S64, &value,
                            &p->min, &p->max, format.c_str());
        if (ImGui::IsItemDeactivatedAfterEdit()) rerun_in_place();
        record("ex_p:" + p->name);
      }
    }
  }
  ImGui::Separator();

  // Check: over the exercise's seeds, on a worker, with its progress and a way out.
  if (checking()) {
    auto [seed, seeds] = check_progress();
    const float fraction = seeds > 0 ? float(seed) / float(seeds) : 0.0f;
    ImGui::ProgressBar(
        fraction, {ImGui::GetFontSize() * 16, 0},
        trf(S::ex_checking, L, {std::to_string(seed), std::to_string(seeds)}).c_str());
    record("check_progress");
    ImGui::SameLine();
    if (ImGui::Button((std::string(tr(S::ex_cancel, L)) + "###cancel_check").c_str()))
      cancel_check();
    record("cancel_check");
  } else {
    const bool can = ex.choose.empty() ? !script_error_ : true;
    if (!can) ImGui::BeginDisabled();
    if (ImGui::Button((std::string(tr(S::ex_check, L)) + "###check").c_str())) check_exercise();
    if (!can) ImGui::EndDisabled();
    record("check");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", trf(S::ex_check_tip, L, {std::to_string(ex.seeds)}).c_str());
  }

  // The verdict.
  using St = ExerciseVerdict::State;
  const ExerciseVerdict& v = exercise_verdict_;
  switch (v.state) {
    case St::none:
      break;
    case St::pass:
      ImGui::TextColored(kHoldsColour, "%s", trf(S::ex_pass, L, {std::to_string(v.seeds)}).c_str());
      record("exercise_verdict");
      break;
    case St::fail: {
      const std::string seed = std::to_string(v.failed_seed);
      ImGui::TextColored(kViolatedColour, "%s", trf(S::ex_fail, L, {seed}).c_str());
      record("exercise_verdict");
      for (size_t i = 0; i < v.words.size(); i++) {
        ImGui::Bullet();
        ImGui::TextUnformatted(v.words[i][size_t(L)].c_str());
        record("exercise_failure:" + std::to_string(i));
      }
      if (ImGui::Button((trf(S::ex_open_seed, L, {seed}) + "###open_seed").c_str()))
        open_failing_seed();
      record("open_seed");
      help_marker(tr(S::ex_open_seed_tip, L));
      break;
    }
    case St::cancelled:
      ImGui::TextColored(kMutedColour, "%s", tr(S::ex_cancelled, L));
      record("exercise_verdict");
      break;
    case St::error:
      ImGui::TextColored(kViolatedColour, "%s", trf(S::ex_check_error, L, {v.error}).c_str());
      record("exercise_verdict");
      break;
  }
  if (auto it = progress_.find(scenario_->id); it != progress_.end() && it->second.passed) {
    ImGui::TextColored(kHoldsColour, "%s", trf(S::ex_passed_on, L, {it->second.when}).c_str());
    record("exercise_passed_on");
  }
  ImGui::PopTextWrapPos();
  ImGui::End();
}

// The script in an editor with its line numbers beside it: the editor is as tall as the
// script, inside a scrolling child that holds both, so the numbers scroll with the lines. A
// script that does not load has its line marked and Lua's message below.
void App::draw_script_editor(const Lang L) {
  const scenario::Exercise& ex = *scenario_->exercise;
  check_script();
  ImGui::TextColored(kMutedColour, "%s", trf(S::ex_your_script, L, {ex.script}).c_str());
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line_px = ImGui::GetTextLineHeight();
  const int lines = 1 + int(std::count(exercise_script_.begin(), exercise_script_.end(), '\n'));
  const float numbers_px = ImGui::CalcTextSize("0000").x;
  const float editor_px = float(lines + 2) * line_px + style.FramePadding.y * 2;
  const float shown_px =
      std::clamp(editor_px + style.WindowPadding.y * 2, line_px * 8,
                 std::max(line_px * 8, ImGui::GetContentRegionAvail().y * 0.55f));
  ImGui::BeginChild("script_scroll", {0, shown_px}, true, ImGuiWindowFlags_HorizontalScrollbar);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImGui::Dummy({numbers_px, editor_px});
  ImGui::SameLine(0, style.ItemSpacing.x);
  ImGuiInputTextFlags flags = ImGuiInputTextFlags_AllowTabInput;
  if (checking()) flags |= ImGuiInputTextFlags_ReadOnly;  // the answer being graded stays put
  ImGui::InputTextMultiline(
      "##script", &exercise_script_,
      {std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 20), editor_px}, flags);
  record("script_editor");
  const float width_px = ImGui::GetItemRectMax().x - top.x;
  for (int i = 1; i <= lines; i++) {
    const float y = top.y + style.FramePadding.y + float(i - 1) * line_px;
    const bool bad = script_error_ && script_error_->line == i;
    if (bad) {
      draw->AddRectFilled({top.x, y}, {top.x + width_px, y + line_px},
                          ImGui::GetColorU32(ImVec4(0.9f, 0.1f, 0.1f, 0.22f)));
      widgets_["script_error_line"] = {{top.x, y}, {top.x + width_px, y + line_px}};
    }
    const std::string n = std::to_string(i);
    const float n_px = ImGui::CalcTextSize(n.c_str()).x;
    draw->AddText({top.x + numbers_px - n_px, y},
                  ImGui::GetColorU32(bad ? kViolatedColour : kMutedColour), n.c_str());
  }
  ImGui::EndChild();
  if (script_error_) {
    ImGui::TextColored(
        kViolatedColour, "%s",
        trf(S::ex_script_error, L, {std::to_string(script_error_->line), script_error_->message})
            .c_str());
    record("script_error");
  }
  if (const scenario::ScriptDef* def = scenario_->script(ex.script);
      def && def->source != exercise_script_ && !checking()) {
    if (ImGui::SmallButton(
            (std::string(tr(S::ex_restore_script, L)) + "###restore_script").c_str()))
      exercise_script_ = def->source;
    record("restore_script");
  }
}

}  // namespace redlab::gui
