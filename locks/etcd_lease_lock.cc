#include "locks/etcd_lease_lock.h"

#include <algorithm>
#include <cstring>

#include "base/numbers.h"
#include "locks/knobs.h"

namespace locklab::locks {
namespace {

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

nlohmann::json Parse(const std::string& body) {
  return nlohmann::json::parse(body, nullptr, false);
}

std::string Str(const nlohmann::json& j, const char* k) {
  if (!j.is_object() || !j.contains(k)) return "";
  const auto& v = j[k];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

// What an answer that is not 200 means: only "the lease is gone" is a certain refusal; any
// other error (a timeout inside the cluster, no leader) may have been applied.
Outcome ErrorOutcome(const HttpResult& r) {
  if (r.body.find("requested lease not found") != std::string::npos) return Outcome::kFail;
  return Outcome::kUnknown;
}

}  // namespace

std::string Base64Encode(const std::string& in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kB64[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool Base64Decode(const std::string& in, std::string* out) {
  out->clear();
  uint32_t v = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = strchr(kB64, c);
    if (p == nullptr || c == '\0') return false;
    v = (v << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      *out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return true;
}

Status ParseEtcdLeaseOptions(const LockConfig& config, EtcdLeaseOptions* out) {
  KnobReader r(config.algorithm, config.knobs);
  r.Bool("fencing", &out->fencing);
  r.Duration("keepalive_ms", Millis(0), Millis(3600000), &out->keepalive);
  if (!r.status().ok()) return r.status();
  if (out->keepalive.count() == 0) out->keepalive = std::max(Millis(1), config.ttl / 3);
  return Status::Ok();
}

EtcdLeaseLock::EtcdLeaseLock(const LockConfig& config, const EtcdLeaseOptions& options)
    : config_(config),
      options_(options),
      ttl_s_(std::max<int64_t>(1, (config.ttl.count() + 999) / 1000)) {}

EtcdLeaseLock::~EtcdLeaseLock() { StopKeepAlive(); }

void EtcdLeaseLock::StopKeepAlive() {
  if (keepalive_) {
    keepalive_->Stop();
    keepalive_.reset();
  }
}

HttpResult EtcdLeaseLock::Call(const std::string& path, const std::string& body, Millis timeout) {
  size_t m = member_.load() % config_.nodes.size();
  HttpResult r = HttpCall(config_.nodes[m], "POST", path, body, config_.connect_timeout, timeout);
  if (r.outcome != Outcome::kOk || r.status >= 500) {
    member_.compare_exchange_strong(m, (m + 1) % config_.nodes.size());
  }
  return r;
}

bool EtcdLeaseLock::TryRevoke(const std::string& lease_id) {
  // One call (a failed one moves to the next member): a revoke must not hold up an acquire
  // whose deadline passed, nor each attempt of a later one, by a timeout per member.
  HttpResult r =
      Call("/v3/lease/revoke", nlohmann::json{{"ID", lease_id}}.dump(), config_.command_timeout);
  return r.outcome == Outcome::kOk && r.status < 500;
}

void EtcdLeaseLock::Revoke(const std::string& lease_id) {
  if (lease_id.empty() || TryRevoke(lease_id)) return;
  pending_revokes_.push_back(lease_id);
  if (pending_revokes_.size() > kMaxPendingRevokes) pending_revokes_.pop_front();
}

void EtcdLeaseLock::RevokePending() {
  // Oldest first; the first that fails ends the round (the cluster takes no revokes now).
  while (!pending_revokes_.empty() && TryRevoke(pending_revokes_.front())) {
    pending_revokes_.pop_front();
  }
}

bool EtcdLeaseLock::KeepAliveAndRecord(const std::string& key, const std::string& lease_id) {
  std::string token;
  {
    std::lock_guard<std::mutex> l(mu_);
    token = held_token_;
  }
  // Before the lock is granted the keep-alive is not a lock operation: not recorded.
  const LockEventFn no_emit;
  const auto& emit = token.empty() ? no_emit : config_.on_event;
  // "token" names the holder for the owner-aware mutex models (checker/), as a watchdog
  // renewal does.
  nlohmann::json value = {{"token", token}, {"lease", lease_id}, {"ttl_s", ttl_s_}};
  if (emit) emit(1, "invoke", "renew", key, value);
  HttpResult r =
      Call("/v3/lease/keepalive", nlohmann::json{{"ID", lease_id}}.dump(), config_.command_timeout);
  Outcome o = r.outcome;
  std::string error = r.error;
  bool lease_gone = false;
  if (o == Outcome::kOk) {
    // The gateway streams {"result":{...,"TTL":"2"}}; a lease that is gone has no TTL.
    nlohmann::json j = Parse(r.body);
    const nlohmann::json* res = j.is_object() && j.contains("result") ? &j["result"] : nullptr;
    std::string ttl = res ? Str(*res, "TTL") : "";
    if (r.status != 200) {
      o = ErrorOutcome(r);
      error = r.body.substr(0, 200);
      lease_gone = o == Outcome::kFail;
    } else if (ttl.empty() || ttl == "0") {
      o = Outcome::kFail;
      error = "lease gone";
      lease_gone = true;
    }
  }
  if (emit) {
    emit(1, OutcomeName(o), "renew", key,
         o == Outcome::kOk ? value : nlohmann::json{{"error", error}});
  }
  // Keep trying after a refused or unanswered call (a member may be down: the next call goes
  // to another one); stop once a member said the lease is gone. (Stopping on a refused
  // connection let a member restart end a live lease: found by the one-member-down test.)
  return !lease_gone;
}

LockResult EtcdLeaseLock::Acquire(const std::string& key, Nanos deadline) {
  StopKeepAlive();
  LockResult result;
  bool any_unknown = false;
  std::string detail;
  const std::string name = Base64Encode(key);
  for (;;) {
    RevokePending();
    Nanos now = MonotonicNow();
    if (now >= deadline) break;
    Millis left = std::chrono::duration_cast<Millis>(deadline - now);
    // 1. A lease. An unknown grant leaves at most an unused lease that expires by itself.
    HttpResult g = Call("/v3/lease/grant", nlohmann::json{{"TTL", ttl_s_}}.dump(),
                        std::min(left, config_.command_timeout));
    std::string lease_id;
    if (g.outcome == Outcome::kOk && g.status == 200) lease_id = Str(Parse(g.body), "ID");
    if (lease_id.empty()) {
      detail = "lease grant: " + (g.outcome == Outcome::kOk ? g.body.substr(0, 200) : g.error);
      if (MonotonicNow() + config_.retry_delay >= deadline) break;
      SleepFor(config_.retry_delay);
      continue;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      held_token_.clear();
    }
    keepalive_ = std::make_unique<Renewer>(
        options_.keepalive, options_.keepalive, RenewSchedule::kFixedDelay,
        [this, key, lease_id] { return KeepAliveAndRecord(key, lease_id); });
    // 2. The lock: the server answers once we are first in line.
    now = MonotonicNow();
    Millis wait =
        std::max(config_.command_timeout, std::chrono::duration_cast<Millis>(deadline - now));
    HttpResult l =
        Call("/v3/lock/lock", nlohmann::json{{"name", name}, {"lease", lease_id}}.dump(), wait);
    std::string lock_key;
    if (l.outcome == Outcome::kOk && l.status == 200) {
      Base64Decode(Str(Parse(l.body), "key"), &lock_key);
    }
    if (lock_key.empty()) {
      Outcome o = l.outcome == Outcome::kOk ? ErrorOutcome(l) : l.outcome;
      detail = "lock: " + (l.outcome == Outcome::kOk ? l.body.substr(0, 200) : l.error);
      if (o == Outcome::kUnknown) any_unknown = true;
      StopKeepAlive();
      Revoke(lease_id);  // a lock granted after we gave up ends with its lease
      if (MonotonicNow() + config_.retry_delay >= deadline) break;
      SleepFor(config_.retry_delay);
      continue;
    }
    // 3. The key's create revision is the fencing token; its lease must be ours.
    int64_t fence = -1;
    HttpResult q = Call("/v3/kv/range", nlohmann::json{{"key", Base64Encode(lock_key)}}.dump(),
                        config_.command_timeout);
    if (q.outcome == Outcome::kOk && q.status == 200) {
      nlohmann::json j = Parse(q.body);
      if (j.is_object() && j.contains("kvs") && j["kvs"].is_array() && !j["kvs"].empty()) {
        const auto& kv = j["kvs"][0];
        if (Str(kv, "lease") == lease_id) {
          fence = ParseInt(Str(kv, "create_revision")).value_or(-1);
        }
      }
    }
    if (fence < 0) {
      // We may hold the lock but cannot prove it or fence with it: give it up.
      detail = "lock key " + lock_key + " not readable or not ours: " +
               (q.outcome == Outcome::kOk ? q.body.substr(0, 200) : q.error);
      any_unknown = true;
      StopKeepAlive();
      Revoke(lease_id);
      if (MonotonicNow() + config_.retry_delay >= deadline) break;
      SleepFor(config_.retry_delay);
      continue;
    }
    lease_id_ = lease_id;
    result.outcome = Outcome::kOk;
    result.lease.key = key;
    result.lease.token = lock_key;
    result.lease.validity = Millis(ttl_s_ * 1000);
    result.lease.acquired_at = MonotonicNow();
    result.lease.fence = options_.fencing ? fence : -1;
    {
      std::lock_guard<std::mutex> lk(mu_);
      held_token_ = lock_key;  // the running keep-alive records from now on
    }
    return result;
  }
  result.outcome = any_unknown ? Outcome::kUnknown : Outcome::kFail;
  result.detail = detail;
  return result;
}

LockResult EtcdLeaseLock::Release(const Lease& lease) {
  StopKeepAlive();
  LockResult result;
  result.lease = lease;
  HttpResult u = Call("/v3/lock/unlock", nlohmann::json{{"key", Base64Encode(lease.token)}}.dump(),
                      config_.command_timeout);
  if (u.outcome != Outcome::kOk) {
    result.outcome = u.outcome;
    result.detail = "unlock: " + u.error;
  } else if (u.status != 200) {
    result.outcome = ErrorOutcome(u);
    result.detail = "unlock: " + u.body.substr(0, 200);
  } else {
    result.outcome = Outcome::kOk;
  }
  // The lease has no other use: revoking it now (best effort) spares the cluster a TTL.
  Revoke(lease_id_);
  lease_id_.clear();
  return result;
}

}  // namespace locklab::locks
