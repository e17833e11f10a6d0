#include "harness/cluster_command.h"

#include <signal.h>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/argv.h"
#include "harness/lab_cluster.h"
#include "harness/process.h"
#include "harness/run_store.h"
#include "harness/topology.h"

namespace locklab::harness {
namespace {

std::string StateDir() {
  const char* home = getenv("LOCKLAB_HOME");
  return std::string(home ? home : ".lab") + "/cluster";
}

// A usage error: its one line, exit 64.
int Refuse(const Status& s) {
  std::cerr << "locklab " << s.message() << "\n";
  return s.ExitCode();
}

bool IsRedis(int pid) {
  return ReadProcFile(pid, "cmdline").find("redis-server") != std::string::npos;
}

}  // namespace

int RunClusterCommand(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "topology") {
    // The lab's topology as data (harness/topology.h); compose.yaml is checked against it.
    bool json = false;
    ArgvReader r("cluster topology", std::vector<std::string>(args.begin() + 1, args.end()));
    while (r.Next()) {
      Status s = r.Is("--json") ? r.NoValue() : r.Unknown();
      if (!s.ok()) return Refuse(s);
      json = true;
    }
    nlohmann::ordered_json t = LabTopology();
    if (json) {
      std::cout << t.dump(2) << "\n";
      return 0;
    }
    for (const auto& sv : t["services"]) {
      std::cout << sv["name"].get<std::string>() << "  " << sv["role"].get<std::string>();
      if (sv.contains("port")) std::cout << "  port " << sv["port"].get<int>();
      std::cout << "\n";
    }
    return 0;
  }
  if (args.empty() || (args[0] != "up" && args[0] != "down" && args[0] != "status")) {
    std::cerr << "locklab cluster: usage: locklab cluster up [--nodes N] | down | status | topology [--json]\n";
    return 64;
  }
  std::string state_path = StateDir() + "/state.json";
  nlohmann::json state;
  {
    std::ifstream in(state_path);
    if (in) state = nlohmann::json::parse(in, nullptr, false);
    if (state.is_discarded()) state = nlohmann::json();
  }
  if (args[0] == "up") {
    int64_t nodes = 5;
    ArgvReader r("cluster up", std::vector<std::string>(args.begin() + 1, args.end()));
    while (r.Next()) {
      Status s = r.Is("--nodes") ? r.Int(1, 15, &nodes) : r.Unknown();
      if (!s.ok()) return Refuse(s);
    }
    if (state.is_object() && state.contains("nodes")) {
      std::cerr << "locklab cluster: already up (locklab cluster down first)\n";
      return 64;
    }
    LabPaths paths;
    Status s = LabPaths::Discover(&paths);
    if (!s.ok()) {
      std::cerr << "locklab cluster: " << s.message() << "\n";
      return s.ExitCode();
    }
    MakeDirs(StateDir());
    auto cluster = std::make_unique<LabCluster>(StateDir(), paths);
    s = cluster->Start(static_cast<int>(nodes), /*detached=*/true);
    nlohmann::json st = {{"nodes", nlohmann::json::array()}};
    auto add = [&](LabNode& n) {
      st["nodes"].push_back({{"name", n.name()}, {"port", n.port()}, {"pid", n.pid()},
                             {"clock", n.clock().path()}, {"log", n.log_path()}});
    };
    for (auto& n : cluster->nodes()) add(*n);
    if (s.ok()) add(cluster->resource());
    WriteFile(state_path, st.dump(2) + "\n");
    if (!s.ok()) {
      std::cerr << "locklab cluster: " << s.message() << "\n";
      cluster->Stop();
      remove(state_path.c_str());
      return s.ExitCode();
    }
    for (const auto& n : st["nodes"]) {
      std::cout << n["name"].get<std::string>() << " 127.0.0.1:" << n["port"] << " clock "
                << n["clock"].get<std::string>() << "\n";
    }
    cluster.release();  // detached: the nodes outlive us (state.json has their pids)
    return 0;
  }
  if (!state.is_object() || !state.contains("nodes")) {
    std::cout << "cluster: down\n";
    return 0;
  }
  if (args[0] == "down") {
    for (const auto& n : state["nodes"]) {
      int pid = n["pid"];
      if (pid > 0 && IsRedis(pid)) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
      }
    }
    remove(state_path.c_str());
    std::cout << "cluster: down\n";
    return 0;
  }
  int bad = 0;
  for (const auto& n : state["nodes"]) {
    locks::Endpoint e{"127.0.0.1", n["port"].get<int>()};
    Status s = WaitForPing(e, Millis(300), -1);
    std::cout << n["name"].get<std::string>() << " " << e.ToString() << " "
              << (s.ok() ? "up" : "DOWN") << "\n";
    bad += s.ok() ? 0 : 1;
  }
  return bad ? 69 : 0;
}

}  // namespace locklab::harness
