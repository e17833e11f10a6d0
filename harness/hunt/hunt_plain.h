// The plain pass: the hunt's opening, before any fault. A handful of short trials of the lock
// alone, each a workload where a correct lock stays safe and a broken one shows it at once:
//   - contention: 4 to 6 clients on one key, and again on three keys, holding and thinking
//     up to half a TTL (a check-then-set, a lost compare, a release of someone else's key);
//   - long holds: critical sections of 1.5 to 2 TTLs, with clients that stop at their lease's
//     validity (a lock that claims more validity than its key has) and, where renewal can keep
//     the lock (see PlainPass), with clients that work to the end whatever the lease says (a
//     renewal that never comes, or stops after a few);
//   - work to the validity: holds that run to the lease's last milliseconds, validity
//     honoured, once at each TTL (a validity computed from the wrong clock or the wrong
//     moment, a TTL rounded to whole seconds).
// A lock that fails with no fault dies here, within seconds, and its story says so.
//
// Each trial is short (a turn of every client and a TTL; long holds: two holds and a TTL),
// never more than the space's longest trial; --validity holds for every trial. The draws have
// their own random source: the search's draws after it are the seed's. Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "base/random.h"
#include "harness/hunt/hunt_space.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

enum class PlainWorkload { kContentionOneKey, kContentionKeys, kLongHoldsIgnore, kLongHoldsHonour, kToValidity };

// The plain pass's workloads, in the order they run. `ignore_validity_past_ttl`: include the
// long holds whose clients ignore their lease (kLongHoldsIgnore). Only where renewal can keep
// the lock (the lock renews on request, or a driver's hello says it renews) or against a
// baseline (which decides): a lease lock that never renews fails there by construction, a
// verdict on the client's use of it rather than on the lock.
std::vector<PlainWorkload> PlainPass(const SearchSpace& space, bool ignore_validity_past_ttl);
// One trial of `workload`, no fault, named `name`: kToValidity's `nth` trial in the pass (from
// 0) at the space's nth TTL, any other at a drawn one.
RunOptions DrawPlain(const SearchSpace& space, PlainWorkload workload, size_t nth, Rng& rng, const std::string& name);
// What the workload is, in a few words ("plain contention on one key").
const char* PlainWorkloadName(PlainWorkload workload);

}  // namespace locklab::harness
