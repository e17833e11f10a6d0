// Adding a fault is its descriptor and its tests: a test-only fault registered through the
// catalog's extension point (RegisterFaultDescriptor) is listed (ListFaults, `locklab list
// --json`'s data), built (MakeFault, the run checks), drawn by the hunt, shrunk by its own
// simpler params, told in the narrative and styled for the report, with no other file
// knowing its id. Its own binary: registering changes the catalog every other test reads.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/random.h"
#include "faults/fault_descriptor.h"
#include "harness/hunt/hunt_shrink.h"
#include "harness/hunt/hunt_space.h"
#include "harness/hunt/hunt_story.h"

namespace locklab::harness {
namespace {

// Does nothing and says so: a window opens, closes, and is seen as the nothing it did.
class DryRunEffect : public faults::Effect {
 public:
  using Effect::Effect;
  nlohmann::json Start(Nanos, int) override { return {{"dry_run", true}}; }
  void Stop(Nanos) override {}
  faults::Evidence Probe(Nanos, faults::ProbeMoment) override { return {true, "dry run: nothing done", {}}; }

 protected:
  void Attach(faults::LabControl&) override {}
};

faults::FaultDescriptor DryRunFault() {
  faults::FaultDescriptor d;
  d.info = {"test-dry-run",
            "a test's fault that does nothing",
            {{"level", "low", "low or high"}, {"target", "any", faults::kTargetParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const faults::FaultOptions& o) { return std::make_unique<DryRunEffect>(o); };
  d.draw = [](const faults::FaultDrawContext& c, Rng& rng, faults::FaultOptions* f) {
    f->params["level"] = rng.Unit() < 0.5 ? "low" : "high";
    f->nodes = faults::DrawNodes(c, rng);
  };
  d.hunt.simpler_params = {"level"};
  d.sentence = [](const faults::FaultOptions& f, const std::string& window) {
    return "test-dry-run does nothing at level " + f.Param("level", "low") + " for " + window;
  };
  d.style.colour = "#123456";
  d.style.noun = "dry run";
  d.style.client_row = true;
  d.style.label = "dry run[ {clients}] {field:level}";
  d.style.story = "{client_words|'a client'} did nothing for {duration}";
  d.traits.node_down = true;  // as a fault that stops lock nodes would: its start events say so
  d.traits.needs_sentinel = true;
  return d;
}

// A built-in fault is one file of faults/catalog/ that registers itself like this, at its
// place in the listing order (between restart, 60, and clock-jump, 70): nothing else names it.
faults::FaultDescriptor BuiltInDryRunFault() {
  faults::FaultDescriptor d = DryRunFault();
  d.info.id = "test-built-in";
  return d;
}
const faults::BuiltInFault kBuiltInDryRun(65, &BuiltInDryRunFault);

TEST(FaultCatalogBuiltInTest, AFileThatRegistersItselfTakesItsPlaceInTheList) {
  const auto& all = faults::ListFaults();
  auto at = std::find_if(all.begin(), all.end(), [](const auto& f) { return f.id == "test-built-in"; });
  ASSERT_NE(at, all.end());
  ASSERT_NE(at, all.begin());
  EXPECT_EQ((at - 1)->id, "restart");
  ASSERT_NE(at + 1, all.end());
  EXPECT_EQ((at + 1)->id, "clock-jump");
  faults::FaultOptions o;
  o.id = "test-built-in";
  std::unique_ptr<faults::Fault> fault;
  EXPECT_TRUE(faults::MakeFault(o, 1, &fault).ok());
}

class FaultCatalogExtensionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(faults::RegisterFaultDescriptor(DryRunFault()).ok()); }
};

TEST_F(FaultCatalogExtensionTest, ARegisteredFaultIsListedAndBuilt) {
  const auto& all = faults::ListFaults();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back().id, "test-dry-run");  // after the built-in ones
  EXPECT_EQ(all.front().id, "none");
  ASSERT_NE(faults::FindFault("test-dry-run"), nullptr);
  EXPECT_EQ(faults::FindFaultParam("test-dry-run", "level")->default_value, "low");
  EXPECT_TRUE(faults::IsClientSideFault("test-dry-run"));
  EXPECT_FALSE(faults::IsNodeControlFault("test-dry-run"));

  faults::FaultOptions o;
  o.id = "test-dry-run";
  o.params["level"] = "high";
  std::unique_ptr<faults::Fault> fault;
  ASSERT_TRUE(faults::MakeFault(o, 1, &fault).ok());
  EXPECT_STREQ(fault->id(), "test-dry-run");
  o.params["levle"] = "high";
  const Status typo = faults::MakeFault(o, 1, &fault);
  EXPECT_FALSE(typo.ok());
  EXPECT_NE(typo.message().find("its params: level, target"), std::string::npos) << typo.message();

  // A second fault of the same id is refused: an id names one fault.
  EXPECT_FALSE(faults::RegisterFaultDescriptor(DryRunFault()).ok());
}

TEST_F(FaultCatalogExtensionTest, ItsListEntryCarriesItsStyle) {
  const nlohmann::ordered_json list = faults::FaultCatalogJson();
  auto it = std::find_if(list.begin(), list.end(), [](const auto& f) { return f["id"] == "test-dry-run"; });
  ASSERT_NE(it, list.end());
  EXPECT_EQ((*it)["client_side"], true);
  EXPECT_EQ((*it)["node_control"], false);
  EXPECT_EQ((*it)["params"][0]["name"], "level");
  EXPECT_EQ((*it)["style"]["colour"], "#123456");
  EXPECT_EQ((*it)["style"]["noun"], "dry run");
  EXPECT_EQ((*it)["style"]["client_row"], true);
  EXPECT_EQ((*it)["label"], "dry run[ {clients}] {field:level}");
  EXPECT_EQ((*it)["story"], "{client_words|'a client'} did nothing for {duration}");
  EXPECT_EQ((*it)["traits"]["node_down"], true);
  EXPECT_EQ((*it)["traits"]["needs_sentinel"], true);
  EXPECT_EQ((*it)["traits"]["kills_client"], false);
  EXPECT_EQ((*it)["traits"]["no_effect"], false);
}

TEST_F(FaultCatalogExtensionTest, ItsTraitsReachTheLab) {
  faults::FaultOptions o;
  o.id = "test-dry-run";
  std::unique_ptr<faults::Fault> fault;
  ASSERT_TRUE(faults::MakeFault(o, 1, &fault).ok());
  EXPECT_TRUE(fault->NeedsSentinel());  // the descriptor's trait, not the effect's
}

TEST_F(FaultCatalogExtensionTest, TheHuntDrawsTellsAndShrinksIt) {
  SearchSpace space;
  space.lock = "redlock";  // lists no faults of its own: every fault applies
  space.ttl = Millis(500);
  space.nodes = 5;
  space.faults = {"test-dry-run"};
  Rng rng(3);
  std::set<std::string> levels, targets;
  bool shrunk_to_low = false;
  for (int i = 0; i < 40; ++i) {
    RunOptions o = DrawScenario(space, rng, "t");
    ASSERT_EQ(o.faults.size(), 1u);
    const faults::FaultOptions& f = o.faults[0];
    EXPECT_EQ(f.id, "test-dry-run");
    levels.insert(f.Param("level", "?"));
    targets.insert(f.Param("target", "?"));  // drawn by the hunt: the fault takes a target
    EXPECT_FALSE(f.nodes.empty());
    // The run checks build it like any fault (MakeFault, CheckOptions).
    const Status valid = ValidateRunOptions(o);
    EXPECT_TRUE(valid.ok()) << valid.message();
    EXPECT_NE(DescribeFault(f, o.ttl).find("test-dry-run does nothing at level " + f.Param("level", "?") + " for "),
              std::string::npos)
        << DescribeFault(f, o.ttl);
    for (const auto& step : ShrinkCandidates(o)) {
      shrunk_to_low |= step.what == "fault 1 (test-dry-run): level low instead of high";
    }
  }
  EXPECT_EQ(levels, (std::set<std::string>{"low", "high"}));
  EXPECT_EQ(targets, (std::set<std::string>{"any", "holder", "just-released"}));
  EXPECT_TRUE(shrunk_to_low);
}

}  // namespace
}  // namespace locklab::harness
