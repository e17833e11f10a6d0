// ExternalEndpoints: a trial against the user's own servers (--endpoints redis://host:port,...)
// instead of lab-started nodes: the first LockNodes() are the lock's nodes n1..nN, the next
// one (else n1's server) holds the guarded counters.
//
// Open() resolves each server to IPv4 (the fault proxy dials IPv4), checks that it answers
// and deletes what an earlier run left under the lab's keys (lock:<i>, fence:lock:<i>,
// counter:<i>), so the counter starts at 0 as on a fresh lab node. The lab neither starts
// nor stops these servers. With --endpoint-control DIR it can still act on them through the
// files docker/node-entrypoint.sh watches: DIR/nN.pid (the server's pid), DIR/nN.down (keep
// it down) and DIR/nN (its libfaketime clock offset); Open() then brings every node up with
// a true clock and applies the faults' node settings with CONFIG SET. Without it, node
// faults find no process (Pause/Resume/Kill do nothing; Restart and SetClock say so).
// Not thread-safe: the trial's thread uses it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/scenario/run_options.h"
#include "harness/trial/trial_recorder.h"
#include "locks/lock.h"

namespace locklab::harness {

class ExternalEndpoints {
 public:
  // `options` (its endpoints, endpoint_control and keys) and `recorder` (lab.log) outlive it.
  ExternalEndpoints(const RunOptions* options, TrialRecorder* recorder)
      : o_(options), recorder_(recorder) {}

  // `node_args`: the faults' redis-server arguments ("--appendfsync", "always", ...).
  Status Open(const std::vector<std::string>& node_args);

  int node_count() const { return static_cast<int>(nodes_.size()); }
  // Lock node n (1-based) or the resource node (0).
  const locks::Endpoint& endpoint(int n) const { return n == 0 ? resource_ : nodes_[n - 1]; }

  bool Pause(int n);   // SIGSTOP its server
  bool Resume(int n);  // SIGCONT
  void Kill(int n);    // down until Restart()
  Status Restart(int n);
  Status SetClock(int n, const std::string& offset);
  // Node n's server pid from DIR/nN.pid (--endpoint-control), 0 when the lab sees none: a
  // fault's evidence looks at this process (it must run on this machine's /proc).
  pid_t ControlledPid(int n) const { return o_->endpoint_control.empty() ? 0 : ServerPid(n); }

 private:
  // DIR/n<N>, node N's control files' stem.
  std::string ControlPath(int n) const { return o_->endpoint_control + "/n" + std::to_string(n); }
  // Node N's server pid from DIR/nN.pid, 0 when none (or not a redis-server).
  pid_t ServerPid(int n) const;
  Status PrepareControlledNode(int n, const std::vector<std::string>& node_args);

  const RunOptions* o_;
  TrialRecorder* recorder_;
  std::vector<locks::Endpoint> nodes_;
  locks::Endpoint resource_;
};

}  // namespace locklab::harness
