// LiveProgress (harness/trial/live_progress.h): what the terminal line counts, from event lines.
#include "harness/trial/live_progress.h"

#include <sstream>

#include <gtest/gtest.h>

namespace locklab::harness {
namespace {

std::string Event(int process, const char* type, const char* f, const char* key = "lock:0") {
  return std::string("{\"time_ns\":1,\"process\":") + std::to_string(process) + ",\"type\":\"" +
         type + "\",\"f\":\"" + f + "\",\"key\":\"" + key + "\",\"value\":null}";
}

TEST(LiveProgressTest, CountsAGrantWhileAnotherClientHoldsTheSameKey) {
  std::ostringstream out;
  LiveProgress live(true, &out);
  live.OnClientEvent(Event(1, "invoke", "acquire"));
  live.OnClientEvent(Event(1, "ok", "acquire"));
  live.OnClientEvent(Event(2, "invoke", "acquire"));
  live.OnClientEvent(Event(2, "ok", "acquire"));  // 1 has not released: two holders
  EXPECT_EQ(live.overlaps(), 1);
  live.OnClientEvent(Event(1, "invoke", "release"));
  live.OnClientEvent(Event(1, "ok", "release"));
  live.OnClientEvent(Event(2, "invoke", "release"));
  live.OnClientEvent(Event(1, "invoke", "acquire"));
  live.OnClientEvent(Event(1, "ok", "acquire"));  // 2 released first: no overlap
  EXPECT_EQ(live.overlaps(), 1);
  live.OnClientEvent(Event(3, "ok", "acquire", "lock:1"));  // another key
  EXPECT_EQ(live.overlaps(), 1);
  EXPECT_EQ(live.ops(), 5);  // completions only: 4 acquire oks and one release ok
}

TEST(LiveProgressTest, AClientAskingAgainNoLongerCountsAsAHolder) {
  std::ostringstream out;
  LiveProgress live(true, &out);
  live.OnClientEvent(Event(1, "ok", "acquire"));
  live.OnClientEvent(Event(1, "invoke", "acquire"));  // e.g. its release timed out
  live.OnClientEvent(Event(2, "ok", "acquire"));
  EXPECT_EQ(live.overlaps(), 0);
}

TEST(LiveProgressTest, TheLineNamesOpenFaultsAndIsErasedBeforeOtherOutput) {
  std::ostringstream out;
  LiveProgress live(true, &out);
  live.Start(Nanos{0}, Millis(6000));
  live.OnFaultWindow("client-pause", true);
  live.Tick(Nanos{2'400'000'000});
  EXPECT_NE(out.str().find("running 2.4 of 6.0 s"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("faults open: client-pause"), std::string::npos) << out.str();
  live.OnFaultWindow("client-pause", false);
  live.Interrupt();
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r\033[K");
  live.Tick(Nanos{2'500'000'000});  // redrawn at once after an interruption
  EXPECT_NE(out.str().rfind("faults open: none"), std::string::npos) << out.str();
}

TEST(LiveProgressTest, DisabledItPrintsNothing) {
  std::ostringstream out;
  LiveProgress live(false, &out);
  live.Start(Nanos{0}, Millis(1000));
  live.OnClientEvent(Event(1, "ok", "acquire"));
  live.Tick(Nanos{500'000'000});
  live.Interrupt();
  EXPECT_TRUE(out.str().empty());
}

TEST(LiveProgressTest, ALineThatIsNotAClientEventIsIgnored) {
  std::ostringstream out;
  LiveProgress live(true, &out);
  live.OnClientEvent("not json");
  live.OnClientEvent("{\"process\":\"harness\",\"type\":\"ok\",\"f\":\"read\"}");
  EXPECT_EQ(live.ops(), 0);
}

}  // namespace
}  // namespace locklab::harness
