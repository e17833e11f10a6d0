// The plain pass: the lock alone, before any fault, in workloads where a correct lock stays
// safe; short trials; no fault drawn.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/random.h"
#include "harness/hunt/hunt_plain.h"

namespace locklab::harness {
namespace {

SearchSpace PlainSpace() {
  SearchSpace s;
  s.lock = "set-nx-px-lua";
  s.ttl = Millis(500);
  s.ttls = {Millis(500), Millis(750), Millis(1250)};
  s.faults = {"client-pause", "partition"};
  return s;
}

bool Has(const std::vector<PlainWorkload>& pass, PlainWorkload w) {
  return std::find(pass.begin(), pass.end(), w) != pass.end();
}

TEST(HuntPlainTest, HoldsThatIgnoreTheLeaseRunOnlyWhereRenewalOrABaselineDecides) {
  SearchSpace s = PlainSpace();
  EXPECT_FALSE(Has(PlainPass(s, false), PlainWorkload::kLongHoldsIgnore));
  EXPECT_TRUE(Has(PlainPass(s, true), PlainWorkload::kLongHoldsIgnore));
  EXPECT_TRUE(Has(PlainPass(s, false), PlainWorkload::kLongHoldsHonour));
  EXPECT_TRUE(Has(PlainPass(s, false), PlainWorkload::kContentionOneKey));
  s.validity = "honour";  // --validity honour: never a client that ignores its lease
  EXPECT_FALSE(Has(PlainPass(s, true), PlainWorkload::kLongHoldsIgnore));
  s.validity = "ignore";
  EXPECT_FALSE(Has(PlainPass(s, true), PlainWorkload::kLongHoldsHonour));
  EXPECT_FALSE(Has(PlainPass(s, true), PlainWorkload::kToValidity));
}

// Work to the validity runs once at each TTL the space draws: a TTL rounded to whole seconds
// looks right at 500 and 750 ms (rounded up to the 1 s minimum) and breaks only at 1250 ms.
TEST(HuntPlainTest, WorkToTheValidityRunsAtEveryTtl) {
  SearchSpace s = PlainSpace();
  s.ttls = {Millis(500), Millis(750), Millis(1250)};
  std::vector<PlainWorkload> pass = PlainPass(s, false);
  std::set<int64_t> ttls;
  Rng rng(1);
  size_t nth = 0;
  for (PlainWorkload w : pass) {
    if (w != PlainWorkload::kToValidity) continue;
    RunOptions o = DrawPlain(s, w, nth++, rng, "t");
    EXPECT_EQ(o.validity, "honour");
    ttls.insert(o.ttl.count());
  }
  EXPECT_EQ(ttls, (std::set<int64_t>{500, 750, 1250}));
  s.ttls.clear();  // a driver's hello TTL: once
  pass = PlainPass(s, false);
  EXPECT_EQ(std::count(pass.begin(), pass.end(), PlainWorkload::kToValidity), 1);
}

TEST(HuntPlainTest, EveryTrialIsShortFaultFreeAndReplaysForASeed) {
  SearchSpace s = PlainSpace();
  s.max_clients = 6;
  for (PlainWorkload w : PlainPass(s, true)) {
    Rng a(5), b(5);
    for (int i = 0; i < 50; ++i) {
      RunOptions o = DrawPlain(s, w, 0, a, "t0001");
      RunOptions p = DrawPlain(s, w, 0, b, "t0001");
      EXPECT_EQ(o.seed, p.seed);
      EXPECT_EQ(o.hold, p.hold);
      EXPECT_TRUE(o.faults.empty()) << PlainWorkloadName(w);
      EXPECT_GE(o.duration, Millis(1500)) << PlainWorkloadName(w);
      EXPECT_LE(o.duration, Millis(6000)) << PlainWorkloadName(w);
      EXPECT_NE(std::find(s.ttls.begin(), s.ttls.end(), o.ttl), s.ttls.end());
      EXPECT_GE(o.clients, s.min_clients);
      EXPECT_LE(o.clients, s.max_clients);
      switch (w) {
        case PlainWorkload::kContentionOneKey:
        case PlainWorkload::kContentionKeys:
          EXPECT_LE(o.hold, o.ttl / 2) << "contention holds stay well inside the lease";
          EXPECT_LE(o.duration, Millis(3000));
          break;
        case PlainWorkload::kLongHoldsIgnore:
          EXPECT_GT(o.hold, o.ttl);
          EXPECT_EQ(o.validity, "ignore");
          break;
        case PlainWorkload::kLongHoldsHonour:
        case PlainWorkload::kToValidity:
          EXPECT_GE(o.hold, o.ttl);
          EXPECT_EQ(o.validity, "honour");
          break;
      }
    }
  }
}

}  // namespace
}  // namespace locklab::harness
