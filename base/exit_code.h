// The exit codes of every locklab command (docs/design.md 3.5), and the two ways several
// outcomes are ranked into one exit code.
//
// 0: everything checked came out as expected (for `check`: valid); 1: a violation or an
// unexpected verdict (for `check`: invalid); 2: unknown or incomplete (an interrupted run);
// 64 and up: the command could not do its job, with a one-line message: 64 usage, 65 bad data
// (a scenario or history that does not read), 69 a server or child process failed, 70 a file
// that had to be written was not (a full disk). Status::ExitCode() (base/status.h) maps a
// Status to these codes.
//
// Thread safety: constants and pure functions.
#pragma once

namespace locklab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitViolated = 1;
inline constexpr int kExitUnknown = 2;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitBadInput = 65;
inline constexpr int kExitInfrastructure = 69;
inline constexpr int kExitIo = 70;

// 64 and up: not a verdict; the command, the lab or its input failed.
inline constexpr bool IsErrorExit(int code) { return code >= kExitUsage; }

// The two rankings differ on purpose, in one place: whether an error outranks a violation.
//
// WorseRunExit: `locklab run` of several trials of one scenario. Worst first: an error
// (64+), then a violation or an unmet expectation (1), then unknown (2), then 0. The run did
// not do what it was asked when a trial's lab or files failed: that is what the caller must
// act on first, and a script reading 1 may take every trial as judged.
inline constexpr int WorseRunExit(int a, int b) {
  auto rank = [](int c) {
    return IsErrorExit(c) ? 3 : c == kExitViolated ? 2 : c == kExitUnknown ? 1 : 0;
  };
  return rank(b) > rank(a) ? b : a;
}

// WorseCheckExit: `locklab check` of several history files, each judged on its own. Worst
// first: a violation (1), then a file that could not be read (65), then unknown (2), then 0.
// A violation found in one file is a fact no other file's state can undo, so an unreadable
// file must not hide it; nor may an unreadable file pass as "not decided" (2).
inline constexpr int WorseCheckExit(int a, int b) {
  auto rank = [](int c) {
    return c == kExitViolated ? 3 : c == kExitBadInput ? 2 : c == kExitUnknown ? 1 : 0;
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace locklab
