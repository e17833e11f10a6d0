// The driver protocol's lines and framing without a driver process: what each check says
// (the words end up in histories and client logs; docs/driver-protocol.md quotes them).
#include "locks/driver_protocol.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace locklab::locks {
namespace {

TEST(DriverProtocolTest, Hello) {
  bool renew = false;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"renew":true})", &renew), "");
  EXPECT_TRUE(renew);
  renew = true;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1})", &renew), "");
  EXPECT_FALSE(renew) << "renew defaults to false";
  EXPECT_EQ(CheckHello("hi\tthere", &renew),
            "first line is not a hello {\"hello\":\"locklab-driver\",...}: 'hi\\x09there'");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":2})", &renew),
            "hello: field 'protocol' must be 1");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"renew":"yes"})", &renew),
            "hello: field 'renew' must be true or false");
}

TEST(DriverProtocolTest, Answers) {
  nlohmann::json answer;
  std::string outcome;
  EXPECT_EQ(CheckAnswer(R"({"id":3,"outcome":"ok","token":"t"})", 3, &answer, &outcome), "");
  EXPECT_EQ(outcome, "ok");
  EXPECT_EQ(answer["token"], "t");
  EXPECT_EQ(CheckAnswer("[1]", 3, &answer, &outcome), "answer is not a JSON object: '[1]'");
  EXPECT_EQ(CheckAnswer(R"({"outcome":"ok"})", 3, &answer, &outcome),
            "answer without an integer 'id': '{\"outcome\":\"ok\"}'");
  EXPECT_EQ(CheckAnswer(R"({"id":1003,"outcome":"ok"})", 3, &answer, &outcome),
            "answer for id 1003 while id 3 is pending");
  EXPECT_EQ(CheckAnswer(R"({"id":3,"outcome":"maybe"})", 3, &answer, &outcome),
            "answer field 'outcome' must be \"ok\", \"fail\" or \"unknown\": "
            "'{\"id\":3,\"outcome\":\"maybe\"}'");
  EXPECT_EQ(CheckAnswer(R"({"id":3,"outcome":"fail","detail":7})", 3, &answer, &outcome),
            "answer field 'detail' must be a string");
  EXPECT_TRUE(IsValidCount(nlohmann::json::object(), "fence"));
  EXPECT_TRUE(IsValidCount(nlohmann::json{{"fence", 0}}, "fence"));
  EXPECT_FALSE(IsValidCount(nlohmann::json{{"fence", -1}}, "fence"));
  EXPECT_FALSE(IsValidCount(nlohmann::json{{"fence", "1"}}, "fence"));
}

TEST(DriverProtocolTest, ExcerptCutsAndEscapes) {
  EXPECT_EQ(LineExcerpt("a\x7f"
                        "b"),
            "a\\x7fb");
  EXPECT_EQ(LineExcerpt(std::string(10, 'x'), 4), "xxxx... (10 bytes)");
}

class DriverLineReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe2(fds_, O_CLOEXEC | O_NONBLOCK), 0); }
  void TearDown() override {
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  void Write(const std::string& s) {
    ASSERT_EQ(write(fds_[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  int fds_[2] = {-1, -1};
};

TEST_F(DriverLineReaderTest, LinesTimeoutAndEofWithAPartialLine) {
  DriverLineReader reader(64);
  std::string line, why;
  Write("one\ntwo\nthr");
  EXPECT_EQ(reader.Read(fds_[0], MonotonicNow(), &line, &why), DriverLineReader::Result::kLine);
  EXPECT_EQ(line, "one");
  EXPECT_EQ(reader.Read(fds_[0], MonotonicNow(), &line, &why), DriverLineReader::Result::kLine);
  EXPECT_EQ(line, "two");
  const Nanos start = MonotonicNow();
  EXPECT_EQ(reader.Read(fds_[0], start + Millis(50), &line, &why),
            DriverLineReader::Result::kTimeout);
  EXPECT_GE(MonotonicNow() - start, Millis(50));
  close(fds_[1]);
  fds_[1] = -1;
  EXPECT_EQ(reader.Read(fds_[0], MonotonicNow() + Millis(1000), &line, &why),
            DriverLineReader::Result::kEof);
  EXPECT_EQ(reader.partial(), "thr");
}

TEST_F(DriverLineReaderTest, ALineLongerThanTheCapIsAnError) {
  DriverLineReader reader(64);
  std::string line, why;
  Write(std::string(100, 'x'));
  EXPECT_EQ(reader.Read(fds_[0], MonotonicNow() + Millis(1000), &line, &why),
            DriverLineReader::Result::kError);
  EXPECT_EQ(why.rfind("answer line longer than max_line_bytes 64 (starts 'xxx", 0), 0u) << why;
}

TEST_F(DriverLineReaderTest, WriteLineGivesUpOnAFullPipe) {
  std::string big(1 << 20, 'x');  // more than a pipe holds, and nobody reads
  EXPECT_EQ(WriteLine(fds_[1], big, MonotonicNow() + Millis(50)),
            "the driver does not read its stdin");
  close(fds_[0]);
  fds_[0] = -1;
  signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(WriteLine(fds_[1], "x\n", MonotonicNow() + Millis(50)),
            "cannot send the request: Broken pipe");
}

}  // namespace
}  // namespace locklab::locks
