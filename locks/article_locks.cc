#include "locks/article_locks.h"

#include "base/random.h"
#include "locks/knobs.h"

namespace locklab::locks {

const char kArticleWatchdogScript[] =
    "if redis.call('get',KEYS[1]) == ARGV[1] then"
    " local ttl = tonumber(redis.call('ttl',KEYS[1]));"
    " redis.call('expire',KEYS[1],ttl+ARGV[2]) return redis.call('ttl',KEYS[1]) end";

namespace {

bool IsOk(const Reply& r) { return r.outcome == Outcome::kOk && !r.is_error && r.str == "OK"; }

LockResult Taken(const std::string& key, const std::string& token, Millis validity) {
  LockResult r;
  r.outcome = Outcome::kOk;
  r.lease.key = key;
  r.lease.token = token;
  r.lease.validity = validity;
  r.lease.acquired_at = MonotonicNow();
  return r;
}

// A Jedis call that throws (connection refused, timeout) ends the article's method with
// an exception: its caller does not enter the critical section.
LockResult Thrown(const Reply& r) {
  LockResult out;
  out.outcome = r.outcome == Outcome::kOk ? Outcome::kFail : r.outcome;
  out.detail = r.is_error ? r.str : r.transport_error;
  return out;
}

}  // namespace

// ---- article-redislockutil -------------------------------------------------------------

Status ParseRedisLockUtilOptions(const LockConfig& config, RedisLockUtilOptions* out) {
  RedisLockUtilOptions o;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("expire_ms", Millis(1), Millis(3600000), &o.expire);
  k.Duration("poll_ms", Millis(0), Millis(60000), &o.poll);
  k.Duration("timeout_ms", Millis(0), Millis(3600000), &o.timeout);
  if (!k.status().ok()) return k.status();
  *out = o;
  return Status::Ok();
}

ArticleRedisLockUtilLock::ArticleRedisLockUtilLock(const LockConfig& config,
                                                   const RedisLockUtilOptions& options)
    : SingleNodeLock(config, AcquireStyle::kSetNxPx, ReleaseStyle::kCompareAndDelete),
      options_(options) {}

LockResult ArticleRedisLockUtilLock::Acquire(const std::string& key, Nanos) {
  // The article passes a thread id as `id`; the lab uses a random token (thread ids repeat
  // across processes, which would be a second bug the article does not have in one JVM).
  const std::string token = RandomToken();
  const std::string px = std::to_string(options_.expire.count());
  Nanos start = LockClockNow(LockClockKind::kWall);  // long start = System.currentTimeMillis()
  for (;;) {
    Reply r = conn_.Command({"SET", key, token, "NX", "PX", px});  // jedis.set(LOCK_KEY, id, params)
    if (r.outcome != Outcome::kOk || r.is_error) return Thrown(r);
    if (IsOk(r)) return Taken(key, token, options_.expire);  // if ("OK".equals(lock)) return true
    Nanos l = LockClockNow(LockClockKind::kWall) - start;
    if (l >= options_.timeout) {  // if (l >= TIME_OUT) return false
      LockResult fail;
      fail.detail = "key held (gave up after TIME_OUT)";
      return fail;
    }
    SleepFor(options_.poll);  // Thread.sleep(100)
  }
}

// ---- article-blocking ------------------------------------------------------------------

Status ParseBlockingOptions(const LockConfig& config, BlockingOptions* out) {
  BlockingOptions o;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("sleep_ms", Millis(1), Millis(60000), &o.sleep);
  k.Duration("timeout_ms", Millis(0), Millis(3600000), &o.timeout);
  if (!k.status().ok()) return k.status();
  *out = o;
  return Status::Ok();
}

ArticleBlockingLock::ArticleBlockingLock(const LockConfig& config, const BlockingOptions& options)
    : SingleNodeLock(config, AcquireStyle::kSetNxPx, ReleaseStyle::kCompareAndDelete),
      options_(options) {}

LockResult ArticleBlockingLock::Acquire(const std::string& key, Nanos deadline) {
  const std::string token = RandomToken();  // the caller's `request` (a UUID in its test)
  const std::string px = std::to_string(config_.ttl.count());  // DEFAULT_EXPIRE_TIME
  int64_t timeout = options_.timeout.count() > 0
                        ? options_.timeout.count()
                        : std::chrono::duration_cast<Millis>(deadline - MonotonicNow()).count();
  // `while (timeout = 0)` as printed (line 72) does not compile in Java: the HTML lost a `>`,
  // read as `while (timeout >= 0)`.
  while (timeout >= 0) {
    Reply r = conn_.Command({"SET", key, token, "NX", "PX", px});
    if (r.outcome != Outcome::kOk || r.is_error) return Thrown(r);
    if (IsOk(r)) return Taken(key, token, config_.ttl);  // jedis.close(); return;
    SleepFor(options_.sleep);                            // Thread.sleep(DEFAULT_SLEEP_TIME)
    timeout -= options_.sleep.count();  // counts sleeps only: the SETs' own time is not seen
  }
  // The loop ended: lock() returns normally (void), exactly as when it got the lock. Its
  // caller runs the critical section without holding anything.
  LockResult r = Taken(key, token, config_.ttl);
  r.detail = "timed out; lock() returned as if locked";
  return r;
}

// ---- article-watchdog ------------------------------------------------------------------

Status ParseArticleWatchdogOptions(const LockConfig& config, ArticleWatchdogOptions* out) {
  ArticleWatchdogOptions o;
  KnobReader k(config.algorithm, config.knobs);
  k.Int("lock_s", 1, 86400, &o.lock_seconds);
  k.Int("renew_add_s", 0, 86400, &o.renew_add_seconds);
  k.Duration("initial_delay_ms", Millis(0), Millis(3600000), &o.initial_delay);
  k.Duration("period_ms", Millis(1), Millis(3600000), &o.period);
  k.Int("fallback_expire_s", 1, 86400, &o.fallback_expire_seconds);
  k.Duration("spin_ms", Millis(0), Millis(60000), &o.spin);
  if (!k.status().ok()) return k.status();
  *out = o;
  return Status::Ok();
}

ArticleWatchdogLock::ArticleWatchdogLock(const LockConfig& config,
                                         const ArticleWatchdogOptions& options)
    : config_(config),
      options_(options),
      conn_(config.nodes.at(0), config.connect_timeout, config.command_timeout) {}

ArticleWatchdogLock::~ArticleWatchdogLock() {
  for (auto& t : tasks_) t.renewer->Stop();
}

LockResult ArticleWatchdogLock::Acquire(const std::string& key, Nanos deadline) {
  // Forget tasks that cancelled themselves (the article's CONCURRENT_HASH_MAP.remove).
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (it->done->load()) {
      it->renewer->Stop();
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
  const std::string token = RandomToken();  // String clientId = UUID.randomUUID().toString()
  const std::string ex = std::to_string(options_.lock_seconds);
  // while (true) { ... setIfAbsent(productId, clientId, 10, SECONDS) ... } (lines 37-47). The
  // article never gives up; the lab stops at the Acquire deadline so the client can stop.
  LockResult result;
  for (;;) {
    Reply r = conn_.Command({"SET", key, token, "NX", "EX", ex});
    if (r.outcome != Outcome::kOk || r.is_error) return Thrown(r);
    if (IsOk(r)) break;
    if (MonotonicNow() >= deadline) {
      result.detail = "key held";
      return result;
    }
    SleepFor(options_.spin);
  }
  result = Taken(key, token, Millis(options_.lock_seconds * 1000));
  // new WatchDogThread(...); scheduleAtFixedRate(watchDogThread, 1, 5, SECONDS) (lines 52-53)
  Task t;
  t.conn = std::make_shared<RedisConnection>(config_.nodes.at(0), config_.connect_timeout,
                                             config_.command_timeout);
  t.done = std::make_shared<std::atomic<bool>>(false);
  // The lowest worker number no live task uses: tasks of earlier leases may still run.
  t.worker = 1;
  for (bool taken = true; taken;) {
    taken = false;
    for (const auto& other : tasks_) {
      if (other.worker == t.worker) {
        taken = true;
        ++t.worker;
      }
    }
  }
  int worker = t.worker;
  Lease lease = result.lease;
  auto conn = t.conn;
  auto done = t.done;
  t.renewer = std::make_unique<Renewer>(
      options_.initial_delay, options_.period, RenewSchedule::kFixedRate,
      [this, conn, done, lease, worker] {
        bool more = RunWatchdog(*conn, lease, worker);
        if (!more) done->store(true);
        return more;
      });
  tasks_.push_back(std::move(t));
  return result;
}

LockResult ArticleWatchdogLock::Release(const Lease& lease) {
  // finally { stringRedisTemplate.delete(productId); } (line 80): no owner check, and the
  // renewal task is not cancelled (that happens only in the catch block, lines 72-77).
  LockResult result;
  result.lease = lease;
  Reply r = conn_.Command({"DEL", lease.key});
  if (r.outcome != Outcome::kOk || r.is_error) return Thrown(r);
  result.outcome = r.is_integer && r.integer == 1 ? Outcome::kOk : Outcome::kFail;
  if (result.outcome != Outcome::kOk) result.detail = "key already gone";
  return result;
}

bool ArticleWatchdogLock::RunWatchdog(RedisConnection& conn, const Lease& lease, int worker) {
  auto emit = [&](const char* type, const char* f, const std::string& key,
                  const nlohmann::json& value) {
    if (config_.on_event) config_.on_event(worker, type, f, key, value);
  };
  nlohmann::json value = {{"token", lease.token}, {"add_s", options_.renew_add_seconds}};
  emit("invoke", "renew", lease.key, value);
  // catch (Exception e) { expire(productId, 30, SECONDS) } (line 138): extends whoever
  // holds the key now, and keeps the task scheduled.
  auto on_exception = [&](const Reply& failed) {
    emit(failed.outcome == Outcome::kUnknown ? "info" : "fail", "renew", lease.key,
         {{"error", failed.is_error ? failed.str : failed.transport_error}});
    emit("invoke", "renew", lease.key,
         {{"token", lease.token}, {"blind_expire_s", options_.fallback_expire_seconds}});
    Reply e = conn.Command({"EXPIRE", lease.key, std::to_string(options_.fallback_expire_seconds)});
    {
      bool ok = e.outcome == Outcome::kOk && e.is_integer && e.integer == 1;
      emit(e.outcome == Outcome::kOk ? (ok ? "ok" : "fail") : "info", "renew", lease.key,
           ok ? nlohmann::json{{"blind_expire_s", options_.fallback_expire_seconds}}
              : nlohmann::json{{"error", e.outcome == Outcome::kOk ? "key gone"
                                                                   : e.transport_error}});
    }
    return true;
  };
  Reply get = conn.Command({"GET", lease.key});  // String lock = ...get(productId) (line 116)
  if (get.outcome != Outcome::kOk || get.is_error) return on_exception(get);
  if (get.is_nil || get.str != lease.token) {  // cancel the watchdog (lines 119-126)
    emit("fail", "renew", lease.key, {{"error", "not-owner"}});
    return false;
  }
  Reply r = conn.Command({"EVAL", kArticleWatchdogScript, "1", lease.key, lease.token,
                          std::to_string(options_.renew_add_seconds)});
  if (r.outcome != Outcome::kOk || r.is_error) return on_exception(r);
  {
    // The script returns nil when the key changed hands between the GET and the EVAL; the
    // article does not look at the result.
    if (r.is_integer) emit("ok", "renew", lease.key, {{"ttl_s", r.integer}});
    else emit("fail", "renew", lease.key, {{"error", "not-owner"}});
  }
  return true;
}

}  // namespace locklab::locks
