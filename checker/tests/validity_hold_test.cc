// Hand-written histories for the validity rule (checker/mutual_exclusion.h): when the run
// declares that its clients honoured validity, a hold ends at acquire (or renew) +
// validity_ms; without the declaration (or in a foreign history) nothing changes.
#include <gtest/gtest.h>

#include "checker/mutual_exclusion.h"
#include "checker/tests/history_text.h"
#include "checker/verdict.h"

namespace locklab::checker {
namespace {

// Client 1 acquires with a 100 ms validity and is paused 280 ms after its read; client 2
// acquires once the key expired, writes 1 and releases; client 1 wakes up past its
// validity. `late_write`: client 1 writes anyway (its read said 0, so it writes 1 again).
std::string PausedHolder(bool declared, bool late_write) {
  std::string start = declared
      ? R"({"faults":["client-pause"],"stuck_after_ms":0,"workload":{"validity":"honour"}})"
      : R"({"faults":["client-pause"],"stuck_after_ms":0})";
  std::string h = "0 harness info run start " + start + R"(
    10 1 invoke acquire lock:0
    11 1 ok acquire lock:0 {"token":"a","validity_ms":100}
    12 1 invoke read counter:0
    13 1 ok read counter:0 null
    20 nemesis info start client-pause {"mode":"random","targets":[1],"duration_ms":280}
    150 2 invoke acquire lock:0
    151 2 ok acquire lock:0 {"token":"b","validity_ms":100}
    152 2 invoke read counter:0
    153 2 ok read counter:0 null
    170 2 invoke write counter:0 1
    171 2 ok write counter:0 1
    172 2 invoke release lock:0
    173 2 ok release lock:0
    300 nemesis info stop client-pause {"opened_ns":20000000}
  )";
  if (late_write) {
    h += R"(
    301 1 invoke write counter:0 1
    302 1 ok write counter:0 1
    )";
  }
  h += R"(
    303 1 invoke release lock:0 {"token":"a"}
    304 1 fail release lock:0 {"error":"not-owner"}
    400 harness invoke read counter:0
    401 harness ok read counter:0 1
    402 harness info run end {"interrupted":false,"client_exits":0}
  )";
  return h;
}

TEST(ValidityHoldTest, RunStartDeclaresHonour) {
  RunFacts f;
  EXPECT_FALSE(RunStartValue(f).contains("workload"));  // today's histories unchanged
  f.validity_honoured = true;
  auto v = RunStartValue(f);
  EXPECT_EQ(v["workload"]["validity"], "honour");
  History h = H("0 harness info run start " + v.dump());
  EXPECT_TRUE(ReadRunFacts(h).validity_honoured);
  EXPECT_FALSE(ReadRunFacts(H(R"(0 harness info run start {"workload":{"validity":"ignore"}})"))
                   .validity_honoured);
}

TEST(ValidityHoldTest, PausedHolderThatHonouredValidityIsNoOverlap) {
  Judgement j = JudgeHistory(SortedByTime(H(PausedHolder(true, false))));
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 0);
  EXPECT_EQ(j.resource.lost_updates, 0);
  ASSERT_EQ(j.holds.size(), 2u);
  const HoldInterval& h1 = j.holds[0].process == 1 ? j.holds[0] : j.holds[1];
  EXPECT_TRUE(h1.validity_cut);
  EXPECT_EQ(h1.end, Millis(111));  // acquire ok + validity_ms, not the release at 303
  EXPECT_NE(VerdictName(j.verdict), "violated") << j.reason;
}

TEST(ValidityHoldTest, PausedHolderThatWroteAfterValidityIsALostUpdate) {
  Judgement j = JudgeHistory(SortedByTime(H(PausedHolder(true, true))));
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 0);  // it no longer believed it held
  EXPECT_EQ(j.resource.lost_updates, 1);               // but it wrote: two acks, final 1
  EXPECT_EQ(VerdictName(j.verdict), "violated");
}

TEST(ValidityHoldTest, WithoutTheDeclarationThePausedHolderOverlaps) {
  Judgement j = JudgeHistory(SortedByTime(H(PausedHolder(false, false))));
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 1);
  EXPECT_EQ(VerdictName(j.verdict), "violated");
  for (const auto& h : j.holds) EXPECT_FALSE(h.validity_cut);
}

TEST(ValidityHoldTest, RenewalsExtendTheBeliefAndFailedOnesDoNot) {
  History h = SortedByTime(H(R"(
    10 1 invoke acquire L
    11 1 ok acquire L {"token":"a","validity_ms":100}
    80 1 invoke renew L {"token":"a"}
    81 1 ok renew L {"token":"a","validity_ms":100}
    150 1 invoke renew L {"token":"a"}
    151 1 fail renew L {"error":"not-owner"}
    300 1 invoke release L
  )"));
  HoldOptions honour;
  honour.validity_honoured = true;
  auto holds = ComputeHoldIntervals(h, honour);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].end, Millis(181));  // the ok renewal's time + its validity
  EXPECT_TRUE(holds[0].validity_cut);
  // Not declared: the release ends it, as always.
  EXPECT_EQ(ComputeHoldIntervals(h)[0].end, Millis(300));
}

// Found by hunt's false-alarm search on watchdog (bench/results/mutation-score-history.md):
// client 1 honoured its 100 ms validity and stopped using the lock, but its lock's watchdog
// thread (process 1001) kept renewing the key, owner-checked, until a server pause; the
// client's own release timed out; client 2 took the key after it expired. Nobody held it
// twice. The validity cut used to add an ok release at 111, after which the watchdog's ok
// renewal at 130 could not be placed: "owner-mutex history is not linearizable".
std::string WatchdogRenewsPastTheCut(bool renewed_after_next_acquire) {
  std::string h = R"(0 harness info run start {"stuck_after_ms":0,"workload":{"validity":"honour"}}
    10 1 invoke acquire lock:0
    11 1 ok acquire lock:0 {"token":"a","validity_ms":100}
    12 1 invoke read counter:0
    13 1 ok read counter:0 null
    60 1001 invoke renew lock:0 {"token":"a","ttl_ms":100}
    61 1001 ok renew lock:0 {"token":"a","ttl_ms":100}
    130 1001 invoke renew lock:0 {"token":"a","ttl_ms":100}
    131 1001 ok renew lock:0 {"token":"a","ttl_ms":100}
    200 1 invoke release lock:0 {"token":"a"}
    210 1001 invoke renew lock:0 {"token":"a","ttl_ms":100}
    400 1 info release lock:0 {"error":"timeout"}
    410 1001 info renew lock:0 {"error":"timeout"}
    500 2 invoke acquire lock:0
    501 2 ok acquire lock:0 {"token":"b","validity_ms":100}
  )";
  if (renewed_after_next_acquire) {
    h += R"(
    520 1001 invoke renew lock:0 {"token":"a","ttl_ms":100}
    521 1001 ok renew lock:0 {"token":"a","ttl_ms":100}
    )";
  }
  h += R"(
    550 2 invoke release lock:0 {"token":"b"}
    551 2 ok release lock:0
    600 harness info run end {"interrupted":false,"client_exits":0}
  )";
  return h;
}

TEST(ValidityHoldTest, ValidityCutLeaseStillRenewedByItsWatchdogIsNotAViolation) {
  Judgement j = JudgeHistory(SortedByTime(H(WatchdogRenewsPastTheCut(false))));
  ASSERT_FALSE(j.holds.empty());
  EXPECT_TRUE(j.holds[0].validity_cut);
  EXPECT_EQ(j.mutual_exclusion.overlapping_pairs, 0);
  EXPECT_EQ(j.lock_lin.verdict, LinVerdict::kValid);
  EXPECT_NE(VerdictName(j.verdict), "violated") << j.reason;
}

TEST(ValidityHoldTest, CutLeaseRenewedOkAfterTheNextOwnerTookItIsStillAViolation) {
  // The unknown release must not excuse two owners on the server: a's owner-checked renewal
  // succeeded after b's acquire did.
  Judgement j = JudgeHistory(SortedByTime(H(WatchdogRenewsPastTheCut(true))));
  EXPECT_EQ(j.lock_lin.verdict, LinVerdict::kInvalid);
  EXPECT_EQ(VerdictName(j.verdict), "violated");
}

TEST(ValidityHoldTest, LeasesWithoutValidityAreNeverCut) {
  // setnx and the SQL locks report no validity_ms; a lease that was granted already over
  // (validity_ms 0) says nothing about when it ends either: both end at their release.
  History h = SortedByTime(H(R"(
    1 1 ok acquire L {"token":"a"}
    500 1 invoke release L
    501 2 ok acquire M {"token":"b","validity_ms":0}
    900 2 invoke release M
  )"));
  HoldOptions honour;
  honour.validity_honoured = true;
  auto holds = ComputeHoldIntervals(h, honour);
  ASSERT_EQ(holds.size(), 2u);
  EXPECT_EQ(holds[0].end, Millis(500));
  EXPECT_EQ(holds[1].end, Millis(900));
}

}  // namespace
}  // namespace locklab::checker
