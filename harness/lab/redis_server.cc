// RedisServer and SentinelServer (harness/lab/lab_servers.h): the lab Redis as a data node or a
// Sentinel, under libfaketime with the node's clock file.
#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {

std::vector<std::string> RedisServer::Argv(const std::string& redis_server,
                                            const std::string& dir, int port) {
  return {redis_server, "--port", std::to_string(port), "--bind", "127.0.0.1",
          "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no",
          "--logfile", "", "--dbfilename", "dump.rdb"};
}

Status RedisServer::PrepareLaunch(const ServerSite& site, int) const {
  return site.clock.Set("+0");
}

Status RedisServer::PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const {
  SpawnRedis(site, Argv(site.paths.redis_server, site.dir, port), out);
  return Status::Ok();
}

void RedisServer::SpawnRedis(const ServerSite& site, std::vector<std::string> argv,
                             SpawnOptions* out) const {
  const NodeOptions& options = site.options;
  out->argv = std::move(argv);
  out->argv.insert(out->argv.end(), options.extra_args.begin(), options.extra_args.end());
  if (options.faketime) {
    out->env["LD_PRELOAD"] = site.paths.libfaketime;
    out->env["FAKETIME_TIMESTAMP_FILE"] = site.clock.path();
    out->env["FAKETIME_NO_CACHE"] = "1";
    out->env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
  } else {
    out->unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  }
  out->cwd = site.dir;
}

Status RedisServer::WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                                pid_t pid) const {
  return WaitForPing(endpoint, timeout, pid);
}

std::vector<std::string> SentinelServer::Argv(const std::string& redis_server,
                                               const std::string& conf, const std::string& dir,
                                               int port) {
  return {redis_server, conf, "--sentinel", "--port", std::to_string(port),
          "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no", "--logfile", ""};
}

Status SentinelServer::PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const {
  std::string conf = site.dir + "/sentinel.conf";
  Status s = WriteFile(conf, site.options.sentinel_config);
  if (!s.ok()) return s;
  SpawnRedis(site, Argv(site.paths.redis_server, conf, site.dir, port), out);
  return Status::Ok();
}

}  // namespace locklab::harness
