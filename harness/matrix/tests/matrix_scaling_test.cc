// Matrix cells at another TTL (matrix_scaling.h): the scaling function on its own (a
// scenario in, a scenario or why-not out), and BuildPlan with --ttl and a driver's declared
// ttl_ms over the shipped presets (scenarios/matrix/).
#include "harness/matrix/matrix_scaling.h"

#include <gtest/gtest.h>

#include "harness/matrix/matrix_plan.h"

namespace locklab::harness {
namespace {

RunOptions Preset500() {
  RunOptions o;
  o.lock = "set-nx-px-lua";
  o.ttl = Millis(500);
  o.duration = Millis(3500);
  o.hold = Millis(100);
  o.think = Millis(0);
  o.acquire_timeout = Millis(1000);
  faults::FaultOptions f;
  f.id = "delay";
  f.first_at = Millis(300);
  f.duration = Millis(2000);
  f.interval = Millis(500);
  f.params = {{"delay_ms", "1200"}, {"mode", "hold"}};
  o.faults = {f};
  return o;
}

TEST(MatrixScalingTest, EveryTimeScalesWithTheTtl) {
  RunOptions out;
  std::string why;
  ASSERT_TRUE(ScaleToTtl(Preset500(), Millis(1000), &out, &why)) << why;
  EXPECT_EQ(out.ttl, Millis(1000));
  EXPECT_EQ(out.duration, Millis(7000));
  EXPECT_EQ(out.hold, Millis(200));
  EXPECT_EQ(out.think, Millis(0)) << "zero stays zero";
  EXPECT_EQ(out.acquire_timeout, Millis(2000));
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].first_at, Millis(600));
  EXPECT_EQ(out.faults[0].duration, Millis(4000));
  EXPECT_EQ(out.faults[0].interval, Millis(1000));
  EXPECT_EQ(out.faults[0].params.at("delay_ms"), "2400");
  EXPECT_EQ(out.faults[0].params.at("mode"), "hold") << "only *_ms params are times";
  EXPECT_EQ(out.retry_delay, Preset500().retry_delay) << "the network's times stay";
}

TEST(MatrixScalingTest, ScalingDownRoundsAndKeepsNonZeroTimesAtLeastOneMs) {
  RunOptions out;
  std::string why;
  RunOptions fast = Preset500();
  fast.command_timeout = Millis(1);  // room for its lock commands even at 6 ms
  ASSERT_TRUE(ScaleToTtl(fast, Millis(3), &out, &why)) << why;
  EXPECT_EQ(out.hold, Millis(1));                  // 100 x 3/500 = 0.6 -> 1
  EXPECT_EQ(out.acquire_timeout, Millis(6));       // 1000 x 3/500
  EXPECT_EQ(out.duration, Millis(100)) << "a run is at least 100 ms (21 ms scaled)";
  EXPECT_EQ(out.faults[0].first_at, Millis(2));    // 1.8 -> 2
}

// The factor is the run's TTL over the preset's own (restart's 3000 ms): a driver whose lease
// is 1000 ms would get a 333 ms acquire timeout, which two 200 ms lock commands do not fit,
// and every operation unknown. The cell is refused, saying why.
TEST(MatrixScalingTest, AnAcquireTimeoutWithNoRoomForALockCommandIsRefused) {
  RunOptions restart = Preset500();
  restart.ttl = Millis(3000);
  restart.hold = Millis(1000);
  restart.acquire_timeout = Millis(1000);
  RunOptions out;
  std::string why;
  EXPECT_FALSE(ScaleToTtl(restart, Millis(1000), &out, &why));
  EXPECT_EQ(why, "its acquire timeout would be 333 ms (the preset's times x 0.333 for TTL 1000 ms, from its own "
                 "TTL 3000 ms), below two command timeouts (2 x 200 ms): no room for a lock command");
  ASSERT_TRUE(ScaleToTtl(restart, Millis(1500), &out, &why)) << why;
  EXPECT_EQ(out.acquire_timeout, Millis(500));
  EXPECT_EQ(out.hold, Millis(500)) << "the hold keeps its fraction of the preset's own TTL";
}

TEST(MatrixScalingTest, SameTtlIsTheScenarioUnchanged) {
  RunOptions out;
  std::string why;
  ASSERT_TRUE(ScaleToTtl(Preset500(), Millis(500), &out, &why));
  EXPECT_EQ(ScenarioToToml(out), ScenarioToToml(Preset500()));
}

TEST(MatrixScalingTest, TooLongARunIsRefusedWithWhy) {
  RunOptions out = Preset500();
  out.duration = Millis(1);
  std::string why;
  EXPECT_FALSE(ScaleToTtl(Preset500(), Millis(100000), &out, &why));
  EXPECT_EQ(why, "needs a 700 s run (the preset's times x 200 for TTL 100000 ms), runs are capped "
                 "at 600 s");
  EXPECT_EQ(out.duration, Millis(1)) << "*out untouched on refusal";
  // Right at the cap still runs: 3500 x 85714/500 = 599998 ms.
  EXPECT_TRUE(ScaleToTtl(Preset500(), Millis(85714), &out, &why)) << why;
  EXPECT_LE(out.duration, kMaxScaledRun);
}

TEST(MatrixScalingTest, LocksWithoutTheLabTtlAreKnown) {
  ASSERT_NE(locks::FindLock("db-row"), nullptr);
  EXPECT_FALSE(UsesLabTtl(*locks::FindLock("db-row")));
  EXPECT_FALSE(UsesLabTtl(*locks::FindLock("pg-advisory")));
  EXPECT_TRUE(UsesLabTtl(*locks::FindLock("set-nx-px-lua")));
  EXPECT_TRUE(UsesLabTtl(*locks::FindLock("redlock")));
}

PlanRequest Request() {
  PlanRequest r;
  r.seed = 7;
  r.lock_ids = {"set-nx-px-lua", "db-row", "driver:examples/drivers/redis_py_lock.py"};
  Status s = LoadPresets(kDefaultPresetDir, &r.presets);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<Preset> kept;
  for (auto& p : r.presets) {
    if (p.fault == "client-pause" || p.fault == "none") kept.push_back(p);
  }
  r.presets = kept;
  return r;
}

const PlannedTrial& TrialOf(const Plan& plan, const std::string& lock, const std::string& fault) {
  for (const auto& c : plan.cells) {
    if (c.lock == lock && c.fault == fault) {
      EXPECT_FALSE(c.trials.empty()) << lock << " x " << fault << ": " << c.why_not;
      return plan.all.at(c.trials.at(0));
    }
  }
  ADD_FAILURE() << "no cell " << lock << " x " << fault;
  return plan.all.at(0);
}

TEST(MatrixScalingTest, PlanWithTtlScalesTheRowsThatUseIt) {
  PlanRequest base = Request();
  Plan plain = BuildPlan(base);
  PlanRequest same = base;
  same.ttl = Millis(500);  // the presets' own TTL: nothing changes, the plan id neither
  EXPECT_EQ(BuildPlan(same).id, plain.id);

  PlanRequest twice = base;
  twice.ttl = Millis(1000);
  Plan scaled = BuildPlan(twice);
  EXPECT_NE(scaled.id, plain.id);
  const PlannedTrial& lua = TrialOf(scaled, "set-nx-px-lua", "client-pause");
  EXPECT_EQ(lua.options.ttl, Millis(1000));
  EXPECT_EQ(lua.options.duration, 2 * TrialOf(plain, "set-nx-px-lua", "client-pause").options.duration);
  EXPECT_EQ(lua.options.faults.at(0).duration,
            2 * TrialOf(plain, "set-nx-px-lua", "client-pause").options.faults.at(0).duration);
  EXPECT_EQ(lua.options.seed, TrialOf(plain, "set-nx-px-lua", "client-pause").options.seed)
      << "seeds do not depend on the TTL";
  const PlannedTrial& db = TrialOf(scaled, "db-row", "client-pause");
  EXPECT_EQ(ScenarioToToml(db.options), ScenarioToToml(TrialOf(plain, "db-row", "client-pause").options))
      << "db-row does not use the lab TTL: unscaled";
}

// A driver whose lease is 1000 ms: every preset scales by 1000 over its own TTL (x2 for the
// 500 ms presets), and the presets written for longer TTLs (restart 3000, failover 4000)
// would leave no room for a lock command: n/a, saying why, instead of a run of unknowns.
TEST(MatrixScalingTest, ADriversTtlScalesEachPresetFromItsOwnTtl) {
  PlanRequest r = Request();
  const std::string driver = "driver:examples/drivers/redis_py_lock.py";
  r.driver_ttls[driver] = Millis(1000);
  std::vector<Preset> all;
  ASSERT_TRUE(LoadPresets(kDefaultPresetDir, &all).ok());
  for (const auto& p : all) {
    if (p.fault == "restart") r.presets.push_back(p);
  }
  Plan plan = BuildPlan(r);
  Plan plain = BuildPlan(Request());
  EXPECT_EQ(TrialOf(plan, driver, "client-pause").options.duration,
            2 * TrialOf(plain, driver, "client-pause").options.duration);
  EXPECT_EQ(TrialOf(plan, driver, "client-pause").options.acquire_timeout, Millis(2000));
  int refused = 0;
  for (const auto& c : plan.cells) {
    if (c.lock != driver || c.fault != "restart") continue;
    ++refused;
    EXPECT_EQ(Letter(c.result), "n/a");
    EXPECT_EQ(c.why_not, "its acquire timeout would be 333 ms (the preset's times x 0.333 for TTL 1000 ms, from its "
                         "own TTL 3000 ms), below two command timeouts (2 x 200 ms): no room for a lock command");
  }
  EXPECT_EQ(refused, 1);
}

TEST(MatrixScalingTest, DriverDeclaredTtlScalesItsRowAndTooLongIsNa) {
  PlanRequest r = Request();
  const std::string driver = "driver:examples/drivers/redis_py_lock.py";
  r.driver_ttls[driver] = Millis(30000);  // x60: client-pause's 3.5 s run becomes 210 s
  Plan plan = BuildPlan(r);
  EXPECT_EQ(TrialOf(plan, driver, "client-pause").options.duration, Millis(210000));
  EXPECT_EQ(TrialOf(plan, "set-nx-px-lua", "client-pause").options.ttl, Millis(500))
      << "other rows keep the preset TTL";
  r.driver_ttls[driver] = Millis(100000);
  plan = BuildPlan(r);
  int na = 0;
  for (const auto& c : plan.cells) {
    if (c.lock != driver || c.fault != "client-pause") continue;
    ++na;
    EXPECT_EQ(Letter(c.result), "n/a");
    EXPECT_TRUE(c.trials.empty());
    EXPECT_EQ(c.why_not,
              "needs a 700 s run (the preset's times x 200 for TTL 100000 ms), runs are capped at "
              "600 s");
  }
  EXPECT_EQ(na, 1);
}

}  // namespace
}  // namespace locklab::harness
