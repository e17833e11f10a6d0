// BackendServer: what one kind of lab server does differently from the others, so that
// LabNode (harness/lab/lab_cluster.h) runs every kind through one flow and LabCluster starts an
// ensemble without knowing which server it is.
//
// The contract: a BackendServer names its program (for messages); says whether it keeps its
// data in a scratch directory under $TMPDIR (which LabNode makes, sweeps and deletes) and
// prepares that directory once (initdb); readies each launch on a port (the clock file, a
// zoo.cfg) and says how to spawn the server on a port (argv, environment, user, working
// directory; LabNode adds the log and detaches it); waits until the server on an endpoint
// serves (and, after a restart, until it is back); names the processes of the server a
// signal must reach outside its process group (postgres's backends); and says whether its
// nodes are members of one quorum (etcd, ZooKeeper: launched together, each waited for only
// once all run, warmed up together). It holds no state: the node's state is LabNode's, handed
// in as a ServerSite. One class per backend: harness/lab/lab_servers.h; the one factory below makes
// them from a locks::Backend. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "locks/backend.h"
#include "locks/redis_connection.h"

namespace locklab::harness {

struct LabPaths;
struct NodeOptions;
struct SpawnOptions;
class ClockControlFile;

// What a server may know of the node it runs as (valid for the call it is handed to).
struct ServerSite {
  const NodeOptions& options;
  const LabPaths& paths;         // the lab Redis and libfaketime
  const std::string& dir;        // the node's directory (a Redis node's files live there)
  const std::string& scratch;    // the scratch directory ("" when the server keeps none)
  const std::string& log_path;   // the server's stdout and stderr
  const ClockControlFile& clock;
};

class BackendServer {
 public:
  virtual ~BackendServer() = default;

  // The program's name, for messages ("redis-server", "mariadbd", ...).
  virtual std::string program() const = 0;

  // True: the server's data lives in $TMPDIR/locklab-<backend>-XXXXXX (data/ and owner.pid
  // made by LabNode), because a unix socket path must stay under 108 bytes and run
  // directories are deeper than that. False: in the node's directory (Redis).
  virtual bool keeps_scratch() const { return true; }
  // True when the server runs as another user (postgres refuses root): its scratch directory
  // must be reachable by that user, so an untraversable $TMPDIR gives way to /tmp.
  virtual bool runs_as_another_user() const { return false; }
  // Once per node, after the scratch directory is made (postgres: initdb).
  virtual Status PrepareScratch(const ServerSite& site) const;
  // Before each launch on `port` (Start, Launch; not Restart, which keeps port and files).
  virtual Status PrepareLaunch(const ServerSite& site, int port) const;
  // How to spawn the server on `port`: argv, env, unset_env, cwd, run_as_user. May write the
  // files one run needs (Sentinel's config) or remove a dead one's (a stale pid file).
  virtual Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const = 0;

  // How many fresh ports Start() tries: a server that starts in milliseconds tries again
  // when a port picked free was taken before it bound it.
  virtual int start_attempts() const { return 1; }
  // How long Start() and Restart() wait for the server.
  virtual Millis ready_timeout() const { return Millis(20000); }
  // Waits until the server on `endpoint` serves, `timeout` passes or `pid` exits.
  virtual Status WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                             pid_t pid) const = 0;
  // After a restart on the same port: by default the same as WaitServing.
  virtual Status WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                               pid_t pid) const;

  // The server's processes outside its process group (each in a session of its own), which
  // a signal to the group misses: LabNode::Signal sends them the signal too.
  virtual std::vector<pid_t> ProcessesOutsideGroup(pid_t server) const;
  // Before LabNode kills the server's group: kills those processes (so that none survives
  // to hold what a new server needs) and returns them, for LabNode to wait until they are
  // gone.
  virtual std::vector<pid_t> KillOutsideGroup(pid_t server) const;

  // True for members of one quorum (etcd, ZooKeeper): a member serves only once a majority
  // runs, so LabCluster picks every member's ports first (each lists the others), launches
  // them all, then waits for each, then warms them up; and Restart waits only until the
  // member runs (it rejoins on its own).
  virtual bool forms_quorum() const { return false; }
  // A quorum member's ports besides its client port and peer port: ZooKeeper's election port.
  virtual bool member_has_election_port() const { return false; }
  // The members' list every member is given (NodeOptions::initial_cluster), from their
  // names, ids and ports.
  virtual std::string InitialCluster(const std::vector<NodeOptions>& members) const;
  // Once every member serves: proves the quorum takes writes (ZooKeeper: creates /locklab).
  virtual Status WarmUp(const std::vector<locks::Endpoint>& members, Millis timeout) const;
};

// The server of a node of `backend` (a Sentinel when `sentinel`, which only a Redis is).
std::unique_ptr<BackendServer> MakeBackendServer(locks::Backend backend, bool sentinel = false);

// The last `bytes` of the file at `path`, newlines as spaces (for a one-line message).
std::string LogTail(const std::string& path, size_t bytes);

// The line of a server's log at `path` that most likely says why it stopped: among its last
// 16 KiB, the last line naming an error ("error", "fatal", "exception", "panic", "failed",
// "could not", "cannot", "unable", "already in use"; any case) that is not a stack frame,
// else the last non-empty line; at most 200 characters, "" for an empty or missing log.
std::string TellingLogLine(const std::string& path);

// The start-up wait the servers share: asks `ready` every 20 ms until it says the server
// serves, the server process `pid` exits, or `timeout` passes. `ready` sets *why when not;
// the error reads "SERVER on HOST:PORT exited during start: WHY" or "... NOT_YET: WHY".
Status PollUntilServing(const std::string& server, const locks::Endpoint& endpoint,
                        Millis timeout, pid_t pid, const char* not_yet,
                        const std::function<bool(std::string* why)>& ready);

}  // namespace locklab::harness
