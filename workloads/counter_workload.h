// The `counter` workload: the articles' "stock decrement", as an increment.
//
// Loop: acquire a random lock key; at the pause point "after-acquire" the process may stop
// itself (when armed); read the guarded counter from the resource node; hold for `hold`
// (the critical section, renewing the lock every `renew_every` when set; the pause point
// "before-write" sits at its end); write counter+1;
// release; think for a random time in [0, think]. Every lock and resource operation is an
// invoke/complete pair of history events. A read that fails or times out skips the write.
// Lost updates show as acknowledged writes > the final counter value.
// An acquire that ended unknown but names the token the lock may hold (LockResult: a lock
// driver's late `ok`) is recorded `info` with {"error":..,"token":..} and released at once
// (a release invoke/complete pair of the same client).
// When the lease carries a fencing token (fence >= 0) the write goes through the fenced
// resource (workloads/fenced_resource.h): recorded as {"value":n,"fence":k}, and a rejection
// as `fail` with {"error":"stale-fence","fence":k} (what checker/ counts as stale writes).
// A lock driver whose hello says "resource": true owns the guarded resource: the read and the
// write go to it (DriverLock::ReadResource / Work, docs/driver-protocol.md "Your own
// resource") instead of the resource node, recorded as the same events from its answers.
// With honour_validity, the client uses a lease only while MonotonicNow() < acquired_at +
// validity (the lock's own belief; refreshed by each ok renewal): before the read, before the
// write and before each renewal. Past it, it skips what is left of the critical section (no
// write, no more renewals) and releases at once; that release's invoke value says so:
// {"token":..,"abandoned":"validity"} (a value the checker passes over). A lease the lock granted already over (validity <= 0)
// is abandoned before the read. A lease whose lock reports no validity (Millis::max():
// setnx, the SQL locks, pg-advisory) is never abandoned: the rule is read from the lease,
// never from the lock's name.
// Not thread-safe: one workload per client process.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "locks/lock.h"
#include "locks/redis_connection.h"
#include "workloads/event_sink.h"
#include "workloads/lag_meter.h"

namespace locklab::workloads {

struct CounterWorkloadOptions {
  int keys = 1;                      // lock:0..keys-1, counter:0..keys-1
  Millis hold{50};                   // time inside the critical section
  Millis think{20};                  // max think time between cycles
  Millis acquire_timeout{2000};      // deadline handed to Lock::Acquire
  // > 0: while the hold lasts, Lock::Renew every renew_every from the acquire (then from the
  // last renewal), as an application extends a lock it is still working under; recorded as
  // `renew` events of the client. A renewal that is not ok ends that hold's renewals (the
  // hold goes on). Only the hold sleep renews: a slow critical section (the pause points'
  // "slow:MS") is one long step, and a stopped process renews nothing. 0: never (locks
  // that renew on their own thread, or not at all). The client sets ttl/3 for lock drivers
  // whose hello says renew:true.
  Millis renew_every{0};
  // Stop using a lease once its validity has passed (see the top of this file). false: the
  // client ignores validity and finishes every critical section (the articles' naive client).
  bool honour_validity = false;
};

// The workload's pause points (a client stops, slows or dies there when a fault arms one):
// after-acquire (acquire returned ok) and before-write (the counter read, the write not yet
// sent) fall inside the hold; after-release (the release returned) just after it;
// before-acquire and before-release just before those requests are sent to the lock.
inline constexpr const char* kPointBeforeAcquire = "before-acquire";
inline constexpr const char* kPointAfterAcquire = "after-acquire";
inline constexpr const char* kPointBeforeWrite = "before-write";
inline constexpr const char* kPointBeforeRelease = "before-release";
inline constexpr const char* kPointAfterRelease = "after-release";
// The two inside the hold; every point.
const std::vector<std::string>& HoldPausePoints();
const std::vector<std::string>& WorkloadPausePoints();
// Where a window on a client's own links (a lost reply, a cut link) opened by the client
// itself lands on its next lock commands, whatever the lock: its acquire (before-acquire),
// the renewals of the hold it just got (after-acquire), its release (before-release). A
// lock that announces no points (a driver) is reached at its commands through these.
const std::vector<std::string>& CommandPoints();

// With honour_validity: whether `lease` may still be used at `now` (always true for a
// lease without a validity, Millis::max()).
bool LeaseStillValid(const locks::Lease& lease, Nanos now);

std::string LockKey(int i);
std::string CounterKey(int i);

// Runs cycles until *stop becomes true, then releases anything held and returns: a critical
// section under way ends as usual; an acquire granted after the stop is released at once,
// with no critical section, and no think follows. The hold and think sleeps go through `lag`
// (may be null), which measures how late they end.
void RunCounterWorkload(locks::Lock& lock, locks::RedisConnection& resource, EventSink& sink,
                        const locks::PausePoint& pause_point, Rng& rng,
                        const CounterWorkloadOptions& options, const std::atomic<bool>& stop,
                        LagMeter* lag = nullptr);

// The history value of a lease ({"token":..,"validity_ms":..,"fence":..}).
nlohmann::json LeaseValue(const locks::Lease& lease);

}  // namespace locklab::workloads
