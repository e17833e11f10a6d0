// WatchdogLock (`watchdog`): set-nx-px-lua plus a renewal thread, Redisson style.
//
// Acquire is SET key token NX PX ttl. While the lease is held, a Renewer thread inside this
// client process runs an owner-checked renewal every renew_period (default TTL/3): a Lua
// script that PEXPIREs the key to renew_ttl (default TTL) only if it still holds our token.
// A renewal that finds the key gone or someone else's (`fail`), or whose outcome is unknown
// (`info`), is recorded as a `renew` history event through LockConfig::on_event and stops
// the renewals for that lease: like Redisson, the watchdog never re-takes a lost lock, and
// it never tells the application either (the critical section goes on).
// Release stops the renewal thread first (waiting for a renewal in flight), then runs the
// compare-and-delete.
//
// Why it still breaks: the renewal thread shares the process with the application, so a
// stop-the-world pause longer than the TTL freezes both and the key expires (KNOWN-ANSWERS
// "pause > T" = V). What it fixes is a critical section longer than the TTL.
//
// Pause point watchdog-renewal-due: the renewal thread announces it each time it wakes to
// renew, before the renewal's invoke, so a stop armed there lands between the holder's
// renewals: the key can expire, be taken and be given back before the renewal runs (what
// a renewal that re-takes a key it finds gone needs to show).
//
// Thread safety: Acquire/Release/Renew from one thread at a time (Lock contract); the
// renewal thread uses its own connection and calls on_event, pause_point and point_armed
// from that thread. One lease at
// a time per lock object: Acquire stops the renewals of an earlier lease that was never
// released.
#pragma once

#include <memory>

#include "locks/renewer.h"
#include "locks/single_node_locks.h"

namespace locklab::locks {

// The renewal a mutant runs instead of the owner-checked PEXPIRE (locks/mutants.h); the
// reference keeps kOwnerChecked. Not a knob.
enum class RenewScript {
  kOwnerChecked,  // PEXPIRE only if the key holds our token
  kBlind,         // mutant blind-renew: PEXPIRE whoever holds the key
  kResurrect,     // mutant renew-resurrects: owner-checked, but re-SETs a key found gone
};

struct WatchdogOptions {
  Millis renew_period{0};  // 0 = TTL/3
  Millis renew_ttl{0};     // 0 = TTL
  RenewScript renew_script = RenewScript::kOwnerChecked;
};
Status ParseWatchdogOptions(const LockConfig& config, WatchdogOptions* out);

class WatchdogLock : public SingleNodeLock {
 public:
  WatchdogLock(const LockConfig& config, const WatchdogOptions& options);
  ~WatchdogLock() override;
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;
  bool SupportsRenew() const override { return true; }
  // One owner-checked renewal on the caller's connection (no history event: the caller
  // records its own calls).
  LockResult Renew(const Lease& lease) override;

  Millis renew_period() const { return options_.renew_period; }

 private:
  // One renewal on `conn`, recorded through on_event. Returns whether to keep renewing.
  bool RenewAndRecord(RedisConnection& conn, const Lease& lease);
  WatchdogOptions options_;
  RedisConnection renew_conn_;  // used only by the renewal thread
  std::unique_ptr<Renewer> renewer_;
};

extern const char kPointRenewalDue[];  // "watchdog-renewal-due"

// Owner-checked PEXPIRE: 1 when the key held ARGV[1] and now lives ARGV[2] ms, else 0.
extern const char kOwnerCheckedPexpireScript[];
// The mutants' renewals, same KEYS/ARGV and replies as the owner-checked one.
extern const char kBlindPexpireScript[];
extern const char kResurrectingRenewScript[];

}  // namespace locklab::locks
