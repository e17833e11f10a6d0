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

TEST(DriverProtocolTest, HelloResource) {
  DriverHello h;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1})", &h), "");
  EXPECT_FALSE(h.resource) << "the lab's counter unless the hello says otherwise";
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"resource":true})", &h), "");
  EXPECT_TRUE(h.resource);
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"resource":1})", &h),
            "hello: field 'resource' must be true or false");
}

TEST(DriverProtocolTest, Hello) {
  DriverHello h;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"renew":true})", &h), "");
  EXPECT_TRUE(h.renew);
  EXPECT_FALSE(h.ttl.has_value());
  EXPECT_TRUE(h.points.empty());
  h.renew = true;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1})", &h), "");
  EXPECT_FALSE(h.renew) << "renew defaults to false";
  EXPECT_EQ(CheckHello("hi\tthere", &h),
            "first line is not a hello {\"hello\":\"locklab-driver\",...}: 'hi\\x09there'");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":2})", &h),
            "hello: field 'protocol' must be 1");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"renew":"yes"})", &h),
            "hello: field 'renew' must be true or false");
}

TEST(DriverProtocolTest, HelloWithTtlPointsAndName) {
  DriverHello h;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"ttl_ms":30000,)"
                       R"("points":["between-get-and-del","a-2"],"name":"gcd"})",
                       &h),
            "");
  ASSERT_TRUE(h.ttl.has_value());
  EXPECT_EQ(*h.ttl, Millis(30000));
  EXPECT_EQ(h.points, (std::vector<std::string>{"between-get-and-del", "a-2"}));
  EXPECT_EQ(h.name, "gcd");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"ttl_ms":0})", &h),
            "hello: field 'ttl_ms' must be an integer 1..3600000 (milliseconds), got 0");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"ttl_ms":"500"})", &h),
            "hello: field 'ttl_ms' must be an integer 1..3600000 (milliseconds), got \"500\"");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"points":"x"})", &h),
            "hello: field 'points' must be an array of point names");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"points":["Bad_Name"]})", &h),
            "hello: field 'points': \"Bad_Name\" is not a point name ([a-z0-9-]+, at most 64 "
            "characters)");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"points":[3]})", &h),
            "hello: field 'points': 3 is not a point name ([a-z0-9-]+, at most 64 characters)");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"name":1})", &h),
            "hello: field 'name' must be a string");
}

// backend / nodes: the servers a driver asks the lab to start.
TEST(DriverProtocolTest, HelloWithBackendAndNodes) {
  DriverHello h;
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1})", &h), "");
  EXPECT_EQ(h.backend, Backend::kRedis) << "Redis unless the hello says otherwise";
  EXPECT_FALSE(h.nodes.has_value());
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":"redis"})", &h), "");
  EXPECT_EQ(h.backend, Backend::kRedis);
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":"zookeeper","nodes":3})",
                       &h),
            "");
  EXPECT_EQ(h.backend, Backend::kZookeeper);
  ASSERT_TRUE(h.nodes.has_value());
  EXPECT_EQ(*h.nodes, 3);
  for (const auto& b : DriverBackends()) {
    EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":")" + b + "\"}", &h), "")
        << b;
    EXPECT_EQ(BackendName(h.backend), b);
  }
  const std::string kBackendError =
      "hello: field 'backend' must be one of redis, mariadb, postgres, etcd, zookeeper, got ";
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":"mongodb"})", &h),
            kBackendError + "\"mongodb\"");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":"Redis"})", &h),
            kBackendError + "\"Redis\"") << "kinds are exact";
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"backend":3})", &h),
            kBackendError + "3");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"nodes":0})", &h),
            "hello: field 'nodes' must be an integer 1..9, got 0");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"nodes":10})", &h),
            "hello: field 'nodes' must be an integer 1..9, got 10");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"nodes":"3"})", &h),
            "hello: field 'nodes' must be an integer 1..9, got \"3\"");
  EXPECT_EQ(CheckHello(R"({"hello":"locklab-driver","protocol":1,"nodes":2.5})", &h),
            "hello: field 'nodes' must be an integer 1..9, got 2.5");
}

TEST(DriverProtocolTest, PointNamesAndLines) {
  EXPECT_TRUE(IsWellFormedPointName("between-get-and-del"));
  EXPECT_TRUE(IsWellFormedPointName(std::string(64, 'a')));
  EXPECT_FALSE(IsWellFormedPointName(std::string(65, 'a')));
  EXPECT_FALSE(IsWellFormedPointName(""));
  EXPECT_FALSE(IsWellFormedPointName("A"));
  EXPECT_FALSE(IsWellFormedPointName("a b"));
  EXPECT_TRUE(IsPointLine(R"({"point":"x"})"));
  EXPECT_TRUE(IsPointLine(R"({"point":7})")) << "a malformed point line is still one";
  EXPECT_FALSE(IsPointLine(R"({"id":1,"outcome":"ok","token":"t"})"));
  EXPECT_FALSE(IsPointLine("garbage"));
  const std::vector<std::string> declared = {"between-get-and-del"};
  std::string name;
  EXPECT_EQ(CheckPointLine(R"({"point":"between-get-and-del"})", declared, &name), "");
  EXPECT_EQ(name, "between-get-and-del");
  EXPECT_EQ(CheckPointLine(R"({"point":"elsewhere"})", declared, &name),
            "point 'elsewhere' was not announced in the hello (it announced: between-get-and-del)");
  EXPECT_EQ(CheckPointLine(R"({"point":"x"})", {}, &name),
            "point 'x' was not announced in the hello (it announced: none)");
  EXPECT_EQ(CheckPointLine(R"({"point":7})", declared, &name),
            "malformed point line (expected {\"point\":\"NAME\"}, NAME [a-z0-9-]+): "
            "'{\"point\":7}'");
  EXPECT_EQ(PointGoLine("p-1"), "{\"point\":\"p-1\",\"go\":true}\n");
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

namespace locklab::locks {
namespace {

// Bytes that are not UTF-8 or nest too deep are protocol errors with one line of
// UTF-8 (they used to reach the JSON library's dump, which threw type_error 316).
TEST(DriverProtocolTest, BadBytesAreProtocolErrorsInValidUtf8) {
  const std::string ff = "{\"id\":3,\"outcome\":\"ok\",\"detail\":\"a\xff\"}";
  EXPECT_EQ(CheckLineBytes(ff),
            "line is not UTF-8 (byte 0xff at offset 34, in field 'detail'): "
            "'{\"id\":3,\"outcome\":\"ok\",\"detail\":\"a\\xff\"}'");
  nlohmann::json a;
  std::string outcome;
  std::string why = CheckAnswer(ff, 3, &a, &outcome);
  EXPECT_EQ(why.rfind("answer line is not UTF-8 (byte 0xff", 0), 0u) << why;
  EXPECT_NO_THROW((void)nlohmann::json({{"error", why}}).dump());
  EXPECT_FALSE(IsPointLine("{\"point\":\"a\xff\"}"));

  DriverHello h;
  std::string hello = CheckHello("{\"hello\":\"locklab-driver\",\"protocol\":1,\"name\":\"\xff\"}", &h);
  EXPECT_EQ(hello.rfind("hello: line is not UTF-8 (byte 0xff at offset 47, in field 'name')", 0),
            0u)
      << hello;
  // Well-formed UTF-8 goes through, in a name and in a detail.
  EXPECT_EQ(CheckHello("{\"hello\":\"locklab-driver\",\"protocol\":1,\"name\":\"caf\xc3\xa9\"}", &h), "");
  EXPECT_EQ(h.name, "caf\xc3\xa9");
  EXPECT_EQ(CheckAnswer("{\"id\":3,\"outcome\":\"fail\",\"detail\":\"\xe2\x82\xac\"}", 3, &a, &outcome), "");
  // Overlong forms, surrogates and a sequence cut short are not UTF-8.
  for (const char* bad : {"\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80"}) {
    EXPECT_NE(CheckLineBytes(std::string("{\"detail\":\"") + bad + "\"}"), "") << bad;
  }
}

TEST(DriverProtocolTest, NestingPastTheLimitIsAProtocolError) {
  auto nested = [](int depth) {
    return "{\"id\":3,\"outcome\":\"ok\",\"extra\":" + std::string(depth, '[') +
           std::string(depth, ']') + "}";
  };
  nlohmann::json a;
  std::string outcome;
  EXPECT_EQ(CheckAnswer(nested(kMaxJsonDepth - 1), 3, &a, &outcome), "");
  EXPECT_EQ(CheckAnswer(nested(kMaxJsonDepth), 3, &a, &outcome),
            "answer line nested deeper than 64 levels (at offset 94, in field 'extra')");
  EXPECT_NE(CheckAnswer(nested(30000), 3, &a, &outcome), "");
  // Brackets inside strings do not count.
  EXPECT_EQ(CheckAnswer("{\"id\":3,\"outcome\":\"ok\",\"detail\":\"" + std::string(500, '[') + "\"}",
                        3, &a, &outcome),
            "");
}

TEST(DriverProtocolTest, LineExcerptIsAlwaysUtf8) {
  EXPECT_EQ(LineExcerpt("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(LineExcerpt("caf\xc3\xa9"), "caf\xc3\xa9");
  // Cut inside a sequence: the sequence is left out, not split.
  EXPECT_EQ(LineExcerpt("ab\xe2\x82\xac", 3), "ab... (5 bytes)");
}

}  // namespace
}  // namespace locklab::locks
