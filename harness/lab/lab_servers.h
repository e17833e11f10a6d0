// The lab's servers, one BackendServer (harness/lab/backend_server.h) per backend: how LabNode starts
// each and how it knows the server serves. One implementation file each (redis_server.cc,
// mariadb_server.cc, postgres_server.cc, etcd_server.cc, zookeeper_server.cc); the static
// members are the pieces a test can check without a server (argv, config).
//
// The servers other than Redis keep their data (and a unix socket path, which must stay under
// 108 bytes, run directories being deeper) in a scratch directory under $TMPDIR; their log
// goes to the run directory like a Redis node's. Each finds its program where Debian's
// package puts it, or where an environment variable says; an error names the missing program
// and its package. Thread-compatible (used from the harness's main thread).
#pragma once

#include <string>
#include <vector>

#include "harness/lab/backend_server.h"

namespace locklab::harness {

// A redis-server data node: the lab Redis (Debian's redis source built with MALLOC=libc,
// because the jemalloc build hangs under libfaketime: docs/design.md 2), under libfaketime
// with the node's clock file unless NodeOptions::faketime is false, with the node's
// extra_args; no persistence unless they ask. It starts in milliseconds: Start tries up to
// five fresh ports, waiting 5 s for PING on each.
class RedisServer : public BackendServer {
 public:
  std::string program() const override { return "redis-server"; }
  bool keeps_scratch() const override { return false; }
  // The clock starts at "+0" (the offset a trial's clock faults move).
  Status PrepareLaunch(const ServerSite& site, int port) const override;
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  int start_attempts() const override { return 5; }
  Millis ready_timeout() const override { return Millis(5000); }
  // PING answers PONG (WaitForPing).
  Status WaitServing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) const override;

  // redis-server's argv on `port` keeping its files in `dir` (before NodeOptions::extra_args).
  static std::vector<std::string> Argv(const std::string& redis_server, const std::string& dir,
                                       int port);

 protected:
  // argv + extra_args, libfaketime's environment, the node's directory as cwd.
  void SpawnRedis(const ServerSite& site, std::vector<std::string> argv,
                  SpawnOptions* out) const;
};

// A redis-sentinel (the same binary with --sentinel): NodeOptions::sentinel_config holds its
// monitor lines, written to sentinel.conf in the node's directory before each spawn
// (Sentinel rewrites the file as it runs).
class SentinelServer final : public RedisServer {
 public:
  std::string program() const override { return "redis-sentinel"; }
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  static std::vector<std::string> Argv(const std::string& redis_server, const std::string& conf,
                                       const std::string& dir, int port);
};

// mariadbd (Debian's mariadb-server 10.11): started on an empty data directory (InnoDB makes
// its system tablespace itself; mariadb-install-db's grant tables are not needed because the
// lab server runs --skip-grant-tables: any user name connects, over TCP on 127.0.0.1 only),
// --user=root so it runs as root, no binary log, a small buffer pool, no performance schema.
// Ready = a session answers and the bootstrap (database `locklab`, the article's table) ran.
// Measured on this 2-core machine: about 0.2 s to ready (mariadb-install-db alone takes 3 s,
// which is why it is not used). A restart after kill -9 runs InnoDB crash recovery on the
// same data directory; committed rows survive, row locks do not.
class MariaDbServer final : public BackendServer {
 public:
  std::string program() const override { return "mariadbd"; }
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  Status WaitServing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) const override;

  // LOCKLAB_MARIADBD, else /usr/sbin/mariadbd.
  static Status FindMariadbd(std::string* path);
  // The argv of a mariadbd on `port` keeping its files in `scratch`.
  static std::vector<std::string> Argv(const std::string& mariadbd, const std::string& scratch,
                                       int port);
};

// postgres (Debian's postgresql 15): PostgreSQL refuses to run as root, so initdb and the
// postmaster run as the `postgres` user Debian's package creates (SpawnOptions::run_as_user),
// on a scratch directory handed to that user. initdb runs once per node (about 1 s here;
// trust authentication, user `locklab`, no fsync); the postmaster listens on 127.0.0.1 only
// with no unix socket, fsync and synchronous commit off (advisory locks are in memory
// anyway). Ready = a session answers `SELECT 1`: about 0.1 s. The postmaster's backends are
// its children but each calls setsid(), so they are signalled one by one: the postmaster's
// process group alone is just the postmaster. A restart after kill -9 runs crash recovery on
// the same data directory, and no advisory lock survives it.
class PostgresServer final : public BackendServer {
 public:
  struct Programs {
    std::string bin;               // the directory with postgres and initdb
    std::string user = "postgres"; // who runs them (they refuse root)
  };
  std::string program() const override { return "postgres"; }
  bool runs_as_another_user() const override { return true; }
  // Hands the scratch directory to the postgres user and runs initdb there (its output goes
  // to the node's log; 60 s at most).
  Status PrepareScratch(const ServerSite& site) const override;
  // Also removes the killed postmaster's pid file: a recycled pid in it would make the new
  // one refuse to start.
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  Status WaitServing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) const override;
  // The backends (children of the postmaster, each in a session of its own).
  std::vector<pid_t> ProcessesOutsideGroup(pid_t server) const override;
  // Stops the postmaster first so it forks no backend after the scan, then kills each
  // backend: they would exit on their own once they notice it died, but not at once, and a
  // new postmaster refuses to start while one of them still holds the old shared memory.
  std::vector<pid_t> KillOutsideGroup(pid_t server) const override;

  // LOCKLAB_POSTGRES_BIN, else the newest /usr/lib/postgresql/N/bin; the postgres user must
  // exist.
  static Status FindPrograms(Programs* out);
  // initdb's argv making a cluster in `scratch`/data; the postmaster's on `port`.
  static std::vector<std::string> InitdbArgv(const Programs& programs, const std::string& scratch);
  static std::vector<std::string> Argv(const Programs& programs, const std::string& scratch,
                                       int port);
};

// etcd (Debian's etcd-server 3.4): one member of a loopback cluster, heartbeat 50 ms and
// election timeout 500 ms (the defaults are 100/1000 ms; shorter makes a lost leader
// replaced in about a second). Ready = GET /health answers {"health":"true"}, which needs
// a quorum of members, so a cluster is launched whole before any member is waited for.
class EtcdServer final : public BackendServer {
 public:
  std::string program() const override { return "etcd"; }
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  Status WaitServing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) const override;
  // Its client port accepts connections (a member serves no client request until it has
  // rejoined through raft, even /version waits).
  Status WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                       pid_t pid) const override;
  bool forms_quorum() const override { return true; }
  // "n1=http://127.0.0.1:PEER1,n2=..." (--initial-cluster).
  std::string InitialCluster(const std::vector<NodeOptions>& members) const override;

  // LOCKLAB_ETCD, else /usr/bin/etcd.
  static Status FindEtcd(std::string* path);
  // The argv of etcd member `name` (client port `port`, peer port `peer_port`).
  static std::vector<std::string> Argv(const std::string& etcd, const std::string& name,
                                       const std::string& scratch, int port, int peer_port,
                                       const std::string& initial_cluster,
                                       const std::string& token);
};

// ZooKeeper (Debian's zookeeper 3.8, its jars in /usr/share/java): one member of a loopback
// ensemble, the JVM started directly (QuorumPeerMain on a generated zoo.cfg, the classpath
// Debian's zkEnv.sh uses: zookeeper.jar, whose manifest names the rest, plus slf4j-simple
// so the server logs to stderr), small heap, serial GC and the C1 compiler only (starts
// fastest on 2 cores), no admin server, tickTime 100 ms so sessions of 200 ms (2 ticks) to
// 60 s are allowed. Ready = `srvr` (a four-letter word) says leader or follower, which needs
// a quorum, so an ensemble is launched whole before any member is waited for; then a session
// creates /locklab (WarmUp). Measured here: 1.9-2.5 s to a serving ensemble of 3, most of it
// the JVMs starting (docs/zookeeper.md).
constexpr int kZooKeeperTickMs = 100;  // tickTime; minSessionTimeout = 2 ticks
class ZooKeeperServer final : public BackendServer {
 public:
  struct Programs {
    std::string java = "/usr/bin/java";
    std::string zookeeper_jar = "/usr/share/java/zookeeper.jar";
  };
  std::string program() const override { return "zookeeper"; }
  // data/myid and zoo.cfg (again on each launch: the port may be new).
  Status PrepareLaunch(const ServerSite& site, int port) const override;
  Status PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const override;
  Status WaitServing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) const override;
  // Its client port accepts connections.
  Status WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                       pid_t pid) const override;
  bool forms_quorum() const override { return true; }
  bool member_has_election_port() const override { return true; }
  // zoo.cfg's "server.N=127.0.0.1:QUORUM:ELECTION" lines.
  std::string InitialCluster(const std::vector<NodeOptions>& members) const override;
  // A C-client session on `members` creates /locklab (the lock recipe's parent). Proves the
  // ensemble takes writes, and warms the JVMs' write path, whose first requests take seconds
  // on a loaded machine (the first trials' acquires timed out).
  Status WarmUp(const std::vector<locks::Endpoint>& members, Millis timeout) const override;

  // LOCKLAB_JAVA, LOCKLAB_ZOOKEEPER_JAR, else the defaults above.
  static Status FindPrograms(Programs* out);
  // A member's zoo.cfg (client port `port`; `servers` = the ensemble's "server.N=..." lines)
  // and the JVM's argv running it from `scratch`.
  static std::string Config(const std::string& scratch, int port, const std::string& servers);
  static std::vector<std::string> Argv(const Programs& programs, const std::string& scratch);
};

}  // namespace locklab::harness
