// PostgresServer (harness/lab/lab_servers.h): initdb once, then a postmaster as the postgres user;
// its backends live outside its process group.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/numbers.h"
#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "locks/postgres_connection.h"

namespace locklab::harness {

Status PostgresServer::FindPrograms(Programs* out) {
  Programs p;
  if (const char* e = getenv("LOCKLAB_POSTGRES_BIN")) {
    p.bin = e;
  } else {
    // The newest installed major version (Debian keeps each in /usr/lib/postgresql/N).
    std::error_code ec;
    int64_t best = -1;
    for (const auto& d : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      std::optional<int64_t> v = ParseInt(d.path().filename().string(), 0, 9999);
      if (!v) continue;
      if (*v > best && access((d.path() / "bin/postgres").c_str(), X_OK) == 0) {
        best = *v;
        p.bin = (d.path() / "bin").string();
      }
    }
  }
  if (p.bin.empty() || access((p.bin + "/postgres").c_str(), X_OK) != 0 ||
      access((p.bin + "/initdb").c_str(), X_OK) != 0) {
    return Status::Infrastructure(
        "postgres and initdb not found in " +
        (p.bin.empty() ? std::string("/usr/lib/postgresql/*/bin") : p.bin) +
        " (apt-get install postgresql, or set LOCKLAB_POSTGRES_BIN)");
  }
  if (getpwnam(p.user.c_str()) == nullptr) {
    return Status::Infrastructure("no user '" + p.user +
                                  "' to run postgres as (apt-get install postgresql makes it)");
  }
  *out = p;
  return Status::Ok();
}

std::vector<std::string> PostgresServer::InitdbArgv(const Programs& programs,
                                                    const std::string& scratch) {
  return {programs.bin + "/initdb", "--pgdata=" + scratch + "/data", "--username=locklab",
          "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"};
}

std::vector<std::string> PostgresServer::Argv(const Programs& programs,
                                              const std::string& scratch, int port) {
  return {programs.bin + "/postgres",
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

Status PostgresServer::PrepareScratch(const ServerSite& site) const {
  Programs programs;
  Status s = FindPrograms(&programs);
  if (!s.ok()) return s;
  passwd* pw = getpwnam(programs.user.c_str());
  if (pw == nullptr) return Status::Infrastructure("no user '" + programs.user + "'");
  for (const std::string& d : {site.scratch, site.scratch + "/data"}) {
    if (chown(d.c_str(), pw->pw_uid, pw->pw_gid) != 0 || chmod(d.c_str(), 0700) != 0) {
      return Status::Infrastructure("chown " + d + " to " + programs.user + ": " +
                                    strerror(errno));
    }
  }
  SpawnOptions o;
  o.argv = InitdbArgv(programs, site.scratch);
  o.run_as_user = programs.user;
  o.unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  o.cwd = site.scratch;
  o.log_path = site.log_path;
  pid_t pid;
  s = Spawn(o, &pid);
  if (!s.ok()) return s;
  int status = 0;
  const std::string& name = site.options.name;
  if (!WaitExit(pid, Millis(60000), &status)) {
    KillAndReap(pid);
    return Status::Infrastructure("node " + name + ": initdb took over 60 s");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Infrastructure("node " + name + ": initdb failed; log: " +
                                  LogTail(site.log_path, 300));
  }
  return Status::Ok();
}

Status PostgresServer::PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const {
  Programs programs;
  Status s = FindPrograms(&programs);
  if (!s.ok()) return s;
  out->argv = Argv(programs, site.scratch, port);
  out->run_as_user = programs.user;
  std::error_code ec;
  std::filesystem::remove(site.scratch + "/data/postmaster.pid", ec);
  out->unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  out->cwd = site.scratch;
  return Status::Ok();
}

Status PostgresServer::WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                                   pid_t pid) const {
  return PollUntilServing("postgres", endpoint, timeout, pid, "not ready", [&](std::string* why) {
    locks::PostgresConnection conn(endpoint, {"locklab", "postgres", Millis(200)});
    locks::SqlResult r = conn.Query("SELECT 1", Millis(2000));
    *why = r.error;
    return r.outcome == locks::Outcome::kOk && r.sqlstate.empty();
  });
}

std::vector<pid_t> PostgresServer::ProcessesOutsideGroup(pid_t server) const {
  return ChildrenOf(server);
}

std::vector<pid_t> PostgresServer::KillOutsideGroup(pid_t server) const {
  kill(server, SIGSTOP);
  std::vector<pid_t> backends = ChildrenOf(server);
  for (pid_t b : backends) kill(b, SIGKILL);
  return backends;
}

}  // namespace locklab::harness
