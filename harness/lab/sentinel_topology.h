// SentinelTopology: a master with one replica and three redis-sentinel processes, for the
// failover fault (Redis docs' failover race, KNOWN-ANSWERS schedule 5).
//
// The replica replicates through its own fault-proxy link ("repl"), so the replication
// stream can be cut while the master keeps acknowledging writes: a lock key written then
// is acknowledged but never reaches the replica. Sentinels monitor the master directly
// (quorum 2, down-after 500 ms) and promote the replica when it dies. Start() returns once
// the replica is in sync and every sentinel knows the replica and the other sentinels, so
// a failover can actually happen. Not thread-safe (harness main thread).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "faults/fault_proxy.h"
#include "harness/lab/lab_cluster.h"

namespace locklab::harness {

class SentinelTopology {
 public:
  static constexpr const char* kMasterName = "locklab";
  static constexpr int kSentinels = 3;
  static constexpr int kQuorum = 2;
  // Sentinel settings, in milliseconds: a master silent this long is down; a failover
  // attempt gives up after this long.
  static constexpr int kDownAfterMs = 500;
  static constexpr int kFailoverTimeoutMs = 3000;
  // The sentinel.conf lines that monitor the master at host:port (also the topology
  // description's, `locklab cluster topology`, so compose.yaml is checked against them).
  static std::string SentinelConfig(const std::string& host, int port);

  SentinelTopology(std::string dir, LabPaths paths, faults::FaultProxy* proxy)
      : dir_(std::move(dir)), paths_(std::move(paths)), proxy_(proxy) {}
  ~SentinelTopology() { Stop(); }

  Status Start(LabNode& master);
  void Stop();

  LabNode& replica() { return *replica_; }
  const std::vector<std::unique_ptr<LabNode>>& sentinel_nodes() const { return sentinels_; }
  std::vector<locks::Endpoint> sentinels() const;
  // The master the sentinels name now (empty host when none answers).
  locks::Endpoint CurrentMaster() const;
  // Waits until the sentinels name `expected` as master.
  Status WaitForMaster(const locks::Endpoint& expected, Millis timeout) const;
  // The master's address as Sentinel knows it (the replication link's listener).
  locks::Endpoint monitored_master() const { return {"127.0.0.1", repl_port_}; }
  // Cuts (or heals) only the replication stream: Sentinel's own connections still pass.
  Status CutReplication(bool cut);
  // The fault-proxy link carrying the replication stream.
  static constexpr const char* kReplicationLink = "repl";

 private:
  std::string dir_;
  LabPaths paths_;
  faults::FaultProxy* proxy_;
  int repl_port_ = 0;
  std::unique_ptr<LabNode> replica_;
  std::vector<std::unique_ptr<LabNode>> sentinels_;
};

// A Sentinel-aware resolver for RedisConnection (see locks::SetEndpointResolver): for a
// configured endpoint that is one of the nodes' proxy links (a value of `links`, keyed by
// the node's real address), it asks the sentinels for the current master and returns that
// master's link; other endpoints (the resource) pass unchanged, as does everything when no
// sentinel answers.
locks::EndpointResolver MakeSentinelResolver(std::vector<locks::Endpoint> sentinels,
                                             std::string name,
                                             std::map<std::string, locks::Endpoint> links);

// Asks one sentinel for the master of `name`; false when it does not answer.
bool AskSentinel(const locks::Endpoint& sentinel, const std::string& name, locks::Endpoint* master);

}  // namespace locklab::harness
