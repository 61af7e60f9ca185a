// Sorted-set commands (Redis t_zset.c).
//
// Order. A sorted set is ordered by score, then by member bytes (memcmp, shorter first),
// in Redis' listpack and skiplist encodings alike, and ZSetValue::by_score is exactly that
// order; so every reply that lists members is deterministic and matches Redis.
//
// Lex ranges (BYLEX, ZLEXCOUNT, ZREMRANGEBYLEX) are meant for members of one score; with
// mixed scores Redis still answers, by walking the listpack from one end until the first
// member inside the bound and then while members stay inside. We walk the same way
// (zzlFirstInLexRange / zzlLastInLexRange), so even those answers match for small sets.
//
// Scores. Replies print doubles with "%.17g" (format_double: 0.1 -> 0.10000000000000001).
// A listpack stores -0 as 0, so a stored score is never -0; a reply computed on the fly
// (ZADD INCR, ZUNION) may still print "-0", as Redis' does.
//
// Like Redis, a sorted set never exists empty: the command that removes its last member
// deletes the key. Every write calls signal_modified (WATCH); creating a sorted set also
// signals blocked BZPOPMIN/BZMPOP clients that the key is ready.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/prng.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace redlab::fake {
namespace {

using ZEntry = std::pair<double, std::string>;  // (score, member), ZSetValue::by_score's order

constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";
constexpr std::string_view kLexRangeInvalid = "ERR min or max not valid string range item";

// ---------------------------------------------------------------------------------------
// The value: lookups and the two indexes kept in step
// ---------------------------------------------------------------------------------------

ZSetValue* lookup_zset(Ctx& c, const std::string& key, bool& wrong_type) {
  return c.lookup_typed<ZSetValue>(key, wrong_type);
}

std::optional<double> score_of(const ZSetValue& z, std::string_view member) {
  auto it = z.scores.find(member);
  if (it == z.scores.end()) return std::nullopt;
  return it->second;
}

// Inserts member or moves it to a new score. A stored score is never -0 (see the top).
void put(ZSetValue& z, const std::string& member, double score) {
  REDLAB_ASSERT(!std::isnan(score) && "NaN scores are refused before they reach the set");
  if (score == 0) score = 0;  // -0 -> 0
  auto it = z.scores.find(member);
  if (it != z.scores.end()) {
    size_t erased = z.by_score.erase(ZEntry{it->second, member});
    REDLAB_ASSERT(erased == 1 && "by_score holds every member of scores");
    it->second = score;
  } else {
    z.scores.emplace(member, score);
  }
  z.by_score.emplace(score, member);
  REDLAB_ASSERT(z.by_score.size() == z.scores.size() && "both indexes hold the same members");
}

bool remove(ZSetValue& z, std::string_view member) {
  auto it = z.scores.find(member);
  if (it == z.scores.end()) return false;
  size_t erased = z.by_score.erase(ZEntry{it->second, std::string(member)});
  REDLAB_ASSERT(erased == 1 && "by_score holds every member of scores");
  z.scores.erase(it);
  return true;
}

// Creates an empty sorted set at key; the caller adds a member before returning.
ZSetValue& create_zset(Ctx& c, const std::string& key) {
  Entry& e = c.set_key(key, Value{ZSetValue{}});
  c.signal_key_ready(key);
  return std::get<ZSetValue>(e.value.data);
}

// Stores a computed set at dst (ZRANGESTORE, ZUNIONSTORE ...): an empty one deletes dst.
void store_result(Ctx& c, const std::string& dst, ZSetValue result) {
  if (result.scores.empty()) {
    if (c.lookup_write(dst) && c.delete_key(dst)) c.signal_modified(dst);
    return c.reply_int(0);
  }
  int64_t size = static_cast<int64_t>(result.scores.size());
  c.set_key(dst, Value{std::move(result)});
  c.signal_modified(dst);
  c.signal_key_ready(dst);
  c.reply_int(size);
}

std::vector<const ZEntry*> all_entries(const ZSetValue& z) {
  std::vector<const ZEntry*> out;
  out.reserve(z.by_score.size());
  for (const ZEntry& e : z.by_score) out.push_back(&e);
  return out;
}

Reply entries_reply(const std::vector<const ZEntry*>& entries, bool with_scores) {
  Reply out = Reply::array();
  out.elements.reserve(entries.size() * (with_scores ? 2 : 1));
  for (const ZEntry* e : entries) {
    out.elements.push_back(Reply::bulk(e->second));
    if (with_scores) out.elements.push_back(Reply::bulk(format_double(e->first)));
  }
  return out;
}

// getRangeLongFromObjectOrReply: msg (when given) answers both "not an integer" and "out of
// range", as in Redis.
bool range_arg(Ctx& c, size_t i, int64_t min, int64_t max, int64_t& out,
               std::string_view msg = {}) {
  // getPositiveLongFromObjectOrReply passes its default message down for both failures.
  if (msg.empty() && min == 0 && max == INT64_MAX)
    msg = "ERR value is out of range, must be positive";
  auto v = parse_int64(c.arg(i));
  if (!v) {
    c.reply_error(msg.empty() ? err::kNotInteger : msg);
    return false;
  }
  if (*v < min || *v > max) {
    if (!msg.empty()) {
      c.reply_error(msg);
    } else {
      c.reply_error("ERR value is out of range, value must between " + std::to_string(min) +
                    " and " + std::to_string(max));
    }
    return false;
  }
  out = *v;
  return true;
}

// ---------------------------------------------------------------------------------------
// Score and lex ranges (zslParseRange, zslParseLexRange)
// ---------------------------------------------------------------------------------------

struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;
};

// One bound: "(" makes it exclusive; the rest goes to strtod as a C string, which is more
// lenient than ZADD's score parsing ("" is 0, leading blanks are fine) but refuses NaN.
bool parse_score_bound(const std::string& s, double& value, bool& exclusive) {
  const char* p = s.c_str();
  exclusive = p[0] == '(';
  if (exclusive) p++;
  char* end = nullptr;
  value = std::strtod(p, &end);
  return end[0] == '\0' && !std::isnan(value);
}

bool parse_score_range(const std::string& min, const std::string& max, ScoreRange& r) {
  return parse_score_bound(min, r.min, r.min_exclusive) &&
         parse_score_bound(max, r.max, r.max_exclusive);
}

bool gte_min(double v, const ScoreRange& r) {
  return r.min_exclusive ? v > r.min : v >= r.min;
}
bool lte_max(double v, const ScoreRange& r) {
  return r.max_exclusive ? v < r.max : v <= r.max;
}

// Members in the score range, in forward or reverse order.
std::vector<const ZEntry*> score_range(const ZSetValue& z, const ScoreRange& r, bool reverse) {
  std::vector<const ZEntry*> out;
  const auto& s = z.by_score;
  if (!reverse) {
    auto it = s.lower_bound(ZEntry{r.min, std::string()});
    while (it != s.end() && !gte_min(it->first, r)) ++it;
    for (; it != s.end() && lte_max(it->first, r); ++it) out.push_back(&*it);
    return out;
  }
  // The first member past max, then walk back.
  auto past = s.lower_bound(ZEntry{r.max, std::string()});
  while (past != s.end() && past->first <= r.max) ++past;
  auto it = std::make_reverse_iterator(past);
  while (it != s.rend() && !lte_max(it->first, r)) ++it;
  for (; it != s.rend() && gte_min(it->first, r); ++it) out.push_back(&*it);
  return out;
}

// A lex bound: "-" and "+" are the smallest and greatest strings (always exclusive).
struct LexBound {
  enum class Kind : uint8_t { Min, Max, Value };
  Kind kind = Kind::Value;
  std::string value;
  bool exclusive = false;
};

struct LexRange {
  LexBound min;
  LexBound max;
};

// zslParseLexRangeItem (its "+"/"-" test looks at the C string, hence the '\0').
bool parse_lex_bound(const std::string& s, LexBound& b) {
  if (s.empty()) return false;
  switch (s[0]) {
    case '+':
    case '-':
      if (s.size() > 1 && s[1] != '\0') return false;
      b.kind = s[0] == '+' ? LexBound::Kind::Max : LexBound::Kind::Min;
      b.exclusive = true;
      return true;
    case '(':
    case '[':
      b.kind = LexBound::Kind::Value;
      b.value = s.substr(1);
      b.exclusive = s[0] == '(';
      return true;
    default:
      return false;
  }
}

bool parse_lex_range(const std::string& min, const std::string& max, LexRange& r) {
  return parse_lex_bound(min, r.min) && parse_lex_bound(max, r.max);
}

// sdscmplex between a member and a bound.
int compare_to_bound(const std::string& member, const LexBound& b) {
  if (b.kind == LexBound::Kind::Min) return 1;
  if (b.kind == LexBound::Kind::Max) return -1;
  int cmp = member.compare(b.value);
  return cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
}

bool lex_gte_min(const std::string& m, const LexRange& r) {
  int cmp = compare_to_bound(m, r.min);
  return r.min.exclusive ? cmp > 0 : cmp >= 0;
}

bool lex_lte_max(const std::string& m, const LexRange& r) {
  int cmp = compare_to_bound(m, r.max);
  return r.max.exclusive ? cmp < 0 : cmp <= 0;
}

// zzlIsInLexRange: false when the range is empty or lies wholly outside the set.
bool lex_range_possible(const std::vector<const ZEntry*>& all, const LexRange& r) {
  // sdscmplex(min, max): two "-" (or two "+") are the same object and compare equal.
  int cmp;
  if (r.min.kind != LexBound::Kind::Value && r.min.kind == r.max.kind) {
    cmp = 0;
  } else if (r.min.kind == LexBound::Kind::Min || r.max.kind == LexBound::Kind::Max) {
    cmp = -1;
  } else if (r.min.kind == LexBound::Kind::Max || r.max.kind == LexBound::Kind::Min) {
    cmp = 1;
  } else {
    int raw = r.min.value.compare(r.max.value);
    cmp = raw < 0 ? -1 : (raw > 0 ? 1 : 0);
  }
  if (cmp > 0 || (cmp == 0 && (r.min.exclusive || r.max.exclusive))) return false;
  if (all.empty()) return false;
  return lex_gte_min(all.back()->second, r) && lex_lte_max(all.front()->second, r);
}

constexpr size_t kNotFound = SIZE_MAX;

// zzlFirstInLexRange: the index of the first member >= min, if it is also <= max.
size_t first_in_lex_range(const std::vector<const ZEntry*>& all, const LexRange& r) {
  if (!lex_range_possible(all, r)) return kNotFound;
  for (size_t i = 0; i < all.size(); i++) {
    if (!lex_gte_min(all[i]->second, r)) continue;
    return lex_lte_max(all[i]->second, r) ? i : kNotFound;
  }
  return kNotFound;
}

// zzlLastInLexRange: walking back, the first member <= max, if it is also >= min.
size_t last_in_lex_range(const std::vector<const ZEntry*>& all, const LexRange& r) {
  if (!lex_range_possible(all, r)) return kNotFound;
  for (size_t i = all.size(); i-- > 0;) {
    if (!lex_lte_max(all[i]->second, r)) continue;
    return lex_gte_min(all[i]->second, r) ? i : kNotFound;
  }
  return kNotFound;
}

// Members in the lex range, walked like a listpack.
std::vector<const ZEntry*> lex_range(const ZSetValue& z, const LexRange& r, bool reverse) {
  std::vector<const ZEntry*> all = all_entries(z);
  std::vector<const ZEntry*> out;
  if (!reverse) {
    size_t i = first_in_lex_range(all, r);
    if (i == kNotFound) return out;
    for (; i < all.size() && lex_lte_max(all[i]->second, r); i++) out.push_back(all[i]);
    return out;
  }
  size_t i = last_in_lex_range(all, r);
  if (i == kNotFound) return out;
  for (size_t n = i + 1; n-- > 0 && lex_gte_min(all[n]->second, r);) out.push_back(all[n]);
  return out;
}

// Applies LIMIT offset count the way Redis walks it: a negative offset skips everything, a
// negative count means no limit.
void apply_limit(std::vector<const ZEntry*>& entries, int64_t offset, int64_t limit) {
  if (offset < 0 || static_cast<uint64_t>(offset) >= entries.size()) {
    entries.clear();
    return;
  }
  entries.erase(entries.begin(), entries.begin() + offset);
  if (limit >= 0 && static_cast<uint64_t>(limit) < entries.size())
    entries.resize(static_cast<size_t>(limit));
}

// Rank range after Redis' index sanitizing; false when empty. Outputs inclusive indexes.
bool sanitize_rank_range(int64_t size, int64_t& start, int64_t& end) {
  if (start < 0) start = size + start;
  if (end < 0) end = size + end;
  if (start < 0) start = 0;
  if (start > end || start >= size) return false;
  if (end >= size) end = size - 1;
  return true;
}

std::vector<const ZEntry*> rank_range(const ZSetValue& z, int64_t start, int64_t end,
                                      bool reverse) {
  std::vector<const ZEntry*> out;
  if (!sanitize_rank_range(static_cast<int64_t>(z.by_score.size()), start, end)) return out;
  size_t count = static_cast<size_t>(end - start + 1);
  out.reserve(count);
  if (!reverse) {
    auto it = std::next(z.by_score.begin(), static_cast<ptrdiff_t>(start));
    for (size_t i = 0; i < count; i++, ++it) out.push_back(&*it);
  } else {
    auto it = std::next(z.by_score.rbegin(), static_cast<ptrdiff_t>(start));
    for (size_t i = 0; i < count; i++, ++it) out.push_back(&*it);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// ZADD, ZINCRBY
// ---------------------------------------------------------------------------------------

enum ZaddFlag : uint32_t {
  kZaddIncr = 1,
  kZaddNx = 2,
  kZaddXx = 4,
  kZaddGt = 8,
  kZaddLt = 16,
};

// zsetAdd's outcome for one member.
enum class AddOutcome : uint8_t { Added, Updated, Unchanged, Nop, NaN };

AddOutcome zset_add(ZSetValue& z, const std::string& member, double score, uint32_t flags,
                    double& new_score) {
  if (std::isnan(score)) return AddOutcome::NaN;
  std::optional<double> current = score_of(z, member);
  if (current) {
    if (flags & kZaddNx) return AddOutcome::Nop;
    if (flags & kZaddIncr) {
      score += *current;
      if (std::isnan(score)) return AddOutcome::NaN;
    }
    if (((flags & kZaddLt) && score >= *current) || ((flags & kZaddGt) && score <= *current))
      return AddOutcome::Nop;
    new_score = score;
    if (score == *current) return AddOutcome::Unchanged;
    put(z, member, score);
    return AddOutcome::Updated;
  }
  if (flags & kZaddXx) return AddOutcome::Nop;
  put(z, member, score);
  new_score = score;
  return AddOutcome::Added;
}

// zaddGenericCommand: options, then every score parsed before anything is written, so a bad
// score leaves the set untouched.
void zadd_generic(Ctx& c, uint32_t flags) {
  const std::string& key = c.arg(1);
  size_t score_index = 2;
  bool ch = false;
  for (; score_index < c.argc(); score_index++) {
    const std::string& opt = c.arg(score_index);
    if (equals_nocase(opt, "nx")) {
      flags |= kZaddNx;
    } else if (equals_nocase(opt, "xx")) {
      flags |= kZaddXx;
    } else if (equals_nocase(opt, "ch")) {
      ch = true;
    } else if (equals_nocase(opt, "incr")) {
      flags |= kZaddIncr;
    } else if (equals_nocase(opt, "gt")) {
      flags |= kZaddGt;
    } else if (equals_nocase(opt, "lt")) {
      flags |= kZaddLt;
    } else {
      break;
    }
  }
  bool incr = flags & kZaddIncr;
  bool nx = flags & kZaddNx;
  bool xx = flags & kZaddXx;
  bool gt = flags & kZaddGt;
  bool lt = flags & kZaddLt;
  size_t elements = c.argc() - score_index;
  if (elements % 2 != 0 || elements == 0) return c.reply_error(err::kSyntax);
  elements /= 2;
  if (nx && xx) return c.reply_error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return c.reply_error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && elements > 1)
    return c.reply_error("ERR INCR option supports a single increment-element pair");
  std::vector<double> scores(elements);
  for (size_t j = 0; j < elements; j++)
    if (!c.double_arg(score_index + j * 2, scores[j])) return;

  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, key, wrong_type);
  if (wrong_type) return;
  int64_t added = 0;
  int64_t updated = 0;
  int64_t processed = 0;
  double score = 0;
  if (z || !xx) {
    if (!z) z = &create_zset(c, key);
    for (size_t j = 0; j < elements; j++) {
      double new_score = 0;
      AddOutcome outcome =
          zset_add(*z, c.arg(score_index + 1 + j * 2), scores[j], flags, new_score);
      if (outcome == AddOutcome::NaN) {
        // Only an INCR on an existing member can get here, so the set is not empty.
        REDLAB_ASSERT(!z->scores.empty() && "a NaN never follows the creation of the set");
        if (added || updated) c.signal_modified(key);
        return c.reply_error("ERR resulting score is not a number (NaN)");
      }
      if (outcome == AddOutcome::Added) added++;
      if (outcome == AddOutcome::Updated) updated++;
      if (outcome != AddOutcome::Nop) {
        processed++;
        score = new_score;
      }
    }
    REDLAB_ASSERT(!z->scores.empty() && "a created set always receives its first member");
  }
  if (added || updated) c.signal_modified(key);
  if (incr) {
    if (processed) return c.reply_bulk(format_double(score));
    return c.reply_nil();
  }
  c.reply_int(ch ? added + updated : added);
}

void zadd_command(Ctx& c) {
  zadd_generic(c, 0);
}
void zincrby_command(Ctx& c) {
  zadd_generic(c, kZaddIncr);
}

// ---------------------------------------------------------------------------------------
// Point reads and removals
// ---------------------------------------------------------------------------------------

void zrem_command(Ctx& c) {
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, key, wrong_type);
  if (wrong_type) return;
  if (!z) return c.reply_int(0);
  int64_t deleted = 0;
  for (size_t j = 2; j < c.argc() && !z->scores.empty(); j++)
    deleted += remove(*z, c.arg(j)) ? 1 : 0;
  if (deleted > 0) {
    if (z->scores.empty()) c.delete_key(key);
    c.signal_modified(key);
  }
  c.reply_int(deleted);
}

void zscore_command(Ctx& c) {
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  std::optional<double> s = z ? score_of(*z, c.arg(2)) : std::nullopt;
  if (!s) return c.reply_nil();
  c.reply_bulk(format_double(*s));
}

void zmscore_command(Ctx& c) {
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  Reply out = Reply::array();
  out.elements.reserve(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    std::optional<double> s = z ? score_of(*z, c.arg(j)) : std::nullopt;
    out.elements.push_back(s ? Reply::bulk(format_double(*s)) : Reply::nil());
  }
  c.reply(std::move(out));
}

void zcard_command(Ctx& c) {
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(z ? static_cast<int64_t>(z->scores.size()) : 0);
}

void zrank_generic(Ctx& c, bool reverse) {
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  std::optional<double> s = z ? score_of(*z, c.arg(2)) : std::nullopt;
  if (!s) return c.reply_nil();
  auto it = z->by_score.find(ZEntry{*s, c.arg(2)});
  REDLAB_ASSERT(it != z->by_score.end() && "by_score holds every member of scores");
  int64_t rank = static_cast<int64_t>(std::distance(z->by_score.begin(), it));
  if (reverse) rank = static_cast<int64_t>(z->by_score.size()) - 1 - rank;
  c.reply_int(rank);
}

void zrank_command(Ctx& c) {
  zrank_generic(c, false);
}
void zrevrank_command(Ctx& c) {
  zrank_generic(c, true);
}

void zcount_command(Ctx& c) {
  ScoreRange r;
  if (!parse_score_range(c.arg(2), c.arg(3), r)) return c.reply_error(kMinMaxNotFloat);
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(z ? static_cast<int64_t>(score_range(*z, r, false).size()) : 0);
}

void zlexcount_command(Ctx& c) {
  LexRange r;
  if (!parse_lex_range(c.arg(2), c.arg(3), r)) return c.reply_error(kLexRangeInvalid);
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  c.reply_int(z ? static_cast<int64_t>(lex_range(*z, r, false).size()) : 0);
}

// ---------------------------------------------------------------------------------------
// ZRANGE and its older forms (zrangeGenericCommand)
// ---------------------------------------------------------------------------------------

enum class RangeType : uint8_t { Auto, Rank, Score, Lex };
enum class Direction : uint8_t { Auto, Forward, Reverse };

// key_index: where the source key is (1, or 2 for ZRANGESTORE whose argv[1] is the dst).
void zrange_generic(Ctx& c, size_t key_index, bool store, RangeType type, Direction dir) {
  size_t min_index = key_index + 1;
  size_t max_index = key_index + 2;
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = key_index + 3; j < c.argc(); j++) {
    size_t left = c.argc() - j - 1;
    const std::string& opt = c.arg(j);
    if (!store && equals_nocase(opt, "withscores")) {
      with_scores = true;
    } else if (equals_nocase(opt, "limit") && left >= 2) {
      if (!c.int_arg(j + 1, offset) || !c.int_arg(j + 2, limit)) return;
      j += 2;
    } else if (dir == Direction::Auto && equals_nocase(opt, "rev")) {
      dir = Direction::Reverse;
    } else if (type == RangeType::Auto && equals_nocase(opt, "bylex")) {
      type = RangeType::Lex;
    } else if (type == RangeType::Auto && equals_nocase(opt, "byscore")) {
      type = RangeType::Score;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  if (dir == Direction::Auto) dir = Direction::Forward;
  if (type == RangeType::Auto) type = RangeType::Rank;
  bool reverse = dir == Direction::Reverse;
  // Redis compares LIMIT's count with its "unset" value -1: LIMIT 0 -1 passes with ranks.
  if (limit != -1 && type == RangeType::Rank) {
    return c.reply_error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && type == RangeType::Lex)
    return c.reply_error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  // Reverse score and lex ranges are given as max, min.
  if (reverse && type != RangeType::Rank) std::swap(min_index, max_index);

  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_r;
  LexRange lex_r;
  switch (type) {
    case RangeType::Auto:
    case RangeType::Rank:
      if (!c.int_arg(min_index, start) || !c.int_arg(max_index, end)) return;
      break;
    case RangeType::Score:
      if (!parse_score_range(c.arg(min_index), c.arg(max_index), score_r))
        return c.reply_error(kMinMaxNotFloat);
      break;
    case RangeType::Lex:
      if (!parse_lex_range(c.arg(min_index), c.arg(max_index), lex_r))
        return c.reply_error(kLexRangeInvalid);
      break;
  }

  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(key_index), wrong_type);
  if (wrong_type) return;
  std::vector<const ZEntry*> entries;
  if (z) {
    switch (type) {
      case RangeType::Auto:
      case RangeType::Rank:
        entries = rank_range(*z, start, end, reverse);
        break;
      case RangeType::Score:
        entries = score_range(*z, score_r, reverse);
        apply_limit(entries, offset, limit);
        break;
      case RangeType::Lex:
        entries = lex_range(*z, lex_r, reverse);
        apply_limit(entries, offset, limit);
        break;
    }
  }
  if (!store) return c.reply(entries_reply(entries, with_scores));
  ZSetValue result;
  for (const ZEntry* e : entries) put(result, e->second, e->first);
  store_result(c, c.arg(1), std::move(result));
}

void zrange_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Auto, Direction::Auto);
}
void zrangestore_command(Ctx& c) {
  zrange_generic(c, 2, true, RangeType::Auto, Direction::Auto);
}
void zrevrange_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Rank, Direction::Reverse);
}
void zrangebyscore_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Score, Direction::Forward);
}
void zrevrangebyscore_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Score, Direction::Reverse);
}
void zrangebylex_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Lex, Direction::Forward);
}
void zrevrangebylex_command(Ctx& c) {
  zrange_generic(c, 1, false, RangeType::Lex, Direction::Reverse);
}

// ZREMRANGEBYRANK / BYSCORE / BYLEX (zremrangeGenericCommand): the range is parsed before
// the key is looked up.
void zremrange_generic(Ctx& c, RangeType type) {
  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_r;
  LexRange lex_r;
  if (type == RangeType::Rank) {
    if (!c.int_arg(2, start) || !c.int_arg(3, end)) return;
  } else if (type == RangeType::Score) {
    if (!parse_score_range(c.arg(2), c.arg(3), score_r)) return c.reply_error(kMinMaxNotFloat);
  } else {
    if (!parse_lex_range(c.arg(2), c.arg(3), lex_r)) return c.reply_error(kLexRangeInvalid);
  }
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, key, wrong_type);
  if (wrong_type) return;
  if (!z) return c.reply_int(0);
  std::vector<const ZEntry*> doomed;
  if (type == RangeType::Rank) {
    doomed = rank_range(*z, start, end, false);
  } else if (type == RangeType::Score) {
    doomed = score_range(*z, score_r, false);
  } else {
    doomed = lex_range(*z, lex_r, false);
  }
  std::vector<std::string> members;
  members.reserve(doomed.size());
  for (const ZEntry* e : doomed) members.push_back(e->second);
  for (const std::string& m : members) remove(*z, m);
  if (!members.empty()) {
    if (z->scores.empty()) c.delete_key(key);
    c.signal_modified(key);
  }
  c.reply_int(static_cast<int64_t>(members.size()));
}

void zremrangebyrank_command(Ctx& c) {
  zremrange_generic(c, RangeType::Rank);
}
void zremrangebyscore_command(Ctx& c) {
  zremrange_generic(c, RangeType::Score);
}
void zremrangebylex_command(Ctx& c) {
  zremrange_generic(c, RangeType::Lex);
}

// ---------------------------------------------------------------------------------------
// Pops: ZPOPMIN/ZPOPMAX, ZMPOP and their blocking forms
// ---------------------------------------------------------------------------------------

// Pops up to count members from the zset at key (which exists) and builds the reply in one
// of genericZpopCommand's shapes: flat [m, s, ...] (ZPOP*), with the key first (BZPOP*),
// or [key, [[m, s], ...]] (ZMPOP/BZMPOP).
Reply pop_members(Ctx& c, const std::string& key, ZSetValue& z, bool max, int64_t count,
                  bool emit_key, bool nested) {
  REDLAB_ASSERT(count > 0 && "callers answer a zero count themselves");
  Reply items = Reply::array();
  if (emit_key && !nested) items.elements.push_back(Reply::bulk(key));
  for (int64_t i = 0; i < count && !z.scores.empty(); i++) {
    ZEntry top = max ? *z.by_score.rbegin() : *z.by_score.begin();
    remove(z, top.second);
    if (nested) {
      items.elements.push_back(
          Reply::array({Reply::bulk(top.second), Reply::bulk(format_double(top.first))}));
    } else {
      items.elements.push_back(Reply::bulk(top.second));
      items.elements.push_back(Reply::bulk(format_double(top.first)));
    }
  }
  if (z.scores.empty()) c.delete_key(key);
  c.signal_modified(key);
  if (!nested) return items;
  return Reply::array({Reply::bulk(key), std::move(items)});
}

// ZPOPMIN key [count]
void zpop_generic(Ctx& c, bool max) {
  if (c.argc() > 3) return c.reply_error(err::kSyntax);
  int64_t count = 1;
  if (c.argc() == 3 && !range_arg(c, 2, 0, INT64_MAX, count)) return;
  const std::string& key = c.arg(1);
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, key, wrong_type);
  if (wrong_type) return;
  if (!z || count == 0) return c.reply(Reply::array());
  c.reply(pop_members(c, key, *z, max, count, false, false));
}

void zpopmin_command(Ctx& c) {
  zpop_generic(c, false);
}
void zpopmax_command(Ctx& c) {
  zpop_generic(c, true);
}

// The first sorted set among keys (sorted sets are never empty). A key of another type
// answers WRONGTYPE and sets found_error.
ZSetValue* first_zset(Ctx& c, const std::vector<std::string>& keys, size_t& index,
                      bool& found_error) {
  found_error = false;
  for (size_t i = 0; i < keys.size(); i++) {
    bool wrong_type = false;
    ZSetValue* z = lookup_zset(c, keys[i], wrong_type);
    if (wrong_type) {
      found_error = true;
      return nullptr;
    }
    if (!z) continue;
    index = i;
    return z;
  }
  return nullptr;
}

// The sorted set a retried blocked command may pop from: the key whose readiness woke it
// (Redis serves a client blocked on several keys from that key), or, when the server names
// none, the first of its keys holding a sorted set. Other types are simply not ready.
ZSetValue* ready_zset(Ctx& c, const std::vector<std::string>& keys, std::string& key) {
  auto zset_at = [&](const std::string& k) -> ZSetValue* {
    Entry* e = c.lookup_write(k);
    return e ? std::get_if<ZSetValue>(&e->value.data) : nullptr;
  };
  const std::string& ready = c.client.block.ready_key;
  if (!ready.empty()) {
    key = ready;
    return zset_at(ready);
  }
  for (const std::string& k : keys) {
    if (ZSetValue* z = zset_at(k)) {
      key = k;
      return z;
    }
  }
  return nullptr;
}

// BZPOPMIN, BZPOPMAX and BZMPOP once their arguments are parsed: pop at once, or block.
void pop_or_block(Ctx& c, std::vector<std::string> keys, bool max, int64_t count, bool nested,
                  TimeUs timeout_us) {
  if (c.retrying) {
    std::string key;
    ZSetValue* z = ready_zset(c, keys, key);
    if (z) return c.reply(pop_members(c, key, *z, max, count, true, nested));
    return c.block(std::move(keys), timeout_us, Reply::nil_array());
  }
  size_t index = 0;
  bool error = false;
  ZSetValue* z = first_zset(c, keys, index, error);
  if (error) return;
  if (z) return c.reply(pop_members(c, keys[index], *z, max, count, true, nested));
  // Not allowed to block (MULTI, scripts): answer as a timeout, even with timeout 0.
  if (!c.can_block()) return c.reply(Reply::nil_array());
  c.block(std::move(keys), timeout_us, Reply::nil_array());
}

// BZPOPMIN key [key ...] timeout
void bzpop_generic(Ctx& c, bool max) {
  TimeUs timeout_us;
  if (!c.timeout_arg(c.argc() - 1, timeout_us)) return;
  pop_or_block(c, std::vector<std::string>(c.argv.begin() + 1, c.argv.end() - 1), max, 1, false,
               timeout_us);
}

void bzpopmin_command(Ctx& c) {
  bzpop_generic(c, false);
}
void bzpopmax_command(Ctx& c) {
  bzpop_generic(c, true);
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count], and BZMPOP timeout numkeys ...
// (zmpopGenericCommand: numkeys, MIN|MAX and COUNT are checked before the timeout).
void zmpop_generic(Ctx& c, size_t numkeys_index, bool blocking) {
  int64_t numkeys;
  if (!range_arg(c, numkeys_index, 1, INT64_MAX, numkeys, "ERR numkeys should be greater than 0"))
    return;
  // MIN|MAX must follow the keys.
  if (static_cast<uint64_t>(numkeys) + 1 >= c.argc() - numkeys_index)
    return c.reply_error(err::kSyntax);
  size_t where_index = numkeys_index + static_cast<size_t>(numkeys) + 1;
  bool max;
  if (equals_nocase(c.arg(where_index), "min")) {
    max = false;
  } else if (equals_nocase(c.arg(where_index), "max")) {
    max = true;
  } else {
    return c.reply_error(err::kSyntax);
  }
  int64_t count = -1;
  for (size_t j = where_index + 1; j < c.argc(); j++) {
    bool more = j + 1 < c.argc();
    if (count == -1 && equals_nocase(c.arg(j), "count") && more) {
      j++;
      if (!range_arg(c, j, 1, INT64_MAX, count, "ERR count should be greater than 0")) return;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }
  if (count == -1) count = 1;
  TimeUs timeout_us = 0;
  if (blocking && !c.timeout_arg(1, timeout_us)) return;
  std::vector<std::string> keys(c.argv.begin() + static_cast<ptrdiff_t>(numkeys_index) + 1,
                                c.argv.begin() + static_cast<ptrdiff_t>(where_index));
  if (blocking) return pop_or_block(c, std::move(keys), max, count, true, timeout_us);
  size_t index = 0;
  bool error = false;
  ZSetValue* z = first_zset(c, keys, index, error);
  if (error) return;
  if (z) return c.reply(pop_members(c, keys[index], *z, max, count, true, true));
  c.reply(Reply::nil_array());
}

void zmpop_command(Ctx& c) {
  zmpop_generic(c, 1, false);
}
void bzmpop_command(Ctx& c) {
  zmpop_generic(c, 2, true);
}

// ---------------------------------------------------------------------------------------
// ZUNION / ZINTER / ZDIFF and their STORE forms, ZINTERCARD (zunionInterDiffGenericCommand)
// ---------------------------------------------------------------------------------------

enum class SetOp : uint8_t { Union, Inter, Diff };
enum class Aggregate : uint8_t { Sum, Min, Max };

// One input: a sorted set, a plain set (every score 1) or nothing (a missing key).
struct Source {
  const ZSetValue* zset = nullptr;
  const SetValue* set = nullptr;
  double weight = 1.0;
  size_t size() const { return zset ? zset->scores.size() : (set ? set->size() : 0); }
  std::optional<double> score(const std::string& member) const {
    if (zset) return score_of(*zset, member);
    if (set && set->count(member)) return 1.0;
    return std::nullopt;
  }
  // Calls f(member, score) for every member.
  template <typename F>
  void for_each(F f) const {
    if (zset) {
      for (const ZEntry& e : zset->by_score) f(e.second, e.first);
    } else if (set) {
      for (const std::string& m : *set) f(m, 1.0);
    }
  }
};

void aggregate_into(double& target, double value, Aggregate how) {
  switch (how) {
    case Aggregate::Sum:
      target += value;
      if (std::isnan(target)) target = 0;  // inf + -inf
      break;
    case Aggregate::Min:
      target = std::min(target, value);
      break;
    case Aggregate::Max:
      target = std::max(target, value);
      break;
  }
}

// weight * score, with Redis' rule that NaN (0 * inf) counts as 0.
double weighted(const Source& s, double score) {
  double v = s.weight * score;
  return std::isnan(v) ? 0 : v;
}

// dst: the STORE forms' destination (nullptr otherwise); numkeys_index: where numkeys is.
void zsetop_generic(Ctx& c, const std::string* dst, size_t numkeys_index, SetOp op,
                    bool cardinality_only) {
  int64_t numkeys;
  if (!c.int_arg(numkeys_index, numkeys)) return;
  if (numkeys < 1) {
    return c.reply_error("ERR at least 1 input key is needed for '" + c.cmd.name + "' command");
  }
  if (numkeys > static_cast<int64_t>(c.argc() - (numkeys_index + 1)))
    return c.reply_error(err::kSyntax);
  // Every key is type-checked before any option is parsed.
  std::vector<Source> sources(static_cast<size_t>(numkeys));
  size_t j = numkeys_index + 1;
  for (size_t i = 0; i < sources.size(); i++, j++) {
    Entry* e = c.lookup_read(c.arg(j));
    if (!e) continue;
    sources[i].zset = std::get_if<ZSetValue>(&e->value.data);
    sources[i].set = std::get_if<SetValue>(&e->value.data);
    if (!sources[i].zset && !sources[i].set) return c.reply_error(err::kWrongType);
  }
  Aggregate aggregate = Aggregate::Sum;
  bool with_scores = false;
  int64_t limit = 0;
  while (j < c.argc()) {
    size_t remaining = c.argc() - j;
    const std::string& opt = c.arg(j);
    if (op != SetOp::Diff && !cardinality_only && remaining >= sources.size() + 1 &&
        equals_nocase(opt, "weights")) {
      j++;
      for (Source& s : sources) {
        if (!c.double_arg(j, s.weight, "ERR weight value is not a float")) return;
        j++;
      }
    } else if (op != SetOp::Diff && !cardinality_only && remaining >= 2 &&
               equals_nocase(opt, "aggregate")) {
      const std::string& how = c.arg(j + 1);
      if (equals_nocase(how, "sum")) {
        aggregate = Aggregate::Sum;
      } else if (equals_nocase(how, "min")) {
        aggregate = Aggregate::Min;
      } else if (equals_nocase(how, "max")) {
        aggregate = Aggregate::Max;
      } else {
        return c.reply_error(err::kSyntax);
      }
      j += 2;
    } else if (!dst && !cardinality_only && equals_nocase(opt, "withscores")) {
      with_scores = true;
      j++;
    } else if (cardinality_only && remaining >= 2 && equals_nocase(opt, "limit")) {
      if (!range_arg(c, j + 1, 0, INT64_MAX, limit, "ERR LIMIT can't be negative")) return;
      j += 2;
    } else {
      return c.reply_error(err::kSyntax);
    }
  }

  // Redis sorts the inputs by size (glibc's qsort is a stable merge sort here); a SUM adds
  // in that order, which decides the last bits of the result.
  if (op != SetOp::Diff) {
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }
  // member -> score, in a vector kept in first-seen order and sorted at the end.
  std::vector<std::pair<std::string, double>> result;
  int64_t cardinality = 0;
  if (op == SetOp::Inter) {
    if (sources[0].size() > 0) {
      bool stop = false;
      sources[0].for_each([&](const std::string& member, double score) {
        if (stop) return;
        double total = weighted(sources[0], score);
        for (size_t k = 1; k < sources.size(); k++) {
          std::optional<double> other = sources[k].score(member);
          if (!other) return;
          // Unlike ZUNION, only the first input's product has its NaN turned into 0.
          aggregate_into(total, *other * sources[k].weight, aggregate);
        }
        if (cardinality_only) {
          cardinality++;
          if (limit != 0 && cardinality >= limit) stop = true;
          return;
        }
        result.emplace_back(member, total);
      });
    }
  } else if (op == SetOp::Union) {
    std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> index;
    for (const Source& s : sources) {
      s.for_each([&](const std::string& member, double score) {
        double v = weighted(s, score);
        auto it = index.find(member);
        if (it == index.end()) {
          index.emplace(member, result.size());
          result.emplace_back(member, v);
        } else {
          aggregate_into(result[it->second].second, v, aggregate);
        }
      });
    }
  } else {
    sources[0].for_each([&](const std::string& member, double score) {
      for (size_t k = 1; k < sources.size(); k++)
        if (sources[k].score(member)) return;
      result.emplace_back(member, score);
    });
  }
  if (cardinality_only) return c.reply_int(cardinality);

  if (dst) {
    ZSetValue stored;
    for (const auto& [member, score] : result) put(stored, member, score);
    return store_result(c, *dst, std::move(stored));
  }
  // Sorted like a skiplist, keeping each computed score as it is (even -0).
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second < b.second;
    return a.first < b.first;
  });
  Reply out = Reply::array();
  out.elements.reserve(result.size() * (with_scores ? 2 : 1));
  for (const auto& [member, score] : result) {
    out.elements.push_back(Reply::bulk(member));
    if (with_scores) out.elements.push_back(Reply::bulk(format_double(score)));
  }
  c.reply(std::move(out));
}

void zunionstore_command(Ctx& c) {
  zsetop_generic(c, &c.arg(1), 2, SetOp::Union, false);
}
void zinterstore_command(Ctx& c) {
  zsetop_generic(c, &c.arg(1), 2, SetOp::Inter, false);
}
void zdiffstore_command(Ctx& c) {
  zsetop_generic(c, &c.arg(1), 2, SetOp::Diff, false);
}
void zunion_command(Ctx& c) {
  zsetop_generic(c, nullptr, 1, SetOp::Union, false);
}
void zinter_command(Ctx& c) {
  zsetop_generic(c, nullptr, 1, SetOp::Inter, false);
}
void zdiff_command(Ctx& c) {
  zsetop_generic(c, nullptr, 1, SetOp::Diff, false);
}
void zintercard_command(Ctx& c) {
  zsetop_generic(c, nullptr, 1, SetOp::Inter, true);
}

// ---------------------------------------------------------------------------------------
// ZRANDMEMBER
// ---------------------------------------------------------------------------------------

// ZRANDMEMBER key [count [WITHSCORES]]. Random picks come from the simulator's PRNG seeded
// from the key and the server's command counter (deterministic runs). Where Redis' answer
// does not depend on chance ours is the same: a count covering the set lists it from the
// highest score down (Redis walks it with zuiNext, which goes backwards).
void zrandmember_command(Ctx& c) {
  // A negative count: the most members one reply may hold (we build it in memory).
  constexpr uint64_t kRandomRepliesMax = 1 << 20;
  const std::string& key = c.arg(1);
  bool with_count = c.argc() >= 3;
  bool with_scores = false;
  int64_t count = 1;
  if (with_count) {
    if (!range_arg(c, 2, -INT64_MAX, INT64_MAX, count)) return;
    if (c.argc() > 4 || (c.argc() == 4 && !equals_nocase(c.arg(3), "withscores")))
      return c.reply_error(err::kSyntax);
    with_scores = c.argc() == 4;
    if (with_scores && (count < -INT64_MAX / 2 || count > INT64_MAX / 2))
      return c.reply_error("ERR value is out of range");
  }
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, key, wrong_type);
  if (wrong_type) return;
  if (!z) return c.reply(with_count ? Reply::array() : Reply::nil());
  Prng rng = c.random_source(key);
  std::vector<const ZEntry*> all = all_entries(*z);
  auto pick = [&]() { return all[static_cast<size_t>(rng.uniform(all.size()))]; };
  if (!with_count) return c.reply_bulk(pick()->second);
  bool unique = count >= 0;
  uint64_t wanted = unique ? static_cast<uint64_t>(count) : 0 - static_cast<uint64_t>(count);
  std::vector<const ZEntry*> chosen;
  if (wanted == 0) {
    // nothing
  } else if (!unique || wanted == 1) {
    if (wanted > kRandomRepliesMax) wanted = kRandomRepliesMax;
    chosen.reserve(static_cast<size_t>(wanted));
    for (uint64_t i = 0; i < wanted; i++) chosen.push_back(pick());
  } else if (wanted >= all.size()) {
    chosen.assign(all.rbegin(), all.rend());
  } else {
    // Distinct members: a partial Fisher-Yates shuffle.
    for (size_t i = 0; i < wanted; i++)
      std::swap(all[i], all[i + static_cast<size_t>(rng.uniform(all.size() - i))]);
    chosen.assign(all.begin(), all.begin() + static_cast<ptrdiff_t>(wanted));
  }
  c.reply(entries_reply(chosen, with_scores));
}

// ---------------------------------------------------------------------------------------
// ZSCAN
// ---------------------------------------------------------------------------------------

// ZSCAN key cursor [MATCH pattern] [COUNT count]: a listpack set is returned whole in one
// page with cursor 0; we do that for every sorted set.
void zscan_command(Ctx& c) {
  if (!c.scan_cursor_arg()) return;
  bool wrong_type = false;
  ZSetValue* z = lookup_zset(c, c.arg(1), wrong_type);
  if (wrong_type) return;
  if (!z) return c.reply(Reply::array({Reply::bulk("0"), Reply::array()}));
  const std::string* pattern = nullptr;
  if (!c.scan_options(pattern)) return;
  Reply items = Reply::array();
  for (const ZEntry& e : z->by_score) {
    if (pattern && !glob_match(*pattern, e.second)) continue;
    items.elements.push_back(Reply::bulk(e.second));
    items.elements.push_back(Reply::bulk(format_double(e.first)));
  }
  c.reply(Reply::array({Reply::bulk("0"), std::move(items)}));
}

}  // namespace

void register_zset_commands(CommandTable& t) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, int first_key = 1,
                 int last_key = 1) {
    t[name] = CommandSpec{name, arity, flags, h, first_key, last_key, first_key ? 1 : 0};
  };
  add("zadd", -4, kWrite | kFast, zadd_command);
  add("zincrby", 4, kWrite | kFast, zincrby_command);
  add("zrem", -3, kWrite | kFast, zrem_command);
  add("zscore", 3, kReadOnly | kFast, zscore_command);
  add("zmscore", -3, kReadOnly | kFast, zmscore_command);
  add("zcard", 2, kReadOnly | kFast, zcard_command);
  add("zrank", 3, kReadOnly | kFast, zrank_command);
  add("zrevrank", 3, kReadOnly | kFast, zrevrank_command);
  add("zcount", 4, kReadOnly | kFast, zcount_command);
  add("zlexcount", 4, kReadOnly | kFast, zlexcount_command);
  add("zrange", -4, kReadOnly, zrange_command);
  add("zrangestore", -5, kWrite, zrangestore_command, 1, 2);
  add("zrevrange", -4, kReadOnly, zrevrange_command);
  add("zrangebyscore", -4, kReadOnly, zrangebyscore_command);
  add("zrevrangebyscore", -4, kReadOnly, zrevrangebyscore_command);
  add("zrangebylex", -4, kReadOnly, zrangebylex_command);
  add("zrevrangebylex", -4, kReadOnly, zrevrangebylex_command);
  add("zremrangebyrank", 4, kWrite, zremrangebyrank_command);
  add("zremrangebyscore", 4, kWrite, zremrangebyscore_command);
  add("zremrangebylex", 4, kWrite, zremrangebylex_command);
  add("zpopmin", -2, kWrite | kFast, zpopmin_command);
  add("zpopmax", -2, kWrite | kFast, zpopmax_command);
  add("bzpopmin", -3, kWrite | kNoScript | kFast | kBlocking, bzpopmin_command, 1, -2);
  add("bzpopmax", -3, kWrite | kNoScript | kFast | kBlocking, bzpopmax_command, 1, -2);
  // Keys follow numkeys: no fixed key positions (the STORE forms list their destination).
  add("zmpop", -4, kWrite, zmpop_command, 0, 0);
  add("bzmpop", -5, kWrite | kBlocking, bzmpop_command, 0, 0);
  add("zunionstore", -4, kWrite, zunionstore_command);
  add("zinterstore", -4, kWrite, zinterstore_command);
  add("zdiffstore", -4, kWrite, zdiffstore_command);
  add("zunion", -3, kReadOnly, zunion_command, 0, 0);
  add("zinter", -3, kReadOnly, zinter_command, 0, 0);
  add("zdiff", -3, kReadOnly, zdiff_command, 0, 0);
  add("zintercard", -3, kReadOnly, zintercard_command, 0, 0);
  add("zrandmember", -2, kReadOnly, zrandmember_command);
  add("zscan", -3, kReadOnly, zscan_command);
}

}  // namespace redlab::fake
