// What the scenario reader owes any input, fuzzed or not (docs/design.md 5): shared by the
// libFuzzer target (fuzz_scenario.cc) and the deterministic mutation test that runs in the
// suite (harness/scenario/tests/scenario_fuzz_test.cc).
//
// CheckScenarioInput(text) parses `text` as the scenario file "fuzz.toml" and returns ""
// when the reader kept its contract, else what it broke:
//   - a rejection is one line naming the file and the line: "fuzz.toml:LINE: ...";
//   - an accepted scenario's validation (ValidateRunOptions) is refused the same way;
//   - an accepted scenario written back (ScenarioToToml, what a run directory replays)
//     parses again, to the very same text when written once more.
// A crash, a hang or a sanitizer report is the fuzzer's own finding. Thread-compatible.
#pragma once

#include <cctype>
#include <string>

#include "harness/scenario/run_options.h"

namespace locklab::harness {

inline bool NamesFileAndLine(const std::string& message, const std::string& file) {
  if (message.find('\n') != std::string::npos || message.find('\r') != std::string::npos) return false;
  if (message.rfind(file + ":", 0) != 0) return false;
  size_t i = file.size() + 1, digits = 0;
  while (i < message.size() && isdigit(static_cast<unsigned char>(message[i]))) ++i, ++digits;
  return digits > 0 && message.compare(i, 2, ": ") == 0;
}

inline std::string CheckScenarioInput(const std::string& text) {
  RunOptions o;
  Status s = ParseScenario(text, "fuzz.toml", &o);
  if (!s.ok()) {
    if (s.code() != Status::Code::kBadInput) return "rejection is not bad input (65): " + s.message();
    return NamesFileAndLine(s.message(), "fuzz.toml") ? "" : "rejection does not name file:line: " + s.message();
  }
  Status v = ValidateRunOptions(o);
  if (!v.ok() && !NamesFileAndLine(v.message(), "fuzz.toml")) {
    return "validation error does not name file:line: " + v.message();
  }
  std::string written = ScenarioToToml(o);
  RunOptions again;
  s = ParseScenario(written, "replay.toml", &again);
  if (!s.ok()) return "the written-back scenario does not parse: " + s.message() + "\n" + written;
  std::string twice = ScenarioToToml(again);
  if (twice != written) return "written back twice differs:\n" + written + "---\n" + twice;
  return "";
}

}  // namespace locklab::harness
