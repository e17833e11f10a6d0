// The built-in faults, one descriptor each (faults/fault_descriptor.h), one file each in
// this folder. Each file registers its descriptor with a BuiltInFault at namespace scope,
// with the place it takes in the order `locklab list` shows (lower first), so a new built-in
// fault is its file here and its tests: the build picks up every file of this folder, and
// links the whole folder in (a registration nothing else refers to is still there).
//
// Registration runs during static initialization; BuiltInFaultDescriptors is read only once
// main runs (the catalog is built on first use), so every file has registered by then.
#pragma once

#include "faults/fault_descriptor.h"

namespace locklab::faults {

// Shared by the faults on client links (reply-loss, partition; client_links.cc).
// The help of their `point` param: a window the client opens at one of its lock commands.
extern const char* const kCommandPointParamHelp;
// A window armed at one of a client's lock commands: at FaultDrawContext::arm_at when set
// (the first pass), else, with probability `odds`, at one of FaultDrawContext::command_points
// (by the weights of "id@point"). Armed, it is one window of 0.3 to 1.5 TTLs on a client
// that holds the lock when it is armed, so its next acquire meets a busy key. Returns
// whether it armed `f`; else `f` is as it was.
bool DrawCommandArm(const FaultDrawContext& c, Rng& rng, FaultOptions* f, double odds);
// The workload's pause points (workloads/: before-acquire, after-acquire, before-write,
// before-release, after-release), and those a window on client links opens at (the points
// before one of the client's lock commands: before-acquire, after-acquire, before-release).
std::vector<std::string> WorkloadPoints();
std::vector<std::string> CommandPoints();
// Whom a window on client links hits, in words: "the first client to reach before-release",
// "a client holding the lock", "a client".
std::string CutClientText(const FaultOptions& f);

}  // namespace locklab::faults
