// EtcdLeaseLock (`etcd-lease`): etcd's v3 lock API with a lease and keep-alive, over the
// JSON gateway of a 3-member etcd cluster (Debian's etcd-server 3.4).
//
// Acquire: POST /v3/lease/grant {"TTL": s} (s = the lab TTL rounded up to whole seconds, the
// API's unit; etcd raises a TTL below its minimum, 1.5 election timeouts, on its own), then
// POST /v3/lock/lock {"name": base64(key), "lease": id}, which blocks on the server until
// every lock key of that name with a smaller create revision is gone; the answer names our
// lock key (name/lease-id). Then POST /v3/kv/range on that key: its create_revision is the
// fencing token (Lease::fence) and its lease must be ours. A keep-alive thread (worker 1)
// sends POST /v3/lease/keepalive every TTL/3 (knob keepalive_ms) from the lease grant on,
// as etcd's own concurrency.Session does: the lease's TTL runs from the grant, and the lock
// call may wait longer than a TTL for the previous holder (a first keep-alive only after the
// lock was granted let the lease expire under the new holder: found by the lab, restart
// cell). Keep-alives are recorded as `renew` events while the lock is held; one that finds
// the lease gone (no TTL in the answer) stops.
// Release: stop the keep-alive, POST /v3/lock/unlock {"key": ...}, then revoke the lease.
//
// Why the create revision fences: etcd's revision is one cluster-wide counter raised by
// every write and kept across restarts and leader changes (it is in the raft log), and the
// lock API grants in create-revision order, so each new holder's key is newer than every
// earlier holder's. A holder whose lease expired while it was paused comes back with an
// older token, and the fenced resource (workloads/fenced_resource.h) rejects its write.
// Knob fencing=false hands out no token: then nothing stops the paused holder's write.
//
// Failures: every call goes to one member at a time; a call that fails or times out moves
// to the next member. A lock call with no answer in time is unknown: the lease is revoked
// so a lock granted after we gave up does not linger, and the next try starts over with a
// new lease. (Not a retry with the same lease: etcd 3.4's lock call deletes its key when its
// caller goes away, maybe late, and would take the key from under the retry.) A revoke
// that fails (the member down, or no leader yet) is tried again, on the next member,
// before each later attempt. A lease left behind keeps its key ahead of every waiter, and
// each leader change extends every lease: with the leader killed every 1.3 s, orphans from
// lost revokes held the lock for seconds (found by the one-member-down chaos test on a
// loaded machine).
//
// Thread safety: Acquire/Release from one thread; the keep-alive thread only does HTTP
// calls on its own sockets and reports through LockConfig::on_event.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "locks/http_client.h"
#include "locks/lock.h"
#include "locks/renewer.h"

namespace locklab::locks {

struct EtcdLeaseOptions {
  bool fencing = true;  // hand out the key's create revision as the fencing token
  Millis keepalive{0};  // time between keep-alives; 0 = TTL/3
};

Status ParseEtcdLeaseOptions(const LockConfig& config, EtcdLeaseOptions* out);

std::string Base64Encode(const std::string& in);
bool Base64Decode(const std::string& in, std::string* out);

class EtcdLeaseLock : public Lock {
 public:
  EtcdLeaseLock(const LockConfig& config, const EtcdLeaseOptions& options);
  ~EtcdLeaseLock() override;
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;

 private:
  // One JSON call to the current member; moves to the next member on anything but a whole
  // answer. Thread-safe (the member index is atomic).
  HttpResult Call(const std::string& path, const std::string& body, Millis timeout);
  // Revokes `lease_id`, or keeps it for RevokePending when the member called did not answer.
  void Revoke(const std::string& lease_id);
  bool TryRevoke(const std::string& lease_id);  // one call; true when a member answered
  void RevokePending();
  bool KeepAliveAndRecord(const std::string& key, const std::string& lease_id);
  void StopKeepAlive();

  LockConfig config_;
  EtcdLeaseOptions options_;
  int64_t ttl_s_;
  std::atomic<size_t> member_{0};
  std::unique_ptr<Renewer> keepalive_;
  std::string lease_id_;  // the current lease (decimal, as the gateway writes it)
  static constexpr size_t kMaxPendingRevokes = 16;
  std::deque<std::string> pending_revokes_;  // leases no member took a revoke for yet
  std::mutex mu_;
  std::string held_token_;  // guarded by mu_: the lock key while held, "" before (not recorded)
};

}  // namespace locklab::locks
