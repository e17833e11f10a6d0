#include "locks/single_node_locks.h"

#include <algorithm>

#include "base/random.h"

namespace locklab::locks {

const char kCompareAndDeleteScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end";
const char kPointBetweenGetAndDel[] = "mutant-between-get-and-del";
const char kPointBetweenSetnxAndExpire[] = "mutant-between-setnx-and-expire";

SingleNodeLock::SingleNodeLock(const LockConfig& config, AcquireStyle acquire,
                               ReleaseStyle release)
    : config_(config),
      acquire_(acquire),
      release_(release),
      conn_(config.nodes.at(0), config.connect_timeout, config.command_timeout) {}

Outcome SingleNodeLock::TryOnce(const std::string& key, const std::string& token,
                                std::string* detail) {
  const std::string ttl = std::to_string(config_.ttl.count());
  Reply r;
  switch (acquire_) {
    case AcquireStyle::kSetnx:
    case AcquireStyle::kSetnxThenExpire:
      r = conn_.Command({"SETNX", key, token});
      break;
    case AcquireStyle::kSetNxPx:
      r = mutation_ == SingleNodeMutation::kTtlWholeSeconds
              ? conn_.Command({"SET", key, token, "NX", "EX",
                               std::to_string(std::max<int64_t>(1, config_.ttl.count() / 1000))})
              : conn_.Command({"SET", key, token, "NX", "PX", ttl});
      break;
  }
  if (r.outcome != Outcome::kOk) {
    *detail = r.transport_error;
    if (mutation_ == SingleNodeMutation::kUnknownAsOk && r.outcome == Outcome::kUnknown) {
      return Outcome::kOk;
    }
    return r.outcome;
  }
  if (r.is_error) {
    *detail = r.str;
    if (mutation_ == SingleNodeMutation::kErrorAsOk) return Outcome::kOk;
    return Outcome::kFail;
  }
  bool taken = acquire_ == AcquireStyle::kSetNxPx ? (!r.is_nil && r.str == "OK")
                                                   : (r.is_integer && r.integer == 1);
  if (!taken) {
    *detail = "key held";
    return Outcome::kFail;
  }
  if (acquire_ == AcquireStyle::kSetnxThenExpire) {
    // The second command is where the classic bug lives: a crash (or an error) here leaves
    // a key that never expires. We report the lock as taken whatever EXPIRE says, as the
    // naive code does.
    if (mutation_ == SingleNodeMutation::kSetnxPexpirePoint && config_.pause_point) {
      config_.pause_point(kPointBetweenSetnxAndExpire);
    }
    Reply e = conn_.Command({"PEXPIRE", key, ttl});
    if (e.outcome != Outcome::kOk) *detail = "PEXPIRE: " + e.transport_error;
  }
  return Outcome::kOk;
}

Outcome SingleNodeLock::Attempt(const std::string& key, const std::string& token, Lease* lease,
                                std::string* detail) {
  Outcome o = TryOnce(key, token, detail);
  if (o == Outcome::kOk) {
    lease->validity = acquire_ == AcquireStyle::kSetnx ? Millis::max() : config_.ttl;
  }
  return o;
}

LockResult SingleNodeLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result;
  const std::string token = RandomToken();
  bool any_unknown = false;
  for (;;) {
    std::string detail;
    Lease lease;
    const Nanos sent = MonotonicNow();
    Outcome o = Attempt(key, token, &lease, &detail);
    if (o == Outcome::kOk) {
      result.outcome = Outcome::kOk;
      result.lease = lease;
      result.lease.key = key;
      result.lease.token = token;
      result.lease.acquired_at = MonotonicNow();
      if (lease.validity != Millis::max()) {
        // The key's TTL runs from when the server ran the SET, which was after `sent`: the
        // validity an attempt claims counts from `sent` (less the round trips), less 1 ms
        // because Redis keeps expiry times in whole milliseconds (the key may go up to 1 ms
        // early). Counted from the reply instead, a client that honours its validity went
        // on using the lock for the round trip after its key had expired: the reference
        // lock itself then showed sub-millisecond overlaps in hunt's baseline runs. Here,
        // not in Attempt, so that every attempt (fenced's SET then INCR too) gets it.
        Nanos left = lease.validity - (result.lease.acquired_at - sent) - Millis(1);
        result.lease.validity = std::max(Millis(0), std::chrono::floor<Millis>(left));
      }
      result.detail = detail;
      return result;
    }
    if (o == Outcome::kUnknown) any_unknown = true;
    result.detail = detail;
    if (MonotonicNow() + config_.retry_delay >= deadline) break;
    SleepFor(config_.retry_delay);
  }
  // An earlier attempt may have set our token (its reply was lost); a careful caller would
  // check, but the outcome is honestly unknown.
  result.outcome = any_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

LockResult SingleNodeLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (mutation_ == SingleNodeMutation::kGetCompareDel) return ReleaseGetCompareDel(lease);
  Reply r = release_ == ReleaseStyle::kDel
                ? conn_.Command({"DEL", lease.key})
                : conn_.Command({"EVAL", kCompareAndDeleteScript, "1", lease.key, lease.token});
  if (r.outcome != Outcome::kOk) {
    result.outcome = r.outcome;
    result.detail = r.transport_error;
    return result;
  }
  if (r.is_error) {
    result.outcome = Outcome::kFail;
    result.detail = r.str;
    return result;
  }
  if (mutation_ == SingleNodeMutation::kReleaseIgnoresReply) {
    result.outcome = Outcome::kOk;
    return result;
  }
  // DEL: 1 = a key was deleted (whoever owned it); Lua: 1 = it was ours and is gone.
  result.outcome = (r.is_integer && r.integer == 1) ? Outcome::kOk : Outcome::kFail;
  result.detail = result.outcome == Outcome::kOk ? "" : "key was not ours or already gone";
  return result;
}

// The mutant get-compare-del: the owner check and the delete are two commands, so the key
// can expire and be taken by the next holder between them, and the DEL removes that
// holder's lock.
LockResult SingleNodeLock::ReleaseGetCompareDel(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  Reply g = conn_.Command({"GET", lease.key});
  if (g.outcome != Outcome::kOk || g.is_error) {
    result.outcome = g.outcome == Outcome::kOk ? Outcome::kFail : g.outcome;
    result.detail = g.outcome == Outcome::kOk ? g.str : g.transport_error;
    return result;
  }
  if (g.is_nil || g.str != lease.token) {
    result.outcome = Outcome::kFail;
    result.detail = "key was not ours or already gone";
    return result;
  }
  if (config_.pause_point) config_.pause_point(kPointBetweenGetAndDel);
  Reply d = conn_.Command({"DEL", lease.key});
  if (d.outcome != Outcome::kOk) {
    result.outcome = d.outcome;
    result.detail = d.transport_error;
    return result;
  }
  result.outcome = (d.is_integer && d.integer == 1) ? Outcome::kOk : Outcome::kFail;
  if (result.outcome != Outcome::kOk) result.detail = d.is_error ? d.str : "key already gone";
  return result;
}

}  // namespace locklab::locks
