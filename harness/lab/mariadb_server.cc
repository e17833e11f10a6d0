// MariaDbServer (harness/lab/lab_servers.h): mariadbd on an empty data directory, ready once the
// lock table exists.
#include <unistd.h>

#include <cstdlib>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "locks/db_row_lock.h"
#include "locks/mariadb_connection.h"

namespace locklab::harness {

Status MariaDbServer::FindMariadbd(std::string* path) {
  std::string p = "/usr/sbin/mariadbd";
  if (const char* e = getenv("LOCKLAB_MARIADBD")) p = e;
  if (access(p.c_str(), X_OK) != 0) {
    return Status::Infrastructure("mariadbd not found at " + p +
                                  " (apt-get install mariadb-server, or set LOCKLAB_MARIADBD)");
  }
  *path = p;
  return Status::Ok();
}

std::vector<std::string> MariaDbServer::Argv(const std::string& mariadbd,
                                              const std::string& scratch, int port) {
  return {mariadbd,
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

Status MariaDbServer::PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const {
  std::string mariadbd;
  Status s = FindMariadbd(&mariadbd);
  if (!s.ok()) return s;
  out->argv = Argv(mariadbd, site.scratch, port);
  out->unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  out->cwd = site.scratch;
  return Status::Ok();
}

Status MariaDbServer::WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                                  pid_t pid) const {
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

}  // namespace locklab::harness
