// For tests of a screen in Russian or Czech: the English words the GUI's catalogue uses and the
// other language's entries do not. A word of these on a Russian screen is an English string
// left untranslated; identifiers (actors, keys, Redis commands) are allowed by the caller.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "app/gui/strings.h"

namespace redlab::gui::test_words {

// ASCII words of two letters or more ("lock:job:42" gives "lock" and "job").
inline std::vector<std::string> ascii_words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 2) out.push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80)
      word += c;
    else
      flush();
  }
  flush();
  return out;
}

inline std::set<std::string> words_of_language(Lang lang) {
  std::set<std::string> out;
  for (size_t i = 0; i < kStringCount; i++)
    for (std::string& w : ascii_words(tr(static_cast<S>(i), lang))) out.insert(w);
  return out;
}

// English words of the catalogue that `lang`'s entries never use (so "TTL", "PUBLISH" and "ms"
// in Czech are not counted).
inline std::set<std::string> english_only_words(Lang lang) {
  const std::set<std::string> theirs = words_of_language(lang);
  std::set<std::string> out;
  for (const std::string& w : words_of_language(Lang::en))
    if (!theirs.count(w)) out.insert(w);
  return out;
}

// The words of `text` that are English catalogue words and not allowed (identifiers).
inline std::vector<std::string> english_leaks(std::string_view text, Lang lang,
                                              const std::set<std::string>& allowed) {
  static const std::set<std::string> ru = english_only_words(Lang::ru);
  static const std::set<std::string> cs = english_only_words(Lang::cs);
  const std::set<std::string>& english = lang == Lang::ru ? ru : cs;
  std::vector<std::string> out;
  for (const std::string& w : ascii_words(text))
    if (english.count(w) && !allowed.count(w)) out.push_back(w);
  return out;
}

}  // namespace redlab::gui::test_words
