// ArgvReader: walks a command's words, the flags ("--ttl 5" or "--ttl=5") with their values
// and the positional words between them, for every locklab command and tool.
//
// Errors are one line, Status::Usage (exit 64), worded the same for every command:
//   "run: flag --ttl needs a value"
//   "run: flag --json takes no value"      ("--json=x")
//   "run: unknown flag --bogus"            ("run: unexpected argument 'x'" for a word)
//   "run: flag --clients: expected an integer in 1..64, got 'soon'"
// The caller decides what each flag means; a flag given twice is seen twice, so a list flag
// appends and any other flag keeps its last value. A word is a flag when it starts with '-';
// after "--" every word is positional. The value of "--flag value" is the next word whatever
// it looks like ("--param x=-1").
//
// Built with the command's CommandSpec (base/cli.h), the reader knows only the flags of that
// table: Is() is false for any other, so the caller's last branch (Unknown()) refuses it and
// no parser can accept a flag its --help does not list. Value flags read their value with
// Value(), Int() or Duration() (base/numbers.h ParseDuration: "500ms", "6s", "2m", "1h", a bare
// number in ms); a refused duration reads "run: flag --duration: 6 means 6 ms (a bare number
// is milliseconds), below the minimum 100ms; write 6s?".
//
// A cursor over one argument list: not thread-safe, use from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/cli.h"
#include "base/status.h"

namespace locklab {

class ArgvReader {
 public:
  // `command` starts every message ("run", "cluster up").
  ArgvReader(std::string command, std::vector<std::string> args)
      : command_(std::move(command)), args_(std::move(args)) {}
  // A command with its flag table: `spec` outlives the reader. `command` overrides the
  // message prefix ("cluster up" for the cluster table); empty: spec.name.
  ArgvReader(const CommandSpec& spec, std::vector<std::string> args, std::string command = "")
      : command_(command.empty() ? spec.name : std::move(command)),
        args_(std::move(args)),
        spec_(&spec) {}

  // Moves to the next word; false when there is none.
  bool Next();
  // The current word is a flag: flag() is its name ("--ttl" for "--ttl=5").
  bool AtFlag() const { return at_flag_; }
  // The current word is `flag` (or, with a spec, another spelling of the same row); with a
  // spec, false for a flag the table does not list.
  bool Is(std::string_view flag) const;
  // The current word is -h or --help (the caller prints its help).
  bool AtHelp() const { return at_flag_ && (flag_ == "--help" || flag_ == "-h"); }
  const std::string& flag() const { return flag_; }
  // The current word as written (a positional word, or the flag with any "=value").
  const std::string& word() const { return args_[index_]; }
  // Words not read yet, after the current one.
  std::vector<std::string> Rest() const;

  // The current flag's value: after its '=', else the next word (which it consumes).
  Status Value(std::string* out);
  // The value as an integer in [lo, hi] (base/numbers.h).
  Status Int(int64_t lo, int64_t hi, int64_t* out);
  // The value as a duration in [lo, hi] (base/numbers.h ParseDuration).
  Status Duration(std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                  std::chrono::milliseconds* out);
  // A flag that takes no value: an error for "--json=x", ok otherwise.
  Status NoValue() const;

  // "COMMAND: unknown flag --x", or for a positional word "COMMAND: unexpected argument 'x'".
  Status Unknown() const;
  // "COMMAND: flag --x: WHAT", for a value the caller refuses.
  Status Error(const std::string& what) const;

 private:
  std::string command_;
  std::vector<std::string> args_;
  size_t index_ = 0;
  size_t next_ = 0;
  bool at_flag_ = false;
  bool after_dashes_ = false;  // "--" seen: the rest is positional
  std::string flag_;
  bool inline_value_ = false;  // "--flag=value"
  std::string value_;
  const CommandSpec* spec_ = nullptr;
};

}  // namespace locklab
