// The judge's rules for infra events (checker/infra.h): what the lab saw of its own ground.
// Hand-written histories whose answer is known by construction.
#include <gtest/gtest.h>

#include "checker/tests/history_text.h"
#include "checker/verdict.h"

namespace locklab::checker {
namespace {

// Client 2 takes the lock at 100 ms and is killed at 200 ms (SIGKILL from outside: the
// harness saw its stream close). Client 1 acquires after the TTL and holds to 900 ms.
constexpr const char* kDeadHolder = R"(
  0 harness info run start {"faults":[],"stuck_after_ms":2000}
  90 2 invoke acquire L
  100 2 ok acquire L {"token":"b"}
  150 1 invoke acquire L
  200 harness info infra client-2 {"what":"client","process":2,"pid":77,"how":"killed by signal 9"}
  650 1 ok acquire L {"token":"a"}
  900 1 invoke release L {"token":"a"}
  901 1 ok release L
  950 harness invoke read C
  951 harness ok read C null
  960 harness info run end {"interrupted":false,"client_exits":1}
)";

TEST(InfraVerdictTest, AClientThatDiedOutsideTheScheduleHoldsNothingFromItsDeath) {
  Judgement j = JudgeHistory(H(kDeadHolder));
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 0);
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("client-2 (pid 77) killed by signal 9"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("not by the schedule"), std::string::npos) << j.reason;
  EXPECT_EQ(j.lock_lin.verdict, LinVerdict::kValid);
  ASSERT_EQ(j.infra.size(), 1u);
  EXPECT_EQ(j.infra[0].pid, 77);
}

// Without the infra event the same hold never ends: the history shows an overlap. The rule
// is what turns a false "violated" into an honest "unknown".
TEST(InfraVerdictTest, WithoutTheInfraEventTheDeadHoldWouldOverlap) {
  std::string text = kDeadHolder;
  text.erase(text.find("  200 harness"), text.find("650 1 ok") - text.find("  200 harness"));
  Judgement j = JudgeHistory(H(text));
  EXPECT_GT(j.mutual_exclusion.overlapping_pairs, 0);
}

TEST(InfraVerdictTest, AnOverlapSeenBeforeTheLabGaveWayIsStillAViolation) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    10 1 invoke acquire L
    20 1 ok acquire L {"token":"a"}
    30 2 invoke acquire L
    40 2 ok acquire L {"token":"b"}
    100 1 invoke release L {"token":"a"}
    101 1 ok release L
    102 2 invoke release L {"token":"b"}
    103 2 ok release L
    500 harness info infra node-n1 {"what":"node","node":1,"pid":55,"server":"redis-server","how":"killed by signal 9"}
    900 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "violated") << j.reason;
}

TEST(InfraVerdictTest, AnOverlapAfterTheLabGaveWayIsUnknownNamingTheServer) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    5 1 invoke acquire L
    6 1 ok acquire L {"token":"z"}
    7 1 invoke release L {"token":"z"}
    8 1 ok release L
    9 harness info infra node-n1 {"what":"node","node":1,"pid":55,"server":"redis-server","how":"killed by signal 9"}
    10 1 invoke acquire L
    20 1 ok acquire L {"token":"a"}
    30 2 invoke acquire L
    40 2 ok acquire L {"token":"b"}
    100 1 invoke release L {"token":"a"}
    101 1 ok release L
    102 2 invoke release L {"token":"b"}
    103 2 ok release L
    900 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("lab node-n1 (redis-server, pid 55) killed by signal 9 at"), std::string::npos)
      << j.reason;
  EXPECT_EQ(VerdictName(j.resource_verdict), "unknown");
}

TEST(InfraVerdictTest, AFinalReadWithNoAnswerMakesLostUpdatesUnknownNeverZero) {
  Judgement j = JudgeHistory(H(R"(
    0 harness info run start {"faults":[]}
    1 1 invoke acquire L
    2 1 ok acquire L {"token":"a"}
    3 1 invoke write C 1
    4 1 ok write C 1
    5 1 invoke release L {"token":"a"}
    6 1 ok release L
    10 harness invoke read C
    510 harness info read C {"error":"Connection refused"}
    520 harness info run end {"interrupted":false,"client_exits":0}
  )"));
  EXPECT_EQ(VerdictName(j.verdict), "unknown");
  EXPECT_NE(j.reason.find("final read of C got no answer"), std::string::npos) << j.reason;
  EXPECT_TRUE(j.resource.final_read_failed);
  EXPECT_TRUE(j.ToJson()["resource"]["lost_updates"].is_null());
}

// The harness did not run from 1 s to 4 s: client 2, blocked on its full event pipe, could
// not retry its acquire although the lock was free from 1.1 s. Without the stall its wait
// with nobody holding (3 s) is over the 2 s bound.
constexpr const char* kStalledHarness = R"(
  0 harness info run start {"faults":[],"stuck_after_ms":2000}
  500 1 invoke acquire L
  510 1 ok acquire L {"token":"a"}
  600 2 invoke acquire L
  1100 1 invoke release L {"token":"a"}
  1101 1 ok release L
  4000 harness info infra harness {"what":"harness","pid":9,"how":"stalled","stalled_ms":3000,"from_ns":1000000000}
  4102 2 ok acquire L {"token":"b"}
  4200 2 invoke release L {"token":"b"}
  4201 2 ok release L
  4300 harness info run end {"interrupted":false,"client_exits":0}
)";

TEST(InfraVerdictTest, AStalledHarnessIsNoLivenessFailureOfTheLock) {
  Judgement j = JudgeHistory(H(kStalledHarness));
  EXPECT_FALSE(j.liveness.stuck) << j.liveness.longest_wait_ms;
  EXPECT_NEAR(j.longest_lab_stall_ms, 3000, 1);
  EXPECT_NE(VerdictName(j.verdict), "unknown") << "a stall is lateness, not a death: " << j.reason;
  std::string text = kStalledHarness;
  text.erase(text.find("  4000 harness"), text.find("4102 2 ok") - text.find("  4000 harness"));
  EXPECT_TRUE(JudgeHistory(H(text)).liveness.stuck);
}

}  // namespace
}  // namespace locklab::checker
