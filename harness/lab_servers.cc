#include "harness/lab_servers.h"

#include <unistd.h>

#include <cstdlib>

#include "harness/process.h"
#include "locks/db_row_lock.h"
#include "locks/http_client.h"
#include "locks/mariadb_connection.h"

namespace locklab::harness {

Status ServerPaths::Discover(const std::string& kind, ServerPaths* out) {
  ServerPaths p;
  if (const char* e = getenv("LOCKLAB_MARIADBD")) p.mariadbd = e;
  if (const char* e = getenv("LOCKLAB_ETCD")) p.etcd = e;
  if (kind == "mariadb" && access(p.mariadbd.c_str(), X_OK) != 0) {
    return Status::Infrastructure("mariadbd not found at " + p.mariadbd +
                                  " (apt-get install mariadb-server, or set LOCKLAB_MARIADBD)");
  }
  if (kind == "etcd" && access(p.etcd.c_str(), X_OK) != 0) {
    return Status::Infrastructure("etcd not found at " + p.etcd +
                                  " (apt-get install etcd-server, or set LOCKLAB_ETCD)");
  }
  *out = p;
  return Status::Ok();
}

std::vector<std::string> MariaDbArgv(const ServerPaths& paths, const std::string& scratch,
                                     int port) {
  return {paths.mariadbd,
          "--no-defaults",
          "--datadir=" + scratch + "/data",
          "--port=" + std::to_string(port),
          "--bind-address=127.0.0.1",
          "--socket=" + scratch + "/mysqld.sock",
          "--pid-file=" + scratch + "/mysqld.pid",
          "--user=root",
          "--skip-grant-tables",
          "--skip-name-resolve",
          "--skip-log-bin",
          "--performance-schema=0",
          "--innodb-buffer-pool-size=8M",
          "--innodb-log-file-size=4M",
          "--innodb-flush-log-at-trx-commit=2",
          "--max-connections=200"};
}

std::vector<std::string> EtcdArgv(const ServerPaths& paths, const std::string& name,
                                  const std::string& scratch, int port, int peer_port,
                                  const std::string& initial_cluster, const std::string& token) {
  std::string client = "http://127.0.0.1:" + std::to_string(port);
  std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
  return {paths.etcd,
          "--name",
          name,
          "--data-dir",
          scratch + "/data",
          "--listen-client-urls",
          client,
          "--advertise-client-urls",
          client,
          "--listen-peer-urls",
          peer,
          "--initial-advertise-peer-urls",
          peer,
          "--initial-cluster",
          initial_cluster,
          "--initial-cluster-state",
          "new",
          "--initial-cluster-token",
          token,
          "--heartbeat-interval",
          "50",
          "--election-timeout",
          "500",
          "--logger",
          "zap",
          "--log-outputs",
          "stderr"};
}

Status WaitForMariaDb(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) {
  Nanos end = MonotonicNow() + timeout;
  std::string last;
  for (;;) {
    locks::MariaDbConnection conn(endpoint, {"locklab", "", Millis(200)});
    locks::SqlResult r = conn.Query("CREATE DATABASE IF NOT EXISTS locklab", Millis(2000));
    if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) {
      r = conn.Query("USE locklab", Millis(2000));
      if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) {
        r = conn.Query(locks::kDistributedLockTableSql, Millis(5000));
      }
      if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) return Status::Ok();
    }
    last = r.error;
    if (pid > 0 && !ProcessAlive(pid)) {
      return Status::Infrastructure("mariadbd on " + endpoint.ToString() +
                                    " exited during start: " + last);
    }
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("mariadbd on " + endpoint.ToString() + " not ready: " + last);
    }
    SleepFor(Millis(20));
  }
}

Status WaitForEtcd(const locks::Endpoint& endpoint, Millis timeout, pid_t pid, bool need_quorum) {
  Nanos end = MonotonicNow() + timeout;
  std::string last;
  for (;;) {
    locks::HttpResult r = locks::HttpCall(endpoint, "GET", "/health", "", Millis(200),
                                          Millis(need_quorum ? 1000 : 100));
    // A member serves no client request until it has rejoined through raft (even /version
    // waits), so without a quorum "runs" means: its client port accepts connections.
    if (!need_quorum && r.outcome != locks::Outcome::kFail) return Status::Ok();
    if (r.outcome == locks::Outcome::kOk && r.status == 200 &&
        r.body.find("\"health\":\"true\"") != std::string::npos) {
      return Status::Ok();
    }
    last = r.outcome == locks::Outcome::kOk ? r.body : r.error;
    if (pid > 0 && !ProcessAlive(pid)) {
      return Status::Infrastructure("etcd on " + endpoint.ToString() + " exited during start");
    }
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("etcd on " + endpoint.ToString() + " not healthy: " + last);
    }
    SleepFor(Millis(20));
  }
}

}  // namespace locklab::harness
