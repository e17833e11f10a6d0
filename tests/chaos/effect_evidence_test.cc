// Every fault proves its effect: on real processes, each fault of `locklab list`
// records "effect" evidence that it was seen to act (a stopped process, a stepped clock read
// through the node's own TIME, bytes the proxy held, a new pid serving, ...), and a clock
// fault whose preload never took (LOCKLAB_LIBFAKETIME pointing at a file that is not the
// library: the dynamic loader ignores it) reads unknown, exit 2, naming the clock fault and
// the preload, where the same scenario with the real library shows the step.
#include <stdlib.h>

#include <regex>

#include <gtest/gtest.h>

#include "faults/fault.h"
#include "tests/run_locklab.h"

namespace locklab::testing {
namespace {

using EffectEvidenceTest = TrialTest;

// The history's "effect" events of `fault`.
std::vector<nlohmann::json> Effects(const std::vector<nlohmann::json>& history, const std::string& fault) {
  std::vector<nlohmann::json> out;
  for (const auto& e : history) {
    // Clients' "process" is a number: compare the JSON values, not strings.
    if (e.is_object() && e["process"] == "nemesis" && e["f"] == "effect" && e["key"] == fault) {
      out.push_back(e["value"]);
    }
  }
  return out;
}

// Sets an environment variable for the runs of one test, and puts it back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST_F(EffectEvidenceTest, AClockJumpWhosePreloadNeverTookIsUnknownNamingIt) {
  const std::vector<std::string> jump = {"--param", "offset=+20s", "--pause", "2000"};
  {
    ScopedEnv env("LOCKLAB_LIBFAKETIME", "/etc/hostname");  // readable, not a library
    int code = 0;
    auto r = Trial("set-nx-px-lua", "clock-jump", jump, &code);
    EXPECT_EQ(r["verdict"], "unknown") << r.dump(2);
    EXPECT_EQ(code, 2);
    const std::string why = r.value("verdict_reason", "");
    EXPECT_EQ(why.rfind("no fault bit: clock-jump: ", 0), 0u) << why;
    // The node's clock is the real one, give or take the milliseconds between the two reads
    // (either sign).
    EXPECT_TRUE(std::regex_search(why, std::regex(R"(effect not seen: node n1 TIME [+-]0\.0\d\d s)"))) << why;
    EXPECT_NE(why.find("(libfaketime not loaded?)"), std::string::npos) << why;
    ASSERT_EQ(r["coverage"].size(), 1u);
    EXPECT_EQ(r["coverage"][0]["bit"], false);
    EXPECT_GE(r["coverage"][0]["windows_met"].get<int>(), 1) << "the window did open over lock work";
    EXPECT_EQ(r["coverage"][0]["effects_seen"], 0);
    for (const auto& e : Effects(History(), "clock-jump")) EXPECT_EQ(e["seen"], false) << e.dump();
  }
  // The same scenario with the real library: the node's own clock shows the step.
  auto r = Trial("set-nx-px-lua", "clock-jump", jump);
  EXPECT_NE(r["verdict"], "unknown") << r.dump(2);
  ASSERT_EQ(r["coverage"].size(), 1u);
  const auto& c = r["coverage"][0];
  EXPECT_EQ(c["bit"], true) << c.dump();
  EXPECT_GE(c["effects_seen"].get<int>(), 1) << c.dump();
  EXPECT_NE(c["evidence"].get<std::string>().find("node n1 TIME +20.0"), std::string::npos) << c.dump();
  std::vector<nlohmann::json> effects = Effects(History(), "clock-jump");
  ASSERT_FALSE(effects.empty());
  EXPECT_EQ(effects[0]["seen"], true) << effects[0].dump();
  EXPECT_NEAR(effects[0]["offset_s"].get<double>(), 20.0, 1.0) << effects[0].dump();
}

// Every fault the lab lists, on a lock that takes them all: each window that opened records
// one effect event, and the fault's effect was seen at least once (the run's coverage says
// which evidence). A fault added later is run here too.
TEST_F(EffectEvidenceTest, EveryListedFaultRecordsItsEffect) {
  for (const auto& info : faults::ListFaults()) {
    if (info.id == "none") continue;
    SCOPED_TRACE(info.id);
    std::vector<std::string> extra;
    // A promotion takes seconds, and failover's effect is the promotion while a client still
    // holds the lock n1 granted after the cut: the run the fault shapes by itself when no
    // flag gives these (FailoverEffect::ShapeRun), which Trial's flags do.
    if (info.id == "failover") {
      extra = {"--duration", "11s", "--hold", "3000", "--ttl", "4000", "--acquire-timeout", "1000",
               "--pause", "6000"};
    }
    auto r = Trial("set-nx-px-lua", info.id, extra);
    ASSERT_EQ(r["coverage"].size(), 1u) << r.dump(2);
    const auto& c = r["coverage"][0];
    EXPECT_GE(c["windows_opened"].get<int>(), 1) << c.dump();
    EXPECT_GE(c["effects_seen"].get<int>(), 1) << c.dump();
    EXPECT_EQ(c["bit"], true) << c.dump();
    EXPECT_FALSE(c["evidence"].get<std::string>().empty()) << c.dump();
    std::vector<nlohmann::json> effects = Effects(History(), info.id);
    EXPECT_EQ(static_cast<int>(effects.size()), c["windows_opened"].get<int>())
        << "one effect event per window: " << c.dump();
    for (const auto& e : effects) {
      EXPECT_TRUE(e.contains("seen") && e.contains("evidence") && e.contains("window")) << e.dump();
    }
  }
}

}  // namespace
}  // namespace locklab::testing
