#include "harness/lab/sentinel_topology.h"

#include <optional>

#include "base/numbers.h"
#include "harness/lab/run_store.h"
#include "locks/redis_connection.h"

namespace locklab::harness {
namespace {

// INFO-style "field:value" lookup.
std::string InfoField(const std::string& info, const std::string& field) {
  auto pos = info.find(field + ":");
  if (pos == std::string::npos) return "";
  auto end = info.find_first_of("\r\n", pos);
  return info.substr(pos + field.size() + 1, end - pos - field.size() - 1);
}

}  // namespace

bool AskSentinel(const locks::Endpoint& sentinel, const std::string& name, locks::Endpoint* master) {
  locks::RedisConnection c(sentinel, Millis(100), Millis(200));
  locks::Reply r = c.Command({"SENTINEL", "get-master-addr-by-name", name});
  if (r.outcome != locks::Outcome::kOk || r.elements.size() != 2) return false;
  std::optional<int64_t> port = ParseInt(r.elements[1].str, 1, 65535);
  if (!port) return false;
  *master = {r.elements[0].str, static_cast<int>(*port)};
  return true;
}

locks::EndpointResolver MakeSentinelResolver(std::vector<locks::Endpoint> sentinels,
                                             std::string name,
                                             std::map<std::string, locks::Endpoint> links) {
  return [sentinels = std::move(sentinels), name = std::move(name),
          links = std::move(links)](const locks::Endpoint& configured) {
    bool is_node_link = false;
    for (const auto& [real, link] : links) {
      is_node_link = is_node_link || (link.port == configured.port && link.host == configured.host);
    }
    if (!is_node_link) return configured;
    for (const auto& s : sentinels) {
      locks::Endpoint master;
      if (!AskSentinel(s, name, &master)) continue;
      auto it = links.find(master.ToString());
      if (it != links.end()) return it->second;
    }
    return configured;
  };
}

std::string SentinelTopology::SentinelConfig(const std::string& host, int port) {
  return std::string("sentinel monitor ") + kMasterName + " " + host + " " + std::to_string(port) +
         " " + std::to_string(kQuorum) + "\n" + "sentinel down-after-milliseconds " + kMasterName +
         " " + std::to_string(kDownAfterMs) + "\n" + "sentinel failover-timeout " + kMasterName +
         " " + std::to_string(kFailoverTimeoutMs) + "\n" + "sentinel parallel-syncs " +
         kMasterName + " 1\n";
}

Status SentinelTopology::Start(LabNode& master) {
  {
    // Sync the replica at once instead of after the default 5 s diskless-sync delay.
    locks::RedisConnection m(master.endpoint(), Millis(300), Millis(300));
    m.Command({"CONFIG", "SET", "repl-diskless-sync-delay", "0"});
  }
  Status s = proxy_->AddLink(kReplicationLink, {"127.0.0.1", master.port()}, &repl_port_);
  int repl_port = repl_port_;
  if (!s.ok()) return s;
  NodeOptions ro;
  ro.name = "r1";
  ro.extra_args = {"--replicaof", "127.0.0.1", std::to_string(repl_port)};
  replica_ = std::make_unique<LabNode>(ro, dir_ + "/r1", paths_);
  s = replica_->Start();
  if (!s.ok()) return s;
  for (int i = 1; i <= kSentinels; ++i) {
    NodeOptions so;
    so.name = "s" + std::to_string(i);
    so.faketime = false;
    so.sentinel = true;
    // Sentinels monitor the master through the replication link's address: a replica
    // replicating from any other address than the monitored one is "fixed" by Sentinel.
    so.sentinel_config = SentinelConfig("127.0.0.1", repl_port);
    sentinels_.push_back(std::make_unique<LabNode>(so, dir_ + "/" + so.name, paths_));
    s = sentinels_.back()->Start();
    if (!s.ok()) return s;
  }
  // Ready means: the replica is in sync, and every sentinel knows it and the others.
  Nanos end = MonotonicNow() + Millis(15000);
  for (;;) {
    bool ready = true;
    locks::RedisConnection rc(replica_->endpoint(), Millis(100), Millis(200));
    locks::Reply info = rc.Command({"INFO", "replication"});
    ready = ready && InfoField(info.str, "master_link_status") == "up";
    for (const auto& sn : sentinels_) {
      locks::RedisConnection c(sn->endpoint(), Millis(100), Millis(200));
      locks::Reply reps = c.Command({"SENTINEL", "replicas", kMasterName});
      locks::Reply sens = c.Command({"SENTINEL", "sentinels", kMasterName});
      ready = ready && reps.elements.size() == 1 &&
              sens.elements.size() == static_cast<size_t>(kSentinels - 1);
    }
    if (ready) return Status::Ok();
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("sentinel topology: replica or sentinels not ready after 15 s");
    }
    SleepFor(Millis(100));
  }
}

Status SentinelTopology::CutReplication(bool cut) {
  faults::LinkState st;
  if (cut) {
    st = faults::LinkState::BlackHole();
    st.replication_only = true;
  }
  return proxy_->SetLink(kReplicationLink, st);
}

void SentinelTopology::Stop() {
  for (auto& s : sentinels_) s->Kill();
  if (replica_) replica_->Kill();
}

std::vector<locks::Endpoint> SentinelTopology::sentinels() const {
  std::vector<locks::Endpoint> out;
  for (const auto& s : sentinels_) out.push_back(s->endpoint());
  return out;
}

locks::Endpoint SentinelTopology::CurrentMaster() const {
  locks::Endpoint m{"", 0};
  for (const auto& s : sentinels_) {
    if (AskSentinel(s->endpoint(), kMasterName, &m)) return m;
  }
  return {"", 0};
}

Status SentinelTopology::WaitForMaster(const locks::Endpoint& expected, Millis timeout) const {
  Nanos end = MonotonicNow() + timeout;
  for (;;) {
    locks::Endpoint m = CurrentMaster();
    if (m.port == expected.port && m.host == expected.host) return Status::Ok();
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("sentinels name " + m.ToString() + ", not " + expected.ToString());
    }
    SleepFor(Millis(50));
  }
}

}  // namespace locklab::harness
