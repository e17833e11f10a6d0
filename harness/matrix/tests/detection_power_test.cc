// DetectionPowerMarkdown on hand-written measurement files: the counts are the file's, the
// cells are the table's, and a file that cannot be read is named, never a crash.
#include "harness/matrix/detection_power.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

namespace locklab::harness {
namespace {

class DetectionPowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/locklab-power-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    path_ = std::string(tmpl) + "/detection-power.json";
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(path_.substr(0, path_.rfind('/')).c_str());
  }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  std::string path_;
};

const char kTenRuns[] = R"({"measured": "2026-11-22", "mode": "quick", "runs": 10,
  "seeds": [301,302,303,304,305,306,307,308,309,310],
  "cells": [
   {"lock": "setnx", "fault": "delay", "verdicts": ["V","V","V","V","V","V","V","V","V","V"]},
   {"lock": "a", "fault": "delay", "verdicts": ["V","V","V","V","S","V","V","V","V","V"]},
   {"lock": "b", "fault": "delay", "verdicts": ["V","S","V","S","V","V","V","V","V","V"]},
   {"lock": "c", "fault": "reply-loss", "verdicts": ["L","S","L","L","L","L","L","L","L","L"]},
   {"lock": "d", "fault": "none", "verdicts": ["S","S","S","S","S","S","S","S","S","S"]}]})";

TEST_F(DetectionPowerTest, CountsTheTablesCellsAgainstTheNineOfTenBar) {
  Write(kTenRuns);
  std::string md = DetectionPowerMarkdown(
      path_, {{"setnx", "delay"}, {"a", "delay"}, {"b", "delay"}, {"c", "reply-loss"}, {"d", "none"}},
      "quick");
  EXPECT_NE(md.find("seeds 301-310, measured 2026-11-22"), std::string::npos) << md;
  EXPECT_NE(md.find("3 showed a violation in some run, 2 of them in at least 9 of 10 and 1 in "
                    "every run; 2 never showed one"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`a` x delay 9/10; `b` x delay 8/10"), std::string::npos) << md;
  EXPECT_NE(md.find("`c` x reply-loss (L S L L L L L L L L)"), std::string::npos) << md;
  EXPECT_EQ(md.find("`d` x none ("), std::string::npos) << "a cell that never varied is not listed";
}

// bench/detection_power records what it measured on; the section names the revision.
TEST_F(DetectionPowerTest, TheRecordedRevisionIsShown) {
  std::string text = kTenRuns;
  const std::string source =
      R"("source": {"revision": "4205df35af6e7bbfdfad841d5309e11568f0dc30", "dirty": DIRTY,
          "presets": {"scenarios/matrix": {"none.toml": "367fea4"}}},
       "machine": {"nproc": 2}, "command": "bench/detection_power --write x a/ b/",
       "matrix_runs": [{"seed": 301, "plan": "0123456789abcdef"}],
       "cells": )";
  text.replace(text.find("\"cells\": "), 9, source);
  auto with_dirty = [&](const std::string& dirty) {
    std::string t = text;
    t.replace(t.find("DIRTY"), 5, dirty);
    Write(t);
    return DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick");
  };
  std::string md = with_dirty("false");
  EXPECT_NE(md.find("seeds 301-310, measured 2026-11-22 at revision 4205df3 with "
                    "bench/detection_power"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("1 showed a violation in some run"), std::string::npos) << md;
  md = with_dirty("true");
  EXPECT_NE(md.find("at revision 4205df3 with uncommitted changes with bench"), std::string::npos)
      << md;
  md = with_dirty("null");
  EXPECT_NE(md.find("at revision 4205df3 (tree state unrecorded) with bench"), std::string::npos)
      << md;
}

// The file the repository ships (scenarios/matrix/detection-power.json) reads.
// Rows measured apart (bench/detection_power --add) say their own seeds and revision, and
// only when this table has one of their cells.
TEST_F(DetectionPowerTest, AddedRowsNameTheirOwnSeedsAndRevision) {
  std::string text = kTenRuns;
  text.insert(text.find("\"cells\""),
              R"("additions": [{"locks": ["zk-lock"], "measured": "2026-11-24",
                   "seeds": [601,602,603,604,605,606,607,608,609,610],
                   "source": {"revision": "0123456789abcdef", "dirty": false}}],
                 )");
  text.insert(text.rfind("]}"), R"(,
   {"lock": "zk-lock", "fault": "partition", "verdicts": ["V","V","V","V","V","V","V","V","V","V"],
    "addition": 1})");
  Write(text);
  std::string md = DetectionPowerMarkdown(path_, {{"setnx", "delay"}, {"zk-lock", "partition"}}, "quick");
  EXPECT_NE(md.find("2 showed a violation in some run"), std::string::npos) << md;
  EXPECT_NE(md.find("Rows `zk-lock` were measured apart and added (bench/detection_power --add): "
                    "seeds 601-610, measured 2026-11-24 at revision 0123456."),
            std::string::npos)
      << md;
  md = DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick");
  EXPECT_EQ(md.find("measured apart"), std::string::npos) << md;
  // A cell naming an addition the file does not have: the file is named, not trusted.
  std::string bad = text;
  bad.replace(bad.find("\"addition\": 1"), 13, "\"addition\": 2");
  Write(bad);
  md = DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick");
  EXPECT_NE(md.find("cannot be read (cell zk-lock x partition: addition 2 is not in"), std::string::npos) << md;
}

TEST(DetectionPowerShipped, TheShippedFileReads) {
  const std::string path = std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/matrix/detection-power.json";
  std::string md = DetectionPowerMarkdown(path, {{"setnx", "restart"}}, "quick");
  EXPECT_NE(md.find("## Detection power"), std::string::npos) << md;
  EXPECT_EQ(md.find("cannot be read"), std::string::npos) << md;
  EXPECT_NE(md.find(" at revision "), std::string::npos) << md;
}

TEST_F(DetectionPowerTest, OnlyTheTablesCellsCountAndUnmeasuredRowsAreNamed) {
  Write(kTenRuns);
  std::string md =
      DetectionPowerMarkdown(path_, {{"setnx", "delay"}, {"driver:my.py", "delay"}}, "quick");
  EXPECT_NE(md.find("1 showed a violation in some run, 1 of them in at least 9 of 10 and 1 in "
                    "every run; 0 never showed one"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Not in the measurement (no figures): `driver:my.py` x delay."),
            std::string::npos)
      << md;
}

// A cell the measurement ran as n/a (a column it left out then) and the table now runs has no
// figures: it is named as unmeasured, never counted as "never showed one".
TEST_F(DetectionPowerTest, ACellMeasuredAsNotApplicableIsUnmeasured) {
  std::string text = kTenRuns;
  text.insert(text.find("]}]}") + 2,  // after the last cell
              R"(, {"lock": "driver:x.py", "fault": "slow-cs", "verdicts": ["n/a","n/a","n/a","n/a","n/a","n/a","n/a","n/a","n/a","n/a"]})");
  Write(text);
  std::string md =
      DetectionPowerMarkdown(path_, {{"setnx", "delay"}, {"driver:x.py", "slow-cs"}}, "quick");
  EXPECT_NE(md.find("1 showed a violation in some run, 1 of them in at least 9 of 10 and 1 in "
                    "every run; 0 never showed one"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Not in the measurement (no figures): `driver:x.py` x slow-cs."),
            std::string::npos)
      << md;
}

TEST_F(DetectionPowerTest, FiguresOfTheOtherModeOrNoFileShowNothing) {
  EXPECT_EQ(DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick"), "");
  Write(kTenRuns);
  EXPECT_EQ(DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "full"), "");
}

TEST_F(DetectionPowerTest, AnUnreadableFileIsNamedInOneNote) {
  Write(R"({"measured": "2026-11-22", "mode": "quick", "runs": "ten"})");
  std::string md = DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick");
  EXPECT_NE(md.find("Not shown: " + path_ + " cannot be read"), std::string::npos) << md;
  Write("{ not json");
  md = DetectionPowerMarkdown(path_, {{"setnx", "delay"}}, "quick");
  EXPECT_NE(md.find("cannot be read"), std::string::npos) << md;
}

}  // namespace
}  // namespace locklab::harness
