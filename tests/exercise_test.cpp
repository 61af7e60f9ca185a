// Every exercise is honest: its reference solution passes and every wrong answer in
// tests/exercises/<scenario>/wrong/ fails, with a message naming the check the mistake
// breaks and the seed where it showed. A wrong answer names that check on a line
// "-- fails: CHECK" (Lua) or "# fails: CHECK" (settings). Answers are Lua scripts (*.lua, for
// the exercise's script) or settings (*.args: the --variant/--set flags a student would give,
// one flag per line).
//
// The grader runs as a child process (redlab check), as a student runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/child.h"

namespace fs = std::filesystem;

namespace {

const fs::path kExercises = fs::path(REDLAB_SOURCE_DIR) / "tests" / "exercises";

struct Answer {
  std::string scenario;
  fs::path file;
  bool wrong = false;
  std::string fails;  // the check a wrong answer must fail
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The flags of an answer: --script NAME=FILE for a script, the file's flags for settings.
std::vector<std::string> answer_flags(const Answer& a, const std::string& script) {
  if (a.file.extension() == ".lua") return {"--script", script + "=" + a.file.string()};
  std::vector<std::string> flags;
  for (const std::string& line : lines_of(redlab::test::slurp_file(a.file))) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) flags.push_back(w);
  }
  return flags;
}

std::vector<Answer> all_answers() {
  std::vector<Answer> out;
  if (!fs::is_directory(kExercises)) return out;
  std::vector<fs::path> dirs;
  for (auto& d : fs::directory_iterator(kExercises))
    if (d.is_directory()) dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    std::string id = dir.filename().string();
    for (const char* name : {"solution.lua", "solution.args"})
      if (fs::exists(dir / name)) out.push_back(Answer{id, dir / name, false, ""});
    std::vector<fs::path> wrong;
    if (fs::is_directory(dir / "wrong"))
      for (auto& f : fs::directory_iterator(dir / "wrong")) wrong.push_back(f.path());
    std::sort(wrong.begin(), wrong.end());
    for (const fs::path& f : wrong) {
      Answer a{id, f, true, ""};
      for (const std::string& line : lines_of(redlab::test::slurp_file(f))) {
        for (const char* marker : {"-- fails: ", "# fails: "})
          if (line.rfind(marker, 0) == 0) a.fails = line.substr(std::string(marker).size());
      }
      out.push_back(a);
    }
  }
  return out;
}

// The script an exercise replaces, from `redlab check`'s own header line.
std::string exercise_script(const std::string& scenario) {
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(scenario); it != cache.end()) return it->second;
  redlab::test::Child c =
      redlab::test::run_child(REDLAB_BINARY, {"check", scenario, "--seeds", "1"});
  std::string script;
  const std::string marker = "(no --script ";
  if (size_t at = c.out.find(marker); at != std::string::npos) {
    size_t from = at + marker.size();
    script = c.out.substr(from, c.out.find('=', from) - from);
  }
  return cache[scenario] = script;
}

class Exercise : public ::testing::TestWithParam<Answer> {};

TEST_P(Exercise, IsGradedByWhatTheRunDid) {
  const Answer& a = GetParam();
  std::string script = a.file.extension() == ".lua" ? exercise_script(a.scenario) : "";
  if (a.file.extension() == ".lua") {
    ASSERT_FALSE(script.empty()) << a.scenario << " has no script exercise";
  }
  std::vector<std::string> args{"check", a.scenario};
  for (const std::string& f : answer_flags(a, script)) args.push_back(f);
  redlab::test::Child c = redlab::test::run_child(REDLAB_BINARY, args);
  SCOPED_TRACE(a.file.string() + "\n" + c.out + c.err);
  EXPECT_TRUE(c.err.empty());
  // The grader says what it checks before the verdict.
  EXPECT_NE(c.out.find("judged from"), std::string::npos);
  if (!a.wrong) {
    EXPECT_EQ(c.status, 0);
    EXPECT_NE(c.out.find("PASS " + a.scenario), std::string::npos);
    return;
  }
  ASSERT_FALSE(a.fails.empty()) << "a wrong answer names the check it fails (-- fails: CHECK)";
  EXPECT_EQ(c.status, 1);
  // "FAIL <id>: seed N:" and a line per failed check, "  <check> should hold, but: ...":
  // what went wrong, where, and how to replay it.
  std::string head = "FAIL " + a.scenario + ": seed ";
  size_t at = c.out.find(head);
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(c.out.find("\n  " + a.fails + " ", at), std::string::npos) << "names " << a.fails;
  EXPECT_NE(c.out.find("replay: redlab run " + a.scenario + " --seed "), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Answers, Exercise, ::testing::ValuesIn(all_answers()),
                         [](const ::testing::TestParamInfo<Answer>& info) {
                           std::string name = info.param.scenario + "_" +
                                              (info.param.wrong ? "wrong_" : "") +
                                              info.param.file.stem().string();
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Every shipped scenario (the core five and issue 14's lessons): scenarios/ID.json.
TEST(Exercise, EveryScenarioHasAnExerciseWithFourWrongAnswers) {
  std::map<std::string, int> wrong;
  std::map<std::string, bool> solution;
  for (const Answer& a : all_answers())
    (a.wrong ? wrong[a.scenario]++ : solution[a.scenario] = true, 0);
  std::vector<std::string> ids;
  for (auto& f : fs::directory_iterator(fs::path(REDLAB_SOURCE_DIR) / "scenarios"))
    if (f.path().extension() == ".json") ids.push_back(f.path().stem().string());
  EXPECT_GE(ids.size(), 6u);
  for (const std::string& id : ids) {
    EXPECT_TRUE(solution[id]) << id;
    EXPECT_GE(wrong[id], 4) << id;
  }
}

TEST(Exercise, ASettingsExerciseRefusesWhatItDoesNotLetYouChoose) {
  redlab::test::Child c = redlab::test::run_child(
      REDLAB_BINARY, {"check", "ttl-double-holder", "--variant", "watchdog=on"});
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("this exercise fixes its settings"), std::string::npos) << c.err;
}

}  // namespace
