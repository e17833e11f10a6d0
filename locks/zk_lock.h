// ZkLock (`zk-lock`, `zk-lock-fenced`): ZooKeeper's lock recipe on the C client, against a
// 3-member lab ensemble (harness/lab/lab_servers.h).
//
// The recipe (ZooKeeper's "Locks" recipe, as Curator's InterProcessMutex runs it): each lock
// object has one session (ZkSession), and the session is the lease: its timeout is the lab
// TTL (knob session_timeout_ms overrides it). Acquire creates an ephemeral sequential node
// /locklab/<key>/lock-<session id>-NNNNNNNNNN (the parents persistent, made once), lists the
// children and holds the lock when its node has the lowest sequence number; else it watches
// its predecessor (exists with a watch) and lists again when that goes, until the acquire
// deadline. Release deletes its node. A holder whose session expires (paused, cut off from
// every member for longer than the timeout) loses its node, and the next in line takes the
// lock while the old holder may still act: the session is a lease like any other.
//
// Unknown outcomes: a create whose answer was lost (ZCONNECTIONLOSS) may have made the node,
// so before creating again the recipe lists the children and takes the one with its own
// session id in the name (the "protected" create of Curator). A call still unanswered at the
// acquire deadline cannot be settled: the lock closes the session (which removes whatever
// node it made, at once or at the session timeout) and the acquire is unknown. An acquire
// that gave up in line deletes its node; if that delete is not answered it closes the session
// too and says unknown, since the node could still come first before the session ends.
//
// Validity and renew: Lease::validity is the negotiated session timeout counted from the
// start of the last round trip that proved the node (a server heard from us then, so the
// session cannot end sooner). Renew is one such round trip: exists on the own node, kOk when
// it is there and owned by our session, kFail when it is gone (the lock was lost), kUnknown
// without an answer in the command timeout.
//
// Fencing (`zk-lock-fenced`): the own node's czxid, the zxid of the transaction that made
// it, is Lease::fence. zxids are the ensemble's one totally ordered transaction counter
// (kept across restarts and leader changes in the log), and a node that comes first in line
// was created after every node that held before it, so each holder's czxid is larger than
// its predecessors'. The fenced resource (workloads/fenced_resource.h) rejects a smaller one.
//
// Thread safety: Acquire/Release/Renew from one thread; the client library's threads only
// touch ZkSession's shared state, and a dropped session is closed on a thread that owns it
// alone.
#pragma once

#include <future>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "locks/lock.h"
#include "locks/zk_session.h"

namespace locklab::locks {

struct ZkLockOptions {
  bool fencing = false;            // hand out czxid as the fencing token (zk-lock-fenced)
  Millis session_timeout{0};       // 0 = the lab TTL
};

Status ParseZkLockOptions(const LockConfig& config, ZkLockOptions* out);

// The sequence number of a sequential node's name ("lock-1f-0000000007" -> 7); -1 if none.
int64_t ZkSequence(const std::string& name);

class ZkLock : public Lock {
 public:
  ZkLock(const LockConfig& config, const ZkLockOptions& options);
  ~ZkLock() override;  // closes the session and waits for the closes under way
  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;
  bool SupportsRenew() const override { return true; }
  LockResult Renew(const Lease& lease) override;

 private:
  // Makes /locklab and /locklab/<key> (once per session); false with *detail when not done.
  bool MakeParents(const std::string& key, Nanos deadline, std::string* detail);
  // Our node under `dir` (by the session id in its name), "" when there is none; *outcome
  // says whether the listing was answered.
  std::string FindOwnNode(const std::string& dir, Nanos deadline, Outcome* outcome);
  // Waits in line with node `own` until it is first (kOk, *fence = its czxid), the deadline
  // (kFail) or an unanswered call (kUnknown); `validity_from` = start of the last round trip.
  // A node of our own session ahead of `own` (a lost create's, see the .cc) is deleted; when
  // that delete is not answered, *unsettled is set: only ending the session settles it.
  Outcome WaitInLine(const std::string& dir, const std::string& own, Nanos deadline,
                     Nanos* validity_from, std::string* detail, bool* unsettled);
  // Ends the session: its nodes go with it. The next acquire starts a new one. The close
  // runs on a thread of its own: zookeeper_close waits up to 1.5 s for a stopped member's
  // answer, which must not stretch an acquire past its deadline.
  void DropSession();
  std::string OwnPrefix() const;

  LockConfig config_;
  ZkLockOptions options_;
  std::unique_ptr<ZkSession> session_;
  std::set<std::string> parents_made_;  // keys whose /locklab/<key> this session saw exist
  std::vector<std::future<void>> closing_;  // dropped sessions being closed (joined at the end)
};

}  // namespace locklab::locks
