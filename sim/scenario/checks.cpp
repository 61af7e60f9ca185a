#include "sim/scenario/checks.h"

#include <algorithm>
#include <set>

namespace redlab::scenario {

namespace {

std::string arg(const CheckArgs& a, const std::string& k, const std::string& def = {}) {
  auto it = a.text.find(k);
  return it == a.text.end() ? def : it->second;
}

// "a, b and c"
std::string names(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); i++) {
    if (i > 0) out += i + 1 == v.size() ? " and " : ", ";
    out += v[i];
  }
  return out;
}

void finish(CheckResult& r, const std::string& ok_summary, const std::string& more = {}) {
  r.ok = r.violations.empty();
  if (r.ok) {
    r.summary = ok_summary;
  } else {
    r.summary = r.violations[0].text;
    if (r.violations.size() > 1)
      r.summary += " (+" + std::to_string(r.violations.size() - 1) + " more)";
    if (!more.empty()) r.summary += "; " + more;
  }
}

CheckResult mutual_exclusion(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  std::string only = arg(args, "lock");
  size_t n = 0;
  for (size_t i = 0; i < f.holds.size(); i++) {
    const auto& a = f.holds[i];
    if (!only.empty() && a.lock != only) continue;
    n++;
    for (size_t j = i + 1; j < f.holds.size(); j++) {
      const auto& b = f.holds[j];
      if (b.lock != a.lock || b.actor == a.actor) continue;
      TimeUs from = std::max(a.from_us, b.from_us), to = std::min(a.to_us, b.to_us);
      if (to <= from) continue;
      r.violations.push_back(Violation{from,
                                       to,
                                       {a.actor, b.actor},
                                       a.actor + " and " + b.actor + " held " + a.lock +
                                           " together from " + format_time(from) + " to " +
                                           format_time(to)});
    }
  }
  std::sort(r.violations.begin(), r.violations.end(),
            [](const Violation& x, const Violation& y) { return x.from_us < y.from_us; });
  finish(r, "never two holders at once (" + std::to_string(n) + " holds)");
  return r;
}

CheckResult no_foreign_unlock(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  std::string only = arg(args, "lock");
  size_t n = 0;
  for (const auto& rel : f.releases) {
    if (!only.empty() && rel.lock != only) continue;
    n++;
    if (!rel.deleted) continue;
    const Facts::Acquire* owner = nullptr;
    for (const auto& acq : f.acquires)
      if (acq.lock == rel.lock && acq.at_us <= rel.at_us) owner = &acq;
    if (!owner || owner->actor == rel.actor) continue;
    std::string how = rel.method == "del" ? "DEL" : "release script";
    r.violations.push_back(Violation{rel.at_us,
                                     rel.at_us,
                                     {rel.actor, owner->actor},
                                     rel.actor + "'s " + how + " at " + format_time(rel.at_us) +
                                         " removed " + rel.lock + ", which " + owner->actor +
                                         " had held since " + format_time(owner->at_us)});
  }
  finish(r,
         "every release removed only the releaser's own lock (" + std::to_string(n) + " releases)");
  return r;
}

CheckResult no_stale_write(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  std::string only = arg(args, "resource");
  size_t accepted = 0, rejected = 0;
  for (const auto& w : f.writes) {
    if (!only.empty() && w.resource != only) continue;
    (w.accepted ? accepted : rejected)++;
    if (w.accepted && w.fence < w.highest_before)
      r.violations.push_back(
          Violation{w.at_us,
                    w.at_us,
                    {w.actor},
                    w.resource + " accepted " + w.actor + "'s write with fence " +
                        std::to_string(w.fence) + " at " + format_time(w.at_us) +
                        " after it had seen fence " + std::to_string(w.highest_before)});
  }
  finish(r, "no write with an old fence was accepted (" + std::to_string(accepted) + " accepted, " +
                std::to_string(rejected) + " rejected)");
  return r;
}

CheckResult no_forged_fence(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  std::string only = arg(args, "resource");
  std::set<int64_t> issued;
  for (auto& [lock, fences] : f.issued_fences) issued.insert(fences.begin(), fences.end());
  for (size_t i = 0; i < f.writes.size(); i++) {
    const auto& w = f.writes[i];
    if (!only.empty() && w.resource != only) continue;
    if (!w.accepted || issued.count(w.fence)) continue;
    // What it cost: genuine writes rejected after the forged fence was accepted.
    std::vector<std::string> victims;
    size_t lost = 0;
    for (size_t j = i + 1; j < f.writes.size(); j++) {
      const auto& v = f.writes[j];
      if (v.resource == w.resource && !v.accepted && issued.count(v.fence)) {
        lost++;
        if (std::find(victims.begin(), victims.end(), v.actor) == victims.end())
          victims.push_back(v.actor);
      }
    }
    std::string text = w.resource + " accepted " + w.actor + "'s fence " + std::to_string(w.fence) +
                       " at " + format_time(w.at_us) + ", a fence no lock ever handed out";
    if (lost > 0)
      text += "; it then rejected " + std::to_string(lost) + " genuine write" +
              (lost > 1 ? "s" : "") + " by " + names(victims);
    std::vector<std::string> who{w.actor};
    who.insert(who.end(), victims.begin(), victims.end());
    r.violations.push_back(Violation{w.at_us, w.at_us, who, text});
  }
  finish(r, "every accepted fence came from the lock (" + std::to_string(issued.size()) +
                " handed out)");
  return r;
}

// "msg-20, msg-21, ..., msg-34" for long lists.
std::string message_list(const std::vector<std::string>& all) {
  // A message's first word names it (padding and fields follow).
  std::vector<std::string> v;
  for (const auto& m : all) v.push_back(m.substr(0, m.find(' ')).substr(0, 40));
  if (v.size() <= 6) return names(v);
  return v[0] + ", " + v[1] + ", " + v[2] + ", ..., " + v[v.size() - 2] + ", " + v.back();
}

CheckResult no_lost_messages(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  std::string only = arg(args, "channel");
  // A message published in the last moments of a listening window may still be in flight
  // when the subscriber stops: those do not count.
  constexpr TimeUs kGraceUs = 100000;
  size_t expected_total = 0, delivered_total = 0;
  std::set<std::pair<std::string, std::string>> groups_done;
  for (const auto& l : f.listens) {
    if (!only.empty() && l.channel != only) continue;
    if (l.stream && !groups_done.insert({l.channel, l.group}).second) continue;
    std::vector<std::string> lost;
    size_t zero_receivers = 0;
    TimeUs first = 0, last = 0;
    for (const auto& p : f.publishes) {
      if (p.channel != l.channel || p.stream != l.stream) continue;
      if (p.stream && p.receivers == -2) continue;  // the XADD failed: nothing was sent
      if (!p.stream && (p.at_us < l.from_us || p.at_us + kGraceUs > l.to_us)) continue;
      expected_total++;
      bool got = false;
      for (const auto& d : f.deliveries)
        if (d.channel == p.channel && d.message == p.message &&
            (l.stream ? d.group == l.group : d.actor == l.actor)) {
          got = true;
          break;
        }
      if (got) {
        delivered_total++;
        continue;
      }
      if (lost.empty()) first = p.at_us;
      last = p.at_us;
      lost.push_back(p.message);
      if (p.receivers == 0) zero_receivers++;
    }
    if (lost.empty()) continue;
    std::string who = l.stream ? "group " + l.group : l.actor;
    std::string text = who + " missed " + std::to_string(lost.size()) + " message" +
                       (lost.size() > 1 ? "s" : "") + " on " + l.channel + ", published from " +
                       format_time(first) + " to " + format_time(last) + ": " + message_list(lost);
    if (zero_receivers > 0)
      text += " (PUBLISH returned 0 for " + std::to_string(zero_receivers) +
              " of them: nobody was subscribed)";
    r.violations.push_back(Violation{first, last, {l.actor}, text});
  }
  finish(r, "every message arrived (" + std::to_string(delivered_total) + " of " +
                std::to_string(expected_total) + ")");
  return r;
}

CheckResult count_events(const Trace& trace, const std::string& kind, const std::string& what,
                         const std::string& ok_text) {
  CheckResult r;
  std::map<std::string, std::pair<size_t, TimeUs>> by_actor;  // actor -> (count, first)
  std::vector<std::string> order;
  for (const auto& e : trace.events()) {
    if (e.kind != kind) continue;
    auto [it, fresh] = by_actor.try_emplace(e.actor, 0, e.time_us);
    if (fresh) order.push_back(e.actor);
    it->second.first++;
  }
  for (const auto& actor : order) {
    auto [n, first] = by_actor[actor];
    r.violations.push_back(Violation{first,
                                     first,
                                     {actor},
                                     actor + " hit " + std::to_string(n) + " " + what +
                                         (n > 1 ? "s" : "") + " (the first at " +
                                         format_time(first) + ")"});
  }
  finish(r, ok_text);
  return r;
}

CheckResult no_oversell(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  int64_t stock = args.number.at("stock");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  std::vector<std::string> over;
  TimeUs first_over = 0;
  for (const auto& rec : f.records) {
    if (rec.name != name) continue;
    sold++;
    if (sold == stock + 1) first_over = rec.at_us;
    if (sold > stock && std::find(over.begin(), over.end(), rec.actor) == over.end())
      over.push_back(rec.actor);
  }
  if (sold > stock)
    r.violations.push_back(Violation{
        first_over, first_over, over,
        std::to_string(sold) + " sold from a stock of " + std::to_string(stock) + ": " +
            std::to_string(sold - stock) + " oversold, the first at " + format_time(first_over)});
  finish(r, std::to_string(sold) + " sold from a stock of " + std::to_string(stock));
  return r;
}

CheckResult retries_bounded(const CheckArgs& args, const Facts& f) {
  CheckResult r;
  int64_t bound = args.number.at("max_attempts");
  int64_t total = 0, aborted = 0, most = 0, gave_up = 0;
  std::vector<const Facts::Attempts*> over;
  for (const auto& a : f.attempts) {
    total += a.attempts;
    aborted += a.aborted;
    most = std::max(most, a.attempts);
    gave_up += a.gave_up ? 1 : 0;
    if (a.attempts > bound) over.push_back(&a);
  }
  // The worst first; ties in actor order (stable).
  std::stable_sort(
      over.begin(), over.end(),
      [](const Facts::Attempts* x, const Facts::Attempts* y) { return x->attempts > y->attempts; });
  for (const Facts::Attempts* a : over)
    r.violations.push_back(Violation{0,
                                     0,
                                     {a->actor},
                                     a->actor + " took " + std::to_string(a->attempts) +
                                         " attempts (bound " + std::to_string(bound) + ")"});
  if (f.attempts.empty()) {
    finish(r, "no WATCH transactions, so nothing to retry");
    return r;
  }
  std::string totals = std::to_string(total) + " attempts by " + std::to_string(f.attempts.size()) +
                       " transactions, " + std::to_string(aborted) + " EXECs aborted";
  if (gave_up > 0) totals += ", " + std::to_string(gave_up) + " gave up";
  finish(r,
         "at most " + std::to_string(most) + " attempts each (bound " + std::to_string(bound) +
             "); " + totals,
         totals);
  return r;
}

}  // namespace

CheckResult run_check(const std::string& check, const CheckArgs& args, const Facts& facts,
                      const Trace& trace) {
  CheckResult r;
  if (check == "mutual_exclusion")
    r = mutual_exclusion(args, facts);
  else if (check == "no_foreign_unlock")
    r = no_foreign_unlock(args, facts);
  else if (check == "no_stale_write")
    r = no_stale_write(args, facts);
  else if (check == "no_forged_fence")
    r = no_forged_fence(args, facts);
  else if (check == "no_lost_messages")
    r = no_lost_messages(args, facts);
  else if (check == "no_pool_timeouts")
    r = count_events(trace, "pool_timeout", "pool timeout",
                     "no call waited in vain for a pooled connection");
  else if (check == "no_read_timeouts")
    r = count_events(trace, "read_timeout", "read timeout",
                     "every reply came within its read timeout");
  else if (check == "no_oversell")
    r = no_oversell(args, facts);
  else if (check == "retries_bounded")
    r = retries_bounded(args, facts);
  r.check = check;
  return r;
}

}  // namespace redlab::scenario
