// The fields of a trial that are plain numbers or strings, as one table: where each stands
// in a scenario file, the `locklab run` flag that sets it, its range, and where it
// goes in RunOptions. The flag reader (run_flags.cc), the TOML reader (scenario_reader.cc)
// and `locklab run --help` (cli_spec.cc) all walk this table, so a range is written once,
// a refused value is worded once: "expected an integer in 1..64, got 'soon'" after the flag
// ("run: flag --clients: ") or the file, line and field ("s.toml:3: field 'workload.clients':
// "), and no flag goes unlisted. A time's flag takes a duration ("--ttl 2s"; a bare number
// is ms, the unit of its _ms key), refused in a duration's words.
// The same table carries a trial's options to its client processes: the fields marked
// `client` travel as `locklab client --SECTION.KEY VALUE` (ClientFieldArgs, read back by
// FindClientFlag and ParseFieldText), so a run option a client needs is one row here.
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
#include <vector>

#include "base/status.h"
#include "harness/scenario/run_options.h"

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
  // The flag's --help line (harness/scenario/cli_spec.cc adds the unit and the default) and, for a
  // string, the word shown for its value.
  std::string_view help;
  std::string_view value_name;
  // Strings: the value in `o` (for the client's argv).
  std::string (*get_string)(const RunOptions&) = nullptr;
  // Whether each client process needs it (the lock's and the workload's settings): passed to
  // `locklab client` by ClientFieldArgs. Only kTop, kLock and kWorkload fields can be.
  bool client = false;

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

// "lock.ttl_ms": the field's section and key as a scenario file spells it ("seed" at the top).
std::string FieldPath(const RunField& field);

// Sets `field` from text as a flag gives it: a time as a duration ("6s"; a bare number is ms),
// any other integer as one, both within the field's range, a string as it is. Errors are
// the value's words alone ("expected an integer in 1..64, got 'soon'"): the caller says
// which flag. `fault` takes a kFault field's value (may be null for the others).
Status ParseFieldText(const RunField& field, const std::string& text, RunOptions* o,
                      faults::FaultOptions* fault);
// The field's value in `o` as ParseFieldText reads it back (times as bare ms).
std::string FormatFieldText(const RunField& field, const RunOptions& o);

// The client's share of `o`: "--lock.ttl_ms", "1000", ... for every field marked `client`.
std::vector<std::string> ClientFieldArgs(const RunOptions& o);
// The field a client flag ("--lock.ttl_ms") names; nullptr for any other flag.
const RunField* FindClientFlag(std::string_view flag);

// Messages echo what the user wrote (a lock id, a fault param, a URL), and a TOML string
// may hold a newline: escaped, so that every error stays one line.
std::string OneLine(const std::string& s);
Status OneLine(const Status& s);

}  // namespace locklab::harness
