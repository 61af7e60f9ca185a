// The compare view's state (issue 12, item 3): two runs on one time axis with every
// difference trace_diff finds (sim/core/trace_diff.h) listed and marked. The App draws it and
// runs its commands (compare_view.cpp); this header only holds what it keeps between frames.
//
// A is the run shown when the view compared; B is the same scenario with other variants,
// parameters or seed (a fake run), or a saved trace. Both traces are put on the scenario's
// time axis first (a real run at --time-scale 0.1 is stretched back), so the same moment is the
// same x in both lanes, and both views share one range and one playhead: zooming or scrubbing
// one moves the other. Lanes line up by actor because both runs are of one scenario (its
// actors, in its order); the events trace_diff aligned by actor, step and attempt carry the
// marks of their difference on both.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/strings.h"
#include "app/gui/timeline_model.h"
#include "app/gui/timeline_view.h"
#include "app/gui/verdict_words.h"
#include "sim/core/trace.h"
#include "sim/core/trace_diff.h"

namespace redlab::gui {

// One run of a comparison. Held by pointer: the model refers to its trace.
struct CompareSide {
  Trace trace;  // on the scenario's time axis
  Trace raw;    // as recorded (what trace_diff compares)
  TimelineModel model;
  TimelineView view;
  std::string file;  // the trace file it came from, "" for a run
  std::vector<ViolationFacts> facts;
  std::vector<ViolationWords> words;  // every violation's, in words_lang
  Lang words_lang = Lang(255);
};

struct CompareState {
  bool open = false;
  std::unique_ptr<CompareSide> a, b;  // b: none until the first comparison
  TraceDiff diff;
  TimeUs tolerance_us = 0;
  TimeUs playhead_us = 0;
  TimeUs from_us = 0, to_us = 0;  // the range both views show
  int64_t selected = -1;          // into diff.differences
  bool scroll_to_selected = false;
  // B's choices, as the panel shows them (A's at first).
  std::map<std::string, std::string> variant_b;
  std::map<std::string, int64_t> params_b;
  int64_t seed_b = 1;
  std::string file_b;
};

// `trace` with its times (and its typed durations) put back on the scenario's scale: a real
// run at `time_scale` 0.1 took a tenth of the scenario's time. A fake run comes back as it is.
Trace on_scenario_axis(const Trace& trace);

}  // namespace redlab::gui
