// Schedule and TargetDraw alone: pure functions of options, time and seed, no lab.
#include "faults/schedule.h"

#include <gtest/gtest.h>

#include "faults/fault_options.h"
#include "faults/target_draw.h"

namespace locklab::faults {
namespace {

Nanos At(int64_t ms) { return Nanos(Millis(ms)); }

Schedule Make(int64_t first_at, int64_t duration, int64_t interval, int windows = 0) {
  FaultOptions o;
  o.first_at = Millis(first_at);
  o.duration = Millis(duration);
  o.interval = Millis(interval);
  o.windows = windows;
  return Schedule::FromOptions(o);
}

TEST(ScheduleTest, FirstAtDurationAndIntervalSetTheWindows) {
  std::vector<Window> w = Make(1000, 1500, 2000).Windows(At(0), At(10000));
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], (Window{At(1000), At(2500)}));
  EXPECT_EQ(w[1], (Window{At(4500), At(6000)}));
  EXPECT_EQ(w[2], (Window{At(8000), At(9500)}));
}

TEST(ScheduleTest, WindowsCountFromTheStart) {
  std::vector<Window> w = Make(200, 100, 50).Windows(At(5000), At(5600));
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w.front().open, At(5200));
  EXPECT_EQ(w.back().close, At(5600));
}

TEST(ScheduleTest, MaxWindowsIsALimit) {
  EXPECT_EQ(Make(0, 10, 10, 2).Windows(At(0), At(1000)).size(), 2u);
  EXPECT_EQ(Make(0, 10, 10, 0).Windows(At(0), At(1000)).size(), 50u);
}

TEST(ScheduleTest, WindowsNeverOverlap) {
  for (const Schedule& s : {Make(0, 1, 0), Make(10, 500, 1), Make(1000, 1500, 2000), Make(7, 3, 11, 9)}) {
    std::vector<Window> w = s.Windows(At(0), At(20000));
    ASSERT_FALSE(w.empty());
    for (size_t i = 0; i < w.size(); ++i) {
      EXPECT_LT(w[i].open, w[i].close);
      if (i > 0) {
        EXPECT_LE(w[i - 1].close, w[i].open);
      }
    }
  }
}

TEST(ScheduleTest, TheFirstWindowIsCutAtTheRunsEndALaterOneIsNotOpened) {
  // Longer than the run: "until the end" (the teardown heals it there).
  std::vector<Window> w = Make(1000, 60000, 2000).Windows(At(0), At(4000));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], (Window{At(1000), At(4000)}));
  // A second window would close at 4000, after the end: the schedule stops after one.
  EXPECT_EQ(Make(1000, 1000, 1000).Windows(At(0), At(3500)).size(), 1u);
  EXPECT_FALSE(Make(1000, 1000, 1000).Fits(1, At(3000), At(3999)));
  EXPECT_TRUE(Make(1000, 1000, 1000).Fits(0, At(3000), At(3999)));
  // Nothing opens at or after the end.
  EXPECT_TRUE(Make(5000, 100, 100).Windows(At(0), At(5000)).empty());
}

TEST(ScheduleTest, SameOptionsSameWindowsAndPlan) {
  Schedule a = Make(300, 700, 900, 4);
  Schedule b = Make(300, 700, 900, 4);
  EXPECT_EQ(a.Windows(At(0), At(9000)), b.Windows(At(0), At(9000)));
  EXPECT_EQ(a.Plan(), b.Plan());
  a.armed_point = "after-acquire";
  // The "plan" event of the history, as the judge reads it.
  EXPECT_EQ(a.Plan().dump(),
            R"({"duration_ms":700,"first_at_ms":300,"interval_ms":900,"point":"after-acquire","windows":4})");
}

TEST(ScheduleTest, ComposingKeepsEachSchedulesWindowsInOpeningOrder) {
  Schedule pause = Make(1000, 500, 1000);
  Schedule partition = Make(1200, 2000, 5000, 1);
  std::vector<ComposedWindow> all = Compose({pause, partition}, At(0), At(4000));
  std::vector<Window> p = pause.Windows(At(0), At(4000));
  ASSERT_EQ(all.size(), p.size() + 1);
  EXPECT_EQ(all[0].schedule, 0u);
  EXPECT_EQ(all[0].window, p[0]);
  EXPECT_EQ(all[1].schedule, 1u);
  EXPECT_EQ(all[1].window, (Window{At(1200), At(3200)}));  // overlaps the pause: allowed
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].window.open, all[i].window.open);
}

class Clients : public ClientControl {
 public:
  int client_count() const override { return 5; }
  bool ClientRunning(int p) const override { return p != 4; }
  bool PauseClient(int) override { return true; }
  bool ResumeClient(int) override { return true; }
  bool CrashClient(int) override { return true; }
  void ArmPoint(int, const std::string&, const std::string&) override {}
  void DisarmPoints(int) override {}
  std::vector<int> Holders() const override { return {}; }
  int64_t AcquiresSeen() const override { return 0; }
};

std::vector<int> Draws(TargetDraw draw, int n) {
  Clients clients;
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(draw.Client(clients));
  return out;
}

TEST(TargetDrawTest, SameSeedSameTargets) {
  EXPECT_EQ(Draws(TargetDraw({}, 42), 20), Draws(TargetDraw({}, 42), 20));
  EXPECT_NE(Draws(TargetDraw({}, 42), 20), Draws(TargetDraw({}, 43), 20));
}

TEST(TargetDrawTest, DrawsAmongTheTargetsAndSkipsAStoppedClient) {
  for (int p : Draws(TargetDraw({2, 4}, 7), 50)) EXPECT_TRUE(p == 2 || p == 0) << p;
  for (int p : Draws(TargetDraw({}, 7), 50)) EXPECT_TRUE(p >= 0 && p <= 5 && p != 4) << p;
}

}  // namespace
}  // namespace locklab::faults
