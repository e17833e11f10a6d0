#include "workloads/counter_workload.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "base/numbers.h"
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

// The critical section's hold: `hold` long, renewing the lease every `renew_every` while it
// lasts (never when that is 0 or the lock cannot renew). A renewal is due renew_every after
// the acquire or the last renewal; none starts once the hold is over (a process stopped
// mid-hold wakes up past its end and goes on to write, as it would without renewals).
template <typename SleepFn>
void HoldWithRenewals(locks::Lock& lock, EventSink& sink, const std::string& key,
                      const locks::Lease& acquired, const CounterWorkloadOptions& o,
                      SleepFn& sleep) {
  if (o.renew_every <= Millis(0) || !lock.SupportsRenew()) {
    sleep(o.hold);
    return;
  }
  auto until = [](Nanos t) {
    return std::chrono::ceil<Millis>(std::max(Nanos(0), t - MonotonicNow()));
  };
  locks::Lease lease = acquired;
  const Nanos end = MonotonicNow() + o.hold;
  Nanos next = lease.acquired_at + o.renew_every;
  for (;;) {
    const Nanos now = MonotonicNow();
    if (now >= end) return;
    if (next >= end) {
      sleep(until(end));
      return;
    }
    if (now < next) {
      sleep(until(next));
      continue;
    }
    sink.Emit("invoke", "renew", key, {{"token", lease.token}});
    locks::LockResult r = lock.Renew(lease);
    if (r.outcome != locks::Outcome::kOk) {
      sink.Emit(TypeOf(r.outcome), "renew", key, ErrorValue(r.detail));
      sleep(until(end));  // the lock may be lost: no more renewals, the hold goes on
      return;
    }
    sink.Emit("ok", "renew", key, LeaseValue(r.lease));
    lease = r.lease;
    next = MonotonicNow() + o.renew_every;
  }
}

}  // namespace

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
        sink.Emit("invoke", "release", key, {{"token", acq.lease.token}});
        locks::LockResult rel = lock.Release(acq.lease);
        sink.Emit(TypeOf(rel.outcome), "release", key, ErrorValue(rel.detail));
      }
      sleep(Millis(rng.Uniform(0, o.think.count())));
      continue;
    }
    sink.Emit("ok", "acquire", key, LeaseValue(acq.lease));
    pause("after-acquire");

    // Critical section: read, hold, write value+1.
    sink.Emit("invoke", "read", counter, nullptr);
    locks::Reply r = resource.Command({"GET", counter});
    bool read_ok = r.outcome == locks::Outcome::kOk && !r.is_error;
    long long value = 0;
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
    HoldWithRenewals(lock, sink, key, acq.lease, o, sleep);
    pause("before-write");
    if (read_ok && acq.lease.fence >= 0) {
      // The lock issued a fencing token: write through the resource's atomic token check,
      // whatever the algorithm (the workload does not need to know it).
      long long next = value + 1;
      const long long fence = acq.lease.fence;
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

    sink.Emit("invoke", "release", key, {{"token", acq.lease.token}});
    locks::LockResult rel = lock.Release(acq.lease);
    sink.Emit(TypeOf(rel.outcome), "release", key, ErrorValue(rel.detail));
    pause("after-release");
    sleep(Millis(rng.Uniform(0, o.think.count())));
  }
}

}  // namespace locklab::workloads
