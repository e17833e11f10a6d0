// ZooKeeperServer (harness/lab/lab_servers.h): one member of a loopback ZooKeeper ensemble, a JVM
// started directly on a generated zoo.cfg.
#include <unistd.h>

#include <cstdlib>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "locks/zk_session.h"

namespace locklab::harness {
namespace {

// need_quorum = false: the member's client port accepting connections will do.
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

}  // namespace

Status ZooKeeperServer::FindPrograms(Programs* out) {
  Programs p;
  if (const char* e = getenv("LOCKLAB_JAVA")) p.java = e;
  if (const char* e = getenv("LOCKLAB_ZOOKEEPER_JAR")) p.zookeeper_jar = e;
  if (access(p.java.c_str(), X_OK) != 0) {
    return Status::Infrastructure("java not found at " + p.java +
                                  " (apt-get install openjdk-17-jdk-headless, or set LOCKLAB_JAVA)");
  }
  if (access(p.zookeeper_jar.c_str(), R_OK) != 0) {
    return Status::Infrastructure("ZooKeeper not found at " + p.zookeeper_jar +
                                  " (apt-get install zookeeper, or set LOCKLAB_ZOOKEEPER_JAR)");
  }
  *out = p;
  return Status::Ok();
}

std::string ZooKeeperServer::Config(const std::string& scratch, int port,
                                    const std::string& servers) {
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

std::vector<std::string> ZooKeeperServer::Argv(const Programs& programs,
                                               const std::string& scratch) {
  std::string cp = programs.zookeeper_jar;
  const char* kLogger = "/usr/share/java/slf4j-simple.jar";  // logs to stderr (the node log)
  if (access(kLogger, R_OK) == 0) cp += std::string(":") + kLogger;
  // Small heap, serial GC, C1 only, no hsperfdata files left in /tmp.
  return {programs.java, "-Xmx128m", "-Xss512k", "-XX:-UsePerfData", "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          // No fsync of the transaction log (a lab on a shared disk; a member killed with
          // SIGKILL loses nothing, its writes are in the page cache: only a machine crash
          // would), and a lost peer is given up after 1 s instead of 5 s in leader election.
          "-Dzookeeper.forceSync=no", "-Dzookeeper.cnxTimeout=1000",
          "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", scratch + "/zoo.cfg"};
}

Status ZooKeeperServer::PrepareLaunch(const ServerSite& site, int port) const {
  Status s = WriteFile(site.scratch + "/data/myid", std::to_string(site.options.member_id) + "\n");
  if (s.ok()) {
    s = WriteFile(site.scratch + "/zoo.cfg",
                  Config(site.scratch, port, site.options.initial_cluster));
  }
  return s;
}

Status ZooKeeperServer::PrepareSpawn(const ServerSite& site, int, SpawnOptions* out) const {
  Programs programs;
  Status s = FindPrograms(&programs);
  if (!s.ok()) return s;
  out->argv = Argv(programs, site.scratch);
  out->unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  out->cwd = site.scratch;
  return Status::Ok();
}

Status ZooKeeperServer::WaitServing(const locks::Endpoint& endpoint, Millis timeout,
                                    pid_t pid) const {
  return WaitForZooKeeper(endpoint, timeout, pid, /*need_quorum=*/true);
}

Status ZooKeeperServer::WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                                      pid_t pid) const {
  return WaitForZooKeeper(endpoint, timeout, pid, /*need_quorum=*/false);
}

std::string ZooKeeperServer::InitialCluster(const std::vector<NodeOptions>& members) const {
  std::string servers;
  for (const NodeOptions& o : members) {
    servers += "server." + std::to_string(o.member_id) + "=127.0.0.1:" +
               std::to_string(o.peer_port) + ":" + std::to_string(o.election_port) + "\n";
  }
  return servers;
}

Status ZooKeeperServer::WarmUp(const std::vector<locks::Endpoint>& members,
                               Millis timeout) const {
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
