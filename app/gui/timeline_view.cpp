// The timeline view (see timeline_view.h): input first (zoom, pan, scrub, so this frame draws
// the new range), then per lane and row: binary-search the first item that reaches into the
// view, walk until the view's end, and fold runs of items narrower than fold_px into one
// counted mark with a lower_bound jump (Tracy's zone folding). The cost per row is bounded by
// the pixels across, not by the events in view.
#include "app/gui/timeline_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/scenario/engine.h"  // format_time

namespace redlab::gui {

namespace {

ImU32 with_alpha(ImU32 colour, int alpha) {
  return (colour & ~IM_COL32_A_MASK) |
         (static_cast<ImU32>(std::clamp(alpha, 0, 255)) << IM_COL32_A_SHIFT);
}

// "12.5 s", "350 ms", "120 us": ruler labels and tooltips, exact for whole units.
std::string time_text(TimeUs t) {
  char buf[48];
  TimeUs a = t < 0 ? -t : t;
  if (t == 0) return "0";  // the start of the run, whatever the ruler's unit
  if (a >= kUsPerSecond)
    std::snprintf(buf, sizeof buf, "%.*f s", a % kUsPerSecond == 0 ? 0 : 3,
                  static_cast<double>(t) / kUsPerSecond);
  else if (a >= kUsPerMs)
    std::snprintf(buf, sizeof buf, "%.*f ms", a % kUsPerMs == 0 ? 0 : 3,
                  static_cast<double>(t) / kUsPerMs);
  else
    std::snprintf(buf, sizeof buf, "%lld us", static_cast<long long>(t));
  return buf;
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
      return true;
    default:
      return false;
  }
}

// Lane display order: actors (in order of appearance), then servers, then resources.
std::vector<int> lane_order(const TimelineModel& model) {
  std::vector<int> order;
  for (LaneKind kind : {LaneKind::actor, LaneKind::server, LaneKind::resource})
    for (size_t i = 0; i < model.lanes().size(); i++)
      if (model.lanes()[i].kind == kind) order.push_back(static_cast<int>(i));
  return order;
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
  kShownReject,
  kShownLost,
  kShownExpired,
  kShownFault,
  kShownFolded,
  kShownViolation,
  kShownBusy,
  kShownCount
};
const char* const kShownNames[kShownCount] = {
    "command",    "error reply", "pool wait",    "work",    "sleep",  "lock held / key TTL",
    "served",     "pause",       "disconnected", "message", "error",  "accepted",
    "rejected",   "lost",        "expired",      "fault",   "folded", "violation",
    "server busy"};

// A mark's shape (also its legend swatch): centre c, half-size s.
void draw_mark_shape(ImDrawList* dl, ItemKind kind, ImVec2 c, float s, const TimelinePalette& p,
                     float thick) {
  switch (kind) {
    case ItemKind::error:
      dl->AddTriangleFilled(ImVec2(c.x, c.y - s * 1.15f), ImVec2(c.x - s, c.y + s * 0.85f),
                            ImVec2(c.x + s, c.y + s * 0.85f), p.error);
      break;
    case ItemKind::accept:
      dl->AddCircleFilled(c, s, p.accept);
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
    default:  // fault
      dl->AddTriangleFilled(ImVec2(c.x - s, c.y - s * 0.85f), ImVec2(c.x + s, c.y - s * 0.85f),
                            ImVec2(c.x, c.y + s * 1.15f), p.fault);
      break;
  }
}

constexpr float kLanePadPx = 3;
constexpr float kRowHeightMinPx = 7;  // rows shrink to this before lanes are cut off
constexpr int64_t kArrowsPerFrameMax = 5000;
constexpr float kLabelMinWidthPx = 36;  // an item needs this much room to carry its text
constexpr float kFoldWidthMaxPx = 48;   // a fold mark grows to this, then a new one starts
constexpr int kFoldStepsMax = 4096;

}  // namespace

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
  if (hovered && io.MouseWheel != 0) zoom_at(mouse.x, std::pow(1.25f, io.MouseWheel), model);
  if (hovered && io.MouseWheelH != 0 && last_draw.px_per_us > 0) {
    TimeUs shift_us = static_cast<TimeUs>(io.MouseWheelH * 60 / last_draw.px_per_us);
    view_from_us -= shift_us;
    view_to_us -= shift_us;
    clamp_range(model);
  }
  if (ImGui::IsItemActivated()) {
    scrubbing_ = in_ruler;
    panned_ = false;
  }
  if (active && scrubbing_) {
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
  if (hovered && !in_ruler && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) fit(model);
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

  // Geometry that input handling needs (ruler, mapping) from this frame's layout.
  const float plot_x0 = origin.x + label_width_px;
  const float plot_x1 = area_max.x - 4;
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
  // A violation's words as of the horizon (ViolationRegion::text_at): its end is not told
  // while it is hidden.
  const TimeUs words_at_us = hide_future ? horizon_us : kTimeNeverUs;

  dl->PushClipRect(origin, area_max, true);
  dl->AddRectFilled(origin, area_max, palette.background);

  // ---- Layout: lanes and rows, shrunk to fit ----
  const std::vector<int> order = lane_order(model);
  size_t row_count = 0;
  for (int li : order) row_count += model.lanes()[li].rows.size();
  float row_h = row_height_px;
  const float lanes_avail = lanes_y1 - lanes_y0 - kLanePadPx * 2 * static_cast<float>(order.size());
  if (row_count > 0 && row_h * static_cast<float>(row_count) > lanes_avail)
    row_h = std::max(kRowHeightMinPx, lanes_avail / static_cast<float>(row_count));
  // y of every row (model lane index -> rows), NaN-free: rows below the area get y > lanes_y1.
  std::vector<std::vector<float>> row_y(model.lanes().size());
  std::vector<std::pair<float, float>> lane_y(model.lanes().size(), {0.f, 0.f});
  {
    float y = lanes_y0;
    for (size_t k = 0; k < order.size(); k++) {
      const Lane& lane = model.lanes()[order[k]];
      float top = y;
      y += kLanePadPx;
      for (size_t r = 0; r < lane.rows.size(); r++) {
        row_y[order[k]].push_back(y);
        y += row_h;
      }
      y += kLanePadPx;
      lane_y[order[k]] = {top, y};
      if (k % 2 == 1 && top < lanes_y1)
        dl->AddRectFilled(ImVec2(origin.x, top), ImVec2(area_max.x, std::min(y, lanes_y1)),
                          palette.lane_alternate);
      if (top < lanes_y1)
        rec.lanes.push_back({lane.name, lane.caption, ImVec2(origin.x, top),
                             ImVec2(area_max.x, std::min(y, lanes_y1))});
    }
  }

  // What the mouse is over, found while drawing and shown after (a tooltip per frame).
  const Item* hover_item = nullptr;
  int64_t hover_fold_count = 0;
  TimeUs hover_fold_from_us = 0, hover_fold_to_us = 0;
  const ViolationRegion* hover_region = nullptr;
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
  for (int li : order) {
    const Lane& lane = model.lanes()[li];
    auto [top, bottom] = lane_y[li];
    if (top >= lanes_y1) continue;
    for (const Item& band : lane.bands) {
      TimeUs band_to = band.open() ? end_us : band.to_us;
      if (band_to < from_us || band.from_us > cull_to_us) continue;
      float x0 = clamp_x(xf(band.from_us)),
            x1 = clamp_x(std::max(xf(band_to), xf(band.from_us) + 2));
      dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), palette.pause);
      // Drawn again over the rows below, from this record.
      rec.pauses.push_back(
          {ImVec2(x0, top), ImVec2(x1, std::min(bottom, lanes_y1)), lane.name, band.from_us});
      shown[kShownPause] = true;
      rec.items_drawn++;
      drawn_from(band.from_us);
      if (mouse_in_lanes && mouse.y >= top && mouse.y < bottom && mouse.x >= x0 && mouse.x <= x1)
        hover_item = &band;
    }
  }

  // ---- Violation regions ----
  for (const ViolationRegion& v : model.violations()) {
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
      if (li < 0 || lane_y[li].first >= lanes_y1) continue;
      dl->AddRectFilled(ImVec2(x0, lane_y[li].first),
                        ImVec2(x1, std::min(lane_y[li].second, lanes_y1)), palette.violation);
    }
    shown[kShownViolation] = true;
    dl->AddLine(ImVec2(x0, lanes_y0), ImVec2(x0, lanes_y1), palette.violation_border, 1.5f);
    dl->AddLine(ImVec2(x1, lanes_y0), ImVec2(x1, lanes_y1), palette.violation_border, 1.5f);
    rec.violations.push_back({ImVec2(x0, lanes_y0), ImVec2(x1, lanes_y1), v.text, v.check, v.event,
                              is_future(v.from_us)});
    drawn_from(v.from_us);
    if (mouse_in_lanes && mouse.x >= x0 && mouse.x <= x1) hover_region = &v;
  }

  // ---- Rows: prepare (cull, fold) and draw ----
  const double fold_us = fold_px / px_per_us;
  for (int li : order) {
    const Lane& lane = model.lanes()[li];
    for (size_t r = 0; r < lane.rows.size(); r++) {
      const Row& row = lane.rows[r];
      const float y0 = row_y[li][r];
      if (y0 >= lanes_y1) break;
      const float y1 = y0 + row_h - 1;
      const float ym = (y0 + y1) * 0.5f;
      const bool mouse_in_row = mouse_in_lanes && mouse.y >= y0 && mouse.y < y1 + 1;
      float text_end_x = -1e9f;  // labels in a row never overlap
      auto label = [&](float x0, float x1, const std::string& text, ImU32 colour) {
        // Text taller than its row would be cut in half: none at all reads better.
        if (x1 - x0 < kLabelMinWidthPx || x0 < text_end_x || row_h < line_h * 0.9f) return;
        float left = std::max(x0, plot_x0) + 2;
        // A little short of the item's end, so that labels of adjacent items do not run on.
        ImVec4 clip(left, y0, std::min(x1, plot_x1) - 4, y1);
        dl->AddText(nullptr, 0, ImVec2(left, ym - line_h * 0.5f), colour, text.data(),
                    text.data() + std::min<size_t>(text.size(), 200), 0, &clip);
        text_end_x = x1;
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
            if (fx1 - fx0 >= kLabelMinWidthPx) {
              std::string count_text = std::to_string(count);
              label(fx0, fx1, count_text, palette.item_text);
            }
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
          const float s = std::min(row_h * 0.42f, 6.5f * scale);
          const ImVec2 c(x0, ym);
          draw_mark_shape(dl, item.kind, c, s, palette, 2.5f * scale);
          shown[item.kind == ItemKind::error     ? kShownError
                : item.kind == ItemKind::accept  ? kShownAccept
                : item.kind == ItemKind::reject  ? kShownReject
                : item.kind == ItemKind::lost    ? kShownLost
                : item.kind == ItemKind::expired ? kShownExpired
                                                 : kShownFault] = true;
          if ((item.kind == ItemKind::accept || item.kind == ItemKind::reject) &&
              item.begin_event >= 0 && static_cast<size_t>(item.begin_event) < trace.size()) {
            // The fence is the point of the lane.
            if (const int64_t* f = trace.events()[item.begin_event].num(F::fence)) {
              std::string fence = "fence=" + std::to_string(*f);
              float w = ImGui::CalcTextSize(fence.c_str()).x;
              if (x0 + s + 2 > text_end_x) {
                dl->AddText(ImVec2(x0 + s + 2, ym - line_h * 0.5f), palette.label_text,
                            fence.c_str());
                text_end_x = x0 + s + 4 + w;
              }
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
          switch (item.kind) {
            case ItemKind::command:
              colour = (item.flags & kItemErrorReply) ? palette.command_error : palette.command;
              shown[(item.flags & kItemErrorReply) ? kShownErrorReply : kShownCommand] = true;
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
              top = y0 + row_h * 0.25f;
              bottom = y1 - row_h * 0.25f;
              if (sx1 - sx0 >= kLabelMinWidthPx) text = "pool wait";
              break;
            case ItemKind::work:
            case ItemKind::sleep:
              colour = item.kind == ItemKind::work ? palette.work : palette.sleep;
              shown[item.kind == ItemKind::work ? kShownWork : kShownSleep] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx)
                // Its planned running time (a pause of the host makes the bar longer).
                text = std::string(item.kind == ItemKind::work ? "work " : "sleep ") +
                       scenario::format_time(item.begin_event >= 0
                                                 ? trace.events()[item.begin_event].num_or(
                                                       F::duration_us, item_to - item.from_us)
                                                 : item_to - item.from_us);
              break;
            case ItemKind::gap:
              colour = palette.gap;
              shown[kShownGap] = true;
              if (sx1 - sx0 >= kLabelMinWidthPx) text = "disconnected";
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
            if (item.owner >= 0 && static_cast<size_t>(item.owner) < model.lanes().size())
              text = "key of " + model.lanes()[item.owner].name;
            else if (item.begin_event >= 0)
              text = std::string(trace.events()[item.begin_event].str_or(F::value));
          } else if (item.kind == ItemKind::hold) {
            // Held past the TTL: the holder still believes, the key is gone (or someone else's).
            TimeUs deadline = item.deadline_us > 0 && item.ttl_us > 0 ? item.deadline_us : item_to;
            float xd = clamp_x(xf(std::min(deadline, item_to)));
            dl->AddRectFilled(ImVec2(sx0, top), ImVec2(std::max(xd, sx0), bottom), colour);
            if (deadline < item_to) {
              dl->AddRectFilled(ImVec2(xd, top), ImVec2(sx1, bottom), with_alpha(colour, 90));
              for (float hx = xd - std::fmod(xd - plot_x0, 8.0f); hx < sx1; hx += 8)
                if (hx >= xd)
                  dl->AddLine(ImVec2(hx, bottom), ImVec2(std::min(hx + (bottom - top), sx1), top),
                              colour, 1.5f);
              dl->AddRect(ImVec2(xd, top), ImVec2(sx1, bottom), palette.error, 0, 0, 1.5f);
            }
            if (item.begin_event >= 0)
              text = "holds " + std::string(trace.events()[item.begin_event].str_or(F::lock));
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
  }

  // ---- Pauses again, over the rows: the work a pause interrupts stops under it ----
  // (The band behind the lane shows the whole lane stopped; drawn only behind, a work bar ran
  // straight through a 15 s pause as if the holder went on working.)
  for (const DrawRecord::Pause& p : rec.pauses) {
    const float x0 = p.min.x, x1 = p.max.x, top = p.min.y, bottom = p.max.y;
    dl->AddRectFilled(ImVec2(x0, top + 1), ImVec2(x1, bottom - 1), palette.pause_veil);
    // Hatched, so it reads as "stopped" in grey scale too, not only by its colour.
    const float step = 8 * scale;
    dl->PushClipRect(ImVec2(x0, top), ImVec2(x1, bottom), true);
    for (float x = x0 - (bottom - top); x < x1; x += step)
      dl->AddLine(ImVec2(x, bottom), ImVec2(x + (bottom - top), top), palette.pause_hatch,
                  1.0f * scale);
    const char* word = "paused";
    const ImVec2 size = ImGui::CalcTextSize(word);
    if (x1 - x0 > size.x + 8 * scale)
      dl->AddText(ImVec2(x0 + 4 * scale, top + (bottom - top - size.y) * 0.5f), palette.pause_text,
                  word);
    dl->PopClipRect();
  }

  // ---- Arrows: publisher -> each receiver, or -> a lost mark ----
  {
    const auto& arrows = model.arrows();
    const auto& reach = model.arrow_max_to_us();
    size_t a =
        static_cast<size_t>(std::lower_bound(reach.begin(), reach.end(), from_us) - reach.begin());
    // Arrows that would land on the same pixels as the last one drawn to the same lane (and of
    // the same kind) add nothing to the picture: skipped, so dense traces stay cheap.
    std::vector<std::pair<int, int>> last_px(model.lanes().size() * 2, {-1000000, -1000000});
    int64_t drawn = 0;
    for (; a < arrows.size() && drawn < kArrowsPerFrameMax; a++) {
      const Arrow& arrow = arrows[a];
      if (arrow.from_us > cull_to_us) break;
      if (arrow.to_us < from_us) continue;
      // A message still on its way has not arrived anywhere yet.
      if (hide_future && arrow.to_us > horizon_us) continue;
      if (arrow.from_lane < 0 || arrow.to_lane < 0) continue;
      const auto& fr = row_y[arrow.from_lane];
      const auto& tr = row_y[arrow.to_lane];
      if (arrow.from_row >= static_cast<int>(fr.size()) ||
          arrow.to_row >= static_cast<int>(tr.size()))
        continue;
      float fy = fr[arrow.from_row] + row_h * 0.5f, ty = tr[arrow.to_row] + row_h * 0.5f;
      if (fy >= lanes_y1 || ty >= lanes_y1) continue;
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
        const float s = std::min(row_h * 0.45f, 7.0f * scale);
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

  // ---- Violation markers: a red label and the span's bar on every lane concerned ----
  // On top of the rows: the moment of failure must not hide under a busy row. Per lane the
  // markers go left to right and each label is elided to end before the next one starts.
  const ViolationRegion* hover_marker = nullptr;
  {
    const auto& violations = model.violations();
    std::vector<std::vector<size_t>> by_lane(model.lanes().size());
    for (size_t vi : model.violations_by_start()) {  // so each lane's list is in time order
      const ViolationRegion& v = violations[vi];
      if (v.to_us < from_us || v.from_us > cull_to_us) continue;
      for (const std::string& who : v.who)
        if (int li = model.lane_index(who); li >= 0) by_lane[static_cast<size_t>(li)].push_back(vi);
      for (size_t li = 0; li < model.lanes().size(); li++)
        if (model.lanes()[li].kind == LaneKind::server) by_lane[li].push_back(vi);
    }
    const float pad_px = 3 * scale;
    for (size_t li = 0; li < by_lane.size(); li++) {
      std::vector<size_t>& list = by_lane[li];
      if (list.empty() || lane_y[li].first >= lanes_y1) continue;
      list.erase(std::unique(list.begin(), list.end()), list.end());
      const float top = lane_y[li].first + 1;
      const float bottom = std::min(lane_y[li].second, lanes_y1) - 1;
      const float label_h = std::min(line_h + 2 * scale, bottom - top);
      float used_to_x = plot_x0 - 1e6f;  // right end of this lane's last label
      for (size_t k = 0; k < list.size(); k++) {
        const ViolationRegion& v = violations[list[k]];
        const float x0 = std::max(xf(v.from_us), plot_x0);
        const float x1 = std::max(std::min(xf(v.to_us), plot_x1), x0 + 3 * scale);
        const float bar_h = std::max(3 * scale, 2.0f);
        dl->AddRectFilled(ImVec2(x0, bottom - bar_h), ImVec2(x1, bottom), palette.violation_border);
        dl->AddLine(ImVec2(x0, top), ImVec2(x0, bottom), palette.violation_border, 2 * scale);
        // The label: from x0 (or just after the previous label) to the next marker's start.
        // A marker whose start is under the previous label gets none (its text is on hover
        // and on its other lanes) rather than a label far from its moment.
        const float start_x = std::max(x0, used_to_x + pad_px);
        const bool room = start_x <= x0 + 4 * pad_px;
        float room_x = plot_x1;
        for (size_t m = k + 1; m < list.size(); m++) {
          float next_x = xf(violations[list[m]].from_us);
          if (next_x > start_x + 2 * pad_px) {
            room_x = std::min(room_x, next_x - pad_px);
            break;
          }
        }
        std::string label =
            room ? elided(v.text_at(words_at_us), room_x - start_x - 2 * pad_px) : "";
        if (room && label.empty()) label = "!";
        const float w = ImGui::CalcTextSize(label.c_str()).x + 2 * pad_px;
        ImVec2 a(start_x, top), b(start_x + w, top + label_h);
        if (!room) {  // the bar is the marker
          a = ImVec2(x0, bottom - bar_h);
          b = ImVec2(x1, bottom);
        } else {
          // The label is about something that has begun: it is not cut at the horizon.
          dl->PushClipRect(ImVec2(plot_x0, lanes_y0), ImVec2(plot_x1 + 2, lanes_y1), false);
          dl->AddRectFilled(a, b, palette.violation_border, 2 * scale);
          dl->AddText(ImVec2(a.x + pad_px, a.y + (label_h - line_h) * 0.5f), palette.marker_text,
                      label.c_str());
          if (selected_event >= 0 && v.event == selected_event)
            dl->AddRect(ImVec2(a.x - 2, a.y - 1), ImVec2(b.x + 2, b.y + 1), palette.selection, 0, 0,
                        2 * scale);
          dl->PopClipRect();
          used_to_x = b.x;
        }
        rec.markers.push_back({a, b, model.lanes()[li].name, label, v.check, v.event, v.from_us,
                               v.to_us, is_future(v.from_us)});
        drawn_from(v.from_us);
        if (mouse_in_lanes &&
            ((mouse.x >= a.x && mouse.x <= b.x && mouse.y >= a.y && mouse.y <= b.y) ||
             (mouse.x >= x0 - 2 && mouse.x <= x1 + 2 && mouse.y >= bottom - bar_h - 2 &&
              mouse.y <= bottom + 1)))
          hover_marker = &v;
      }
    }
  }

  if (hide_future) {
    dl->PopClipRect();
  } else if (limited && horizon_x < plot_x1) {
    dl->AddRectFilled(ImVec2(horizon_x, lanes_y0), ImVec2(plot_x1 + 2, lanes_y1),
                      palette.future_veil);
  }

  // ---- Lane labels (over the plot's left edge) ----
  dl->AddRectFilled(ImVec2(origin.x, lanes_y0), ImVec2(plot_x0, lanes_y1),
                    palette.ruler_background);
  for (int li : order) {
    const Lane& lane = model.lanes()[li];
    auto [top, bottom] = lane_y[li];
    if (top >= lanes_y1) break;
    ImVec4 clip(origin.x, top, plot_x0 - 2, std::min(bottom, lanes_y1));
    std::string name = lane.kind == LaneKind::server     ? "[" + lane.name + "]"
                       : lane.kind == LaneKind::resource ? "<" + lane.name + ">"
                                                         : lane.name;
    dl->AddText(nullptr, 0, ImVec2(origin.x + 4, top + kLanePadPx), palette.label_text,
                name.c_str(), nullptr, 0, &clip);
    // A real server's lane says whose view it is: over its first row (where a fake server's
    // own events would be), since the name column has no room for it.
    if (!lane.caption.empty())
      dl->AddText(ImVec2(plot_x0 + 6, top + kLanePadPx + (row_h - line_h) * 0.5f),
                  with_alpha(palette.label_text, 200), lane.caption.c_str());
    // Row labels when there is room beside the name: small and muted.
    if (row_h >= line_h) {
      for (size_t r = 1; r < lane.rows.size(); r++) {
        float y = row_y[li][r];
        if (y + row_h > lanes_y1) break;
        const std::string& text = lane.rows[r].label;
        float w = ImGui::CalcTextSize(text.c_str()).x;
        dl->AddText(nullptr, 0, ImVec2(plot_x0 - 4 - w, y + (row_h - line_h) * 0.5f),
                    with_alpha(palette.label_text, 150), text.c_str(), nullptr, 0, &clip);
      }
    }
    dl->AddLine(ImVec2(origin.x, bottom), ImVec2(area_max.x, bottom), palette.lane_separator);
  }

  // ---- Ruler: ticks, labels, notes, and the playhead's handle ----
  dl->AddRectFilled(ImVec2(origin.x, origin.y), ImVec2(area_max.x, lanes_y0),
                    palette.ruler_background);
  // Where the future is hidden, the ruler says so (the lanes there may carry markers' labels):
  // the question the teacher asks, and the key that answers it. No tick label under it.
  const char* next_text = "what happens next?  (V reveals)";
  const ImVec2 next_size = ImGui::CalcTextSize(next_text);
  const float next_x = horizon_x + 10 * scale;
  const bool next_shown = hide_future && plot_x1 - next_x > next_size.x + 8;
  auto under_next = [&](float x0, float x1) {
    return next_shown && x1 > next_x - 6 && x0 < next_x + next_size.x + 6;
  };
  {
    TimeUs step = nice_step(90.0 / px_per_us);
    TimeUs first = (from_us / step) * step;
    if (first < from_us) first += step;
    for (TimeUs t = first, guard = 0; t <= to_us && guard < 200; t += step, guard++) {
      float x = xf(t);
      dl->AddLine(ImVec2(x, lanes_y0 - 6), ImVec2(x, lanes_y0), palette.ruler_tick);
      dl->AddLine(ImVec2(x, lanes_y0), ImVec2(x, lanes_y1), with_alpha(palette.ruler_tick, 30));
      std::string text = time_text(t);
      if (!under_next(x + 2, x + 2 + ImGui::CalcTextSize(text.c_str()).x))
        dl->AddText(ImVec2(x + 2, origin.y + 2), palette.label_text, text.c_str());
    }
    for (const Note& note : model.notes()) {
      if (note.time_us < from_us || note.time_us > cull_to_us) continue;
      float x = xf(note.time_us);
      dl->AddTriangleFilled(ImVec2(x - 4, lanes_y0 - 7), ImVec2(x + 4, lanes_y0 - 7),
                            ImVec2(x, lanes_y0), palette.note);
      if (hovered && std::fabs(mouse.x - x) <= 5 && mouse.y >= lanes_y0 - 9 && mouse.y <= lanes_y0)
        hover_note = &note;
    }
  }
  if (next_shown)
    dl->AddText(ImVec2(next_x, origin.y + (ruler_height_px - next_size.y) * 0.5f),
                palette.future_text, next_text);
  if (playhead_us >= from_us && playhead_us <= to_us) {
    float x = xf(playhead_us);
    dl->AddLine(ImVec2(x, origin.y), ImVec2(x, lanes_y1), palette.playhead, 2 * scale);
    dl->AddTriangleFilled(ImVec2(x - 6 * scale, origin.y), ImVec2(x + 6 * scale, origin.y),
                          ImVec2(x, origin.y + 8 * scale), palette.playhead);
  }

  // ---- Legend: what this frame drew, with its shapes, wrapped onto as many lines as needed ----
  rec.legend.clear();
  if (show_legend) {
    const float swatch_px = std::max(line_h * 0.8f, 10.0f);
    const float gap_px = 12 * scale;
    float x = origin.x + 4, y = lanes_y1 + 2;
    int lines = 1;
    for (int k = 0; k < kShownCount; k++) {
      if (!shown[k]) continue;
      const char* name = kShownNames[k];
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
      };
      static constexpr MarkSwatch kMarkSwatches[] = {
          {kShownError, ItemKind::error, 0.9f},     {kShownAccept, ItemKind::accept, 0.8f},
          {kShownReject, ItemKind::reject, 0.8f},   {kShownLost, ItemKind::lost, 0.85f},
          {kShownExpired, ItemKind::expired, 0.9f}, {kShownFault, ItemKind::fault, 0.9f}};
      const MarkSwatch* mark_swatch = nullptr;
      for (const MarkSwatch& m : kMarkSwatches)
        if (m.shown == k) mark_swatch = &m;
      if (mark_swatch)
        draw_mark_shape(dl, mark_swatch->kind, c, h * mark_swatch->size, palette, 2.5f * scale);
      else
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
          default: {  // a span: a bar in its colour
            const ImU32 colours[] = {palette.command,   palette.command_error,
                                     palette.pool_wait, palette.work,
                                     palette.sleep,     palette.locks[0],
                                     palette.served,    with_alpha(palette.pause, 160),
                                     palette.gap};
            const ImU32 colour = k == kShownFolded ? palette.fold : colours[std::min(k, 8)];
            dl->AddRectFilled(ImVec2(c.x - h, c.y - h * 0.6f), ImVec2(c.x + h, c.y + h * 0.6f),
                              colour);
            break;
          }
        }
      dl->AddText(ImVec2(x + swatch_px + 4, y), palette.label_text, name);
      rec.legend.push_back({name, ImVec2(x, y), ImVec2(x + w, y + line_h)});
      x += w + gap_px;
    }
    legend_lines_ = lines;
  }
  dl->PopClipRect();

  // ---- Hover, tooltip, selection ----
  if (hover_item) hovered_event = hover_item->begin_event;
  if (hover_marker) {  // a marker is on top of everything under it
    hover_item = nullptr;
    hover_fold_count = 0;
    hover_region = hover_marker;
    hovered_event = hover_marker->event;
  }
  if (hovered && !active) {
    if (hover_fold_count > 0) {
      ImGui::SetTooltip("%lld items between %s and %s\nzoom in to see them",
                        static_cast<long long>(hover_fold_count),
                        time_text(hover_fold_from_us).c_str(), time_text(hover_fold_to_us).c_str());
    } else if (hover_item || hovered_event >= 0 || hover_region || hover_note) {
      ImGui::BeginTooltip();
      if (hover_item && hover_item->begin_event >= 0 &&
          static_cast<size_t>(hover_item->begin_event) < trace.size()) {
        const Item& item = *hover_item;
        const TraceEvent& e = trace.events()[item.begin_event];
        ImGui::Text("%s  at %s", item_kind_name(item.kind), time_text(item.from_us).c_str());
        const std::string summary = event_summary(e);
        ImGui::Text("%s%s%s", e.actor.c_str(), summary.empty() ? "" : ": ", summary.c_str());
        if (e.connection >= 0) ImGui::Text("connection %lld", static_cast<long long>(e.connection));
        if (e.step >= 0 || e.attempt >= 0)
          ImGui::Text("step %lld, attempt %lld", static_cast<long long>(e.step),
                      static_cast<long long>(e.attempt));
        if (item.end_event >= 0 && static_cast<size_t>(item.end_event) < trace.size()) {
          const TraceEvent& end = trace.events()[item.end_event];
          ImGui::Text("%s: %s", end.kind.c_str(), event_summary(end).c_str());
          ImGui::Text("took %s", time_text(item.to_us - item.from_us).c_str());
        } else if (item.kind == ItemKind::served && !item.open()) {
          ImGui::Text("busy for %s", time_text(item.to_us - item.from_us).c_str());
        } else if (item.open()) {
          ImGui::TextUnformatted("still open");
        }
        if (item.kind == ItemKind::ttl && item.ttl_us > 0) {
          ImGui::Text("TTL %s, reaches 0 at %s (the server's clock)",
                      time_text(item.ttl_us).c_str(), time_text(item.deadline_us).c_str());
          if (item.owner >= 0 && static_cast<size_t>(item.owner) < model.lanes().size())
            ImGui::Text("set by %s", model.lanes()[item.owner].name.c_str());
        } else if (item.kind == ItemKind::hold && item.ttl_us > 0) {
          ImGui::Text("TTL %s, the holder counts on it until %s", time_text(item.ttl_us).c_str(),
                      time_text(item.deadline_us).c_str());
          TimeUs item_to = item.open() ? end_us : item.to_us;
          if (item.kind == ItemKind::hold && item_to > item.deadline_us)
            ImGui::Text("held %s past the TTL: the key was no longer its own",
                        time_text(item_to - item.deadline_us).c_str());
          if (item.flags & kItemForeignEnd)
            ImGui::TextUnformatted("deleted by someone who did not hold it");
        }
      } else if (!hover_marker && hovered_event >= 0 &&
                 static_cast<size_t>(hovered_event) < trace.size()) {
        const TraceEvent& e = trace.events()[hovered_event];
        ImGui::Text("message lost: %s published %s at %s", e.actor.c_str(),
                    event_summary(e).c_str(), time_text(e.time_us).c_str());
        ImGui::TextUnformatted("the subscriber was not connected (or its buffer was dropped)");
      }
      if (hover_region) {
        if (hover_item || (!hover_marker && hovered_event >= 0)) ImGui::Separator();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette.violation_border), "%s violated",
                           hover_region->check.c_str());
        ImGui::TextUnformatted(hover_region->text_at(words_at_us).c_str());
        if (hover_region->to_us <= words_at_us)
          ImGui::Text("from %s to %s", time_text(hover_region->from_us).c_str(),
                      time_text(hover_region->to_us).c_str());
        else
          ImGui::Text("from %s", time_text(hover_region->from_us).c_str());
      }
      if (hover_note) {
        ImGui::Text("%s %s", time_text(hover_note->time_us).c_str(), hover_note->text.c_str());
      }
      ImGui::EndTooltip();
    }
  }
  if (released && !scrubbing_ && !panned_) selected_event = hovered_event;
  if (released) scrubbing_ = false;
}

}  // namespace redlab::gui
