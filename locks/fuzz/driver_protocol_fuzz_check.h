// What the driver protocol's reader owes any line a driver prints, fuzzed or not
// (docs/driver-protocol.md "Errors"): shared by the libFuzzer target (fuzz_driver_protocol.cc)
// and the deterministic mutation test that runs in the suite
// (locks/tests/driver_protocol_fuzz_test.cc).
//
// CheckDriverLineInput(bytes) feeds `bytes` to the framing (DriverLineReader over a pipe,
// with a small max_line_bytes) and each line it yields to every check the client makes
// (CheckHello, IsPointLine, CheckPointLine, CheckAnswer, IsValidCount), and returns "" when
// the reader kept its contract, else what it broke:
//   - nothing throws (the JSON library's exceptions among them);
//   - every rejection is one line of valid UTF-8 (it goes into a history event's JSON);
//   - an accepted line is UTF-8 and nested no deeper than kMaxJsonDepth, and what it
//     yields (the hello's fields, the answer object) dumps as strict JSON;
//   - LineExcerpt of the line is valid UTF-8 on one line.
// A crash, a hang or a sanitizer report is the fuzzer's own finding. Thread-compatible.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <string>

#include "base/json_limits.h"
#include "locks/driver_protocol.h"

namespace locklab::locks {

inline std::string OneLineUtf8(const std::string& what, const std::string& message) {
  if (message.find('\n') != std::string::npos || message.find('\r') != std::string::npos) {
    return what + " is not one line: " + LineExcerpt(message);
  }
  if (FirstInvalidUtf8(message) != std::string::npos) {
    return what + " is not UTF-8: " + LineExcerpt(message);
  }
  return "";
}

// The checks on one line (the framing's output).
inline std::string CheckDriverLine(const std::string& line) {
  try {
    if (std::string b = OneLineUtf8("LineExcerpt", LineExcerpt(line)); !b.empty()) return b;
    const bool clean = CheckLineBytes(line).empty();
    DriverHello h;
    std::string bad = CheckHello(line, &h);
    if (std::string b = OneLineUtf8("hello error", bad); !b.empty()) return b;
    if (bad.empty()) {
      if (!clean) return "a hello with bad bytes was accepted";
      nlohmann::json j = {
          {"name", h.name}, {"backend", BackendName(h.backend)}, {"points", h.points}};
      (void)j.dump();  // strict: throws on anything but UTF-8
    }
    std::string point;
    if (IsPointLine(line)) {
      if (!clean) return "a point line with bad bytes was recognised";
      bad = CheckPointLine(line, {"after-acquire", "before-release"}, &point);
      if (std::string b = OneLineUtf8("point error", bad); !b.empty()) return b;
    }
    nlohmann::json answer;
    std::string outcome;
    bad = CheckAnswer(line, 7, &answer, &outcome);
    if (std::string b = OneLineUtf8("answer error", bad); !b.empty()) return b;
    if (bad.empty()) {
      if (!clean) return "an answer with bad bytes was accepted";
      (void)answer.dump();
      (void)IsValidCount(answer, "fence");
      (void)IsValidCount(answer, "validity_ms");
    }
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
  return "";
}

// The framing, then the checks on each line it yields.
inline std::string CheckDriverLineInput(const std::string& bytes) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return "";
  // At most a pipe's buffer: the writer never blocks (the rest is the fuzzer's concern).
  std::string in = bytes.substr(0, 60000);
  size_t sent = 0;
  while (sent < in.size()) {
    ssize_t n = write(fds[1], in.data() + sent, in.size() - sent);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  close(fds[1]);
  DriverLineReader reader(4096);
  std::string broken;
  for (int i = 0; i < 10000 && broken.empty(); ++i) {
    std::string line, why;
    DriverLineReader::Result r = reader.Read(fds[0], MonotonicNow(), &line, &why);
    if (r == DriverLineReader::Result::kLine) {
      broken = CheckDriverLine(line);
      continue;
    }
    if (r == DriverLineReader::Result::kError) broken = OneLineUtf8("reader error", why);
    if (r == DriverLineReader::Result::kEof && !reader.partial().empty()) {
      broken = OneLineUtf8("partial line excerpt", LineExcerpt(reader.partial(), 60));
    }
    break;
  }
  close(fds[0]);
  return broken;
}

}  // namespace locklab::locks
