// Hand-written histories first (Jepsen's habit): the overlap counter, lost updates and
// liveness judged on histories whose answer is known by construction.
#include "checker/mutual_exclusion.h"

#include <gtest/gtest.h>

#include "checker/tests/history_text.h"

namespace locklab::checker {
namespace {

MutualExclusionReport ME(const History& h) {
  return CheckMutualExclusion(ComputeHoldIntervals(SortedByTime(h)));
}

TEST(HoldIntervalTest, AcquireOkToReleaseInvoke) {
  auto holds = ComputeHoldIntervals(H(R"(
    0 1 invoke acquire L
    2 1 ok acquire L {"token":"a"}
    10 1 invoke release L
    11 1 ok release L
  )"));
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].start, Millis(2));
  EXPECT_EQ(holds[0].end, Millis(10));
  EXPECT_FALSE(holds[0].open_at_end);
  EXPECT_EQ(holds[0].lease["token"], "a");
}

TEST(MutualExclusionTest, SequentialHoldsAreSafe) {
  auto r = ME(H(R"(
    0 1 invoke acquire L
    1 1 ok acquire L
    0 2 invoke acquire L
    1 2 fail acquire L
    5 1 invoke release L
    6 1 ok release L
    6 2 invoke acquire L
    7 2 ok acquire L
    9 2 invoke release L
    9 2 ok release L
  )"));
  EXPECT_EQ(r.holds, 2);
  EXPECT_EQ(r.overlapping_pairs, 0);
  EXPECT_EQ(r.episodes, 0);
  EXPECT_EQ(r.overlap_ms, 0);
}

TEST(MutualExclusionTest, TouchingHoldsAreNotAnOverlap) {
  // Client 2's acquire completes at the very instant client 1 invokes its release.
  auto r = ME(H(R"(
    1 1 ok acquire L
    5 1 invoke release L
    5 2 ok acquire L
    8 2 invoke release L
  )"));
  EXPECT_EQ(r.overlapping_pairs, 0);
}

TEST(MutualExclusionTest, OverlapCountsPairsEpisodesAndTime) {
  // Episode 1: 1 holds [1,10), 2 holds [4,12), 3 holds [6,7): pairs (1,2) (1,3) (2,3),
  // two-or-more holders during [4,10) = 6 ms. Episode 2 on another key: [20,25) = 5 ms.
  auto r = ME(H(R"(
    1 1 ok acquire L
    4 2 ok acquire L
    6 3 ok acquire L
    7 3 invoke release L
    10 1 invoke release L
    12 2 invoke release L
    15 1 ok acquire M
    20 2 ok acquire M
    25 1 invoke release M
    30 2 invoke release M
  )"));
  EXPECT_EQ(r.overlapping_pairs, 4);
  EXPECT_EQ(r.episodes, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms, 11.0);
  ASSERT_EQ(r.episode_list.size(), 2u);
  EXPECT_EQ(r.episode_list[0].key, "L");
  EXPECT_EQ(r.episode_list[0].start, Millis(4));
  EXPECT_EQ(r.episode_list[0].end, Millis(10));
}

TEST(MutualExclusionTest, InfoAcquireStartsNoHold) {
  // Client 1's acquire timed out (info): it may have taken effect, but the client did not
  // believe it held the lock, so 2's hold is no violation.
  auto r = ME(H(R"(
    0 1 invoke acquire L
    3 1 info acquire L
    4 2 invoke acquire L
    5 2 ok acquire L
    9 2 invoke release L
  )"));
  EXPECT_EQ(r.holds, 1);
  EXPECT_EQ(r.overlapping_pairs, 0);
}

TEST(MutualExclusionTest, HoldRunsToEndOfHistoryWhenNeverReleased) {
  auto h = H(R"(
    1 1 ok acquire L
    5 2 ok acquire L
    9 2 invoke release L
    20 3 invoke acquire L
  )");
  auto holds = ComputeHoldIntervals(SortedByTime(h));
  ASSERT_EQ(holds.size(), 2u);
  EXPECT_TRUE(holds[0].open_at_end);
  EXPECT_EQ(holds[0].end, Millis(20));
  auto r = CheckMutualExclusion(holds);
  EXPECT_EQ(r.overlapping_pairs, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms, 4.0);
}

TEST(MutualExclusionTest, NextAcquireEndsTheHold) {
  // A client that acquires again without releasing stopped believing in its first lease.
  auto r = ME(H(R"(
    1 1 ok acquire L
    4 1 invoke acquire L
    6 2 ok acquire L
    8 2 invoke release L
  )"));
  EXPECT_EQ(r.overlapping_pairs, 0);
}

TEST(MutualExclusionTest, CrashedClientHoldsNothing) {
  auto r = ME(H(R"(
    1 1 ok acquire L
    3 nemesis info start client-crash {"targets":[1]}
    6 2 ok acquire L
    8 2 invoke release L
  )"));
  EXPECT_EQ(r.overlapping_pairs, 0);
}

TEST(MutualExclusionTest, SameProcessOnTwoKeysIsNoViolation) {
  auto r = ME(H(R"(
    1 1 ok acquire L
    2 1 ok acquire M
    5 1 invoke release L
    6 1 invoke release M
  )"));
  EXPECT_EQ(r.overlapping_pairs, 0);
}

TEST(ResourceTest, LostUpdateWhenTwoWritersReadTheSameValue) {
  auto r = CheckResource(SortedByTime(H(R"(
    1 1 invoke read C
    1 1 ok read C 0
    2 2 invoke read C
    2 2 ok read C 0
    3 1 invoke write C 1
    3 1 ok write C 1
    4 2 invoke write C 1
    4 2 ok write C 1
    9 harness invoke read C
    9 harness ok read C 1
  )")));
  EXPECT_EQ(r.acknowledged_writes, 2);
  EXPECT_EQ(r.lost_updates, 1);
  EXPECT_TRUE(r.final_value_known);
}

TEST(ResourceTest, NoLostUpdateWhenIncrementsSerialize) {
  auto r = CheckResource(SortedByTime(H(R"(
    3 1 invoke write C 1
    3 1 ok write C 1
    4 2 invoke write C 2
    4 2 ok write C 2
    5 3 invoke write C 3
    5 3 info write C 3
    9 harness ok read C 3
  )")));
  EXPECT_EQ(r.lost_updates, 0);
}

TEST(ResourceTest, FencedWritesCountedAcceptedAndRejected) {
  auto r = CheckResource(SortedByTime(H(R"(
    1 2 invoke write C {"value":1,"fence":34}
    1 2 ok write C {"value":1,"fence":34}
    2 1 invoke write C {"value":1,"fence":33}
    2 1 fail write C {"error":"stale-fence"}
    3 3 invoke write C {"value":2,"fence":32}
    3 3 ok write C {"value":2,"fence":32}
    9 harness ok read C 2
  )")));
  EXPECT_EQ(r.stale_writes_rejected, 1);
  EXPECT_EQ(r.stale_writes_accepted, 1);
}

// Two fenced writes in flight at once may apply in either order: the resource took 33, then
// 34, and the replies came 34 first. Stale is by fence order of what was surely applied
// before (acknowledged before the write was sent), not by the order of the replies.
TEST(ResourceTest, ConcurrentFencedWritesAreNotStaleByTheirRepliesOrder) {
  auto r = CheckResource(SortedByTime(H(R"(
    1 1 invoke write C {"value":1,"fence":33}
    2 2 invoke write C {"value":2,"fence":34}
    3 2 ok write C {"value":2,"fence":34}
    4 1 ok write C {"value":1,"fence":33}
    9 harness ok read C 2
  )")));
  EXPECT_EQ(r.stale_writes_accepted, 0);
  // The same 33 sent after 34 was acknowledged is stale.
  auto late = CheckResource(SortedByTime(H(R"(
    2 2 invoke write C {"value":2,"fence":34}
    3 2 ok write C {"value":2,"fence":34}
    4 1 invoke write C {"value":1,"fence":33}
    5 1 ok write C {"value":1,"fence":33}
    9 harness ok read C 2
  )")));
  EXPECT_EQ(late.stale_writes_accepted, 1);
}

TEST(LivenessTest, WaitingWithNobodyHoldingIsMeasured) {
  // 1 holds [1,5) and crashes at 5 without releasing; 2 tries from 2 and never gets it.
  auto h = SortedByTime(H(R"(
    1 1 ok acquire L
    2 2 invoke acquire L
    3 2 fail acquire L
    5 nemesis info start client-crash {"targets":[1]}
    6 2 invoke acquire L
    7 2 fail acquire L
    105 2 invoke acquire L
  )"));
  auto holds = ComputeHoldIntervals(h);
  auto r = CheckLiveness(h, holds, LivenessOptions{Millis(50)});
  EXPECT_DOUBLE_EQ(r.longest_wait_ms, 100.0);
  EXPECT_TRUE(r.stuck);
  auto r2 = CheckLiveness(h, holds, LivenessOptions{Millis(200)});
  EXPECT_FALSE(r2.stuck);
}

// Regression (a liveness false alarm of hunt on set-nx-px-lua): client 3's acquire of K
// timed out and it went on with key M; K then sat idle. Nobody waited for K any more, so
// nothing starved; while 3 still waited for K (2 to 40) it did.
TEST(LivenessTest, AClientThatMovedToAnotherKeyNoLongerWaitsForTheFirst) {
  auto h = SortedByTime(H(R"(
    1 1 ok acquire K
    2 3 invoke acquire K
    10 1 invoke release K
    11 1 ok release K
    40 3 info acquire K {"error":"timeout"}
    41 3 invoke acquire M
    42 3 ok acquire M
    50 3 invoke release M
    51 3 ok release M
    300 2 invoke acquire K
    301 2 ok acquire K
    302 2 invoke release K
  )"));
  auto r = CheckLiveness(h, ComputeHoldIntervals(h), LivenessOptions{Millis(100)});
  EXPECT_DOUBLE_EQ(r.longest_wait_ms, 31.0);  // 10 (K released) to 41 (3 turned to M)
  EXPECT_FALSE(r.stuck);
}

// Regression (bench/mutation_score's false alarm on watchdog): a holder whose
// validity ran out while a slow critical section kept it inside, its watchdog renewing the
// key, holds on the server until its release succeeds; the waiters were rightly refused.
TEST(LivenessTest, AHoldTheWatchdogKeptPastItsValidityIsNotStarvation) {
  auto h = SortedByTime(H(R"(
    1 1 ok acquire L {"token":"a","validity_ms":50}
    2 2 invoke acquire L
    200 1 invoke release L
    201 1 ok release L
    202 2 ok acquire L
    203 2 invoke release L
  )"));
  auto cut = ComputeHoldIntervals(h, HoldOptions{true});
  ASSERT_TRUE(cut[0].validity_cut);
  auto r = CheckLiveness(h, cut, LivenessOptions{Millis(100)});
  EXPECT_DOUBLE_EQ(r.longest_wait_ms, 1.0);  // 201 (released) to 202
  EXPECT_FALSE(r.stuck);
  // The same with a release that failed (the key was no longer its own): the wait from the
  // cut counts.
  auto failed = SortedByTime(H(R"(
    1 1 ok acquire L {"token":"a","validity_ms":50}
    2 2 invoke acquire L
    200 1 invoke release L
    201 1 fail release L
    202 2 ok acquire L
    203 2 invoke release L
  )"));
  auto rf = CheckLiveness(failed, ComputeHoldIntervals(failed, HoldOptions{true}), LivenessOptions{Millis(100)});
  EXPECT_DOUBLE_EQ(rf.longest_wait_ms, 151.0);  // 51 (the cut) to 202
  EXPECT_TRUE(rf.stuck);
}

TEST(LivenessTest, WaitingBehindALiveHolderIsNotStarvation) {
  auto h = SortedByTime(H(R"(
    1 1 ok acquire L
    2 2 invoke acquire L
    90 1 invoke release L
    91 2 ok acquire L
    95 2 invoke release L
  )"));
  auto r = CheckLiveness(h, ComputeHoldIntervals(h), LivenessOptions{Millis(50)});
  EXPECT_DOUBLE_EQ(r.longest_wait_ms, 1.0);
  EXPECT_FALSE(r.stuck);
}

// Regression (hunt's false alarms: fenced, set-nx-px-lua and watchdog were "stuck" under a
// 4 s server-pause): a wait counts only while the waiter could reach the lock service.
TEST(LivenessTest, StarvingWhileTheServerIsPausedIsNotTheLocksDoing) {
  // 2 waits from 11 to 230 while `fault` is on from 10 to 200 and nobody holds the lock.
  auto wait_during = [](const std::string& fault, const std::string& detail) {
    auto h = SortedByTime(H("1 1 ok acquire L\n2 1 invoke release L\n3 1 ok release L\n"
                            "10 nemesis info start " + fault + " " + detail + "\n"
                            "11 2 invoke acquire L\n200 nemesis info stop " + fault + "\n"
                            "230 2 ok acquire L\n"));
    return CheckLiveness(h, ComputeHoldIntervals(h), LivenessOptions{Millis(50)});
  };
  // The start event says the fault stopped lock nodes (the harness writes "node_down" from
  // the fault's descriptor, docs/design.md 3.2); the checker reads that, not the fault's id.
  auto r = wait_during("server-pause", R"({"nodes":[1],"node_down":true})");
  EXPECT_DOUBLE_EQ(r.longest_wait_ms, 30.0) << "only the 30 ms after the pause healed count";
  EXPECT_FALSE(r.stuck);
  auto renamed = wait_during("some-other-tool-pause", R"({"node_down":true})");
  EXPECT_DOUBLE_EQ(renamed.longest_wait_ms, 30.0) << "any fault whose event says node_down";
  // Without the trait the id alone blocks nobody.
  auto bare = wait_during("server-pause", R"({"nodes":[1]})");
  EXPECT_DOUBLE_EQ(bare.longest_wait_ms, 219.0);
  // The same wait with a paused client instead (the lock service was up): all of it counts.
  auto rc = wait_during("client-pause", R"({"targets":[3]})");
  EXPECT_DOUBLE_EQ(rc.longest_wait_ms, 219.0);
  EXPECT_TRUE(rc.stuck);
}

TEST(LivenessTest, APartitionBlocksOnlyTheClientsItCutFromALockNode) {
  // 2 is cut from n1 for 100 ms, 3 only from the resource: 3's wait counts whole, 2's is
  // split around the window.
  const char* tmpl = R"(
    1 1 ok acquire L
    5 nemesis info start partition {"links":[[2,"n1"],[3,"resource"]]}
    10 P invoke acquire L
    105 nemesis info stop partition
    120 P ok acquire L
  )";
  for (const char* who : {"2", "3"}) {
    std::string text = tmpl;
    for (size_t at; (at = text.find(" P ")) != std::string::npos;) text.replace(at, 3, std::string(" ") + who + " ");
    // 1 crashes at 4 without releasing, so nobody holds during the wait.
    text.insert(text.find("    5 nemesis"), "    4 nemesis info start client-crash {\"targets\":[1]}\n");
    auto hist = SortedByTime(H(text));
    auto r = CheckLiveness(hist, ComputeHoldIntervals(hist), LivenessOptions{Millis(50)});
    if (std::string(who) == "2") {
      EXPECT_DOUBLE_EQ(r.longest_wait_ms, 15.0) << "only the 15 ms after the cut healed";
      EXPECT_FALSE(r.stuck);
    } else {
      EXPECT_DOUBLE_EQ(r.longest_wait_ms, 110.0);
      EXPECT_TRUE(r.stuck);
    }
  }
}

TEST(HistoryReaderTest, ErrorNamesFileLineAndField) {
  std::istringstream in(
      "{\"index\":0,\"time_ns\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"L\"}\n"
      "{\"index\":1,\"time_ns\":\"x\",\"process\":1,\"type\":\"ok\",\"f\":\"acquire\"}\n");
  History h;
  Status s = ParseJsonlHistory(in, "h.jsonl", &h);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "h.jsonl:2: field 'time_ns': expected an integer");
  EXPECT_EQ(s.ExitCode(), 65);
}

TEST(HistoryReaderTest, TornTailOfAKilledRunIsDroppedWhenAllowed) {
  std::string good =
      "{\"index\":0,\"time_ns\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"L\"}\n";
  std::istringstream in(good + "{\"index\":1,\"time_");
  History h;
  EXPECT_TRUE(ParseJsonlHistory(in, "h", &h, /*allow_torn_tail=*/true).ok());
  EXPECT_EQ(h.size(), 1u);
  std::istringstream in2(good + "{\"index\":1,\"time_");
  EXPECT_FALSE(ParseJsonlHistory(in2, "h", &h, /*allow_torn_tail=*/false).ok());
}

// Regression: a value nested 100,000 arrays deep overflowed the stack (`check` exit 139). It
// is refused before the JSON library sees it, naming the line and the field; a whole last
// line (with its newline) is bad input, not a torn tail.
TEST(HistoryReaderTest, NestingPastTheLimitIsBadInputNamingLineAndField) {
  std::string good =
      "{\"index\":0,\"time_ns\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"L\"}\n";
  std::string deep = "{\"index\":1,\"time_ns\":2,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\","
                     "\"key\":\"L\",\"value\":" +
                     std::string(100000, '[') + std::string(100000, ']') + "}\n";
  History h;
  for (bool torn_allowed : {false, true}) {
    std::istringstream in(good + deep);
    Status s = ParseJsonlHistory(in, "h", &h, torn_allowed);
    EXPECT_EQ(s.message(), "h:2: field 'value': nested deeper than 64 levels");
    EXPECT_EQ(s.ExitCode(), 65);
    std::istringstream mid(good + deep + good);
    EXPECT_EQ(ParseJsonlHistory(mid, "h", &h, torn_allowed).ExitCode(), 65);
  }
  // 64 levels, the event's own object included, still read.
  std::istringstream ok(good + "{\"index\":1,\"time_ns\":2,\"process\":1,\"type\":\"ok\","
                        "\"f\":\"acquire\",\"key\":\"L\",\"value\":" +
                        std::string(63, '[') + std::string(63, ']') + "}\n");
  EXPECT_TRUE(ParseJsonlHistory(ok, "h", &h).ok());
}

// history.cc reads lines of the lab's plain shape with a scanner and everything else with the
// JSON parser: the same event must come out either way, and the same errors.
TEST(HistoryReaderTest, PlainAndUnusualLinesReadTheSame) {
  auto one = [](const std::string& line, Event* e) {
    std::istringstream in(line + "\n");
    History h;
    Status s = ParseJsonlHistory(in, "h", &h);
    if (s.ok() && h.size() == 1) *e = h[0];
    return s.ok() ? std::string() : s.message();
  };
  Event plain;
  ASSERT_EQ(one(R"({"index":3,"time_ns":-5,"process":2,"type":"ok","f":"acquire","key":"L",)"
                R"("value":{"token":"a b","fence":7}})",
                &plain),
            "");
  for (const char* variant : {
           R"( { "value" : {"fence":7,"token":"a b"} , "key":"L", "f":"acquire","type":"ok",)"
           R"("process":2,"time_ns":-5,"index":3 } )",
           R"({"index":3,"time_ns":-5,"process":2,"type":"ok","f":"acq\u0075ire","key":"L",)"
           R"("value":{"token":"a b","fence":7}})",
           R"({"index":3,"time_ns":-5,"process":2,"type":"ok","f":"acquire","key":"L",)"
           R"("value":{"token":"a b","fence":7},"extra":[1,{"x":"}"}]})",
       }) {
    Event e;
    ASSERT_EQ(one(variant, &e), "") << variant;
    EXPECT_EQ(ToJsonLine(e), ToJsonLine(plain)) << variant;
    EXPECT_EQ(e.line, 1);
  }
  Event e;
  EXPECT_EQ(one(R"({"time_ns":1.5,"process":1,"type":"ok","f":"x"})", &e),
            "h:1: field 'time_ns': expected an integer");
  EXPECT_EQ(one(R"({"time_ns":01,"process":1,"type":"ok","f":"x"})", &e), "h:1: not a JSON object");
  EXPECT_EQ(one(R"({"time_ns":1,"process":1,"type":"ok","f":"x","value":{bad}})", &e),
            "h:1: not a JSON object");
  EXPECT_EQ(one(R"({"time_ns":1,"process":1,"type":"ok","f":"x"} trailing)", &e),
            "h:1: not a JSON object");
  EXPECT_EQ(one(R"({"time_ns":1,"process":-3,"type":"ok","f":"x"})", &e),
            "h:1: field 'process': negative process id");
  EXPECT_EQ(one(R"({"time_ns":1,"process":1,"type":"done","f":"x"})", &e),
            "h:1: field 'type': expected invoke, ok, fail or info");
  EXPECT_EQ(one(R"({"time_ns":1,"process":1,"type":"ok"})", &e), "h:1: field 'f': missing");
  // Duplicate fields: the JSON parser's reading (the last one wins), not the scanner's.
  ASSERT_EQ(one(R"({"time_ns":1,"time_ns":2,"process":1,"type":"ok","f":"x"})", &e), "");
  EXPECT_EQ(e.time, Nanos(2));
}

TEST(HistoryReaderTest, RoundTrip) {
  Event e;
  e.index = 7;
  e.time = Nanos(123);
  e.process = kNemesisProcess;
  e.type = EventType::kInfo;
  e.f = "start";
  e.key = "client-pause";
  e.value = {{"targets", {1}}};
  std::istringstream in(ToJsonLine(e) + "\n");
  History h;
  ASSERT_TRUE(ParseJsonlHistory(in, "h", &h).ok());
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].process, kNemesisProcess);
  EXPECT_EQ(h[0].key, "client-pause");
  EXPECT_EQ(h[0].value["targets"][0], 1);
}

}  // namespace
}  // namespace locklab::checker
