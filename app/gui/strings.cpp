// The catalogue's lookup, plurals and the words for times (see strings.h).
#include "app/gui/strings.h"

#include <array>
#include <cstdio>

namespace redlab::gui {

namespace {

struct Entry {
  const char* name;
  std::array<const char*, kLangCount> text;
};

const Entry kEntries[] = {
#define REDLAB_GUI_STRING_ENTRY(id, en, ru, cs) {#id, {en, ru, cs}},
    REDLAB_GUI_STRINGS(REDLAB_GUI_STRING_ENTRY)
#undef REDLAB_GUI_STRING_ENTRY
};
static_assert(sizeof kEntries / sizeof kEntries[0] == kStringCount);

// Which plural form: 0 one, 1 few, 2 many (English: 0 one, 1 many).
size_t plural_index(int64_t n, Lang lang) {
  const int64_t a = n < 0 ? -n : n;
  switch (lang) {
    case Lang::en:
      return a == 1 ? 0 : 1;
    case Lang::ru: {
      const int64_t ten = a % 10, hundred = a % 100;
      if (ten == 1 && hundred != 11) return 0;
      if (ten >= 2 && ten <= 4 && (hundred < 12 || hundred > 14)) return 1;
      return 2;
    }
    case Lang::cs:
      return a == 1 ? 0 : a >= 2 && a <= 4 ? 1 : 2;
  }
  return 0;
}

// The decimal mark: Russian and Czech write 12,5.
std::string decimal(std::string number, Lang lang) {
  if (lang != Lang::en)
    for (char& c : number)
      if (c == '.') c = ',';
  return number;
}

}  // namespace

Lang lang_of(std::string_view code) {
  if (code == "ru") return Lang::ru;
  if (code == "cs") return Lang::cs;
  return Lang::en;
}

const char* lang_code(Lang lang) {
  return lang == Lang::ru ? "ru" : lang == Lang::cs ? "cs" : "en";
}

const char* tr(S id, Lang lang) {
  const size_t i = static_cast<size_t>(id);
  if (i >= kStringCount) return "?";
  return kEntries[i].text[static_cast<size_t>(lang)];
}

const char* string_id_name(S id) {
  const size_t i = static_cast<size_t>(id);
  return i < kStringCount ? kEntries[i].name : "?";
}

std::string trf(S id, Lang lang, std::initializer_list<std::string_view> args) {
  const std::string_view text = tr(id, lang);
  std::string out;
  out.reserve(text.size() + 32);
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '{' && i + 2 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9' &&
        text[i + 2] == '}') {
      const size_t k = static_cast<size_t>(text[i + 1] - '0');
      if (k < args.size()) {
        out += *(args.begin() + k);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::string plural_form(int64_t n, S forms, Lang lang) {
  const std::string_view all = tr(forms, lang);
  size_t want = plural_index(n, lang), start = 0;
  for (size_t k = 0; k < want; k++) {
    size_t bar = all.find('|', start);
    if (bar == std::string_view::npos) break;  // fewer forms: the last one
    start = bar + 1;
  }
  const size_t end = all.find('|', start);
  return std::string(
      all.substr(start, end == std::string_view::npos ? all.size() - start : end - start));
}

std::string plural(int64_t n, S forms, Lang lang) {
  return std::to_string(n) + " " + plural_form(n, forms, lang);
}

std::string time_words(TimeUs t, Lang lang) {
  if (t < 0) return "-" + time_words(-t, lang);
  if (t < kUsPerSecond) return std::to_string(t / kUsPerMs) + " " + tr(S::unit_ms, lang);
  // Tenths of a second, rounded down, as scenario::format_time writes them.
  return decimal(std::to_string(t / kUsPerSecond) + "." + std::to_string((t / 100000) % 10), lang) +
         " " + tr(S::unit_s, lang);
}

std::string seconds_words(TimeUs t, Lang lang) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(t) / kUsPerSecond);
  return decimal(buf, lang) + " " + tr(S::unit_s, lang);
}

std::string speed_words(double speed, Lang lang) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", speed);
  return decimal(buf, lang) + (lang == Lang::en ? "x" : "\u00d7");
}

std::string ruler_words(TimeUs t, Lang lang) {
  char buf[48];
  const TimeUs a = t < 0 ? -t : t;
  if (t == 0) return "0";  // the start of the run, whatever the ruler's unit
  if (a >= kUsPerSecond) {
    std::snprintf(buf, sizeof buf, "%.*f", a % kUsPerSecond == 0 ? 0 : 3,
                  static_cast<double>(t) / kUsPerSecond);
    return decimal(buf, lang) + " " + tr(S::unit_s, lang);
  }
  if (a >= kUsPerMs) {
    std::snprintf(buf, sizeof buf, "%.*f", a % kUsPerMs == 0 ? 0 : 3,
                  static_cast<double>(t) / kUsPerMs);
    return decimal(buf, lang) + " " + tr(S::unit_ms, lang);
  }
  return std::to_string(t) + " " + tr(S::unit_us, lang);
}

std::string topic_words(const std::string& topic, Lang lang) {
  for (S id : {S::topic_clients, S::topic_locks, S::topic_messaging, S::topic_transactions,
               S::topic_scripts, S::topic_atomicity, S::topic_other})
    if (topic == tr(id, Lang::en)) return tr(id, lang);
  return topic;
}

std::string names_words(const std::vector<std::string>& names, Lang lang) {
  std::string out;
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0) out += i + 1 == names.size() ? std::string(" ") + tr(S::and_word, lang) + " " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace redlab::gui
