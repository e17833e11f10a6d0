#include "locks/redlock.h"

#include <cmath>

#include "locks/knobs.h"
#include "locks/single_node_locks.h"
#include "locks/watchdog_lock.h"

namespace locklab::locks {
namespace {

// A node granted the key: SET ... NX answered +OK (nil: the key was held).
bool Granted(const Reply& r) {
  return r.outcome == Outcome::kOk && !r.is_error && !r.is_nil && r.str == "OK";
}

}  // namespace

Status ParseRedlockOptions(const LockConfig& config, RedlockOptions* out) {
  RedlockOptions o;
  o.ttl = config.ttl;
  o.node_timeout = config.command_timeout;
  o.retry_delay = config.retry_delay;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("node_timeout_ms", Millis(0), Millis(60000), &o.node_timeout);
  k.Double("drift_factor", 0.0, 1.0, &o.drift_factor);
  k.Duration("drift_constant_ms", Millis(0), Millis(60000), &o.drift_constant);
  int64_t retries = o.retry_count;
  k.Int("retry_count", 0, 1000000, &retries);
  o.retry_count = static_cast<int>(retries);
  k.Duration("retry_jitter_ms", Millis(0), Millis(60000), &o.retry_jitter);
  std::string mode = "parallel";
  k.Choice("mode", {"parallel", "sequential"}, &mode);
  o.parallel = mode == "parallel";
  k.Bool("recheck_validity", &o.recheck_validity);
  std::string clock = "monotonic";
  k.Choice("clock", {"monotonic", "wall"}, &clock);
  o.clock_kind = clock == "wall" ? LockClockKind::kWall : LockClockKind::kMonotonic;
  int64_t ext = o.max_extensions;
  k.Int("max_extensions", 0, 1000000, &ext);
  o.max_extensions = static_cast<int>(ext);
  if (!k.status().ok()) return k.status();
  if (o.node_timeout.count() == 0) o.node_timeout = config.command_timeout;
  *out = o;
  return Status::Ok();
}

RedlockLock::RedlockLock(const LockConfig& config, RedlockOptions options)
    : config_(config),
      options_(std::move(options)),
      rng_(RandomSeed(60)) {
  for (const auto& e : config_.nodes) {
    conns_.push_back(
        std::make_unique<RedisConnection>(e, config_.connect_timeout, options_.node_timeout));
  }
}

Nanos RedlockLock::Now() const {
  return options_.clock ? options_.clock() : LockClockNow(options_.clock_kind);
}

Millis RedlockLock::Validity(Nanos elapsed) const {
  Nanos ttl = options_.ttl;
  Nanos drift(static_cast<int64_t>(std::llround(static_cast<double>(ttl.count()) *
                                                options_.drift_factor)));
  drift += options_.drift_constant;
  Nanos v = ttl - elapsed - drift;
  // Floor, so that "validity > 0" never rounds a nearly used-up lock up to 1 ms.
  Millis ms = std::chrono::floor<Millis>(v);
  return ms;
}

RedlockLock::NodeReplies RedlockLock::Broadcast(const std::vector<std::vector<std::string>>& argv,
                                                const char* point) {
  NodeReplies out;
  const size_t n = conns_.size();
  out.replies.resize(n);
  // The stop lands on an attempt that won: when the harness says a stop is armed here, the
  // lock peeks at the first byte of each unread reply ('+' is SET's OK) and stops only if,
  // with the replies already read, a quorum granted the key. A stop on a losing attempt
  // would test nothing (docs/known-answers.md schedule 2 is about the attempt that got the
  // lock). The replies stay unread, so the algorithm still meets them only after the stop.
  auto pause = [&](size_t first_unread, const std::vector<bool>& sent) {
    if (point == nullptr || !config_.pause_point) return;
    if (config_.point_armed) {
      if (!config_.point_armed(point)) return;
      int granted = 0;
      for (size_t i = 0; i < n; ++i) {
        if (i < first_unread) {
          granted += Granted(out.replies[i]);
        } else if (sent[i]) {
          granted += conns_[i]->PeekReplyStart(options_.node_timeout) == '+';
        }
      }
      if (granted < quorum()) return;
    }
    config_.pause_point(point);
  };
  std::vector<bool> sent(n, false);
  // Sends node i's command; a send that failed is that node's reply.
  auto send = [&](size_t i) {
    std::string error;
    Outcome o = conns_[i]->Send(argv[i], &error);
    sent[i] = o == Outcome::kOk;
    if (!sent[i]) {
      out.replies[i].outcome = o;
      out.replies[i].transport_error = error;
    }
  };
  if (options_.parallel) {
    for (size_t i = 0; i < n; ++i) send(i);
    out.sent_at = Now();
    pause(0, sent);
    for (size_t i = 0; i < n; ++i) {
      if (sent[i]) out.replies[i] = conns_[i]->Read();
    }
    return out;
  }
  // Sequential: the classic client loop. The pause point sits after the last node's SET was
  // sent and before its reply is read: then all the SETs have been sent.
  for (size_t i = 0; i < n; ++i) {
    send(i);
    if (i + 1 == n) {
      out.sent_at = Now();
      pause(i, sent);
    }
    if (!sent[i]) continue;
    out.replies[i] = conns_[i]->Read();
  }
  return out;
}

int RedlockLock::UnlockAll(const Lease& lease, bool* unknown) {
  std::vector<std::vector<std::string>> argv(
      conns_.size(), {"EVAL", kCompareAndDeleteScript, "1", lease.key, lease.token});
  NodeReplies r = Broadcast(argv, nullptr);
  int deleted = 0;
  *unknown = false;
  for (const Reply& rep : r.replies) {
    if (rep.outcome == Outcome::kUnknown) *unknown = true;
    if (rep.outcome == Outcome::kOk && rep.is_integer && rep.integer == 1) ++deleted;
  }
  return deleted;
}

LockResult RedlockLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result;
  const std::string token = RandomToken();
  const std::string ttl = std::to_string(options_.ttl.count());
  std::vector<std::vector<std::string>> argv(conns_.size(),
                                             {"SET", key, token, "NX", "PX", ttl});
  bool any_unknown = false;
  for (int attempt = 1;; ++attempt) {
    Nanos start = Now();
    NodeReplies r = Broadcast(argv, "redlock-replies-in-flight");
    Nanos end = options_.recheck_validity ? Now() : r.sent_at;
    int ok = 0, unknown = 0;
    std::string errors;
    for (size_t i = 0; i < r.replies.size(); ++i) {
      const Reply& rep = r.replies[i];
      if (Granted(rep)) {
        ++ok;
      } else if (rep.outcome == Outcome::kUnknown) {
        ++unknown;
      }
    }
    Millis validity = Validity(end - start);
    if (ok >= quorum() && validity.count() > 0) {
      result.outcome = Outcome::kOk;
      result.lease.key = key;
      result.lease.token = token;
      result.lease.validity = validity;
      result.lease.acquired_at = MonotonicNow();
      result.detail = "";
      extensions_.erase(token);
      return result;
    }
    result.detail = "locked " + std::to_string(ok) + " of " + std::to_string(conns_.size()) +
                    " nodes (quorum " + std::to_string(quorum()) + "), validity " +
                    std::to_string(validity.count()) + " ms" +
                    (unknown > 0 ? ", " + std::to_string(unknown) + " unknown" : "");
    // Undo the attempt everywhere, also where the reply was lost: the SET may have landed.
    Lease partial;
    partial.key = key;
    partial.token = token;
    bool unlock_unknown = false;
    UnlockAll(partial, &unlock_unknown);
    // Unknown only when a SET that may have landed could not be confirmed undone.
    if (unknown > 0 && unlock_unknown) any_unknown = true;
    if (options_.retry_count > 0 && attempt >= options_.retry_count) break;
    Millis wait = options_.retry_delay + Millis(rng_.Uniform(0, options_.retry_jitter.count()));
    if (MonotonicNow() + wait >= deadline) break;
    SleepFor(wait);
  }
  result.outcome = any_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

LockResult RedlockLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  extensions_.erase(lease.token);
  bool unknown = false;
  int deleted = UnlockAll(lease, &unknown);
  if (deleted >= quorum()) {
    result.outcome = Outcome::kOk;
    return result;
  }
  result.outcome = unknown ? Outcome::kUnknown : Outcome::kFail;
  result.detail = "deleted on " + std::to_string(deleted) + " of " +
                  std::to_string(conns_.size()) + " nodes";
  return result;
}

LockResult RedlockLock::Renew(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (options_.max_extensions <= 0) return Lock::Renew(lease);
  int& used = extensions_[lease.token];
  if (used >= options_.max_extensions) {
    result.outcome = Outcome::kFail;
    result.detail = "extension limit (" + std::to_string(options_.max_extensions) + ") reached";
    return result;
  }
  ++used;
  const std::string ttl = std::to_string(options_.ttl.count());
  std::vector<std::vector<std::string>> argv(
      conns_.size(), {"EVAL", kOwnerCheckedPexpireScript, "1", lease.key, lease.token, ttl});
  Nanos start = Now();
  NodeReplies r = Broadcast(argv, nullptr);
  Nanos end = options_.recheck_validity ? Now() : r.sent_at;
  int ok = 0, unknown = 0;
  for (const Reply& rep : r.replies) {
    if (rep.outcome == Outcome::kOk && rep.is_integer && rep.integer == 1) ++ok;
    if (rep.outcome == Outcome::kUnknown) ++unknown;
  }
  Millis validity = Validity(end - start);
  if (ok >= quorum() && validity.count() > 0) {
    result.outcome = Outcome::kOk;
    result.lease.validity = validity;
    result.lease.acquired_at = MonotonicNow();
    return result;
  }
  result.outcome = unknown > 0 ? Outcome::kUnknown : Outcome::kFail;
  result.detail = "extended on " + std::to_string(ok) + " of " + std::to_string(conns_.size()) +
                  " nodes, validity " + std::to_string(validity.count()) + " ms";
  return result;
}

}  // namespace locklab::locks
