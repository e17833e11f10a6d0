// The fields of a trial that are plain numbers or strings, as one table: where each stands
// in a scenario file, the `locklab run` flag that sets it, its range, and where it
// goes in RunOptions. The flag reader (run_flags.cc), the TOML reader (scenario_reader.cc)
// and `locklab run --help` (cli_spec.cc) all walk this table, so a range is written once,
// a refused value is worded once: "expected an integer in 1..64, got 'soon'" after the flag
// ("run: flag --clients: ") or the file, line and field ("s.toml:3: field 'workload.clients':
// "), and no flag goes unlisted. A time's flag takes a duration ("--ttl 2s"; a bare number
// is ms, the unit of its _ms key), refused in a duration's words.
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
#include "scenario/run_options.h"

namespace locklab::harness {

// The scenario file's table a field belongs to. kFault: each [[faults]] table (or the single
// [fault]); its flags apply to the most recent --fault.
enum class FieldSection { kTop, kLock, kWorkload, kTopology, kFault };

struct RunField {
  enum class Type { kInteger, kString };
  FieldSection section;
  std::string_view key;    // TOML key within its section: "ttl_ms"
  std::string_view alias;  // a second TOML key for the same value ("pause_ms"), or empty
  // `locklab run` spellings, empty when the field is only in files.
  std::string_view flag;
  std::string_view flag_alias;
  Type type;
  int64_t lo, hi;          // integers: the range, in the unit the key names (_ms: ms)
  // Where the value goes: the trial, or for kFault the fault being read.
  void (*set_integer)(RunOptions&, faults::FaultOptions&, int64_t);
  void (*set_string)(RunOptions&, faults::FaultOptions&, const std::string&);
  // Integers: the value in a default RunOptions / FaultOptions, for the flag's help.
  int64_t (*get_integer)(const RunOptions&, const faults::FaultOptions&);
  // The flag's --help line (scenario/cli_spec.cc adds the unit and the default) and, for a
  // string, the word shown for its value.
  std::string_view help;
  std::string_view value_name;

  // A time (its key ends in _ms): its flag takes a duration, "500ms", "6s", "2m", "1h", a
  // bare number in ms (base/numbers.h ParseDuration), within [lo, hi] ms.
  bool IsDuration() const { return type == Type::kInteger && key.ends_with("_ms"); }
};

// Every field, in the order the files are read and written.
std::span<const RunField> RunFields();
// The field of `section` with TOML key `key`; nullptr when there is none.
const RunField* FindField(FieldSection section, std::string_view key);
// The field a flag sets (either spelling); nullptr when there is none.
const RunField* FindFlag(std::string_view flag);

// Messages echo what the user wrote (a lock id, a fault param, a URL), and a TOML string
// may hold a newline: escaped, so that every error stays one line.
std::string OneLine(const std::string& s);
Status OneLine(const Status& s);

}  // namespace locklab::harness
