// The faults of a scenario file: [[faults]] tables (each its own schedule, up to kMaxFaults)
// or a single [fault] table, read into RunOptions::faults with their origins (where each
// table and its targets, nodes and first_at_ms stand, for ValidateRunOptions' messages).
// Part of the scenario reader (scenario_reader.cc); errors as there: Status::BadInput naming
// file, line and field. Thread-safe (no shared state).
#pragma once

#include <string>

#include <toml++/toml.h>

#include "base/status.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

Status ReadFaultTables(const std::string& path, const toml::table& root, RunOptions* o);

}  // namespace locklab::harness
