// TableReader: reads the typed fields of one scenario-file table (toml++), for the scenario
// reader (scenario_reader.cc, scenario_faults.cc). Every refusal is Status::BadInput (exit
// 65), one line naming the file, the value's line and the field with its table
// ("s.toml:3: field 'lock.ttl_ms': expected an integer in 1..3600000, got 'soon'"). A key
// the reader was not asked about is an "unknown field" at RejectUnknown, so a misspelt key
// is never silently ignored.
//
// Holds references to the file name and table it reads: both must outlive it. Not
// thread-safe; one reader per table, on one thread.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/status.h"
#include "harness/scenario/run_fields.h"

namespace locklab::harness {

class TableReader {
 public:
  // `prefix` names the table in messages: "lock.", "faults[2].", "" for the top level.
  TableReader(const std::string& file, const toml::table& table, std::string prefix)
      : file_(file), table_(table), prefix_(std::move(prefix)) {}

  // A field of the table (run_fields.h), under its key or its alias, into `o` or `fault`.
  // Absent: nothing changes.
  Status Field(const RunField& field, RunOptions* o, faults::FaultOptions* fault);
  Status Int(std::string_view key, int64_t lo, int64_t hi, int64_t* out);
  Status Str(std::string_view key, std::string* out);
  Status StrList(std::string_view key, std::vector<std::string>* out);
  Status IntList(std::string_view key, std::vector<int>* out);
  // A key read by other code (a sub-table), so RejectUnknown lets it be.
  void Allow(std::string_view key) { seen_.emplace_back(key); }
  Status RejectUnknown();
  Status Error(const toml::node& n, std::string_view key, const std::string& what) const;

 private:
  const std::string& file_;
  const toml::table& table_;
  std::string prefix_;
  std::vector<std::string> seen_;
};

// "FILE:LINE" of a node.
std::string Where(const std::string& file, const toml::node& n);
// root[key] as a table, nullptr when absent; an error when it is something else.
Status SubTable(const std::string& file, const toml::table& root, const char* key,
                const toml::table** out);

}  // namespace locklab::harness
