// The GUI's one catalogue (strings.h): every entry in English, Russian and Czech with the same
// arguments and the right plural forms; plurals and times in each language's words; and the
// checks' verdicts put in words from the trace's facts (verdict_words.h): for every violation of
// every variant of every core scenario, the English words made from the facts are the check's
// own text (so the facts are the check's), and the Russian and Czech words use no English.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "app/gui/strings.h"
#include "app/gui/timeline_model.h"
#include "app/gui/verdict_words.h"
#include "sim/client/errors.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/kinds.h"
#include "sim/scenario/scenario.h"
#include "tests/gui/english_words.h"

namespace redlab::gui {
namespace {

using test_words::english_leaks;

std::set<std::string> placeholders(std::string_view text) {
  std::set<std::string> out;
  for (size_t i = 0; i + 2 < text.size(); i++)
    if (text[i] == '{' && text[i + 1] >= '0' && text[i + 1] <= '9' && text[i + 2] == '}')
      out.insert(std::string(text.substr(i, 3)));
  return out;
}

size_t forms(std::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '|')) + 1;
}

TEST(Strings, EveryEntryInEveryLanguageWithTheSameArgumentsAndItsPluralForms) {
  // Entries that read the same in another language on purpose (units, technical names).
  const std::set<std::string> same_ok = {
      "menu_backend", "col_ttl",    "unit_ms",        "group_label",           "n_keys",
      "key_up_down",  "key_right",  "key_left",       "word_not_judged",       "backend_shown",
      "unit_s",       "in_use_now", "legend_restart", "file_export_chrome_tip"};
  // The what-if words that Czech writes as English does ("server", "restart", "ms").
  const std::set<std::string> same_in_czech = {"wi_server", "wi_w_restart", "wi_ms"};
  for (size_t i = 0; i < kStringCount; i++) {
    const S id = static_cast<S>(i);
    SCOPED_TRACE(string_id_name(id));
    const std::string_view en = tr(id, Lang::en);
    ASSERT_FALSE(en.empty());
    for (Lang lang : {Lang::ru, Lang::cs}) {
      const std::string_view other = tr(id, lang);
      EXPECT_FALSE(other.empty()) << lang_code(lang);
      EXPECT_EQ(placeholders(other), placeholders(en)) << lang_code(lang) << ": " << other;
      // English has one|many; Russian and Czech one|few|many.
      if (forms(en) > 1) {
        EXPECT_EQ(forms(en), 2u);
        EXPECT_EQ(forms(other), 3u) << lang_code(lang) << ": " << other;
      } else {
        EXPECT_EQ(forms(other), 1u) << lang_code(lang) << ": " << other;
      }
      // A translation that is the English word for word was forgotten (unless it is a name).
      const bool letters =
          std::any_of(en.begin(), en.end(), [](char c) { return std::isalpha(c); });
      const bool same_here = same_ok.count(string_id_name(id)) ||
                             (lang == Lang::cs && same_in_czech.count(string_id_name(id)));
      if (letters && !same_here && forms(en) == 1 && en.size() > 3) {
        EXPECT_NE(other, en) << lang_code(lang);
      }
    }
  }
}

TEST(Strings, PluralsAndTimesInEachLanguage) {
  EXPECT_EQ(plural(1, S::messages, Lang::en), "1 message");
  EXPECT_EQ(plural(21, S::messages, Lang::en), "21 messages");
  EXPECT_EQ(plural(1, S::messages, Lang::ru), "1 сообщение");
  EXPECT_EQ(plural(3, S::messages, Lang::ru), "3 сообщения");
  EXPECT_EQ(plural(5, S::messages, Lang::ru), "5 сообщений");
  EXPECT_EQ(plural(11, S::messages, Lang::ru), "11 сообщений");
  EXPECT_EQ(plural(21, S::messages, Lang::ru), "21 сообщение");
  EXPECT_EQ(plural(22, S::messages, Lang::ru), "22 сообщения");
  EXPECT_EQ(plural(112, S::messages, Lang::ru), "112 сообщений");
  EXPECT_EQ(plural(1, S::messages, Lang::cs), "1 zprávu");
  EXPECT_EQ(plural(4, S::messages, Lang::cs), "4 zprávy");
  EXPECT_EQ(plural(5, S::messages, Lang::cs), "5 zpráv");
  EXPECT_EQ(plural(21, S::messages, Lang::cs), "21 zpráv");
  // The words of `redlab show` in English, the decimal comma and the units elsewhere.
  for (TimeUs t : {TimeUs(0), TimeUs(999), TimeUs(41'664), TimeUs(999'999), TimeUs(1'000'000),
                   TimeUs(10'081'336), TimeUs(17'004'320), TimeUs(-2'500'000)})
    EXPECT_EQ(time_words(t, Lang::en), scenario::format_time(t)) << t;
  EXPECT_EQ(time_words(12'500'000, Lang::ru), "12,5 с");
  EXPECT_EQ(time_words(41'664, Lang::ru), "41 мс");
  EXPECT_EQ(time_words(12'500'000, Lang::cs), "12,5 s");
  EXPECT_EQ(seconds_words(10'081'336, Lang::ru), "10,081 с");
  EXPECT_EQ(ruler_words(250'000, Lang::cs), "250 ms");
  EXPECT_EQ(ruler_words(1'500'000, Lang::ru), "1,500 с");
  EXPECT_EQ(names_words({"A", "B", "C"}, Lang::en), "A, B and C");
  EXPECT_EQ(names_words({"A", "B"}, Lang::ru), "A и B");
  EXPECT_EQ(trf(S::v_stale_label, Lang::en, {"33", "34"}), "stale write accepted: fence 33 < 34");
}

// ---- The checks' verdicts in words ----

const char* kCoreScenarios[] = {"ttl-double-holder", "forged-fence", "pubsub-reconnect-loss",
                                "pool-exhaustion", "watch-retry-storm"};

scenario::Scenario load(const std::string& id) {
  return scenario::load_scenario_file(REDLAB_SOURCE_DIR "/scenarios/" + id + ".json");
}

// Every combination of the scenario's variants.
std::vector<std::map<std::string, std::string>> every_variant(const scenario::Scenario& sc) {
  std::vector<std::map<std::string, std::string>> out{{}};
  for (const scenario::Variant& v : sc.variants) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& partial : out)
      for (const std::string& value : v.values) {
        auto one = partial;
        one[v.name] = value;
        next.push_back(one);
      }
    out = std::move(next);
  }
  return out;
}

// The names a sentence may say in any language: actors, servers, resources, keys, locks,
// channels, commands, checks.
std::set<std::string> identifiers(const Trace& trace) {
  std::set<std::string> out;
  auto add = [&](std::string_view text) {
    for (std::string& w : test_words::ascii_words(text)) out.insert(w);
  };
  for (const TraceEvent& e : trace.events()) {
    add(e.actor);
    for (F f : {F::lock, F::key, F::channel, F::resource, F::server, F::group, F::cmd, F::message,
                F::check})
      if (const std::string* s = e.str(f)) add(*s);
    if (const auto* argv = e.list(F::argv); argv && !argv->empty()) add((*argv)[0]);
  }
  for (const char* command : {"PUBLISH", "EXEC", "DEL", "EVAL", "EVALSHA", "KEYS", "WATCH"})
    out.insert(command);
  return out;
}

// What the toolbar, the presenter's line and the variant menus show of a core scenario: each
// parameter's and variant's label and each variant value's words, in Russian and Czech too (a
// value without its words is shown as it is: "off" on a Russian screen).
TEST(Strings, EveryCoreScenarioNamesItsParametersAndVariantValuesInEachLanguage) {
  for (const char* id : kCoreScenarios) {
    SCOPED_TRACE(id);
    const scenario::Scenario sc = load(id);
    auto has_every_language = [](const scenario::Text& t) {
      return t.by_lang.count("en") && t.by_lang.count("ru") && t.by_lang.count("cs");
    };
    for (const auto& p : sc.params) EXPECT_TRUE(has_every_language(p.label)) << p.name;
    for (const scenario::Variant& v : sc.variants) {
      EXPECT_TRUE(has_every_language(v.label)) << v.name;
      for (const std::string& value : v.values) {
        auto it = v.value_labels.find(value);
        ASSERT_NE(it, v.value_labels.end()) << v.name << "=" << value;
        EXPECT_TRUE(has_every_language(it->second)) << v.name << "=" << value;
      }
    }
  }
}

TEST(VerdictWords, EveryViolationOfEveryCoreVariantInEachLanguageFromTheTracesFacts) {
  // The detector itself: English words of the catalogue are caught, identifiers are not.
  ASSERT_EQ(english_leaks("stale write accepted: fence 33 < 34", Lang::ru, {}),
            (std::vector<std::string>{"stale", "write", "accepted", "fence"}));
  ASSERT_TRUE(english_leaks("принята запись: lock:job:42", Lang::ru, {"lock", "job"}).empty());
  size_t violations = 0, checks = 0;
  std::set<int> forms_seen;
  for (const char* id : kCoreScenarios) {
    const scenario::Scenario sc = load(id);
    for (const auto& variant : every_variant(sc)) {
      std::string name = id;
      for (const auto& [k, v] : variant) name += " " + k + "=" + v;
      SCOPED_TRACE(name);
      scenario::RunOptions options;
      options.variant = variant;
      const scenario::RunResult result = scenario::run_scenario(sc, options);
      TimelineModel model;
      model.update(result.trace);
      const std::set<std::string> allowed = identifiers(result.trace);
      std::map<std::string,
               std::pair<std::vector<const ViolationRegion*>, std::vector<ViolationFacts>>>
          by_check;
      for (size_t i : model.violations_by_start()) {
        const ViolationRegion& v = model.violations()[i];
        SCOPED_TRACE(v.text);
        violations++;
        const CheckInfo info = check_info_of(v.check, model.index(), &sc);
        ASSERT_FALSE(info.kind.empty());
        const ViolationFacts facts = violation_facts(v, info, model.index());
        ASSERT_NE(facts.form, ViolationFacts::Form::generic) << "no facts for " << info.kind;
        forms_seen.insert(int(facts.form));
        // The facts are the check's: its own sentence, word for word.
        EXPECT_EQ(violation_words(v, facts, kTimeNeverUs, Lang::en).sentence, v.text);
        for (Lang lang : {Lang::ru, Lang::cs}) {
          const ViolationWords w = violation_words(v, facts, kTimeNeverUs, lang);
          EXPECT_NE(w.sentence, v.text);
          EXPECT_EQ(english_leaks(w.sentence, lang, allowed), std::vector<std::string>{})
              << w.sentence;
          EXPECT_EQ(english_leaks(w.label, lang, allowed), std::vector<std::string>{}) << w.label;
        }
        // Still going: its end is not told.
        if (v.to_us > v.from_us &&
            time_words(v.to_us, Lang::en) != time_words(v.from_us, Lang::en)) {
          const TimeUs mid = (v.from_us + v.to_us) / 2;
          for (Lang lang : {Lang::en, Lang::ru, Lang::cs}) {
            const ViolationWords w = violation_words(v, facts, mid, lang);
            EXPECT_EQ(w.sentence.find(time_words(v.to_us, lang)), std::string::npos) << w.sentence;
            EXPECT_EQ(w.label.find(time_words(v.to_us, lang)), std::string::npos) << w.label;
          }
        }
        by_check[v.check].first.push_back(&v);
        by_check[v.check].second.push_back(facts);
      }
      // Each check's summary: the check's own in English; its words in Russian and Czech.
      for (const TraceCheck& c : model.index().checks()) {
        checks++;
        const CheckInfo info = check_info_of(c.name, model.index(), &sc);
        const auto& [regions, facts] = by_check[c.name];
        std::vector<const ViolationFacts*> facts_of;
        for (const ViolationFacts& f : facts) facts_of.push_back(&f);
        EXPECT_EQ(check_summary_words(c, info, regions, facts_of, model.index(), Lang::en),
                  c.summary);
        for (Lang lang : {Lang::ru, Lang::cs}) {
          const std::string words =
              check_summary_words(c, info, regions, facts_of, model.index(), lang);
          EXPECT_NE(words, c.summary) << c.name;
          EXPECT_EQ(english_leaks(words, lang, allowed), std::vector<std::string>{}) << words;
          const std::string title = check_title(c.name, info.kind, lang);
          EXPECT_NE(title, c.name);
          EXPECT_EQ(english_leaks(title, lang, allowed), std::vector<std::string>{}) << title;
        }
      }
    }
  }
  // What the core scenarios exercise: enough to mean something.
  EXPECT_GE(violations, 55u);
  EXPECT_GE(checks, 90u);
  EXPECT_GE(forms_seen.size(), 10u);
}

// Every lesson, not only the core five: each violation of every variant (seed 1) has its facts
// from the trace, and reads in Russian and Czech with no English word of the catalogue. The
// newer lessons' checks (processed_once, key_final, dials_within, ...) are held here.
TEST(VerdictWords, EveryViolationOfEveryLessonsVariantReadsInEachLanguage) {
  size_t violations = 0;
  std::set<std::string> kinds_seen;
  for (const auto& entry : std::filesystem::directory_iterator(REDLAB_SOURCE_DIR "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const scenario::Scenario sc = scenario::load_scenario_file(entry.path().string());
    for (const auto& variant : every_variant(sc)) {
      std::string name = sc.id;
      for (const auto& [k, v] : variant) name += " " + k + "=" + v;
      SCOPED_TRACE(name);
      scenario::RunOptions options;
      options.variant = variant;
      const scenario::RunResult result = scenario::run_scenario(sc, options);
      TimelineModel model;
      model.update(result.trace);
      const std::set<std::string> allowed = identifiers(result.trace);
      for (size_t i : model.violations_by_start()) {
        const ViolationRegion& v = model.violations()[i];
        SCOPED_TRACE(v.text);
        violations++;
        const CheckInfo info = check_info_of(v.check, model.index(), &sc);
        ASSERT_FALSE(info.kind.empty());
        kinds_seen.insert(info.kind);
        const ViolationFacts facts = violation_facts(v, info, model.index());
        EXPECT_NE(facts.form, ViolationFacts::Form::generic) << "no facts for " << info.kind;
        for (Lang lang : {Lang::ru, Lang::cs}) {
          const ViolationWords w = violation_words(v, facts, kTimeNeverUs, lang);
          EXPECT_EQ(english_leaks(w.sentence, lang, allowed), std::vector<std::string>{})
              << w.sentence;
          EXPECT_EQ(english_leaks(w.label, lang, allowed), std::vector<std::string>{}) << w.label;
        }
      }
    }
  }
  EXPECT_GE(violations, 100u);
  for (const char* kind : {"processed_once", "key_final", "dials_within", "no_wait_behind"})
    EXPECT_TRUE(kinds_seen.count(kind)) << kind;
}

// The two newest kinds say the facts of the run: the record that never said "done", the order
// charged twice.
TEST(VerdictWords, AKeysFinalValueAndATwiceProcessedEntryInRussian) {
  auto first_violation = [](const std::string& id, const std::string& kind) {
    const scenario::Scenario sc = load(id);
    const scenario::RunResult result = scenario::run_scenario(sc, scenario::RunOptions{});
    TimelineModel model;
    model.update(result.trace);
    for (size_t i : model.violations_by_start()) {
      const ViolationRegion& v = model.violations()[i];
      const CheckInfo info = check_info_of(v.check, model.index(), &sc);
      if (info.kind != kind) continue;
      const ViolationFacts facts = violation_facts(v, info, model.index());
      return std::make_pair(v.text, violation_words(v, facts, kTimeNeverUs, Lang::ru));
    }
    return std::make_pair(std::string(), ViolationWords{});
  };
  auto [key_en, key_ru] = first_violation("idempotency-key-crash", "key_final");
  ASSERT_FALSE(key_en.empty());
  EXPECT_NE(key_ru.sentence.find("idem:evt_1042"), std::string::npos) << key_ru.sentence;
  EXPECT_NE(key_ru.sentence.find("а ожидалось done"), std::string::npos) << key_ru.sentence;
  auto [twice_en, twice_ru] = first_violation("streams-consumer-crash", "processed_once");
  ASSERT_FALSE(twice_en.empty());
  EXPECT_NE(twice_ru.sentence.find("обработок — 2"), std::string::npos) << twice_ru.sentence;
  EXPECT_NE(twice_ru.sentence.find(" в "), std::string::npos) << twice_ru.sentence;
}

// Every check kind of the registry (iterated, not listed: a kind added tomorrow is held too)
// has its title, its "it held" sentence and its violations' words in Russian and Czech, with no
// English word of the catalogue in them: without them a Russian or Czech checks panel shows the
// check's English name and the engine's English summary.
TEST(VerdictWords, EveryRegisteredCheckKindHasItsWordsInEveryLanguage) {
  const std::set<std::string> redis_names = {"EVALSHA", "EVAL", "EXEC", "PUBLISH", "KEYS",
                                             "WATCH",   "TTL",  "BUSY", "NOSCRIPT"};
  size_t kinds = 0;
  for (const scenario::CheckKind* kind : scenario::check_kinds()) {
    const std::string name = kind->name;
    SCOPED_TRACE(name);
    kinds++;
    const CheckKindWords* words = check_kind_words(name);
    EXPECT_NE(words, nullptr) << name << " has no words in app/gui/verdict_words.cpp";
    if (!words) continue;
    EXPECT_FALSE(words->ok.empty()) << name;
    EXPECT_FALSE(words->violation.empty()) << name;
    for (Lang lang : {Lang::ru, Lang::cs}) {
      const std::string title = check_title(name, name, lang);
      EXPECT_NE(title, name) << lang_code(lang);
      EXPECT_EQ(english_leaks(title, lang, redis_names), std::vector<std::string>{})
          << lang_code(lang) << ": " << title;
      std::vector<S> ids = words->ok;
      ids.insert(ids.end(), words->violation.begin(), words->violation.end());
      for (S id : ids) {
        const std::string text = tr(id, lang);
        EXPECT_FALSE(text.empty()) << string_id_name(id);
        EXPECT_NE(text, tr(id, Lang::en)) << string_id_name(id) << " in " << lang_code(lang);
        EXPECT_EQ(english_leaks(text, lang, redis_names), std::vector<std::string>{})
            << string_id_name(id) << " in " << lang_code(lang) << ": " << text;
      }
    }
  }
  EXPECT_GE(kinds, 24u);
}

// The inspector's words for the trace: every event kind docs/trace-format.md documents and
// every typed field has words in all three languages, and the Russian and Czech ones use no
// English word of the catalogue (Redis' own names excepted).
std::vector<std::string> documented_kinds() {
  std::ifstream in(REDLAB_SOURCE_DIR "/docs/trace-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t from = doc.find("## Event kinds"), to = doc.find("## The keyspace");
  std::vector<std::string> kinds;
  if (from == std::string::npos || to == std::string::npos) return kinds;
  std::istringstream lines(doc.substr(from, to - from));
  const std::regex name("`([a-z_]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(1, line.find('|', 1) - 1);  // the Kind column
    for (std::sregex_iterator m(first.begin(), first.end(), name), end; m != end; ++m)
      kinds.push_back((*m)[1]);
  }
  return kinds;
}

TEST(Strings, EveryTraceEventKindAndFieldHasWordsInEveryLanguage) {
  const std::set<std::string> redis_names = {"EVALSHA", "EVAL", "EXEC",  "nil",      "WATCH",
                                             "BUSY",    "TTL",  "pub",   "sub",      "id",
                                             "unix",    "busy", "reply", "threshold"};
  const std::vector<std::string> kinds = documented_kinds();
  EXPECT_GE(kinds.size(), 100u);
  for (const std::string& kind : kinds) {
    for (Lang lang : {Lang::en, Lang::ru, Lang::cs}) {
      const char* words = event_kind_words(kind, lang);
      ASSERT_NE(words, nullptr) << kind << " has no words in " << lang_code(lang);
      EXPECT_STRNE(words, "") << kind;
      if (lang != Lang::en) {
        EXPECT_NE(std::string(words), event_kind_words(kind, Lang::en)) << kind;
        EXPECT_EQ(english_leaks(words, lang, redis_names), std::vector<std::string>{})
            << kind << " in " << lang_code(lang) << ": " << words;
      }
    }
  }
  // A kind the catalogue does not know is shown as it is, not as nothing.
  EXPECT_EQ(event_kind_words("no_such_kind", Lang::ru), nullptr);
  EXPECT_EQ(event_kind_label("no_such_kind", Lang::ru), "no_such_kind");
  EXPECT_EQ(event_kind_label("lock_acquired", Lang::ru), "блокировка взята");

  for (size_t i = 0; i < static_cast<size_t>(F::count_); i++) {
    const F field = static_cast<F>(i);
    for (Lang lang : {Lang::en, Lang::ru, Lang::cs}) {
      const std::string words = field_words(field, lang);
      EXPECT_FALSE(words.empty() || words == "?") << field_info(field).name;
      if (lang != Lang::en) {
        EXPECT_EQ(english_leaks(words, lang, redis_names), std::vector<std::string>{})
            << field_info(field).name << " in " << lang_code(lang) << ": " << words;
      }
    }
  }
}

// The library groups the scenarios by topic in the chosen language: a topic without its words
// (a new one) would show in English on a Russian or Czech screen.
TEST(Strings, EveryScenariosTopicHasWordsInEveryLanguage) {
  size_t scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(REDLAB_SOURCE_DIR "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    scenarios++;
    const scenario::Scenario sc = scenario::load_scenario_file(entry.path().string());
    SCOPED_TRACE(sc.id);
    ASSERT_FALSE(sc.topic.empty());
    EXPECT_EQ(topic_words(sc.topic, Lang::en), sc.topic);
    for (Lang lang : {Lang::ru, Lang::cs}) {
      EXPECT_NE(topic_words(sc.topic, lang), sc.topic) << sc.topic << " in " << lang_code(lang);
      EXPECT_EQ(english_leaks(topic_words(sc.topic, lang), lang, {}), std::vector<std::string>{})
          << sc.topic << " in " << lang_code(lang);
    }
  }
  EXPECT_GE(scenarios, 20u);
  EXPECT_EQ(topic_words("no-such-topic", Lang::ru), "no-such-topic");  // shown as it is
}

// A fault event's `fault` is its kind's name (the registry, sim/scenario/registry.cpp): the
// inspector shows each in words, in every language.
TEST(Strings, EveryFaultKindHasWordsInEveryLanguage) {
  ASSERT_GE(scenario::fault_kinds().size(), 10u);
  for (const scenario::FaultKind* kind : scenario::fault_kinds())
    for (Lang lang : {Lang::en, Lang::ru, Lang::cs}) {
      const char* words = field_value_words(F::fault, kind->name, lang);
      ASSERT_NE(words, nullptr) << kind->name << " has no words in " << lang_code(lang);
      EXPECT_STRNE(words, "") << kind->name;
    }
}

// A call's result_class is "ok", "nil" or any error class (client.h result_class): each in
// words, like the error classes themselves.
TEST(Strings, EveryResultAndErrorClassHasWordsInEveryLanguage) {
  std::vector<std::string> classes = {"ok", "nil"};
  for (auto k = static_cast<uint8_t>(client::ErrorKind::Server);
       k <= static_cast<uint8_t>(client::ErrorKind::Closed); k++)
    classes.push_back(client::error_class(static_cast<client::ErrorKind>(k)));
  for (const std::string& c : classes)
    for (Lang lang : {Lang::en, Lang::ru, Lang::cs}) {
      ASSERT_NE(field_value_words(F::result_class, c, lang), nullptr)
          << c << " in " << lang_code(lang);
      if (c != "ok" && c != "nil") {
        EXPECT_STREQ(field_value_words(F::result_class, c, lang),
                     field_value_words(F::error_class, c, lang))
            << c;
      }
    }
}

TEST(Strings, InspectorFieldsShowTimesInTheLanguagesUnits) {
  TraceEvent e;
  e.kind = "lock_acquired";
  e.fields.push_back({F::lock, std::string("lock:job:42")});
  e.fields.push_back({F::ttl_us, int64_t{10'500'000}});
  e.fields.push_back({F::argv, std::vector<std::string>{"SET", "lock:job:42", "t", "NX"}});
  e.fields.push_back({F::fence, int64_t{34}});
  EXPECT_EQ(event_fields_words(e, Lang::en),
            (std::vector<std::string>{"lock: lock:job:42", "TTL: 10.500 s",
                                      "command: SET lock:job:42 t NX", "fence: 34"}));
  const std::vector<std::string> ru = event_fields_words(e, Lang::ru);
  ASSERT_EQ(ru.size(), 4u);
  EXPECT_EQ(ru[0], "блокировка: lock:job:42");
  EXPECT_EQ(ru[1].rfind("TTL: 10,500 ", 0), 0u) << ru[1];
  EXPECT_EQ(ru[3], "fencing-токен: 34");
}

TEST(Strings, SpeedInTheLanguagesDecimalMark) {
  EXPECT_EQ(speed_words(1.0, Lang::en), "1.0x");
  EXPECT_EQ(speed_words(1.5, Lang::ru), "1,5\u00d7");
  EXPECT_EQ(speed_words(20.0, Lang::cs), "20,0\u00d7");
}

// A trace recorded in English reads in Russian and Czech too: its narration carries every
// language (`texts`), so a saved trace replayed with the language selector has no English note.
TEST(Strings, ARecordedTracesNarrationReadsInEveryLanguage) {
  const scenario::Scenario sc = load("ttl-double-holder");
  scenario::RunOptions options;
  options.lang = "en";
  const scenario::RunResult result = scenario::run_scenario(sc, options);
  // Through the file format, as a replay reads it.
  std::optional<Trace> replayed = trace_from_json(trace_to_json(result.trace));
  ASSERT_TRUE(replayed);
  TimelineModel model;
  model.update(*replayed);
  size_t narration = 0;
  for (const Note& n : model.notes()) {
    if (!n.actor.empty()) continue;
    narration++;
    EXPECT_EQ(n.text_in(size_t(Lang::en)), n.text);
    for (Lang lang : {Lang::ru, Lang::cs}) {
      const std::string& said = n.text_in(size_t(lang));
      EXPECT_NE(said, n.text) << lang_code(lang);
      EXPECT_EQ(english_leaks(said, lang, {"lock", "job"}), std::vector<std::string>{}) << said;
    }
    EXPECT_NE(std::count_if(n.text_in(size_t(Lang::ru)).begin(), n.text_in(size_t(Lang::ru)).end(),
                            [](char c) { return static_cast<unsigned char>(c) >= 0xD0; }),
              0);
  }
  EXPECT_GE(narration, 3u);
}

}  // namespace
}  // namespace redlab::gui
