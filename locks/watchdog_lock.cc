#include "locks/watchdog_lock.h"

#include "locks/knobs.h"

namespace locklab::locks {

const char kPointRenewalDue[] = "watchdog-renewal-due";

const char kOwnerCheckedPexpireScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const char kBlindPexpireScript[] = "return redis.call('pexpire', KEYS[1], ARGV[2])";
const char kResurrectingRenewScript[] =
    "local v = redis.call('get', KEYS[1]) "
    "if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
    "elseif not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 "
    "else return 0 end";

Status ParseWatchdogOptions(const LockConfig& config, WatchdogOptions* out) {
  WatchdogOptions o;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("renew_period_ms", Millis(0), Millis(3600000), &o.renew_period);
  k.Duration("renew_ttl_ms", Millis(0), Millis(3600000), &o.renew_ttl);
  if (!k.status().ok()) return k.status();
  if (o.renew_period.count() == 0) o.renew_period = std::max(Millis(1), config.ttl / 3);
  if (o.renew_ttl.count() == 0) o.renew_ttl = config.ttl;
  *out = o;
  return Status::Ok();
}

namespace {

const char* ScriptOf(RenewScript s) {
  switch (s) {
    case RenewScript::kBlind:
      return kBlindPexpireScript;
    case RenewScript::kResurrect:
      return kResurrectingRenewScript;
    case RenewScript::kOwnerChecked:
      break;
  }
  return kOwnerCheckedPexpireScript;
}

// Interprets the owner-checked PEXPIRE reply.
LockResult RenewResult(const Reply& r) {
  LockResult out;
  if (r.outcome != Outcome::kOk) {
    out.outcome = r.outcome;
    out.detail = r.transport_error;
  } else if (r.is_error) {
    out.outcome = Outcome::kFail;
    out.detail = r.str;
  } else if (r.is_integer && r.integer == 1) {
    out.outcome = Outcome::kOk;
  } else {
    out.outcome = Outcome::kFail;
    out.detail = "not-owner";  // the key expired or another client holds it now
  }
  return out;
}

}  // namespace

WatchdogLock::WatchdogLock(const LockConfig& config, const WatchdogOptions& options)
    : SingleNodeLock(config, AcquireStyle::kSetNxPx, ReleaseStyle::kCompareAndDelete),
      options_(options),
      renew_conn_(config.nodes.at(0), config.connect_timeout, config.command_timeout) {}

WatchdogLock::~WatchdogLock() {
  if (renewer_) renewer_->Stop();
}

LockResult WatchdogLock::Acquire(const std::string& key, Nanos deadline) {
  if (renewer_) {
    renewer_->Stop();
    renewer_.reset();
  }
  LockResult r = SingleNodeLock::Acquire(key, deadline);
  if (r.outcome != Outcome::kOk) return r;
  Lease lease = r.lease;
  renewer_ = std::make_unique<Renewer>(options_.renew_period, options_.renew_period,
                                       RenewSchedule::kFixedDelay,
                                       [this, lease] { return RenewAndRecord(renew_conn_, lease); });
  return r;
}

LockResult WatchdogLock::Release(const Lease& lease) {
  // Stop renewing before deleting: a renewal racing the delete could otherwise run after it
  // (harmless here, since it is owner-checked, but it would be a confusing history event).
  if (renewer_) {
    renewer_->Stop();
    renewer_.reset();
  }
  return SingleNodeLock::Release(lease);
}

LockResult WatchdogLock::Renew(const Lease& lease) {
  LockResult r = RenewResult(conn_.Command({"EVAL", ScriptOf(options_.renew_script), "1", lease.key,
                                            lease.token,
                                            std::to_string(options_.renew_ttl.count())}));
  r.lease = lease;
  return r;
}

bool WatchdogLock::RenewAndRecord(RedisConnection& conn, const Lease& lease) {
  // Before the invoke: a stop here is between renewals, not inside one (the renewal's
  // interval in the history does not contain the pause).
  if (config_.pause_point) config_.pause_point(kPointRenewalDue);
  // Worker 1: there is at most one renewal thread per lock object at a time.
  const auto& emit = config_.on_event;
  nlohmann::json value = {{"token", lease.token}, {"ttl_ms", options_.renew_ttl.count()}};
  if (emit) emit(1, "invoke", "renew", lease.key, value);
  LockResult r = RenewResult(conn.Command({"EVAL", ScriptOf(options_.renew_script), "1", lease.key,
                                           lease.token,
                                           std::to_string(options_.renew_ttl.count())}));
  if (emit) {
    emit(1, OutcomeName(r.outcome), "renew", lease.key,
         r.outcome == Outcome::kOk ? value : nlohmann::json{{"error", r.detail}});
  }
  return r.outcome == Outcome::kOk;
}

}  // namespace locklab::locks
