// retries_bounded: how many WATCH attempts a transaction took.
#include <algorithm>
#include <map>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// WATCH transactions: tx_attempt .. its outcome, per actor and step; a run of attempts ends
// with a commit, a skip, an error or tx_gave_up.
CheckResult retries_bounded(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t bound = args.number.at("max_attempts");
  struct Tx {
    std::string actor;
    int64_t step = -1, attempts = 0;
    // The violation is the attempts past the bound: from the first of them to the last (a
    // transaction that starts at 0 is not violated at 0).
    TimeUs over_from_us = -1, last_us = 0;
  };
  std::vector<Tx> txs;
  std::map<std::pair<std::string, int64_t>, size_t> open;  // (actor, step) -> txs index
  int64_t total = 0, aborted = 0, gave_up = 0;
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.kind == "tx_attempt") {
      int64_t n = e.num_or(F::tries, 1);
      auto key = std::make_pair(e.actor, e.step);
      auto it = open.find(key);
      if (n == 1 || it == open.end()) {
        open[key] = txs.size();
        txs.push_back(Tx{e.actor, e.step, 0, -1, e.time_us});
        it = open.find(key);
      }
      Tx& tx = txs[it->second];
      tx.attempts = n;
      tx.last_us = e.time_us;
      if (n > bound && tx.over_from_us < 0) tx.over_from_us = e.time_us;
      total++;
    } else if (e.kind == "tx_aborted") {
      aborted++;
    } else if (e.kind == "tx_gave_up") {
      gave_up++;
    }
  }
  int64_t most = 0;
  std::vector<const Tx*> over;
  for (const Tx& t : txs) {
    most = std::max(most, t.attempts);
    if (t.attempts > bound) over.push_back(&t);
  }
  // The worst first; ties in actor order (stable).
  std::stable_sort(over.begin(), over.end(),
                   [](const Tx* x, const Tx* y) { return x->attempts > y->attempts; });
  for (const Tx* t : over)
    r.violations.push_back(Violation{t->over_from_us,
                                     t->last_us,
                                     {t->actor},
                                     t->actor + " took " + std::to_string(t->attempts) +
                                         " attempts (bound " + std::to_string(bound) + ")"});
  if (txs.empty()) return not_judged("no WATCH transactions, so nothing to retry");
  std::string totals = std::to_string(total) + " attempts by " +
                       plural(txs.size(), "transaction", "transactions") + ", " +
                       std::to_string(aborted) + " EXECs aborted";
  if (gave_up > 0) totals += ", " + std::to_string(gave_up) + " gave up";
  // finish() sorts by time; the worst-first order above is kept for equal times only.
  r.ok = r.violations.empty();
  if (r.ok) {
    r.summary = "at most " + std::to_string(most) + " attempts each (bound " +
                std::to_string(bound) + "); " + totals;
  } else {
    r.summary = r.violations[0].text;
    if (r.violations.size() > 1)
      r.summary += " (+" + std::to_string(r.violations.size() - 1) + " more)";
    r.summary += "; " + totals;
  }
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "max_attempts", .type = FieldType::Count, .required = true, .unit = "attempts"}};

}  // namespace

extern const CheckKind retries_bounded_check;
const CheckKind retries_bounded_check{
    "retries_bounded", kFields,
    "the actors' tx_attempt events: no run of WATCH attempts was longer than max_attempts",
    retries_bounded};

}  // namespace redlab::scenario::checks
