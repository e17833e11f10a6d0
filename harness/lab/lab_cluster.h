// LabCluster: a trial's servers on loopback, one directory each: start, kill, restart, wait
// until ready, their endpoints.
//
// A LabNode is one server of any backend; what differs per backend (program, scratch
// directory, argv, readiness, the processes a signal must reach, quorum membership) is its
// BackendServer (harness/lab/backend_server.h, one class per backend in harness/lab/lab_servers.h), so LabNode
// itself has one flow for all. A Redis node is the "lab Redis" (Debian's redis source built
// with MALLOC=libc, because the jemalloc build hangs under libfaketime: docs/design.md 2)
// started under libfaketime with its own ClockControlFile holding the node's clock offset
// ("+0" at start; "+20s" steps it forward while it serves). Each node has its own process
// group, log file and PR_SET_PDEATHSIG, and is killed on every exit path (destructor, Stop,
// the harness's death). Nodes bind 127.0.0.1 only. The resource node (a Redis) holds what
// the lock protects and is never faulted.
// Not thread-safe: owned by the harness's main thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/lab/backend_server.h"
#include "harness/lab/process.h"
#include "locks/backend.h"
#include "locks/redis_connection.h"

namespace locklab::harness {

// Where the lab's external programs are. Discover() reads LOCKLAB_REDIS_SERVER and
// LOCKLAB_LIBFAKETIME, else the set-up's cache (.lab/redis/bin) and Debian's libfaketime.
struct LabPaths {
  std::string redis_server;
  std::string libfaketime;
  static Status Discover(LabPaths* out);
};

// The libfaketime control file of one process: its content is the clock offset
// ("+0", "+20s", "-30s", "+0 x2.0" for a rate). Writes are atomic (write + rename).
class ClockControlFile {
 public:
  explicit ClockControlFile(std::string path) : path_(std::move(path)) {}
  Status Set(const std::string& spec) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct NodeOptions {
  std::string name;                      // "n1", "resource"
  bool faketime = true;                  // run under libfaketime with a control file
  std::vector<std::string> extra_args;   // e.g. {"--appendonly","yes"}
  bool detached = false;                 // outlive the harness (cluster up)
  // A redis-sentinel instead of a data node: `sentinel_config` holds its monitor lines
  // (the file is written to the node's directory; Sentinel rewrites it as it runs).
  bool sentinel = false;
  std::string sentinel_config;
  // What server this node is (its BackendServer, harness/lab/lab_servers.h): Redis (above), MariaDB
  // (mariadbd), Postgres (a postmaster), etcd (one member of an etcd cluster) or ZooKeeper
  // (one member of a ZooKeeper ensemble). Non-Redis nodes ignore `faketime` and
  // `extra_args` (those are redis-server flags) and keep their data in a scratch directory
  // under $TMPDIR that the node deletes when it is destroyed.
  locks::Backend kind = locks::Backend::kRedis;
  int port = 0;                  // a preset client port (etcd members know each other's); 0 = pick
  int peer_port = 0;             // etcd: the member's peer port; zookeeper: its quorum port
  int election_port = 0;         // zookeeper: the member's leader-election port
  int member_id = 0;             // zookeeper: its myid (1..N)
  // etcd: "n1=http://127.0.0.1:P1,n2=..."; zookeeper: the "server.N=..." lines of zoo.cfg
  std::string initial_cluster;
  std::string cluster_token;     // etcd: --initial-cluster-token
};

class LabNode {
 public:
  LabNode(NodeOptions options, std::string dir, const LabPaths& paths);
  ~LabNode();
  LabNode(const LabNode&) = delete;
  LabNode& operator=(const LabNode&) = delete;

  // Launch() then WaitReady() for the server's ready timeout (a Redis: PING within 5 s,
  // tried on up to five fresh ports when the chosen one was taken in between; the others:
  // 20 s, one port).
  Status Start();
  // Starts again on the same port and directory (after Kill()) and waits until it is back
  // (a quorum member: until it runs; it rejoins on its own). A failure names the node and
  // quotes its log's tail, as Start's does.
  Status Restart();
  // Start() in two halves, for servers that only answer once their peers run (etcd):
  // Launch() spawns on the preset or a picked port, WaitReady() waits for it to serve.
  Status Launch();
  Status WaitReady(Millis timeout);
  // SIGKILL and reap; no-op when not running. The server's processes outside its process
  // group (a postgres node's backends, each in a session of its own) are killed too, and
  // are gone when Kill returns.
  void Kill();
  // Sends `sig` (SIGSTOP, SIGCONT) to every process of the server: its process group and
  // those outside it (a stopped postmaster alone would leave the sessions that hold locks
  // running). False when the server is not running.
  bool Signal(int sig);
  bool Running() const;

  const std::string& name() const { return options_.name; }
  // The server it runs (NodeOptions::kind) and its program's name, for messages.
  locks::Backend kind() const { return options_.kind; }
  std::string program() const { return server_->program(); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  // Non-Redis nodes: the scratch directory holding the server's data ("" for Redis).
  const std::string& scratch() const { return scratch_; }
  const std::string& log_path() const { return log_path_; }
  locks::Endpoint endpoint() const { return {"127.0.0.1", port_}; }
  const ClockControlFile& clock() const { return clock_; }

 private:
  ServerSite Site() const { return {options_, paths_, dir_, scratch_, log_path_, clock_}; }
  // The scratch directory under $TMPDIR (data/ and owner.pid in it); sets scratch_.
  Status MakeScratch();
  Status SpawnOnPort(int port);
  // `why` as a start's failure: "node NAME: WHY; log: TAIL"; the server is killed.
  Status StartFailed(const Status& why);
  // After the server answered on port_: the answer came from it. Another process can take
  // the port between its pick and the server's bind; that process then answers the
  // readiness probe (a Redis its PING, another ensemble's member its "srvr") while ours
  // exits with "address already in use". Read from /proc: the port's listening socket is
  // held by the server or a process of its own (a descendant, or one that left its group).
  // The failure says "address already in use", so a start tries other ports.
  Status ConfirmServesItsPort() const;
  NodeOptions options_;
  std::unique_ptr<BackendServer> server_;
  std::string scratch_;  // non-Redis data directory (deleted with the node)
  std::string dir_;
  std::string log_path_;
  LabPaths paths_;
  ClockControlFile clock_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::vector<PortHold> holds_;  // the node's ports, held while it lives (harness/lab/process.h)
};

class LabCluster {
 public:
  // `dir` holds one sub-directory per node (created).
  LabCluster(std::string dir, LabPaths paths) : dir_(std::move(dir)), paths_(std::move(paths)) {}
  ~LabCluster() { Stop(); }

  // Starts `lock_nodes` nodes n1..nN of server `kind` (with `node_args` added) plus the
  // resource node (a Redis). Quorum members (etcd, ZooKeeper) form one cluster, launched
  // whole and warmed up (BackendServer::forms_quorum).
  Status Start(int lock_nodes, bool detached = false,
               const std::vector<std::string>& node_args = {},
               locks::Backend kind = locks::Backend::kRedis);
  void Stop();

  std::vector<std::unique_ptr<LabNode>>& nodes() { return nodes_; }
  LabNode& resource() { return *resource_; }
  std::vector<locks::Endpoint> lock_endpoints() const;

 private:
  // One attempt at an etcd cluster or a ZooKeeper ensemble (`kind`, served by `server`) of
  // `count` members (ports picked first: each member lists the others' peer addresses).
  Status StartMembers(int count, bool detached, locks::Backend kind,
                      const BackendServer& server);
  // A lock node in its own directory, kept before it starts so that Stop() also cleans up
  // one that failed to.
  LabNode& AddNode(const NodeOptions& o);
  std::string dir_;
  LabPaths paths_;
  std::vector<std::unique_ptr<LabNode>> nodes_;
  std::unique_ptr<LabNode> resource_;
};

// Waits until PING answers PONG on `endpoint` or the timeout passes.
Status WaitForPing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid);

}  // namespace locklab::harness
