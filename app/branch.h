// Branch files: a what-if branch of a run, saved small so it reopens exactly. A branch is the
// inputs of one fake run (the scenario, its parameters and variants, the seed, the language
// the run's words are in, replaced scripts) plus the interventions added on top of it
// (sim/scenario/intervention.h). A fake run is a pure function of these, so `redlab run
// BRANCH.json` and `redlab gui BRANCH.json` give the run the GUI saved, byte for byte.
//
//   {"format": "redlab-branch", "version": 1, "scenario": "ttl-double-holder", "seed": 1,
//    "lang": "en", "variant": {"watchdog": "on"}, "params": {"ttl_ms": 10000},
//    "interventions": ["pause A at 3000 for 14000"], "scripts": {"release": "..."}}
//
// docs: scenarios/README.md, "Branch files". A bad file is one located line
// (FILE:LINE:COLUMN: what is wrong); what the inputs mean (a variant's value, an
// intervention's words) is checked where the same inputs from the command line are.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace redlab::app {

inline constexpr const char* kBranchFormat = "redlab-branch";
inline constexpr int64_t kBranchVersion = 1;

struct Branch {
  // A scenario id from the library, or a path (relative paths are read from the branch
  // file's directory).
  std::string scenario;
  uint64_t seed = 1;
  std::string lang = "en";
  std::map<std::string, std::string> variant;
  std::map<std::string, int64_t> params;
  std::vector<std::string> interventions;      // in the order they are applied
  std::map<std::string, std::string> scripts;  // script name -> the source that replaces it
  bool operator==(const Branch&) const = default;
};

// The file's text (pretty-printed JSON, keys in the order above, a newline at the end).
std::string branch_to_json(const Branch& branch);
// Reads a branch from its text; nullopt and *error ("PATH:LINE:COLUMN: what") if it is not
// one. A relative scenario path is made relative to PATH's directory.
std::optional<Branch> branch_from_json(const std::string& text, const std::string& path,
                                       std::string* error);
// True if the text opens like a branch file ("format": "redlab-branch" near the start).
bool looks_like_branch(const std::string& text);
// Reads and parses a branch file (through app/files: its size limit, a FIFO's deadline).
std::optional<Branch> load_branch(const std::string& path, std::string* error);

}  // namespace redlab::app
