// Linearizability internals, part 2: from events to operations, one Partition per key.
//
// BuildPartitions() keeps the events whose `f` belongs to the model (nemesis events never),
// orders them by time (ties by index), pairs each invocation with its process's next
// completion and turns the pair into an Op (lin_model.h): `ok` happened, `fail` did not (it
// is dropped, except a failed cas under Porcupine's reading), `info` or no completion is
// unknown. A process is sequential: a second invocation before the first one completes, a
// completion with nothing pending or one of another `f` is malformed input, a BadInput status
// naming `name:line` and the field. Lock tokens come from the acquire's ok value, else its
// input, else "p<process>"; a release without a token uses its process's last acquired one.
// Internal to checker/. Thread safety: pure function of its arguments.
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "checker/history.h"
#include "checker/lin_model.h"
#include "checker/linearizability.h"

namespace locklab::checker::lin {

// `name` prefixes error positions (a file name; empty: line numbers only). The Ops point
// into `h`, which must outlive `partitions`.
Status BuildPartitions(const History& h, Model model, const LinearizabilityOptions& options,
                       const std::string& name, std::map<std::string, Partition>* partitions);

}  // namespace locklab::checker::lin
