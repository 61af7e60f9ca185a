// The panels around the timeline: top bar (backend, choices, transport, files), scenario
// library, inspector and narration. State and commands live in gui_app.cpp; this file only
// draws and calls them.
#include <imgui.h>
#include <imgui_stdlib.h>  // needs imgui.h first (IMGUI_API)

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <set>

#include "app/gui/gui_app.h"

namespace redlab::gui {

namespace {

const ImVec4 kHoldsColour{0.05f, 0.50f, 0.15f, 1};
const ImVec4 kViolatedColour{0.80f, 0.08f, 0.08f, 1};
const ImVec4 kMutedColour{0.40f, 0.40f, 0.45f, 1};
const ImVec4 kErrorBg{0.98f, 0.86f, 0.84f, 1};

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

}  // namespace

// ---- Top bar ------------------------------------------------------------------------------

void App::draw_top_bar() {
  const ImGuiStyle& style = ImGui::GetStyle();

  // Controls flow like words: each group goes on the current line if it fits, else on the
  // next, so a narrow window (a projector at 1280x800) wraps instead of cutting them off.
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
  const float frame_pad_px = style.FramePadding.x * 2;

  // Row 1: what is shown, the backend and the transport.
  const std::string title = scenario_ ? scenario_->title.get(lang_) : "";
  flow(text_px(title.c_str()), gap_px);
  ImGui::AlignTextToFramePadding();
  if (scenario_)
    ImGui::TextUnformatted(title.c_str());
  else
    ImGui::TextDisabled("no scenario: pick one on the left");

  const bool is_url = backend_ != "fake" && backend_ != "spawn";
  const float backend_combo_px = text_px("spawn redis-server") + 40;
  const float url_px = text_px("redis://127.0.0.1:6379") + 20;
  flow(text_px("backend") + backend_combo_px + (is_url ? url_px : 0) + 2 * style.ItemSpacing.x,
       gap_px * 1.5f);
  ImGui::BeginGroup();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("backend");
  ImGui::SameLine();
  int backend_kind = backend_ == "fake" ? 0 : backend_ == "spawn" ? 1 : 2;
  const char* backend_names[] = {"fake (in-process)", "spawn redis-server", "redis URL"};
  ImGui::SetNextItemWidth(backend_combo_px);
  if (ImGui::Combo("##backend", &backend_kind, backend_names, 3)) {
    backend_ = backend_kind == 0 ? "fake" : backend_kind == 1 ? "spawn" : "redis://127.0.0.1:6379";
    settings_.backend = backend_;
  }
  help_marker(
      "fake: the deterministic in-process Redis (instant runs, then played back).\n"
      "spawn / redis URL: a real server; the run happens live.");
  if (is_url) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(url_px);
    ImGui::InputText("##url", &backend_);
  }
  ImGui::EndGroup();
  if (backend_ != "fake") {
    // A real run takes the scenario's own time unless scaled (0.1: 25 s in 2.5 s).
    const float scale_px = text_px("0.00x") + 60;
    flow(text_px("time") + scale_px + text_px("server faults") + 40 + 3 * style.ItemSpacing.x,
         gap_px);
    ImGui::BeginGroup();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("time");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(scale_px);
    ImGui::SliderFloat("##time_scale", &time_scale_, 0.05f, 1.0f, "%.2fx",
                       ImGuiSliderFlags_Logarithmic);
    help_marker("Every duration of the scenario (TTLs, work, pauses, timeouts) times this.");
    if (is_url) {
      ImGui::SameLine();
      ImGui::Checkbox("server faults", &allow_server_faults_);
      help_marker(
          "Allow server-wide faults and config (DEBUG SLEEP, SCRIPT FLUSH, CONFIG SET) on this "
          "server. Only on a server that is yours to disturb.");
    }
    ImGui::EndGroup();
  }

  const float seed_px = text_px("0000000000") + 60;
  flow(text_px("seed") + seed_px + style.ItemSpacing.x, gap_px);
  ImGui::BeginGroup();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("seed");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(seed_px);
  ImGui::InputScalar("##seed", ImGuiDataType_U64, &seed_, nullptr, nullptr, "%" PRIu64);
  if (ImGui::IsItemDeactivatedAfterEdit()) rerun_in_place();
  ImGui::EndGroup();

  const float pause_px = text_px("Pause") + 24;
  flow(text_px("Run again") + pause_px + text_px("Step") + text_px("Restart") + 3 * frame_pad_px +
           3 * style.ItemSpacing.x,
       gap_px * 1.5f);
  ImGui::BeginGroup();
  if (ImGui::Button(running() ? "Run again" : "Run")) run(true);
  record("run");
  help_marker("Run the scenario with these choices and play it from the start.");
  ImGui::SameLine();
  if (ImGui::Button(playing_ ? "Pause" : "Play", {pause_px, 0})) {
    if (playing_)
      pause();
    else
      play();
  }
  record("pause");
  ImGui::SameLine();
  if (ImGui::Button("Step")) step_to_next_event();
  record("step");
  help_marker("Move the playhead to the next event.");
  ImGui::SameLine();
  if (ImGui::Button("Restart")) restart();
  record("restart");
  ImGui::EndGroup();

  // Steps by meaning: a class follows the story note by note, not event by event.
  flow(text_px("< Note") + text_px("Note >") + text_px("Violation >") + text_px("Actor >") +
           4 * frame_pad_px + 3 * style.ItemSpacing.x,
       gap_px);
  ImGui::BeginGroup();
  if (ImGui::Button("< Note")) step_note(-1);
  record("prev_note");
  help_marker("The previous narration note (Left, Page Up).");
  ImGui::SameLine();
  if (ImGui::Button("Note >")) step_note(+1);
  record("next_note");
  help_marker("The next narration note (Right, Page Down).");
  ImGui::SameLine();
  if (ImGui::Button("Violation >")) step_violation(+1);
  record("next_violation");
  help_marker("The next violation's start (N; Shift+N: the previous one).");
  ImGui::SameLine();
  if (ImGui::Button("Actor >")) step_actor_event(+1);
  record("next_actor_event");
  help_marker("The next event of the selected event's actor (E; Shift+E: the previous one).");
  ImGui::EndGroup();

  const char* reveal_label = reveal_ ? "Hide future" : "Reveal";
  flow(text_px(reveal_label) + frame_pad_px + 2 * ImGui::GetFrameHeight() + text_px("faint") +
           text_px("stop at notes") + text_px("Presenter") + frame_pad_px + 4 * style.ItemSpacing.x,
       gap_px);
  ImGui::BeginGroup();
  if (ImGui::Button(reveal_label)) reveal_ = !reveal_;
  record("reveal");
  help_marker(
      "Reveal: everything at once, the future and the final verdicts (V).\n"
      "Otherwise only what has happened up to the playhead is shown.");
  ImGui::SameLine();
  ImGui::Checkbox("faint", &future_faint_);
  record("future_faint");
  help_marker("Show the future faint instead of hiding it (F).");
  ImGui::SameLine();
  ImGui::Checkbox("stop at notes", &stop_at_notes_);
  record("stop_at_notes");
  help_marker("Playing stops at each narration note, for the class to read it (S).");
  ImGui::SameLine();
  if (ImGui::Button("Presenter")) presenter_ = true;
  record("presenter");
  help_marker("Full-window timeline in large type, driven from the keyboard (P, F5; H: keys).");
  ImGui::EndGroup();

  const float speed_px = 150;
  flow(speed_px, gap_px);
  ImGui::SetNextItemWidth(speed_px);
  float speed = speed_;
  if (ImGui::SliderFloat("##speed", &speed, 0.1f, 20.0f, "speed %.1fx",
                         ImGuiSliderFlags_Logarithmic))
    set_speed(speed);
  help_marker("1x = the scenario's own time (a 25 s scenario plays for 25 s).");
  flow(ImGui::GetFrameHeight() + text_px("follow") + style.ItemInnerSpacing.x, gap_px);
  ImGui::Checkbox("follow", &follow_);
  help_marker("Keep the playhead in view while it moves.");

  int lang_index = 0;
  for (int i = 0; i < 3; i++)
    if (lang_ == lang_names[i][0]) lang_index = i;
  const float lang_px = text_px("Čeština") + 40;
  flow(lang_px, gap_px);
  ImGui::SetNextItemWidth(lang_px);
  if (ImGui::BeginCombo("##lang", lang_names[lang_index][1])) {
    for (int i = 0; i < 3; i++)
      if (ImGui::Selectable(lang_names[i][1], i == lang_index) && i != lang_index) {
        set_lang(lang_names[i][0]);
        rerun_in_place();  // narration and verdicts are written in the run's language
      }
    ImGui::EndCombo();
  }

  // Row 2: the scenario's parameters and variants, on a new line.
  first = true;
  if (scenario_) {
    for (auto& p : scenario_->params) {
      std::string label = p.label.get(lang_);
      if (label.empty()) label = p.name;
      const float slider_px = 170;
      flow(text_px(label.c_str()) + slider_px + style.ItemInnerSpacing.x, gap_px);
      ImGui::BeginGroup();
      int64_t& value = params_[p.name];
      std::string format = "%" PRId64 " " + p.unit;
      ImGui::SetNextItemWidth(slider_px);
      ImGui::SliderScalar(("##p_" + p.name).c_str(), ImGuiDataType_S64, &value, &p.min, &p.max,
                          format.c_str());
      if (ImGui::IsItemDeactivatedAfterEdit()) rerun_in_place();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s: %" PRId64 "..%" PRId64 " %s (default %" PRId64
                          ")\nCtrl+click to type a value.",
                          p.name.c_str(), p.min, p.max, p.unit.c_str(), p.def);
      ImGui::SameLine(0, style.ItemInnerSpacing.x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(label.c_str());
      ImGui::EndGroup();
    }
    for (auto& v : scenario_->variants) {
      std::string label = v.label.get(lang_);
      if (label.empty()) label = v.name;
      std::string& value = variant_[v.name];
      auto value_label = [&](const std::string& val) {
        auto it = v.value_labels.find(val);
        std::string text = it == v.value_labels.end() ? val : it->second.get(lang_);
        return text.empty() ? val : text;
      };
      std::string values;
      for (auto& val : v.values) values += (values.empty() ? "" : ", ") + val;
      const std::string tip = "variant " + v.name + " (" + values + ")";
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
          combo_px = std::max(combo_px, text_px(value_label(val).c_str()) + 40);
        flow(text_px(label.c_str()) + combo_px + style.ItemInnerSpacing.x, gap_px);
        ImGui::BeginGroup();
        ImGui::SetNextItemWidth(combo_px);
        if (ImGui::BeginCombo(("##v_" + v.name).c_str(), value_label(value).c_str())) {
          for (auto& val : v.values)
            if (ImGui::Selectable((value_label(val) + "##" + val).c_str(), val == value) &&
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

  // Row 3: files, and what happened last (an error stays until dismissed or replaced).
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("file");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(420.0f, ImGui::GetContentRegionAvail().x * 0.3f));
  ImGui::InputTextWithHint("##path", "path/to/scenario-or-trace.json", &path_field_);
  record("path");
  auto need_path = [&]() {
    if (path_field_.empty()) set_error("type a file path first");
    return !path_field_.empty();
  };
  ImGui::SameLine();
  if (ImGui::Button("Open") && need_path()) {
    if (open_path(path_field_) && scenario_ && !replay_) run(true);
  }
  record("open");
  help_marker("A scenario file (runs it) or a saved trace (replays it, no server needed).");
  ImGui::SameLine();
  if (ImGui::Button("Save trace") && need_path()) save_trace(path_field_);
  record("save_trace");
  ImGui::SameLine();
  if (ImGui::Button("Export PNG") && need_path()) request_timeline_png(path_field_);
  record("export_png");
  help_marker("The timeline as a picture.");
  ImGui::SameLine();
  if (ImGui::Button("Chrome trace") && need_path()) export_chrome_trace(path_field_);
  record("export_chrome");
  help_marker("For ui.perfetto.dev or chrome://tracing.");
  // What happened last: an error stays until dismissed or replaced. Long messages (a located
  // scenario error with its path) wrap on a line of their own.
  first = false;
  if (!error_.empty()) {
    const std::string message = "error: " + error_;
    flow(std::min(text_px(message.c_str()), 300.0f), gap_px);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetWindowContentRegionMax().x - ImGui::GetFrameHeight() * 2);
    ImGui::TextColored(kViolatedColour, "%s", message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    record("error");
    ImGui::SameLine();
    if (ImGui::SmallButton("x##dismiss")) error_.clear();
  } else if (!status_.empty()) {
    flow(text_px(status_.c_str()), gap_px);
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(kMutedColour, "%s", status_.c_str());
  }
}

// ---- Library ------------------------------------------------------------------------------

void App::draw_library(ImVec2 size) {
  ImGui::BeginChild("library", size, true);
  record_window("library");
  ImGui::TextUnformatted("Scenarios");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##search", "search", &library_filter_);
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
    if (!ImGui::TreeNode(topic.c_str())) continue;
    for (auto& e : library_) {
      if (e.topic != topic || !matches(e)) continue;
      shown++;
      std::string title = e.title.get(lang_);
      if (title.empty()) title = e.id;
      bool current = scenario_ && scenario_->id == e.id;
      // Titles are sentences: wrap them instead of cutting them off.
      const float wrap_px = ImGui::GetContentRegionAvail().x;
      const ImVec2 text_size = ImGui::CalcTextSize(title.c_str(), nullptr, false, wrap_px);
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::Selectable(("##" + e.id).c_str(), current, 0, {0, text_size.y})) {
        if (open_scenario(e.id)) run(true);
      }
      ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at,
                                          ImGui::GetColorU32(ImGuiCol_Text), title.c_str(), nullptr,
                                          wrap_px);
      record("library:" + e.id);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", e.id.c_str(), e.path.c_str());
    }
    ImGui::TreePop();
  }
  if (shown == 0 && !library_.empty()) ImGui::TextDisabled("nothing matches");
  if (library_.empty()) ImGui::TextDisabled("no scenarios found");
  ImGui::EndChild();
}

// ---- Timeline -----------------------------------------------------------------------------

void App::draw_timeline_view(ImVec2 size) {
  // Marks, labels and the name column grow with the type (presenter mode's large font).
  const float font_px = ImGui::GetFontSize();
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const float base_px = atlas->Fonts.Size > 0 ? atlas->Fonts[0]->FontSize : font_px;
  view_.scale = base_px > 0 ? font_px / base_px : 1.0f;
  view_.label_width_px = 110 * view_.scale;
  view_.ruler_height_px = 24 * view_.scale;
  // The app's look is always light: lane names in near-black, not the view's neutral grey.
  view_.palette.label_text = IM_COL32(25, 25, 35, 255);
  // Rows grow to use the height when there are few of them (readable from the back of a
  // room); the view shrinks them itself when there are many.
  size_t rows = 0;
  for (auto& lane : model_.lanes()) rows += lane.rows.size();
  const float lanes_px = (size.y > 0 ? size.y : ImGui::GetContentRegionAvail().y) -
                         view_.ruler_height_px - (view_.show_legend ? 2 * font_px : 0) -
                         8.0f * float(model_.lanes().size());
  view_.row_height_px =
      rows == 0 ? font_px + 4 : std::clamp(lanes_px / float(rows), font_px + 4, 2 * font_px);
  // The view follows the playhead only while it moves: a paused playhead outside the view
  // (a screenshot of a run's busy part, the user zoomed elsewhere) must not pull it away.
  view_.follow = follow_ && (playing_ || running());
  // What has happened, unless everything is to be shown.
  view_.horizon_us = everything_shown() ? kTimeNeverUs : view_.playhead_us;
  view_.future_faint = future_faint_;
  view_.draw(model_, trace_, size);
}

void App::draw_timeline(ImVec2 size) {
  ImGui::BeginChild("timeline", size, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  record_window("timeline");
  // One line that says what is on screen, so a screenshot explains itself.
  std::string head = source_.empty() ? "nothing to show yet" : source_;
  if (!trace_.meta().empty()) {
    auto& meta = trace_.meta();
    if (auto it = meta.find("seed"); it != meta.end()) head += "  ·  seed " + it->second;
    std::string variants;
    for (auto& [k, v] : meta)
      if (k.rfind("variant.", 0) == 0) variants += " " + k.substr(8) + "=" + v;
    if (!variants.empty()) head += "  ·" + variants;
  }
  ImGui::TextUnformatted(head.c_str());
  ImGui::SameLine();
  std::string at = "playhead " + seconds_text(view_.playhead_us) + " of " +
                   seconds_text(model_.end_us()) + (running() ? "  (running ...)" : "");
  float at_px = ImGui::CalcTextSize(at.c_str()).x;
  ImGui::SetCursorPosX(
      std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - at_px));
  ImGui::TextColored(kMutedColour, "%s", at.c_str());
  draw_timeline_view(ImVec2(0, 0));
  ImGui::EndChild();
}

// ---- Verdicts -----------------------------------------------------------------------------

void App::draw_verdicts(bool compact) {
  // Again here: a panel drawn earlier in this frame may have replaced the run (the library,
  // a variant), and the verdicts point into its violations.
  update_verdicts();
  using S = Verdict::State;
  const auto& violations = model_.violations();
  const ImGuiStyle& style = ImGui::GetStyle();
  std::vector<std::string> quiet;  // compact: the checks with nothing to look at
  for (const Verdict& v : verdicts_) {
    const bool unexpected =
        v.final && v.expected && v.state != S::not_judged && *v.expected != (v.state == S::holds);
    if (compact && v.state != S::violated && !unexpected) {
      quiet.push_back(v.check);
      continue;
    }
    const char* word = v.state == S::violated   ? "VIOLATED"
                       : v.state == S::holds    ? "holds"
                       : v.state == S::none_yet ? "so far"
                                                : "n/a";
    const ImVec4 colour = v.state == S::violated ? kViolatedColour
                          : v.state == S::holds  ? kHoldsColour
                                                 : kMutedColour;
    ImGui::TextColored(colour, "%s", word);
    ImGui::SameLine();
    const std::string line = v.check + (v.final ? ": " : " ") + v.text;
    if (v.violations.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextUnformatted(line.c_str());
      ImGui::PopTextWrapPos();
    } else {
      // The whole line is a button: it takes the class to the moment of failure.
      const float wrap_px = ImGui::GetContentRegionAvail().x;
      const ImVec2 text_size = ImGui::CalcTextSize(line.c_str(), nullptr, false, wrap_px);
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::Selectable(("##verdict:" + v.check).c_str(), false, 0, {wrap_px, text_size.y}))
        jump_to_violation(v.violations.front());
      record("verdict:" + v.check);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s: go to %s",
                          violations[v.violations.front()]
                              .text_at(v.final ? kTimeNeverUs : view_.playhead_us)
                              .c_str(),
                          seconds_text(violations[v.violations.front()].from_us).c_str());
      ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at,
                                          ImGui::GetColorU32(ImGuiCol_Text), line.c_str(), nullptr,
                                          wrap_px);
    }
    if (unexpected)
      ImGui::TextColored(kViolatedColour, "    unexpected: this variant should %s",
                         *v.expected ? "hold" : "fail");
    // Each further violation: a small button at its moment, flowing like words.
    const size_t more = v.violations.size() > 1 ? v.violations.size() - 1 : 0;
    constexpr size_t kMoreShownMax = 24;
    if (more > 0) {
      ImGui::Indent();
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(kMutedColour, "+%zu more%s:", more, v.final ? "" : " so far");
      for (size_t k = 1; k < v.violations.size() && k <= kMoreShownMax; k++) {
        const ViolationRegion& r = violations[v.violations[k]];
        std::string who;
        for (auto& w : r.who) who += (who.empty() ? "" : ", ") + w;
        const std::string label = seconds_text(r.from_us) + (who.empty() ? "" : " " + who) + "##" +
                                  v.check + std::to_string(k);
        const float w = ImGui::CalcTextSize(label.c_str(), nullptr, true).x +
                        style.FramePadding.x * 2 + style.ItemSpacing.x;
        if (ImGui::GetItemRectMax().x + w <
            ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
          ImGui::SameLine();
        if (ImGui::SmallButton(label.c_str())) jump_to_violation(v.violations[k]);
        record("verdict:" + v.check + ":" + std::to_string(k));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.text.c_str());
      }
      if (more > kMoreShownMax) {
        ImGui::SameLine();
        ImGui::TextColored(kMutedColour, "... (N steps through them all)");
      }
      ImGui::Unindent();
    }
  }
  if (!quiet.empty()) {
    std::string names;
    for (auto& q : quiet) names += (names.empty() ? "" : ", ") + q;
    const bool final = !verdicts_.empty() && verdicts_.front().final;
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(kMutedColour, "%s%s",
                       final ? "no violation: " : "so far no violation: ", names.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!verdicts_.empty() && verdicts_.front().final) {
    if (auto met = model_.index().expectation_met())
      ImGui::TextColored(*met ? kHoldsColour : kViolatedColour, "%s",
                         *met ? "the run met the scenario's expectation"
                              : "the run did NOT meet the scenario's expectation");
  } else if (!verdicts_.empty()) {
    ImGui::TextColored(kMutedColour, "%s",
                       "so far: up to the playhead; the verdicts are final at the end (V reveals)");
  }
}

// ---- Presenter mode -----------------------------------------------------------------------

void App::draw_presenter() {
  if (large_font_) ImGui::PushFont(large_font_);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float right_x = ImGui::GetWindowContentRegionMax().x;

  // Line 1: what is shown, and where the playhead is.
  ImGui::TextUnformatted(scenario_ ? scenario_->title.get(lang_).c_str() : source_.c_str());
  std::string state = std::string(playing_ ? "playing" : "paused") + "   " +
                      seconds_text(view_.playhead_us) + " / " + seconds_text(model_.end_us());
  char speed_text[32];
  std::snprintf(speed_text, sizeof speed_text, "   %gx", double(speed_));
  state += speed_text;
  if (reveal_) state += "   revealed";
  if (stop_at_notes_) state += "   stops at notes";
  const float state_px = ImGui::CalcTextSize(state.c_str()).x;
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
      variants += (variants.empty() ? "" : "     ") + std::to_string(i + 1) + ": " + label + " = " +
                  variant_[v.name];
    }
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(kMutedColour, "%s%sH: keys", variants.c_str(),
                     variants.empty() ? "" : "     ");
  ImGui::PopTextWrapPos();
  record("presenter_variants");

  // The caption: the newest note at the playhead.
  const Note* current = nullptr;
  for (const Note& n : model_.notes())
    if (n.time_us <= view_.playhead_us) current = &n;
  std::string caption = current
                            ? (current->actor.empty() ? "" : current->actor + ": ") + current->text
                            : std::string("Space plays; Right goes to the next note.");
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
  if (presenter_ && large_font_) ImGui::PushFont(large_font_);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x / 2, vp->WorkPos.y + vp->WorkSize.y / 2},
                          ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.97f);
  if (ImGui::Begin("Keys", &help_open_,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove |
                       ImGuiWindowFlags_NoScrollbar)) {
    record_window("help");
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& [key, what] : keys_help()) {
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
  ImGui::BeginChild("inspector", size, true);
  record_window("inspector");
  if (ImGui::CollapsingHeader("Selected event", ImGuiTreeNodeFlags_DefaultOpen))
    draw_selected_event();
  if (ImGui::CollapsingHeader("Keyspace at the playhead", ImGuiTreeNodeFlags_DefaultOpen))
    draw_keyspace();
  if (ImGui::CollapsingHeader("Connection pools", ImGuiTreeNodeFlags_DefaultOpen))
    draw_pool_stats();
  if (ImGui::CollapsingHeader("Client options")) {
    if (model_.client_options().empty()) ImGui::TextDisabled("none in this trace");
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
  int64_t index = view_.selected_event;
  if (index < 0 || size_t(index) >= trace_.size()) {
    ImGui::TextDisabled("Click an event on the timeline.");
    return;
  }
  const TraceEvent& e = trace_.events()[size_t(index)];
  ImGui::PushTextWrapPos(0);
  if (e.kind == "violation") {
    // Written when the run ended; what matters is the span it covers.
    ImGui::TextColored(kViolatedColour, "%s violated from %s to %s",
                       std::string(e.str_or(F::check)).c_str(),
                       seconds_text(e.num_or(F::from_us, e.time_us)).c_str(),
                       seconds_text(e.num_or(F::to_us, e.time_us)).c_str());
    ImGui::TextUnformatted(e.text.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::Text("%s  at %s", e.kind.c_str(), seconds_text(e.time_us).c_str());
  if (!e.actor.empty()) ImGui::Text("actor: %s", e.actor.c_str());
  if (e.connection >= 0) {
    std::string server = model_.server_of(e.connection);
    ImGui::Text("connection %" PRId64 "%s%s", e.connection, server.empty() ? "" : " to ",
                server.c_str());
  }
  if (e.step >= 0) ImGui::Text("step %" PRId64, e.step);
  if (e.attempt >= 0)
    ImGui::Text("attempt %" PRId64 "%s", e.attempt,
                e.attempt == 0 ? " (the first try)" : " (a retry)");
  if (!e.text.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted(e.text.c_str());
  }
  // The typed fields: what the event says, exactly (argv, reply, token, TTL, fence, ...).
  if (!e.fields.empty()) {
    ImGui::Separator();
    for (const std::string& line : event_fields(e))
      ImGui::TextColored(kMutedColour, "%s", line.c_str());
  }
  if (e.span > 0) ImGui::TextColored(kMutedColour, "begins span %" PRId64, e.span);
  if (e.ends > 0) ImGui::TextColored(kMutedColour, "ends span %" PRId64, e.ends);
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
      ImGui::TextColored(kMutedColour, "%s: still open", item_kind_name(item.kind));
    } else if (item.end_event >= 0 && size_t(item.end_event) < trace_.size()) {
      const TraceEvent& end = trace_.events()[size_t(item.end_event)];
      ImGui::Separator();
      ImGui::Text("%s after %s", end.kind.c_str(), seconds_text(item.to_us - item.from_us).c_str());
      std::string summary = event_summary(end);
      if (!summary.empty()) ImGui::TextUnformatted(summary.c_str());
    }
  }
  ImGui::PopTextWrapPos();
}

void App::draw_keyspace() {
  // The keys change only at an event: re-read them when the playhead passes one. The TTL
  // left is the server's clock at the playhead, so it counts down between events.
  size_t at_event = model_.first_event_after(view_.playhead_us);
  if (at_event != keyspace_event_ || keyspace_generation_ != trace_generation_) {
    keyspace_event_ = at_event;
    keyspace_generation_ = trace_generation_;
    keyspace_.clear();
    for (const std::string& server : model_.servers())
      keyspace_.push_back({server, model_.server_observed(server), {}});
  }
  for (auto& shown : keyspace_)
    if (shown.observed) shown.keys = model_.keyspace_at(shown.server, view_.playhead_us);
  if (keyspace_.empty()) {
    ImGui::TextDisabled("no servers in this trace");
    return;
  }
  for (auto& [server, observed, keys] : keyspace_) {
    if (!observed) {
      ImGui::Text("%s: not observed", server.c_str());
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(kMutedColour,
                         "a real server: the trace holds what its clients saw, not its keys");
      ImGui::PopTextWrapPos();
      continue;
    }
    ImGui::Text("%s: %zu key%s", server.c_str(), keys.size(), keys.size() == 1 ? "" : "s");
    if (keys.empty()) continue;
    if (ImGui::BeginTable(("keys_" + server).c_str(), 3,
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                              ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch, 1.45f);
      ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.35f);
      ImGui::TableSetupColumn("ttl", ImGuiTableColumnFlags_WidthStretch, 0.7f);
      ImGui::TableHeadersRow();
      const size_t rows_max = 200;  // a big keyspace is summarised, not listed
      for (size_t i = 0; i < keys.size() && i < rows_max; i++) {
        const KeyRow& k = keys[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        std::string name = (k.db != 0 ? "db" + std::to_string(k.db) + " " : "") + k.key;
        ImGui::TextUnformatted(name.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (%s)", name.c_str(), k.type.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(k.value.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.value.c_str());
        ImGui::TableNextColumn();
        std::string ttl = ttl_left_text(k);
        if (k.expire_at_ms < 0)
          ImGui::TextDisabled("%s", ttl.c_str());
        else
          ImGui::TextUnformatted(ttl.c_str());
        if (ImGui::IsItemHovered() && k.ttl_ms >= 0)
          ImGui::SetTooltip("%" PRId64 " ms left (expires at %" PRId64 " on the server's clock)",
                            k.ttl_ms, k.expire_at_ms);
      }
      ImGui::EndTable();
      if (keys.size() > rows_max) ImGui::TextDisabled("... %zu more", keys.size() - rows_max);
    }
  }
}

void App::draw_pool_stats() {
  if (model_.pool_stats().empty()) {
    ImGui::TextDisabled("no pool statistics in this trace");
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
    ImGui::Text("%s: connections in use (peak %" PRId64 "%s)", host.c_str(), peak,
                so_far ? " so far" : "");
    ImGui::PlotLines(("##pool_" + host).c_str(), plot.data(), kPoolPlotPoints, 0, nullptr, 0,
                     scale_max, {plot_px, 3 * ImGui::GetFontSize()});
    // The playhead on the plot, so the numbers below can be matched to the curve.
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float x = a.x + (b.x - a.x) * float(double(view_.playhead_us) / double(end_us));
    if (so_far && x + 1 < b.x - 1)
      ImGui::GetWindowDrawList()->AddRectFilled({x + 1, a.y + 1}, {b.x - 1, b.y - 1},
                                                ImGui::GetColorU32(ImGuiCol_FrameBg));
    ImGui::GetWindowDrawList()->AddLine({x, a.y}, {x, b.y}, view_.palette.playhead, 1.5f);
    if (now)
      ImGui::TextColored(now->timeouts > 0 ? kViolatedColour : kMutedColour,
                         "in use %" PRId64 "/%" PRId64 "  hits %" PRId64 "  misses %" PRId64
                         "  timeouts %" PRId64,
                         now->total - now->idle, now->total, now->hits, now->misses, now->timeouts);
    else
      ImGui::TextDisabled("no connections yet");
  }
  pool_plots_generation_ = trace_generation_;
}

// ---- Narration ----------------------------------------------------------------------------

void App::draw_narration(ImVec2 size) {
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
    if (shown == 0) ImGui::TextDisabled("Notes appear here as the playhead reaches them.");
    ImGui::PushTextWrapPos(0);
    for (size_t i = 0; i < shown; i++) {
      auto& n = notes[i];
      ImGui::TextColored(kMutedColour, "%s", seconds_text(n.time_us).c_str());
      ImGui::SameLine();
      std::string text = n.actor.empty() ? n.text : n.actor + ": " + n.text;
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

}  // namespace redlab::gui
