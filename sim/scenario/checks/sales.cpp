// The stock checks: sales recorded by the steps, against the server's record of the stock.
#include <algorithm>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// Sales, from `record` events: a step records only when the server confirmed its write (an
// EXEC that applied, a script that returned success).
CheckResult no_oversell(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t stock = args.number.at("stock");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  std::vector<std::string> over;
  TimeUs first_over = 0;
  for (size_t i : ix.of_kind("record")) {
    const TraceEvent& e = ix.event(i);
    if (e.str_or(F::record) != name) continue;
    sold++;
    if (sold == stock + 1) first_over = e.time_us;
    if (sold > stock && std::find(over.begin(), over.end(), e.actor) == over.end())
      over.push_back(e.actor);
  }
  if (sold > stock)
    r.violations.push_back(Violation{
        first_over, first_over, over,
        std::to_string(sold) + " sold from a stock of " + std::to_string(stock) + ": " +
            std::to_string(sold - stock) + " oversold, the first at " + format_time(first_over)});
  finish(r, std::to_string(sold) + " sold from a stock of " + std::to_string(stock));
  return r;
}

// The stock key as the server recorded it: its first value (the setup's), its last, and
// every value in between; what was taken must be what was recorded as sold (less what
// purchases still under way at the end took), and it never goes below 0.
CheckResult stock_matches_sales(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) sold++;
  bool any_server = false;
  int64_t under_way = 0;  // all servers together, for the summary
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    std::optional<int64_t> first, last;
    TimeUs negative_at = -1;
    int64_t lowest = 0;
    // Taken by a command whose step was still under way when the run ended (its actor
    // neither recorded a sale nor ended after it: the EXEC's reply, or the UNWATCH after it,
    // was still on its way): the server applied it, but the buyer could not record it yet.
    auto still_under_way = [&](int64_t cause) {
      size_t command = ix.span_begin(cause);
      if (command == kNoEvent) return false;
      const std::string& actor = ix.event(command).actor;
      for (const char* kind : {"record", "actor_end"})
        for (size_t i : ix.of_kind(kind))
          if (i > command && ix.event(i).actor == actor) return false;
      return true;
    };
    int64_t in_flight = 0;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.state.key != key) continue;
      any_server = true;
      std::optional<int64_t> v = c.present ? parse_int(c.state.value) : std::optional<int64_t>(0);
      if (!v) continue;
      if (last && *v < *last && still_under_way(c.cause)) in_flight += *last - *v;
      if (!first) first = *v;
      last = *v;
      if (*v < 0 && negative_at < 0) {
        negative_at = c.time_us;
        lowest = *v;
      }
      lowest = std::min(lowest, *v);
    }
    if (!first) continue;
    int64_t taken = *first - *last;
    under_way += in_flight;
    if (negative_at >= 0)
      r.violations.push_back(Violation{negative_at,
                                       negative_at,
                                       {},
                                       key + " went below 0 at " + format_time(negative_at) +
                                           " (down to " + std::to_string(lowest) +
                                           "): more was taken than there was"});
    else if (taken - in_flight != sold)
      r.violations.push_back(
          Violation{ix.end_us(),
                    ix.end_us(),
                    {},
                    key + " went from " + std::to_string(*first) + " to " + std::to_string(*last) +
                        " (" + std::to_string(taken) + " taken" +
                        (in_flight ? ", " + std::to_string(in_flight) +
                                         " of them by purchases still under way at the end"
                                   : std::string()) +
                        "), but " + std::to_string(sold) + " were recorded as sold"});
  }
  if (!any_server) return not_judged_here("the server's own record of " + key);
  finish(r, std::to_string(sold) + " sold and " + key + " went down by exactly that" +
                (under_way ? " (and " + std::to_string(under_way) +
                                 " more for purchases still under way at the end)"
                           : std::string()) +
                ", never below 0");
  return r;
}

// Demand above the stock sells all of it: `record` events (default "sale") reach `stock`.
CheckResult all_sold(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  int64_t stock = args.number.at("stock");
  std::string name = arg(args, "record", "sale");
  int64_t sold = 0;
  for (size_t i : ix.of_kind("record"))
    if (ix.event(i).str_or(F::record) == name) sold++;
  if (sold < stock)
    r.violations.push_back(Violation{ix.end_us(),
                                     ix.end_us(),
                                     {},
                                     "only " + std::to_string(sold) + " of " +
                                         std::to_string(stock) +
                                         " items were sold: the rest stayed in stock"});
  finish(r, "all " + std::to_string(stock) + " items were sold (" + std::to_string(sold) + ")");
  return r;
}

constexpr FieldSpec kStockFields[] = {
    {.key = "stock", .type = FieldType::Count, .required = true, .unit = "items"},
    {.key = "record", .type = FieldType::Text, .absent = "`sale`"}};
constexpr FieldSpec kKeyFields[] = {{.key = "key", .type = FieldType::Text, .required = true},
                                    {.key = "record", .type = FieldType::Text, .absent = "`sale`"}};

}  // namespace

extern const CheckKind no_oversell_check, stock_matches_sales_check, all_sold_check;
const CheckKind no_oversell_check{
    "no_oversell", kStockFields,
    "record events, which a step writes only when the server confirmed the write (an EXEC that "
    "applied, a script that returned success)",
    no_oversell};
const CheckKind stock_matches_sales_check{
    "stock_matches_sales", kKeyFields,
    "the server's record of the stock key: it went down by exactly the sales recorded (and what "
    "purchases still under way at the end took), and never below 0 (fake backend only)",
    stock_matches_sales};
const CheckKind all_sold_check{"all_sold", kStockFields,
                               "record events: as many sales as the stock", all_sold};

}  // namespace redlab::scenario::checks
