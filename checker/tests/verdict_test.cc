// The one judge (checker/verdict.h) on hand-written histories whose answer is known by
// construction, including these bugs: a run and `locklab check` that disagreed
// on a crash, a "violated" for a history with no writes, and a "safe" whose fault never bit.
#include "checker/verdict.h"

#include <gtest/gtest.h>

#include "checker/tests/history_text.h"

namespace locklab::checker {
namespace {

// Two clients take turns on one key; each writes the counter once inside its hold.
constexpr const char* kTwoTurns = R"(
  0 harness info run start {"faults":[],"stuck_after_ms":2000,"lin_time_budget_ms":10000}
  1 1 invoke acquire L
  2 1 ok acquire L {"token":"a"}
  3 1 invoke read C
  4 1 ok read C null
  5 1 invoke write C 1
  6 1 ok write C 1
  7 1 invoke release L {"token":"a"}
  8 1 ok release L
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
)";

TEST(VerdictTest, TurnsWithNoFaultAreSafe) {
  Judgement j = JudgeHistory(H(kTwoTurns));
  EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
  EXPECT_EQ(VerdictName(j.resource_verdict), "safe");
  EXPECT_EQ(j.acquires_ok, 2);
  EXPECT_EQ(j.facts.stuck_after, Millis(2000));
  EXPECT_EQ(VerdictExitCode(j.verdict), 0);
}

// Regression: the harness read an unwritten counter as 0 while the register
// model starts at nil, so every history without writes was "register: invalid".
TEST(VerdictTest, NilFinalReadOfAnUnwrittenCounterIsNoViolation) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    5 harness invoke read counter:0
    6 harness ok read counter:0 null
    7 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_NE(VerdictName(j.verdict), "violated") << j.reason;
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("granted no acquire"), std::string::npos) << j.reason;
  EXPECT_EQ(j.resource.lost_updates, 0);
  EXPECT_EQ(j.resource_lin.verdict, LinVerdict::kValid);
}

TEST(VerdictTest, ALockThatNeverAnsweredIsUnknownNotSafe) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    1 1 invoke acquire L
    500 1 info acquire L {"error":"timeout"}
    501 2 invoke acquire L
    502 2 fail acquire L
    600 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("1 refused, 1 unknown"), std::string::npos) << j.reason;
}

TEST(VerdictTest, DriverStartFailuresAreTheReason) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    1 harness info run end {"interrupted":false,"client_exits":0,"client_failures":["client 1: driver /x.py: no hello line within start_timeout_ms 5000","client 2: driver /x.py: exited"]}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_EQ(j.reason, "client 1: driver /x.py: no hello line within start_timeout_ms 5000 (and 1 more client)");
}

// Regression: an armed pause point the lock never reached leaves the fault dormant.
TEST(VerdictTest, AFaultThatNeverBitGivesUnknown) {
  std::string h = kTwoTurns;
  h.replace(h.find("\"faults\":[]"), 11, "\"faults\":[\"client-pause\"]");
  h += R"(
    0.5 nemesis info plan client-pause {"first_at_ms":0,"duration_ms":1200,"point":"before-write"}
    0.6 nemesis info arm client-pause {"targets":[1],"point":"before-write"}
  )";
  Judgement j = JudgeHistory(H(h));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_EQ(j.reason, "no fault bit: client-pause: armed 1, opened 0") << j.reason;
  ASSERT_EQ(j.coverage.size(), 1u);
  EXPECT_TRUE(j.coverage[0].planned);
  EXPECT_EQ(j.coverage[0].armed, 1);
  EXPECT_FALSE(j.coverage[0].bit());
  EXPECT_EQ(VerdictName(j.resource_verdict), "unknown");
}

TEST(VerdictTest, AWindowOverAHoldBitsAndTheRunIsSafe) {
  std::string h = kTwoTurns;
  h.replace(h.find("\"faults\":[]"), 11, "\"faults\":[\"client-pause\"]");
  h += R"(
    0.5 nemesis info plan client-pause {"point":"after-acquire"}
    1.5 nemesis info arm client-pause {"targets":[1],"point":"after-acquire"}
    2.5 nemesis info start client-pause {"targets":[1]}
    4.5 nemesis info stop client-pause {}
  )";
  Judgement j = JudgeHistory(H(h));
  EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
  ASSERT_EQ(j.coverage.size(), 1u);
  EXPECT_EQ(j.coverage[0].windows_opened, 1);
  EXPECT_EQ(j.coverage[0].windows_closed, 1);
  EXPECT_EQ(j.coverage[0].windows_met, 1);
  EXPECT_EQ(j.coverage[0].clients_hit, std::vector<int64_t>{1});
}

// Safe vouches for every scheduled fault: a second fault that never bit leaves its part of
// the schedule untested, though the first bit.
TEST(VerdictTest, OneFaultThatNeverBitBesideOneThatDidGivesUnknown) {
  std::string h = kTwoTurns;
  h.replace(h.find("\"faults\":[]"), 11, "\"faults\":[\"client-pause\",\"slow-cs\"]");
  h += R"(
    0.5 nemesis info plan client-pause {"point":"after-acquire"}
    0.5 nemesis info plan slow-cs {"point":"before-write"}
    1.5 nemesis info arm client-pause {"targets":[1],"point":"after-acquire"}
    1.6 nemesis info arm slow-cs {"targets":[2],"point":"before-write"}
    2.5 nemesis info start client-pause {"targets":[1]}
    4.5 nemesis info stop client-pause {}
  )";
  Judgement j = JudgeHistory(H(h));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_EQ(j.reason, "not every fault bit: slow-cs: armed 1, opened 0") << j.reason;
}

TEST(VerdictTest, AWindowOverAnIdleStretchBitNothing) {
  std::string h = kTwoTurns;
  h.replace(h.find("\"faults\":[]"), 11, "\"faults\":[\"server-pause\"]");
  h += R"(
    17 nemesis info start server-pause {"nodes":[1]}
    19 nemesis info stop server-pause {"healed":"teardown"}
  )";
  Judgement j = JudgeHistory(H(h));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  ASSERT_EQ(j.coverage.size(), 1u);
  EXPECT_EQ(j.coverage[0].windows_cut, 1);
  EXPECT_EQ(j.coverage[0].windows_met, 0);
  EXPECT_EQ(j.coverage[0].nodes_hit, std::vector<int64_t>{1});
}

// Regression: the run applied the crash rule and said safe, `locklab check`
// did not and said owner-mutex invalid. Client 1 holds L and is killed; its lease expires
// and client 2 takes L. One judge: safe, for both.
TEST(VerdictTest, ACrashedHolderHoldsNothingForTheLinearizabilityCheckToo) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":["client-crash"]}
    0.1 nemesis info plan client-crash {"point":"after-acquire"}
    1 1 invoke acquire L
    2 1 ok acquire L {"token":"a"}
    2 nemesis info start client-crash {"targets":[1]}
    3 2 invoke acquire L
    600 2 ok acquire L {"token":"b"}
    601 2 invoke release L {"token":"b"}
    602 2 ok release L
    700 nemesis info stop client-crash {}
    701 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(j.lock_lin.verdict, LinVerdict::kValid) << j.lock_lin.ToText();
  EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 0);
}

TEST(VerdictTest, OverlapIsViolatedWhateverElseHappened) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    1 1 invoke acquire L
    2 1 ok acquire L {"token":"a","validity_ms":0}
    3 2 invoke acquire L
    4 2 ok acquire L {"token":"b"}
    9 1 invoke release L {"token":"a"}
    10 1 ok release L
    11 2 invoke release L {"token":"b"}
    12 2 ok release L
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "violated");
  EXPECT_EQ(j.reason, "1 overlapping hold pair in 1 episode (first on L)");
  EXPECT_EQ(j.expired_grants, 1);
  EXPECT_DOUBLE_EQ(j.first_violation_ms, 3.0) << "from the first client event at 1, not the run event at 0";
  auto json = j.ToJson();
  EXPECT_EQ(json["episodes"].size(), 1u);
  EXPECT_EQ(json["episodes"][0]["processes"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(json["holds"].size(), 2u);
}

// Regression: a run on a full disk recorded no operation and was reported safe. No
// acquire granted is never evidence: a history with only the run's own events, or with
// nothing at all (an empty or unreadable file), is unknown.
TEST(VerdictTest, ARunWithNoOperationsIsNeverSafe) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":["client-pause"],"stuck_after_ms":2000}
    1 nemesis info plan client-pause {"point":"after-acquire"}
    7 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("granted no acquire"), std::string::npos) << j.reason;
  EXPECT_EQ(VerdictExitCode(j.verdict), 2);
  Judgement empty = JudgeHistory(History{});
  EXPECT_EQ(VerdictName(empty.verdict), "unknown") << empty.reason;
}

TEST(VerdictTest, InterruptedOrKilledRunsAreUnknown) {
  std::string h = kTwoTurns;
  std::string interrupted = h;
  interrupted.replace(interrupted.find("\"interrupted\":false"), 19, "\"interrupted\":true");
  EXPECT_EQ(VerdictName(JudgeHistory(H(interrupted)).verdict), "unknown");
  std::string killed = h.substr(0, h.find("22 harness info run end"));
  Judgement j = JudgeHistory(H(killed));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("run's end event"), std::string::npos) << j.reason;
}

TEST(VerdictTest, AHistoryWithoutRunEventsIsJudgedOnItsEvents) {
  std::string h = kTwoTurns;
  std::string plain;
  std::istringstream in(h);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" run ") == std::string::npos) plain += line + "\n";
  }
  Judgement j = JudgeHistory(H(plain));
  EXPECT_FALSE(j.facts.declared);
  EXPECT_EQ(VerdictName(j.verdict), "safe") << j.reason;
  EXPECT_EQ(j.facts.stuck_after, Millis(0));
}

// The one name table: each verdict's word reads back as that verdict, nothing else reads as
// one, and the exit code follows the verdict (an unreadable word is unknown, never safe).
TEST(VerdictTest, EveryVerdictHasOneNameAndOneExitCode) {
  for (Verdict v : {Verdict::kSafe, Verdict::kViolated, Verdict::kUnknown}) {
    EXPECT_EQ(ParseVerdict(VerdictName(v)), v) << VerdictName(v);
    EXPECT_EQ(VerdictExitCode(std::string(VerdictName(v))), VerdictExitCode(v));
  }
  EXPECT_EQ(VerdictName(Verdict::kSafe), "safe");
  EXPECT_EQ(VerdictName(Verdict::kViolated), "violated");
  EXPECT_EQ(VerdictName(Verdict::kUnknown), "unknown");
  EXPECT_EQ(VerdictWordList(), "safe, violated or unknown");
  EXPECT_EQ(VerdictExitCode(Verdict::kSafe), 0);
  EXPECT_EQ(VerdictExitCode(Verdict::kViolated), 1);
  EXPECT_EQ(VerdictExitCode(Verdict::kUnknown), 2);
  for (const char* word : {"", "error", "Safe", "stuck", "safe "}) {
    EXPECT_FALSE(ParseVerdict(word).has_value()) << word;
    EXPECT_EQ(VerdictExitCode(std::string(word)), 2) << word;
  }
}

}  // namespace
}  // namespace locklab::checker
