// What-if interventions: the App's side (see whatif.h for the design). The run with the
// interventions is the shown one; the original (the same choices, no interventions) is kept
// for the faint picture under it and redone only when a choice other than the interventions
// changes, so an edit costs one fake run.
#include "app/gui/whatif.h"

#include <imgui.h>
#include <imgui_stdlib.h>  // needs imgui.h first (IMGUI_API)

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/backend.h"
#include "app/branch.h"
#include "app/files.h"
#include "app/gui/gui_app.h"
#include "sim/scenario/intervention.h"

namespace redlab::gui {

// ---- One intervention ---------------------------------------------------------------------

const int64_t* Intervention::value(const std::string& field) const {
  for (const Value& v : values)
    if (v.field == field) return &v.ms;
  return nullptr;
}
int64_t* Intervention::value(const std::string& field) {
  for (Value& v : values)
    if (v.field == field) return &v.ms;
  return nullptr;
}

std::string make_line(const Intervention& iv) {
  std::string line = iv.kind + " " + iv.target;
  if (!iv.on.empty()) line += " on " + iv.on;
  line += " at " + std::to_string(iv.at_ms);
  for (const Intervention::Value& v : iv.values) line += " " + v.field + " " + std::to_string(v.ms);
  if (!iv.why.empty()) line += " why " + iv.why;
  return line;
}

Intervention with_line(Intervention iv) {
  iv.line = make_line(iv);
  return iv;
}

std::optional<Intervention> parse_intervention(const scenario::Scenario& sc,
                                               const std::string& line, std::string* error) {
  nlohmann::ordered_json entry;
  try {
    entry = nlohmann::ordered_json::parse(scenario::intervention_entry(sc, line));
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
  Intervention iv;
  iv.line = line;
  for (auto& [key, value] : entry.items()) {
    if (key == "do") {
      iv.kind = value.get<std::string>();
    } else if (key == "actor") {
      iv.target = value.get<std::string>();
    } else if (key == "server") {
      // The server a fault on a server hits, or the one a client is cut off from.
      if (entry.contains("actor"))
        iv.on = value.get<std::string>();
      else
        iv.target = value.get<std::string>();
    } else if (key == "at_ms") {
      iv.at_ms = value.get<int64_t>();
    } else if (key == "why") {
      iv.why = value.get<std::string>();
    } else if (value.is_number_integer() && key.ends_with("_ms")) {
      iv.values.push_back({key.substr(0, key.size() - 3), value.get<int64_t>()});
    }
    // Any other word (key NAME) stays in the line, which is kept as it was written.
  }
  return iv;
}

std::string intervention_words(const Intervention& iv, Lang lang) {
  const std::string at = seconds_words(iv.at_ms * kUsPerMs, lang);
  auto ms = [&](const char* field) -> std::string {
    const int64_t* v = iv.value(field);
    return v ? trf(S::wi_ms, lang, {std::to_string(*v)}) : std::string();
  };
  const std::string& who = iv.target;
  if (iv.kind == "pause" && iv.value("for")) return trf(S::wi_w_pause, lang, {at, who, ms("for")});
  if (iv.kind == "crash")
    return iv.value("restart_after")
               ? trf(S::wi_w_crash_restart, lang, {at, who, ms("restart_after")})
               : trf(S::wi_w_crash, lang, {at, who});
  if (iv.kind == "disconnect") return trf(S::wi_w_disconnect, lang, {at, who});
  if (iv.kind == "latency" && iv.value("by"))
    return iv.value("for") ? trf(S::wi_w_latency, lang, {at, who, ms("by"), ms("for")})
                           : trf(S::wi_w_latency_rest, lang, {at, who, ms("by")});
  if (iv.kind == "partition" && iv.value("for"))
    return trf(S::wi_w_partition, lang, {at, who, iv.on, ms("for")});
  if (iv.kind == "clock_jump" && iv.value("by"))
    return trf(S::wi_w_clock_jump, lang, {at, who, ms("by")});
  if (iv.kind == "stall" && iv.value("for")) return trf(S::wi_w_stall, lang, {at, who, ms("for")});
  if (iv.kind == "restart") return trf(S::wi_w_restart, lang, {at, who});
  return trf(S::wi_w_other, lang, {at, iv.line});  // a kind the menu does not offer
}

// "Delay its next reply": no fault kind delays one reply only; latency adds the delay to every
// message on the client's open connections for a while, the closest there is.
const std::vector<InterventionChoice>& actor_choices() {
  static const std::vector<InterventionChoice> kChoices = {
      {"pause", S::wi_k_pause, {{"for", 15000}}},
      {"crash", S::wi_k_crash, {{"restart_after", 2000}}, false, true},
      {"disconnect", S::wi_k_disconnect, {}},
      {"latency", S::wi_k_latency, {{"by", 2000}, {"for", 5000}}},
      {"partition", S::wi_k_partition, {{"for", 3000}}, true},
  };
  return kChoices;
}

// No fault kind expires a key now (a clock_jump makes every key with a TTL expire early):
// the menu does not offer one it cannot stage.
const std::vector<InterventionChoice>& server_choices() {
  static const std::vector<InterventionChoice> kChoices = {
      {"clock_jump", S::wi_k_clock_jump, {{"by", 10000}}},
      {"stall", S::wi_k_stall, {{"for", 3000}}},
      {"restart", S::wi_k_restart, {}},
  };
  return kChoices;
}

const char* field_words(const std::string& field, Lang lang) {
  if (field == "for") return tr(S::wi_f_for, lang);
  if (field == "by") return tr(S::wi_f_by, lang);
  if (field == "restart_after") return tr(S::wi_f_restart_after, lang);
  if (field == "at") return tr(S::wi_f_at, lang);
  return field.c_str();  // never: every offered field has words
}

int64_t readable_ms(TimeUs t_us, double px_per_us) {
  constexpr double kStepPxMin = 4;
  constexpr int64_t kSteps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
  int64_t step_ms = kSteps[std::size(kSteps) - 1];
  for (int64_t s : kSteps)
    if (px_per_us <= 0 || double(s) * kUsPerMs * px_per_us >= kStepPxMin) {
      step_ms = s;
      break;
    }
  const int64_t step_us = step_ms * kUsPerMs;
  const int64_t rounded = (std::max<int64_t>(0, t_us) + step_us / 2) / step_us * step_ms;
  return std::max<int64_t>(0, rounded);
}

// ---- The App's side -----------------------------------------------------------------------

namespace {

const ImU32 kMarkerColour = IM_COL32(110, 30, 160, 255);
const ImU32 kMarkerText = IM_COL32(255, 255, 255, 255);
const ImU32 kGhostFill = IM_COL32(70, 70, 95, 55);
const ImU32 kGhostEdge = IM_COL32(70, 70, 95, 170);
const ImU32 kGhostViolation = IM_COL32(200, 40, 40, 120);

std::vector<std::string> lines_of(const std::vector<Intervention>& list) {
  std::vector<std::string> out;
  for (const Intervention& iv : list) out.push_back(iv.line);
  return out;
}

}  // namespace

bool App::whatif_possible() const {
  return scenario_ && backend_ == "fake" && !replay_ && !running() &&
         source_kind_ == SourceKind::run;
}

void App::clear_whatif() {
  interventions_.clear();
  undo_.clear();
  redo_.clear();
  original_trace_ = Trace();
  original_model_.reset();
  original_key_.clear();
  run_scenario_.reset();
  marker_rects_.clear();
  dragging_ = -1;
}

const scenario::Scenario& App::scenario_for_run() {
  if (interventions_.empty()) return *scenario_;
  run_scenario_ = *scenario_;
  scenario::add_interventions(*run_scenario_, lines_of(interventions_));
  return *run_scenario_;
}

void App::update_original() {
  if (interventions_.empty() || backend_ != "fake") {
    original_trace_ = Trace();
    original_model_.reset();
    original_key_.clear();
    return;
  }
  // Everything the original run depends on besides the scenario (open_scenario clears it).
  const scenario::RunOptions o = run_options();
  std::string key = scenario_->id + "\n" + std::to_string(o.seed) + "\n" + o.lang + "\n";
  for (auto& [k, v] : o.variant) key += k + "=" + v + "\n";
  for (auto& [k, v] : o.set) key += k + "=" + std::to_string(v) + "\n";
  for (auto& [k, v] : o.scripts) key += k + "=" + v + "\n";
  if (key == original_key_ && original_trace_.size() > 0) return;
  try {
    app::BackendChoice choice;
    scenario::RunResult r = app::run_on_backend(*scenario_, o, choice);
    original_trace_ = std::move(r.trace);
  } catch (const std::exception&) {
    original_trace_ = Trace();  // no faint picture; the run itself said what is wrong
  }
  original_model_.reset();
  original_model_.update(original_trace_);
  original_key_ = key;
}

bool App::rerun_whatif() {
  if (!scenario_ || backend_ != "fake" || running()) return false;
  const TimeUs from_us = view_.view_from_us, to_us = view_.view_to_us;
  const TimeUs playhead_us = view_.playhead_us;
  const bool was_playing = playing_;
  const bool had_run = source_kind_ == SourceKind::run;
  if (!run(false)) return false;
  if (had_run) {
    view_.view_from_us = from_us;
    view_.view_to_us = to_us;
    seek(playhead_us);
    playing_ = was_playing && playhead_us < model_.end_us();
  }
  return true;
}

bool App::apply_interventions(std::vector<Intervention> list, bool record_undo) {
  if (!scenario_) {
    set_error(tr(S::open_scenario_first, ui_lang()));
    return false;
  }
  std::vector<Intervention> before = interventions_;
  interventions_ = std::move(list);
  if (!rerun_whatif()) {
    const std::string why = error_;
    interventions_ = std::move(before);
    rerun_whatif();
    set_error(trf(S::wi_not_added, ui_lang(), {why}));
    return false;
  }
  if (record_undo) {
    undo_.push_back(std::move(before));
    if (undo_.size() > kUndoStepsMax) undo_.erase(undo_.begin());
    redo_.clear();
  }
  return true;
}

bool App::add_intervention(Intervention iv) {
  std::vector<Intervention> list = interventions_;
  list.push_back(iv.line.empty() ? with_line(std::move(iv)) : std::move(iv));
  return apply_interventions(std::move(list), true);
}

bool App::replace_intervention(size_t i, Intervention iv) {
  if (i >= interventions_.size()) return false;
  std::vector<Intervention> list = interventions_;
  list[i] = with_line(std::move(iv));
  if (list == interventions_) return true;
  return apply_interventions(std::move(list), true);
}

bool App::remove_intervention(size_t i) {
  if (i >= interventions_.size()) return false;
  std::vector<Intervention> list = interventions_;
  list.erase(list.begin() + std::ptrdiff_t(i));
  return apply_interventions(std::move(list), true);
}

bool App::undo() {
  if (undo_.empty()) return false;
  std::vector<Intervention> to = std::move(undo_.back());
  undo_.pop_back();
  std::vector<Intervention> now = interventions_;
  if (!apply_interventions(std::move(to), false)) return false;
  redo_.push_back(std::move(now));
  return true;
}

bool App::redo() {
  if (redo_.empty()) return false;
  std::vector<Intervention> to = std::move(redo_.back());
  redo_.pop_back();
  std::vector<Intervention> now = interventions_;
  if (!apply_interventions(std::move(to), false)) return false;
  undo_.push_back(std::move(now));
  return true;
}

app::Branch App::branch() const {
  app::Branch b;
  if (!scenario_) return b;
  // A library scenario by its id (as `redlab run` finds it); another file by its full path.
  const ScenarioEntry* entry = find_entry(scenario_->id);
  std::error_code ec;
  b.scenario = entry && std::filesystem::equivalent(entry->path, scenario_path_, ec)
                   ? scenario_->id
                   : std::filesystem::absolute(scenario_path_, ec).lexically_normal().string();
  const scenario::RunOptions o = run_options();
  b.seed = o.seed;
  b.lang = o.lang;
  b.variant = o.variant;
  b.params = o.set;
  b.scripts = o.scripts;
  b.interventions = lines_of(interventions_);
  return b;
}

bool App::save_branch(const std::string& path) {
  if (!scenario_) {
    set_error(tr(S::open_scenario_first, ui_lang()));
    return false;
  }
  if (auto error = app::write_output(path, app::branch_to_json(branch()))) {
    set_error(*error);
    return false;
  }
  set_status(trf(S::wi_saved, ui_lang(), {path}));
  return true;
}

bool App::open_branch(const std::string& path) {
  std::string error;
  std::optional<app::Branch> b = app::load_branch(path, &error);
  if (!b) {
    set_error(error);
    return false;
  }
  if (!open_scenario(b->scenario)) {
    set_error(path + ": " + error_);
    return false;
  }
  seed_ = b->seed;
  set_lang(b->lang);
  for (auto& [k, v] : b->variant) variant_[k] = v;
  for (auto& [k, v] : b->params) params_[k] = v;
  if (!b->scripts.empty()) branch_scripts_ = b->scripts;
  for (size_t i = 0; i < b->interventions.size(); i++) {
    std::optional<Intervention> iv = parse_intervention(*scenario_, b->interventions[i], &error);
    if (!iv) {
      set_error(path + ": interventions[" + std::to_string(i) + "]: " + error);
      clear_whatif();
      return false;
    }
    interventions_.push_back(std::move(*iv));
  }
  if (!run(false)) {
    const std::string why = error_;
    clear_whatif();
    set_error(path + ": " + why);
    return false;
  }
  branch_path_ = path;
  return true;
}

// ---- Drawing ------------------------------------------------------------------------------

void App::draw_whatif_timeline(ImVec2 size) {
  const bool editable = whatif_possible();
  if (editable) whatif_marker_input();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool ghost = editable && original_trace_.size() > 0 && !interventions_.empty();
  if (ghost) {
    dl->ChannelsSplit(2);
    dl->ChannelsSetCurrent(1);
  }
  view_.draw(model_, trace_, size);
  if (ghost) {
    dl->ChannelsSetCurrent(0);
    draw_whatif_ghost();
    dl->ChannelsMerge();
  }
  if (editable) {
    draw_whatif_markers();
    draw_whatif_menu();
  } else {
    marker_rects_.clear();
  }
}

// The original run under the lanes: its spans as faint grey boxes, its marks as faint dots,
// its violations as faint red frames, each on the row of the same name in the same lane.
void App::draw_whatif_ghost() {
  const DrawRecord& d = view_.last_draw;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float plot_x0 = d.x0, plot_x1 = d.ruler_max.x;
  const bool hide_future = view_.horizon_us < kTimeNeverUs && !view_.future_faint;
  const TimeUs to_us =
      hide_future ? std::min(view_.view_to_us, view_.horizon_us) : view_.view_to_us;
  const TimeUs from_us = view_.view_from_us;
  const TimeUs end_us = original_model_.end_us();
  auto x_of = [&](TimeUs t) { return std::clamp(view_.x_of(t), plot_x0 - 2, plot_x1 + 2); };
  const float clip_x1 = hide_future ? std::min(plot_x1, view_.x_of(to_us)) : plot_x1;
  for (const DrawRecord::LaneRect& lr : d.lanes) {
    if (lr.folded || lr.max.y <= lr.min.y) continue;
    const int now = model_.lane_index(lr.name), then = original_model_.lane_index(lr.name);
    if (now < 0 || then < 0) continue;
    const Lane& lane_now = model_.lanes()[size_t(now)];
    const Lane& lane_then = original_model_.lanes()[size_t(then)];
    dl->PushClipRect(ImVec2(plot_x0, lr.min.y), ImVec2(clip_x1, lr.max.y), true);
    for (const Item& band : lane_then.bands) {
      if (band.from_us > to_us) continue;
      const TimeUs b_to = band.open() ? end_us : band.to_us;
      if (b_to < from_us) continue;
      dl->AddRect(ImVec2(x_of(band.from_us), lr.min.y + 1), ImVec2(x_of(b_to), lr.max.y - 1),
                  kGhostEdge, 0, 0, 1.5f * view_.scale);
    }
    for (size_t r = 0; r < lane_now.rows.size() && r < lr.rows_y.size(); r++) {
      const Row* row = nullptr;
      for (const Row& candidate : lane_then.rows)
        if (candidate.label == lane_now.rows[r].label && candidate.kind == lane_now.rows[r].kind) {
          row = &candidate;
          break;
        }
      if (!row) continue;
      const float y0 = lr.rows_y[r] + 2, y1 = lr.rows_y[r] + lr.row_h - 2;
      for (size_t k = row->first_reaching(from_us); k < row->items.size(); k++) {
        const Item& it = row->items[k];
        if (it.from_us > to_us) break;
        const float x0 = x_of(it.from_us);
        if (it.to_us == it.from_us) {
          const float radius = std::max(2.5f, (y1 - y0) / 4);
          dl->AddCircleFilled(ImVec2(x0, (y0 + y1) / 2), radius, kGhostEdge);
          continue;
        }
        const float x1 = std::max(x0 + 1, x_of(it.open() ? end_us : it.to_us));
        dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), kGhostFill);
        dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), kGhostEdge);
      }
    }
    dl->PopClipRect();
  }
  // The original's violations: a faint red frame over the lanes they concern.
  dl->PushClipRect(ImVec2(plot_x0, d.ruler_max.y), ImVec2(clip_x1, d.area_max.y), true);
  for (const ViolationRegion& v : original_model_.violations()) {
    if (v.from_us > to_us || v.to_us < from_us) continue;
    for (const DrawRecord::LaneRect& lr : d.lanes)
      if (std::find(v.who.begin(), v.who.end(), lr.name) != v.who.end() && lr.max.y > lr.min.y)
        dl->AddRect(ImVec2(x_of(v.from_us), lr.min.y + 1), ImVec2(x_of(v.to_us), lr.max.y - 1),
                    kGhostViolation, 0, 0, 2.0f * view_.scale);
  }
  dl->PopClipRect();
}

// The markers' buttons go in before the timeline's own (ImGui gives the mouse to the first item
// under it), at the places the last frame drew them, so pressing a marker drags it instead of
// panning the view.
void App::whatif_marker_input() {
  const ImVec2 keep = ImGui::GetCursorScreenPos();
  const ImGuiIO& io = ImGui::GetIO();
  for (size_t i = 0; i < marker_rects_.size() && i < interventions_.size(); i++) {
    const WidgetRect r = marker_rects_[i];
    if (!r.valid()) continue;
    ImGui::SetCursorScreenPos(r.min);
    ImGui::InvisibleButton(("##wi_marker" + std::to_string(i)).c_str(),
                           ImVec2(r.max.x - r.min.x, r.max.y - r.min.y));
    record("whatif_marker:" + std::to_string(i));
    if (ImGui::IsItemHovered() || ImGui::IsItemActive())
      ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
      ImGui::SetTooltip("%s", intervention_words(interventions_[i], ui_lang()).c_str());
    if (ImGui::IsItemActivated()) {
      dragging_ = int(i);
      drag_start_ = interventions_;
      drag_grab_px_ = io.MousePos.x - view_.x_of(interventions_[i].at_ms * kUsPerMs);
    }
    if (ImGui::IsItemActive() && dragging_ == int(i)) {
      const int64_t at_ms =
          readable_ms(view_.t_of(io.MousePos.x - drag_grab_px_), view_.last_draw.px_per_us);
      if (at_ms != interventions_[i].at_ms) {
        std::vector<Intervention> list = interventions_;
        list[i].at_ms = at_ms;
        list[i] = with_line(std::move(list[i]));
        apply_interventions(std::move(list), false);
      }
    }
    if (ImGui::IsItemDeactivated() && dragging_ == int(i)) {
      dragging_ = -1;
      // The whole drag is one step back.
      if (interventions_ != drag_start_) {
        undo_.push_back(std::move(drag_start_));
        if (undo_.size() > kUndoStepsMax) undo_.erase(undo_.begin());
        redo_.clear();
      }
      drag_start_.clear();
    }
  }
  ImGui::SetCursorScreenPos(keep);
}

void App::draw_whatif_markers() {
  const DrawRecord& d = view_.last_draw;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  marker_rects_.assign(interventions_.size(), WidgetRect{});
  const float s = view_.scale;
  dl->PushClipRect(ImVec2(d.x0, d.ruler_max.y), ImVec2(d.ruler_max.x + 2, d.area_max.y), true);
  for (size_t i = 0; i < interventions_.size(); i++) {
    const Intervention& iv = interventions_[i];
    const DrawRecord::LaneRect* lane = nullptr;
    for (const DrawRecord::LaneRect& lr : d.lanes)
      if (lr.name == iv.target && lr.max.y > lr.min.y) lane = &lr;
    if (!lane) continue;
    const float x = view_.x_of(iv.at_ms * kUsPerMs);
    if (x < d.x0 - 1 || x > d.ruler_max.x + 1) continue;
    const bool active = dragging_ == int(i);
    dl->AddLine(ImVec2(x, lane->min.y), ImVec2(x, lane->max.y), kMarkerColour,
                (active ? 3.0f : 2.0f) * s);
    const std::string number = std::to_string(i + 1);
    const ImVec2 text = ImGui::CalcTextSize(number.c_str());
    const ImVec2 a(x, lane->min.y + 1), b(x + text.x + 8 * s, lane->min.y + 1 + text.y + 2 * s);
    dl->AddRectFilled(a, b, kMarkerColour, 3 * s);
    if (active) dl->AddRect(a, b, IM_COL32(255, 200, 0, 255), 3 * s, 0, 2 * s);
    dl->AddText(ImVec2(a.x + 4 * s, a.y + 1 * s), kMarkerText, number.c_str());
    marker_rects_[i] = {ImVec2(a.x - 3 * s, a.y), b};
  }
  dl->PopClipRect();
}

void App::draw_whatif_menu() {
  const DrawRecord& d = view_.last_draw;
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 m = io.MousePos;
  const Lang L = ui_lang();
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Right) && ImGui::IsWindowHovered() && m.x >= d.x0 &&
      m.x <= d.ruler_max.x && m.y >= d.ruler_max.y) {
    for (const DrawRecord::LaneRect& lr : d.lanes) {
      if (m.x < lr.min.x || m.x > lr.max.x || m.y < lr.min.y || m.y > lr.max.y) continue;
      const int index = model_.lane_index(lr.name);
      if (index < 0) break;
      const LaneKind kind = model_.lanes()[size_t(index)].kind;
      if (kind == LaneKind::resource) break;  // a resource is not a process: nothing to do
      menu_ = WhatIfMenu{};
      menu_.lane = lr.name;
      menu_.server = kind == LaneKind::server;
      menu_.at_ms = readable_ms(view_.t_of(m.x), d.px_per_us);
      if (!scenario_->servers.empty()) menu_.on = scenario_->servers.front().name;
      ImGui::OpenPopup("##whatif_menu");
      break;
    }
  }
  if (!ImGui::BeginPopup("##whatif_menu")) return;
  record_window("whatif_menu");
  const auto& choices = menu_.server ? server_choices() : actor_choices();
  ImGui::TextUnformatted(
      trf(S::wi_menu_title, L, {menu_.lane, seconds_words(menu_.at_ms * kUsPerMs, L)}).c_str());
  ImGui::Separator();
  for (size_t c = 0; c < choices.size(); c++) {
    if (ImGui::Selectable(tr(choices[c].label, L), menu_.choice == int(c),
                          ImGuiSelectableFlags_DontClosePopups)) {
      menu_.choice = int(c);
      menu_.values = choices[c].values;
      menu_.with_optional = false;
    }
    record(std::string("whatif_kind:") + choices[c].kind);
  }
  if (menu_.choice >= 0 && size_t(menu_.choice) < choices.size()) {
    const InterventionChoice& choice = choices[size_t(menu_.choice)];
    ImGui::Separator();
    const float field_px = 110 * view_.scale;
    ImGui::SetNextItemWidth(field_px);
    ImGui::InputScalar((std::string(field_words("at", L)) + "##wi_at").c_str(), ImGuiDataType_S64,
                       &menu_.at_ms);
    record("whatif_at");
    menu_.at_ms = std::max<int64_t>(0, menu_.at_ms);
    if (choice.optional_value)
      ImGui::Checkbox(
          (std::string(field_words(choice.values.front().field, L)) + "##wi_opt").c_str(),
          &menu_.with_optional);
    for (Intervention::Value& v : menu_.values) {
      if (choice.optional_value && !menu_.with_optional) break;
      ImGui::SetNextItemWidth(field_px);
      ImGui::InputScalar((std::string(field_words(v.field, L)) + "##wi_" + v.field).c_str(),
                         ImGuiDataType_S64, &v.ms);
      record("whatif_value:" + v.field);
    }
    if (choice.needs_server && scenario_->servers.size() > 1) {
      ImGui::SetNextItemWidth(field_px);
      if (ImGui::BeginCombo((std::string(tr(S::wi_server, L)) + "##wi_on").c_str(),
                            menu_.on.c_str())) {
        for (const auto& server : scenario_->servers)
          if (ImGui::Selectable(server.name.c_str(), server.name == menu_.on))
            menu_.on = server.name;
        ImGui::EndCombo();
      }
    }
    if (ImGui::Button(tr(S::wi_add, L))) {
      Intervention iv;
      iv.kind = choice.kind;
      iv.target = menu_.lane;
      iv.at_ms = menu_.at_ms;
      if (!choice.optional_value || menu_.with_optional) iv.values = menu_.values;
      if (choice.needs_server) iv.on = menu_.on;
      ImGui::CloseCurrentPopup();
      add_intervention(with_line(std::move(iv)));
    }
    record("whatif_add");
    ImGui::SameLine();
  }
  if (ImGui::Button(tr(S::wi_cancel, L))) ImGui::CloseCurrentPopup();
  record("whatif_cancel");
  ImGui::EndPopup();
}

void App::draw_whatif_panel() {
  const Lang L = ui_lang();
  if (!ImGui::CollapsingHeader((std::string(tr(S::wi_header, L)) + "###whatif").c_str(),
                               ImGuiTreeNodeFlags_DefaultOpen))
    return;
  record("whatif_header");
  ImGui::PushTextWrapPos(0);
  if (backend_ != "fake") {
    ImGui::TextDisabled("%s", tr(S::wi_fake_only, L));
    ImGui::PopTextWrapPos();
    return;
  }
  if (interventions_.empty()) ImGui::TextDisabled("%s", tr(S::wi_none, L));
  // The fields edit a copy; a value is applied (one undo step) when its field is left. The
  // copy follows the list except while one of its fields is being typed in.
  if (panel_edit_.size() != interventions_.size() || dragging_ >= 0 || !ImGui::IsAnyItemActive())
    panel_edit_ = interventions_;
  std::optional<size_t> remove;
  std::optional<size_t> edited;
  const float field_px = 90 * view_.scale;
  for (size_t i = 0; i < panel_edit_.size(); i++) {
    ImGui::PushID(int(i));
    Intervention& iv = panel_edit_[i];
    ImGui::TextUnformatted(
        (std::to_string(i + 1) + ". " + intervention_words(interventions_[i], L)).c_str());
    record("whatif_line:" + std::to_string(i));
    ImGui::Indent();
    ImGui::SetNextItemWidth(field_px);
    ImGui::InputScalar(field_words("at", L), ImGuiDataType_S64, &iv.at_ms);
    if (ImGui::IsItemDeactivatedAfterEdit()) edited = i;
    for (Intervention::Value& v : iv.values) {
      ImGui::SetNextItemWidth(field_px);
      ImGui::InputScalar(field_words(v.field, L), ImGuiDataType_S64, &v.ms);
      if (ImGui::IsItemDeactivatedAfterEdit()) edited = i;
    }
    if (ImGui::SmallButton(tr(S::wi_remove, L))) remove = i;
    record("whatif_remove:" + std::to_string(i));
    ImGui::Unindent();
    ImGui::PopID();
  }
  const bool can_undo = !undo_.empty(), can_redo = !redo_.empty();
  if (!can_undo) ImGui::BeginDisabled();
  if (ImGui::Button(tr(S::wi_undo, L))) undo();
  if (!can_undo) ImGui::EndDisabled();
  record("whatif_undo");
  ImGui::SameLine();
  if (!can_redo) ImGui::BeginDisabled();
  if (ImGui::Button(tr(S::wi_redo, L))) redo();
  if (!can_redo) ImGui::EndDisabled();
  record("whatif_redo");
  if (!interventions_.empty() && original_trace_.size() > 0) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + h - 2),
                                              kGhostFill);
    ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + h - 2),
                                        kGhostEdge);
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine();
    ImGui::TextDisabled("%s", tr(S::wi_ghost_legend, L));
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##branch_path", tr(S::wi_path_hint, L), &branch_path_);
  record("whatif_path");
  if (ImGui::Button(tr(S::wi_save, L))) {
    if (branch_path_.empty())
      set_error(tr(S::wi_need_path, L));
    else
      save_branch(branch_path_);
  }
  record("whatif_save");
  ImGui::PopTextWrapPos();
  if (edited && *edited < interventions_.size()) {
    Intervention iv = panel_edit_[*edited];
    iv.at_ms = std::max<int64_t>(0, iv.at_ms);
    replace_intervention(*edited, std::move(iv));
  } else if (remove) {
    remove_intervention(*remove);
  }
}

}  // namespace redlab::gui
