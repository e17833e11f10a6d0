#include "harness/lab/topology.h"

#include <algorithm>
#include <string>

#include "faults/fault.h"
#include "harness/lab/sentinel_topology.h"
#include "locks/lock.h"

namespace locklab::harness {

nlohmann::ordered_json LabTopology() {
  // Container ports: what redis-server and redis-sentinel listen on by default. The lab's
  // own processes take free loopback ports instead; the roles and counts are the same.
  constexpr int kRedisPort = 6379;
  constexpr int kSentinelPort = 26379;
  int lock_nodes = 0;
  for (const auto& l : locks::ListLocks()) lock_nodes = std::max(lock_nodes, l.default_nodes);

  nlohmann::ordered_json services = nlohmann::ordered_json::array();
  auto data_node = [&](const std::string& name, const std::string& role) {
    return nlohmann::ordered_json{
        {"name", name}, {"role", role}, {"port", kRedisPort}, {"volumes", {name + "-data"}}};
  };
  // Lock nodes run under docker/node-entrypoint.sh: libfaketime reading /control/<name>,
  // the server's pid in /control/<name>.pid, in one PID namespace with the harness (n1's),
  // so the harness's --endpoint-control steps their clocks, pauses, kills and restarts them.
  const std::string control_dir = "/control";
  for (int i = 1; i <= lock_nodes; ++i) {
    std::string name = "n" + std::to_string(i);
    auto n = data_node(name, "lock-node");
    n["volumes"].push_back("control");
    n["entrypoint"] = {"/opt/locklab/docker/node-entrypoint.sh", name};
    n["control_file"] = control_dir + "/" + name;
    if (i > 1) n["pid"] = "service:n1";
    // n1 is also the master of the failover topology (single-node locks use n1).
    if (i == 1) n["role"] = "lock-node+master";
    services.push_back(n);
  }
  services.push_back(data_node("resource", "resource"));
  auto r1 = data_node("r1", "replica");
  r1["replica_of"] = "n1";
  services.push_back(r1);
  for (int i = 1; i <= SentinelTopology::kSentinels; ++i) {
    services.push_back({{"name", "s" + std::to_string(i)},
                        {"role", "sentinel"},
                        {"port", kSentinelPort},
                        {"monitors", "n1"},
                        {"volumes", nlohmann::ordered_json::array()},
                        {"sentinel_conf", SentinelTopology::SentinelConfig("n1", kRedisPort)}});
  }

  // The harness: lock nodes first, then the resource (the --endpoints convention), and
  // only the faults that need no control of the servers.
  std::string endpoints;
  for (int i = 1; i <= lock_nodes; ++i) {
    endpoints += "redis://n" + std::to_string(i) + ":" + std::to_string(kRedisPort) + ",";
  }
  endpoints += "redis://resource:" + std::to_string(kRedisPort);
  nlohmann::ordered_json client_side = nlohmann::ordered_json::array();
  for (const auto& f : faults::ListFaults()) {
    if (faults::IsClientSideFault(f.id)) client_side.push_back(f.id);
  }
  services.push_back(
      {{"name", "locklab"},
       {"role", "harness"},
       {"volumes", {"runs", "control"}},
       {"pid", "service:n1"},
       {"command",
        {"matrix", "--endpoints", endpoints, "--endpoint-control", control_dir, "--out", "/runs"}},
       {"depends_on", nlohmann::ordered_json::array()}});
  for (const auto& s : services) {
    if (s["name"] != "locklab") services.back()["depends_on"].push_back(s["name"]);
  }

  nlohmann::ordered_json volumes = nlohmann::ordered_json::array();
  for (const auto& s : services) {
    for (const auto& v : s["volumes"]) {
      if (std::find(volumes.begin(), volumes.end(), v) == volumes.end()) volumes.push_back(v);
    }
  }
  return {{"sentinel_master_name", SentinelTopology::kMasterName},
          {"sentinel_quorum", SentinelTopology::kQuorum},
          {"services", services},
          {"volumes", volumes},
          {"client_side_faults", client_side}};
}

}  // namespace locklab::harness
