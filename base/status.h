// Status: the result of an operation that crosses a module boundary.
//
// A Status is either ok or carries a code and a one-line message meant for a person
// ("scenario.toml:12: field 'ttl_ms': expected an integer"). Usage errors map to the
// exit codes of docs/design.md 3.5 (64+). Status is a value type; it is thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace locklab {

class Status {
 public:
  enum class Code { kOk = 0, kUsage, kBadInput, kInfrastructure, kIo, kInterrupted };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status Usage(std::string msg) { return Status(Code::kUsage, std::move(msg)); }
  static Status BadInput(std::string msg) { return Status(Code::kBadInput, std::move(msg)); }
  // The one shape of a bad field: "WHERE: field 'FIELD': WHAT" (WHERE is "file:line").
  static Status BadField(const std::string& where, const std::string& field, const std::string& what) {
    return BadInput(where + ": field '" + field + "': " + what);
  }
  static Status Infrastructure(std::string msg) {
    return Status(Code::kInfrastructure, std::move(msg));
  }
  // A file the lab must keep (history, results, scenario) could not be written in full
  // (disk full, read-only, I/O error): the message names the file and the errno text.
  static Status Io(std::string msg) { return Status(Code::kIo, std::move(msg)); }
  static Status Interrupted(std::string msg) { return Status(Code::kInterrupted, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Process exit code for this status: 0 when ok, 64 usage, 65 bad input (data), 69
  // infrastructure (a server or child process failed), 70 I/O (a file could not be
  // written), 2 interrupted (incomplete).
  int ExitCode() const;
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace locklab
