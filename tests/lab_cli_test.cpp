// The lab's headless commands, as a child process: `redlab sweep` (a parameter over a range,
// each check's outcome at every point) and `redlab diff` (two runs compared: inputs,
// verdicts, the first divergence, events and fields that differ, timing beyond the
// tolerance). What a teacher reads off them must be what the runs did.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/child.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using redlab::test::Child;

Child redlab(const std::vector<std::string>& args) {
  return redlab::test::run_child(REDLAB_BINARY, args);
}

// One line on stderr, no stdout, exit 2: the contract for bad input.
void expect_usage_error(const std::vector<std::string>& args, const std::string& needle) {
  Child c = redlab(args);
  std::string line = args.empty() ? "" : args[0];
  for (size_t i = 1; i < args.size(); i++) line += " " + args[i];
  EXPECT_EQ(c.status, 2) << line << "\n" << c.out << c.err;
  EXPECT_EQ(c.out, "") << line;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << line << ": " << c.err;
  EXPECT_NE(c.err.find(needle), std::string::npos) << line << ": " << c.err;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "redlab-lab-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// ---- sweep ----

// The watchdog protects until the pause outlasts the TTL left since its last extend: with a
// 10 s TTL extended every 3333 ms, the pause at 2 s finds 8 s left. The sweep shows the
// lock held through 8 s of pause and lost from 9 s, in every seed.
TEST(Sweep, FindsWhereTheWatchdogStopsProtecting) {
  Child c =
      redlab({"sweep", "ttl-double-holder", "--param", "pause_ms", "--from", "0", "--to", "12000",
              "--steps", "13", "--seeds", "3", "--variant", "watchdog=on", "--json"});
  ASSERT_EQ(c.status, 0) << c.err;
  json j = json::parse(c.out);
  EXPECT_EQ(j["param"], "pause_ms");
  ASSERT_EQ(j["points"].size(), 13u);
  EXPECT_EQ(j["runs"], 39);
  for (const auto& p : j["points"]) {
    int64_t value = p["value"];
    EXPECT_EQ(value % 1000, 0);
    for (const auto& ch : p["checks"]) {
      if (ch["name"] != "mutual_exclusion") continue;
      if (value <= 8000) {
        EXPECT_EQ(ch["violated"], 0) << value;
      }
      if (value >= 9000) {
        EXPECT_EQ(ch["violated"], 3) << value;
        EXPECT_EQ(ch["first_seed"], 1) << value;
        EXPECT_NE(ch["replay"].get<std::string>().find("--set pause_ms=" + std::to_string(value)),
                  std::string::npos);
      }
    }
    EXPECT_EQ(p["expectation_unmet"], 0) << value;
  }
  // The text says where it changes, and how to replay the first violation.
  Child t = redlab({"sweep", "ttl-double-holder", "--param", "pause_ms", "--from", "0", "--to",
                    "12000", "--steps", "13", "--seeds", "3", "--variant", "watchdog=on"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("mutual_exclusion: violated from 9000 (held at 8000)"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("replay: redlab run ttl-double-holder --seed 1 --variant watchdog=on "
                       "--set pause_ms=9000"),
            std::string::npos)
      << t.out;
}

// The tally is the same whatever the threads did: every (point, seed) lands in its place.
TEST(Sweep, SameInputsSamePoints) {
  std::vector<std::string> args{
      "sweep", "watch-retry-storm", "--param", "buyers",  "--from", "5",     "--to",
      "40",    "--steps",           "8",       "--seeds", "4",      "--json"};
  json a = json::parse(redlab(args).out), b = json::parse(redlab(args).out);
  EXPECT_EQ(a["points"], b["points"]);
  EXPECT_EQ(a["runs"], 32);
}

TEST(Sweep, BadRequestsAreOneLineErrors) {
  expect_usage_error({"sweep", "ttl-double-holder"}, "needs --param");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "nope"},
                     "has no such parameter (it has ttl_ms, work_ms, pause_ms)");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "ttl_ms", "--from", "10"},
                     "--from 10: ttl_ms goes from 1000 to 60000");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "ttl_ms", "--steps", "0"},
                     "--steps");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "ttl_ms", "--set", "ttl_ms=5000"},
                     "that is the parameter being swept");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "ttl_ms", "--variant", "x=y"}, "x");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "ttl_ms", "--backend", "spawn"},
                     "unknown option --backend");
}

// ---- diff ----

struct Runs {
  TempDir dir;
  std::string trace(const std::string& name, const std::vector<std::string>& flags) {
    std::string path = dir.file(name + ".json");
    std::vector<std::string> args{"run", "ttl-double-holder", "--trace", path};
    args.insert(args.end(), flags.begin(), flags.end());
    Child c = redlab(args);
    EXPECT_TRUE(c.status == 0 || c.status == 1) << c.err;
    return path;
  }
  std::string json_output(const std::string& name, const std::vector<std::string>& flags) {
    std::string path = dir.file(name + ".out.json");
    std::vector<std::string> args{"run", "ttl-double-holder", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    Child c = redlab(args);
    std::ofstream(path) << c.out;
    return path;
  }
};

TEST(Diff, ARunAgainstItselfDiffersInNothing) {
  Runs r;
  std::string a = r.trace("a", {});
  Child c = redlab({"diff", a, a});
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("verdicts: the same (4 checks, expectation met)"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("no event differs (and no timing beyond the tolerance)"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("0 only in A, 0 only in B, 0 in their fields, 0 in timing"),
            std::string::npos)
      << c.out;
}

// Another seed: the same story with other lock tokens and another jitter. Tokens are renamed
// by role, so no reply differs; C's start differs by its jitter, beyond 50 ms.
TEST(Diff, AnotherSeedIsTheSameStoryAtOtherTimes) {
  Runs r;
  Child c = redlab({"diff", r.trace("a", {}), r.trace("b", {"--seed", "2"}), "--json"});
  EXPECT_EQ(c.status, 0) << c.err;
  json j = json::parse(c.out);
  EXPECT_EQ(j["verdicts_differ"], false);
  EXPECT_EQ(j["inputs_differ"], json::array({"seed 1 / 2"}));
  EXPECT_EQ(j["counts"]["value"], 0);
  EXPECT_EQ(j["counts"]["only_in_a"], 0);
  EXPECT_EQ(j["counts"]["only_in_b"], 0);
  EXPECT_GT(j["counts"]["timing"], 0);
  EXPECT_FALSE(j.contains("first_divergence"));
  EXPECT_EQ(j["tolerance_ms"], 50);  // the scenario's, written into the trace
}

// The fix against the bug: the verdict that flips, the moment the runs part (A's release at
// 12 s: DEL against the compare-and-delete script), what only one run has. Exit status 1.
TEST(Diff, TheFixFlipsAVerdictAndPartsAtTheRelease) {
  Runs r;
  std::string del = r.trace("del", {}), lua = r.trace("lua", {"--variant", "release=lua"});
  Child c = redlab({"diff", del, lua});
  EXPECT_EQ(c.status, 1) << c.err;
  EXPECT_NE(c.out.find("variant.release del / lua"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("VERDICTS DIFFER:\n  no_foreign_unlock: violated (2) / held"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("first divergence at 12.0 s: A's lock_release (step 3) lock:job:42: "
                       "method del / lua"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("only in A  A's lock_released (step 3) lock:job:42"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("not compared, recorded by B only: lock_lost, script_fallback"),
            std::string::npos)
      << c.out;
  // From `run --json` outputs only the verdicts can be compared, and it says so.
  Child v = redlab(
      {"diff", r.json_output("del", {}), r.json_output("lua", {"--variant", "release=lua"})});
  EXPECT_EQ(v.status, 1) << v.err;
  EXPECT_NE(v.out.find("no_foreign_unlock: violated (2) / held"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("only verdicts compared"), std::string::npos) << v.out;
  // A trace against a --json object of the same run: the same verdicts.
  Child m = redlab({"diff", del, r.json_output("del2", {})});
  EXPECT_EQ(m.status, 0) << m.out << m.err;
}

TEST(Diff, BadInputIsAOneLineError) {
  Runs r;
  std::string a = r.trace("a", {});
  expect_usage_error({"diff", a}, "needs two runs");
  expect_usage_error({"diff", a, r.dir.file("missing.json")}, "missing.json");
  std::string junk = r.dir.file("junk.json");
  std::ofstream(junk) << "{\"hello\": 1}";
  expect_usage_error({"diff", a, junk}, "not a redlab run");
  std::string text = r.dir.file("text.json");
  std::ofstream(text) << "not json at all";
  expect_usage_error({"diff", text, a}, "not JSON");
  expect_usage_error({"diff", a, a, "--tolerance-ms", "-3"}, "--tolerance-ms -3");
  expect_usage_error({"diff", a, a, "--frobnicate"}, "unknown option --frobnicate");
}

// ---- interventions (--fault) ----

// The verdict of a check in a `run --json` object: "held", "violated" or "not judged".
std::string verdict_of(const json& run, const std::string& check) {
  for (const auto& c : run["checks"])
    if (c["name"] == check) return c["ok"].get<bool>() ? "held" : "violated";
  return "absent";
}

// With the watchdog on and no pause of its own (pause_ms=0), A keeps the lock; an
// intervention that freezes A for 14 s at 3 s outlasts the 10 s TTL: B gets the lock while A
// still believes it holds it. The same intervention, shorter than the TTL left, changes
// nothing. The trace names the intervention, and the file's expectation is not applied.
TEST(Interventions, APauseAtAMomentFlipsMutualExclusion) {
  TempDir dir;
  std::vector<std::string> base = {"run",   "ttl-double-holder", "--variant", "watchdog=on",
                                   "--set", "pause_ms=0",        "--json"};
  Child plain = redlab(base);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(verdict_of(json::parse(plain.out), "mutual_exclusion"), "held");

  std::string trace = dir.file("t.json");
  auto with = base;
  with.insert(with.end(), {"--fault", "pause A at 3000 for 14000", "--trace", trace});
  Child paused = redlab(with);
  ASSERT_EQ(paused.status, 0) << paused.err;  // no expectation to miss
  json j = json::parse(paused.out);
  EXPECT_EQ(verdict_of(j, "mutual_exclusion"), "violated") << paused.out;
  std::ifstream in(trace);
  json t = json::parse(in);
  EXPECT_EQ(t["meta"]["intervention.1"], "pause A at 3000 for 14000");

  auto brief = base;
  brief.insert(brief.end(), {"--fault", "pause A at 3s for 1.5s"});
  Child short_pause = redlab(brief);
  ASSERT_EQ(short_pause.status, 0) << short_pause.err;
  EXPECT_EQ(verdict_of(json::parse(short_pause.out), "mutual_exclusion"), "held");

  // The text report says why there is no expectation.
  Child text = redlab({"run", "ttl-double-holder", "--fault", "disconnect B at 11000"});
  EXPECT_NE(text.out.find("no expectation (the run has interventions"), std::string::npos)
      << text.out;
}

// Same inputs and interventions, same bytes; the order of two interventions is kept.
TEST(Interventions, AreDeterministicAndRepeatable) {
  TempDir dir;
  auto run = [&](const std::string& name) {
    std::string f = dir.file(name);
    Child c =
        redlab({"run", "forged-fence", "--seed", "3", "--fault", "clock_jump redis at 4000 by 5000",
                "--fault", "pause A at 1s for 2s", "--trace", f});
    EXPECT_EQ(c.status == 0 || c.status == 1, true) << c.err;
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string a = run("a.json"), b = run("b.json");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  json t = json::parse(a);
  EXPECT_EQ(t["meta"]["intervention.1"], "clock_jump redis at 4000 by 5000");
  EXPECT_EQ(t["meta"]["intervention.2"], "pause A at 1s for 2s");
}

TEST(Interventions, BadOnesAreOneLineErrorsBeforeAnyRun) {
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause Z at 3000 for 1000"},
                     "intervention \"pause Z at 3000 for 1000\": actor: no actor named \"Z\"");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause A at 3000"},
                     "missing key \"for_ms\"");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause A at 3x for 1000"},
                     "(column 12): \"3x\" is not a time");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "explode A at 3000"},
                     "unknown fault \"explode\"");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause A for 1000"},
                     "missing \"at MS\"");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause A at 1000 at 2000"},
                     "\"at\" given twice");
  expect_usage_error({"run", "ttl-double-holder", "--fault", ""}, "empty");
  expect_usage_error({"run", "ttl-double-holder", "--fault", "pause A at 0.5ms for 1"},
                     "not a time");
  expect_usage_error({"sweep", "ttl-double-holder", "--param", "pause_ms", "--from", "0", "--to",
                      "1000", "--steps", "2", "--fault", "pause Nobody at 1 for 1"},
                     "no actor named");
  // An exercise is graded on its own seeds and settings: no interventions there.
  expect_usage_error({"check", "ttl-double-holder", "--fault", "pause A at 1 for 1"},
                     "unknown option --fault");
}

// A sweep runs every point with the interventions: a pause of A at 3 s for longer than the
// watchdog's TTL breaks mutual exclusion at every point of an unrelated parameter.
TEST(Interventions, ApplyToEveryRunOfASweep) {
  Child c = redlab({"sweep", "ttl-double-holder", "--param", "work_ms", "--from", "3000", "--to",
                    "12000", "--steps", "4", "--seeds", "2", "--variant", "watchdog=on", "--set",
                    "pause_ms=0", "--fault", "pause A at 2500 for 14000", "--json"});
  ASSERT_EQ(c.status, 0) << c.err;
  json j = json::parse(c.out);
  for (const auto& p : j["points"]) {
    for (const auto& ch : p["checks"])
      if (ch["name"] == "mutual_exclusion") {
        EXPECT_EQ(ch["violated"], 2) << p.dump();
      }
    // The interventions take the file's expectations away, as in `redlab run`: no point
    // meets or misses one.
    EXPECT_FALSE(p.contains("expectation_unmet")) << p.dump();
  }
  EXPECT_EQ(j["expectation"], false);
  // The table says so too, instead of an "expectation: met" column.
  Child t =
      redlab({"sweep", "ttl-double-holder", "--param", "work_ms", "--from", "3000", "--to", "12000",
              "--steps", "2", "--seeds", "1", "--fault", "pause A at 2500 for 14000"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(t.out.find(" met"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("no expectation (the runs have interventions"), std::string::npos) << t.out;
  // Without interventions the sweep has one.
  Child plain = redlab({"sweep", "ttl-double-holder", "--param", "work_ms", "--from", "3000",
                        "--to", "12000", "--steps", "2", "--seeds", "1", "--json"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  json pj = json::parse(plain.out);
  EXPECT_EQ(pj["expectation"], true);
  EXPECT_TRUE(pj["points"][0].contains("expectation_unmet"));
}

// ---- Branch files ----

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A branch file is the flags it stands for: the same trace, byte for byte, as `redlab run`
// with its seed, variants, parameters and interventions; with --json it says its
// interventions; what the command line adds wins.
TEST(Branch, RunsAsItsFlagsWould) {
  TempDir dir;
  const std::string branch = dir.file("b.json");
  write_file(branch, R"({
  "format": "redlab-branch",
  "version": 1,
  "scenario": "ttl-double-holder",
  "seed": 4,
  "lang": "ru",
  "variant": {"watchdog": "on"},
  "params": {"work_ms": 13000},
  "interventions": ["pause A at 3000 for 15000", "clock_jump redis at 20000 by 2000"],
  "scripts": {}
})");
  const std::string a = dir.file("a.json"), b = dir.file("flags.json");
  Child from_branch = redlab({"run", branch, "--trace", a});
  ASSERT_EQ(from_branch.status, 0) << from_branch.err;
  Child from_flags =
      redlab({"run", "ttl-double-holder", "--seed", "4", "--lang", "ru", "--variant", "watchdog=on",
              "--set", "work_ms=13000", "--fault", "pause A at 3000 for 15000", "--fault",
              "clock_jump redis at 20000 by 2000", "--trace", b});
  ASSERT_EQ(from_flags.status, 0) << from_flags.err;
  EXPECT_FALSE(read_file(a).empty());
  EXPECT_EQ(read_file(a), read_file(b));
  EXPECT_EQ(from_branch.out, from_flags.out);

  Child j = redlab({"run", branch, "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  json out = json::parse(j.out);
  EXPECT_EQ(out["seed"], 4);
  EXPECT_EQ(out["interventions"].size(), 2u);
  EXPECT_EQ(verdict_of(out, "mutual_exclusion"), "violated");

  Child other_seed =
      redlab({"run", branch, "--json", "--seed", "5", "--fault", "disconnect B at 1000"});
  ASSERT_EQ(other_seed.status, 0) << other_seed.err;
  json o = json::parse(other_seed.out);
  EXPECT_EQ(o["seed"], 5);
  ASSERT_EQ(o["interventions"].size(), 3u);
  EXPECT_EQ(o["interventions"][2], "disconnect B at 1000");
}

// A scenario file named by a relative path is read from the branch file's directory, wherever
// redlab runs; a path to nothing is said with the branch file's name.
TEST(Branch, ARelativeScenarioPathIsTheBranchFilesNeighbour) {
  TempDir dir;
  fs::create_directories(dir.file("lessons"));
  fs::copy_file(REDLAB_SOURCE_DIR "/scenarios/ttl-double-holder.json",
                dir.file("lessons/mine.json"));
  write_file(dir.file("b.json"),
             R"({"format": "redlab-branch", "version": 1, "scenario": "lessons/mine.json",)"
             R"( "variant": {"watchdog": "on"}, "interventions": ["pause A at 3000 for 15000"]})");
  Child c = redlab({"run", dir.file("b.json"), "--json"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(verdict_of(json::parse(c.out), "mutual_exclusion"), "violated");
  write_file(dir.file("b.json"),
             R"({"format": "redlab-branch", "version": 1, "scenario": "missing/x.json"})");
  expect_usage_error({"run", dir.file("b.json")}, dir.file("b.json") + ": \"scenario\": ");
  expect_usage_error({"run", dir.file("b.json")}, dir.file("missing/x.json"));
}

// Bad branch files: one line naming the file, the place and what is wrong; exit 2.
TEST(Branch, BadFilesAreOneLocatedLine) {
  TempDir dir;
  struct Case {
    std::string text, needle;
  };
  const std::string head = R"({"format": "redlab-branch", "version": 1, )";
  const std::vector<Case> cases = {
      {head + R"("scenario": "ttl-double-holder", "seed": -1})",
       ":1:84: \"seed\": expected an integer, 0 or more"},
      {R"({"format": "redlab-branch", "version": 2, "scenario": "ttl-double-holder"})",
       ":1:40: \"version\": expected 1"},
      {head + R"("scenario": "ttl-double-holder", "colour": 1})", ":1:76: unknown key \"colour\""},
      {head + R"("seed": 1})", ":1:1: missing \"scenario\""},
      {head + R"("scenario": "ttl-double-holder",})", ":1:75: expected string key"},
      {head + R"("scenario": "ttl-double-holder", "interventions": "pause A"})",
       ":1:93: \"interventions\": expected an array"},
      {head + R"("scenario": "ttl-double-holder", "params": {"ttl_ms": "10s"}})",
       ":1:97: \"params\".ttl_ms: expected an integer"},
      {head + R"("scenario": "ttl-double-holder", "lang": "de"})", "\"lang\": expected"},
      {head + R"("scenario": "ttl-double-holder", "interventions": ["pause Z at 3000 for 1000"]})",
       "intervention \"pause Z at 3000 for 1000\": actor: no actor named \"Z\""},
      {head + R"("scenario": "ttl-double-holder", "variant": {"watchdog": "maybe"}})",
       "\"maybe\" is not a value of watchdog"},
      {head + R"("scenario": "no-such-lesson"})", "\"scenario\": no scenario \"no-such-lesson\""},
  };
  for (size_t i = 0; i < cases.size(); i++) {
    const std::string file = dir.file("bad" + std::to_string(i) + ".json");
    write_file(file, cases[i].text);
    SCOPED_TRACE(cases[i].text);
    expect_usage_error({"run", file}, file);
    expect_usage_error({"run", file, "--json"}, cases[i].needle);
  }
  const std::string good = dir.file("good.json");
  write_file(good, head + R"("scenario": "ttl-double-holder"})");
  expect_usage_error({"check", good}, "a branch file");
  // A trace may not overwrite its branch file.
  expect_usage_error({"run", good, "--trace", good}, "the branch file");
}

}  // namespace
