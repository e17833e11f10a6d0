// EtcdServer (harness/lab/lab_servers.h): one member of a loopback etcd cluster.
#include <unistd.h>

#include <cstdlib>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "locks/http_client.h"

namespace locklab::harness {
namespace {

// need_quorum = false: its client port accepting connections will do (the member runs,
// maybe alone, and rejoins the cluster on its own).
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

}  // namespace

Status EtcdServer::FindEtcd(std::string* path) {
  std::string p = "/usr/bin/etcd";
  if (const char* e = getenv("LOCKLAB_ETCD")) p = e;
  if (access(p.c_str(), X_OK) != 0) {
    return Status::Infrastructure("etcd not found at " + p +
                                  " (apt-get install etcd-server, or set LOCKLAB_ETCD)");
  }
  *path = p;
  return Status::Ok();
}

std::vector<std::string> EtcdServer::Argv(const std::string& etcd, const std::string& name,
                                          const std::string& scratch, int port, int peer_port,
                                          const std::string& initial_cluster,
                                          const std::string& token) {
  std::string client = "http://127.0.0.1:" + std::to_string(port);
  std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
  return {etcd,
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

Status EtcdServer::PrepareSpawn(const ServerSite& site, int port, SpawnOptions* out) const {
  std::string etcd;
  Status s = FindEtcd(&etcd);
  if (!s.ok()) return s;
  const NodeOptions& o = site.options;
  out->argv = Argv(etcd, o.name, site.scratch, port, o.peer_port, o.initial_cluster,
                   o.cluster_token);
  out->unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  out->cwd = site.scratch;
  return Status::Ok();
}

Status EtcdServer::WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                               pid_t pid) const {
  return WaitForEtcd(endpoint, timeout, pid, /*need_quorum=*/true);
}

Status EtcdServer::WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                                 pid_t pid) const {
  return WaitForEtcd(endpoint, timeout, pid, /*need_quorum=*/false);
}

std::string EtcdServer::InitialCluster(const std::vector<NodeOptions>& members) const {
  std::string initial;
  for (const NodeOptions& o : members) {
    initial += (initial.empty() ? "" : ",") + o.name + "=http://127.0.0.1:" +
               std::to_string(o.peer_port);
  }
  return initial;
}

}  // namespace locklab::harness
