// Hand-written histories whose verdict is known by construction: the mutex models on native
// lock histories (the TTL-expiry violation the lab hunts for), registers, budgets, the
// counterexample, and the EDN / Porcupine-etcd readers' error messages.
#include <unistd.h>

#include <cctype>
#include <sstream>
#include <fstream>
#include <filesystem>

#include <gtest/gtest.h>

#include "checker/check_command.h"
#include "checker/history_formats.h"
#include "checker/linearizability.h"
#include "checker/mutual_exclusion.h"

namespace locklab::checker {
namespace {

History Jsonl(const std::string& text) {
  std::istringstream in(text);
  History h;
  Status s = ParseJsonlHistory(in, "t.jsonl", &h);
  EXPECT_TRUE(s.ok()) << s.message();
  return h;
}

std::string Ev(int64_t t, const std::string& proc, const std::string& type, const std::string& f,
               const std::string& key, const std::string& value = "null") {
  std::string p = std::isdigit(static_cast<unsigned char>(proc[0])) ? proc : "\"" + proc + "\"";
  return R"({"time_ns":)" + std::to_string(t) + R"(,"process":)" + p + R"(,"type":")" +
         type + R"(","f":")" + f + R"(","key":")" + key + R"(","value":)" + value + "}\n";
}

LinVerdict V(const History& h, Model m) { return CheckLinearizability(h, m).verdict; }

TEST(Linearizability, ModelNamesRoundTrip) {
  for (Model m : kAllModels) {
    Model back;
    ASSERT_TRUE(ParseModel(ModelName(m), &back));
    EXPECT_EQ(back, m);
  }
  Model m;
  EXPECT_FALSE(ParseModel("mutexx", &m));
}

TEST(Linearizability, CleanLockHandoverIsValid) {
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a","fence":1})") +
                    Ev(3, "2", "invoke", "acquire", "lock:0") +
                    Ev(4, "1", "invoke", "release", "lock:0", R"({"token":"a"})") +
                    Ev(5, "1", "ok", "release", "lock:0") +
                    Ev(6, "2", "ok", "acquire", "lock:0", R"({"token":"b","fence":2})") +
                    Ev(7, "nemesis", "info", "start", "client-pause") +
                    Ev(8, "2", "invoke", "renew", "lock:0", R"({"token":"b"})") +
                    Ev(9, "2", "ok", "renew", "lock:0"));
  for (Model m : {Model::kMutex, Model::kOwnerMutex, Model::kFencedMutex}) {
    EXPECT_EQ(V(h, m), LinVerdict::kValid) << ModelName(m);
  }
}

TEST(Linearizability, ExpiredLeaseReacquiredIsInvalidWithCounterexample) {
  // Client 1 never releases (its lease expired while paused); client 2 acquires anyway.
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a","fence":1})") +
                    Ev(10, "2", "invoke", "acquire", "lock:0") +
                    Ev(11, "2", "ok", "acquire", "lock:0", R"({"token":"b","fence":2})") +
                    Ev(12, "1", "invoke", "release", "lock:0", R"({"token":"a"})") +
                    Ev(13, "1", "fail", "release", "lock:0"));
  LinearizabilityResult r = CheckLinearizability(h, Model::kOwnerMutex);
  ASSERT_EQ(r.verdict, LinVerdict::kInvalid);
  ASSERT_TRUE(r.counterexample);
  EXPECT_EQ(r.counterexample->key, "lock:0");
  EXPECT_EQ(r.counterexample->failed.process, 2);
  EXPECT_EQ(r.counterexample->failed.f, "acquire");
  EXPECT_EQ(r.counterexample->prefix_events, 4);
  ASSERT_EQ(r.counterexample->states_tried.size(), 1u);
  EXPECT_EQ(r.counterexample->states_tried[0], "held by a");
  auto j = r.ToJson();
  EXPECT_EQ(j["linearizable"], false);
  EXPECT_EQ(j["counterexample"]["failed"]["complete_line"], 4);
  EXPECT_NE(r.ToText().find("held by a"), std::string::npos) << r.ToText();
  EXPECT_EQ(V(h, Model::kMutex), LinVerdict::kInvalid);
}

TEST(Linearizability, ReleaseByNonHolderOnlyBreaksOwnerModels) {
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a"})") +
                    Ev(3, "2", "invoke", "release", "lock:0", R"({"token":"zzz"})") +
                    Ev(4, "2", "ok", "release", "lock:0"));
  EXPECT_EQ(V(h, Model::kMutex), LinVerdict::kValid);
  EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kInvalid);
}

TEST(Linearizability, FencesMustGrowOnlyForFencedMutex) {
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a","fence":7})") +
                    Ev(3, "1", "invoke", "release", "lock:0", R"({"token":"a"})") +
                    Ev(4, "1", "ok", "release", "lock:0") +
                    Ev(5, "2", "invoke", "acquire", "lock:0") +
                    Ev(6, "2", "ok", "acquire", "lock:0", R"({"token":"b","fence":7})"));
  EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kValid);
  EXPECT_EQ(V(h, Model::kFencedMutex), LinVerdict::kInvalid);
}

// Regression (zk-lock x reply-loss, seed 601: "violated" with no two holders): a holder's
// release failed (its session had expired), then another client acquired. The failed
// release says the lease had ended; the model used to drop it, stay "held by a" forever and
// reject the next acquire. A failed renew says the same.
TEST(Linearizability, AFailedReleaseOrRenewEndsTheLeaseInOwnerModels) {
  for (const char* f : {"release", "renew"}) {
    History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                      Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a","validity_ms":469})") +
                      Ev(3, "1", "invoke", f, "lock:0", R"({"token":"a"})") +
                      Ev(4, "1", "fail", f, "lock:0", R"({"error":"session expired"})") +
                      Ev(5, "2", "invoke", "acquire", "lock:0") +
                      Ev(6, "2", "ok", "acquire", "lock:0", R"({"token":"b"})"));
    EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kValid) << f;
    // Without the failure the model has a holding at 5: invalid, as before.
    History held = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                         Ev(2, "1", "ok", "acquire", "lock:0", R"({"token":"a"})") +
                         Ev(5, "2", "invoke", "acquire", "lock:0") +
                         Ev(6, "2", "ok", "acquire", "lock:0", R"({"token":"b"})"));
    EXPECT_EQ(V(held, Model::kOwnerMutex), LinVerdict::kInvalid);
  }
  // A failed release of a token that does not hold the lock changes nothing: b still holds,
  // and c's acquire is still a second grant.
  History other = Jsonl(Ev(1, "2", "invoke", "acquire", "lock:0") +
                        Ev(2, "2", "ok", "acquire", "lock:0", R"({"token":"b"})") +
                        Ev(3, "1", "invoke", "release", "lock:0", R"({"token":"a"})") +
                        Ev(4, "1", "fail", "release", "lock:0", R"({"error":"not-owner"})") +
                        Ev(5, "3", "invoke", "acquire", "lock:0") +
                        Ev(6, "3", "ok", "acquire", "lock:0", R"({"token":"c"})"));
  EXPECT_EQ(V(other, Model::kOwnerMutex), LinVerdict::kInvalid);
  EXPECT_EQ(V(other, Model::kFencedMutex), LinVerdict::kInvalid);
}

// Regression (etcd-lease x restart, DbEtcdChaosTest.EtcdLeaseSurvivesAMemberKilledAndRestarted
// in CI: "violated" with no two holders): a keep-alive was refused by a member being
// restarted ("connect: Connection reset by peer": never sent, so `fail`), then the holder's
// release succeeded on another member. Reading every failed renew as "the lease ended" freed
// the model, and the holder's own ok release had nothing to release. A failed call that never
// reached the lock says nothing about the hold: both readings must be open.
TEST(Linearizability, AFailedRenewThatNeverReachedTheLockLeavesTheHolderHolding) {
  for (const char* f : {"renew", "release"}) {
    History h = Jsonl(Ev(1, "2", "invoke", "acquire", "lock:0") +
                      Ev(2, "2", "ok", "acquire", "lock:0", R"({"token":"a","fence":2})") +
                      Ev(3, "1002", "invoke", f, "lock:0", R"({"token":"a"})") +
                      Ev(4, "1002", "fail", f, "lock:0",
                         R"({"error":"connect 127.0.0.1:39675: Connection reset by peer"})") +
                      Ev(5, "2", "invoke", "release", "lock:0", R"({"token":"a"})") +
                      Ev(6, "2", "ok", "release", "lock:0") +
                      Ev(7, "3", "invoke", "acquire", "lock:0") +
                      Ev(8, "3", "ok", "acquire", "lock:0", R"({"token":"b","fence":3})"));
    EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kValid) << f;
    EXPECT_EQ(V(h, Model::kFencedMutex), LinVerdict::kValid) << f;
  }
  // Either reading, never both at once: an ok release of a after b was granted (with no
  // release of a in between that could have freed it) is still a second holder.
  History late = Jsonl(Ev(1, "2", "invoke", "acquire", "lock:0") +
                       Ev(2, "2", "ok", "acquire", "lock:0", R"({"token":"a"})") +
                       Ev(3, "1002", "invoke", "renew", "lock:0", R"({"token":"a"})") +
                       Ev(4, "1002", "fail", "renew", "lock:0", R"({"error":"lease gone"})") +
                       Ev(5, "3", "invoke", "acquire", "lock:0") +
                       Ev(6, "3", "ok", "acquire", "lock:0", R"({"token":"b"})") +
                       Ev(7, "2", "invoke", "release", "lock:0", R"({"token":"a"})") +
                       Ev(8, "2", "ok", "release", "lock:0"));
  EXPECT_EQ(V(late, Model::kOwnerMutex), LinVerdict::kInvalid);
}

TEST(Linearizability, UnknownAcquireMayHaveTakenEffectOrNot) {
  // p1's acquire timed out (info); p2 then acquires: valid (p1's never happened).
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "info", "acquire", "lock:0") +
                    Ev(3, "2", "invoke", "acquire", "lock:0") +
                    Ev(4, "2", "ok", "acquire", "lock:0", R"({"token":"b"})"));
  EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kValid);
}

TEST(Linearizability, RegisterResourceHistoryWithHarnessReadAndStaleFence) {
  std::string base = Ev(1, "1", "invoke", "write", "counter:0", R"({"value":1,"fence":3})") +
                     Ev(2, "1", "ok", "write", "counter:0", R"({"value":1,"fence":3})") +
                     Ev(3, "2", "invoke", "write", "counter:0", R"({"value":5,"fence":2})") +
                     Ev(4, "2", "fail", "write", "counter:0", R"({"error":"stale-fence"})") +
                     Ev(5, "1", "invoke", "read", "counter:1") +
                     Ev(6, "1", "ok", "read", "counter:1", "null") +
                     Ev(7, "harness", "invoke", "read", "counter:0");
  EXPECT_EQ(V(Jsonl(base + Ev(8, "harness", "ok", "read", "counter:0", "1")), Model::kRegister),
            LinVerdict::kValid);
  EXPECT_EQ(V(Jsonl(base + Ev(8, "harness", "ok", "read", "counter:0", "5")), Model::kRegister),
            LinVerdict::kInvalid);
  // The rejected write and the still-pending read drop out; lock ops would be ignored too.
  EXPECT_EQ(CheckLinearizability(Jsonl(base), Model::kRegister).operations, 2u);
}

TEST(Linearizability, InfoWriteMayTakeEffectMuchLater) {
  History h = Jsonl(Ev(1, "1", "invoke", "write", "r", "1") + Ev(2, "1", "ok", "write", "r", "1") +
                    Ev(3, "2", "invoke", "write", "r", "2") + Ev(4, "2", "info", "write", "r") +
                    Ev(5, "3", "invoke", "read", "r") + Ev(6, "3", "ok", "read", "r", "1") +
                    Ev(7, "3", "invoke", "read", "r") + Ev(8, "3", "ok", "read", "r", "2") +
                    Ev(9, "3", "invoke", "read", "r") + Ev(10, "3", "ok", "read", "r", "1"));
  EXPECT_EQ(V(h, Model::kRegister), LinVerdict::kInvalid);  // 1, 2, then 1 again: impossible
  h.resize(8);
  EXPECT_EQ(V(h, Model::kRegister), LinVerdict::kValid);
}

TEST(Linearizability, PartitionsPerKey) {
  // Each key alone is valid; merged onto one key it would not be.
  History h = Jsonl(Ev(1, "1", "invoke", "write", "a", "1") + Ev(2, "1", "ok", "write", "a", "1") +
                    Ev(3, "2", "invoke", "write", "b", "2") + Ev(4, "2", "ok", "write", "b", "2") +
                    Ev(5, "1", "invoke", "read", "a") + Ev(6, "1", "ok", "read", "a", "1"));
  LinearizabilityResult r = CheckLinearizability(h, Model::kRegister);
  EXPECT_EQ(r.verdict, LinVerdict::kValid);
  EXPECT_EQ(r.keys, 2u);
}

TEST(Linearizability, BudgetsGiveUnknownNeverAGuess) {
  // 40 writes open at once and a read of a value none wrote, inside them: whether some order
  // of some subset of the writes explains it is a search over the subsets (2^40 linearized
  // sets). An unknown write nobody observes is dropped outright (rule R3), so the writes here
  // complete.
  std::string text;
  for (int p = 0; p < 40; ++p) {
    text += Ev(1 + p, std::to_string(p), "invoke", "write", "r", std::to_string(p));
  }
  text += Ev(50, "99", "invoke", "read", "r") + Ev(51, "99", "ok", "read", "r", "1000");
  for (int p = 0; p < 40; ++p) text += Ev(100 + p, std::to_string(p), "ok", "write", "r");
  History h = Jsonl(text);
  LinearizabilityOptions o;
  o.time_budget = std::chrono::milliseconds(50);
  LinearizabilityResult r = CheckLinearizability(h, Model::kRegister, o);
  EXPECT_EQ(r.verdict, LinVerdict::kUnknown);
  EXPECT_NE(r.reason.find("time budget"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.ToJson()["linearizable"].is_null());
  o.time_budget = std::chrono::milliseconds(10000);
  o.memory_budget_bytes = 64 << 10;
  r = CheckLinearizability(h, Model::kRegister, o);
  EXPECT_EQ(r.verdict, LinVerdict::kUnknown);
  EXPECT_NE(r.reason.find("memory budget"), std::string::npos) << r.reason;
  // Which key, and how far the search got: the read's completion is event 42 of 82, line 42.
  EXPECT_NE(r.reason.find("on key r at event 42 of 82 (line 42)"), std::string::npos) << r.reason;
  EXPECT_LE(r.peak_memory_bytes, size_t(64 << 10) + (16 << 10)) << "the budget is a ceiling";
}

TEST(Linearizability, SecondInvocationBeforeACompletionIsMalformed) {
  History h = Jsonl(Ev(1, "1", "invoke", "acquire", "lock:0") +
                    Ev(2, "1", "invoke", "release", "lock:0", R"({"token":"a"})") +
                    Ev(3, "1", "ok", "release", "lock:0"));
  LinearizabilityResult r;
  Status s = CheckLinearizability(h, Model::kOwnerMutex, {}, "x.jsonl", &r);
  EXPECT_EQ(s.message(),
            "x.jsonl:2: field 'type': process 1 invokes 'release' while its 'acquire' of line 1 "
            "has not completed");
  // An invocation that never completed at the end of the history is fine (unknown outcome).
  h.resize(1);
  EXPECT_EQ(V(h, Model::kOwnerMutex), LinVerdict::kValid);
}

TEST(Linearizability, MalformedOperationsNameTheLine) {
  History h = Jsonl(Ev(1, "1", "invoke", "cas", "r", "[1]") + Ev(2, "1", "ok", "cas", "r"));
  LinearizabilityResult r;
  Status s = CheckLinearizability(h, Model::kCasRegister, {}, "x.jsonl", &r);
  EXPECT_EQ(s.message(), "x.jsonl:1: field 'value': a cas needs [expected new]");
  h = Jsonl(Ev(1, "1", "ok", "read", "r", "1"));
  s = CheckLinearizability(h, Model::kRegister, {}, "x.jsonl", &r);
  EXPECT_EQ(s.message(),
            "x.jsonl:1: field 'type': 'ok' completion without a pending invocation by process 1");
  EXPECT_EQ(CheckLinearizability(h, Model::kRegister).verdict, LinVerdict::kUnknown);
}

TEST(Formats, EdnWithCommentsTagsAndExtraKeys) {
  std::string text =
      "; a comment\n"
      "[{:process 0, :type :invoke, :f :write, :value 1, :time 5}\n"
      " #jepsen.history.Op{:process 0 :type :ok :f :write :value 1 :error [:x nil]}\n"
      " #_ {:ignored true}\n"
      " {:process :nemesis :type :info :f :start :value \"part\"}\n"
      " {:process 1 :type :invoke :f :cas :value [1 2]} ; trailing\n"
      " {:process 1 :type :fail :f :cas :value [1 2]}]\n";
  History h;
  Status s = ParseEdnHistory(text, "h.edn", &h);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[1].line, 3);
  EXPECT_EQ(h[2].process, kNemesisProcess);
  EXPECT_EQ(h[3].value, nlohmann::json::array({1, 2}));
  // Knossos: :fail did not happen -> valid; Porcupine's reading (observed != 1) -> invalid.
  EXPECT_EQ(V(h, Model::kCasRegister), LinVerdict::kValid);
  LinearizabilityOptions o;
  o.cas_fail_is_observation = true;
  EXPECT_EQ(CheckLinearizability(h, Model::kCasRegister, o).verdict, LinVerdict::kInvalid);
}

TEST(Formats, EdnErrorsAreOneLineWithTheLine) {
  History h;
  EXPECT_EQ(ParseEdnHistory("[{:process 0 :type :invoke :f :read}\n {:process x}]", "h.edn", &h)
                .message(),
            "h.edn:2: field 'process': expected an integer or :nemesis");
  EXPECT_EQ(ParseEdnHistory("[{:process 0 :type :bogus :f :read}]", "h.edn", &h).message(),
            "h.edn:1: field 'type': expected :invoke, :ok, :fail or :info");
  EXPECT_EQ(ParseEdnHistory("[{:process 0\n :type :invoke", "h.edn", &h).message(),
            "h.edn:2: missing '}'");
  EXPECT_EQ(ParseEdnHistory(std::string(100, '['), "h.edn", &h).message(),
            "h.edn:1: nested deeper than 64 levels");
  // Regression: the limit holds for an op's value (named) and for a chain of #_ discards,
  // which used to recurse without one.
  EXPECT_EQ(ParseEdnHistory("[{:process 0 :type :invoke :f :read :value " +
                                std::string(100000, '[') + "}]",
                            "h.edn", &h)
                .message(),
            "h.edn:1: field 'value': nested deeper than 64 levels");
  std::string discards;
  for (int i = 0; i < 100000; ++i) discards += "#_ ";
  EXPECT_EQ(ParseEdnHistory("[" + discards + "1]", "h.edn", &h).message(),
            "h.edn:1: nested deeper than 64 levels");
  EXPECT_EQ(ParseEdnHistory("[{:process 0 :type :invoke :f :read} 3]", "h.edn", &h).message(),
            "h.edn:1: expected a map {:process .. :type ..}");
}

TEST(Formats, PorcupineEtcdLinesAndErrors) {
  History h;
  Status s = ParsePorcupineEtcdHistory(
      "INFO  jepsen.util - 3\t:invoke\t:cas\t[4 0]\n"
      "INFO  jepsen.util - 3   :fail   :cas    [4 0]\n\n"
      "INFO  jepsen.util - 1\t:invoke\t:read\tnil\n"
      "INFO  jepsen.util - 1\t:fail\t:read\t:timed-out\n",
      "e.log", &h);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[2].line, 4);
  EXPECT_EQ(h[3].value, "timed-out");
  EXPECT_EQ(ParsePorcupineEtcdHistory("INFO  jepsen.util - 1\t:ok\t:read\tabc\n", "e.log", &h)
                .message(),
            "e.log:1: field 'value': expected nil, an integer, [a b] or a keyword");
  EXPECT_EQ(ParsePorcupineEtcdHistory("\nhello\n", "e.log", &h).message(),
            "e.log:2: expected 'INFO  jepsen.util - PROCESS :TYPE :F VALUE'");
  EXPECT_EQ(ParsePorcupineEtcdHistory("INFO  jepsen.util - 99999999999999999999999 :ok :read 1",
                                      "e.log", &h)
                .message(),
            "e.log:1: field 'process': expected a non-negative integer");
}

TEST(Formats, NonUtf8BytesNeverThrow) {  // fuzzer findings
  History h;
  std::string etcd = "INFO  jepsen.util - 2\t:invoke\t:write\t:\xff\xfeinfo\n"
                     "INFO  jepsen.util - 2\t:ok\t:write\t:\xff\xfeinfo\n"
                     "INFO  jepsen.util - 1\t:invoke\t:read\tnil\n"
                     "INFO  jepsen.util - 1\t:ok\t:read\t:\xfe\xffinfo\n";
  ASSERT_TRUE(ParsePorcupineEtcdHistory(etcd, "e.log", &h).ok());
  LinearizabilityResult r = CheckLinearizability(h, Model::kCasRegister);
  EXPECT_EQ(r.verdict, LinVerdict::kValid);  // both bytes become '?': the same keyword
  EXPECT_NO_THROW(r.ToJson().dump());
  std::string edn = "[{:process 0 :type :invoke :f :write :value {[\"\xff\"] \\\xc3}}\n"
                    " {:process 0 :type :info :f :write :value nil}]";
  ASSERT_TRUE(ParseEdnHistory(edn, "h.edn", &h).ok());
  EXPECT_NO_THROW(CheckLinearizability(h, Model::kRegister).ToJson().dump());
}

TEST(Formats, Detection) {
  EXPECT_EQ(DetectHistoryFormat("a.edn", ""), HistoryFormat::kEdn);
  EXPECT_EQ(DetectHistoryFormat("a", "INFO  jepsen"), HistoryFormat::kPorcupineEtcd);
  EXPECT_EQ(DetectHistoryFormat("a", " {\"time_ns\":1}"), HistoryFormat::kJsonl);
  EXPECT_EQ(DetectHistoryFormat("a", "{:process 1}"), HistoryFormat::kEdn);
  EXPECT_EQ(DetectHistoryFormat("history.jsonl", "[{:process 1}]"), HistoryFormat::kJsonl);
}

// Regression: an empty file, or one with nothing the model reads, passed as "valid (0
// operations)", exit 0; and a parse error in one file hid a violation in another.
TEST(CheckCommand, NothingCheckedIsNeverAPassAndAViolationIsNeverHidden) {
  std::string dir = ::testing::TempDir() + "/check_command_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  std::string empty = write("empty.jsonl", "");
  std::string blank = write("blank.jsonl", "\n  \n");
  std::string regs = write("regs.jsonl", Ev(1, "1", "invoke", "write", "r", "1") +
                                            Ev(2, "1", "ok", "write", "r", "1"));
  std::string broken = write("broken.jsonl", "{not json\n");
  std::string twice = write("twice.jsonl", Ev(1, "1", "invoke", "acquire", "L") +
                                               Ev(2, "1", "invoke", "acquire", "L"));
  std::string violated = write(
      "violated.jsonl", Ev(1, "1", "invoke", "acquire", "L") +
                            Ev(2, "1", "ok", "acquire", "L", R"({"token":"a"})") +
                            Ev(3, "2", "invoke", "acquire", "L") +
                            Ev(4, "2", "ok", "acquire", "L", R"({"token":"b"})"));
  std::string valid = write("valid.jsonl", Ev(1, "1", "invoke", "acquire", "L") +
                                               Ev(2, "1", "ok", "acquire", "L", R"({"token":"a"})"));
  EXPECT_EQ(RunCheckCommand({"--model", "mutex", empty}), 65);
  EXPECT_EQ(RunCheckCommand({"--model", "mutex", blank}), 65);
  EXPECT_EQ(RunCheckCommand({empty}), 65);  // the judge's path too
  EXPECT_EQ(RunCheckCommand({"--model", "mutex", regs}), 2);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", twice}), 65);
  // The judge (no --model) refuses what --model refuses: it used to call a malformed lock
  // history "unknown" (exit 2) with the parse error inside the linearizability line.
  EXPECT_EQ(RunCheckCommand({twice}), 65);
  EXPECT_EQ(RunCheckCommand({twice, violated}), 1);
  EXPECT_EQ(RunCheckCommand({"--model", "mutex", valid}), 0);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", violated}), 1);
  // Ranking: violated (1) > unreadable (65) > unknown (2) > valid (0), in any order.
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", broken, violated}), 1);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", violated, twice}), 1);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", regs, broken, valid}), 65);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", valid, regs}), 2);
  EXPECT_EQ(RunCheckCommand({"--model", "owner-mutex", valid, valid}), 0);
  std::filesystem::remove_all(dir);
}

// A history whose model operations are there but all failed is valid, vacuously, and says
// so; one with none of the model's operations stays unknown (it checked nothing). Knossos'
// mongodb ack-rollback histories marked good are of the first kind (every op failed).
TEST(CheckCommand, AllFailedIsVacuouslyValidNothingOfTheModelIsUnknown) {
  std::string dir = ::testing::TempDir() + "/check_vacuous_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  std::string all_failed = write("all-failed.edn",
                                 "[{:process 14, :type :invoke, :f :read, :value nil}\n"
                                 " {:process 14, :type :fail, :f :read, :value nil}\n"
                                 " {:process 16, :type :invoke, :f :cas, :value [3 3]}\n"
                                 " {:process 17, :type :invoke, :f :write, :value 2}\n"
                                 " {:process 16, :type :fail, :f :cas, :value [3 3]}\n"
                                 " {:process 17, :type :fail, :f :write, :value 2}]\n");
  std::string other = write("other.edn", "[{:process 1, :type :invoke, :f :enqueue, :value 1}\n"
                                         " {:process 1, :type :ok, :f :enqueue, :value 1}]\n");
  EXPECT_EQ(RunCheckCommand({all_failed}), 0);
  EXPECT_EQ(RunCheckCommand({other}), 2);
  History h;
  HistoryFormat fmt = HistoryFormat::kEdn;
  ASSERT_TRUE(ReadHistoryFile(all_failed, &fmt, false, &h).ok());
  LinearizabilityResult r = CheckLinearizability(h, Model::kCasRegister);
  EXPECT_EQ(r.verdict, LinVerdict::kValid);
  EXPECT_EQ(r.operations, 0u);
  EXPECT_EQ(r.invocations, 3u);
  EXPECT_EQ(r.reason, "vacuously: all 3 cas-register operations failed (none took effect)");
  // Had one of them taken effect, or been unknown, it is not vacuous.
  History one = h;
  one[1].type = EventType::kOk;
  one[1].value = nullptr;
  EXPECT_EQ(CheckLinearizability(one, Model::kCasRegister).reason, "");
  std::filesystem::remove_all(dir);
}

// linearizability.unplaceable: the op that cannot be placed, the ops in its way and one
// sentence, in the shape the report draws (times: the history's ns; the sentence's: seconds
// from its first event).
TEST(Linearizability, UnplaceableNamesTheOpItsConflictsAndSaysWhy) {
  constexpr int64_t kS = 1000000000;
  // A stale token's release (a plain DEL) while another client holds the lock.
  History h = Jsonl(Ev(0, "1", "invoke", "acquire", "L") +
                    Ev(kS / 10, "1", "ok", "acquire", "L", R"({"token":"a","validity_ms":500})") +
                    Ev(kS / 5, "1", "invoke", "release", "L", R"({"token":"a"})") +
                    Ev(kS / 4, "1", "ok", "release", "L") +
                    Ev(kS, "3", "invoke", "acquire", "L") +
                    Ev(kS + kS / 10, "3", "ok", "acquire", "L", R"({"token":"b"})") +
                    Ev(2 * kS, "2", "invoke", "release", "L", R"({"token":"a"})") +
                    Ev(2 * kS + kS / 4, "2", "ok", "release", "L"));
  LinearizabilityResult r = CheckLinearizability(h, Model::kOwnerMutex);
  ASSERT_EQ(r.verdict, LinVerdict::kInvalid);
  ASSERT_TRUE(r.counterexample);
  const LinCounterexample& c = *r.counterexample;
  EXPECT_EQ(c.sentence,
            "client 2's release at 2.25 s succeeded 1.65 s after its lease expired and deleted "
            "client 3's key (client 3 acquired it at 1.10 s)");
  nlohmann::ordered_json u = c.UnplaceableJson();
  EXPECT_EQ(u["op"]["process"], 2);
  EXPECT_EQ(u["op"]["f"], "release");
  EXPECT_EQ(u["op"]["key"], "L");
  EXPECT_EQ(u["op"]["invoke_ns"], 2 * int64_t(kS));
  EXPECT_EQ(u["op"]["complete_ns"], 2 * int64_t(kS) + kS / 4);
  EXPECT_EQ(u["op"]["outcome"], "ok");
  EXPECT_EQ(u["op"]["value"], nlohmann::json({{"token", "a"}}));
  EXPECT_EQ(u["prefix_ops"], 4);
  // In its way: client 3's acquire (the holder), and token a's own acquire (its hold ended).
  ASSERT_EQ(u["conflicts"].size(), 2u) << u.dump();
  EXPECT_EQ(u["conflicts"][0]["process"], 1);
  EXPECT_EQ(u["conflicts"][1]["process"], 3);
  EXPECT_EQ(u["conflicts"][1]["complete_ns"], kS + kS / 10);
  EXPECT_EQ(u["sentence"], c.sentence);
  EXPECT_EQ(r.ToJson()["unplaceable"], u);
  EXPECT_NE(r.ToText().find("why: client 2's release"), std::string::npos) << r.ToText();

  // A register read of a value the register did not hold: the write it saw instead.
  History reg = Jsonl(Ev(0, "1", "invoke", "write", "r", "1") + Ev(kS, "1", "ok", "write", "r", "1") +
                      Ev(2 * kS, "2", "invoke", "read", "r") + Ev(3 * kS, "2", "ok", "read", "r", "2"));
  LinearizabilityResult rr = CheckLinearizability(reg, Model::kRegister);
  ASSERT_TRUE(rr.counterexample);
  EXPECT_EQ(rr.counterexample->sentence,
            "client 2's read at 3.00 s returned 2, but the register held 1 then (client 1's write "
            "at 1.00 s)");
  ASSERT_EQ(rr.counterexample->conflicts.size(), 1u);
  EXPECT_EQ(rr.counterexample->conflicts[0].f, "write");
}

TEST(CheckCommand, UsageErrors) {
  EXPECT_EQ(RunCheckCommand({}), 64);
  EXPECT_EQ(RunCheckCommand({"--model", "nope", "x"}), 64);
  EXPECT_EQ(RunCheckCommand({"--frobnicate", "x"}), 64);
  EXPECT_EQ(RunCheckCommand({"/nonexistent/file.edn"}), 65);
}

}  // namespace
}  // namespace locklab::checker
