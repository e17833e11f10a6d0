// The Java driver helper (examples/drivers/java/LocklabDriver.java) at the protocol level,
// through the shipped template (TemplateDriver: SET NX PX over its own RESP client, here
// given a node nobody listens on, so every operation is a certain `fail`): the hello,
// one answer per request with its id, JSON it must read (escapes, unicode, nested arrays,
// fields it does not know), lines it must skip (garbage, no id, blank), unknown ops, and a
// clean exit on EOF. No server is needed: its connects are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/subprocess.h"
#include "locks/driver_lock.h"
#include "locks/driver_protocol.h"

namespace locklab::locks {
namespace {

const std::string kTemplate = std::string(LOCKLAB_SOURCE_DIR) + "/examples/drivers/java/template_driver";

class JavaTemplateDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/javac", X_OK) != 0) GTEST_SKIP() << "no javac (openjdk-17-jdk-headless)";
    SubprocessOptions so;
    so.argv = {kTemplate};
    so.stdin_stream = StdStream::Pipe();
    so.stdout_stream = StdStream::Pipe();
    so.stderr_stream = StdStream::Inherit();
    so.env["LOCKLAB_NODES"] = "127.0.0.1:1";
    Status s = Subprocess::Spawn(so, &driver_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // The next line the driver prints, within `wait`: 20 s for an answer, 60 s for the hello
  // (a JVM, maybe compiling first, on a loaded 2-core machine: no test here times a start).
  std::string Next(Millis wait = Millis(20000)) {
    std::string line, why;
    auto r = reader_.Read(driver_.stdout_pipe(), MonotonicNow() + wait, &line, &why);
    EXPECT_EQ(r, DriverLineReader::Result::kLine) << why;
    return line;
  }
  void Send(const std::string& line) {
    EXPECT_EQ(WriteLine(driver_.stdin_pipe(), line + "\n", MonotonicNow() + Millis(2000)), "");
  }

  Subprocess driver_;
  DriverLineReader reader_{65536};
};

TEST_F(JavaTemplateDriverTest, SpeaksTheProtocol) {
  DriverHello hello;
  ASSERT_EQ(CheckHello(Next(Millis(60000)), &hello), "");
  EXPECT_EQ(hello.name, "template (SET NX PX, Lua release)");
  EXPECT_EQ(hello.backend, Backend::kRedis) << "the template asks for nothing special";
  EXPECT_TRUE(hello.renew);

  // Lines it must skip without answering: garbage, an object without an integer id, blank.
  Send("this is not json");
  Send(R"({"op":"acquire","key":"k"})");
  Send(R"({"id":"7","op":"acquire"})");
  Send("   ");
  // Escapes, unicode, nested values and unknown fields: read, and the answer has the id.
  Send(R"({"id":1,"op":"acquire","key":"lock:\"q\"\\\u00e9\n","ttl_ms":500,)"
       R"("timeout_ms":1000,"extra":{"a":[1,2.5,true,null,{"b":"c"}]},"neg":-3,"exp":1e3})");
  nlohmann::json a = nlohmann::json::parse(Next(), nullptr, false);
  ASSERT_TRUE(a.is_object());
  EXPECT_EQ(a["id"], 1) << "the skipped lines were not answered";
  EXPECT_EQ(a["outcome"], "fail");
  EXPECT_EQ(a["detail"].get<std::string>().rfind("connection refused", 0), 0u) << a.dump();

  Send(R"({"id":2,"op":"release","key":"k","token":"t","timeout_ms":1000})");
  std::string line = Next();
  nlohmann::json answer;
  std::string outcome;
  EXPECT_EQ(CheckAnswer(line, 2, &answer, &outcome), "") << line;
  EXPECT_EQ(outcome, "fail");

  Send(R"({"id":3,"op":"renew","key":"k","token":"t","ttl_ms":500,"timeout_ms":1000})");
  line = Next();
  EXPECT_EQ(CheckAnswer(line, 3, &answer, &outcome), "") << line;
  EXPECT_EQ(outcome, "fail") << "refused: nothing was sent";
  Send(R"({"id":4,"op":"frobnicate"})");
  line = Next();
  EXPECT_EQ(CheckAnswer(line, 4, &answer, &outcome), "") << line;
  EXPECT_EQ(outcome, "fail");
  EXPECT_EQ(answer["detail"], "unknown op 'frobnicate'");

  // EOF: it exits, status 0.
  driver_.CloseStdin();
  int status = -1;
  ASSERT_TRUE(driver_.WaitExit(Millis(10000), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// Through DriverLock, as a client runs it: started, greeted, an acquire that certainly failed
// (every connect refused).
TEST(JavaTemplateDriverLockTest, AcquireIsACertainFailure) {
  if (access("/usr/bin/javac", X_OK) != 0) GTEST_SKIP() << "no javac (openjdk-17-jdk-headless)";
  LockConfig c;
  c.algorithm = std::string(kDriverPrefix) + kTemplate;
  c.nodes = {Endpoint{"127.0.0.1", 1}};
  c.ttl = Millis(500);
  c.knobs = {{"start_timeout_ms", "60000"}};  // a JVM on a loaded machine: see Next
  DriverOptions o;
  ASSERT_TRUE(ParseDriverOptions(c, &o).ok());
  DriverLock lock(c, o);
  Status s = lock.WaitReady();
  ASSERT_TRUE(s.ok()) << s.message();
  LockResult r = lock.Acquire("k", MonotonicNow() + Millis(2000));
  EXPECT_EQ(r.outcome, Outcome::kFail) << r.detail;
  EXPECT_NE(r.detail.find("connection refused"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace locklab::locks
