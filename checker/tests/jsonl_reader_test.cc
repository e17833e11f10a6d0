// The jsonl readers: the file reader (blocks of 1 MiB, split in place) and the stream reader
// must give the same events and the same one-line errors, word for word, whatever the line
// and wherever a block boundary falls.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/history.h"
#include "checker/history_formats.h"

namespace locklab::checker {
namespace {

std::string Line(int64_t index, const std::string& value = "null") {
  return R"({"index":)" + std::to_string(index) + R"(,"time_ns":)" + std::to_string(index * 10 + 1) +
         R"(,"process":1,"type":")" + (index % 2 == 0 ? "invoke" : "ok") +
         R"(","f":"acquire","key":"lock:0","value":)" + value + "}";
}

struct Both {
  Status file, stream;
  History from_file, from_stream;
  int torn_file = -1, torn_stream = -1;
};

Both ReadBoth(const std::string& text, bool allow_torn = false) {
  static int n = 0;
  std::string path = ::testing::TempDir() + "/reader_" + std::to_string(getpid()) + "_" +
                     std::to_string(n++) + ".jsonl";
  std::ofstream(path, std::ios::binary) << text;
  Both b;
  b.file = ReadJsonlHistory(path, &b.from_file, allow_torn, &b.torn_file);
  std::istringstream in(text);
  b.stream = ParseJsonlHistory(in, path, &b.from_stream, allow_torn, &b.torn_stream);
  // check's own reader (format detection, then the file reader) says the same.
  if (!allow_torn) {
    History via_format;
    HistoryFormat fmt = HistoryFormat::kJsonl;
    Status f = ReadHistoryFile(path, &fmt, true, &via_format);
    EXPECT_EQ(f.message(), b.file.message());
    EXPECT_EQ(via_format.size(), b.from_file.size());
  }
  std::filesystem::remove(path);
  return b;
}

void ExpectSame(const Both& b) {
  EXPECT_EQ(b.file.ok(), b.stream.ok());
  EXPECT_EQ(b.file.message(), b.stream.message());
  EXPECT_EQ(b.torn_file, b.torn_stream);
  ASSERT_EQ(b.from_file.size(), b.from_stream.size());
  for (size_t i = 0; i < b.from_file.size(); ++i) {
    EXPECT_EQ(ToJsonLine(b.from_file[i]), ToJsonLine(b.from_stream[i])) << i;
    EXPECT_EQ(b.from_file[i].line, b.from_stream[i].line) << i;
  }
}

TEST(JsonlReader, ErrorLinesAreTheSameFromFileAndStream) {
  const std::string ok0 = Line(0) + "\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {ok0 + Line(1, std::string(70, '[') + std::string(70, ']')) + "\n",
       ":2: field 'value': nested deeper than 64 levels"},
      {ok0 + "{not json\n", ":2: not a JSON object"},
      {ok0 + R"({"index":1,"process":1,"type":"ok","f":"acquire"})" + "\n",
       ":2: field 'time_ns': missing"},
      {ok0 + R"({"index":1,"time_ns":"x","process":1,"type":"ok","f":"acquire"})" + "\n",
       ":2: field 'time_ns': expected an integer"},
      {ok0 + Line(1) + "\n" + ok0, ":3: field 'index': duplicate index 0 (also on line 1)"},
      {ok0 + Line(5) + "\n" + Line(3) + "\n" + Line(5) + "\n",
       ":4: field 'index': duplicate index 5 (also on line 2)"},
      {ok0 + "{\"index\":1,\"time_ns\":2,\"process\":1,\"type\":\"ok\",\"f\":\"acq\xff\"}\n",
       ":2: not a JSON object"},
      {ok0 + R"({"index":1,"time_ns":2,"process":-4,"type":"ok","f":"acquire"})" + "\n",
       ":2: field 'process': negative process id"},
      {ok0 + R"({"index":1,"time_ns":2,"process":1,"type":"okk","f":"acquire"})" + "\n",
       ":2: field 'type': expected invoke, ok, fail or info"},
      {ok0 + "{\"index\":1", ":2: not a JSON object"},  // torn, but torn is not allowed here
  };
  for (const auto& [text, want] : cases) {
    Both b = ReadBoth(text);
    ExpectSame(b);
    ASSERT_FALSE(b.file.ok()) << text;
    EXPECT_NE(b.file.message().find(want), std::string::npos) << b.file.message();
    // One line, naming the file and the line.
    EXPECT_EQ(b.file.message().find('\n'), std::string::npos);
  }
}

TEST(JsonlReader, BlankLinesCrlfTornTailAndNoFinalNewline) {
  std::string base = Line(0) + "\n\n  \n" + Line(1) + "\r\n";
  for (const std::string& text :
       {base, base + Line(2), base + Line(2) + "\n", base + "{\"index\":2,\"ti"}) {
    for (bool torn : {false, true}) ExpectSame(ReadBoth(text, torn));
  }
  Both b = ReadBoth(base + "{\"index\":2,\"ti", true);
  EXPECT_TRUE(b.file.ok());
  EXPECT_EQ(b.torn_file, 5);
  EXPECT_EQ(b.from_file.size(), 2u);
  EXPECT_EQ(b.from_file[1].line, 4);
}

// Lines that cross the reader's 1 MiB blocks, one of them longer than a block.
TEST(JsonlReader, LinesAcrossBlockBoundaries) {
  std::string text;
  int64_t i = 0;
  while (text.size() < (size_t(5) << 20) / 2) text += Line(i++) + "\n";
  text += Line(i++, "\"" + std::string(size_t(3) << 20, 'x') + "\"") + "\n";
  while (text.size() < (size_t(7) << 20)) text += Line(i++) + "\n";
  Both b = ReadBoth(text);
  ExpectSame(b);
  ASSERT_TRUE(b.file.ok()) << b.file.message();
  EXPECT_EQ(b.from_file.size(), static_cast<size_t>(i));
}

TEST(History, SortByTimeInPlaceIsSortedByTime) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    History h;
    for (int i = 0; i < 200; ++i) {
      Event e;
      e.index = static_cast<int64_t>(rng() % 3);  // ties in time and index: stable
      e.time = Nanos(static_cast<int64_t>(rng() % 20));
      e.process = i;
      e.f = "acquire";
      h.push_back(e);
    }
    History want = SortedByTime(h);
    SortByTimeInPlace(&h);
    ASSERT_EQ(h.size(), want.size());
    for (size_t i = 0; i < h.size(); ++i) {
      ASSERT_EQ(h[i].process, want[i].process) << trial << " " << i;
      ASSERT_EQ(h[i].f, "acquire");
    }
  }
}

}  // namespace
}  // namespace locklab::checker
