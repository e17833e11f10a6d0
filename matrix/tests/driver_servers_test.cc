// The servers a driver row asks for (driver_servers.h): which faults apply to a driver on
// another backend than Redis, and BuildPlan giving a driver row the nodes and the n/a cells
// its hello's backend and nodes call for (over the shipped presets, scenarios/matrix/).
#include "lab/driver_servers.h"

#include <gtest/gtest.h>

#include "locks/lock.h"
#include "matrix/matrix_plan.h"

namespace locklab::harness {
namespace {

TEST(DriverServersTest, FaultsOfADriverFollowTheLabsOwnLockOnItsBackend) {
  using locks::Backend;
  EXPECT_TRUE(DriverFaultApplies(Backend::kRedis, "client-clock"));
  EXPECT_TRUE(DriverFaultApplies(Backend::kRedis, "memory-full"))
      << "the lab's Redis takes every fault";
  // etcd: what etcd-lease takes (its LockInfo::faults).
  EXPECT_TRUE(DriverFaultApplies(Backend::kEtcd, "client-pause"));
  EXPECT_TRUE(DriverFaultApplies(Backend::kEtcd, "restart"));
  EXPECT_FALSE(DriverFaultApplies(Backend::kEtcd, "memory-full")) << "a Redis CONFIG SET";
  EXPECT_FALSE(DriverFaultApplies(Backend::kEtcd, "client-clock"));
  // Every backend has a lab lock of its own to take the list from (the client-side faults
  // alone are for a backend added to the table before its lock).
  for (Backend b : locks::AllBackends()) {
    bool has_lock = false;
    for (const auto& l : locks::ListLocks()) {
      has_lock = has_lock || (l.backend == b && l.mutant_of.empty());
    }
    EXPECT_TRUE(has_lock) << locks::BackendName(b);
  }
}

const std::string kDriver = "driver:examples/drivers/redis_py_lock.py";

PlanRequest Request(const DriverServers& servers) {
  PlanRequest r;
  r.seed = 7;
  r.lock_ids = {"set-nx-px-lua", kDriver};
  r.full = true;  // every column, so that the backend alone decides
  Status s = LoadPresets(kDefaultPresetDir, &r.presets);
  EXPECT_TRUE(s.ok()) << s.message();
  r.driver_servers[kDriver] = servers;
  return r;
}

const Cell& CellOf(const Plan& plan, const std::string& lock, const std::string& fault) {
  for (const auto& c : plan.cells) {
    if (c.lock == lock && c.fault == fault) return c;
  }
  ADD_FAILURE() << "no cell " << lock << " x " << fault;
  return plan.cells.at(0);
}

TEST(DriverServersTest, PlanGivesADriverRowTheNodesAndFaultsOfItsBackend) {
  DriverServers etcd;
  etcd.backend = locks::Backend::kEtcd;
  etcd.nodes = 3;
  Plan plan = BuildPlan(Request(etcd));
  const Cell& pause = CellOf(plan, kDriver, "client-pause");
  ASSERT_FALSE(pause.trials.empty()) << pause.why_not;
  EXPECT_EQ(plan.all.at(pause.trials.at(0)).options.nodes, 3) << "the hello's nodes";
  EXPECT_EQ(plan.all.at(pause.trials.at(0)).options.knobs.at("start_timeout_ms"), "20000")
      << "many drivers start at once in a matrix";
  EXPECT_EQ(plan.all.at(CellOf(plan, "set-nx-px-lua", "client-pause").trials.at(0)).options.knobs.count(
                "start_timeout_ms"),
            0u);
  const Cell& clock = CellOf(plan, kDriver, "client-clock");
  EXPECT_TRUE(clock.trials.empty());
  EXPECT_EQ(clock.verdict, "n/a");
  EXPECT_EQ(clock.why_not, "fault client-clock does not apply to the etcd servers the driver's hello asks for");
  // The registry's rows are untouched.
  EXPECT_FALSE(CellOf(plan, "set-nx-px-lua", "client-clock").trials.empty());
  EXPECT_EQ(plan.all.at(CellOf(plan, "set-nx-px-lua", "client-pause").trials.at(0)).options.nodes, 1);

  // A Redis driver asking for nothing: the lock's default, every fault but failover.
  Plan plain = BuildPlan(Request(DriverServers()));
  EXPECT_FALSE(CellOf(plain, kDriver, "client-clock").trials.empty());
  EXPECT_EQ(plain.all.at(CellOf(plain, kDriver, "client-pause").trials.at(0)).options.nodes, 1);
  EXPECT_NE(plain.id, plan.id);

  // --endpoints (Redis servers) with a driver on another backend: n/a, saying why.
  PlanRequest ep = Request(etcd);
  ep.endpoints = {"redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"};
  Plan with_endpoints = BuildPlan(ep);
  const Cell& none = CellOf(with_endpoints, kDriver, "none");
  EXPECT_TRUE(none.trials.empty());
  EXPECT_NE(none.why_not.find("runs on etcd servers the lab starts"), std::string::npos) << none.why_not;
}

}  // namespace
}  // namespace locklab::harness
