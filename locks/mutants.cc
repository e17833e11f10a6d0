#include "locks/mutants.h"

#include "locks/fenced_lock.h"
#include "locks/redlock.h"
#include "locks/single_node_locks.h"
#include "locks/watchdog_lock.h"

namespace locklab::locks {
namespace {

const char kPrefix[] = "mutant:";

// One row of the table: the mutant's name, its reference lock, the one change (the
// LockInfo description), the pause point it announces besides the reference's (if any)
// and that point's stand-in on the reference (LockInfo::stand_in_points).
struct MutantSpec {
  const char* name;
  const char* reference;
  const char* change;
  std::vector<std::string> points;
  const char* stand_in = "";
};

const std::vector<MutantSpec>& Specs() {
  static const std::vector<MutantSpec> kSpecs = {
      {"get-compare-del", "set-nx-px-lua",
       "release is GET, compare in the client, then DEL (two commands, not one Lua script): "
       "a key that expires and is taken between them loses the next holder's lock. Pause "
       "point mutant-between-get-and-del sits between the two",
       {kPointBetweenGetAndDel}, "after-release"},
      {"plain-del", "set-nx-px-lua",
       "release is a plain DEL with no owner check: a late release deletes the next holder's "
       "lock",
       {}},
      {"setnx-then-pexpire", "set-nx-px-lua",
       "acquire is SETNX then PEXPIRE as two commands: a client that stops between them leaves "
       "a key with no expiry. Pause point mutant-between-setnx-and-expire sits between the two",
       {kPointBetweenSetnxAndExpire}, "after-acquire"},
      {"unknown-as-ok", "set-nx-px-lua",
       "an unknown SET outcome (timeout, dropped connection) is taken as acquired", {}},
      {"error-as-ok", "set-nx-px-lua",
       "an error reply to SET (OOM, READONLY, LOADING, ...) is taken as acquired", {}},
      {"ttl-whole-seconds", "set-nx-px-lua",
       "the TTL is sent as whole seconds rounded down (SET ... EX, min 1 s) while the lease "
       "still claims the configured TTL: the key expires before the holder's lease does",
       {}},
      {"release-ignores-reply", "set-nx-px-lua",
       "release returns ok whenever a reply arrived, also when compare-and-delete found the "
       "key gone or someone else's (the caller believes it released a lock it had lost)",
       {}},
      {"blind-renew", "watchdog",
       "the renewal is a plain PEXPIRE with no owner check: it extends whoever holds the key, "
       "so a holder that lost its lock keeps renewing (and believing in) the next holder's key",
       {}},
      {"renew-resurrects", "watchdog",
       "the renewal re-SETs the key (SET key token PX ttl) when it finds it gone: a holder "
       "whose key expired silently takes it back, as if it had held it all along",
       {}},
      {"quorum-off-by-one", "redlock",
       "quorum N/2 instead of N/2+1: with 5 nodes two clients can each lock 2 nodes and both "
       "hold the lock",
       {}},
      {"no-drift", "redlock",
       "validity = TTL - elapsed, without the clock drift allowance (TTL*drift_factor + "
       "drift_constant): the lease outlives the key on a node whose clock runs fast",
       {}},
      {"wall-clock-elapsed", "redlock",
       "elapsed time is measured on the wall clock (clock=wall): a wall clock stepped back "
       "during an acquire makes validity exceed what is left of the TTL",
       {}},
      {"no-validity-recheck", "redlock",
       "validity is computed from the clock read right after sending the SETs, before reading "
       "the replies (recheck_validity=false): a pause while the replies are in flight is not "
       "counted and an expired lock is returned",
       {}},
      {"fence-read-then-set", "fenced",
       "the fencing token is drawn as GET fence:<key>, then SET fence:<key> value+1 (two "
       "commands, not INCR): two holders can draw the same token and the resource accepts "
       "both. Pause point mutant-between-fence-get-and-set sits between the two",
       {kPointBetweenFenceGetAndSet}, "after-acquire"},
  };
  return kSpecs;
}

const MutantSpec* FindSpec(const std::string& id) {
  if (!IsMutantId(id)) return nullptr;
  const std::string name = id.substr(sizeof(kPrefix) - 1);
  for (const auto& s : Specs()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// The reference's LockInfo with the mutant's id, description, mutant_of and extra points.
LockInfo InfoOf(const MutantSpec& spec) {
  const LockInfo* ref = FindLock(spec.reference);
  LockInfo info = ref != nullptr ? *ref : LockInfo{};
  info.id = std::string(kPrefix) + spec.name;
  info.description = std::string("mutant of ") + spec.reference + ": " + spec.change;
  info.mutant_of = spec.reference;
  info.points.insert(info.points.end(), spec.points.begin(), spec.points.end());
  for (const auto& p : spec.points) info.stand_in_points[p] = spec.stand_in;
  return info;
}

std::unique_ptr<Lock> SingleNode(const LockConfig& config, AcquireStyle acquire,
                                 ReleaseStyle release, SingleNodeMutation mutation) {
  auto lock = std::make_unique<SingleNodeLock>(config, acquire, release);
  lock->set_mutation(mutation);
  return lock;
}

std::unique_ptr<Lock> SetNxPxLua(const LockConfig& config, SingleNodeMutation mutation) {
  return SingleNode(config, AcquireStyle::kSetNxPx, ReleaseStyle::kCompareAndDelete, mutation);
}

}  // namespace

bool IsMutantId(const std::string& id) { return id.rfind(kPrefix, 0) == 0; }

const std::vector<LockInfo>& ListMutants() {
  static const std::vector<LockInfo> kMutants = [] {
    std::vector<LockInfo> out;
    for (const auto& s : Specs()) out.push_back(InfoOf(s));
    return out;
  }();
  return kMutants;
}

const LockInfo* FindMutant(const std::string& id) {
  if (!IsMutantId(id)) return nullptr;
  for (const auto& m : ListMutants()) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

Status MakeMutant(const LockConfig& config, std::unique_ptr<Lock>* out) {
  out->reset();
  const MutantSpec* spec = FindSpec(config.algorithm);
  if (spec == nullptr) {
    return Status::Usage("lock '" + config.algorithm + "': unknown mutant (see `locklab list`)");
  }
  const std::string name = spec->name;
  const std::string ref = spec->reference;
  if (ref == "set-nx-px-lua") {
    if (name == "get-compare-del") {
      *out = SetNxPxLua(config, SingleNodeMutation::kGetCompareDel);
    } else if (name == "plain-del") {
      *out = SingleNode(config, AcquireStyle::kSetNxPx, ReleaseStyle::kDel,
                        SingleNodeMutation::kNone);
    } else if (name == "setnx-then-pexpire") {
      *out = SingleNode(config, AcquireStyle::kSetnxThenExpire, ReleaseStyle::kCompareAndDelete,
                        SingleNodeMutation::kSetnxPexpirePoint);
    } else if (name == "unknown-as-ok") {
      *out = SetNxPxLua(config, SingleNodeMutation::kUnknownAsOk);
    } else if (name == "error-as-ok") {
      *out = SetNxPxLua(config, SingleNodeMutation::kErrorAsOk);
    } else if (name == "ttl-whole-seconds") {
      *out = SetNxPxLua(config, SingleNodeMutation::kTtlWholeSeconds);
    } else if (name == "release-ignores-reply") {
      *out = SetNxPxLua(config, SingleNodeMutation::kReleaseIgnoresReply);
    }
  } else if (ref == "watchdog") {
    WatchdogOptions o;
    Status s = ParseWatchdogOptions(config, &o);
    if (!s.ok()) return s;
    o.renew_script = name == "blind-renew" ? RenewScript::kBlind : RenewScript::kResurrect;
    *out = std::make_unique<WatchdogLock>(config, o);
  } else if (ref == "redlock") {
    RedlockOptions o;
    Status s = ParseRedlockOptions(config, &o);
    if (!s.ok()) return s;
    // Each overrides what a knob of the same name may have asked: the mutant IS that change.
    if (name == "quorum-off-by-one") o.quorum_off_by_one = true;
    if (name == "no-drift") {
      o.drift_factor = 0;
      o.drift_constant = Millis(0);
    }
    if (name == "wall-clock-elapsed") o.clock_kind = LockClockKind::kWall;
    if (name == "no-validity-recheck") o.recheck_validity = false;
    *out = std::make_unique<RedlockLock>(config, o);
  } else if (ref == "fenced") {
    FencedOptions o;
    Status s = ParseFencedOptions(config, &o);
    if (!s.ok()) return s;
    o.fence_read_then_set = true;
    *out = std::make_unique<FencedLock>(config, o);
  }
  if (*out == nullptr) return Status::Usage("lock '" + config.algorithm + "': listed but not built");
  return Status::Ok();
}

}  // namespace locklab::locks
