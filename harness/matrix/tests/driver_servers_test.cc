// The servers a driver row asks for (driver_servers.h): which faults apply to a driver on
// another backend than Redis, and BuildPlan giving a driver row the nodes and the n/a cells
// its hello's backend and nodes call for (over the shipped presets, scenarios/matrix/).
#include "harness/lab/driver_servers.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "locks/driver_lock.h"
#include "locks/lock.h"
#include "harness/matrix/matrix_plan.h"

namespace locklab::harness {
namespace {

TEST(DriverServersTest, FaultsOfADriverFollowTheLabsOwnLockOnItsBackend) {
  using locks::Backend;
  EXPECT_TRUE(DriverFaultApplies(Backend::kRedis, "client-clock"));
  EXPECT_TRUE(DriverFaultApplies(Backend::kRedis, "memory-full"))
      << "the lab's Redis takes every fault";
  // etcd: what etcd servers offer (locks::SurfacesOf), as for etcd-lease.
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
  // One start timeout for a driver everywhere (the knob's default): the matrix sets none.
  EXPECT_EQ(plan.all.at(pause.trials.at(0)).options.knobs.count("start_timeout_ms"), 0u);
  EXPECT_EQ(locks::DriverStartTimeout(plan.all.at(pause.trials.at(0)).options.knobs), locks::kDefaultDriverStartTimeout)
      << "many drivers start at once in a matrix";
  const Cell& clock = CellOf(plan, kDriver, "client-clock");
  EXPECT_TRUE(clock.trials.empty());
  EXPECT_EQ(Letter(clock.result), "n/a");
  EXPECT_EQ(clock.why_not, "fault client-clock does not apply to the etcd servers the driver's hello asks for");
  // The registry's rows are untouched.
  EXPECT_FALSE(CellOf(plan, "set-nx-px-lua", "client-clock").trials.empty());
  EXPECT_EQ(plan.all.at(CellOf(plan, "set-nx-px-lua", "client-pause").trials.at(0)).options.nodes, 1);

  // A Redis driver asking for nothing: the lock's default, every fault but failover.
  EXPECT_TRUE(CellOf(plan, kDriver, "failover").trials.empty());
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

// A matrix hands each driver trial the hello it read for the row (knob "hello"): the trial
// learns its servers from it and does not start the driver to ask again.
TEST(DriverServersTest, APlannedDriverTrialCarriesItsRowsHelloAndIsNotProbedAgain) {
  locks::DriverHello hello;
  ASSERT_EQ(locks::CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":"zookeeper","nodes":3})",
                              &hello),
            "");
  PlanRequest r = Request(ServersFromHello(hello));
  Plan plan = BuildPlan(r);
  const Cell& pause = CellOf(plan, kDriver, "client-pause");
  ASSERT_FALSE(pause.trials.empty());
  const RunOptions& o = plan.all.at(pause.trials[0]).options;
  ASSERT_TRUE(o.knobs.count("hello"));
  EXPECT_EQ(o.knobs.at("hello"), hello.line);
  EXPECT_FALSE(plan.all.at(CellOf(plan, "set-nx-px-lua", "client-pause").trials.at(0)).options.knobs.count("hello"));
  // A driver never probed (it said nothing): no knob, its trials ask it themselves.
  Plan unprobed = BuildPlan(Request(DriverServers()));
  EXPECT_FALSE(unprobed.all.at(CellOf(unprobed, kDriver, "none").trials.at(0)).options.knobs.count("hello"));

  // With the knob a program that does not exist is never started: the servers are the knob's.
  DriverServers servers;
  Status s = DriverServersOf("/nonexistent/driver", {}, o.knobs, &servers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(servers.from_knob);
  EXPECT_EQ(servers.backend, locks::Backend::kZookeeper);
  EXPECT_EQ(servers.nodes, 3);
  locks::DriverHello remembered;
  EXPECT_TRUE(locks::ProbedHello("/nonexistent/driver", {}, &remembered)) << "as if probed";
  // Without it the driver is started to ask (here: it cannot be, so the defaults).
  s = DriverServersOf("/nonexistent/driver2", {}, {{"start_timeout_ms", "500"}}, &servers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(servers.probed);
  EXPECT_FALSE(servers.from_knob);
  // A hello read once in this process is not read again: the program that does not exist
  // is not started, its servers are the remembered hello's.
  s = DriverServersOf("/nonexistent/driver", {}, {{"start_timeout_ms", "500"}}, &servers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(servers.probed);
  EXPECT_EQ(servers.backend, locks::Backend::kZookeeper);
  EXPECT_EQ(servers.nodes, 3);
  // A knob that is not a hello is the run's bad input.
  s = DriverServersOf("/nonexistent/driver", {}, {{"hello", "{}"}}, &servers);
  EXPECT_EQ(s.code(), Status::Code::kUsage) << s.message();
}

// The applicable faults of the rows of `lock` in `plan`.
std::set<std::string> AppliedFaults(const Plan& plan, const std::string& lock) {
  std::set<std::string> out;
  for (const auto& c : plan.cells) {
    if (c.lock == lock && c.applicable) out.insert(c.fault);
  }
  return out;
}

// A driver row runs, in the default (quick) matrix too, every fault that applies to the
// servers it runs on: the faults of the lab's own lock on that backend, failover when its
// hello asks for Sentinel. Nothing is left out for being a driver.
TEST(DriverServersTest, QuickPlanGivesADriverRowEveryFaultOfItsBackend) {
  const std::string kZkDriver = "driver:examples/drivers/kazoo_lock.py";
  PlanRequest r;
  r.seed = 7;
  r.full = false;  // the default matrix
  r.lock_ids = {"set-nx-px-lua", "zk-lock", kDriver, kZkDriver};
  Status s = LoadPresets(kDefaultPresetDir, &r.presets);
  ASSERT_TRUE(s.ok()) << s.message();
  locks::DriverHello redis_hello;
  redis_hello.sentinel = true;
  r.driver_servers[kDriver] = ServersFromHello(redis_hello);
  locks::DriverHello zk_hello;
  zk_hello.backend = locks::Backend::kZookeeper;
  zk_hello.nodes = 3;
  r.driver_servers[kZkDriver] = ServersFromHello(zk_hello);
  Plan plan = BuildPlan(r);

  const std::set<std::string> redis_faults = AppliedFaults(plan, "set-nx-px-lua");
  ASSERT_EQ(redis_faults.size(), r.presets.size()) << "set-nx-px-lua takes every column";
  EXPECT_EQ(AppliedFaults(plan, kDriver), redis_faults)
      << "a Redis driver that asks for Sentinel: the columns of the lab's Redis lock";
  for (const char* fault : {"slow-cs", "server-pause", "clock-jump", "clock-drift", "reply-loss",
                            "delay", "failover"}) {
    const Cell& c = CellOf(plan, kDriver, fault);
    ASSERT_EQ(c.trials.size(), 1u) << fault << ": " << c.why_not;
    EXPECT_EQ(plan.all.at(c.trials[0]).options.lock, kDriver);
    EXPECT_EQ(plan.all.at(c.trials[0]).options.faults.at(0).id, fault);
  }
  EXPECT_EQ(plan.all.at(CellOf(plan, kDriver, "failover").trials[0]).options.nodes, 1);

  const std::set<std::string> zk_faults = AppliedFaults(plan, "zk-lock");
  EXPECT_FALSE(zk_faults.count("failover"));
  EXPECT_TRUE(zk_faults.count("slow-cs"));
  EXPECT_EQ(AppliedFaults(plan, kZkDriver), zk_faults)
      << "a ZooKeeper driver: the columns of zk-lock, the lab's lock on those servers";
  EXPECT_EQ(CellOf(plan, kZkDriver, "clock-jump").why_not,
            "fault clock-jump does not apply to the zookeeper servers the driver's hello asks for");

  // No Sentinel asked for: every column but failover, which says why.
  r.driver_servers[kDriver] = ServersFromHello(locks::DriverHello());
  Plan fixed = BuildPlan(r);
  std::set<std::string> expected = redis_faults;
  expected.erase("failover");
  EXPECT_EQ(AppliedFaults(fixed, kDriver), expected);
  const Cell& failover = CellOf(fixed, kDriver, "failover");
  EXPECT_EQ(Letter(failover.result), "n/a");
  EXPECT_NE(failover.why_not.find("\"sentinel\": true"), std::string::npos) << failover.why_not;

  // Sentinel, but three nodes: failover has one master and its replica.
  locks::DriverHello three;
  three.sentinel = true;
  three.nodes = 3;
  r.driver_servers[kDriver] = ServersFromHello(three);
  Plan wide = BuildPlan(r);
  EXPECT_EQ(CellOf(wide, kDriver, "failover").why_not, "failover needs a single-node lock with a replica");
  EXPECT_TRUE(CellOf(wide, kDriver, "failover").trials.empty());
}

}  // namespace
}  // namespace locklab::harness
