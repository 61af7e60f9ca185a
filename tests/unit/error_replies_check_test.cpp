// no_error_replies on hand-made traces: it counts what the program got back (the `result` of a
// call, a server error of the given code), not what Script.Run hid with its EVAL fallback, and
// never an error of another code, another class or a longer code that starts the same.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

TraceEvent result(TimeUs t, const std::string& actor, int64_t step, const std::string& error,
                  const std::string& error_class = "server") {
  TraceEvent e{t, "result", actor, -1, step, -1, ""};
  if (error.empty()) return std::move(e).with(F::reply, "1");
  return std::move(e).with(F::error, error).with(F::error_class, error_class);
}

TraceEvent fallback(TimeUs t, const std::string& actor, int64_t step) {
  return TraceEvent{t, "script_fallback", actor, -1, step, -1, ""};
}

CheckResult judge(const Trace& trace, const std::string& code) {
  TraceIndex ix(trace);
  CheckArgs args;
  args.text["error"] = code;
  return run_check("no_error_replies", args, ix);
}

const std::string kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
const std::string kBusy =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

TEST(NoErrorReplies, ACallThatFailedWithTheCodeIsAViolationOfItsActor) {
  Trace t;
  t.append(result(1000, "api", 2, ""));
  t.append(result(2000, "api", 2, kNoScript));
  t.append(result(3000, "api", 2, kNoScript));
  t.append(result(3000, "web", 1, ""));
  CheckResult r = judge(t, "NOSCRIPT");
  ASSERT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, std::vector<std::string>{"api"});
  EXPECT_EQ(r.violations[0].from_us, 2000);
  EXPECT_EQ(r.violations[0].to_us, 3000);
  EXPECT_NE(r.violations[0].text.find("2 calls failed with NOSCRIPT"), std::string::npos)
      << r.violations[0].text;
}

TEST(NoErrorReplies, ANoScriptThatScriptRunAnsweredWithEvalIsNotCounted) {
  Trace t;
  t.append(result(2000, "api", 2, kNoScript));
  t.append(fallback(2000, "api", 2));
  t.append(result(2600, "api", 2, ""));
  CheckResult r = judge(t, "NOSCRIPT");
  ASSERT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(NoErrorReplies, AFallbackHidesOnlyItsOwnCall) {
  Trace t;
  // Another actor's fallback, the same actor's at another step or time, and one fallback for
  // two failures: each leaves a NOSCRIPT the program saw.
  t.append(result(2000, "api", 2, kNoScript));
  t.append(fallback(2000, "other", 2));
  t.append(result(3000, "api", 2, kNoScript));
  t.append(fallback(3000, "api", 3));
  t.append(result(4000, "api", 2, kNoScript));
  t.append(fallback(4001, "api", 2));
  t.append(result(5000, "api", 2, kNoScript));
  t.append(result(5000, "api", 2, kNoScript));
  t.append(fallback(5000, "api", 2));
  CheckResult r = judge(t, "NOSCRIPT");
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("4 calls failed"), std::string::npos) << r.violations[0].text;
}

TEST(NoErrorReplies, OnlyTheWholeCodeOfAServerErrorCounts) {
  Trace t;
  t.append(result(1000, "web1", 1, kBusy));
  t.append(result(2000, "web2", 1, "BUSYGROUP Consumer Group name already exists"));
  t.append(result(3000, "web2", 1, "BUSY but not from the server", "read_timeout"));
  CheckResult busy = judge(t, "BUSY");
  EXPECT_FALSE(busy.ok);
  ASSERT_EQ(busy.violations.size(), 1u);
  EXPECT_EQ(busy.violations[0].who, std::vector<std::string>{"web1"});
  EXPECT_TRUE(judge(t, "NOSCRIPT").ok);
  EXPECT_TRUE(judge(t, "BUS").ok);
  EXPECT_FALSE(judge(t, "BUSYGROUP").ok);
}

TEST(NoErrorReplies, ErrorsOfTheCodeInsideABatchCountAsItsCall) {
  // A TxPipeline's result carries its first failed command's error (go-redis cmdsFirstErr).
  Trace t;
  t.append(TraceEvent{1000, "result", "api", -1, 4, -1, ""}
               .with(F::error, kNoScript)
               .with(F::error_class, "server"));
  EXPECT_FALSE(judge(t, "NOSCRIPT").ok);
}

TEST(NoErrorReplies, NoCallIsNothingToJudge) {
  Trace t;
  t.append(TraceEvent{0, "run_start", "", -1, -1, -1, ""});
  t.append(result(1000, "", -1, kBusy));  // not an actor's call
  CheckResult r = judge(t, "BUSY");
  EXPECT_FALSE(r.judged);
}

}  // namespace
}  // namespace redlab::scenario
