// The sweep panel (sweep_panel.h): a parameter over its range, seeds 1..S at every value, run by
// app::run_sweep on a worker thread (the same code and the same results as `redlab sweep`),
// and plotted as one row of marks per check: the redder a mark, the larger the share of seeds
// that violated the check at that value. A last row marks where the scenario's expectation
// was not met. A click on a mark opens that run on the timeline.
#include "app/gui/sweep_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/gui_app.h"

namespace redlab::gui {

namespace {

const ImVec4 kMuted{0.36f, 0.36f, 0.42f, 1};
const ImVec4 kBad{0.80f, 0.08f, 0.08f, 1};
const ImVec4 kWhatIf{0.42f, 0.26f, 0.0f, 1};  // the what-if branch's words
const ImU32 kNoneViolated = IM_COL32(190, 228, 190, 255);
const ImU32 kNotJudged = IM_COL32(215, 215, 220, 255);
const ImU32 kUnfinished = IM_COL32(245, 245, 247, 255);
const ImU32 kCellEdge = IM_COL32(255, 255, 255, 255);

// From a pale red (one seed in many) to a deep red (every seed).
ImU32 violated_colour(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  auto mix = [&](int from, int to) { return int(std::lround(from + (to - from) * f)); };
  return IM_COL32(mix(250, 175), mix(190, 20), mix(180, 20), 255);
}

void tip(const char* text) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

}  // namespace

bool App::open_sweep() {
  if (!scenario_ || scenario_->params.empty()) {
    set_error(tr(S::sw_no_params, ui_lang()));
    return false;
  }
  sweep_.open = true;
  if (sweep_.scenario_id != scenario_->id || !scenario_->param(sweep_.request.param)) {
    const scenario::Param& p = scenario_->params.front();
    sweep_.scenario_id = scenario_->id;
    sweep_.request.param = p.name;
    sweep_.request.from = p.min;
    sweep_.request.to = p.max;
    sweep_.request.steps = std::min<int64_t>(21, p.max - p.min + 1);
    sweep_.request.seeds = 10;
  }
  return true;
}

bool App::start_sweep() {
  if (!scenario_ || sweeping()) return false;
  app::SweepRequest request = sweep_.request;
  // The other choices are the run's: its variants, its other parameters, a student's script.
  request.base = run_options();
  request.base.set.erase(request.param);
  request.base.on_event = nullptr;
  // And its what-if interventions, as `redlab sweep BRANCH.json` has them.
  std::optional<scenario::Scenario> sc;
  try {
    sc = scenario_for_run();
    app::validate_sweep(*sc, request);
  } catch (const std::exception& e) {
    sweep_.error = e.what();
    return false;
  }
  sweep_.error.clear();
  sweep_.result.reset();
  sweep_.result_request = request;
  sweep_.result_scenario = scenario_->id;
  sweep_.result_interventions = interventions_;
  // As `redlab sweep`: up to four threads; the result does not depend on how many.
  const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  sweep_.job = std::make_unique<BackgroundJob<app::SweepResult>>(
      [sc = std::move(*sc), request, threads](const auto& progress,
                                              const std::atomic<bool>* cancel) {
        return app::run_sweep(sc, request, threads, progress, cancel);
      },
      request.steps * request.seeds);
  return true;
}

void App::cancel_sweep() {
  if (sweep_.job) sweep_.job->cancel();
}

std::pair<int64_t, int64_t> App::sweep_progress() const {
  return sweep_.job ? sweep_.job->progress() : std::pair<int64_t, int64_t>{0, 0};
}

void App::poll_sweep() {
  if (!sweep_.job) return;
  auto outcome = sweep_.job->poll();
  if (!outcome) return;
  sweep_.result = std::move(outcome->result);
  sweep_.error = std::move(outcome->error);
  sweep_.job.reset();
}

bool App::open_sweep_point(size_t point, const std::string& check) {
  if (!sweep_.result || point >= sweep_.result->points.size()) return false;
  if (!scenario_ || scenario_->id != sweep_.result_scenario) {
    if (!open_scenario(sweep_.result_scenario)) return false;
  }
  const app::SweepPoint& p = sweep_.result->points[point];
  int64_t seed = 1;
  if (check.empty()) {
    if (p.first_unmet_seed > 0) seed = p.first_unmet_seed;
  } else {
    for (const app::SweepCheck& c : p.checks)
      if (c.name == check && c.first_seed > 0) seed = c.first_seed;
  }
  const app::SweepRequest& request = sweep_.result_request;
  variant_ = request.base.variant;
  params_ = request.base.set;
  params_[request.param] = p.value;
  seed_ = uint64_t(seed);
  if (!run(false)) return false;
  // The playhead at the check's first violation (paused), as the verdicts' buttons do.
  for (size_t vi : model_.violations_by_start())
    if (check.empty() || model_.violations()[vi].check == check) {
      jump_to_violation(vi);
      break;
    }
  sweep_.open = false;
  return true;
}

void App::draw_sweep() {
  if (!sweep_.open) return;
  if (!scenario_ || (sweep_.scenario_id != scenario_->id && !sweeping())) {
    if (!scenario_ || scenario_->params.empty()) {
      sweep_.open = false;
      return;
    }
    sweep_.scenario_id.clear();
    open_sweep();  // another scenario: its own parameters
  }
  const Lang L = ui_lang();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string title = trf(S::sw_title, L, {scenario_->title.get(lang_)}) + "###sweep_panel";
  if (!ImGui::Begin(title.c_str(), &sweep_.open,
                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                        ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize)) {
    ImGui::End();
    return;
  }
  record_window("sweep_panel");
  resume_text_capture();
  app::SweepRequest& rq = sweep_.request;
  const scenario::Param* param = scenario_->param(rq.param);

  // The request: which parameter, its range, how many points and seeds.
  ImGui::BeginDisabled(sweeping());
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr(S::sw_param, L));
  ImGui::SameLine();
  const std::string shown = param ? param->label.get(lang_) : rq.param;
  ImGui::SetNextItemWidth(std::clamp(
      ImGui::CalcTextSize(shown.c_str()).x + ImGui::GetFrameHeight() + 16, 160.0f, 480.0f));
  if (ImGui::BeginCombo("###sw_param", (shown.empty() ? rq.param : shown).c_str())) {
    for (const scenario::Param& p : scenario_->params) {
      const std::string label = p.label.get(lang_).empty() ? p.name : p.label.get(lang_);
      if (ImGui::Selectable((label + "###sw_param_" + p.name).c_str(), p.name == rq.param)) {
        rq.param = p.name;
        rq.from = p.min;
        rq.to = p.max;
        rq.steps = std::min<int64_t>(21, p.max - p.min + 1);
      }
    }
    ImGui::EndCombo();
  }
  record("sw_param");
  param = scenario_->param(rq.param);
  auto number = [&](S label, const char* id, int64_t* value, int64_t lo, int64_t hi) {
    ImGui::SameLine(0, 16);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr(label, L));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110);
    ImGui::InputScalar(id, ImGuiDataType_S64, value);
    *value = std::clamp(*value, lo, hi);
    record(id + 3);  // "###sw_from" -> "sw_from"
  };
  if (param) {
    number(S::sw_from, "###sw_from", &rq.from, param->min, param->max);
    number(S::sw_to, "###sw_to", &rq.to, param->min, param->max);
  }
  number(S::sw_steps, "###sw_steps", &rq.steps, 1, 200);
  number(S::sw_seeds, "###sw_seeds", &rq.seeds, 1, 1000);
  ImGui::EndDisabled();
  ImGui::SameLine(0, 16);
  if (sweeping()) {
    auto [done, total] = sweep_progress();
    const float fraction = total > 0 ? float(done) / float(total) : 0.0f;
    ImGui::ProgressBar(
        fraction, {260, 0},
        trf(S::sw_running, L, {std::to_string(done), std::to_string(total)}).c_str());
    record("sw_progress");
    ImGui::SameLine();
    if (ImGui::Button((std::string(tr(S::sw_cancel, L)) + "###sw_cancel").c_str())) cancel_sweep();
    record("sw_cancel");
  } else {
    if (ImGui::Button((std::string(tr(S::sw_start, L)) + "###sw_start").c_str())) start_sweep();
    record("sw_start");
    tip(trf(S::sw_start_tip, L, {std::to_string(rq.steps * rq.seeds)}).c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::cmp_close, L)) + "###sw_close").c_str()))
    sweep_.open = false;
  if (!sweep_.error.empty())
    ImGui::TextColored(kBad, "%s", trf(S::sw_error, L, {sweep_.error}).c_str());
  ImGui::Separator();

  if (!sweep_.result || sweep_.result_scenario != scenario_->id) {
    ImGui::TextColored(kMuted, "%s", tr(S::sw_how_to_read, L));
    ImGui::End();
    return;
  }
  const app::SweepResult& result = *sweep_.result;
  const app::SweepRequest& done_rq = sweep_.result_request;
  const scenario::Param* done_param = scenario_->param(done_rq.param);
  const std::string param_words = done_param && !done_param->label.get(lang_).empty()
                                      ? done_param->label.get(lang_)
                                      : done_rq.param;
  const int64_t total_runs = done_rq.steps * done_rq.seeds;
  if (result.cancelled)
    ImGui::TextColored(
        kBad, "%s",
        trf(S::sw_cancelled, L, {std::to_string(result.runs), std::to_string(total_runs)}).c_str());
  else {
    // With which variants (the scenario's words): what the plot is of.
    std::string choices;
    for (const scenario::Variant& var : scenario_->variants) {
      auto chosen = done_rq.base.variant.find(var.name);
      const std::string value = chosen == done_rq.base.variant.end() ? var.def : chosen->second;
      auto it = var.value_labels.find(value);
      std::string words = it == var.value_labels.end() ? value : it->second.get(lang_);
      choices += (choices.empty() ? "" : ", ") + var.label.get(lang_) + ": " +
                 (words.empty() ? value : words);
    }
    // And the other parameters the runs had away from their defaults.
    for (const scenario::Param& p : scenario_->params) {
      auto it = done_rq.base.set.find(p.name);
      if (p.name == done_rq.param || it == done_rq.base.set.end() || it->second == p.def) continue;
      const std::string words = p.label.get(lang_).empty() ? p.name : p.label.get(lang_);
      choices +=
          (choices.empty() ? "" : ", ") + words + ": " +
          (p.unit == "ms" ? time_words(it->second * kUsPerMs, L) : std::to_string(it->second));
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted((trf(S::sw_done, L,
                                {std::to_string(result.runs), std::to_string(done_rq.seeds),
                                 std::to_string(done_rq.steps), param_words}) +
                            (choices.empty() ? "" : "  (" + choices + ")"))
                               .c_str());
    ImGui::PopTextWrapPos();
  }
  // A what-if branch's sweep: its interventions in every run, and so no expected outcome.
  if (!result.expectation) {
    std::string list;
    for (const Intervention& iv : sweep_.result_interventions)
      list += (list.empty() ? "" : "; ") + intervention_words(iv, L);
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(kWhatIf, "%s", trf(S::sw_with_interventions, L, {list}).c_str());
    ImGui::PopTextWrapPos();
    record("sw_interventions");
  }
  record("sw_summary");
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(kMuted, "%s", tr(S::sw_how_to_read, L));
  ImGui::PopTextWrapPos();
  ImGui::Spacing();

  // The plot: one row per check and one for the expectation; a column per value.
  const std::vector<app::SweepPoint>& points = result.points;
  if (points.empty()) {
    ImGui::End();
    return;
  }
  std::vector<std::string> rows;  // check names; "" = the expectation
  for (const app::SweepCheck& c : points.front().checks) rows.push_back(c.name);
  if (result.expectation) rows.push_back("");  // none with interventions
  const float font_px = ImGui::GetFontSize();
  float names_px = ImGui::CalcTextSize(tr(S::sw_expectation_row, L)).x;
  for (const std::string& r : rows)
    if (!r.empty()) names_px = std::max(names_px, ImGui::CalcTextSize(title_of(r).c_str()).x);
  names_px += 16;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float plot_px = std::max(100.0f, avail.x - names_px - 8);
  const float row_px =
      std::clamp((avail.y - 5 * font_px) / float(rows.size()), font_px * 1.4f, font_px * 3.2f);
  const float cell_px = plot_px / float(points.size());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::optional<std::pair<size_t, size_t>> hovered;  // row, point
  for (size_t r = 0; r < rows.size(); r++) {
    const float y0 = origin.y + float(r) * row_px;
    const std::string name = rows[r].empty() ? tr(S::sw_expectation_row, L) : title_of(rows[r]);
    dl->AddText({origin.x, y0 + (row_px - font_px) / 2},
                rows[r].empty() ? IM_COL32(90, 60, 0, 255) : IM_COL32(25, 25, 35, 255),
                name.c_str());
    if (view_.record_texts) view_.last_draw.texts.push_back(name);
    for (size_t i = 0; i < points.size(); i++) {
      const app::SweepPoint& p = points[i];
      const ImVec2 a{origin.x + names_px + float(i) * cell_px, y0 + 2};
      const ImVec2 b{a.x + std::max(1.0f, cell_px - 1), y0 + row_px - 2};
      int64_t bad = 0, not_judged = 0;
      if (rows[r].empty()) {
        bad = p.expectation_unmet;
      } else {
        bad = p.checks[r].violated;
        not_judged = p.checks[r].not_judged;
      }
      ImU32 colour = !p.finished ? kUnfinished
                     : bad > 0   ? violated_colour(double(bad) / double(done_rq.seeds))
                     : not_judged == done_rq.seeds ? kNotJudged
                                                   : kNoneViolated;
      if (rows[r].empty() && p.finished && bad > 0) colour = IM_COL32(230, 159, 0, 255);
      dl->AddRectFilled(a, b, colour);
      if (cell_px > 4) dl->AddRect(a, b, kCellEdge);
      widgets_["sweep_point:" + rows[r] + ":" + std::to_string(i)] = WidgetRect{a, b};
      if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hovered = {r, i};
    }
  }
  // The axis: a few of the values under the plot, in the parameter's unit.
  const float axis_y = origin.y + float(rows.size()) * row_px + 4;
  const size_t ticks = std::min<size_t>(points.size(), std::max<size_t>(2, size_t(plot_px / 110)));
  float last_right = -1e9f;
  for (size_t k = 0; k < ticks; k++) {
    const size_t i = ticks == 1 ? 0 : k * (points.size() - 1) / (ticks - 1);
    std::string text = std::to_string(points[i].value);
    if (done_param && done_param->unit == "ms") text = time_words(points[i].value * kUsPerMs, L);
    const float x = origin.x + names_px + (float(i) + 0.5f) * cell_px;
    const float w = ImGui::CalcTextSize(text.c_str()).x;
    if (x - w / 2 < last_right + 8) continue;
    dl->AddLine({x, axis_y - 2}, {x, axis_y + 3}, IM_COL32(90, 90, 100, 255));
    dl->AddText({x - w / 2, axis_y + 4}, IM_COL32(60, 60, 70, 255), text.c_str());
    if (view_.record_texts) view_.last_draw.texts.push_back(text);
    last_right = x + w / 2;
  }
  // The parameter's name under its values, then the legend: what the colours mean.
  const float name_px = ImGui::CalcTextSize(param_words.c_str()).x;
  dl->AddText({origin.x + names_px + (plot_px - name_px) / 2, axis_y + font_px + 8},
              IM_COL32(25, 25, 35, 255), param_words.c_str());
  float lx = origin.x + names_px;
  const float ly = axis_y + 2 * font_px + 16;
  for (auto [colour, words] :
       {std::pair{kNoneViolated, tr(S::sw_legend_none, L)}, std::pair{violated_colour(0.05), ""},
        std::pair{violated_colour(1.0), tr(S::sw_legend_all, L)},
        std::pair{kNotJudged, tr(S::sw_legend_not_judged, L)},
        std::pair{IM_COL32(230, 159, 0, 255), tr(S::sw_legend_unmet, L)}}) {
    if (!result.expectation && words == tr(S::sw_legend_unmet, L)) continue;  // no such row
    dl->AddRectFilled({lx, ly + 2}, {lx + font_px, ly + font_px}, colour);
    lx += font_px + 4;
    if (*words) {
      dl->AddText({lx, ly}, IM_COL32(60, 60, 70, 255), words);
      if (view_.record_texts) view_.last_draw.texts.push_back(words);
      lx += ImGui::CalcTextSize(words).x + 18;
    }
  }
  // The plot's room, as one item: hovering and clicking a mark.
  ImGui::SetCursorScreenPos(origin);
  ImGui::InvisibleButton("sweep_plot", {names_px + plot_px, float(rows.size()) * row_px});
  record("sweep_plot");
  if (hovered && ImGui::IsItemHovered()) {
    const auto [r, i] = *hovered;
    const app::SweepPoint& p = points[i];
    std::string value_text = std::to_string(p.value);
    std::string text;
    int64_t seed = 1;
    if (!p.finished) {
      text = tr(S::sw_point_unfinished, L);
    } else if (rows[r].empty()) {
      text = trf(S::sw_point_unmet_tip, L,
                 {param_words, value_text, std::to_string(p.expectation_unmet),
                  std::to_string(done_rq.seeds)});
      if (p.first_unmet_seed > 0) seed = p.first_unmet_seed;
    } else {
      const app::SweepCheck& c = p.checks[r];
      text =
          title_of(c.name) + "\n" +
          trf(S::sw_point_tip, L,
              {param_words, value_text, std::to_string(c.violated), std::to_string(done_rq.seeds)});
      if (c.first_seed > 0) seed = c.first_seed;
    }
    if (p.finished)
      text += "\n" + trf(S::sw_point_open, L, {std::to_string(seed), param_words, value_text});
    ImGui::SetTooltip("%s", text.c_str());
  }
  if (hovered && ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
    const auto [r, i] = *hovered;
    if (points[i].finished) {
      const std::string check = rows[r];
      ImGui::End();
      open_sweep_point(i, check);
      return;
    }
  }
  ImGui::End();
}

}  // namespace redlab::gui
