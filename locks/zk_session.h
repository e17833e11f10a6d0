// ZkSession: one ZooKeeper session on the C client (libzookeeper_mt), with calls that wait
// for their answer no longer than a deadline the caller gives.
//
// The multithreaded C client runs two threads of its own per handle: an I/O thread and a
// completion thread that calls watchers and completions. Everything those callbacks touch
// lives in objects they share with the caller (a Call per request, held by shared_ptr, so a
// completion that arrives after the caller gave up writes into an object nobody reads; the
// session's state behind one mutex), never in the lock object. The caller reads the session
// only through the accessors below, which take that mutex. zookeeper_close() joins the
// client's threads, so no callback runs once the destructor returned.
//
// Outcomes (docs/design.md 3.1): ZOK is kOk; an answer of the ensemble (ZNONODE, ZNODEEXISTS,
// ZNOTEMPTY, ZBADVERSION, ...) is a definite kFail; ZSESSIONEXPIRED / ZINVALIDSTATE (the
// session is gone, and with it every ephemeral node it made) are kFail too; no answer before
// the deadline, ZCONNECTIONLOSS, ZOPERATIONTIMEOUT, ZCLOSING and system errors are kUnknown
// (the request may have been applied). A call that timed out on our side may still be queued
// in the client: the caller that cannot settle it closes the session (ZkLock does).
//
// Session events: the client reports CONNECTING while it looks for a member (the session
// lives on in the ensemble up to its timeout), CONNECTED, and EXPIRED once a member told it
// the session is gone; an expired handle is dead and the caller makes a new session.
// The client tries the members in the order given (zoo_deterministic_conn_order): n1 first,
// the next one when it cannot reach it, so trials replay and n1's faults hit its clients.
// Thread safety: one caller thread per session (the lock's); the accessors are thread-safe.
#pragma once

#include <zookeeper/zookeeper.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "locks/outcome.h"

namespace locklab::locks {

struct ZkResult {
  Outcome outcome = Outcome::kUnknown;
  int rc = ZOK;                       // the client's return code (ZOK, ZNONODE, ...)
  bool timed_out = false;             // no answer before the deadline: still queued
  std::string path;                   // create: the node made (with its sequence number)
  Stat stat{};                        // create, exists: the node's stat
  std::vector<std::string> children;  // children: the names (not paths)
  std::string error;                  // why, when not kOk ("ZNONODE", "no answer in 200 ms")
};

// What a return code means for the lock (above).
Outcome ZkOutcome(int rc);

// A four-letter word ("srvr", "ruok") to a member: its whole answer in *reply. kFail when the
// connection was refused; kUnknown when there was no whole answer within `timeout`.
Outcome ZkFourLetterWord(const Endpoint& endpoint, const std::string& word, Millis timeout,
                         std::string* reply);

class ZkSession {
 public:
  // `nodes` = the ensemble's members (through the fault proxy in a trial); `session_timeout`
  // = the requested timeout (the ensemble clamps it to [2, 600] ticks: lab_servers.h).
  ZkSession(const std::vector<Endpoint>& nodes, Millis session_timeout);
  ~ZkSession();
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Starts the handle (once) and waits until the session is connected or `deadline`. False
  // with *error when it is not (nothing was sent on its behalf yet, or it expired).
  bool WaitConnected(Nanos deadline, std::string* error);
  bool Connected() const;
  bool Expired() const;
  int64_t session_id() const;          // 0 before the first connection
  Millis negotiated_timeout() const;   // the ensemble's answer; the request before that

  // Changes with every watcher event (a watched node's change, a session state change):
  // WaitForEvent returns once it differs from `seen` or at `deadline`.
  uint64_t generation() const;
  void WaitForEvent(uint64_t seen, Nanos deadline) const;

  // The asynchronous calls, each waiting for its completion until `deadline`.
  ZkResult Create(const std::string& path, const std::string& data, int mode, Nanos deadline);
  ZkResult Children(const std::string& path, Nanos deadline);
  // watch = leave a watch on `path` (fires on its creation or deletion: generation()).
  ZkResult Exists(const std::string& path, bool watch, Nanos deadline);
  ZkResult Delete(const std::string& path, Nanos deadline);

  struct Shared;  // the state the client's threads write (zk_session.cc)
  struct Call;    // one request's answer

 private:
  ZkResult Await(const std::shared_ptr<Call>& call, int submit_rc, Nanos deadline);
  std::string hosts_;
  Millis timeout_;
  std::unique_ptr<Shared> shared_;
  zhandle_t* zh_ = nullptr;
};

}  // namespace locklab::locks
