// The lock code of the articles, as published, bugs included (docs/design.md 3.1 `article-*`):
// three of the five articles the project started from (not shipped; `NNN_<hash>.txt` here and
// `articles/NNN_...` in the lock registry name them). They are for teaching: the lab shows
// what the articles' readers would hit. Each class follows one listing line by line; the
// comments cite the lines, and where the lab has to differ (a history, a deadline so the
// client can stop) the difference is named. Their constants are knobs whose defaults are the
// articles' values.
//
//   article-redislockutil  004_3b37561fd22cc827.txt, class RedisLockUtil (file lines 96-166,
//                          numbered 1-71 in the listing; the comments cite those numbers):
//                          SET NX PX 5 (a 5 ms key lifetime), poll every 100 ms, give up after
//                          1 s measured with System.currentTimeMillis (wall clock), Lua
//                          compare-and-delete unlock.
//   article-blocking       003_aa1558153cde98e6.txt, lock() (file lines 69-81) and unlock()
//                          (95-103): SET NX PX in a loop that counts down its timeout by the
//                          sleep time only, and then *returns normally without the lock*:
//                          lock() is void, so its caller cannot tell and goes on.
//   article-watchdog       001_9d6267c7dd2be9e5.txt, normalRedisLock() (lines 29-85) and
//                          WatchDogThread (90-143): SET NX EX 10 in a busy loop; a renewal every
//                          5 s (first after 1 s, fixed rate) that sets the TTL to the remaining
//                          TTL + 10 s; on a renewal error an unconditional EXPIRE 30 s; the
//                          `finally` DELs the key without checking the owner, and the renewal
//                          task is cancelled only on an exception (otherwise it runs until it
//                          sees the key is not its own).
//
// Thread safety: the Lock contract (one thread per object); article-watchdog's renewal
// threads each own their connection and report through LockConfig::on_event.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "locks/renewer.h"
#include "locks/single_node_locks.h"

namespace locklab::locks {

struct RedisLockUtilOptions {
  Millis expire{5};      // EXPIRE_TIME = 5 (line 6, "key hold time, 5ms")
  Millis poll{100};      // Thread.sleep(100) (line 41)
  Millis timeout{1000};  // TIME_OUT = 1000 (line 9)
};
Status ParseRedisLockUtilOptions(const LockConfig& config, RedisLockUtilOptions* out);

class ArticleRedisLockUtilLock : public SingleNodeLock {
 public:
  ArticleRedisLockUtilLock(const LockConfig& config, const RedisLockUtilOptions& options);
  // Ignores `deadline`: the article's own 1 s TIME_OUT decides.
  LockResult Acquire(const std::string& key, Nanos deadline) override;

 private:
  RedisLockUtilOptions options_;
};

struct BlockingOptions {
  Millis sleep{100};   // DEFAULT_SLEEP_TIME (line 78; its value is not shown in the article)
  Millis timeout{0};   // lock(key, request, timeout)'s argument; 0 = the Acquire deadline
};
Status ParseBlockingOptions(const LockConfig& config, BlockingOptions* out);

class ArticleBlockingLock : public SingleNodeLock {
 public:
  ArticleBlockingLock(const LockConfig& config, const BlockingOptions& options);
  LockResult Acquire(const std::string& key, Nanos deadline) override;

 private:
  BlockingOptions options_;
};

struct ArticleWatchdogOptions {
  int64_t lock_seconds = 10;       // setIfAbsent(..., 10, TimeUnit.SECONDS) (line 43)
  int64_t renew_add_seconds = 10;  // the script's ARGV[2] = "10" (line 130)
  Millis initial_delay{1000};      // scheduleAtFixedRate(task, 1, 5, SECONDS) (line 53)
  Millis period{5000};
  int64_t fallback_expire_seconds = 30;  // expire(productId, 30, SECONDS) (line 138)
  Millis spin{0};                  // the acquire loop (lines 37-47) never sleeps
};
Status ParseArticleWatchdogOptions(const LockConfig& config, ArticleWatchdogOptions* out);

class ArticleWatchdogLock : public Lock {
 public:
  ArticleWatchdogLock(const LockConfig& config, const ArticleWatchdogOptions& options);
  ~ArticleWatchdogLock() override;
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;

 private:
  // One run of WatchDogThread.run() on `conn`; returns false when it cancels itself.
  bool RunWatchdog(RedisConnection& conn, const Lease& lease, int worker);
  LockConfig config_;
  ArticleWatchdogOptions options_;
  RedisConnection conn_;
  // Renewal tasks still scheduled: the article cancels one only on an exception, so a task
  // outlives its lease until it sees the key is no longer its own.
  struct Task {
    std::shared_ptr<RedisConnection> conn;
    std::shared_ptr<std::atomic<bool>> done;
    int worker = 1;  // LockEventFn worker number, unique among live tasks
    std::unique_ptr<Renewer> renewer;
  };
  std::vector<Task> tasks_;
};

// The article's renewal script, verbatim (001, lines 102-104).
extern const char kArticleWatchdogScript[];

}  // namespace locklab::locks
