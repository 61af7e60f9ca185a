// The compare view (compare_view.h): two runs on one time axis, the first divergence marked,
// every difference trace_diff found listed in the chosen language and clickable. The
// differences are trace_diff's own (sim/core/trace_diff.h), worded here from their typed parts
// (the events, the field, the check), never from trace_diff's English line.
#include "app/gui/compare_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "app/backend.h"
#include "app/files.h"
#include "app/gui/gui_app.h"
#include "sim/core/assert.h"
#include "sim/scenario/expr.h"

namespace redlab::gui {

namespace {

const ImVec4 kMuted{0.36f, 0.36f, 0.42f, 1};
const ImVec4 kFlipColour{0.80f, 0.08f, 0.08f, 1};
// The marks of the differences: vermillion for an event one run lacks, purple for a value,
// blue-grey for timing; the first divergence a magenta line across both runs.
const ImU32 kOnlyMark = IM_COL32(213, 94, 0, 255);
const ImU32 kValueMark = IM_COL32(170, 51, 119, 255);
const ImU32 kTimingMark = IM_COL32(90, 110, 150, 255);
const ImU32 kDivergence = IM_COL32(200, 0, 160, 255);

void tip(const char* text) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

// Fields whose numbers are durations or moments: scaled with the time.
bool time_field(F f) {
  return f == F::from_us || f == F::to_us || f == F::duration_us || f == F::timeout_at_us;
}

// At most max_bytes of `s` (cut at a character's start), "…" where it was cut. Not
// trace_excerpt: its "(N bytes)" is English.
std::string elided(std::string s, size_t max_bytes = 60) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';  // one line per difference
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) cut--;
  return s.substr(0, cut) + "\u2026";
}

std::string field_text(const TraceEvent& e, F f, Lang L) {
  if (const int64_t* n = e.num(f)) return time_field(f) ? time_words(*n, L) : std::to_string(*n);
  if (const std::string* s = e.str(f)) return elided(*s);
  if (const auto* list = e.list(f)) {
    std::string out;
    for (const std::string& item : *list) out += (out.empty() ? "" : " ") + item;
    return elided(out);
  }
  return tr(S::cmp_none, L);
}

// The tolerance of a comparison: the scenario's (its traces say), else 50 ms, as `redlab diff`.
TimeUs tolerance_of(const Trace& a, const Trace& b) {
  int64_t ms = -1;
  for (const Trace* t : {&a, &b})
    if (auto n = scenario::parse_int(t->meta_or("tolerance_ms"))) ms = std::max(ms, *n);
  return (ms < 0 ? 50 : ms) * kUsPerMs;
}

std::optional<Trace> read_trace_file(const std::string& path, std::string* error) {
  std::string text;
  if (auto read_error = app::read_input(path, app::InputKind::trace, &text)) {
    *error = *read_error;
    return std::nullopt;
  }
  return trace_from_json(text, error);
}

}  // namespace

Trace on_scenario_axis(const Trace& trace) {
  const std::string scale_text = trace.meta_or("time_scale");
  const double scale = scale_text.empty() ? 1.0 : std::strtod(scale_text.c_str(), nullptr);
  if (!(scale > 0) || scale == 1.0) return trace;
  Trace out;
  for (const auto& [k, v] : trace.meta()) out.set_meta(k, v);
  out.reserve(trace.size());
  auto unscaled = [&](TimeUs t) { return static_cast<TimeUs>(std::llround(double(t) / scale)); };
  for (const TraceEvent& e : trace.events()) {
    TraceEvent x = e;
    x.time_us = unscaled(x.time_us);
    for (TraceField& f : x.fields)
      if (time_field(f.key))
        if (auto* n = std::get_if<int64_t>(&f.value)) *n = unscaled(*n);
    out.append(std::move(x));
  }
  return out;
}

const Trace* App::compare_trace(bool b) const {
  const auto& side = b ? compare_.b : compare_.a;
  return side && compare_.b ? &side->trace : nullptr;
}

bool App::open_compare() {
  if (!scenario_ || trace_.size() == 0 || running()) {
    set_error(tr(S::cmp_need_run, ui_lang()));
    return false;
  }
  compare_.open = true;
  compare_.b.reset();
  compare_.diff = {};
  compare_.selected = -1;
  compare_.variant_b = variant_;
  compare_.params_b = params_;
  compare_.seed_b = int64_t(seed_);
  // A as it is shown now: the run on the timeline.
  compare_.a = std::make_unique<CompareSide>();
  compare_.a->trace = on_scenario_axis(trace_);
  compare_.a->raw = trace_;
  compare_.a->file = source_kind_ == SourceKind::trace ? source_ : "";
  compare_.a->model.update(compare_.a->trace);
  return true;
}

bool App::compare_with_run(const std::map<std::string, std::string>& variant,
                           const std::map<std::string, int64_t>& params, uint64_t seed) {
  if (!compare_.open && !open_compare()) return false;
  if (!scenario_) return false;
  scenario::RunOptions o = run_options();
  o.variant = variant;
  o.set = params;
  o.seed = seed;
  try {
    app::BackendChoice choice;  // the fake: B is a pure function of its choices
    scenario::RunResult r = app::run_on_backend(*scenario_, o, choice);
    return compare_with(std::move(r.trace), "");
  } catch (const std::exception& e) {
    set_error(e.what());
    return false;
  }
}

bool App::compare_with_file(const std::string& path) {
  if (!compare_.open && !open_compare()) return false;
  std::string error;
  std::optional<Trace> b = read_trace_file(path, &error);
  if (!b) {
    set_error(trf(S::cmp_not_a_trace, ui_lang(), {path, error}));
    return false;
  }
  return compare_with(std::move(*b), path);
}

bool App::compare_files(const std::string& a_path, const std::string& b_path) {
  std::string error;
  std::optional<Trace> a = read_trace_file(a_path, &error);
  if (!a) {
    set_error(trf(S::cmp_not_a_trace, ui_lang(), {a_path, error}));
    return false;
  }
  std::optional<Trace> b = read_trace_file(b_path, &error);
  if (!b) {
    set_error(trf(S::cmp_not_a_trace, ui_lang(), {b_path, error}));
    return false;
  }
  compare_.open = true;
  compare_.a = std::make_unique<CompareSide>();
  compare_.a->trace = on_scenario_axis(*a);
  compare_.a->raw = *a;
  compare_.a->file = a_path;
  compare_.a->model.update(compare_.a->trace);
  compare_.file_b = b_path;
  return compare_with(std::move(*b), b_path);
}

bool App::compare_with(Trace b, const std::string& b_file) {
  REDLAB_ASSERT(compare_.a && "A is set when the view opens");
  compare_.b = std::make_unique<CompareSide>();
  compare_.b->trace = on_scenario_axis(b);
  compare_.b->raw = b;
  compare_.b->file = b_file;
  compare_.b->model.update(compare_.b->trace);
  compare_.tolerance_us = tolerance_of(compare_.a->trace, compare_.b->trace);
  TraceDiffOptions options;
  options.tolerance_us = compare_.tolerance_us;
  // The traces as they were recorded: trace_diff puts a real run's times and its scaled
  // arguments (PX 1000 at --time-scale 0.1) back on the scenario's scale itself. Its event
  // indices are the shown traces' too (on_scenario_axis keeps every event in its place).
  compare_.diff = diff_traces(compare_.a->raw, b, options);
  compare_.selected = -1;
  // B's choices in the panel: B's own (a trace names its variants and parameters).
  for (const auto& [k, v] : compare_.b->raw.meta()) {
    if (k.rfind("variant.", 0) == 0) compare_.variant_b[k.substr(8)] = v;
    if (k.rfind("param.", 0) == 0)
      if (auto n = scenario::parse_int(v)) compare_.params_b[k.substr(6)] = *n;
    if (k == "seed")
      if (auto n = scenario::parse_int(v); n && *n >= 0) compare_.seed_b = *n;
  }
  // One axis: the longer run, whole.
  compare_.from_us = 0;
  compare_.to_us = std::max({compare_.a->model.end_us(), compare_.b->model.end_us(), kUsPerSecond});
  compare_.to_us += compare_.to_us / 50;
  compare_.playhead_us = compare_.diff.first_divergence ? compare_.diff.first_divergence->at_us : 0;
  for (CompareSide* side : {compare_.a.get(), compare_.b.get()}) {
    side->facts.clear();
    side->words.clear();
    side->words_lang = Lang(255);
    const scenario::Scenario* sc =
        scenario_ && side->trace.meta_or("scenario") == scenario_->id ? &*scenario_ : nullptr;
    for (const ViolationRegion& v : side->model.violations())
      side->facts.push_back(
          violation_facts(v, check_info_of(v.check, side->model.index(), sc), side->model.index()));
    side->view.selected_event = -1;
  }
  error_.clear();
  return true;
}

void App::select_difference(size_t i) {
  if (!compare_.b || i >= compare_.diff.differences.size()) return;
  const TraceDifference& d = compare_.diff.differences[i];
  compare_.selected = int64_t(i);
  compare_.scroll_to_selected = true;
  compare_.a->view.selected_event = -1;
  compare_.b->view.selected_event = -1;
  TimeUs at = d.at_us;
  if (d.kind == TraceDifference::Kind::verdict) {
    // A verdict: the first violation of its check, in whichever run has one (A's first).
    bool found = false;
    for (CompareSide* side : {compare_.a.get(), compare_.b.get()}) {
      for (size_t vi : side->model.violations_by_start()) {
        const ViolationRegion& v = side->model.violations()[vi];
        if (v.check != d.check && !d.check.empty()) continue;
        at = v.from_us;
        found = true;
        break;
      }
      if (found) break;
    }
  } else {
    if (d.a != kNoEvent) compare_.a->view.selected_event = int64_t(d.a);
    if (d.b != kNoEvent) compare_.b->view.selected_event = int64_t(d.b);
  }
  compare_.playhead_us = at;
  // In view, keeping the zoom.
  const TimeUs range = compare_.to_us - compare_.from_us;
  if (at < compare_.from_us || at > compare_.to_us) {
    compare_.from_us = std::max<TimeUs>(0, at - range / 2);
    compare_.to_us = compare_.from_us + range;
  }
}

// A difference in the screen's language, from its typed parts.
std::string App::difference_words(const TraceDifference& d) const {
  const Lang L = ui_lang();
  auto event_words = [&](const CompareSide& side, size_t i) {
    const TraceEvent& e = side.trace.events()[i];
    std::string what = event_kind_label(e.kind, L);
    if (e.step >= 0) what += " (" + trf(S::cmp_step, L, {std::to_string(e.step)}) + ")";
    if (const auto* argv = e.list(F::argv); argv && !argv->empty()) {
      std::string line;
      for (const std::string& arg : *argv) line += (line.empty() ? "" : " ") + arg;
      what += " " + elided(line);
    } else if (const std::string* key = e.str(F::key)) {
      what += " " + *key;
    } else if (const std::string* lock = e.str(F::lock)) {
      what += " " + *lock;
    }
    return trf(S::cmp_event_of, L,
               {e.actor.empty() ? std::string(tr(S::cmp_the_run, L)) : e.actor, what});
  };
  const CompareSide& a = *compare_.a;
  const CompareSide& b = *compare_.b;
  switch (d.kind) {
    case TraceDifference::Kind::verdict: {
      if (d.check.empty()) {
        auto met = [&](const CompareSide& s) -> std::string {
          auto m = s.model.index().expectation_met();
          return !m ? tr(S::cmp_word_not_checked, L)
                    : tr(*m ? S::cmp_word_met : S::cmp_word_not_met, L);
        };
        return trf(S::cmp_verdict_flip, L, {tr(S::cmp_expectation, L), met(a), met(b)});
      }
      auto word = [&](const CompareSide& s) -> std::string {
        for (const TraceCheck& c : s.model.index().checks())
          if (c.name == d.check) {
            if (!c.judged) return tr(S::cmp_word_not_judged, L);
            return c.ok ? std::string(tr(S::cmp_word_holds, L))
                        : trf(S::cmp_word_violated, L, {std::to_string(c.violations)});
          }
        return tr(S::cmp_word_not_checked, L);
      };
      return trf(S::cmp_verdict_flip, L,
                 {check_title(d.check, a.model.check_kind(d.check), L), word(a), word(b)});
    }
    case TraceDifference::Kind::only_in_a:
      return event_words(a, d.a);
    case TraceDifference::Kind::only_in_b:
      return event_words(b, d.b);
    case TraceDifference::Kind::value: {
      std::string out = event_words(a, d.a);
      if (d.field)
        out += ", " + trf(S::cmp_field_values, L,
                          {field_words(*d.field, L), field_text(a.trace.events()[d.a], *d.field, L),
                           field_text(b.trace.events()[d.b], *d.field, L)});
      return out;
    }
    case TraceDifference::Kind::timing:
      return event_words(a, d.a) + ", " +
             trf(S::cmp_times, L,
                 {seconds_words(a.trace.events()[d.a].time_us, L),
                  seconds_words(b.trace.events()[d.b].time_us, L)});
  }
  return "";
}

void App::draw_compare_side(CompareSide& side, bool is_b, ImVec2 size) {
  const Lang L = ui_lang();
  TimelineView& v = side.view;
  const float font_px = ImGui::GetFontSize();
  v.scale = base_font_px_ > 0 ? font_px / base_font_px_ : 1.0f;
  v.label_width_px = 110 * v.scale;
  v.ruler_height_px = font_px + 8 * v.scale;
  v.palette.label_text = IM_COL32(25, 25, 35, 255);
  v.row_height_px = font_px + 4 * v.scale;
  v.row_height_max_px = 2 * font_px;
  v.lang = L;
  v.show_legend = false;
  v.horizon_us = kTimeNeverUs;
  v.follow = false;
  v.record_texts = view_.record_texts;
  if (side.words_lang != L) {
    side.words.clear();
    for (size_t i = 0; i < side.facts.size(); i++)
      side.words.push_back(
          violation_words(side.model.violations()[i], side.facts[i], kTimeNeverUs, L));
    side.words_lang = L;
  }
  v.words = [&side](size_t i, TimeUs) {
    return i < side.words.size() ? side.words[i] : ViolationWords{};
  };
  v.check_title = [this, &side](const std::string& check) {
    return check_title(check, side.model.check_kind(check), ui_lang());
  };
  v.view_from_us = compare_.from_us;
  v.view_to_us = compare_.to_us;
  v.playhead_us = compare_.playhead_us;

  ImGui::BeginChild(is_b ? "compare_b" : "compare_a", size, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  record_window(is_b ? "compare_b" : "compare_a");
  // Which run this is, in one line (a screenshot explains itself).
  std::string label;
  const char* letter = is_b ? "B" : "A";
  if (side.trace.meta_or("scenario").empty()) {
    label = trf(S::cmp_side_file, L, {letter, side.file});
  } else {
    std::string choices = side.trace.meta_or("scenario");
    if (scenario_)
      for (const scenario::Variant& var : scenario_->variants) {
        std::string value = side.trace.meta_or("variant." + var.name);
        auto it = var.value_labels.find(value);
        std::string words = it == var.value_labels.end() ? value : it->second.get(lang_);
        choices += ", " + var.label.get(lang_) + ": " + (words.empty() ? value : words);
      }
    label = trf(S::cmp_side_run, L,
                {letter, choices, trf(S::seed_is, L, {side.trace.meta_or("seed")})});
    // Fake against real: which server the run was on.
    if (const std::string backend = side.trace.meta_or("backend");
        !backend.empty() && backend != "fake")
      label += ", " + trf(S::backend_shown, L, {backend});
    if (!side.file.empty()) label += "  (" + side.file + ")";
  }
  ImGui::TextUnformatted(label.c_str());
  v.draw(side.model, side.trace, ImVec2(0, 0));
  const DrawRecord& r = v.last_draw;
  // The shared range and playhead: what the user did to this view moves the other.
  if (v.view_from_us != compare_.from_us || v.view_to_us != compare_.to_us) {
    compare_.from_us = v.view_from_us;
    compare_.to_us = v.view_to_us;
  }
  if (v.playhead_changed) compare_.playhead_us = v.playhead_us;
  // Tests read every text drawn on the screen from the main view's record.
  if (view_.record_texts)
    view_.last_draw.texts.insert(view_.last_draw.texts.end(), r.texts.begin(), r.texts.end());

  // Marks: each difference on its event's lane, and the first divergence across the lanes.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float lanes_top = r.ruler_max.y, lanes_bottom = r.area_max.y;
  auto lane_y = [&](const TraceEvent& e) -> std::optional<std::pair<float, float>> {
    for (const DrawRecord::LaneRect& lane : r.lanes)
      if ((lane.name == e.actor || (e.actor.empty() && lane.name == e.str_or(F::server, ""))) &&
          lane.max.y > lane.min.y)
        return std::pair{lane.min.y, lane.max.y};
    return std::nullopt;
  };
  const auto& diffs = compare_.diff.differences;
  const float mark_px = 5 * v.scale;
  for (size_t i = 0; i < diffs.size(); i++) {
    const TraceDifference& d = diffs[i];
    if (d.kind == TraceDifference::Kind::verdict) continue;
    const size_t ev = is_b ? d.b : d.a;
    if (ev == kNoEvent || ev >= side.trace.size()) continue;
    const TraceEvent& e = side.trace.events()[ev];
    if (e.time_us < r.from_us || e.time_us > r.to_us) continue;
    auto y = lane_y(e);
    if (!y) continue;
    const float x = v.x_of(e.time_us);
    const ImU32 colour = d.kind == TraceDifference::Kind::value    ? kValueMark
                         : d.kind == TraceDifference::Kind::timing ? kTimingMark
                                                                   : kOnlyMark;
    const float top = y->first + 1;
    dl->AddTriangleFilled({x - mark_px, top}, {x + mark_px, top}, {x, top + 1.6f * mark_px},
                          colour);
    if (int64_t(i) == compare_.selected)
      dl->AddRect({x - 2 * mark_px, y->first}, {x + 2 * mark_px, y->second}, colour, 2, 0,
                  2 * v.scale);
  }
  if (compare_.diff.first_divergence) {
    const TimeUs at = compare_.diff.first_divergence->at_us;
    if (at >= r.from_us && at <= r.to_us) {
      const float x = v.x_of(at);
      for (float y = lanes_top; y < lanes_bottom; y += 8 * v.scale)
        dl->AddLine({x, y}, {x, std::min(lanes_bottom, y + 5 * v.scale)}, kDivergence, 2 * v.scale);
      const char* text = tr(S::cmp_first_divergence_mark, L);
      const ImVec2 ts = ImGui::CalcTextSize(text);
      const ImVec2 at_px{x + 3, lanes_top + 2};
      dl->AddRectFilled(at_px, {at_px.x + ts.x + 6, at_px.y + ts.y + 2}, kDivergence, 3);
      dl->AddText({at_px.x + 3, at_px.y + 1}, IM_COL32(255, 255, 255, 255), text);
      if (view_.record_texts) view_.last_draw.texts.push_back(text);
    }
  }
  ImGui::EndChild();
}

void App::draw_compare() {
  if (!compare_.open || !compare_.a) return;
  const Lang L = ui_lang();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string title = std::string(tr(S::cmp_title, L)) + "###compare_view";
  if (!ImGui::Begin(title.c_str(), &compare_.open,
                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                        ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize)) {
    ImGui::End();
    return;
  }
  record_window("compare_view");
  resume_text_capture();

  // B's choices: the scenario's variants and the seed (a fake run), or a trace file.
  if (scenario_) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr(S::cmp_b_with, L));
    for (const scenario::Variant& var : scenario_->variants) {
      ImGui::SameLine();
      std::string& chosen = compare_.variant_b[var.name];
      auto words = [&](const std::string& value) {
        auto it = var.value_labels.find(value);
        std::string w = it == var.value_labels.end() ? value : it->second.get(lang_);
        return w.empty() ? value : w;
      };
      const std::string label = var.label.get(lang_);
      ImGui::SetNextItemWidth(ImGui::CalcTextSize(words(chosen).c_str()).x + 40);
      if (ImGui::BeginCombo((label + "###cmp_variant_" + var.name).c_str(),
                            words(chosen).c_str())) {
        for (const std::string& value : var.values)
          if (ImGui::Selectable(words(value).c_str(), value == chosen)) chosen = value;
        ImGui::EndCombo();
      }
      record("cmp_variant:" + var.name);
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    ImGui::InputScalar((std::string(tr(S::seed, L)) + "###cmp_seed").c_str(), ImGuiDataType_S64,
                       &compare_.seed_b);
    compare_.seed_b = std::max<int64_t>(0, compare_.seed_b);
    record("cmp_seed");
    ImGui::SameLine();
    if (ImGui::Button((std::string(tr(S::cmp_compare, L)) + "###cmp_run").c_str()))
      compare_with_run(compare_.variant_b, compare_.params_b, uint64_t(compare_.seed_b));
    record("cmp_run");
    tip(tr(S::cmp_compare_tip, L));
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr(S::cmp_or_file, L));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(260);
  ImGui::InputText("###cmp_file", &compare_.file_b);
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::cmp_open_file, L)) + "###cmp_open_file").c_str()))
    compare_with_file(compare_.file_b);
  record("cmp_open_file");
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(S::cmp_close, L)) + "###cmp_close").c_str()))
    compare_.open = false;
  record("cmp_close");
  if (!error_.empty()) ImGui::TextColored(kFlipColour, "%s", error_.c_str());
  ImGui::Separator();

  if (!compare_.b) {
    ImGui::End();
    return;
  }
  const TraceDiff& diff = compare_.diff;
  // The verdicts first (what a class asks: did the outcome change?), then where they part.
  size_t flips = 0;
  for (size_t i = 0; i < diff.differences.size(); i++) {
    const TraceDifference& d = diff.differences[i];
    if (d.kind != TraceDifference::Kind::verdict) continue;
    flips++;
    ImGui::PushStyleColor(ImGuiCol_Text, kFlipColour);
    if (ImGui::Selectable((difference_words(d) + "###verdict_flip" + std::to_string(i)).c_str(),
                          compare_.selected == int64_t(i)))
      select_difference(i);
    ImGui::PopStyleColor();
    record("verdict_flip:" + d.check);
  }
  if (flips == 0) ImGui::TextUnformatted(tr(S::cmp_verdicts_same, L));
  if (diff.first_divergence) {
    const TraceDifference& fd = *diff.first_divergence;
    size_t index = 0;
    for (size_t i = 0; i < diff.differences.size(); i++)
      if (diff.differences[i].kind == fd.kind && diff.differences[i].a == fd.a &&
          diff.differences[i].b == fd.b)
        index = i;
    const std::string text =
        trf(S::cmp_first_divergence, L, {seconds_words(fd.at_us, L), difference_words(fd)});
    if (ImGui::Selectable((text + "###first_divergence").c_str(),
                          compare_.selected == int64_t(index)))
      select_difference(index);
    record("first_divergence");
  } else {
    ImGui::TextUnformatted(tr(S::cmp_no_divergence, L));
  }
  ImGui::TextColored(
      kMuted, "%s",
      trf(S::cmp_counts, L,
          {std::to_string(diff.count_only_in_a), std::to_string(diff.count_only_in_b),
           std::to_string(diff.count_value), std::to_string(diff.count_timing),
           time_words(compare_.tolerance_us, L), std::to_string(diff.aligned)})
          .c_str());
  auto kinds = [&](const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& k : list) out += (out.empty() ? "" : ", ") + event_kind_label(k, L);
    return out;
  };
  if (!diff.kinds_only_in_a.empty())
    ImGui::TextColored(kMuted, "%s",
                       trf(S::cmp_not_compared, L, {"A", kinds(diff.kinds_only_in_a)}).c_str());
  if (!diff.kinds_only_in_b.empty())
    ImGui::TextColored(kMuted, "%s",
                       trf(S::cmp_not_compared, L, {"B", kinds(diff.kinds_only_in_b)}).c_str());

  // The two runs (left) and every difference (right).
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float list_px = std::floor(avail.x * 0.34f);
  const float runs_px = avail.x - list_px - ImGui::GetStyle().ItemSpacing.x;
  const float half_px = std::floor((avail.y - ImGui::GetStyle().ItemSpacing.y) / 2);
  ImGui::BeginGroup();
  draw_compare_side(*compare_.a, false, {runs_px, half_px});
  draw_compare_side(*compare_.b, true, {runs_px, half_px});
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginChild("compare_list", {list_px, avail.y}, true);
  record_window("compare_list");
  ImGui::TextColored(kMuted, "%s", tr(S::cmp_differences_list, L));
  ImGui::Separator();
  if (ImGui::BeginTable(
          "differences", 3,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupColumn("t", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("w", ImGuiTableColumnFlags_WidthStretch);
    ImGuiListClipper clipper;
    clipper.Begin(int(diff.differences.size()));
    if (compare_.scroll_to_selected && compare_.selected >= 0)
      clipper.ForceDisplayRangeByIndices(int(compare_.selected), int(compare_.selected) + 1);
    while (clipper.Step())
      for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; row++) {
        const TraceDifference& d = diff.differences[size_t(row)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool selected = compare_.selected == row;
        const std::string when =
            d.kind == TraceDifference::Kind::verdict ? std::string() : seconds_words(d.at_us, L);
        if (ImGui::Selectable((when + "###difference" + std::to_string(row)).c_str(), selected,
                              ImGuiSelectableFlags_SpanAllColumns))
          select_difference(size_t(row));
        record("difference:" + std::to_string(row));
        if (selected && compare_.scroll_to_selected) ImGui::SetScrollHereY(0.3f);
        ImGui::TableNextColumn();
        const char* tag = nullptr;
        std::string tag_text;
        ImVec4 colour = kMuted;
        switch (d.kind) {
          case TraceDifference::Kind::verdict:
            tag = tr(S::cmp_verdict_tag, L);
            colour = kFlipColour;
            break;
          case TraceDifference::Kind::only_in_a:
            tag_text = trf(S::cmp_only_in, L, {"A"});
            colour = ImGui::ColorConvertU32ToFloat4(kOnlyMark);
            break;
          case TraceDifference::Kind::only_in_b:
            tag_text = trf(S::cmp_only_in, L, {"B"});
            colour = ImGui::ColorConvertU32ToFloat4(kOnlyMark);
            break;
          case TraceDifference::Kind::value:
            tag = tr(S::cmp_differs, L);
            colour = ImGui::ColorConvertU32ToFloat4(kValueMark);
            break;
          case TraceDifference::Kind::timing:
            tag = tr(S::cmp_timing, L);
            colour = ImGui::ColorConvertU32ToFloat4(kTimingMark);
            break;
        }
        ImGui::TextColored(colour, "%s", tag ? tag : tag_text.c_str());
        ImGui::TableNextColumn();
        const std::string words = difference_words(d);
        ImGui::TextUnformatted(words.c_str());
        tip(words.c_str());
      }
    compare_.scroll_to_selected = false;
    ImGui::EndTable();
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace redlab::gui
