#include "workloads/counter_workload.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "base/numbers.h"
#include "locks/driver_lock.h"
#include "workloads/fenced_resource.h"

namespace locklab::workloads {

std::string LockKey(int i) { return "lock:" + std::to_string(i); }
std::string CounterKey(int i) { return "counter:" + std::to_string(i); }

nlohmann::json LeaseValue(const locks::Lease& lease) {
  nlohmann::json v = {{"token", lease.token}};
  if (lease.validity != Millis::max()) v["validity_ms"] = lease.validity.count();
  if (lease.fence >= 0) v["fence"] = lease.fence;
  return v;
}

namespace {

const char* TypeOf(locks::Outcome o) { return locks::OutcomeName(o); }

nlohmann::json ErrorValue(const std::string& detail) {
  if (detail.empty()) return nullptr;
  return {{"error", detail}};
}

// Until when the client may use a lease it got at `at` (its acquired_at, or for a renewal
// whose lock returns the old lease, when the renewal started) with `validity`: Nanos::max()
// for a lease without a validity (Millis::max()).
Nanos ValidUntil(Nanos at, Millis validity) {
  if (validity == Millis::max()) return Nanos::max();
  return at + validity;
}

// The critical section's hold: `hold` long, renewing the lease every `renew_every` while it
// lasts (never when that is 0 or the lock cannot renew). A renewal is due renew_every after
// the acquire or the last renewal; none starts once the hold is over (a process stopped
// mid-hold wakes up past its end and goes on to write, as it would without renewals).
// With honour_validity the hold also ends at *valid_until (moved on by each ok renewal),
// and then returns false: the client must stop using the lease.
template <typename SleepFn>
bool HoldWithRenewals(locks::Lock& lock, EventSink& sink, const std::string& key,
                      const locks::Lease& acquired, const CounterWorkloadOptions& o,
                      SleepFn& sleep, Nanos* valid_until) {
  auto until = [](Nanos t) {
    return std::chrono::ceil<Millis>(std::max(Nanos(0), t - MonotonicNow()));
  };
  const bool honour = o.honour_validity;
  const Nanos end = MonotonicNow() + o.hold;
  const bool renews = o.renew_every > Millis(0) && lock.SupportsRenew();
  // The hold's end, or earlier the end of the lease's validity when it is honoured.
  auto sleep_out = [&]() {
    if (honour && *valid_until < end) {
      sleep(until(*valid_until));
      return MonotonicNow() < *valid_until;  // (a stopped process wakes up past it)
    }
    sleep(until(end));
    return !honour || MonotonicNow() < *valid_until;
  };
  if (!renews) return sleep_out();
  locks::Lease lease = acquired;
  Nanos next = lease.acquired_at + o.renew_every;
  for (;;) {
    const Nanos now = MonotonicNow();
    if (honour && now >= *valid_until) return false;
    if (now >= end) return true;
    if (next >= end) return sleep_out();
    if (now < next) {
      if (honour && *valid_until < next) {
        sleep(until(*valid_until));
        continue;  // past it: the check above ends the hold
      }
      sleep(until(next));
      continue;
    }
    const Nanos invoked = MonotonicNow();
    sink.Emit("invoke", "renew", key, {{"token", lease.token}});
    locks::LockResult r = lock.Renew(lease);
    if (r.outcome != locks::Outcome::kOk) {
      sink.Emit(TypeOf(r.outcome), "renew", key, ErrorValue(r.detail));
      // The lock may be lost: no more renewals, the hold goes on (to the end of the
      // validity it had, when that is honoured).
      return sleep_out();
    }
    sink.Emit("ok", "renew", key, LeaseValue(r.lease));
    lease = r.lease;
    // A lock whose Renew hands back the old lease (watchdog) extended it during the call.
    *valid_until = ValidUntil(std::max(lease.acquired_at, invoked), lease.validity);
    next = MonotonicNow() + o.renew_every;
  }
}

// The lock driver that owns the guarded resource (its hello's "resource": true), else null:
// then the read and the write go to it instead of the lab's counter.
locks::DriverLock* ResourceDriver(locks::Lock& lock) {
  auto* driver = dynamic_cast<locks::DriverLock*>(&lock);
  return driver != nullptr && driver->hello().resource ? driver : nullptr;
}

// The critical section of one lease: read, hold (renewing), write value+1. Returns false
// when it stopped because the lease's validity had passed (still_valid(), checked before the
// read, the write and, through the hold, each renewal): the rest is skipped, no write.
template <typename PauseFn, typename SleepFn, typename ValidFn>
bool CriticalSection(locks::Lock& lock, locks::RedisConnection& resource, EventSink& sink,
                     PauseFn& pause, const CounterWorkloadOptions& o, const std::string& key,
                     const std::string& counter, const locks::Lease& lease, SleepFn& sleep,
                     ValidFn& still_valid, Nanos* valid_until) {
  if (!still_valid()) return false;  // granted already over, or a pause at after-acquire
  sink.Emit("invoke", "read", counter, nullptr);
  locks::DriverLock* own = ResourceDriver(lock);
  bool read_ok = false;
  long long value = 0;
  if (own != nullptr) {
    locks::DriverLock::ResourceResult rr = own->ReadResource(counter, &lease);
    read_ok = rr.outcome == locks::Outcome::kOk;
    value = rr.value.value_or(0);
    if (read_ok) {
      sink.Emit("ok", "read", counter, rr.value ? nlohmann::json(*rr.value) : nlohmann::json(nullptr));
    } else {
      sink.Emit(TypeOf(rr.outcome), "read", counter, ErrorValue(rr.detail));
    }
  } else {
    locks::Reply r = resource.Command({"GET", counter});
    read_ok = r.outcome == locks::Outcome::kOk && !r.is_error;
    if (read_ok && !r.is_nil) {
      std::optional<int64_t> n = ParseInt(r.str);
      read_ok = n.has_value();
      value = n.value_or(0);
    }
    if (read_ok) {
      sink.Emit("ok", "read", counter, r.is_nil ? nlohmann::json(nullptr) : nlohmann::json(value));
    } else {
      sink.Emit(r.outcome == locks::Outcome::kOk ? "fail" : TypeOf(r.outcome), "read", counter,
                ErrorValue(r.is_error ? r.str : r.transport_error));
    }
  }
  if (!HoldWithRenewals(lock, sink, key, lease, o, sleep, valid_until)) return false;
  pause(kPointBeforeWrite);
  if (!still_valid()) return false;
  if (read_ok && own != nullptr) {
    // The team's own resource: the driver writes, and says what its resource accepted. The
    // events are the lab counter's (a fence rejected as older is "stale-fence"), so the
    // checker judges lost updates and stale writes on that resource the same way.
    const long long next = value + 1;
    nlohmann::json v = lease.fence >= 0 ? nlohmann::json{{"value", next}, {"fence", lease.fence}}
                                         : nlohmann::json(next);
    sink.Emit("invoke", "write", counter, v);
    locks::DriverLock::ResourceResult w = own->Work(counter, lease, next);
    if (w.outcome == locks::Outcome::kOk) {
      sink.Emit("ok", "write", counter,
                w.fence >= 0 ? nlohmann::json{{"value", *w.value}, {"fence", w.fence}}
                             : nlohmann::json(*w.value));
    } else if (w.outcome == locks::Outcome::kFail && w.stale) {
      nlohmann::json f = {{"error", "stale-fence"}, {"fence", lease.fence}};
      if (w.newest >= 0) f["newest"] = w.newest;
      sink.Emit("fail", "write", counter, f);
    } else {
      sink.Emit(TypeOf(w.outcome), "write", counter, ErrorValue(w.detail));
    }
  } else if (read_ok && lease.fence >= 0) {
    // The lock issued a fencing token: write through the resource's atomic token check,
    // whatever the algorithm (the workload does not need to know it).
    long long next = value + 1;
    const long long fence = lease.fence;
    nlohmann::json v = {{"value", next}, {"fence", fence}};
    sink.Emit("invoke", "write", counter, v);
    FencedWriteResult w = FencedWrite(resource, counter, next, fence);
    if (w.outcome != locks::Outcome::kOk) {
      sink.Emit(TypeOf(w.outcome), "write", counter, ErrorValue(w.error));
    } else if (!w.error.empty()) {
      sink.Emit("fail", "write", counter, ErrorValue(w.error));
    } else if (w.accepted) {
      sink.Emit("ok", "write", counter, v);
    } else {
      sink.Emit("fail", "write", counter,
                {{"error", "stale-fence"}, {"fence", fence}, {"newest", w.newest}});
    }
  } else if (read_ok) {
    long long next = value + 1;
    sink.Emit("invoke", "write", counter, next);
    locks::Reply w = resource.Command({"SET", counter, std::to_string(next)});
    if (w.outcome == locks::Outcome::kOk && !w.is_error) {
      sink.Emit("ok", "write", counter, next);
    } else {
      sink.Emit(w.outcome == locks::Outcome::kOk ? "fail" : TypeOf(w.outcome), "write",
                counter, ErrorValue(w.is_error ? w.str : w.transport_error));
    }
  }
  return true;
}

}  // namespace

const std::vector<std::string>& HoldPausePoints() {
  static const std::vector<std::string> kPoints = {kPointAfterAcquire, kPointBeforeWrite};
  return kPoints;
}

const std::vector<std::string>& WorkloadPausePoints() {
  static const std::vector<std::string> kPoints = {kPointBeforeAcquire, kPointAfterAcquire, kPointBeforeWrite,
                                                   kPointBeforeRelease, kPointAfterRelease};
  return kPoints;
}

const std::vector<std::string>& CommandPoints() {
  static const std::vector<std::string> kPoints = {kPointBeforeAcquire, kPointAfterAcquire,
                                                   kPointBeforeRelease};
  return kPoints;
}

bool LeaseStillValid(const locks::Lease& lease, Nanos now) {
  return now < ValidUntil(lease.acquired_at, lease.validity);
}

void RunCounterWorkload(locks::Lock& lock, locks::RedisConnection& resource, EventSink& sink,
                        const locks::PausePoint& pause_point, Rng& rng,
                        const CounterWorkloadOptions& o, const std::atomic<bool>& stop,
                        LagMeter* lag) {
  auto pause = [&](const char* point) {
    if (pause_point) pause_point(point);
  };
  auto sleep = [&](Millis d) {
    if (lag != nullptr) lag->Sleep(d);
    else SleepFor(d);
  };
  while (!stop.load()) {
    int k = static_cast<int>(rng.Uniform(0, o.keys - 1));
    const std::string key = LockKey(k);
    const std::string counter = CounterKey(k);
    // A release recorded as this client's invoke / complete pair; `value` names the lease.
    auto release = [&](const locks::Lease& lease, const nlohmann::json& value) {
      sink.Emit("invoke", "release", key, value);
      locks::LockResult rel = lock.Release(lease);
      sink.Emit(TypeOf(rel.outcome), "release", key, ErrorValue(rel.detail));
    };
    pause(kPointBeforeAcquire);
    sink.Emit("invoke", "acquire", key, nullptr);
    locks::LockResult acq = lock.Acquire(key, MonotonicNow() + o.acquire_timeout);
    if (acq.outcome != locks::Outcome::kOk) {
      nlohmann::json v = ErrorValue(acq.detail);
      const bool may_hold = acq.outcome == locks::Outcome::kUnknown && !acq.lease.token.empty();
      if (may_hold) {
        if (v.is_null()) v = nlohmann::json::object();
        v["token"] = acq.lease.token;
      }
      sink.Emit(TypeOf(acq.outcome), "acquire", key, v);
      if (may_hold) {
        // The lock was granted after this client gave up waiting (a lock driver's late `ok`):
        // it never entered its critical section, but the key is held with that token. It is
        // released at once, recorded as this client's release; the token in the acquire's
        // value tells the checker which grant the release ends.
        release(acq.lease, {{"token", acq.lease.token}});
      }
      if (!stop.load()) sleep(Millis(rng.Uniform(0, o.think.count())));
      continue;
    }
    // A lock that left acquired_at unset: its validity counts from when Acquire returned.
    if (acq.lease.acquired_at <= Nanos(0)) acq.lease.acquired_at = MonotonicNow();
    sink.Emit("ok", "acquire", key, LeaseValue(acq.lease));
    if (stop.load()) {
      // Granted after the run's end: no operation starts after it, so the client releases at
      // once and leaves its critical section out (a hold past the end adds only run time; the
      // grant and its release still judge mutual exclusion).
      release(acq.lease, {{"token", acq.lease.token}});
      break;
    }
    pause(kPointAfterAcquire);
    // With validity honoured: until when this lease may be used (moved on by renewals).
    Nanos valid_until = ValidUntil(acq.lease.acquired_at, acq.lease.validity);
    auto still_valid = [&] { return !o.honour_validity || MonotonicNow() < valid_until; };
    const bool abandoned = !CriticalSection(lock, resource, sink, pause, o, key, counter, acq.lease,
                                            sleep, still_valid, &valid_until);
    nlohmann::json rel_value = {{"token", acq.lease.token}};
    if (abandoned) rel_value["abandoned"] = "validity";
    pause(kPointBeforeRelease);
    release(acq.lease, rel_value);
    pause(kPointAfterRelease);
    if (stop.load()) break;  // no think after the run's end
    sleep(Millis(rng.Uniform(0, o.think.count())));
  }
}

}  // namespace locklab::workloads
