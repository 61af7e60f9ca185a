// The timeline view: draws a TimelineModel with Dear ImGui into the current window.
//
// Prepare then draw (Tracy): for every row the visible time range is found by binary search
// (Row::first_reaching), items narrower than fold_px are folded into one counted mark, and
// only then are rectangles emitted, so a 1,000,000-event trace costs about as much per frame
// as the number of pixels across, not the number of events. The view state (range,
// playhead, selection) lives here, apart from the model; the model knows nothing of pixels.
//
// Tests and the app shell read `last_draw`: what was drawn where, the time->x mapping, and
// the screen rectangles of the violation regions and their labelled markers.
//
// Time as a class experiences it: with horizon_us set (the playhead), nothing that begins
// after it is drawn and what runs across it is cut there, so a paused playhead asks "what
// happens next?" without showing the answer; future_faint draws the future under a veil.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/strings.h"
#include "app/gui/timeline_model.h"
#include "app/gui/verdict_words.h"
#include "sim/core/trace.h"

namespace redlab::gui {

// Colours of the timeline. The defaults are mid-saturation fills with dark text on them, so
// they read on ImGui's dark and light styles alike; the app shell may replace them (e.g. a
// projector theme). The marks that say something went wrong differ in hue (Okabe-Ito's
// colour-blind-safe vermillion, purple and blue, and red for a violation) and in shape too:
// error a triangle, rejected a cross, lost a slashed circle, violation a labelled bar.
struct TimelinePalette {
  ImU32 background = IM_COL32(128, 128, 128, 24);
  ImU32 lane_alternate = IM_COL32(128, 128, 128, 18);
  ImU32 lane_separator = IM_COL32(128, 128, 128, 90);
  ImU32 label_text = IM_COL32(128, 128, 128, 255);  // lane names (on either style)
  ImU32 item_text = IM_COL32(20, 20, 20, 255);      // text drawn on filled items
  ImU32 ruler_background = IM_COL32(128, 128, 128, 40);
  ImU32 ruler_tick = IM_COL32(128, 128, 128, 200);
  ImU32 command = IM_COL32(86, 156, 214, 255);
  ImU32 command_error = IM_COL32(232, 96, 72, 255);
  ImU32 served = IM_COL32(120, 120, 200, 255);  // the server busy with a command or script
  ImU32 pool_wait = IM_COL32(230, 180, 60, 255);
  ImU32 work = IM_COL32(120, 190, 120, 255);
  ImU32 sleep = IM_COL32(160, 160, 200, 255);
  ImU32 pause = IM_COL32(150, 90, 200, 70);        // a band behind the whole lane
  ImU32 pause_veil = IM_COL32(150, 90, 200, 150);  // the same, over the lane's rows
  ImU32 busy = IM_COL32(110, 110, 130, 45);        // the server busy: behind every lane
  ImU32 busy_edge = IM_COL32(90, 90, 110, 160);
  ImU32 pause_hatch = IM_COL32(90, 40, 140, 170);  // its stripes
  ImU32 pause_text = IM_COL32(40, 10, 70, 255);    // "paused"
  ImU32 gap = IM_COL32(200, 80, 80, 90);
  ImU32 error = IM_COL32(213, 94, 0, 255);     // vermillion, a triangle
  ImU32 accept = IM_COL32(0, 158, 115, 255);   // bluish green, a disc
  ImU32 reject = IM_COL32(170, 51, 119, 255);  // purple, a cross
  ImU32 lost = IM_COL32(0, 114, 178, 255);     // blue, a slashed circle
  ImU32 expired = IM_COL32(240, 140, 0, 255);
  ImU32 fault = IM_COL32(150, 90, 200, 255);
  // An error the client recovered from: Okabe-Ito's orange, drawn hollow or hatched, never the
  // filled vermillion of a failure.
  ImU32 recovered = IM_COL32(230, 159, 0, 255);
  ImU32 restart = IM_COL32(60, 60, 70, 255);  // a server restart: a bar across its lane
  ImU32 cut = IM_COL32(213, 94, 0, 255);      // a client cut by the server: a broken link
  ImU32 fold = IM_COL32(128, 128, 128, 200);
  ImU32 arrow = IM_COL32(60, 130, 200, 220);
  ImU32 arrow_lost = IM_COL32(0, 114, 178, 220);
  ImU32 violation = IM_COL32(255, 40, 40, 45);
  ImU32 violation_border = IM_COL32(255, 40, 40, 200);
  ImU32 playhead = IM_COL32(255, 120, 0, 255);
  ImU32 selection = IM_COL32(255, 200, 0, 255);
  ImU32 note = IM_COL32(60, 160, 160, 255);
  ImU32 future_veil = IM_COL32(255, 255, 255, 190);  // over the future when it is shown faint
  ImU32 future_text = IM_COL32(90, 90, 100, 255);    // "what happens next?" over the hidden part
  ImU32 marker_text = IM_COL32(255, 255, 255, 255);  // on a violation's red label
  // Holds and TTL bars: one colour per lock (TimelineModel::locks() order, cycled).
  ImU32 locks[6] = {IM_COL32(236, 132, 60, 255),  IM_COL32(200, 100, 190, 255),
                    IM_COL32(60, 170, 170, 255),  IM_COL32(170, 150, 60, 255),
                    IM_COL32(110, 130, 230, 255), IM_COL32(190, 90, 90, 255)};
};

// What the last draw() did, for tests and the app shell.
struct DrawRecord {
  int64_t items_drawn = 0;   // spans and marks drawn one by one
  int64_t items_folded = 0;  // items hidden inside fold marks
  int64_t folds_drawn = 0;   // fold marks drawn
  int64_t arrows_drawn = 0;
  int64_t lost_drawn = 0;  // lost-message marks
  struct Region {
    ImVec2 min, max;
    std::string text;     // the reason
    std::string check;    // the check's name
    int64_t event = -1;   // the violation event
    bool future = false;  // after the horizon, drawn faint
  };
  std::vector<Region> violations;
  // A violation's marker on one lane it concerns (its actors' lanes and one server lane):
  // the label (the violation's text, elided to the room before the lane's next marker; ""
  // when there is none) and the bar under the span it covers.
  struct Marker {
    ImVec2 min, max;  // the label ("!" if no letter fits), or the bar when the label has no room
    std::string lane;
    std::string label;  // as drawn
    std::string check;
    int64_t event = -1;
    TimeUs from_us = 0, to_us = 0;
    bool future = false;
  };
  std::vector<Marker> markers;
  // A pause (or a server's stall) drawn behind its lane and again over its rows (so a work
  // bar it interrupts stops under it).
  struct Pause {
    ImVec2 min, max;
    std::string lane;
    TimeUs from_us = 0;
  };
  std::vector<Pause> pauses;
  // The server busy with one long command (TimelineModel::busy), across every lane.
  struct Busy {
    ImVec2 min, max;
    TimeUs from_us = 0, to_us = 0;
  };
  std::vector<Busy> busy;
  // The latest start of anything drawn in the lanes (items, folds, bands, arrows, violation
  // regions and markers); -1 if nothing. With the future hidden it never passes the horizon.
  TimeUs latest_from_us = -1;
  struct LaneRect {
    std::string name;
    std::string caption;        // "as seen by clients" on a real server's lane (as drawn)
    ImVec2 min, max;            // on screen (clipped to its region); empty if scrolled out of view
    bool folded = false;        // drawn on one row (itself, or its group)
    bool pinned = false;        // a server or resource lane: always in view, below the actors
    std::string group;          // the group it belongs to ("buyer" for buyer1..buyer20), or ""
    std::vector<float> rows_y;  // each row's top on screen (a folded lane: all the same)
    float row_h = 0;
  };
  std::vector<LaneRect> lanes;
  // Groups of actors with one name and instance numbers (buyer1..buyer20): a header row that
  // folds them all onto one row.
  struct GroupRect {
    std::string name;
    int members = 0;
    bool folded = false;
    ImVec2 min, max;  // the header (the folded row when folded)
  };
  std::vector<GroupRect> groups;
  // Labels drawn on the lanes (items, fences, marks, markers): their rectangles never overlap.
  struct Label {
    ImVec2 min, max;
    std::string text;
  };
  std::vector<Label> labels;
  // Every text drawn on the timeline (names, labels, the ruler, the legend), when
  // TimelineView::record_texts is on (tests: no English word on a Russian screen).
  std::vector<std::string> texts;
  // The actor lanes scroll when they do not fit; the server and resource lanes stay.
  float scroll_px = 0, scroll_max_px = 0;
  ImVec2 actors_min, actors_max;  // the scrolling region
  ImVec2 names_min, names_max;    // the name column
  // The legend: only what this frame drew, each with its colour and shape, wrapped.
  struct LegendEntry {
    std::string name;
    ImVec2 min, max;
  };
  std::vector<LegendEntry> legend;
  ImVec2 ruler_min, ruler_max;
  ImVec2 area_min, area_max;  // the whole timeline
  // The time->x mapping: x = x0 + (t - from_us) * px_per_us.
  float x0 = 0;
  double px_per_us = 0;
  TimeUs from_us = 0, to_us = 0;
};

struct TimelineView {
  // ---- View state (the app shell reads and writes these) ----
  TimeUs view_from_us = 0;
  TimeUs view_to_us = kUsPerSecond;
  TimeUs playhead_us = 0;
  bool follow = false;            // keep the playhead in view while a run grows
  int64_t selected_event = -1;    // index into trace.events(), -1: none
  int64_t hovered_event = -1;     // set by draw(): what the mouse is over, -1: nothing
  bool playhead_changed = false;  // set by draw() when the user scrubbed this frame
  // Nothing that begins after horizon_us is drawn (kTimeNeverUs: everything is), unless
  // future_faint, which draws it under palette.future_veil.
  TimeUs horizon_us = kTimeNeverUs;
  bool future_faint = false;

  // Folded lanes and groups, as the user chose them (by lane / group name). A lane not named
  // here follows the fit: lanes of a group fold when the actors would not fit unfolded.
  std::map<std::string, bool> lane_folded;
  std::map<std::string, bool> group_folded;
  float scroll_px = 0;  // the actor lanes' vertical scroll
  // A lane to scroll into view at the next draw (a violation's actor, the selected actor).
  std::string scroll_to_lane;

  // ---- Words ----
  Lang lang = Lang::en;
  // A violation's words (model().violations() index) as of a time; the app supplies them in
  // its language from verdict_words. Unset: the violation's own text.
  std::function<ViolationWords(size_t violation, TimeUs words_at_us)> words;
  // A check's name as the screen shows it (check_title); unset: the name.
  std::function<std::string(const std::string& check)> check_title;

  // ---- Style ----
  TimelinePalette palette;
  float label_width_px = 110;
  // Rows are as high as fits between these (readable, and no higher than useful); below the
  // lowest the lanes fold and then scroll.
  float row_height_px = 18;  // the readable minimum
  float row_height_max_px = 36;
  float ruler_height_px = 24;
  float fold_px = 3;  // items narrower than this fold into one counted mark
  float scale = 1;    // marks, lines and markers grow with it (large type)
  bool show_legend = true;
  bool record_texts = false;  // keep every text drawn in last_draw.texts (tests)
  // The narrowest range a zoom may reach, and the margin fit() leaves around the trace.
  TimeUs min_range_us = 10;

  DrawRecord last_draw;

  // Shows the whole trace (0 .. end_us, at least 1 s).
  void fit(const TimelineModel& model);
  // Draws into the current window at the cursor, using size (0 or negative: the available
  // space in that direction), handles zoom, pan, scrubbing, hover and selection.
  void draw(const TimelineModel& model, const Trace& trace, ImVec2 size);
  // Zooms by factor (> 1: in) keeping the time under screen x where it is.
  void zoom_at(float x, float factor, const TimelineModel& model);

  // Screen x of time t and back, with the mapping of the last draw().
  float x_of(TimeUs t) const;
  TimeUs t_of(float x) const;
  // Folds (or unfolds) a lane or a group, as a click on its name does.
  void toggle_lane(const std::string& name);
  void toggle_group(const std::string& name);
  // The group an actor's name belongs to: its name without the instance number ("buyer" for
  // "buyer12"); "" for a name without one.
  static std::string group_of(const std::string& actor);

 private:
  void clamp_range(const TimelineModel& model);
  void handle_input(const TimelineModel& model, bool hovered, bool active);
  int legend_lines_ = 1;          // the last frame's, for the room below the lanes
  bool scroll_dragging_ = false;  // the current drag started on the scrollbar
  bool scrubbing_ = false;        // the current drag started in the ruler
  bool panned_ = false;           // the current press moved the view: not a click
  float plot_width_px_ = 0;       // for zoom before the first draw
};

}  // namespace redlab::gui
