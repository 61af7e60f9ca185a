// The timeline view (see timeline_view.h): input first (zoom, pan, scrub, scroll, so this frame
// draws the new range), then the layout of the lanes, then per lane and row: binary-search the
// first item that reaches into the view, walk until the view's end, and fold runs of items
// narrower than fold_px into one counted mark with a lower_bound jump (Tracy's zone folding).
// The cost per row is bounded by the pixels across, not by the events in view.
//
// Layout: the actor lanes come first and scroll when they do not fit; the server and resource
// lanes are pinned below them, always in view (what every client queues behind, and where the
// wrong write went in). Rows grow to fill the height up to row_height_max_px; when even
// row_height_px (readable) is too much, lanes of a group (buyer1..buyer20) fold onto one row
// each, then every lane does, then the actors scroll. A click on a lane's name folds or
// unfolds it; a group's header row folds the whole group onto one row.
//
// Labels never overlap: every label drawn on a row (an item's text, a fence, a restart, a
// violation's marker) takes its span of the row's band, and one that would cross a taken span
// is elided to the room left, or not drawn (its text is on hover).
#include "app/gui/timeline_view.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace redlab::gui {

namespace {

ImU32 with_alpha(ImU32 colour, int alpha) {
  return (colour & ~IM_COL32_A_MASK) |
         (static_cast<ImU32>(std::clamp(alpha, 0, 255)) << IM_COL32_A_SHIFT);
}

// A ruler step of 1, 2 or 5 times a power of ten, at least min_us.
TimeUs nice_step(double min_us) {
  TimeUs step = 1;
  for (int guard = 0; guard < 19 && static_cast<double>(step) < min_us; guard++) {
    if (static_cast<double>(step * 2) >= min_us) return step * 2;
    if (static_cast<double>(step * 5) >= min_us) return step * 5;
    step *= 10;
  }
  return step;
}

bool is_mark(const Item& item) {
  switch (item.kind) {
    case ItemKind::error:
    case ItemKind::accept:
    case ItemKind::reject:
    case ItemKind::lost:
    case ItemKind::expired:
    case ItemKind::fault:
    case ItemKind::restart:
    case ItemKind::cut:
      return true;
    default:
      return false;
  }
}

S kind_words(ItemKind kind) {
  switch (kind) {
    case ItemKind::command:
      return S::kind_command;
    case ItemKind::pool_wait:
      return S::kind_pool_wait;
    case ItemKind::work:
      return S::kind_work;
    case ItemKind::sleep:
      return S::kind_sleep;
    case ItemKind::pause:
      return S::kind_pause;
    case ItemKind::hold:
      return S::kind_hold;
    case ItemKind::ttl:
      return S::kind_ttl;
    case ItemKind::served:
      return S::kind_served;
    case ItemKind::gap:
      return S::kind_gap;
    case ItemKind::error:
      return S::kind_error;
    case ItemKind::accept:
      return S::kind_accept;
    case ItemKind::reject:
      return S::kind_reject;
    case ItemKind::lost:
      return S::kind_lost;
    case ItemKind::expired:
      return S::kind_expired;
    case ItemKind::restart:
      return S::kind_restart;
    case ItemKind::cut:
      return S::kind_cut;
    default:
      return S::kind_fault;
  }
}

S row_words(RowKind kind) {
  switch (kind) {
    case RowKind::steps:
      return S::row_steps;
    case RowKind::events:
      return S::row_events;
    case RowKind::served:
      return S::row_served;
    case RowKind::in_flight:
      return S::row_in_flight;
    case RowKind::other_keys:
      return S::row_other_keys;
    default:
      return S::count_;
  }
}

// A row's label in the language: locks and keys are their names, connection rows their
// numbers after the word.
std::string row_label(const Row& row, Lang lang) {
  if (row.kind == RowKind::connection)
    return std::string(tr(S::row_conn, lang)) +
           (row.label.size() > 4 ? row.label.substr(4) : std::string());
  const S words = row_words(row.kind);
  return words == S::count_ ? row.label : tr(words, lang);
}

// The longest prefix of text (cut at a UTF-8 character boundary) that fits in width_px with
// an ellipsis after it; "" if not even one character does.
std::string elided(const std::string& text, float width_px) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width_px) return text;
  const char* kEllipsis = "\u2026";
  size_t lo = 0, hi = text.size();  // the answer's length is in [lo, hi)
  while (lo + 1 < hi) {
    size_t mid = (lo + hi) / 2;
    while (mid > lo && (static_cast<unsigned char>(text[mid]) & 0xC0) == 0x80) mid--;
    if (mid == lo) break;
    if (ImGui::CalcTextSize((text.substr(0, mid) + kEllipsis).c_str()).x <= width_px)
      lo = mid;
    else
      hi = mid;
  }
  return lo == 0 ? std::string() : text.substr(0, lo) + kEllipsis;
}

// What the legend can list, in its order; draw() notes which of them it drew.
enum Shown : uint8_t {
  kShownCommand,
  kShownErrorReply,
  kShownRecovered,
  kShownPoolWait,
  kShownWork,
  kShownSleep,
  kShownHold,
  kShownServed,
  kShownPause,
  kShownGap,
  kShownMessage,
  kShownError,
  kShownAccept,
  kShownStale,
  kShownReject,
  kShownLost,
  kShownExpired,
  kShownFault,
  kShownRestart,
  kShownCut,
  kShownFolded,
  kShownViolation,
  kShownBusy,
  kShownCount
};
const S kShownWords[kShownCount] = {
    S::legend_command, S::legend_error_reply, S::legend_recovered, S::legend_pool_wait,
    S::legend_work,    S::legend_sleep,       S::legend_hold,      S::legend_served,
    S::legend_pause,   S::legend_gap,         S::legend_message,   S::legend_error,
    S::legend_accept,  S::legend_stale,       S::legend_reject,    S::legend_lost,
    S::legend_expired, S::legend_fault,       S::legend_restart,   S::legend_cut,
    S::legend_folded,  S::legend_violation,   S::legend_busy};

// A mark's shape (also its legend swatch): centre c, half-size s. Recovered errors are hollow;
// a stale accepted write is the accepted disc inside a vermillion ring with a bar across.
void draw_mark_shape(ImDrawList* dl, ItemKind kind, ImVec2 c, float s, const TimelinePalette& p,
                     float thick, uint8_t flags = 0) {
  switch (kind) {
    case ItemKind::error: {
      const ImVec2 a(c.x, c.y - s * 1.15f), b(c.x - s, c.y + s * 0.85f),
          d(c.x + s, c.y + s * 0.85f);
      if (flags & kItemRecovered)
        dl->AddTriangle(a, b, d, p.recovered, thick * 0.7f);
      else
        dl->AddTriangleFilled(a, b, d, p.error);
      break;
    }
    case ItemKind::accept:
      if (flags & kItemStale) {
        dl->AddCircleFilled(c, s * 0.75f, p.accept);
        dl->AddCircle(c, s * 1.25f, p.error, 0, thick);
        dl->AddLine(ImVec2(c.x - s * 0.9f, c.y + s * 0.9f), ImVec2(c.x + s * 0.9f, c.y - s * 0.9f),
                    p.error, thick);
      } else {
        dl->AddCircleFilled(c, s, p.accept);
      }
      break;
    case ItemKind::reject:
      dl->AddLine(ImVec2(c.x - s, c.y - s), ImVec2(c.x + s, c.y + s), p.reject, thick);
      dl->AddLine(ImVec2(c.x - s, c.y + s), ImVec2(c.x + s, c.y - s), p.reject, thick);
      break;
    case ItemKind::lost:
      dl->AddCircle(c, s, p.lost, 0, thick * 0.8f);
      dl->AddLine(ImVec2(c.x - s * 0.7f, c.y + s * 0.7f), ImVec2(c.x + s * 0.7f, c.y - s * 0.7f),
                  p.lost, thick * 0.8f);
      break;
    case ItemKind::expired:
      dl->AddQuadFilled(ImVec2(c.x, c.y - s), ImVec2(c.x + s, c.y), ImVec2(c.x, c.y + s),
                        ImVec2(c.x - s, c.y), p.expired);
      break;
    case ItemKind::restart:  // a heavy bar with a dot: power cycled
      dl->AddRectFilled(ImVec2(c.x - thick, c.y - s * 1.3f), ImVec2(c.x + thick, c.y + s * 1.3f),
                        p.restart);
      dl->AddCircle(c, s * 0.9f, p.restart, 0, thick * 0.6f);
      break;
    case ItemKind::cut:  // a link broken in two
      dl->AddLine(ImVec2(c.x - s * 1.2f, c.y), ImVec2(c.x - s * 0.3f, c.y), p.cut, thick);
      dl->AddLine(ImVec2(c.x + s * 0.3f, c.y), ImVec2(c.x + s * 1.2f, c.y), p.cut, thick);
      dl->AddLine(ImVec2(c.x - s * 0.5f, c.y + s), ImVec2(c.x - s * 0.1f, c.y - s), p.cut,
                  thick * 0.6f);
      dl->AddLine(ImVec2(c.x + s * 0.1f, c.y + s), ImVec2(c.x + s * 0.5f, c.y - s), p.cut,
                  thick * 0.6f);
      break;
    default:  // fault
      dl->AddTriangleFilled(ImVec2(c.x - s, c.y - s * 0.85f), ImVec2(c.x + s, c.y - s * 0.85f),
                            ImVec2(c.x, c.y + s * 1.15f), p.fault);
      break;
  }
}

// Diagonal stripes over a rectangle (a pause, a recovered error): readable in grey scale too.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float step_px, float thick) {
  dl->PushClipRect(a, b, true);
  const float h = b.y - a.y;
  for (float x = a.x - h; x < b.x; x += step_px)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), colour, thick);
  dl->PopClipRect();
}

constexpr float kLanePadPx = 3;
constexpr float kRowHeightMinPx = 7;  // pinned rows shrink to this before anything is cut
constexpr int64_t kArrowsPerFrameMax = 5000;
constexpr float kLabelMinWidthPx = 36;  // an item needs this much room to carry its text
constexpr float kFoldWidthMaxPx = 48;   // a fold mark grows to this, then a new one starts
constexpr int kFoldStepsMax = 4096;
constexpr float kPinnedShareMax = 0.5f;  // of the lanes' height, for the server and resources
constexpr float kScrollbarPx = 10;

}  // namespace

std::string TimelineView::group_of(const std::string& actor) {
  size_t end = actor.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(actor[end - 1]))) end--;
  if (end == actor.size() || end == 0) return "";
  return actor.substr(0, end);
}

void TimelineView::toggle_lane(const std::string& name) {
  bool now = false;
  for (const DrawRecord::LaneRect& l : last_draw.lanes)
    if (l.name == name) now = l.folded;
  lane_folded[name] = !now;
}

void TimelineView::toggle_group(const std::string& name) {
  bool now = false;
  for (const DrawRecord::GroupRect& g : last_draw.groups)
    if (g.name == name) now = g.folded;
  group_folded[name] = !now;
}

// ---- Mapping and range ----

float TimelineView::x_of(TimeUs t) const {
  return last_draw.x0 +
         static_cast<float>(static_cast<double>(t - last_draw.from_us) * last_draw.px_per_us);
}

TimeUs TimelineView::t_of(float x) const {
  if (last_draw.px_per_us <= 0) return view_from_us;
  return last_draw.from_us + static_cast<TimeUs>(std::llround(
                                 static_cast<double>(x - last_draw.x0) / last_draw.px_per_us));
}

void TimelineView::fit(const TimelineModel& model) {
  TimeUs total_us = std::max<TimeUs>(model.end_us(), kUsPerSecond);
  view_from_us = -total_us / 50;
  view_to_us = total_us + total_us / 50;
  clamp_range(model);
}

// The range stays between min_range_us and a little more than the whole trace, and never
// scrolls far past either end.
void TimelineView::clamp_range(const TimelineModel& model) {
  TimeUs total_us = std::max<TimeUs>(model.end_us(), kUsPerSecond);
  TimeUs margin_us = total_us / 10;
  TimeUs span_us = std::clamp<TimeUs>(view_to_us - view_from_us, std::max<TimeUs>(min_range_us, 1),
                                      total_us + 2 * margin_us);
  TimeUs lo_us = -margin_us, hi_us = total_us + margin_us;
  TimeUs from_us = std::clamp(view_from_us, lo_us, std::max(lo_us, hi_us - span_us));
  view_from_us = from_us;
  view_to_us = from_us + span_us;
}

void TimelineView::zoom_at(float x, float factor, const TimelineModel& model) {
  if (factor <= 0) return;
  double width_px = plot_width_px_ > 0 ? plot_width_px_ : 1000;
  double span_us = static_cast<double>(view_to_us - view_from_us);
  double frac = last_draw.px_per_us > 0 ? (x - last_draw.x0) / width_px : 0.5;
  frac = std::clamp(frac, 0.0, 1.0);
  double anchor_us = static_cast<double>(view_from_us) + frac * span_us;
  double new_span_us = std::max(span_us / factor, static_cast<double>(min_range_us));
  view_from_us = static_cast<TimeUs>(std::llround(anchor_us - frac * new_span_us));
  view_to_us = view_from_us + static_cast<TimeUs>(std::llround(new_span_us));
  clamp_range(model);
}

void TimelineView::handle_input(const TimelineModel& model, bool hovered, bool active) {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  const bool in_ruler = mouse.y >= last_draw.ruler_min.y && mouse.y < last_draw.ruler_max.y &&
                        mouse.x >= last_draw.x0;
  const bool in_names = mouse.x < last_draw.x0 && mouse.y >= last_draw.ruler_max.y;
  const bool on_scrollbar = last_draw.scroll_max_px > 0 && mouse.x > last_draw.actors_max.x &&
                            mouse.y >= last_draw.actors_min.y && mouse.y < last_draw.actors_max.y;
  // The wheel over the names (or the scrollbar) scrolls the actor lanes; elsewhere it zooms.
  if (hovered && io.MouseWheel != 0 && (in_names || on_scrollbar)) {
    scroll_px -= io.MouseWheel * 3 * row_height_px;
  } else if (hovered && io.MouseWheel != 0) {
    zoom_at(mouse.x, std::pow(1.25f, io.MouseWheel), model);
  }
  if (hovered && io.MouseWheelH != 0 && last_draw.px_per_us > 0) {
    TimeUs shift_us = static_cast<TimeUs>(io.MouseWheelH * 60 / last_draw.px_per_us);
    view_from_us -= shift_us;
    view_to_us -= shift_us;
    clamp_range(model);
  }
  if (ImGui::IsItemActivated()) {
    scrubbing_ = in_ruler;
    scroll_dragging_ = on_scrollbar;
    panned_ = false;
  }
  if (active && scroll_dragging_) {
    const float region_px = last_draw.actors_max.y - last_draw.actors_min.y;
    if (region_px > 0)
      scroll_px += io.MouseDelta.y * (region_px + last_draw.scroll_max_px) / region_px;
    panned_ = true;
  } else if (active && scrubbing_) {
    playhead_us = std::clamp<TimeUs>(t_of(mouse.x), 0, model.end_us());
    playhead_changed = true;
  } else if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f) &&
             last_draw.px_per_us > 0) {
    panned_ = true;
    TimeUs shift_us = static_cast<TimeUs>(std::llround(io.MouseDelta.x / last_draw.px_per_us));
    view_from_us -= shift_us;
    view_to_us -= shift_us;
    clamp_range(model);
  }
  if (hovered && !in_ruler && !in_names && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
    fit(model);
  if (follow && view_to_us > view_from_us) {
    TimeUs span_us = view_to_us - view_from_us;
    if (playhead_us > view_to_us - span_us / 20 || playhead_us < view_from_us) {
      view_from_us = playhead_us - span_us * 4 / 5;
      view_to_us = view_from_us + span_us;
      // Not clamped to end_us: a live run's playhead leads the trace.
      if (view_from_us < -span_us / 10) {
        view_from_us = -span_us / 10;
        view_to_us = view_from_us + span_us;
      }
    }
  }
}

// ---- Drawing ----

void TimelineView::draw(const TimelineModel& model, const Trace& trace, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  size.x = std::max(size.x, label_width_px + 50);
  size.y = std::max(size.y, ruler_height_px + 30);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 area_max(origin.x + size.x, origin.y + size.y);
  playhead_changed = false;
  hovered_event = -1;

  ImGui::InvisibleButton("##timeline", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  const bool released = ImGui::IsItemDeactivated();

  // Geometry that input handling needs (ruler, mapping) from this frame's layout. The
  // scrollbar's room is kept while the last frame needed it.
  const float scrollbar_px = last_draw.scroll_max_px > 0 ? kScrollbarPx * scale : 0;
  const float plot_x0 = origin.x + label_width_px;
  const float plot_x1 = area_max.x - 4 - scrollbar_px;
  plot_width_px_ = std::max(plot_x1 - plot_x0, 1.0f);
  DrawRecord& rec = last_draw;
  rec.area_min = origin;
  rec.area_max = area_max;
  rec.ruler_min = ImVec2(plot_x0, origin.y);
  rec.ruler_max = ImVec2(plot_x1, origin.y + ruler_height_px);
  auto set_mapping = [&] {
    if (view_to_us <= view_from_us) view_to_us = view_from_us + std::max<TimeUs>(min_range_us, 1);
    rec.x0 = plot_x0;
    rec.from_us = view_from_us;
    rec.to_us = view_to_us;
    rec.px_per_us = plot_width_px_ / static_cast<double>(view_to_us - view_from_us);
  };
  set_mapping();
  handle_input(model, hovered, active);
  set_mapping();

  rec.items_drawn = rec.items_folded = rec.folds_drawn = rec.arrows_drawn = rec.lost_drawn = 0;
  rec.violations.clear();
  rec.pauses.clear();
  rec.busy.clear();
  rec.markers.clear();
  rec.lanes.clear();
  rec.groups.clear();
  rec.labels.clear();
  rec.texts.clear();
  rec.latest_from_us = -1;
  auto drawn_from = [&](TimeUs t) { rec.latest_from_us = std::max(rec.latest_from_us, t); };

  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  const TimeUs from_us = view_from_us, to_us = view_to_us;
  const double px_per_us = rec.px_per_us;
  const TimeUs end_us = model.end_us();
  const float line_h = ImGui::GetTextLineHeight();
  const float legend_line_h = line_h + 4;
  const float legend_h = show_legend ? float(legend_lines_) * legend_line_h + 2 : 0;
  bool shown[kShownCount] = {};
  const float lanes_y0 = origin.y + ruler_height_px;
  const float lanes_y1 = area_max.y - legend_h;
  auto xf = [&](TimeUs t) {
    return plot_x0 + static_cast<float>(static_cast<double>(t - from_us) * px_per_us);
  };
  auto clamp_x = [&](float x) { return std::clamp(x, plot_x0 - 2, plot_x1 + 2); };
  // The horizon: what begins after it is culled (hidden) or veiled (faint); what runs across
  // it is cut by a clip rectangle at its x.
  const bool limited = horizon_us < kTimeNeverUs;
  const bool hide_future = limited && !future_faint;
  const TimeUs cull_to_us = hide_future ? std::min(to_us, horizon_us) : to_us;
  const float horizon_x =
      limited ? std::clamp(xf(std::clamp(horizon_us, from_us, to_us)), plot_x0, plot_x1) : plot_x1;
  auto is_future = [&](TimeUs t) { return limited && t > horizon_us; };
  // A violation's words as of the horizon: its end is not told while it is hidden.
  const TimeUs words_at_us = hide_future ? horizon_us : kTimeNeverUs;
  auto violation_words_at = [&](size_t vi) {
    if (words) return words(vi, words_at_us);
    const ViolationRegion& v = model.violations()[vi];
    return ViolationWords{v.text, v.text};
  };

  dl->PushClipRect(origin, area_max, true);
  dl->AddRectFilled(origin, area_max, palette.background);

  // ---- Layout: actor lanes (folding, then scrolling), the pinned lanes below them ----
  const auto& lanes = model.lanes();
  const size_t lane_count = lanes.size();
  std::vector<int> actors, pinned;
  for (LaneKind kind : {LaneKind::actor, LaneKind::server, LaneKind::resource})
    for (size_t i = 0; i < lane_count; i++)
      if (lanes[i].kind == kind)
        (kind == LaneKind::actor ? actors : pinned).push_back(static_cast<int>(i));
  // Groups: consecutive actors with one name and instance numbers, at least two of them.
  std::vector<std::string> group(lane_count);
  for (size_t k = 0; k < actors.size();) {
    const std::string g = group_of(lanes[actors[k]].name);
    size_t j = k + 1;
    while (j < actors.size() && !g.empty() && group_of(lanes[actors[j]].name) == g) j++;
    if (!g.empty() && j - k >= 2)
      for (size_t m = k; m < j; m++) group[actors[m]] = g;
    k = j;
  }
  auto group_is_folded = [&](const std::string& g) {
    auto it = group_folded.find(g);
    return it != group_folded.end() && it->second;
  };
  // level 0: as chosen; 1: lanes of groups fold too; 2: every lane with rows to fold folds.
  auto lane_is_folded = [&](int li, int level) {
    if (lanes[li].rows.size() <= 1) return false;
    auto it = lane_folded.find(lanes[li].name);
    if (it != lane_folded.end()) return it->second;
    return level >= 2 || (level >= 1 && !group[li].empty());
  };
  const float header_h = line_h + 4;
  // Height of the actor lanes at one row height: rows, the lanes' padding, group headers.
  auto actors_height = [&](int level, float row_h) {
    float h = 0;
    for (size_t k = 0; k < actors.size(); k++) {
      const int li = actors[k];
      const bool first_of_group =
          !group[li].empty() && (k == 0 || group[actors[k - 1]] != group[li]);
      if (first_of_group) h += group_is_folded(group[li]) ? row_h + 2 * kLanePadPx : header_h;
      if (!group[li].empty() && group_is_folded(group[li])) continue;
      h += (lane_is_folded(li, level) ? 1.0f : static_cast<float>(lanes[li].rows.size())) * row_h +
           2 * kLanePadPx;
    }
    return h;
  };
  size_t pinned_rows = 0;
  for (int li : pinned) pinned_rows += lanes[li].rows.size();
  // A resource lane that took a wrong write has a strip above its marks for the violation's
  // label, so that the label does not cover the writes it is about.
  std::vector<float> strip_h(lane_count, 0.0f);
  for (const ViolationRegion& v : model.violations())
    for (int32_t li : v.resource_lanes)
      if (static_cast<size_t>(li) < lane_count && v.from_us <= cull_to_us)
        strip_h[static_cast<size_t>(li)] = line_h + 4 * scale;
  float pinned_pads = 2 * kLanePadPx * static_cast<float>(pinned.size());
  for (int li : pinned) pinned_pads += strip_h[li];
  const float lanes_h = std::max(lanes_y1 - lanes_y0, 1.0f);
  // The pinned lanes at the readable height, or smaller if they would take over half.
  float pinned_row_h = row_height_px;
  if (pinned_rows > 0 &&
      pinned_row_h * float(pinned_rows) + pinned_pads > lanes_h * kPinnedShareMax)
    pinned_row_h =
        std::max(kRowHeightMinPx, (lanes_h * kPinnedShareMax - pinned_pads) / float(pinned_rows));
  float pinned_h = pinned_row_h * float(pinned_rows) + pinned_pads;
  const float actors_avail = lanes_h - pinned_h;
  int level = 0;
  while (level < 2 && actors_height(level, row_height_px) > actors_avail) level++;
  // Rows grow into the room left, up to the largest useful height; pinned rows with them.
  float row_h = row_height_px;
  {
    size_t rows = pinned_rows;
    float fixed = pinned_pads;
    for (size_t k = 0; k < actors.size(); k++) {
      const int li = actors[k];
      const bool first_of_group =
          !group[li].empty() && (k == 0 || group[actors[k - 1]] != group[li]);
      if (first_of_group) {
        if (group_is_folded(group[li])) {
          rows++;
          fixed += 2 * kLanePadPx;
        } else {
          fixed += header_h;
        }
      }
      if (!group[li].empty() && group_is_folded(group[li])) continue;
      rows += lane_is_folded(li, level) ? 1 : lanes[li].rows.size();
      fixed += 2 * kLanePadPx;
    }
    if (rows > 0 && pinned_row_h >= row_height_px)
      row_h = std::clamp((lanes_h - fixed) / float(rows), row_height_px,
                         std::max(row_height_px, row_height_max_px));
    if (pinned_row_h >= row_height_px) {
      pinned_row_h = row_h;
      pinned_h = pinned_row_h * float(pinned_rows) + pinned_pads;
    }
  }
  const float content_h = actors_height(level, row_h);
  const float region_h = std::max(0.0f, std::min(content_h, lanes_h - pinned_h));
  rec.scroll_max_px = std::max(0.0f, content_h - region_h);
  scroll_px = std::clamp(scroll_px, 0.0f, rec.scroll_max_px);
  rec.scroll_px = scroll_px;
  const float actors_top = lanes_y0, actors_bottom = lanes_y0 + region_h;
  rec.actors_min = ImVec2(origin.x, actors_top);
  rec.actors_max = ImVec2(plot_x1 + 2, actors_bottom);
  const float pinned_top = actors_bottom;

  // Where everything goes (screen y), per model lane.
  struct LaneLayout {
    float top = 0, bottom = 0;
    std::vector<float> row_y;
    float row_h = 0;
    float clip_top = 0, clip_bottom = 0;  // its region
    int band0 = 0;                        // label band of row 0 (a folded lane: of every row)
    int marker_band = -1;                 // the band of its markers' labels (band0 if -1)
    int slot = -1;                        // the lane its markers go on (a folded group: the first)
    bool folded = false;
    bool visible() const { return bottom > clip_top && top < clip_bottom; }
  };
  std::vector<LaneLayout> lay(lane_count);
  std::vector<std::vector<int>> row_band(lane_count);
  int bands = 0;
  struct Header {
    std::string name;
    int members = 0;
    bool folded = false;
    float top = 0, bottom = 0;
  };
  std::vector<Header> headers;
  {
    float y = actors_top - scroll_px;
    for (size_t k = 0; k < actors.size(); k++) {
      const int li = actors[k];
      const std::string& g = group[li];
      const bool first_of_group = !g.empty() && (k == 0 || group[actors[k - 1]] != g);
      const bool group_folded_now = !g.empty() && group_is_folded(g);
      if (first_of_group) {
        Header h{g, 0, group_folded_now, y, 0};
        for (size_t m = k; m < actors.size() && group[actors[m]] == g; m++) h.members++;
        if (group_folded_now) {
          // Every member's rows on one row, under the header's label.
          const float top = y;
          const int band = bands++;
          for (size_t m = k; m < actors.size() && group[actors[m]] == g; m++) {
            LaneLayout& l = lay[actors[m]];
            l.top = top;
            l.bottom = top + row_h + 2 * kLanePadPx;
            l.row_h = row_h;
            l.row_y.assign(lanes[actors[m]].rows.size(), top + kLanePadPx);
            l.folded = true;
            l.band0 = band;
            l.slot = li;
            row_band[actors[m]].assign(lanes[actors[m]].rows.size(), band);
          }
          y += row_h + 2 * kLanePadPx;
          h.bottom = y;
        } else {
          y += header_h;
          h.bottom = y;
        }
        headers.push_back(h);
      }
      if (group_folded_now) continue;
      LaneLayout& l = lay[li];
      l.folded = lane_is_folded(li, level);
      l.top = y;
      l.row_h = row_h;
      l.slot = li;
      y += kLanePadPx;
      const int first_band = bands;
      for (size_t r = 0; r < lanes[li].rows.size(); r++) {
        l.row_y.push_back(y);
        row_band[li].push_back(l.folded ? first_band : bands++);
        if (!l.folded) y += row_h;
      }
      if (l.folded) {
        bands++;
        y += row_h;
      }
      l.band0 = first_band;
      y += kLanePadPx;
      l.bottom = y;
    }
    for (int li : actors) {
      lay[li].clip_top = actors_top;
      lay[li].clip_bottom = actors_bottom;
    }
    y = pinned_top;
    for (int li : pinned) {
      LaneLayout& l = lay[li];
      l.top = y;
      l.row_h = pinned_row_h;
      l.slot = li;
      l.clip_top = pinned_top;
      l.clip_bottom = lanes_y1;
      if (strip_h[li] > 0) l.marker_band = bands++;
      y += kLanePadPx + strip_h[li];
      l.band0 = bands;
      for (size_t r = 0; r < lanes[li].rows.size(); r++) {
        l.row_y.push_back(y);
        row_band[li].push_back(bands++);
        y += pinned_row_h;
      }
      y += kLanePadPx;
      l.bottom = y;
    }
  }
  // A lane asked for: scrolled into view (from the next frame, as a scroll would be).
  if (!scroll_to_lane.empty()) {
    const int li = model.lane_index(scroll_to_lane);
    if (li >= 0 && lanes[li].kind == LaneKind::actor && rec.scroll_max_px > 0) {
      const LaneLayout& l = lay[li];
      const float content_top = l.top - actors_top + scroll_px;
      if (l.top < actors_top || l.bottom > actors_bottom)
        scroll_px = std::clamp(content_top - region_h * 0.25f, 0.0f, rec.scroll_max_px);
    }
    scroll_to_lane.clear();
  }
  // Lane backgrounds (alternating) and the record of where each lane is.
  {
    int shade = 0;
    auto background = [&](float top, float bottom, float clip_top, float clip_bottom) {
      const float a = std::max(top, clip_top), b = std::min(bottom, clip_bottom);
      if (shade++ % 2 == 1 && b > a)
        dl->AddRectFilled(ImVec2(origin.x, a), ImVec2(area_max.x, b), palette.lane_alternate);
    };
    size_t h = 0;
    for (size_t k = 0; k < actors.size(); k++) {
      const int li = actors[k];
      const LaneLayout& l = lay[li];
      if (h < headers.size() && group[li] == headers[h].name &&
          (k == 0 || group[actors[k - 1]] != group[li])) {
        const Header& hd = headers[h++];
        if (hd.folded) background(hd.top, hd.bottom, actors_top, actors_bottom);
        rec.groups.push_back({hd.name, hd.members, hd.folded,
                              ImVec2(origin.x, std::max(hd.top, actors_top)),
                              ImVec2(area_max.x, std::min(hd.bottom, actors_bottom))});
      }
      if (!(group[li].empty() || !group_is_folded(group[li]))) {
        rec.lanes.push_back({lanes[li].name,
                             "",
                             ImVec2(origin.x, std::max(l.top, actors_top)),
                             ImVec2(area_max.x, std::min(l.bottom, actors_bottom)),
                             true,
                             false,
                             group[li],
                             {},
                             0});
        continue;
      }
      background(l.top, l.bottom, actors_top, actors_bottom);
      const bool in_view = l.visible();
      rec.lanes.push_back(
          {lanes[li].name,
           "",
           in_view ? ImVec2(origin.x, std::max(l.top, actors_top)) : ImVec2(0, 0),
           in_view ? ImVec2(area_max.x, std::min(l.bottom, actors_bottom)) : ImVec2(0, 0),
           l.folded,
           false,
           group[li],
           {},
           0});
    }
    for (int li : pinned) {
      const LaneLayout& l = lay[li];
      background(l.top, l.bottom, pinned_top, lanes_y1);
      rec.lanes.push_back({lanes[li].name,
                           lanes[li].caption.empty() ? "" : tr(S::seen_by_clients, lang),
                           ImVec2(origin.x, l.top),
                           ImVec2(area_max.x, std::min(l.bottom, lanes_y1)),
                           false,
                           true,
                           "",
                           {},
                           0});
    }
    if (!pinned.empty() && pinned_top > actors_top)
      dl->AddLine(ImVec2(origin.x, pinned_top), ImVec2(area_max.x, pinned_top), palette.ruler_tick,
                  1.5f * scale);
  }
  for (DrawRecord::LaneRect& r : rec.lanes) {
    const int li = model.lane_index(r.name);
    if (li < 0) continue;
    r.rows_y = lay[li].row_y;
    r.row_h = lay[li].row_h;
  }
  // Labels taken per band (row): [x0, x1] spans. A label goes where no other is.
  std::vector<std::vector<std::pair<float, float>>> taken(static_cast<size_t>(bands));
  auto room_from = [&](int band, float x0, float want_x1) {  // the free room right of x0
    float x1 = want_x1;
    for (const auto& [a, b] : taken[static_cast<size_t>(band)]) {
      if (a <= x0 && b > x0) return x0;  // x0 itself is taken
      if (a > x0) x1 = std::min(x1, a);
    }
    return x1;
  };
  // Each band's top and height on screen (its row's), for the record of labels.
  std::vector<std::pair<float, float>> band_y(static_cast<size_t>(bands), {0.f, 0.f});
  for (size_t li = 0; li < lane_count; li++) {
    for (size_t r = 0; r < row_band[li].size(); r++)
      band_y[static_cast<size_t>(row_band[li][r])] = {lay[li].row_y[r], lay[li].row_h};
    if (lay[li].marker_band >= 0)
      band_y[static_cast<size_t>(lay[li].marker_band)] = {lay[li].top + kLanePadPx, strip_h[li]};
  }
  auto take = [&](int band, float x0, float x1, const std::string& text) {
    taken[static_cast<size_t>(band)].push_back({x0, x1});
    const auto [y, h] = band_y[static_cast<size_t>(band)];
    rec.labels.push_back({ImVec2(x0, y), ImVec2(x1, y + h), text});
  };

  // What the mouse is over, found while drawing and shown after (a tooltip per frame).
  const Item* hover_item = nullptr;
  int64_t hover_fold_count = 0;
  TimeUs hover_fold_from_us = 0, hover_fold_to_us = 0;
  const ViolationRegion* hover_region = nullptr;
  size_t hover_region_index = 0;
  const Note* hover_note = nullptr;
  const bool mouse_in_lanes = hovered && mouse.y >= lanes_y0 && mouse.y < lanes_y1 &&
                              mouse.x >= plot_x0 && mouse.x <= plot_x1;

  if (hide_future)
    dl->PushClipRect(ImVec2(origin.x, lanes_y0), ImVec2(horizon_x + 1, lanes_y1), true);

  // ---- The server busy with one long command: a band across every lane, behind all ----
  for (const TimelineModel::Busy& busy : model.busy()) {
    if (busy.to_us < from_us || busy.from_us > cull_to_us) continue;
    const float x0 = clamp_x(xf(busy.from_us));
    const float x1 = clamp_x(std::max(xf(busy.to_us), xf(busy.from_us) + 2));
    dl->AddRectFilled(ImVec2(x0, lanes_y0), ImVec2(x1, lanes_y1), palette.busy);
    dl->AddLine(ImVec2(x0, lanes_y0), ImVec2(x0, lanes_y1), palette.busy_edge, 1.0f * scale);
    dl->AddLine(ImVec2(x1, lanes_y0), ImVec2(x1, lanes_y1), palette.busy_edge, 1.0f * scale);
    shown[kShownBusy] = true;
    rec.busy.push_back({ImVec2(x0, lanes_y0), ImVec2(x1, lanes_y1), busy.from_us, busy.to_us});
    drawn_from(busy.from_us);
  }

  // ---- Pause bands (behind everything in their lane) ----
  for (size_t li = 0; li < lane_count; li++) {
    const Lane& lane = lanes[li];
    const LaneLayout& l = lay[li];
    if (!l.visible() || lane.bands.empty()) continue;
    const float top = std::max(l.top, l.clip_top), bottom = std::min(l.bottom, l.clip_bottom);
    for (const Item& band : lane.bands) {
      TimeUs band_to = band.open() ? end_us : band.to_us;
      if (band_to < from_us || band.from_us > cull_to_us) continue;
      float x0 = clamp_x(xf(band.from_us)),
            x1 = clamp_x(std::max(xf(band_to), xf(band.from_us) + 2));
      dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), palette.pause);
      // Drawn again over the rows below, from this record.
      rec.pauses.push_back({ImVec2(x0, top), ImVec2(x1, bottom), lane.name, band.from_us});
      shown[kShownPause] = true;
      rec.items_drawn++;
      drawn_from(band.from_us);
      if (mouse_in_lanes && mouse.y >= top && mouse.y < bottom && mouse.x >= x0 && mouse.x <= x1)
        hover_item = &band;
    }
  }

  // ---- Violation regions ----
  for (size_t vi = 0; vi < model.violations().size(); vi++) {
    const ViolationRegion& v = model.violations()[vi];
    if (v.to_us < from_us || v.from_us > cull_to_us) continue;
    float x0 = clamp_x(xf(v.from_us)), x1 = clamp_x(xf(v.to_us));
    if (x1 - x0 < 3) {
      x0 -= 1.5f;
      x1 += 1.5f;
    }
    dl->AddRectFilled(ImVec2(x0, lanes_y0), ImVec2(x1, lanes_y1), palette.violation);
    // The lanes of those involved get a second layer: the region reads as "these overlap".
    for (const std::string& who : v.who) {
      int li = model.lane_index(who);
      if (li < 0 || !lay[li].visible()) continue;
      dl->AddRectFilled(ImVec2(x0, std::max(lay[li].top, lay[li].clip_top)),
                        ImVec2(x1, std::min(lay[li].bottom, lay[li].clip_bottom)),
                        palette.violation);
    }
    shown[kShownViolation] = true;
    dl->AddLine(ImVec2(x0, lanes_y0), ImVec2(x0, lanes_y1), palette.violation_border, 1.5f);
    dl->AddLine(ImVec2(x1, lanes_y0), ImVec2(x1, lanes_y1), palette.violation_border, 1.5f);
    rec.violations.push_back({ImVec2(x0, lanes_y0), ImVec2(x1, lanes_y1), v.text, v.check, v.event,
                              is_future(v.from_us)});
    drawn_from(v.from_us);
    if (mouse_in_lanes && mouse.x >= x0 && mouse.x <= x1) {
      hover_region = &v;
      hover_region_index = vi;
    }
  }

  // ---- Violation markers, placed before the rows: their labels take their room first ----
  // A red label and the span's bar on every lane concerned: its actors', one server's (the
  // first in view: a violation is one fact about the run, and five Redlock masters would say
  // it five times), and a resource's that took the wrong write. Per lane the markers go left to
  // right, each label in the room its band has left; drawn on top of the rows after them (the
  // moment of failure must not hide under a busy row), but their room is taken first, so an item's
  // text or a fence never pushes a violation's words away.
  struct MarkerPlan {
    size_t lane = 0, violation = 0;
    float x0 = 0, x1 = 0, top = 0, bottom = 0, bar_h = 0;
    ImVec2 a, b;
    std::string label;
    bool room = false;
  };
  std::vector<MarkerPlan> plans;
  {
    const auto& violations = model.violations();
    std::vector<std::vector<size_t>> by_lane(lane_count);
    size_t server_lane = lane_count;
    for (size_t li = 0; li < lane_count && server_lane == lane_count; li++)
      if (lanes[li].kind == LaneKind::server && lay[li].visible()) server_lane = li;
    for (size_t vi : model.violations_by_start()) {  // so each lane's list is in time order
      const ViolationRegion& v = violations[vi];
      if (v.to_us < from_us || v.from_us > cull_to_us) continue;
      for (const std::string& who : v.who)
        if (int li = model.lane_index(who); li >= 0 && lay[li].slot >= 0)
          by_lane[static_cast<size_t>(lay[li].slot)].push_back(vi);
      for (int32_t li : v.resource_lanes)
        if (static_cast<size_t>(li) < lane_count) by_lane[static_cast<size_t>(li)].push_back(vi);
      if (server_lane < lane_count) by_lane[server_lane].push_back(vi);
    }
    const float pad_px = 3 * scale;
    for (size_t li = 0; li < by_lane.size(); li++) {
      std::vector<size_t>& list = by_lane[li];
      const LaneLayout& l = lay[li];
      if (list.empty() || !l.visible()) continue;
      list.erase(std::unique(list.begin(), list.end()), list.end());
      const float top = std::max(l.top, l.clip_top) + 1;
      const float bottom = std::min(l.bottom, l.clip_bottom) - 1;
      const float label_h = std::min(line_h + 2 * scale, bottom - top);
      const int band = l.marker_band >= 0 ? l.marker_band : l.band0;
      // Past the mark at the violation's moment (a stale write's disc), not over it.
      const float mark_px = std::min(l.row_h * 0.42f, 6.5f * scale) + 2 * scale;
      for (size_t k = 0; k < list.size(); k++) {
        const size_t vi = list[k];
        const ViolationRegion& v = violations[vi];
        MarkerPlan p;
        p.lane = li;
        p.violation = vi;
        p.x0 = std::max(xf(v.from_us), plot_x0);
        p.x1 = std::max(std::min(xf(v.to_us), plot_x1), p.x0 + 3 * scale);
        p.top = top;
        p.bottom = bottom;
        p.bar_h = std::max(3 * scale, 2.0f);
        // The label: from just past x0 (or after the label before it) to the next marker's
        // start or the next label taken on the band. One whose start is taken far along gets
        // none (its words are on hover and on its other lanes) rather than a label far from
        // its moment.
        float start_x = p.x0 + mark_px;
        float room_x = plot_x1;
        for (size_t m = k + 1; m < list.size(); m++) {
          float next_x = xf(violations[list[m]].from_us);
          if (next_x > start_x + 2 * pad_px) {
            room_x = std::min(room_x, next_x - pad_px);
            break;
          }
        }
        for (int tries = 0; tries < 4; tries++) {
          const float free_x = room_from(band, start_x, room_x);
          if (free_x > start_x) {
            room_x = free_x;
            break;
          }
          float after = start_x;
          for (const auto& [a, b] : taken[static_cast<size_t>(band)])
            if (a <= start_x && b > start_x) after = std::max(after, b + pad_px);
          if (after > p.x0 + 4 * pad_px + 40 * scale) {
            room_x = start_x;  // too far from its moment
            break;
          }
          start_x = after;
        }
        // A moment (no span) with too little room on its right (the end of the run, the next
        // marker): the left of it, if that has more, ending at the mark.
        const std::string words_label = violation_words_at(vi).label;
        const float want_px = ImGui::CalcTextSize(words_label.c_str()).x + 2 * pad_px;
        if (room_x - start_x < want_px && v.to_us == v.from_us) {
          const float end_x = p.x0 - mark_px;
          float left_x = plot_x0;
          for (const auto& [a, b] : taken[static_cast<size_t>(band)])
            if (b <= end_x + 1) left_x = std::max(left_x, b + pad_px);
          for (size_t m = 0; m < k; m++)
            left_x = std::max(left_x, xf(violations[list[m]].from_us) + pad_px);
          if (end_x - left_x > room_x - start_x && room_from(band, left_x, end_x) >= end_x - 1) {
            start_x = std::max(left_x, end_x - want_px);
            room_x = end_x;
          }
        }
        p.room = room_x - start_x > 2 * pad_px + ImGui::CalcTextSize("!").x;
        p.label = p.room ? elided(words_label, room_x - start_x - 2 * pad_px) : "";
        if (p.room && p.label.empty()) p.label = "!";
        const float w = ImGui::CalcTextSize(p.label.c_str()).x + 2 * pad_px;
        p.a = ImVec2(start_x, top);
        p.b = ImVec2(start_x + w, top + label_h);
        if (!p.room) {  // the bar is the marker
          p.a = ImVec2(p.x0, bottom - p.bar_h);
          p.b = ImVec2(p.x1, bottom);
        } else {
          take(band, p.a.x, p.b.x, p.label);
        }
        plans.push_back(std::move(p));
      }
    }
  }

  // ---- Rows: prepare (cull, fold) and draw ----
  const double fold_us = fold_px / px_per_us;
  for (size_t li = 0; li < lane_count; li++) {
    const Lane& lane = lanes[li];
    const LaneLayout& l = lay[li];
    if (!l.visible()) continue;
    dl->PushClipRect(ImVec2(origin.x, l.clip_top), ImVec2(area_max.x, l.clip_bottom), true);
    const float rh = l.row_h;
    for (size_t r = 0; r < lane.rows.size(); r++) {
      const Row& row = lane.rows[r];
      const float y0 = l.row_y[r];
      if (y0 >= l.clip_bottom || y0 + rh <= l.clip_top) continue;
      const float y1 = y0 + rh - 1;
      const float ym = (y0 + y1) * 0.5f;
      const int band = row_band[li][r];
      const bool mouse_in_row = mouse_in_lanes && mouse.y >= std::max(y0, l.clip_top) &&
                                mouse.y < std::min(y1 + 1, l.clip_bottom);
      // Text taller than its row would be cut in half: none at all reads better.
      const bool text_fits = rh >= line_h * 0.9f;
      auto label = [&](float x0, float x1, const std::string& text, ImU32 colour) {
        if (x1 - x0 < kLabelMinWidthPx || !text_fits) return;
        const float left = std::max(x0, plot_x0) + 2;
        // A little short of the item's end, and never into another label.
        const float right = room_from(band, left, std::min(x1, plot_x1) - 4);
        if (right - left < kLabelMinWidthPx * 0.5f) return;
        ImVec4 clip(left, y0, right, y1);
        if (record_texts)
          rec.texts.emplace_back(std::string(text.data(), std::min<size_t>(text.size(), 200)));
        dl->AddText(nullptr, 0, ImVec2(left, ym - line_h * 0.5f), colour, text.data(),
                    text.data() + std::min<size_t>(text.size(), 200), 0, &clip);
        take(band, left, right, text);
      };
      const std::vector<Item>& items = row.items;
      // With the future hidden, items that begin after the horizon do not exist for this
      // frame, not even inside a fold's count.
      const size_t n =
          hide_future ? static_cast<size_t>(std::upper_bound(items.begin(), items.end(), cull_to_us,
                                                             [](TimeUs v, const Item& a) {
                                                               return v < a.from_us;
                                                             }) -
                                            items.begin())
                      : items.size();
      size_t i = row.first_reaching(from_us);
      while (i < n) {
        const Item& item = items[i];
        if (item.from_us > cull_to_us) break;
        const TimeUs item_to = item.open() ? std::max(end_us, item.from_us) : item.to_us;
        if (item_to < from_us) {
          i++;
          continue;
        }
        const float x0 = xf(item.from_us);
        const float x1 = xf(item_to);
        // Fold: this item and those starting within fold_px after the group's end, until a
        // gap or a wide item; one lower_bound per step, so a dense row costs its pixels.
        if (x1 - x0 < fold_px && i + 1 < n && items[i + 1].from_us <= item_to + fold_us) {
          size_t j = i + 1;  // first item not in the group
          TimeUs group_to = item_to;
          // Each step moves at least fold_px to the right, and a group stops at kFoldWidthMaxPx
          // (so that the density of a zoomed-out row still shows), which bounds the steps.
          for (int guard = 0; guard < kFoldStepsMax && j < n; guard++) {
            TimeUs reach = group_to + static_cast<TimeUs>(std::ceil(fold_us));
            auto next =
                std::lower_bound(items.begin() + static_cast<std::ptrdiff_t>(j), items.end(), reach,
                                 [](const Item& a, TimeUs v) { return a.from_us < v; });
            size_t k = static_cast<size_t>(next - items.begin());
            if (k == j) break;
            const Item& last = items[k - 1];
            TimeUs last_to = last.open() ? end_us : last.to_us;
            if (static_cast<double>(last_to - last.from_us) * px_per_us >= fold_px && k - 1 > i) {
              j = k - 1;  // a wide item stays visible on its own
              break;
            }
            group_to = std::max(group_to, last_to);
            j = k;
            if (group_to > to_us || xf(group_to) - x0 > kFoldWidthMaxPx) break;
          }
          int64_t count = static_cast<int64_t>(j - i);
          if (count > 1) {
            float fx0 = std::max(x0, plot_x0 - 2),
                  fx1 = std::max(clamp_x(xf(group_to)), fx0 + fold_px);
            dl->AddRectFilled(ImVec2(fx0, y0 + 2), ImVec2(fx1, y1 - 2), palette.fold);
            if (fx1 - fx0 >= kLabelMinWidthPx)
              label(fx0, fx1, std::to_string(count), palette.item_text);
            rec.folds_drawn++;
            shown[kShownFolded] = true;
            rec.items_folded += count;
            drawn_from(items[j - 1].from_us);
            if (mouse_in_row && mouse.x >= fx0 - 1 && mouse.x <= fx1 + 1) {
              hover_fold_count = count;
              hover_fold_from_us = item.from_us;
              hover_fold_to_us = group_to;
              hover_item = nullptr;
            }
            i = j;
            continue;
          }
        }
        rec.items_drawn++;
        drawn_from(item.from_us);
        const bool selected = selected_event >= 0 && item.begin_event == selected_event;
        float hx0 = x0, hx1 = x1;  // hover box
        if (is_mark(item)) {
          const float s = std::min(rh * 0.42f, 6.5f * scale);
          const ImVec2 c(x0, ym);
          draw_mark_shape(dl, item.kind, c, s, palette, 2.5f * scale, item.flags);
          shown[item.kind == ItemKind::error
                    ? ((item.flags & kItemRecovered) ? kShownRecovered : kShownError)
                : item.kind == ItemKind::accept
                    ? ((item.flags & kItemStale) ? kShownStale : kShownAccept)
                : item.kind == ItemKind::reject  ? kShownReject
                : item.kind == ItemKind::lost    ? kShownLost
                : item.kind == ItemKind::expired ? kShownExpired
                : item.kind == ItemKind::restart ? kShownRestart
                : item.kind == ItemKind::cut     ? kShownCut
                                                 : kShownFault] = true;
          std::string words;
          ImU32 words_colour = palette.label_text;
          const TraceEvent* e =
              item.begin_event >= 0 && static_cast<size_t>(item.begin_event) < trace.size()
                  ? &trace.events()[static_cast<size_t>(item.begin_event)]
                  : nullptr;
          if ((item.kind == ItemKind::accept || item.kind == ItemKind::reject) && e) {
            // The fence is the point of the lane.
            if (const int64_t* f = e->num(F::fence))
              words = trf(S::fence_label, lang, {std::to_string(*f)});
          } else if (item.kind == ItemKind::restart) {
            // The whole lane: everything the server held is gone from here on.
            dl->AddLine(ImVec2(x0, std::max(l.top, l.clip_top)),
                        ImVec2(x0, std::min(l.bottom, l.clip_bottom)), palette.restart, 3 * scale);
            words = tr(S::restart_label, lang);
            words_colour = palette.restart;
          } else if (item.kind == ItemKind::cut && e) {
            const std::string who =
                e->connection >= 0 ? model.index().connection_actor(e->connection) : std::string();
            const std::string reason(e->str_or(F::reason));
            const std::string why = reason.rfind("client-output-buffer-limit", 0) == 0
                                        ? tr(S::cut_output_buffer, lang)
                                        : reason;
            words = who.empty() ? trf(S::cut_label_nobody, lang, {why})
                                : trf(S::cut_label, lang, {who, why});
            words_colour = palette.cut;
          }
          if (!words.empty() && text_fits) {
            const float left = x0 + s + 3 * scale;
            const float w = ImGui::CalcTextSize(words.c_str()).x;
            // Up to the next mark on the row (its disc is drawn after: it would cover them).
            float room_x = std::min(left + w, plot_x1);
            if (i + 1 < n && is_mark(items[i + 1]) && items[i + 1].from_us <= cull_to_us)
              room_x = std::min(room_x, xf(items[i + 1].from_us) - s - 2 * scale);
            const float right = room_from(band, left, room_x);
            const std::string shown_words = right - left >= w ? words : elided(words, right - left);
            if (!shown_words.empty()) {
              // About something that has happened: not cut at the horizon.
              dl->PushClipRect(ImVec2(plot_x0, l.clip_top), ImVec2(plot_x1 + 2, l.clip_bottom),
                               false);
              if (record_texts) rec.texts.emplace_back(shown_words);
              dl->AddText(ImVec2(left, ym - line_h * 0.5f), words_colour, shown_words.c_str());
              dl->PopClipRect();
              take(band, left, left + ImGui::CalcTextSize(shown_words.c_str()).x + 2, shown_words);
            }
          }
          hx0 = x0 - s;
          hx1 = x0 + s;
          if (selected)
            dl->AddRect(ImVec2(hx0 - 1, y0), ImVec2(hx1 + 1, y1 + 1), palette.selection, 0, 0, 2);
        } else {
          const float sx0 = clamp_x(x0), sx1 = clamp_x(std::max(x1, x0 + 1));
          ImU32 colour = palette.command;
          float top = y0 + 1, bottom = y1;
          std::string text;
          const bool failed = (item.flags & kItemErrorReply) && !(item.flags & kItemRecovered);
          switch (item.kind) {
            case ItemKind::command:
              colour = failed ? palette.command_error : palette.command;
              shown[failed                          ? kShownErrorReply
                    : (item.flags & kItemRecovered) ? kShownRecovered
                                                    : kShownCommand] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx && item.begin_event >= 0)
                text = event_summary(trace.events()[item.begin_event]);
              break;
            case ItemKind::served:
              colour = (item.flags & kItemErrorReply) ? palette.command_error : palette.served;
              shown[(item.flags & kItemErrorReply) ? kShownErrorReply : kShownServed] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx && item.begin_event >= 0) {
                const TraceEvent& begin = trace.events()[item.begin_event];
                text = (item.flags & kItemSeenByClients) ? event_summary(begin)
                                                         : std::string(begin.str_or(F::cmd));
              }
              break;
            case ItemKind::pool_wait:
              colour = palette.pool_wait;
              shown[kShownPoolWait] = true;
              top = y0 + rh * 0.25f;
              bottom = y1 - rh * 0.25f;
              if (sx1 - sx0 >= kLabelMinWidthPx) text = tr(S::pool_wait_label, lang);
              break;
            case ItemKind::work:
            case ItemKind::sleep:
              colour = item.kind == ItemKind::work ? palette.work : palette.sleep;
              shown[item.kind == ItemKind::work ? kShownWork : kShownSleep] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx)
                // Its planned running time (a pause of the host makes the bar longer).
                text = trf(
                    item.kind == ItemKind::work ? S::work_label : S::sleep_label, lang,
                    {time_words(item.begin_event >= 0 ? trace.events()[item.begin_event].num_or(
                                                            F::duration_us, item_to - item.from_us)
                                                      : item_to - item.from_us,
                                lang)});
              break;
            case ItemKind::gap:
              colour = palette.gap;
              shown[kShownGap] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx) text = tr(S::disconnected_label, lang);
              break;
            case ItemKind::hold:
            case ItemKind::ttl:
              colour = palette.locks[std::max(item.group, 0) % 6];
              shown[kShownHold] = true;
              break;
            default:
              break;
          }
          if (item.kind == ItemKind::ttl && item.ttl_us > 0) {
            // The key's remaining TTL drains from full height at from_us to zero at the deadline.
            auto height_at = [&](TimeUs t) {
              double left =
                  static_cast<double>(item.deadline_us - t) / static_cast<double>(item.ttl_us);
              return static_cast<float>(std::clamp(left, 0.0, 1.0)) * (bottom - top);
            };
            TimeUs seg_to = std::min(item_to, item.deadline_us);
            float h0 = height_at(item.from_us), h1 = height_at(seg_to);
            float qx1 = clamp_x(xf(seg_to));
            dl->AddRectFilled(ImVec2(sx0, top), ImVec2(qx1, bottom), with_alpha(colour, 50));
            dl->AddQuadFilled(ImVec2(sx0, bottom - h0), ImVec2(qx1, bottom - h1),
                              ImVec2(qx1, bottom), ImVec2(sx0, bottom), colour);
            if (item.flags & kItemForeignEnd)
              dl->AddLine(ImVec2(qx1, top), ImVec2(qx1, bottom), palette.error, 3);
            if (item.owner >= 0 && static_cast<size_t>(item.owner) < lane_count)
              text = trf(S::key_of_label, lang, {lanes[item.owner].name});
            else if (item.begin_event >= 0)
              text = std::string(trace.events()[item.begin_event].str_or(F::value));
          } else if (item.kind == ItemKind::hold) {
            // Held past the TTL: the holder still believes, the key is gone (or someone else's).
            TimeUs deadline = item.deadline_us > 0 && item.ttl_us > 0 ? item.deadline_us : item_to;
            float xd = clamp_x(xf(std::min(deadline, item_to)));
            dl->AddRectFilled(ImVec2(sx0, top), ImVec2(std::max(xd, sx0), bottom), colour);
            if (deadline < item_to) {
              dl->AddRectFilled(ImVec2(xd, top), ImVec2(sx1, bottom), with_alpha(colour, 90));
              hatch(dl, ImVec2(xd, top), ImVec2(sx1, bottom), colour, 8, 1.5f);
              dl->AddRect(ImVec2(xd, top), ImVec2(sx1, bottom), palette.error, 0, 0, 1.5f);
            }
            if (item.begin_event >= 0)
              text = trf(S::holds_label, lang,
                         {std::string(trace.events()[item.begin_event].str_or(F::lock))});
          } else if (item.kind == ItemKind::command && (item.flags & kItemRecovered)) {
            // Recovered: the command's colour, hatched and outlined in orange, not a failure.
            dl->AddRectFilled(ImVec2(sx0, top), ImVec2(sx1, bottom), with_alpha(colour, 110));
            hatch(dl, ImVec2(sx0, top), ImVec2(sx1, bottom), palette.recovered, 6 * scale,
                  1.5f * scale);
            dl->AddRect(ImVec2(sx0, top), ImVec2(sx1, bottom), palette.recovered, 0, 0,
                        1.5f * scale);
          } else {
            dl->AddRectFilled(ImVec2(sx0, top), ImVec2(sx1, bottom), colour);
          }
          if (item.open()) dl->AddLine(ImVec2(sx1, top), ImVec2(sx1, bottom), palette.playhead, 1);
          if (!text.empty()) label(sx0, sx1, text, palette.item_text);
          if (selected)
            dl->AddRect(ImVec2(sx0 - 1, y0), ImVec2(sx1 + 1, y1 + 1), palette.selection, 0, 0, 2);
          hx0 = sx0 - 1;
          hx1 = std::max(sx1, sx0 + 3) + 1;
        }
        // Marks win over the spans they sit on (the later item is on top).
        if (mouse_in_row && mouse.x >= hx0 && mouse.x <= hx1 &&
            (hover_item == nullptr || is_mark(item))) {
          hover_item = &item;
          hover_fold_count = 0;
        }
        i++;
      }
    }
    dl->PopClipRect();
  }

  // ---- Pauses again, over the rows: the work a pause interrupts stops under it ----
  // (The band behind the lane shows the whole lane stopped; drawn only behind, a work bar ran
  // straight through a 15 s pause as if the holder went on working.)
  const char* paused_word = tr(S::paused_word, lang);
  for (const DrawRecord::Pause& p : rec.pauses) {
    const float x0 = p.min.x, x1 = p.max.x, top = p.min.y, bottom = p.max.y;
    dl->AddRectFilled(ImVec2(x0, top + 1), ImVec2(x1, bottom - 1), palette.pause_veil);
    // Hatched, so it reads as "stopped" in grey scale too, not only by its colour.
    hatch(dl, ImVec2(x0, top), ImVec2(x1, bottom), palette.pause_hatch, 8 * scale, 1.0f * scale);
    const ImVec2 size = ImGui::CalcTextSize(paused_word);
    if (x1 - x0 > size.x + 8 * scale) {
      if (record_texts) rec.texts.emplace_back(paused_word);
      dl->AddText(ImVec2(x0 + 4 * scale, top + (bottom - top - size.y) * 0.5f), palette.pause_text,
                  paused_word);
    }
  }

  // ---- Arrows: publisher -> each receiver, or -> a lost mark ----
  {
    const auto& arrows = model.arrows();
    const auto& reach = model.arrow_max_to_us();
    size_t a =
        static_cast<size_t>(std::lower_bound(reach.begin(), reach.end(), from_us) - reach.begin());
    // Arrows that would land on the same pixels as the last one drawn to the same lane (and of
    // the same kind) add nothing to the picture: skipped, so dense traces stay cheap.
    std::vector<std::pair<int, int>> last_px(lane_count * 2, {-1000000, -1000000});
    int64_t drawn = 0;
    auto row_mid = [&](int lane, int row, float* y) {
      if (lane < 0 || static_cast<size_t>(lane) >= lane_count) return false;
      const LaneLayout& l = lay[static_cast<size_t>(lane)];
      if (row < 0 || static_cast<size_t>(row) >= l.row_y.size()) return false;
      *y = l.row_y[static_cast<size_t>(row)] + l.row_h * 0.5f;
      return *y >= l.clip_top && *y < l.clip_bottom;
    };
    for (; a < arrows.size() && drawn < kArrowsPerFrameMax; a++) {
      const Arrow& arrow = arrows[a];
      if (arrow.from_us > cull_to_us) break;
      if (arrow.to_us < from_us) continue;
      // A message still on its way has not arrived anywhere yet.
      if (hide_future && arrow.to_us > horizon_us) continue;
      float fy = 0, ty = 0;
      if (!row_mid(arrow.from_lane, arrow.from_row, &fy) ||
          !row_mid(arrow.to_lane, arrow.to_row, &ty))
        continue;
      float fx = xf(arrow.from_us), tx = xf(arrow.to_us);
      std::pair<int, int> px{static_cast<int>(fx), static_cast<int>(tx)};
      std::pair<int, int>& last =
          last_px[static_cast<size_t>(arrow.to_lane) * 2 + (arrow.lost ? 1 : 0)];
      if (std::abs(px.first - last.first) <= 1 && std::abs(px.second - last.second) <= 1) continue;
      last = px;
      drawn++;
      drawn_from(arrow.from_us);
      ImU32 colour = arrow.lost ? palette.arrow_lost : palette.arrow;
      dl->AddLine(ImVec2(fx, fy), ImVec2(tx, ty), colour, arrow.lost ? 1.5f : 1.0f);
      shown[arrow.lost ? kShownLost : kShownMessage] = true;
      if (arrow.lost) {
        const float s =
            std::min(lay[static_cast<size_t>(arrow.to_lane)].row_h * 0.45f, 7.0f * scale);
        draw_mark_shape(dl, ItemKind::lost, ImVec2(tx, ty), s, palette, 3 * scale);
        rec.lost_drawn++;
        if (mouse_in_lanes && std::fabs(mouse.x - tx) <= s && std::fabs(mouse.y - ty) <= s) {
          hover_item = nullptr;
          hover_fold_count = 0;
          hovered_event = arrow.from_event;
        }
      } else {
        // An arrowhead pointing along the line.
        float dx = tx - fx, dy = ty - fy, len = std::sqrt(dx * dx + dy * dy);
        if (len > 6) {
          dx /= len;
          dy /= len;
          ImVec2 tip(tx, ty), left(tx - dx * 6 - dy * 3, ty - dy * 6 + dx * 3),
              right(tx - dx * 6 + dy * 3, ty - dy * 6 - dx * 3);
          dl->AddTriangleFilled(tip, left, right, colour);
        }
      }
    }
    rec.arrows_drawn = drawn;
  }

  // ---- Violation markers (placed above): drawn over everything in their lanes ----
  // Their labels last of all (after the ruler's playhead): no line, bar or playhead may cross
  // the words of the moment of failure. A future one's stays under the future's veil.
  const float marker_pad_px = 3 * scale;
  auto draw_marker_label = [&](const MarkerPlan& p) {
    if (!p.room) return;
    const ViolationRegion& v = model.violations()[p.violation];
    const LaneLayout& l = lay[p.lane];
    // The label is about something that has begun: it is not cut at the horizon.
    dl->PushClipRect(ImVec2(plot_x0, l.clip_top), ImVec2(plot_x1 + 2, l.clip_bottom), false);
    dl->AddRectFilled(p.a, p.b, palette.violation_border, 2 * scale);
    if (record_texts) rec.texts.emplace_back(p.label);
    dl->AddText(ImVec2(p.a.x + marker_pad_px, p.a.y + (p.b.y - p.a.y - line_h) * 0.5f),
                palette.marker_text, p.label.c_str());
    if (selected_event >= 0 && v.event == selected_event)
      dl->AddRect(ImVec2(p.a.x - 2, p.a.y - 1), ImVec2(p.b.x + 2, p.b.y + 1), palette.selection, 0,
                  0, 2 * scale);
    dl->PopClipRect();
  };
  const ViolationRegion* hover_marker = nullptr;
  size_t hover_marker_index = 0;
  {
    for (const MarkerPlan& p : plans) {
      const ViolationRegion& v = model.violations()[p.violation];
      const LaneLayout& l = lay[p.lane];
      dl->PushClipRect(ImVec2(plot_x0, l.clip_top), ImVec2(plot_x1 + 2, l.clip_bottom), true);
      dl->AddRectFilled(ImVec2(p.x0, p.bottom - p.bar_h), ImVec2(p.x1, p.bottom),
                        palette.violation_border);
      dl->AddLine(ImVec2(p.x0, p.top), ImVec2(p.x0, p.bottom), palette.violation_border, 2 * scale);
      dl->PopClipRect();
      if (is_future(v.from_us)) draw_marker_label(p);  // under the future's veil, faint
      rec.markers.push_back({p.a, p.b, lanes[p.lane].name, p.label, v.check, v.event, v.from_us,
                             v.to_us, is_future(v.from_us)});
      drawn_from(v.from_us);
      if (mouse_in_lanes && mouse.y >= l.clip_top && mouse.y < l.clip_bottom &&
          ((mouse.x >= p.a.x && mouse.x <= p.b.x && mouse.y >= p.a.y && mouse.y <= p.b.y) ||
           (mouse.x >= p.x0 - 2 && mouse.x <= p.x1 + 2 && mouse.y >= p.bottom - p.bar_h - 2 &&
            mouse.y <= p.bottom + 1))) {
        hover_marker = &v;
        hover_marker_index = p.violation;
      }
    }
  }

  if (hide_future) {
    dl->PopClipRect();
  } else if (limited && horizon_x < plot_x1) {
    dl->AddRectFilled(ImVec2(horizon_x, lanes_y0), ImVec2(plot_x1 + 2, lanes_y1),
                      palette.future_veil);
  }

  // ---- The name column: lanes and groups (click folds), row labels ----
  rec.names_min = ImVec2(origin.x, lanes_y0);
  rec.names_max = ImVec2(plot_x0, lanes_y1);
  dl->AddRectFilled(ImVec2(origin.x, lanes_y0), ImVec2(plot_x0, lanes_y1),
                    palette.ruler_background);
  struct Clickable {
    ImVec2 min, max;
    std::string name;
    bool group;
  };
  std::vector<Clickable> clickable;
  const std::string* hover_name = nullptr;
  std::string hover_name_text;
  const float tri_px = line_h * 0.55f;
  auto fold_triangle = [&](ImVec2 at, bool folded) {  // ▸ folded, ▾ open
    const float s = tri_px * 0.5f, cx = at.x + s, cy = at.y + line_h * 0.5f;
    if (folded)
      dl->AddTriangleFilled(ImVec2(cx - s * 0.6f, cy - s), ImVec2(cx - s * 0.6f, cy + s),
                            ImVec2(cx + s * 0.8f, cy), palette.label_text);
    else
      dl->AddTriangleFilled(ImVec2(cx - s, cy - s * 0.6f), ImVec2(cx + s, cy - s * 0.6f),
                            ImVec2(cx, cy + s * 0.8f), palette.label_text);
  };
  // A name elided to the column, its whole text on hover.
  auto name_text = [&](const std::string& text, ImVec2 at, float right, float clip_top,
                       float clip_bottom, ImU32 colour) {
    const std::string shown_text = elided(text, right - at.x);
    ImVec4 clip(at.x, clip_top, right + 1, clip_bottom);
    if (record_texts) rec.texts.emplace_back(shown_text);
    dl->AddText(nullptr, 0, at, colour, shown_text.c_str(), nullptr, 0, &clip);
    if (hovered && shown_text != text && mouse.x >= at.x && mouse.x <= right && mouse.y >= at.y &&
        mouse.y < at.y + line_h && mouse.y >= clip_top && mouse.y < clip_bottom)
      hover_name_text = text;
  };
  for (const Header& h : headers) {
    const float a = std::max(h.top, actors_top), b = std::min(h.bottom, actors_bottom);
    if (b <= a) continue;
    dl->PushClipRect(ImVec2(origin.x, a), ImVec2(area_max.x, b), true);
    const ImVec2 at(origin.x + 4, h.top + (h.folded ? kLanePadPx : 2));
    fold_triangle(at, h.folded);
    const std::string text = trf(S::group_label, lang, {h.name, std::to_string(h.members)});
    name_text(text, ImVec2(at.x + tri_px + 3, at.y), plot_x0 - 4, a, b, palette.label_text);
    if (!h.folded)
      dl->AddLine(ImVec2(origin.x + 4, h.bottom - 1), ImVec2(area_max.x, h.bottom - 1),
                  with_alpha(palette.lane_separator, 60));
    dl->PopClipRect();
    clickable.push_back({ImVec2(origin.x, a), ImVec2(plot_x0, b), h.name, true});
  }
  for (size_t li = 0; li < lane_count; li++) {
    const Lane& lane = lanes[li];
    const LaneLayout& l = lay[li];
    if (!l.visible() || l.slot != static_cast<int>(li)) continue;
    if (!group[li].empty() && group_is_folded(group[li])) continue;  // under its header
    const float ct = std::max(l.top, l.clip_top), cb = std::min(l.bottom, l.clip_bottom);
    const float indent = group[li].empty() ? 4 : 4 + tri_px;
    std::string name = lane.kind == LaneKind::server     ? "[" + lane.name + "]"
                       : lane.kind == LaneKind::resource ? "<" + lane.name + ">"
                                                         : lane.name;
    ImVec2 at(origin.x + indent, l.top + kLanePadPx + std::max(0.0f, (l.row_h - line_h) * 0.5f));
    if (lane.rows.size() > 1 && lane.kind == LaneKind::actor) {
      fold_triangle(at, l.folded);
      at.x += tri_px + 3;
      clickable.push_back({ImVec2(origin.x, ct), ImVec2(plot_x0, cb), lane.name, false});
    }
    name_text(name, at, plot_x0 - 4, ct, cb, palette.label_text);
    // A real server's lane says whose view it is: over its first row (where a fake server's
    // own events would be), since the name column has no room for it.
    if (!lane.caption.empty()) {
      const char* caption = tr(S::seen_by_clients, lang);
      const float cw = ImGui::CalcTextSize(caption).x;
      const float cx = plot_x0 + 6;
      const float right = room_from(l.band0, cx, cx + cw);
      if (right >= cx + cw) {
        if (record_texts) rec.texts.emplace_back(caption);
        dl->AddText(ImVec2(cx, l.row_y[0] + (l.row_h - line_h) * 0.5f),
                    with_alpha(palette.label_text, 200), caption);
        take(l.band0, cx, cx + cw, caption);
      }
    }
    // Row labels when there is room beside the name: small and muted.
    if (!l.folded && l.row_h >= line_h) {
      for (size_t r = 1; r < lane.rows.size(); r++) {
        float y = l.row_y[r];
        if (y + l.row_h <= l.clip_top || y >= l.clip_bottom) continue;
        const std::string text = elided(row_label(lane.rows[r], lang), label_width_px - indent - 8);
        float w = ImGui::CalcTextSize(text.c_str()).x;
        ImVec4 clip(origin.x, std::max(y, l.clip_top), plot_x0 - 2,
                    std::min(y + l.row_h, l.clip_bottom));
        if (record_texts) rec.texts.emplace_back(text);
        dl->AddText(nullptr, 0, ImVec2(plot_x0 - 4 - w, y + (l.row_h - line_h) * 0.5f),
                    with_alpha(palette.label_text, 160), text.c_str(), nullptr, 0, &clip);
      }
    }
    if (l.bottom > l.clip_top && l.bottom <= l.clip_bottom)
      dl->AddLine(ImVec2(origin.x, l.bottom), ImVec2(area_max.x, l.bottom), palette.lane_separator);
  }
  if (hovered && mouse.x < plot_x0)
    for (const Clickable& c : clickable)
      if (mouse.y >= c.min.y && mouse.y < c.max.y) hover_name = &c.name;

  // ---- The scrollbar of the actor lanes ----
  if (rec.scroll_max_px > 0 && region_h > 0) {
    const float x0 = plot_x1 + 3, x1 = area_max.x - 1;
    dl->AddRectFilled(ImVec2(x0, actors_top), ImVec2(x1, actors_bottom),
                      with_alpha(palette.ruler_tick, 40), 3 * scale);
    const float thumb_h = std::max(region_h * region_h / content_h, 12 * scale);
    const float thumb_y = actors_top + (region_h - thumb_h) * (scroll_px / rec.scroll_max_px);
    dl->AddRectFilled(ImVec2(x0 + 1, thumb_y), ImVec2(x1 - 1, thumb_y + thumb_h),
                      with_alpha(palette.ruler_tick, scroll_dragging_ ? 230 : 160), 3 * scale);
  }

  // ---- Ruler: ticks, labels, notes, and the playhead's handle ----
  dl->AddRectFilled(ImVec2(origin.x, origin.y), ImVec2(area_max.x, lanes_y0),
                    palette.ruler_background);
  // Where the future is hidden, the ruler says so (the lanes there may carry markers' labels):
  // the question the teacher asks, and the key that answers it. No tick label under it.
  const char* next_text = tr(S::what_next, lang);
  const ImVec2 next_size = ImGui::CalcTextSize(next_text);
  const float next_x = horizon_x + 10 * scale;
  const bool next_shown = hide_future && plot_x1 - next_x > next_size.x + 8;
  auto under_next = [&](float x0, float x1) {
    return next_shown && x1 > next_x - 6 && x0 < next_x + next_size.x + 6;
  };
  {
    // Labels need their width apart: the step grows with the widest label ("12.5 s").
    const float tick_px = std::max(90.0f, ImGui::CalcTextSize("00.000 ms").x + 16);
    TimeUs step = nice_step(tick_px / px_per_us);
    TimeUs first = (from_us / step) * step;
    if (first < from_us) first += step;
    for (TimeUs t = first, guard = 0; t <= to_us && guard < 200; t += step, guard++) {
      float x = xf(t);
      dl->AddLine(ImVec2(x, lanes_y0 - 6), ImVec2(x, lanes_y0), palette.ruler_tick);
      dl->AddLine(ImVec2(x, lanes_y0), ImVec2(x, lanes_y1), with_alpha(palette.ruler_tick, 30));
      std::string text = ruler_words(t, lang);
      const float w = ImGui::CalcTextSize(text.c_str()).x;
      if (!under_next(x + 2, x + 2 + w) && x + 2 + w <= area_max.x) {
        if (record_texts) rec.texts.emplace_back(text);
        dl->AddText(ImVec2(x + 2, origin.y + 2), palette.label_text, text.c_str());
      }
    }
    for (const Note& note : model.notes()) {
      if (note.time_us < from_us || note.time_us > cull_to_us) continue;
      float x = xf(note.time_us);
      const float s = 4 * scale;
      dl->AddTriangleFilled(ImVec2(x - s, lanes_y0 - 7 * scale),
                            ImVec2(x + s, lanes_y0 - 7 * scale), ImVec2(x, lanes_y0), palette.note);
      if (hovered && std::fabs(mouse.x - x) <= s + 1 && mouse.y >= lanes_y0 - 9 * scale &&
          mouse.y <= lanes_y0)
        hover_note = &note;
    }
  }
  if (next_shown) {
    if (record_texts) rec.texts.emplace_back(next_text);
    dl->AddText(ImVec2(next_x, origin.y + (ruler_height_px - next_size.y) * 0.5f),
                palette.future_text, next_text);
  }
  if (playhead_us >= from_us && playhead_us <= to_us) {
    float x = xf(playhead_us);
    dl->AddLine(ImVec2(x, origin.y), ImVec2(x, lanes_y1), palette.playhead, 2 * scale);
    dl->AddTriangleFilled(ImVec2(x - 6 * scale, origin.y), ImVec2(x + 6 * scale, origin.y),
                          ImVec2(x, origin.y + 8 * scale), palette.playhead);
  }
  for (const MarkerPlan& p : plans)
    if (!is_future(model.violations()[p.violation].from_us)) draw_marker_label(p);

  // ---- Legend: what this frame drew, with its shapes, wrapped onto as many lines as needed ----
  rec.legend.clear();
  if (show_legend) {
    const float swatch_px = std::max(line_h * 0.8f, 10.0f);
    const float gap_px = 12 * scale;
    float x = origin.x + 4, y = lanes_y1 + 2;
    int lines = 1;
    for (int k = 0; k < kShownCount; k++) {
      if (!shown[k]) continue;
      const char* name = tr(kShownWords[k], lang);
      const float w = swatch_px + 4 + ImGui::CalcTextSize(name).x;
      if (x + w > area_max.x - 4 && x > origin.x + 4) {  // wrap, never cut
        x = origin.x + 4;
        y += legend_line_h;
        lines++;
      }
      const ImVec2 c(x + swatch_px / 2, y + line_h / 2);
      const float h = swatch_px / 2;
      // The marks' swatches are their own shapes, at about their size on a row.
      struct MarkSwatch {
        int shown;
        ItemKind kind;
        float size;
        uint8_t flags;
      };
      static constexpr MarkSwatch kMarkSwatches[] = {
          {kShownError, ItemKind::error, 0.9f, 0},
          {kShownAccept, ItemKind::accept, 0.8f, 0},
          {kShownStale, ItemKind::accept, 0.7f, kItemStale},
          {kShownReject, ItemKind::reject, 0.8f, 0},
          {kShownLost, ItemKind::lost, 0.85f, 0},
          {kShownExpired, ItemKind::expired, 0.9f, 0},
          {kShownFault, ItemKind::fault, 0.9f, 0},
          {kShownRestart, ItemKind::restart, 0.7f, 0},
          {kShownCut, ItemKind::cut, 0.8f, 0}};
      const MarkSwatch* mark_swatch = nullptr;
      for (const MarkSwatch& m : kMarkSwatches)
        if (m.shown == k) mark_swatch = &m;
      if (mark_swatch) {
        draw_mark_shape(dl, mark_swatch->kind, c, h * mark_swatch->size, palette, 2.5f * scale,
                        mark_swatch->flags);
      } else {
        switch (k) {
          case kShownMessage:
            dl->AddLine(ImVec2(c.x - h, c.y), ImVec2(c.x + h, c.y), palette.arrow, 1.5f * scale);
            dl->AddTriangleFilled(ImVec2(c.x + h, c.y),
                                  ImVec2(c.x + h - 5 * scale, c.y - 3 * scale),
                                  ImVec2(c.x + h - 5 * scale, c.y + 3 * scale), palette.arrow);
            break;
          case kShownBusy:  // the band behind every lane, with its edges
            dl->AddRectFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y + h), palette.busy);
            dl->AddRect(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y + h), palette.busy_edge);
            break;
          case kShownViolation:  // the marker's red label with its span's bar
            dl->AddRectFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y + h),
                              palette.violation_border, 2 * scale);
            break;
          case kShownRecovered: {  // a command bar, hatched and outlined in orange
            const ImVec2 a(c.x - h, c.y - h * 0.6f), b(c.x + h, c.y + h * 0.6f);
            dl->AddRectFilled(a, b, with_alpha(palette.command, 110));
            hatch(dl, a, b, palette.recovered, 4 * scale, 1.2f * scale);
            dl->AddRect(a, b, palette.recovered, 0, 0, 1.5f * scale);
            // and its hollow triangle (a timeout the call retried)
            draw_mark_shape(dl, ItemKind::error, ImVec2(c.x + h + 6 * scale, c.y), h * 0.7f,
                            palette, 2 * scale, kItemRecovered);
            break;
          }
          default: {  // a span: a bar in its colour
            ImU32 colour = palette.fold;
            switch (k) {
              case kShownCommand:
                colour = palette.command;
                break;
              case kShownErrorReply:
                colour = palette.command_error;
                break;
              case kShownPoolWait:
                colour = palette.pool_wait;
                break;
              case kShownWork:
                colour = palette.work;
                break;
              case kShownSleep:
                colour = palette.sleep;
                break;
              case kShownHold:
                colour = palette.locks[0];
                break;
              case kShownServed:
                colour = palette.served;
                break;
              case kShownPause:
                colour = with_alpha(palette.pause, 160);
                break;
              case kShownGap:
                colour = palette.gap;
                break;
              default:
                break;
            }
            dl->AddRectFilled(ImVec2(c.x - h, c.y - h * 0.6f), ImVec2(c.x + h, c.y + h * 0.6f),
                              colour);
            break;
          }
        }
      }
      const float text_x = x + swatch_px + 4 + (k == kShownRecovered ? 12 * scale : 0);
      if (record_texts) rec.texts.emplace_back(name);
      dl->AddText(ImVec2(text_x, y), palette.label_text, name);
      const float entry_w = w + (k == kShownRecovered ? 12 * scale : 0);
      rec.legend.push_back({name, ImVec2(x, y), ImVec2(x + entry_w, y + line_h)});
      x += entry_w + gap_px;
    }
    legend_lines_ = lines;
  }
  dl->PopClipRect();

  // ---- Hover, tooltip, selection, folding ----
  if (hover_item) hovered_event = hover_item->begin_event;
  if (hover_marker) {  // a marker is on top of everything under it
    hover_item = nullptr;
    hover_fold_count = 0;
    hover_region = hover_marker;
    hover_region_index = hover_marker_index;
    hovered_event = hover_marker->event;
  }
  if (hovered && !active) {
    auto t = [&](TimeUs x) { return ruler_words(x, lang); };
    if (hover_name) {
      ImGui::BeginTooltip();
      if (!hover_name_text.empty()) ImGui::TextUnformatted(hover_name_text.c_str());
      ImGui::TextUnformatted(tr(S::collapse_tip, lang));
      ImGui::EndTooltip();
    } else if (!hover_name_text.empty()) {
      ImGui::SetTooltip("%s", hover_name_text.c_str());
    } else if (hover_fold_count > 0) {
      ImGui::SetTooltip(
          "%s", trf(S::folded_tip, lang,
                    {std::to_string(hover_fold_count), t(hover_fold_from_us), t(hover_fold_to_us)})
                    .c_str());
    } else if (hover_item || hovered_event >= 0 || hover_region || hover_note) {
      ImGui::BeginTooltip();
      if (hover_item && hover_item->begin_event >= 0 &&
          static_cast<size_t>(hover_item->begin_event) < trace.size()) {
        const Item& item = *hover_item;
        const TraceEvent& e = trace.events()[item.begin_event];
        ImGui::TextUnformatted(
            trf(S::event_at, lang, {tr(kind_words(item.kind), lang), t(item.from_us)}).c_str());
        const std::string summary = event_summary(e, 120, lang != Lang::en);
        ImGui::Text("%s%s%s", e.actor.c_str(), summary.empty() ? "" : ": ", summary.c_str());
        if (e.connection >= 0)
          ImGui::TextUnformatted(
              trf(S::connection_n, lang, {std::to_string(e.connection)}).c_str());
        if (e.step >= 0 || e.attempt >= 0)
          ImGui::TextUnformatted(
              trf(S::step_attempt, lang, {std::to_string(e.step), std::to_string(e.attempt)})
                  .c_str());
        if (item.end_event >= 0 && static_cast<size_t>(item.end_event) < trace.size()) {
          const TraceEvent& end = trace.events()[item.end_event];
          ImGui::Text("%s: %s", end.kind.c_str(),
                      event_summary(end, 120, lang != Lang::en).c_str());
          ImGui::TextUnformatted(trf(S::took, lang, {t(item.to_us - item.from_us)}).c_str());
        } else if (item.kind == ItemKind::served && !item.open()) {
          ImGui::TextUnformatted(trf(S::busy_for, lang, {t(item.to_us - item.from_us)}).c_str());
        } else if (item.open()) {
          ImGui::TextUnformatted(tr(S::still_open, lang));
        }
        if (item.flags & kItemRecovered)
          ImGui::TextColored(
              ImGui::ColorConvertU32ToFloat4(palette.recovered), "%s",
              trf(S::recovered_tip, lang,
                  {tr(item.kind == ItemKind::command && e.list(F::argv) &&
                              !e.list(F::argv)->empty() && (*e.list(F::argv))[0] == "EVALSHA"
                          ? S::recovered_fallback
                          : S::recovered_retry,
                      lang)})
                  .c_str());
        if (item.flags & kItemStale)
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette.error), "%s",
                             tr(S::stale_accept_tip, lang));
        if (item.kind == ItemKind::ttl && item.ttl_us > 0) {
          ImGui::TextUnformatted(
              trf(S::ttl_reaches_zero, lang, {t(item.ttl_us), t(item.deadline_us)}).c_str());
          if (item.owner >= 0 && static_cast<size_t>(item.owner) < lane_count)
            ImGui::TextUnformatted(trf(S::set_by, lang, {lanes[item.owner].name}).c_str());
        } else if (item.kind == ItemKind::hold && item.ttl_us > 0) {
          ImGui::TextUnformatted(
              trf(S::hold_counts_until, lang, {t(item.ttl_us), t(item.deadline_us)}).c_str());
          TimeUs item_to = item.open() ? end_us : item.to_us;
          if (item_to > item.deadline_us)
            ImGui::TextUnformatted(
                trf(S::held_past_ttl, lang, {t(item_to - item.deadline_us)}).c_str());
        }
        if (item.kind == ItemKind::ttl && (item.flags & kItemForeignEnd))
          ImGui::TextUnformatted(tr(S::deleted_by_other, lang));
      } else if (!hover_marker && hovered_event >= 0 &&
                 static_cast<size_t>(hovered_event) < trace.size()) {
        const TraceEvent& e = trace.events()[hovered_event];
        ImGui::TextUnformatted(trf(S::message_lost_tip, lang,
                                   {e.actor, event_summary(e, 120, lang != Lang::en), t(e.time_us)})
                                   .c_str());
        ImGui::TextUnformatted(tr(S::subscriber_gone, lang));
      }
      if (hover_region) {
        if (hover_item || (!hover_marker && hovered_event >= 0)) ImGui::Separator();
        ImGui::TextColored(
            ImGui::ColorConvertU32ToFloat4(palette.violation_border), "%s",
            trf(S::check_violated, lang,
                {check_title ? check_title(hover_region->check) : hover_region->check})
                .c_str());
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextUnformatted(violation_words_at(hover_region_index).sentence.c_str());
        ImGui::PopTextWrapPos();
        if (hover_region->to_us <= words_at_us)
          ImGui::TextUnformatted(
              trf(S::from_to, lang, {t(hover_region->from_us), t(hover_region->to_us)}).c_str());
        else
          ImGui::TextUnformatted(trf(S::from_only, lang, {t(hover_region->from_us)}).c_str());
      }
      if (hover_note) {
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::Text("%s %s", t(hover_note->time_us).c_str(),
                    hover_note->text_in(size_t(lang)).c_str());
        ImGui::PopTextWrapPos();
      }
      ImGui::EndTooltip();
    }
  }
  if (released && !scrubbing_ && !panned_ && !scroll_dragging_) {
    if (mouse.x < plot_x0 && mouse.y >= lanes_y0) {
      for (const Clickable& c : clickable)
        if (mouse.y >= c.min.y && mouse.y < c.max.y) {
          if (c.group)
            toggle_group(c.name);
          else
            toggle_lane(c.name);
          break;
        }
    } else {
      selected_event = hovered_event;
    }
  }
  if (released) {
    scrubbing_ = false;
    scroll_dragging_ = false;
  }
}

}  // namespace redlab::gui
