// The fields of a trial that are plain numbers or strings, as one table: where each stands
// in a scenario file, the `locklab run` flag that sets it, its range, and where it
// goes in RunOptions. The flag reader (run_flags.cc) and the TOML reader
// (scenario_reader.cc) both walk this table, so a range is written once and a refused value
// is worded once: "expected an integer in 1..3600000, got 'soon'" after the flag
// ("run: flag --ttl: ") or the file, line and field ("s.toml:3: field 'lock.ttl_ms': ").
// Defaults are RunOptions' and FaultOptions' member initialisers (run_options.h, fault.h).
// Fields with more to them than a range (lock id, knobs, endpoints, targets, fault params)
// are read by each reader's own code.
//
// The table is constant data; everything here is thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "harness/run_options.h"

namespace locklab::harness {

// The scenario file's table a field belongs to. kFault: each [[faults]] table (or the single
// [fault]); its flags apply to the most recent --fault.
enum class FieldSection { kTop, kLock, kWorkload, kTopology, kFault };

struct RunField {
  enum class Type { kInteger, kString };
  FieldSection section;
  std::string_view key;    // TOML key within its section: "ttl_ms"
  std::string_view alias;  // a second TOML key for the same value ("pause_ms"), or empty
  // `locklab run` spellings, empty when the field is only in files. The seconds flag takes
  // the value in seconds (--duration 10 is duration_ms = 10000).
  std::string_view flag;
  std::string_view flag_alias;
  std::string_view seconds_flag;
  Type type;
  int64_t lo, hi;          // integers: the range, in the unit the key names (_ms: ms)
  // Where the value goes: the trial, or for kFault the fault being read.
  void (*set_integer)(RunOptions&, faults::FaultOptions&, int64_t);
  void (*set_string)(RunOptions&, faults::FaultOptions&, const std::string&);
};

// Every field, in the order the files are read and written.
std::span<const RunField> RunFields();
// The field of `section` with TOML key `key`; nullptr when there is none.
const RunField* FindField(FieldSection section, std::string_view key);
// The field a flag sets (any spelling); *in_seconds tells whether it was the seconds flag.
const RunField* FindFlag(std::string_view flag, bool* in_seconds);

// Messages echo what the user wrote (a lock id, a fault param, a URL), and a TOML string
// may hold a newline: escaped, so that every error stays one line.
std::string OneLine(const std::string& s);
Status OneLine(const Status& s);

}  // namespace locklab::harness
