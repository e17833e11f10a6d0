#include "harness/cli/cluster_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/argv.h"
#include "base/random.h"
#include "harness/scenario/cli_spec.h"
#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "harness/lab/topology.h"

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

// Field `n` (1-based, as proc(5) counts) of /proc/PID/stat, "" when the process is gone.
// The command (field 2) may hold spaces and ')', so fields are counted after its last ')'.
std::string StatField(pid_t pid, int n) {
  std::string stat = ReadProcFile(pid, "stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos || n < 3) return "";
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= n; ++i) {
    if (!(rest >> field)) return "";
  }
  return field;
}

// The start time of a process (field 22 of /proc/PID/stat, clock ticks after boot): with
// the pid, it names one process for as long as the machine runs.
std::string StartTime(pid_t pid) { return StatField(pid, 22); }

// The mark `cluster up` gives each of its servers: Redis rewrites its command line into its
// process title (and the environment's memory with it), so the mark is put in that title.
std::string Mark(const std::string& token) { return "locklab-cluster:" + token; }

// Whether `pid` is still the server `cluster up` recorded: the same start time and the
// cluster's mark in its command line. A pid reused by any other process fails both.
bool IsOurs(pid_t pid, const nlohmann::json& node, const std::string& token) {
  if (pid <= 0 || token.empty() || !node.contains("start_time") ||
      !node["start_time"].is_string()) {
    return false;
  }
  if (StartTime(pid) != node["start_time"].get<std::string>()) return false;
  std::string cmdline = ReadProcFile(pid, "cmdline");
  return cmdline.find(Mark(token)) != std::string::npos;
}

// The state directory's lock (flock on STATE_DIR/lock), held by `up` and `down` while they
// run: a second one at the same moment is refused. The fd is close-on-exec, so the servers
// `up` starts (which outlive it) do not hold the lock.
class StateLock {
 public:
  ~StateLock() {
    if (fd_ >= 0) close(fd_);
  }
  // "" when taken, else the one line that says why not.
  std::string Take(const std::string& dir) {
    Status s = MakeDirs(dir);
    if (!s.ok()) return s.message();
    const std::string path = dir + "/lock";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return path + ": " + strerror(errno);
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return "";
    if (errno == EWOULDBLOCK) {
      return "another `locklab cluster up` or `down` is running on " + dir + " (" + path +
             " is locked)";
    }
    return path + ": flock: " + strerror(errno);
  }

 private:
  int fd_ = -1;
};

// `cluster up`: the nodes n1..nN and the resource, each marked with the cluster's token;
// state.json is written after each start, so an `up` killed half-way leaves a state that
// `down` can act on.
int ClusterUp(int64_t nodes, const std::string& state_path) {
  LabPaths paths;
  Status s = LabPaths::Discover(&paths);
  if (!s.ok()) {
    std::cerr << "locklab cluster: " << s.message() << "\n";
    return s.ExitCode();
  }
  const std::string token = RandomToken();
  nlohmann::json st = {{"token", token}, {"nodes", nlohmann::json::array()}};
  std::vector<std::unique_ptr<LabNode>> started;
  auto stop_all = [&]() {
    for (auto& n : started) n->Kill();
    remove(state_path.c_str());
  };
  for (int64_t i = 0; i <= nodes; ++i) {
    NodeOptions o;
    o.name = i < nodes ? "n" + std::to_string(i + 1) : "resource";
    o.detached = true;  // outlives this command (state.json has its pid)
    o.extra_args = {"--proc-title-template", "{title} {listen-addr} " + Mark(token)};
    started.push_back(std::make_unique<LabNode>(o, StateDir() + "/" + o.name, paths));
    LabNode& n = *started.back();
    s = n.Start();
    if (!s.ok()) {
      std::cerr << "locklab cluster: " << s.message() << "\n";
      stop_all();
      return s.ExitCode();
    }
    st["nodes"].push_back({{"name", n.name()}, {"port", n.port()}, {"pid", n.pid()},
                           {"start_time", StartTime(n.pid())}, {"clock", n.clock().path()},
                           {"log", n.log_path()}});
    s = WriteFile(state_path, st.dump(2) + "\n");
    if (!s.ok()) {
      std::cerr << "locklab cluster: " << s.message() << "\n";
      stop_all();
      return s.ExitCode();
    }
  }
  for (const auto& n : st["nodes"]) {
    std::cout << n["name"].get<std::string>() << " 127.0.0.1:" << n["port"] << " clock "
              << n["clock"].get<std::string>() << "\n";
  }
  return 0;
}

// `cluster down`: SIGKILL to each recorded server that is still the one `up` started (its
// start time and mark); a pid that now names another process is left alone, with a line.
int ClusterDown(const nlohmann::json& state, const std::string& state_path) {
  const std::string token = state.value("token", std::string());
  std::vector<pid_t> killed;
  for (const auto& n : state["nodes"]) {
    if (!n.is_object() || !n.contains("pid") || !n["pid"].is_number_integer()) continue;
    const pid_t pid = n["pid"].get<pid_t>();
    const std::string name = n.value("name", std::string("?"));
    if (ProcessGone(pid)) continue;
    if (!IsOurs(pid, n, token)) {
      std::cout << "cluster: " << name << " pid " << pid
                << " is not the server `cluster up` started (start time or mark differ): "
                   "left alone\n";
      continue;
    }
    // Its own group (the node leads it) only when it still does.
    if (StatField(pid, 5) == std::to_string(pid)) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    killed.push_back(pid);
  }
  // Not our children (init reaps them): wait until they are gone, 2 s at most.
  Nanos end = MonotonicNow() + Millis(2000);
  for (pid_t p : killed) {
    while (!ProcessGone(p) && MonotonicNow() < end) SleepFor(Millis(5));
  }
  remove(state_path.c_str());
  std::cout << "cluster: down\n";
  return 0;
}

}  // namespace

int RunClusterCommand(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "topology") {
    // The lab's topology as data (harness/lab/topology.h); compose.yaml is checked against it.
    bool json = false;
    ArgvReader r(ClusterCommandSpec(), std::vector<std::string>(args.begin() + 1, args.end()),
                 "cluster topology");
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
  // Flags first: a refused one leaves the cluster and its lock alone.
  int64_t nodes = 5;
  ArgvReader r(ClusterCommandSpec(), std::vector<std::string>(args.begin() + 1, args.end()),
               "cluster " + args[0]);
  while (r.Next()) {
    Status s = args[0] == "up" && r.Is("--nodes") ? r.Int(1, 15, &nodes) : r.Unknown();
    if (!s.ok()) return Refuse(s);
  }
  // up and down change the cluster: one at a time (status only reads), and the state is
  // read under the lock.
  StateLock lock;
  if (args[0] != "status") {
    std::string busy = lock.Take(StateDir());
    if (!busy.empty()) {
      std::cerr << "locklab cluster: " << busy << "\n";
      return 64;
    }
  }
  std::string state_path = StateDir() + "/state.json";
  nlohmann::json state;
  {
    std::ifstream in(state_path);
    if (in) state = nlohmann::json::parse(in, nullptr, false);
    if (state.is_discarded()) state = nlohmann::json();
  }
  if (args[0] == "up") {
    if (state.is_object() && state.contains("nodes")) {
      std::cerr << "locklab cluster: already up (locklab cluster down first)\n";
      return 64;
    }
    return ClusterUp(nodes, state_path);
  }
  if (!state.is_object() || !state.contains("nodes")) {
    std::cout << "cluster: down\n";
    return 0;
  }
  if (args[0] == "down") return ClusterDown(state, state_path);
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
