// Which faults apply to which locks is one rule: a fault applies when the lock's servers offer
// every surface it needs (base/lock_surface.h; locks::SurfacesOf, faults::FaultFits). These
// tests pin what that rule gives per backend, and that the words it prints and refuses with
// come from the same table.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/fault_descriptor.h"
#include "harness/scenario/run_options.h"
#include "locks/backend.h"
#include "locks/lock.h"

namespace locklab {
namespace {

std::vector<std::string> FaultsFor(locks::Backend b) {
  std::vector<std::string> out;
  for (const auto& f : faults::ListFaults()) {
    if (faults::FaultFits(f.id, locks::SurfacesOf(b))) out.push_back(f.id);
  }
  return out;
}

TEST(LockSurfaces, EachBackendGetsTheFaultsItsServersCanTake) {
  std::vector<std::string> every;
  for (const auto& f : faults::ListFaults()) every.push_back(f.id);
  EXPECT_EQ(FaultsFor(locks::Backend::kRedis), every) << "Redis offers every surface";
  const std::vector<std::string> session = {"none",    "client-pause", "client-crash", "slow-cs",
                                            "server-pause", "restart", "partition"};
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  for (locks::Backend b : {locks::Backend::kMariadb, locks::Backend::kPostgres, locks::Backend::kEtcd}) {
    EXPECT_EQ(sorted(FaultsFor(b)), sorted(session)) << locks::BackendName(b);
  }
  std::vector<std::string> zk = session;
  zk.push_back("delay");
  zk.push_back("reply-loss");
  EXPECT_EQ(sorted(FaultsFor(locks::Backend::kZookeeper)), sorted(zk));
}

TEST(LockSurfaces, EveryFaultButNoneNeedsSomethingAndEveryLockOffersTheProcesses) {
  for (const faults::FaultDescriptor* d : faults::FaultCatalog()) {
    const bool needs_nothing = d->traits.needs == LockSurfaces{};
    EXPECT_EQ(needs_nothing, !d->make_effect) << d->info.id << ": a fault that acts needs a surface";
  }
  for (locks::Backend b : locks::AllBackends()) {
    EXPECT_TRUE(locks::SurfacesOf(b).Has(LockSurface::kClientProcess)) << locks::BackendName(b);
    EXPECT_TRUE(locks::SurfacesOf(b).Has(LockSurface::kServerProcess)) << locks::BackendName(b);
  }
  EXPECT_FALSE(faults::FaultFits("client-paus", LockSurfaces::All())) << "an unknown id fits nothing";
}

TEST(LockSurfaces, AMisfitNamesWhatTheFaultNeedsAndTheServersLack) {
  EXPECT_EQ(harness::FaultMisfit("client-pause", "zk-lock", locks::Backend::kZookeeper), "");
  EXPECT_EQ(harness::FaultMisfit("client-clock", "zk-lock", locks::Backend::kZookeeper),
            "fault 'client-clock' does not apply to lock 'zk-lock': it needs wall-clock-expiry, which zookeeper "
            "servers do not offer (see `locklab list`)");
  EXPECT_NE(harness::FaultMisfit("failover", "etcd-lease", locks::Backend::kEtcd).find("replica-failover"),
            std::string::npos);
}

}  // namespace
}  // namespace locklab
