// Lab servers other than Redis: how LabNode starts mariadbd and etcd, and how it knows they
// serve.
//
// mariadbd (Debian's mariadb-server 10.11): started on an empty data directory (InnoDB makes
// its system tablespace itself; mariadb-install-db's grant tables are not needed because the
// lab server runs --skip-grant-tables: any user name connects, over TCP on 127.0.0.1 only),
// --user=root so it runs as root, no binary log, a small buffer pool, no performance schema.
// Ready = a session answers and the bootstrap (database `locklab`, the article's table) ran.
// Measured on this 2-core machine: about 0.2 s to ready (mariadb-install-db alone takes 3 s,
// which is why it is not used). A restart after kill -9 runs InnoDB crash recovery on the
// same data directory; committed rows survive, row locks do not.
//
// postgres (Debian's postgresql 15): PostgreSQL refuses to run as root, so initdb and the
// postmaster run as the `postgres` user Debian's package creates (SpawnOptions::run_as_user),
// on a scratch directory handed to that user. initdb runs once per node (about 1 s here;
// trust authentication, user `locklab`, no fsync); the postmaster listens on 127.0.0.1 only
// with no unix socket, fsync and synchronous commit off (advisory locks are in memory
// anyway). Ready = a session answers `SELECT 1`: about 0.1 s. The postmaster's backends are
// its children but each calls setsid(), so LabNode signals them one by one (Signal, Kill):
// the postmaster's process group alone is just the postmaster. A restart after kill -9 runs
// crash recovery on the same data directory, and no advisory lock survives it.
//
// etcd (Debian's etcd-server 3.4): one member of a loopback cluster, heartbeat 50 ms and
// election timeout 500 ms (the defaults are 100/1000 ms; shorter makes a lost leader
// replaced in about a second). Ready = GET /health answers {"health":"true"}, which needs
// a quorum of members, so a cluster is launched whole before any member is waited for.
//
// ZooKeeper (Debian's zookeeper 3.8, its jars in /usr/share/java): one member of a loopback
// ensemble, the JVM started directly (QuorumPeerMain on a generated zoo.cfg, the classpath
// Debian's zkEnv.sh uses: zookeeper.jar, whose manifest names the rest, plus slf4j-simple
// so the server logs to stderr), small heap, serial GC and the C1 compiler only (starts
// fastest on 2 cores), no admin server, tickTime 100 ms so sessions of 200 ms (2 ticks) to
// 60 s are allowed. Ready = `srvr` (a four-letter word) says leader or follower, which needs
// a quorum, so an ensemble is launched whole before any member is waited for; then a session
// creates /locklab (WarmZooKeeper). Measured here: 1.9-2.5 s to a serving ensemble of 3,
// most of it the JVMs starting (docs/zookeeper.md).
//
// The socket path and data live in a scratch directory under $TMPDIR (a unix socket path
// must stay under 108 bytes, run directories are deeper than that); the log goes to the run
// directory like a Redis node's. Thread-compatible (used from the harness's main thread).
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "locks/backend.h"
#include "locks/redis_connection.h"

namespace locklab::harness {

struct ServerPaths {
  std::string mariadbd = "/usr/sbin/mariadbd";
  std::string etcd = "/usr/bin/etcd";
  std::string java = "/usr/bin/java";
  std::string zookeeper_jar = "/usr/share/java/zookeeper.jar";
  // The directory with postgres and initdb: the newest /usr/lib/postgresql/N/bin.
  std::string postgres_bin;
  std::string postgres_user = "postgres";  // who runs them (they refuse root)
  // LOCKLAB_MARIADBD / LOCKLAB_ETCD / LOCKLAB_POSTGRES_BIN / LOCKLAB_JAVA /
  // LOCKLAB_ZOOKEEPER_JAR override; an error names the
  // missing program and package.
  static Status Discover(locks::Backend kind, ServerPaths* out);
};

// The argv of a mariadbd on `port` keeping its files in `scratch`.
std::vector<std::string> MariaDbArgv(const ServerPaths& paths, const std::string& scratch,
                                     int port);
// initdb's argv making a cluster in `scratch`/data; the postmaster's on `port`.
std::vector<std::string> InitdbArgv(const ServerPaths& paths, const std::string& scratch);
std::vector<std::string> PostgresArgv(const ServerPaths& paths, const std::string& scratch,
                                      int port);
// The argv of etcd member `name` (client port `port`, peer port `peer_port`).
std::vector<std::string> EtcdArgv(const ServerPaths& paths, const std::string& name,
                                  const std::string& scratch, int port, int peer_port,
                                  const std::string& initial_cluster, const std::string& token);
// A ZooKeeper member: its zoo.cfg (client port `port`; `servers` = the ensemble's
// "server.N=127.0.0.1:QUORUM:ELECTION" lines) and the JVM's argv running it from `scratch`.
constexpr int kZooKeeperTickMs = 100;  // tickTime; minSessionTimeout = 2 ticks
std::string ZooKeeperConfig(const std::string& scratch, int port, const std::string& servers);
std::vector<std::string> ZooKeeperArgv(const ServerPaths& paths, const std::string& scratch);

// Waits until the server on `endpoint` serves (see above) or `timeout` passes or `pid` exits.
Status WaitForMariaDb(const locks::Endpoint& endpoint, Millis timeout, pid_t pid);
Status WaitForPostgres(const locks::Endpoint& endpoint, Millis timeout, pid_t pid);
// need_quorum = false: its client port accepting connections will do (the member runs,
// maybe alone, and rejoins the cluster on its own).
Status WaitForEtcd(const locks::Endpoint& endpoint, Millis timeout, pid_t pid,
                   bool need_quorum = true);
// need_quorum = false: the member's client port accepting connections will do.
Status WaitForZooKeeper(const locks::Endpoint& endpoint, Millis timeout, pid_t pid,
                        bool need_quorum = true);
// Once every member serves: a C-client session on `members` creates /locklab (the lock
// recipe's parent). Proves the ensemble takes writes, and warms the JVMs' write path, whose
// first requests take seconds on a loaded machine (the first trials' acquires timed out).
Status WarmZooKeeper(const std::vector<locks::Endpoint>& members, Millis timeout);

}  // namespace locklab::harness
