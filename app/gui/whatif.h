// What-if interventions in the GUI (issue 12): right-click a lane at a moment, choose a fault
// that fits the lane (pause this client, crash it, drop its connections, delay its replies,
// cut it off from a server; jump this server's clock, stall it, restart it), and the fake run
// is redone from the start with it, as `redlab run --fault LINE` would
// (sim/scenario/intervention.h). The run without any intervention (the original) stays drawn
// faintly under the lanes, so what changed stands out: where the two runs agree the new one
// covers the old exactly.
//
// Every edit (add, a changed value, a marker dragged in time, a removal) is one step of an
// undo history of whole intervention lists; a branch (the run's inputs and its interventions)
// saves to a small JSON file that reopens the same run byte for byte (app/branch.h).
//
// The App's side lives in whatif.cpp; this header holds what needs no App: one intervention
// as the GUI edits it, its line and its words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/strings.h"
#include "sim/core/trace.h"
#include "sim/scenario/scenario.h"

namespace redlab::gui {

inline constexpr size_t kUndoStepsMax = 1000;  // kept edits; the oldest go first

// One intervention: a fault kind, whom it hits (an actor or a server), when, and its
// values in ms ("for", "by", "restart_after"). `line` is its text as the engine reads it:
// a line from a branch file is kept as it was written until it is edited.
struct Intervention {
  std::string kind;
  std::string target;
  int64_t at_ms = 0;
  struct Value {
    std::string field;  // without "_ms": for, by, restart_after
    int64_t ms = 0;
    bool operator==(const Value&) const = default;
  };
  std::vector<Value> values;
  std::string on;   // partition: the server the actor is cut off from
  std::string why;  // a hand-written reason (kept)
  std::string line;
  const int64_t* value(const std::string& field) const;
  int64_t* value(const std::string& field);
  bool operator==(const Intervention&) const = default;
};

// The line for the fields above ("pause A at 3000 for 14000").
std::string make_line(const Intervention& iv);
// An intervention with its line made from its fields.
Intervention with_line(Intervention iv);
// Reads a line (as `--fault` does) into its fields; nullopt and *error if it cannot be read.
std::optional<Intervention> parse_intervention(const scenario::Scenario& sc,
                                               const std::string& line, std::string* error);
// Its words in the chosen language ("3.000 s: pause A for 14000 ms").
std::string intervention_words(const Intervention& iv, Lang lang);

// The interventions the context menu offers on a lane, with their values' defaults.
struct InterventionChoice {
  const char* kind;
  S label;
  std::vector<Intervention::Value> values;  // asked for, with their defaults
  bool needs_server = false;                // partition: which server
  bool optional_value = false;              // crash: restart_after only when ticked
};
const std::vector<InterventionChoice>& actor_choices();
const std::vector<InterventionChoice>& server_choices();
// The word for one value's field ("for", "by", "restart after"), in the chosen language.
const char* field_words(const std::string& field, Lang lang);

// A time the user pointed at, rounded to a step that reads well at the current zoom (1, 2 or
// 5 times a power of ten ms, at least a few pixels wide).
int64_t readable_ms(TimeUs t_us, double px_per_us);

}  // namespace redlab::gui
