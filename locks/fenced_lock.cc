#include "locks/fenced_lock.h"

#include <optional>

#include "base/numbers.h"
#include "locks/knobs.h"

namespace locklab::locks {
namespace {

// Returns the new fencing token (>= 1) when the key was free, 0 when it is held.
const char kSetAndIncrScript[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return redis.call('incr', KEYS[2]) else return 0 end";

}  // namespace

const char kPointBetweenFenceGetAndSet[] = "mutant-between-fence-get-and-set";

Status ParseFencedOptions(const LockConfig& config, FencedOptions* out) {
  FencedOptions o;
  KnobReader k(config.algorithm, config.knobs);
  k.Bool("atomic_fence", &o.atomic_fence);
  if (!k.status().ok()) return k.status();
  *out = o;
  return Status::Ok();
}

std::string FenceKey(const std::string& lock_key) { return "fence:" + lock_key; }

FencedLock::FencedLock(const LockConfig& config, const FencedOptions& options)
    : SingleNodeLock(config, AcquireStyle::kSetNxPx, ReleaseStyle::kCompareAndDelete),
      options_(options) {}

Outcome FencedLock::TryFenced(const std::string& key, const std::string& token, int64_t* fence,
                              std::string* detail) {
  const std::string ttl = std::to_string(config_.ttl.count());
  if (options_.fence_read_then_set) {
    Outcome o = TryOnce(key, token, detail);
    if (o != Outcome::kOk) return o;
    Reply get = conn_.Command({"GET", FenceKey(key)});
    std::optional<int64_t> last = get.is_nil ? std::optional<int64_t>(0) : ParseInt(get.str);
    if (get.outcome != Outcome::kOk || get.is_error || !last) {
      *detail = "GET fence: " + (get.outcome == Outcome::kOk ? get.str : get.transport_error);
      return Outcome::kUnknown;
    }
    if (config_.pause_point) config_.pause_point(kPointBetweenFenceGetAndSet);
    Reply set = conn_.Command({"SET", FenceKey(key), std::to_string(*last + 1)});
    if (set.outcome != Outcome::kOk || set.is_error) {
      *detail = "SET fence: " + (set.outcome == Outcome::kOk ? set.str : set.transport_error);
      return Outcome::kUnknown;
    }
    *fence = *last + 1;
    return Outcome::kOk;
  }
  if (!options_.atomic_fence) {
    Outcome o = TryOnce(key, token, detail);
    if (o != Outcome::kOk) return o;
    Reply incr = conn_.Command({"INCR", FenceKey(key)});
    if (incr.outcome != Outcome::kOk || !incr.is_integer) {
      // We hold the key but have no token: the caller cannot write safely. Unknown, so the
      // history does not start a hold the workload would then act on.
      *detail = "INCR: " + (incr.outcome == Outcome::kOk ? incr.str : incr.transport_error);
      return Outcome::kUnknown;
    }
    *fence = incr.integer;
    return Outcome::kOk;
  }
  Reply r = conn_.Command({"EVAL", kSetAndIncrScript, "2", key, FenceKey(key), token, ttl});
  if (r.outcome != Outcome::kOk) {
    *detail = r.transport_error;
    return r.outcome;
  }
  if (r.is_error || !r.is_integer) {
    *detail = r.is_error ? r.str : "unexpected reply";
    return Outcome::kFail;
  }
  if (r.integer == 0) {
    *detail = "key held";
    return Outcome::kFail;
  }
  *fence = r.integer;
  return Outcome::kOk;
}

Outcome FencedLock::Attempt(const std::string& key, const std::string& token, Lease* lease,
                            std::string* detail) {
  int64_t fence = -1;
  Outcome o = TryFenced(key, token, &fence, detail);
  if (o == Outcome::kOk) {
    lease->validity = config_.ttl;
    lease->fence = fence;
  }
  return o;
}

}  // namespace locklab::locks
