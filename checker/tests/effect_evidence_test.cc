// Coverage with effect evidence: a run that declares "effects":true counts a
// fault as bitten only when a window met lock work AND its "effect" event says the effect
// was seen; a window whose effect was never seen leaves the trial unknown, naming the
// fault and what was looked at. Histories without the declaration (older runs, other
// tools) are judged exactly as before.
#include <gtest/gtest.h>

#include "checker/tests/history_text.h"
#include "checker/verdict.h"

namespace locklab::checker {
namespace {

// Two clients take turns on one key; a clock-jump window is open over client 1's hold.
// START is the run start's value; EFFECT the window's effect event line (or nothing).
std::string RunWith(const std::string& start, const std::string& effect) {
  return "0 harness info run start " + start + "\n" + R"(
  0.5 nemesis info plan clock-jump {"first_at_ms":1,"duration_ms":3}
  1 1 invoke acquire L
  2 1 ok acquire L {"token":"a"}
  2.5 nemesis info start clock-jump {"nodes":[1],"offset":"+20s"}
  3 1 invoke read C
  4 1 ok read C null
  5 1 invoke write C 1
  6 1 ok write C 1
  7 1 invoke release L {"token":"a"}
  8 1 ok release L
  8.5 nemesis info stop clock-jump {"opened_ns":2500000}
  9 2 invoke acquire L
  10 2 ok acquire L {"token":"b"}
  11 2 invoke read C
  12 2 ok read C 1
  13 2 invoke write C 2
  14 2 ok write C 2
  15 2 invoke release L {"token":"b"}
  16 2 ok release L
  20 harness invoke read C
  21 harness ok read C 2
  22 harness info run end {"interrupted":false,"client_exits":0}
)" + effect + "\n";
}

constexpr const char* kDeclared = R"({"effects":true,"faults":["clock-jump"],"stuck_after_ms":2000})";
constexpr const char* kUndeclared = R"({"faults":["clock-jump"],"stuck_after_ms":2000})";
constexpr const char* kNotSeen =
    R"x(8.5 nemesis info effect clock-jump {"seen":false,"window":1,"evidence":"node n1 TIME +0.000 s off the real clock after +20s (libfaketime not loaded?)"})x";
constexpr const char* kSeen =
    R"(2.6 nemesis info effect clock-jump {"seen":true,"window":1,"evidence":"node n1 TIME +20.001 s off the real clock after +20s"})";

TEST(EffectEvidenceTest, DeclaredEffectNotSeenIsUnknownNamingTheFaultAndTheEvidence) {
  Judgement j = JudgeHistory(H(RunWith(kDeclared, kNotSeen)));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_EQ(j.reason,
            "no fault bit: clock-jump: opened 1 (1 while the workload did lock work), effect not seen: "
            "node n1 TIME +0.000 s off the real clock after +20s (libfaketime not loaded?)")
      << j.reason;
  EXPECT_EQ(VerdictExitCode(j.verdict), 2);
  ASSERT_EQ(j.coverage.size(), 1u);
  const FaultCoverage& c = j.coverage[0];
  EXPECT_TRUE(c.effects_declared);
  EXPECT_EQ(c.windows_met, 1);
  EXPECT_EQ(c.effects_seen, 0);
  EXPECT_EQ(c.effects_not_seen, 1);
  EXPECT_EQ(c.windows_proven, 0);
  EXPECT_FALSE(c.bit());
  // results.json carries the evidence fields.
  const auto cov = j.ToJson()["coverage"][0];
  EXPECT_EQ(cov["effects_not_seen"], 1);
  EXPECT_EQ(cov["bit"], false);
  EXPECT_NE(cov["evidence"].get<std::string>().find("libfaketime not loaded"), std::string::npos);
}

TEST(EffectEvidenceTest, DeclaredEffectWithNoEffectEventIsUnknownToo) {
  Judgement j = JudgeHistory(H(RunWith(kDeclared, "")));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("clock-jump"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("effect not seen: no evidence recorded"), std::string::npos) << j.reason;
}

TEST(EffectEvidenceTest, DeclaredEffectSeenInAMetWindowIsSafe) {
  Judgement j = JudgeHistory(H(RunWith(kDeclared, kSeen)));
  EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
  ASSERT_EQ(j.coverage.size(), 1u);
  const FaultCoverage& c = j.coverage[0];
  EXPECT_EQ(c.effects_seen, 1);
  EXPECT_EQ(c.windows_proven, 1);
  EXPECT_TRUE(c.bit());
  EXPECT_EQ(c.Summary(),
            "clock-jump: opened 1 (1 while the workload did lock work), effect seen 1: node n1 TIME "
            "+20.001 s off the real clock after +20s");
  EXPECT_EQ(j.ToJson()["coverage"][0]["windows_proven"], 1);
}

// The effect was seen, but in a window that met no lock work (its number names the second
// window, which opened after the run's last lock operation): nothing bit.
TEST(EffectEvidenceTest, AnEffectSeenOnlyInAnIdleWindowProvesNothing) {
  std::string h = RunWith(kDeclared, kNotSeen);
  h += R"(
    17 nemesis info start clock-jump {"nodes":[1],"offset":"+20s"}
    17.1 nemesis info effect clock-jump {"seen":true,"window":2,"evidence":"node n1 TIME +20.000 s off the real clock after +20s"}
    19 nemesis info stop clock-jump {"opened_ns":17000000}
  )";
  Judgement j = JudgeHistory(H(h));
  EXPECT_EQ(VerdictName(j.verdict), "unknown") << j.reason;
  ASSERT_EQ(j.coverage.size(), 1u);
  EXPECT_EQ(j.coverage[0].windows_met, 1);
  EXPECT_EQ(j.coverage[0].effects_seen, 1);
  EXPECT_EQ(j.coverage[0].windows_proven, 0);
}

TEST(EffectEvidenceTest, UndeclaredHistoriesAreJudgedAsBefore) {
  // The same windows without the declaration: a met window bites, evidence or not, and the
  // summary and results.json entry are what they were.
  for (const char* effect : {kNotSeen, ""}) {
    Judgement j = JudgeHistory(H(RunWith(kUndeclared, effect)));
    EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
    ASSERT_EQ(j.coverage.size(), 1u);
    EXPECT_FALSE(j.coverage[0].effects_declared);
    EXPECT_TRUE(j.coverage[0].bit());
    EXPECT_EQ(j.coverage[0].Summary(), "clock-jump: opened 1 (1 while the workload did lock work)");
    EXPECT_FALSE(j.ToJson()["coverage"][0].contains("evidence"));
  }
}

TEST(EffectEvidenceTest, TheDeclarationRoundTrips) {
  RunFacts f;
  f.faults = {"clock-jump"};
  EXPECT_FALSE(RunStartValue(f).contains("effects"));  // older start events stay as they were
  f.effects_declared = true;
  EXPECT_EQ(RunStartValue(f)["effects"], true);
  Judgement j = JudgeHistory(H(RunWith(kDeclared, kSeen)));
  EXPECT_TRUE(j.facts.effects_declared);
}

}  // namespace
}  // namespace locklab::checker
