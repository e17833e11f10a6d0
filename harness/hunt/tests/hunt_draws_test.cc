// The hunt's draws pinned: for a few lock spaces (setnx, redlock on 5 nodes, a driver with
// its own points and two TTLs) and seeds 1..30, every drawn scenario, the sentence the
// narrative gives each of its faults, the first pass and its draws, and the shrink steps of
// the first draws. A hunt seed must replay the draws it made before (a shipped hunt's seed,
// a bench's): a change to how a fault is drawn, told or shrunk shows here as a diff of
// testdata/hunt_draws.txt. LOCKLAB_WRITE_DRAWS=1 rewrites the file (after checking that
// the change is meant).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "base/random.h"
#include "faults/fault.h"
#include "harness/hunt/hunt_shrink.h"
#include "harness/hunt/hunt_space.h"
#include "harness/hunt/hunt_story.h"
#include "locks/lock.h"

namespace locklab::harness {
namespace {

SearchSpace LockSpace(const std::string& lock, Millis ttl) {
  const locks::LockInfo& info = *locks::FindLock(lock);
  SearchSpace s;
  s.lock = info.id;
  s.ttl = ttl;
  s.nodes = info.default_nodes;
  s.lock_points = info.points;
  for (const auto& f : faults::ListFaults()) {
    if (f.id != "none" && faults::FaultFits(f.id, locks::SurfacesOf(info.backend))) s.faults.push_back(f.id);
  }
  return s;
}

// A driver as the hunt sees one: its hello's points, every fault, two TTLs, renewal.
SearchSpace DriverSpace() {
  SearchSpace s;
  s.lock = "driver:examples/drivers/get_compare_del.py";
  s.ttl = Millis(800);
  s.ttls = {Millis(500), Millis(1250)};
  s.can_renew = true;
  s.nodes = 3;
  s.points = {"after-acquire", "before-write", "after-release"};
  s.lock_points = {"after-get", "before-del"};
  for (const auto& f : faults::ListFaults()) {
    if (f.id != "none") s.faults.push_back(f.id);
  }
  s.weights = {{"clock-jump", 2.0}, {"client-pause@after-get", 3.0}};
  return s;
}

std::string Dump(const std::string& title, const SearchSpace& space) {
  std::ostringstream out;
  out << "=== " << title << "\n";
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Rng rng(seed);
    RunOptions o = DrawScenario(space, rng, "t" + std::to_string(seed));
    out << "--- seed " << seed << "\n" << ScenarioToToml(o);
    for (const auto& f : o.faults) out << "story: " << DescribeFault(f, o.ttl) << "\n";
    out << "size: " << static_cast<int64_t>(ScenarioSize(o)) << "\n";
    if (seed <= 5) {
      for (const auto& step : ShrinkCandidates(o)) out << "shrink: " << step.what << "\n";
      for (const auto& step : StrengthenCandidates(o, Millis(20000))) out << "strengthen: " << step.what << "\n";
    }
  }
  Rng rng(7);
  for (const auto& entry : FirstPass(space, rng)) {
    out << "--- first pass " << entry.fault << " point=" << entry.point << " quiet=" << entry.quiet
        << " fine_drift=" << entry.fine_drift << " late=" << entry.late << "\n";
    RunOptions o = DrawScenario(FirstPassSpace(space, entry), rng, "f");
    out << ScenarioToToml(o);
    for (const auto& f : o.faults) out << "story: " << DescribeFault(f, o.ttl) << "\n";
  }
  return out.str();
}

std::string AllDraws() {
  return Dump("setnx ttl 500", LockSpace("setnx", Millis(500))) +
         Dump("redlock ttl 700", LockSpace("redlock", Millis(700))) + Dump("driver", DriverSpace());
}

TEST(HuntDrawsTest, ASeedDrawsWhatItDrewBefore) {
  const std::string path = std::string(LOCKLAB_HUNT_TESTDATA) + "/hunt_draws.txt";
  const std::string draws = AllDraws();
  if (const char* w = std::getenv("LOCKLAB_WRITE_DRAWS"); w != nullptr && std::string(w) == "1") {
    std::ofstream(path) << draws;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << ": missing (LOCKLAB_WRITE_DRAWS=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  // Line by line, so a failure names the first line that moved.
  std::istringstream a(want.str()), b(draws);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) break;
    ASSERT_EQ(more_a, more_b) << path << ":" << line << ": one of the two ends here";
    ASSERT_EQ(la, lb) << path << ":" << line;
  }
}

}  // namespace
}  // namespace locklab::harness
