#include "lab/lab_servers.h"

#include <pwd.h>
#include <unistd.h>

#include <filesystem>

#include <cstdlib>
#include <functional>
#include <optional>

#include "base/numbers.h"
#include "lab/process.h"
#include "locks/db_row_lock.h"
#include "locks/http_client.h"
#include "locks/mariadb_connection.h"
#include "locks/postgres_connection.h"
#include "locks/zk_session.h"

namespace locklab::harness {

Status ServerPaths::Discover(locks::Backend kind, ServerPaths* out) {
  ServerPaths p;
  if (const char* e = getenv("LOCKLAB_MARIADBD")) p.mariadbd = e;
  if (const char* e = getenv("LOCKLAB_ETCD")) p.etcd = e;
  if (const char* e = getenv("LOCKLAB_JAVA")) p.java = e;
  if (const char* e = getenv("LOCKLAB_ZOOKEEPER_JAR")) p.zookeeper_jar = e;
  if (kind == locks::Backend::kZookeeper && access(p.java.c_str(), X_OK) != 0) {
    return Status::Infrastructure("java not found at " + p.java +
                                  " (apt-get install openjdk-17-jdk-headless, or set LOCKLAB_JAVA)");
  }
  if (kind == locks::Backend::kZookeeper && access(p.zookeeper_jar.c_str(), R_OK) != 0) {
    return Status::Infrastructure("ZooKeeper not found at " + p.zookeeper_jar +
                                  " (apt-get install zookeeper, or set LOCKLAB_ZOOKEEPER_JAR)");
  }
  if (kind == locks::Backend::kMariadb && access(p.mariadbd.c_str(), X_OK) != 0) {
    return Status::Infrastructure("mariadbd not found at " + p.mariadbd +
                                  " (apt-get install mariadb-server, or set LOCKLAB_MARIADBD)");
  }
  if (kind == locks::Backend::kEtcd && access(p.etcd.c_str(), X_OK) != 0) {
    return Status::Infrastructure("etcd not found at " + p.etcd +
                                  " (apt-get install etcd-server, or set LOCKLAB_ETCD)");
  }
  if (kind == locks::Backend::kPostgres) {
    if (const char* e = getenv("LOCKLAB_POSTGRES_BIN")) {
      p.postgres_bin = e;
    } else {
      // The newest installed major version (Debian keeps each in /usr/lib/postgresql/N).
      std::error_code ec;
      int64_t best = -1;
      for (const auto& d : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
        std::optional<int64_t> v = ParseInt(d.path().filename().string(), 0, 9999);
        if (!v) continue;
        if (*v > best && access((d.path() / "bin/postgres").c_str(), X_OK) == 0) {
          best = *v;
          p.postgres_bin = (d.path() / "bin").string();
        }
      }
    }
    if (p.postgres_bin.empty() || access((p.postgres_bin + "/postgres").c_str(), X_OK) != 0 ||
        access((p.postgres_bin + "/initdb").c_str(), X_OK) != 0) {
      return Status::Infrastructure(
          "postgres and initdb not found in " +
          (p.postgres_bin.empty() ? std::string("/usr/lib/postgresql/*/bin") : p.postgres_bin) +
          " (apt-get install postgresql, or set LOCKLAB_POSTGRES_BIN)");
    }
    if (getpwnam(p.postgres_user.c_str()) == nullptr) {
      return Status::Infrastructure("no user '" + p.postgres_user +
                                    "' to run postgres as (apt-get install postgresql makes it)");
    }
  }
  *out = p;
  return Status::Ok();
}

std::vector<std::string> InitdbArgv(const ServerPaths& paths, const std::string& scratch) {
  return {paths.postgres_bin + "/initdb", "--pgdata=" + scratch + "/data", "--username=locklab",
          "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"};
}

std::vector<std::string> PostgresArgv(const ServerPaths& paths, const std::string& scratch,
                                      int port) {
  return {paths.postgres_bin + "/postgres",
          "-D", scratch + "/data",
          "-p", std::to_string(port),
          "-c", "listen_addresses=127.0.0.1",
          "-c", "unix_socket_directories=",
          "-c", "fsync=off",
          "-c", "synchronous_commit=off",
          "-c", "full_page_writes=off",
          "-c", "shared_buffers=16MB",
          "-c", "max_connections=200",
          "-c", "log_min_messages=warning"};
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

std::string ZooKeeperConfig(const std::string& scratch, int port, const std::string& servers) {
  const int tick = kZooKeeperTickMs;
  return "tickTime=" + std::to_string(tick) + "\n" +
         // A follower has 10 s to sync at start (a JVM on a loaded machine is slow), then
         // must answer the leader within 1 s (10 ticks).
         "initLimit=100\nsyncLimit=10\n"
         "dataDir=" + scratch + "/data\n"
         "clientPort=" + std::to_string(port) + "\nclientPortAddress=127.0.0.1\n"
         "minSessionTimeout=" + std::to_string(2 * tick) + "\nmaxSessionTimeout=60000\n"
         // Every client comes from 127.0.0.1 (through the fault proxy): no per-IP limit.
         "maxClientCnxns=0\n"
         "admin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr\n"
         "autopurge.purgeInterval=0\n" + servers;
}

std::vector<std::string> ZooKeeperArgv(const ServerPaths& paths, const std::string& scratch) {
  std::string cp = paths.zookeeper_jar;
  const char* kLogger = "/usr/share/java/slf4j-simple.jar";  // logs to stderr (the node log)
  if (access(kLogger, R_OK) == 0) cp += std::string(":") + kLogger;
  // Small heap, serial GC, C1 only, no hsperfdata files left in /tmp.
  return {paths.java, "-Xmx128m", "-Xss512k", "-XX:-UsePerfData", "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          // No fsync of the transaction log (a lab on a shared disk; a member killed with
          // SIGKILL loses nothing, its writes are in the page cache: only a machine crash
          // would), and a lost peer is given up after 1 s instead of 5 s in leader election.
          "-Dzookeeper.forceSync=no", "-Dzookeeper.cnxTimeout=1000",
          "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", scratch + "/zoo.cfg"};
}

namespace {

// The start-up wait every lab server shares: asks `ready` every 20 ms until it says the server
// serves, the server process `pid` exits, or `timeout` passes. `ready` sets *why when not.
Status PollUntilServing(const std::string& server, const locks::Endpoint& endpoint,
                        Millis timeout, pid_t pid, const char* not_yet,
                        const std::function<bool(std::string* why)>& ready) {
  Nanos end = MonotonicNow() + timeout;
  std::string last;
  for (;;) {
    if (ready(&last)) return Status::Ok();
    std::string where = server + " on " + endpoint.ToString();
    if (pid > 0 && !ProcessAlive(pid)) {
      return Status::Infrastructure(where + " exited during start: " + last);
    }
    if (MonotonicNow() >= end) return Status::Infrastructure(where + " " + not_yet + ": " + last);
    SleepFor(Millis(20));
  }
}

}  // namespace

Status WaitForMariaDb(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) {
  return PollUntilServing("mariadbd", endpoint, timeout, pid, "not ready", [&](std::string* why) {
    locks::MariaDbConnection conn(endpoint, {"locklab", "", Millis(200)});
    locks::SqlResult r = conn.Query("CREATE DATABASE IF NOT EXISTS locklab", Millis(2000));
    if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) {
      r = conn.Query("USE locklab", Millis(2000));
      if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) {
        r = conn.Query(locks::kDistributedLockTableSql, Millis(5000));
      }
      if (r.outcome == locks::Outcome::kOk && r.sql_errno == 0) return true;
    }
    *why = r.error;
    return false;
  });
}

Status WaitForPostgres(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) {
  return PollUntilServing("postgres", endpoint, timeout, pid, "not ready", [&](std::string* why) {
    locks::PostgresConnection conn(endpoint, {"locklab", "postgres", Millis(200)});
    locks::SqlResult r = conn.Query("SELECT 1", Millis(2000));
    *why = r.error;
    return r.outcome == locks::Outcome::kOk && r.sqlstate.empty();
  });
}

Status WaitForEtcd(const locks::Endpoint& endpoint, Millis timeout, pid_t pid, bool need_quorum) {
  return PollUntilServing("etcd", endpoint, timeout, pid, "not healthy", [&](std::string* why) {
    locks::HttpResult r = locks::HttpCall(endpoint, "GET", "/health", "", Millis(200),
                                          Millis(need_quorum ? 1000 : 100));
    // A member serves no client request until it has rejoined through raft (even /version
    // waits), so without a quorum "runs" means: its client port accepts connections.
    if (!need_quorum && r.outcome != locks::Outcome::kFail) return true;
    *why = r.outcome == locks::Outcome::kOk ? r.body : r.error;
    return r.outcome == locks::Outcome::kOk && r.status == 200 &&
           r.body.find("\"health\":\"true\"") != std::string::npos;
  });
}

Status WaitForZooKeeper(const locks::Endpoint& endpoint, Millis timeout, pid_t pid,
                        bool need_quorum) {
  return PollUntilServing("zookeeper", endpoint, timeout, pid, "not serving",
                          [&](std::string* why) {
    std::string reply;
    locks::Outcome o = locks::ZkFourLetterWord(endpoint, "srvr", Millis(500), &reply);
    if (!need_quorum && o != locks::Outcome::kFail) return true;
    *why = o == locks::Outcome::kOk ? reply.substr(0, 200)
                                    : "srvr: " + std::string(locks::OutcomeName(o));
    return o == locks::Outcome::kOk && (reply.find("Mode: leader") != std::string::npos ||
                                        reply.find("Mode: follower") != std::string::npos);
  });
}

Status WarmZooKeeper(const std::vector<locks::Endpoint>& members, Millis timeout) {
  Nanos end = MonotonicNow() + timeout;
  locks::ZkSession session(members, Millis(10000));
  std::string error;
  if (!session.WaitConnected(end, &error)) return Status::Infrastructure("zookeeper: " + error);
  locks::ZkResult r = session.Create("/locklab", "", ZOO_PERSISTENT, end);
  if (r.outcome != locks::Outcome::kOk && r.rc != ZNODEEXISTS) {
    return Status::Infrastructure("zookeeper: create /locklab: " + r.error);
  }
  return Status::Ok();
}

}  // namespace locklab::harness
