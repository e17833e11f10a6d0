// The fault ids a lock's LockInfo names (locks/registry.cc) are plain strings, because locks/
// must not depend on faults/ (docs/design.md 1). The harness sees both registries, so it checks
// that every id a lock names is a fault the lab has: a typo would silently drop a matrix cell.
#include <gtest/gtest.h>

#include "faults/fault.h"
#include "locks/lock.h"

namespace locklab {
namespace {

TEST(LockFaultIds, EveryFaultALockNamesExists) {
  int named = 0;
  for (const locks::LockInfo& lock : locks::ListLocks()) {
    for (const std::string& id : lock.faults) {
      ++named;
      EXPECT_NE(faults::FindFault(id), nullptr) << "lock " << lock.id << " names fault '" << id
                                                << "', which the fault registry does not have";
    }
  }
  EXPECT_GT(named, 0) << "no lock restricts its faults: the check above checked nothing";
}

TEST(LockFaultIds, TheCheckSeesAnUnknownId) {
  EXPECT_EQ(faults::FindFault("client-paus"), nullptr);
  EXPECT_NE(faults::FindFault("client-pause"), nullptr);
}

}  // namespace
}  // namespace locklab
