// Trial's setup phase (trial.h): the run directory, the lab's servers and the clients.
#include <memory>

#include "base/random.h"
#include "harness/lab/driver_servers.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "harness/scenario/run_fields.h"
#include "harness/trial/trial.h"
#include "locks/backend.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {

namespace {
// The proxy link between client p and sentinel s (1-based), for a driver that asked for
// Sentinel.
std::string SentinelLinkName(int p, int s) {
  return "c" + std::to_string(p) + "-s" + std::to_string(s);
}
}  // namespace

Status Trial::Setup() {
  if (o_.seed == 0) {
    o_.seed = RandomSeed(48);
  }
  const locks::LockInfo* info = locks::FindLock(o_.lock);
  if (info == nullptr) return Status::Usage("run: lock '" + o_.lock + "': unknown lock id (see `locklab list`)");
  for (const auto& fo : o_.faults) {
    if (std::string why = FaultMisfit(fo.id, o_.lock, info->backend); !why.empty()) return Status::Usage(why);
  }
  // A driver's hello may ask for other servers than Redis ("backend", "nodes"): it is
  // started once to say so, before a run directory or a server exists (driver_servers.h).
  locks::LockInfo lab_info = *info;
  DriverServers asked;
  if (locks::IsDriverId(o_.lock)) {
    // A driver:PATH lock's clients get the program's absolute path (checked here: exit 64).
    Status ps = ResolveDriverPath(o_.lock, &driver_path_);
    if (!ps.ok()) return ps;
    ps = DriverServersOf(driver_path_, o_.driver_args, o_.knobs, &asked);
    if (!ps.ok()) return Status::Usage("lock " + o_.lock + ": " + ps.message());
    lab_info.backend = asked.backend;
    if (o_.nodes == 0 && asked.nodes) o_.nodes = *asked.nodes;
    for (const auto& fo : o_.faults) {
      if (std::string why_not = DriverFaultWhyNot(asked, fo.id); !why_not.empty()) {
        return Status::Usage("fault '" + fo.id + "' does not apply to lock '" + o_.lock + "': " +
                             why_not);
      }
    }
    locks::DriverHello hello;
    if (!o_.endpoints.empty() && locks::ProbedHello(driver_path_, o_.driver_args, &hello) &&
        hello.resource) {
      // Its final values are read through the driver from the servers the lab starts.
      return Status::Usage("lock " + o_.lock +
                           " owns its resource (its hello's resource); --endpoints is not offered for it");
    }
    if (!o_.endpoints.empty() && asked.backend != locks::Backend::kRedis) {
      return Status::Usage("lock " + o_.lock + " asks for " + locks::BackendName(asked.backend) +
                           " servers (its hello's backend); --endpoints takes Redis servers only");
    }
  }
  if (o_.nodes == 0) o_.nodes = info->default_nodes;
  if (o_.stuck_after.count() == 0) o_.stuck_after = 2 * o_.ttl + Millis(1000);
  Status s = CreateRunDir(o_.out_dir, o_.name, o_.seed, &run_dir_);
  if (!s.ok()) return s;
  scenario_toml_ = ScenarioToToml(o_);
  s = WriteFile(run_dir_ + "/scenario.toml", scenario_toml_);
  if (!s.ok()) return s;
  s = recorder_.Open(run_dir_);
  if (!s.ok()) return s;
  MakeDirs(run_dir_ + "/nodes");
  MakeDirs(run_dir_ + "/clients");
  recorder_.Log("scenario " + o_.name + " seed " + std::to_string(o_.seed) + " lock " + o_.lock +
                " faults " + FaultIds(o_));
  if (asked.probed &&
      (asked.backend != locks::Backend::kRedis || asked.nodes)) {
    recorder_.Log("driver asks for " + std::to_string(o_.nodes) + " " +
                  locks::BackendName(asked.backend) + " node(s)");
  } else if (!driver_path_.empty() && !asked.probed) {
    recorder_.Log("driver said no hello when probed (" + asked.why_not_probed + "): redis nodes");
  }
  // What the judge needs beyond the events goes into the history itself, so that
  // `locklab check history.jsonl` judges exactly as this run does (checker/verdict.h).
  facts_.faults = FaultIdList(o_);
  facts_.stuck_after = o_.stuck_after;
  facts_.validity_honoured = o_.validity == "honour";
  facts_.effects_declared = true;  // every fault window records its "effect" evidence
  recorder_.WriteRunEvent("start", checker::RunStartValue(facts_));
  if (!recorder_.history_error().ok()) return recorder_.history_error();

  // Validate the lock config before starting anything (unknown knobs, bad values).
  locks::LockConfig probe;
  probe.algorithm = o_.lock;
  probe.nodes.assign(o_.nodes, locks::Endpoint{});
  probe.ttl = o_.ttl;
  probe.knobs = o_.knobs;
  probe.driver_args = o_.driver_args;
  std::unique_ptr<locks::Lock> unused;
  s = locks::MakeLock(probe, &unused);
  if (!s.ok()) return s;
  Rng rng(o_.seed);
  std::vector<std::string> node_args;
  for (const auto& fo : o_.faults) {
    std::unique_ptr<faults::Fault> f;
    s = faults::MakeFault(fo, rng.Fork(), &f);
    if (!s.ok()) return s;
    for (const auto& a : f->NodeArgs()) node_args.push_back(a);
    faults_.push_back(std::move(f));
  }
  s = LabPaths::Discover(&paths_);
  if (!s.ok()) return s;
  return StartLab(lab_info, node_args);
}

// The lock's nodes and the resource node (the lab's, or the user's with --endpoints), the
// fault proxy, and for the failover fault n1's replica and the sentinels.
Status Trial::StartLab(const locks::LockInfo& info, const std::vector<std::string>& node_args) {
  if (!o_.endpoints.empty()) {
    auto endpoints = std::make_unique<ExternalEndpoints>(&o_, &recorder_);
    Status s = endpoints->Open(node_args);
    if (!s.ok()) return s;
    lab_.endpoints = std::move(endpoints);
    return lab_.proxy.Start();
  }
  lab_.cluster = std::make_unique<LabCluster>(run_dir_ + "/nodes", paths_);
  Status s = lab_.cluster->Start(o_.nodes, false, node_args, info.backend);
  if (!s.ok()) return s;
  s = lab_.proxy.Start();
  if (!s.ok()) return s;
  // A driver gets here only when its hello asked for Sentinel (Setup refused the failover
  // fault otherwise, DriverFaultWhyNot): it finds the master itself (ClientSpawnOptions).
  bool sentinel = false;
  for (const auto& f : faults_) sentinel = sentinel || f->NeedsSentinel();
  if (sentinel) {
    if (o_.nodes != 1) {
      return Status::Usage("fault failover: needs a single-node lock (n1 and its replica); " +
                           o_.lock + " uses " + std::to_string(o_.nodes) + " nodes");
    }
    lab_.topology = std::make_unique<SentinelTopology>(run_dir_ + "/nodes", paths_, &lab_.proxy);
    s = lab_.topology->Start(*lab_.Node(1));
    if (!s.ok()) return s;
    recorder_.Log("replica r1 on " + lab_.topology->replica().endpoint().ToString() + " pid " +
                  std::to_string(lab_.topology->replica().pid()));
    for (const auto& e : lab_.topology->sentinels()) recorder_.Log("sentinel on " + e.ToString());
  }
  for (auto& n : lab_.cluster->nodes()) {
    recorder_.Log("node " + n->name() + " on " + n->endpoint().ToString() + " pid " +
                  std::to_string(n->pid()));
  }
  recorder_.Log("node resource on " + lab_.cluster->resource().endpoint().ToString() + " pid " +
                std::to_string(lab_.cluster->resource().pid()));
  return Status::Ok();
}

// Client `process`'s command line: the lock and workload settings by the field table
// (ClientFieldArgs, harness/scenario/run_fields.h), the process's own flags (client_main.h), and
// every connection through its own fault proxy link (docs/design.md 2), added to the proxy
// here.
Status Trial::ClientSpawnOptions(int process, uint64_t seed, SpawnOptions* so) {
  so->argv = {SelfExe(), "client", "--process", std::to_string(process), "--lock",
              driver_path_.empty() ? o_.lock : locks::kDriverPrefix + driver_path_,
              "--process-seed", std::to_string(seed)};
  for (std::string& a : ClientFieldArgs(o_)) so->argv.push_back(std::move(a));
  so->argv.push_back("--resource");
  so->argv.push_back("");
  std::string n1_link;
  for (int n = 0; n <= lab_.node_count(); ++n) {
    locks::Endpoint e = lab_.NodeEndpoint(n);
    int port = 0;
    Status ls = lab_.proxy.AddLink(TrialLab::LinkName(process, n), {e.host, e.port}, &port);
    if (!ls.ok()) return ls;
    std::string via = "127.0.0.1:" + std::to_string(port);
    if (n == 0) {
      so->argv[so->argv.size() - 1] = via;
    } else {
      so->argv.push_back("--node");
      so->argv.push_back(via);
      if (n == 1) n1_link = via;
    }
  }
  if (lab_.topology) {
    // Clients find the master through Sentinel, each node through its own link.
    int rport = 0;
    locks::Endpoint r = lab_.topology->replica().endpoint();
    Status ls = lab_.proxy.AddLink("c" + std::to_string(process) + "-r1", {r.host, r.port}, &rport);
    if (!ls.ok()) return ls;
    const std::string master_map = lab_.topology->monitored_master().ToString() + "=" + n1_link;
    const std::string replica_map = r.ToString() + "=127.0.0.1:" + std::to_string(rport);
    if (driver_path_.empty()) {
      for (const auto& e : lab_.topology->sentinels()) {
        so->argv.push_back("--sentinel");
        so->argv.push_back(e.ToString());
      }
      so->argv.push_back("--node-map");
      so->argv.push_back(master_map);
      so->argv.push_back("--node-map");
      so->argv.push_back(replica_map);
    } else {
      // A driver whose hello asked for Sentinel finds the master with its own library: it
      // gets the sentinels through links of its own, like every connection of a client, and
      // the map from the addresses Sentinel names to this client's links (Sentinel knows the
      // servers' real addresses; a client that dialled them would bypass the proxy).
      // docs/driver-protocol.md, "Sentinel". The client passes these on to its driver.
      std::string sentinel_links;
      int s = 0;
      for (const auto& e : lab_.topology->sentinels()) {
        int sport = 0;
        ls = lab_.proxy.AddLink(SentinelLinkName(process, ++s), {e.host, e.port}, &sport);
        if (!ls.ok()) return ls;
        sentinel_links += (sentinel_links.empty() ? "" : ",") + std::string("127.0.0.1:") +
                          std::to_string(sport);
      }
      so->env[locks::kSentinelsEnv] = sentinel_links;
      so->env[locks::kSentinelMasterEnv] = SentinelTopology::kMasterName;
      so->env[locks::kNodeMapEnv] = master_map + "," + replica_map;
    }
  }
  for (const auto& a : o_.driver_args) {
    so->argv.push_back("--driver-arg");
    so->argv.push_back(a);
  }
  for (const auto& [k, v] : o_.knobs) {
    so->argv.push_back("--knob");
    so->argv.push_back(k + "=" + v);
  }
  so->log_path = run_dir_ + "/clients/" + std::to_string(process) + ".log";
  so->unset_env = {"LD_PRELOAD"};
  return Status::Ok();
}

Status Trial::StartClients() {
  Rng rng(o_.seed ^ 0x5eedc11e);
  bool needs_clock = false;
  for (const auto& f : faults_) needs_clock = needs_clock || f->NeedsClientClock();
  for (int p = 1; p <= o_.clients; ++p) {
    SpawnOptions so;
    Status s = ClientSpawnOptions(p, rng.Fork() | 1, &so);
    if (!s.ok()) return s;
    std::unique_ptr<ClockControlFile> clock;
    if (needs_clock) {
      // The client's wall clock (what the lock measures) is faked; history timestamps use
      // the raw monotonic syscall and stay true.
      clock = std::make_unique<ClockControlFile>(run_dir_ + "/clients/" + std::to_string(p) + ".clock");
      s = clock->Set("+0");
      if (!s.ok()) return s;
      so.unset_env.clear();
      so.env["LD_PRELOAD"] = paths_.libfaketime;
      so.env["FAKETIME_TIMESTAMP_FILE"] = clock->path();
      so.env["FAKETIME_NO_CACHE"] = "1";
      so.env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
    }
    s = clients_.Spawn(p, std::move(so), std::move(clock));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace locklab::harness
