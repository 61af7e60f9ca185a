// The checks' verdicts in the GUI's language: a short label for a violation's marker ("B and C
// both hold lock:job:42", "stale write accepted: fence 33 < 34"), the whole sentence for the
// verdicts and tooltips, and each check's summary.
//
// The trace's violation event carries its check, its span and the actors it is about as typed
// fields, and its sentence as English text (sim/scenario/checks.cpp). The other facts a
// sentence names (the lock, the fences, how many timeouts) are not fields of the violation, so
// they are read here from the typed events of the trace at the violation's moment, through the
// one reader (TraceIndex), never from the text: the lock_acquired that began a double hold,
// the resource_accept that took a stale fence, the pool_timeout events of an actor. The
// English words made from these facts equal the check's own text (tests/gui compares them for
// every violation of every core scenario and variant), which shows the facts are the check's;
// Russian and Czech say the same from the same facts. A violation whose facts cannot be found
// (a check this file does not know yet) keeps the check's English sentence.
//
// Facts are found once per violation (ViolationFacts, cached by the app); words are made from
// them per frame, as of the playhead: a violation still going tells only what has happened.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "app/gui/strings.h"
#include "app/gui/timeline_model.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/scenario.h"

namespace redlab::gui {

// A check's arguments as the run had them (the scenario's, evaluated with the run's
// parameters): the stock of no_oversell, the bound of retries_bounded, ...
struct CheckInfo {
  std::string kind;  // mutual_exclusion, ... ("" if unknown)
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> number;
};

// The check a trace names `name`: its kind (the trace's check event), and when the trace is a
// run of `scenario`, its arguments evaluated with the run's parameters (the trace's meta).
CheckInfo check_info_of(const std::string& name, const TraceIndex& ix,
                        const scenario::Scenario* scenario);

struct ViolationFacts {
  enum class Form : uint8_t {
    generic,  // no facts found: the check's own text
    mutex,
    foreign,
    foreign_unknown,
    foreign_clients,
    release_never,
    release_failed,
    release_wrong,
    acquire,
    script_keys,
    stale,
    stale_same,
    forged,
    lost,
    pool,
    pool_waiting,
    read,
    oversell,
    stock_negative,
    all_sold,
    retries,
    // The forms below say in Russian and Czech what the check's own English text says; their
    // English is the check's text itself (it names more than their facts: the close reasons
    // of dials_within, the error message of no_error_replies, a late call's error).
    answered_late,
    answered_gave_up,
    answered_never,
    interleaved,
    round_trips,
    dials,
    error_replies,
    overwrite,
    rate,
    rate_few,
    recorded,
    together,
    wait_behind,
    stock_went,     // stock_matches_sales at the end: the key's change against the sales
    twice,          // processed_once: a value the resource accepted more than once
    never_event,    // processed_once: the event never processed
    never_entries,  // processed_once: entries of the stream never processed
    key_value,      // key_final: another value
    key_type,       // key_final: another type
    key_expired,    // key_final: absent, it expired (the server's key events)
    key_deleted,    // key_final: absent, it was deleted
    key_never,      // key_final: absent, it never existed
    key_absent,     // key_final: absent on a server whose key events redlab does not see
  };
  Form form = Form::generic;
  std::vector<std::string> s;  // the names, keys, locks, replies the form's words use
  std::vector<int64_t> n;      // its numbers (fences, counts, bounds)
  std::vector<TimeUs> t;       // its times
  // Events counted as they happen (timeouts, attempts): their times and values, so that the
  // words at a horizon count only those before it.
  std::vector<std::pair<TimeUs, int64_t>> counted;
};

ViolationFacts violation_facts(const ViolationRegion& v, const CheckInfo& check,
                               const TraceIndex& ix);

struct ViolationWords {
  std::string label;     // short, for its marker on the lanes
  std::string sentence;  // whole, for the verdicts and tooltips
};
// As of horizon_us (kTimeNeverUs: all of it): a violation still going at the horizon says
// only what has happened.
ViolationWords violation_words(const ViolationRegion& v, const ViolationFacts& facts,
                               TimeUs horizon_us, Lang lang);

// The catalogue's words for a check kind: its title, what "it held" says and the entries its
// violations' sentences and labels are made of. nullptr for a kind this file has no words for
// (tests/gui/strings_test.cpp holds every kind of the check registry to have them, so a new
// check kind cannot reach a Russian or Czech screen in English).
struct CheckKindWords {
  std::string_view kind;
  S title;
  std::vector<S> ok;         // the first, or one per way it can hold (dials_within: of closes)
  std::vector<S> violation;  // its violations' sentences and labels
};
const CheckKindWords* check_kind_words(std::string_view kind);

// A check's name for a screen in `lang`: English keeps the scenario's name (the CLI prints the
// same), Russian and Czech say what the check's kind means ("один владелец за раз").
std::string check_title(const std::string& name, std::string_view kind, Lang lang);

// A check's final summary: its first violation's sentence and how many more, what held, or
// why it was not judged. English keeps the check's own summary (the CLI prints the same).
std::string check_summary_words(const TraceCheck& check, const CheckInfo& info,
                                const std::vector<const ViolationRegion*>& violations,
                                const std::vector<const ViolationFacts*>& facts,
                                const TraceIndex& ix, Lang lang);

}  // namespace redlab::gui
