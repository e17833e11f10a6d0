#include "harness/runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "base/random.h"
#include "checker/history.h"
#include "checker/verdict.h"
#include "faults/fault.h"
#include "harness/lab_cluster.h"
#include "harness/process.h"
#include "harness/run_store.h"
#include "harness/sentinel_topology.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"
#include "workloads/counter_workload.h"

namespace locklab::harness {
namespace {

std::atomic<int> g_signals{0};
int g_signal_pipe[2] = {-1, -1};

void OnInterrupt(int) {
  int n = g_signals.fetch_add(1) + 1;
  if (n >= 3) _exit(130);  // third Ctrl-C: give up at once; children die by PDEATHSIG
  char c = 1;
  (void)!write(g_signal_pipe[1], &c, 1);
}

// The last non-blank line of a log (at most 300 bytes of it), "" when none.
std::string LastLogLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 300) + "..." : last;
}

// One client process as the harness sees it.
struct ClientProc {
  int process = 0;
  pid_t pid = -1;
  std::unique_ptr<ClockControlFile> clock;  // when clients run under libfaketime
  std::set<std::string> holding;            // lock keys it holds, from its own events
  int to_child = -1;    // its stdin (control lines), non-blocking
  // Control lines not yet taken by the pipe (a stopped client reads nothing): flushed when
  // the pipe has room, so the harness's loop never blocks on a client (SendControl).
  std::string outbox;
  int from_child = -1;  // its stdout (events)
  std::string buffer;
  bool running = false;
  bool paused = false;
  bool ready = false;     // its lock is ready (a driver said hello): it waits for "go"
  std::string failure;    // why its lock could not start (one line), from the client
};

class Trial : public faults::LabControl {
 public:
  Trial(RunOptions o, bool quiet) : o_(std::move(o)), quiet_(quiet) {}
  ~Trial() override { Teardown(); }

  TrialResult Run();

  // faults::LabControl
  int client_count() const override { return static_cast<int>(clients_.size()); }
  Nanos run_end() const override { return start_ + o_.duration; }
  int node_count() const override {
    if (!external_nodes_.empty()) return static_cast<int>(external_nodes_.size());
    return cluster_ ? static_cast<int>(cluster_->nodes().size()) : 0;
  }
  bool ClientRunning(int p) const override { return Client(p) && Client(p)->running; }
  bool PauseClient(int p) override;
  bool ResumeClient(int p) override;
  bool CrashClient(int p) override;
  void ArmPoint(int p, const std::string& point, const std::string& action) override;
  void DisarmPoints(int p) override;
  std::vector<int> Holders() const override;
  int64_t AcquiresSeen() const override { return acquires_seen_; }
  bool PauseNode(int n) override;
  bool ResumeNode(int n) override;
  void KillNode(int n) override;
  Status RestartNode(int n) override;
  Status SetNodeClock(int n, const std::string& offset) override;
  Status SetClientClock(int p, const std::string& offset) override;
  Status SetLink(int p, int node, const faults::LinkState& state) override;
  Status CutReplication(bool cut) override {
    if (!topology_) return Status::Usage("no replica: this trial has no failover topology");
    return topology_->CutReplication(cut);
  }
  void Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
              Nanos time) override;
  void Log(const std::string& line) override;

 private:
  ClientProc* Client(int p) const {
    if (p < 1 || p > static_cast<int>(clients_.size())) return nullptr;
    return const_cast<ClientProc*>(&clients_[p - 1]);
  }
  Status Setup();
  Status SetupEndpoints(const std::vector<std::string>& node_args);
  // --endpoint-control: DIR/n<N>, node N's control files' stem, and its server's pid.
  std::string ControlPath(int n) const { return o_.endpoint_control + "/n" + std::to_string(n); }
  pid_t ExternalPid(int n) const;
  // Lock node n (1-based) or the resource node (0), lab-started or the user's.
  locks::Endpoint NodeEndpoint(int n) const {
    if (!external_nodes_.empty()) return n == 0 ? external_resource_ : external_nodes_[n - 1];
    return n == 0 ? cluster_->resource().endpoint() : Node(n)->endpoint();
  }
  Status StartClients();
  void EventLoop(Nanos end, bool stopping);
  // Waits until every client's lock is ready (or failed, or its process exited), then
  // tells the ready ones to go. False when any client could not start: nothing is run.
  bool StartWhenReady();
  void WriteRunEvent(const std::string& key, const nlohmann::ordered_json& value);
  void HandleLine(ClientProc& c, const std::string& line);
  void StopClients();
  void FinalReads();
  void Teardown();
  void WriteEvent(const std::string& body);  // body: a JSON object without "index"
  // Queues one control line ("arm ...", "disarm", "go") for a client and writes what the
  // pipe takes now; never blocks. Beyond kMaxOutbox unsent bytes an arm or disarm is
  // dropped (logged): the client is stopped or stuck and would act on none of them.
  void SendControl(ClientProc& c, const std::string& line);
  void FlushControl(ClientProc& c);
  static constexpr size_t kMaxOutbox = 4096;  // bytes
  // One event of the lab's own processes ("nemesis", "harness"), fields in history order.
  void WriteLabEvent(const char* process, const char* type, const std::string& f,
                     const std::string& key, const nlohmann::json& value, Nanos time);
  void Progress(const std::string& line);
  // results.json: the history's judgement (checker::JudgeHistory) and the run's metadata.
  nlohmann::ordered_json Judge(double seconds);

  RunOptions o_;
  std::string driver_path_;  // driver:PATH locks: the program's absolute path; else empty
  bool quiet_;
  std::string run_dir_;
  FILE* history_ = nullptr;
  FILE* log_ = nullptr;
  int64_t next_index_ = 0;
  Nanos start_{0};
  Nanos created_ = MonotonicNow();
  std::unique_ptr<LabCluster> cluster_;
  // --endpoints: the user's servers (resolved to IPv4 for the proxy) instead of cluster_.
  std::vector<locks::Endpoint> external_nodes_;
  locks::Endpoint external_resource_;
  std::vector<ClientProc> clients_;
  LabNode* Node(int n) const {
    if (!cluster_ || n < 1 || n > node_count()) return nullptr;
    return cluster_->nodes()[n - 1].get();
  }
  static std::string LinkName(int p, int node) {
    return "c" + std::to_string(p) + (node == 0 ? "-resource" : "-n" + std::to_string(node));
  }
  Nanos NextFaultWakeup() const;

  LabPaths paths_;
  faults::FaultProxy proxy_;
  std::unique_ptr<SentinelTopology> topology_;
  std::vector<std::unique_ptr<faults::Fault>> faults_;
  bool fault_started_ = false;
  bool interrupted_ = false;
  int64_t lag_max_us_ = 0, lag_sleeps_ = 0, lag_over_10ms_ = 0, lag_over_50ms_ = 0;
  int lag_reports_ = 0;
  int64_t acquires_seen_ = 0;
  int unexpected_exits_ = 0;
  bool waiting_ready_ = false;  // the event loop returns once every client settled
  checker::RunFacts facts_;     // declared in the history's run start / end events
  bool run_ended_ = false;      // the run end event is written
  Status end_status_;           // the run's infrastructure status, for the end event
  // The first failed write of history.jsonl (disk full...): the run stops there, its history
  // is a prefix and the verdict unknown; `locklab run` exits 70 naming the file.
  Status history_error_;
};

void Trial::Log(const std::string& line) {
  if (log_ == nullptr) return;
  double t = ToMillis(MonotonicNow() - created_) / 1000.0;
  fprintf(log_, "[%8.3f] %s\n", t, line.c_str());
  fflush(log_);
}

void Trial::Progress(const std::string& line) {
  Log(line);
  if (!quiet_) std::cerr << "locklab: " << line << "\n";
}

void Trial::WriteEvent(const std::string& body) {
  if (history_ == nullptr || !history_error_.ok() || body.size() < 2 || body[0] != '{') return;
  std::string line = "{\"index\":" + std::to_string(next_index_++) + "," + body.substr(1) + "\n";
  // Flushed per event (a killed run keeps its prefix); a short write or failed flush ends
  // the history there: nothing after a gap may be judged as if it were whole.
  if (fwrite(line.data(), 1, line.size(), history_) != line.size() || fflush(history_) != 0) {
    history_error_ = Status::Io("write " + run_dir_ + "/history.jsonl: " + strerror(errno));
    Log("stopping: " + history_error_.message());  // `locklab run` prints the one line
  }
}

void Trial::SendControl(ClientProc& c, const std::string& line) {
  if (c.to_child < 0) return;
  if (c.outbox.size() + line.size() > kMaxOutbox && line != "go\n") {
    Log("client " + std::to_string(c.process) + " reads no control lines (stopped?): dropped " +
        line.substr(0, line.size() - 1));
    return;
  }
  c.outbox += line;
  FlushControl(c);
}

void Trial::FlushControl(ClientProc& c) {
  while (c.to_child >= 0 && !c.outbox.empty()) {
    ssize_t n = write(c.to_child, c.outbox.data(), c.outbox.size());
    if (n > 0) {
      c.outbox.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN) c.outbox.clear();  // EPIPE: the client is gone
      return;
    }
  }
}

void Trial::WriteLabEvent(const char* process, const char* type, const std::string& f,
                          const std::string& key, const nlohmann::json& value, Nanos time) {
  nlohmann::ordered_json j;
  j["time_ns"] = time.count();
  j["process"] = process;
  j["type"] = type;
  j["f"] = f;
  j["key"] = key;
  j["value"] = value;
  WriteEvent(j.dump());
}

void Trial::WriteRunEvent(const std::string& key, const nlohmann::ordered_json& value) {
  WriteLabEvent("harness", "info", "run", key, value, MonotonicNow());
}

void Trial::Record(const std::string& f, const std::string& fault, const nlohmann::json& value,
                   Nanos time) {
  WriteLabEvent("nemesis", "info", f, fault, value, time);
}

bool Trial::PauseClient(int p) {
  ClientProc* c = Client(p);
  if (!c || !c->running) return false;
  c->paused = kill(-c->pid, SIGSTOP) == 0;
  return c->paused;
}

bool Trial::ResumeClient(int p) {
  ClientProc* c = Client(p);
  if (!c || c->pid <= 0) return false;
  // A client that reported "paused" at a point stops itself just after the report; a SIGCONT
  // that overtakes that stop is lost and the client would stay stopped until teardown.
  if (c->paused) WaitUntilStopped(c->pid, Millis(500));
  c->paused = false;
  return kill(-c->pid, SIGCONT) == 0;
}

bool Trial::CrashClient(int p) {
  ClientProc* c = Client(p);
  if (!c || c->pid <= 0) return false;
  kill(-c->pid, SIGKILL);
  c->running = false;
  c->paused = false;
  c->holding.clear();
  return true;
}

void Trial::ArmPoint(int p, const std::string& point, const std::string& action) {
  ClientProc* c = Client(p);
  if (!c || c->to_child < 0) return;
  SendControl(*c, "arm " + point + " " + action + "\n");
}

void Trial::DisarmPoints(int p) {
  ClientProc* c = Client(p);
  if (!c || c->to_child < 0) return;
  SendControl(*c, "disarm\n");
}

std::vector<int> Trial::Holders() const {
  std::vector<int> out;
  for (const auto& c : clients_) {
    if (c.running && !c.holding.empty()) out.push_back(c.process);
  }
  return out;
}

pid_t Trial::ExternalPid(int n) const {
  if (o_.endpoint_control.empty() || n < 1 || n > node_count()) return 0;
  std::ifstream in(ControlPath(n) + ".pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return 0;
  // A stale pid file must never make the harness signal some other process.
  return ReadProcFile(static_cast<pid_t>(pid), "cmdline").find("redis-server") != std::string::npos
             ? static_cast<pid_t>(pid)
             : 0;
}

bool Trial::PauseNode(int n) {
  if (!external_nodes_.empty()) {
    pid_t pid = ExternalPid(n);
    return pid > 0 && kill(pid, SIGSTOP) == 0;
  }
  LabNode* node = Node(n);
  return node && node->Signal(SIGSTOP);
}

bool Trial::ResumeNode(int n) {
  if (!external_nodes_.empty()) {
    pid_t pid = ExternalPid(n);
    return pid > 0 && kill(pid, SIGCONT) == 0;
  }
  LabNode* node = Node(n);
  return node && node->Signal(SIGCONT);
}

void Trial::KillNode(int n) {
  if (!external_nodes_.empty()) {
    // The supervisor (docker/node-entrypoint.sh) keeps it down while nN.down exists; it
    // removes nN.pid once it reaped the server: wait for that (2 s at most).
    pid_t pid = ExternalPid(n);
    if (pid <= 0) return;
    WriteFile(ControlPath(n) + ".down", "down\n");
    kill(pid, SIGCONT);
    kill(pid, SIGKILL);
    Nanos end = MonotonicNow() + Millis(2000);
    while (ExternalPid(n) == pid && MonotonicNow() < end) SleepFor(Millis(5));
    Log("node n" + std::to_string(n) + " killed (server process " + std::to_string(pid) + ")");
    return;
  }
  if (LabNode* node = Node(n)) node->Kill();
}

Status Trial::RestartNode(int n) {
  if (!external_nodes_.empty()) {
    if (ExternalPid(n) > 0) return Status::Ok();  // still (or again) up
    unlink((ControlPath(n) + ".down").c_str());
    Nanos end = MonotonicNow() + Millis(5000);
    for (;;) {
      if (ExternalPid(n) > 0) {
        locks::RedisConnection c(NodeEndpoint(n), Millis(100), Millis(200));
        locks::Reply r = c.Command({"PING"});
        if (r.outcome == locks::Outcome::kOk && r.str == "PONG") {
          Log("node n" + std::to_string(n) + " restarted (server process " + std::to_string(ExternalPid(n)) + ")");
          return Status::Ok();
        }
      }
      if (MonotonicNow() >= end) return Status::Infrastructure("node n" + std::to_string(n) + " did not come back in 5 s");
      SleepFor(Millis(10));
    }
  }
  LabNode* node = Node(n);
  if (!node) return Status::Usage("no node n" + std::to_string(n));
  Status s = node->Restart();
  if (s.ok()) Log("node " + node->name() + " restarted pid " + std::to_string(node->pid()));
  return s;
}

Status Trial::SetNodeClock(int n, const std::string& offset) {
  if (!external_nodes_.empty()) {
    // The user's node runs under libfaketime reading DIR/n<N> (docker/node-entrypoint.sh).
    if (o_.endpoint_control.empty() || n < 1 || n > node_count()) {
      return Status::Usage("no clock control for node n" + std::to_string(n) + " (--endpoint-control)");
    }
    return ClockControlFile(o_.endpoint_control + "/n" + std::to_string(n)).Set(offset);
  }
  LabNode* node = Node(n);
  if (!node) return Status::Usage("no node n" + std::to_string(n));
  return node->clock().Set(offset);
}

Status Trial::SetClientClock(int p, const std::string& offset) {
  ClientProc* c = Client(p);
  if (!c || !c->clock) return Status::Usage("client " + std::to_string(p) + " has no clock control");
  return c->clock->Set(offset);
}

Status Trial::SetLink(int p, int node, const faults::LinkState& state) {
  return proxy_.SetLink(LinkName(p, node), state);
}

Nanos Trial::NextFaultWakeup() const {
  Nanos next = Nanos::max();
  for (const auto& f : faults_) next = std::min(next, f->NextWakeup());
  return next;
}

Status Trial::Setup() {
  if (o_.seed == 0) {
    o_.seed = std::stoull(RandomToken().substr(0, 12), nullptr, 16) + 1;
  }
  const locks::LockInfo* info = locks::FindLock(o_.lock);
  if (info == nullptr) return Status::Usage("run: lock '" + o_.lock + "': unknown lock id (see `locklab list`)");
  for (const auto& fo : o_.faults) {
    if (!locks::FaultApplies(*info, fo.id)) {
      return Status::Usage("fault '" + fo.id + "' does not apply to lock '" + o_.lock +
                           "' (see `locklab list`)");
    }
  }
  if (o_.nodes == 0) o_.nodes = info->default_nodes;
  if (o_.stuck_after.count() == 0) o_.stuck_after = 2 * o_.ttl + Millis(1000);
  Status s = CreateRunDir(o_.out_dir, o_.name, o_.seed, &run_dir_);
  if (!s.ok()) return s;
  s = WriteFile(run_dir_ + "/scenario.toml", ScenarioToToml(o_));
  if (!s.ok()) return s;
  log_ = fopen((run_dir_ + "/lab.log").c_str(), "a");
  history_ = fopen((run_dir_ + "/history.jsonl").c_str(), "w");
  if (!history_) return Status::Io("write " + run_dir_ + "/history.jsonl: " + strerror(errno));
  if (!log_) return Status::Io("write " + run_dir_ + "/lab.log: " + strerror(errno));
  MakeDirs(run_dir_ + "/nodes");
  MakeDirs(run_dir_ + "/clients");
  Log("scenario " + o_.name + " seed " + std::to_string(o_.seed) + " lock " + o_.lock +
      " faults " + FaultIds(o_));
  // What the judge needs beyond the events goes into the history itself, so that
  // `locklab check history.jsonl` judges exactly as this run does (checker/verdict.h).
  for (const auto& fo : o_.faults) facts_.faults.push_back(fo.id);
  facts_.stuck_after = o_.stuck_after;
  WriteRunEvent("start", checker::RunStartValue(facts_));
  if (!history_error_.ok()) return history_error_;

  // Validate the lock config before starting anything (unknown knobs, bad values).
  locks::LockConfig probe;
  probe.algorithm = o_.lock;
  probe.nodes.assign(o_.nodes, locks::Endpoint{});
  probe.ttl = o_.ttl;
  probe.knobs = o_.knobs;
  probe.driver_args = o_.driver_args;
  // A driver:PATH lock's clients get the program's absolute path (checked here: exit 64).
  s = ResolveDriverPath(o_.lock, &driver_path_);
  if (!s.ok()) return s;
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
  if (!o_.endpoints.empty()) return SetupEndpoints(node_args);
  cluster_ = std::make_unique<LabCluster>(run_dir_ + "/nodes", paths_);
  s = cluster_->Start(o_.nodes, false, node_args, info->backend);
  if (!s.ok()) return s;
  s = proxy_.Start();
  if (!s.ok()) return s;
  bool sentinel = false;
  for (const auto& f : faults_) sentinel = sentinel || f->NeedsSentinel();
  if (sentinel && !driver_path_.empty()) {
    return Status::Usage("fault failover: a driver:PATH lock gets fixed node addresses in "
                         "LOCKLAB_NODES, not Sentinel discovery");
  }
  if (sentinel) {
    if (o_.nodes != 1) {
      return Status::Usage("fault failover: needs a single-node lock (n1 and its replica); " +
                           o_.lock + " uses " + std::to_string(o_.nodes) + " nodes");
    }
    topology_ = std::make_unique<SentinelTopology>(run_dir_ + "/nodes", paths_, &proxy_);
    s = topology_->Start(*Node(1));
    if (!s.ok()) return s;
    Log("replica r1 on " + topology_->replica().endpoint().ToString() + " pid " +
        std::to_string(topology_->replica().pid()));
    for (const auto& e : topology_->sentinels()) Log("sentinel on " + e.ToString());
  }
  for (auto& n : cluster_->nodes()) {
    Log("node " + n->name() + " on " + n->endpoint().ToString() + " pid " + std::to_string(n->pid()));
  }
  Log("node resource on " + cluster_->resource().endpoint().ToString() + " pid " +
      std::to_string(cluster_->resource().pid()));
  return Status::Ok();
}

// The user's servers: nothing to start or stop. Resolve each (the proxy dials IPv4), check
// it answers, and delete what an earlier run left under the lab's keys (lock:<i>,
// fence:lock:<i>, counter:<i>) so the counter starts at 0 as on a fresh lab node.
Status Trial::SetupEndpoints(const std::vector<std::string>& node_args) {
  Status s = CheckEndpoints(o_);
  if (!s.ok()) return s;
  std::vector<locks::Endpoint> all;
  for (const auto& url : o_.endpoints) {
    std::string host, error;
    int port = 0;
    ParseRedisUrl(url, &host, &port, &error);
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || res == nullptr) {
      return Status::Infrastructure("endpoint " + url + ": cannot resolve " + host + ": " + gai_strerror(rc));
    }
    char ip[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, ip, sizeof(ip));
    freeaddrinfo(res);
    all.push_back({ip, port});
  }
  int n = LockNodes(o_);
  external_nodes_.assign(all.begin(), all.begin() + n);
  external_resource_ = static_cast<int>(all.size()) > n ? all[n] : all[0];
  for (size_t i = 0; i < all.size(); ++i) {
    locks::RedisConnection conn(all[i], Millis(1000), Millis(1000));
    std::vector<std::string> del = {"DEL"};
    for (int k = 0; k < o_.keys; ++k) {
      del.push_back(workloads::LockKey(k));
      del.push_back("fence:" + workloads::LockKey(k));
      del.push_back(workloads::CounterKey(k));
    }
    locks::Reply r = conn.Command(del);
    if (r.outcome != locks::Outcome::kOk || r.is_error) {
      return Status::Infrastructure("endpoint " + o_.endpoints[i] + ": " +
                                    (r.is_error ? r.str : r.transport_error));
    }
    std::string role = static_cast<int>(i) < n ? "node n" + std::to_string(i + 1) : "node resource";
    Log(role + " is " + o_.endpoints[i] + " (" + all[i].ToString() + ", not started by the lab)");
  }
  if (static_cast<int>(all.size()) == n) {
    Log("node resource is n1's server " + o_.endpoints[0] + " (counter keys on it)");
  }
  if (!o_.endpoint_control.empty()) {
    for (int i = 1; i <= n; ++i) {
      // Every node up, its clock true, whatever an interrupted earlier run left behind.
      if (access((ControlPath(i) + ".down").c_str(), F_OK) == 0) {
        Status rs = RestartNode(i);
        if (!rs.ok()) return rs;
      }
      if (ExternalPid(i) <= 0) {
        return Status::Infrastructure("--endpoint-control: no " + ControlPath(i) + ".pid: is " +
                                      o_.endpoints[i - 1] +
                                      " started by docker/node-entrypoint.sh n" + std::to_string(i) +
                                      " with LOCKLAB_CONTROL_DIR=" + o_.endpoint_control + "?");
      }
      kill(ExternalPid(i), SIGCONT);
      Status cs = SetNodeClock(i, "+0");
      if (!cs.ok()) return Status::Infrastructure("--endpoint-control: " + cs.message());
      // What a lab node gets on its command line (e.g. the restart fault's aof-always),
      // set on the running server instead.
      locks::RedisConnection conn(external_nodes_[i - 1], Millis(1000), Millis(1000));
      for (size_t a = 0; a + 1 < node_args.size(); a += 2) {
        std::string key = node_args[a].substr(node_args[a].rfind('-') + 1);
        locks::Reply r = conn.Command({"CONFIG", "SET", key, node_args[a + 1]});
        if (r.outcome != locks::Outcome::kOk || r.is_error) {
          return Status::Infrastructure("endpoint " + o_.endpoints[i - 1] + ": CONFIG SET " + key + ": " +
                                        (r.is_error ? r.str : r.transport_error));
        }
      }
    }
    Log("node clocks: libfaketime control files " + o_.endpoint_control + "/n1..n" + std::to_string(n));
  }
  return proxy_.Start();
}

Status Trial::StartClients() {
  Rng rng(o_.seed ^ 0x5eedc11e);
  std::string exe = SelfExe();
  for (int p = 1; p <= o_.clients; ++p) {
    int in_pipe[2], out_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
      return Status::Infrastructure(std::string("pipe: ") + strerror(errno));
    }
    SpawnOptions so;
    so.argv = {exe, "client", "--process", std::to_string(p), "--lock",
               driver_path_.empty() ? o_.lock : locks::kDriverPrefix + driver_path_,
               "--ttl", std::to_string(o_.ttl.count()),
               "--retry-delay", std::to_string(o_.retry_delay.count()),
               "--timeout", std::to_string(o_.command_timeout.count()),
               "--keys", std::to_string(o_.keys), "--hold", std::to_string(o_.hold.count()),
               "--think", std::to_string(o_.think.count()),
               "--acquire-timeout", std::to_string(o_.acquire_timeout.count()),
               "--seed", std::to_string(rng.Fork() | 1),
               "--resource", ""};
    // Every connection goes through its own fault proxy link (DESIGN.md 2).
    std::string n1_link;
    for (int n = 0; n <= node_count(); ++n) {
      locks::Endpoint e = NodeEndpoint(n);
      int port = 0;
      Status ls = proxy_.AddLink(LinkName(p, n), {e.host, e.port}, &port);
      if (!ls.ok()) return ls;
      std::string via = "127.0.0.1:" + std::to_string(port);
      if (n == 0) {
        so.argv[so.argv.size() - 1] = via;
      } else {
        so.argv.push_back("--node");
        so.argv.push_back(via);
        if (n == 1) n1_link = via;
      }
    }
    if (topology_) {
      // Clients find the master through Sentinel, each node through its own link.
      int rport = 0;
      locks::Endpoint r = topology_->replica().endpoint();
      Status ls = proxy_.AddLink("c" + std::to_string(p) + "-r1", {r.host, r.port}, &rport);
      if (!ls.ok()) return ls;
      for (const auto& e : topology_->sentinels()) {
        so.argv.push_back("--sentinel");
        so.argv.push_back(e.ToString());
      }
      so.argv.push_back("--node-map");
      so.argv.push_back(topology_->monitored_master().ToString() + "=" + n1_link);
      so.argv.push_back("--node-map");
      so.argv.push_back(r.ToString() + "=127.0.0.1:" + std::to_string(rport));
    }
    for (const auto& a : o_.driver_args) {
      so.argv.push_back("--driver-arg");
      so.argv.push_back(a);
    }
    for (const auto& [k, v] : o_.knobs) {
      so.argv.push_back("--knob");
      so.argv.push_back(k + "=" + v);
    }
    so.stdin_fd = in_pipe[0];
    so.stdout_fd = out_pipe[1];
    so.log_path = run_dir_ + "/clients/" + std::to_string(p) + ".log";
    so.unset_env = {"LD_PRELOAD"};
    std::unique_ptr<ClockControlFile> clock;
    bool needs_clock = false;
    for (const auto& f : faults_) needs_clock = needs_clock || f->NeedsClientClock();
    if (needs_clock) {
      // The client's wall clock (what the lock measures) is faked; history timestamps use
      // the raw monotonic syscall and stay true.
      clock = std::make_unique<ClockControlFile>(run_dir_ + "/clients/" + std::to_string(p) + ".clock");
      Status cs = clock->Set("+0");
      if (!cs.ok()) return cs;
      so.unset_env.clear();
      so.env["LD_PRELOAD"] = paths_.libfaketime;
      so.env["FAKETIME_TIMESTAMP_FILE"] = clock->path();
      so.env["FAKETIME_NO_CACHE"] = "1";
      so.env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
    }
    pid_t pid;
    Status s = Spawn(so, &pid);
    close(in_pipe[0]);
    close(out_pipe[1]);
    if (!s.ok()) {
      close(in_pipe[1]);
      close(out_pipe[0]);
      return s;
    }
    ClientProc c;
    c.process = p;
    c.pid = pid;
    c.clock = std::move(clock);
    c.to_child = in_pipe[1];
    c.from_child = out_pipe[0];
    c.running = true;
    fcntl(c.from_child, F_SETFL, fcntl(c.from_child, F_GETFL) | O_NONBLOCK);
    // A SIGSTOPped client reads no control lines: a blocking write would stop the harness
    // with it, signals included (SendControl keeps what the pipe does not take).
    fcntl(c.to_child, F_SETFL, fcntl(c.to_child, F_GETFL) | O_NONBLOCK);
    clients_.push_back(std::move(c));
    Log("client " + std::to_string(p) + " pid " + std::to_string(pid));
  }
  return Status::Ok();
}

void Trial::HandleLine(ClientProc& c, const std::string& line) {
  if (line.rfind("{\"ctl\"", 0) == 0) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return;
    std::string ctl = j.value("ctl", "");
    if (ctl == "lag") {
      lag_reports_++;
      lag_max_us_ = std::max<int64_t>(lag_max_us_, j.value("max_us", int64_t{0}));
      lag_sleeps_ += j.value("sleeps", int64_t{0});
      lag_over_10ms_ += j.value("over_10ms", int64_t{0});
      lag_over_50ms_ += j.value("over_50ms", int64_t{0});
      return;
    }
    if (ctl == "ready") {
      c.ready = true;
      return;
    }
    if (ctl == "failed") {
      c.failure = j.value("reason", std::string("its lock could not start"));
      return;
    }
    if (ctl == "paused" || ctl == "slowed") {
      c.paused = ctl == "paused";
      std::string point = j.value("point", "");
      Nanos t(j.value("time_ns", MonotonicNow().count()));
      bool handled = false;
      if (fault_started_) {
        for (auto& f : faults_) {
          if (f->OnPausePoint(*this, c.process, point, t)) {
            handled = true;
            break;
          }
        }
      }
      if (!handled && c.paused) ResumeClient(c.process);
    }
    return;
  }
  // Track what each client holds (for faults that target holders).
  if (line.find("\"acquire\"") != std::string::npos || line.find("\"release\"") != std::string::npos) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) {
      std::string type = j.value("type", ""), f = j.value("f", ""), key = j.value("key", "");
      // A client holds from its acquire's ok until its release completes (the delete has
      // then run on the server) or it asks again.
      if (f == "acquire" && type == "ok") {
        c.holding.insert(key);
        ++acquires_seen_;
      } else if ((f == "release" && type != "invoke") || (f == "acquire" && type == "invoke")) {
        c.holding.erase(key);
      }
    }
  }
  WriteEvent(line);
  if (fault_started_) {
    Nanos now = MonotonicNow();
    for (auto& f : faults_) f->OnClientEvent(*this, now);
  }
}

// Streams events until `end` (or until every client exited when `stopping`).
void Trial::EventLoop(Nanos end, bool stopping) {
  for (;;) {
    Nanos now = MonotonicNow();
    if (!stopping && g_signals.load() > 0) {
      interrupted_ = true;
      return;
    }
    if (!stopping && !history_error_.ok()) return;
    if (now >= end) return;
    if (waiting_ready_) {
      bool settled = true;
      for (const auto& c : clients_) settled = settled && (c.ready || !c.failure.empty() || c.from_child < 0);
      if (settled) return;
    }
    if (!stopping && fault_started_) {
      for (auto& f : faults_) {
        if (now >= f->NextWakeup()) f->Tick(*this, now);
      }
    }
    std::vector<pollfd> fds;
    std::vector<ClientProc*> owners;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    owners.push_back(nullptr);
    size_t readers = 0;
    for (auto& c : clients_) {
      if (c.from_child >= 0) {
        fds.push_back({c.from_child, POLLIN, 0});
        owners.push_back(&c);
        ++readers;
      }
    }
    for (auto& c : clients_) {
      if (c.to_child >= 0 && !c.outbox.empty()) {
        fds.push_back({c.to_child, POLLOUT, 0});
        owners.push_back(&c);
      }
    }
    if (stopping && readers == 0) return;  // every client is gone
    Nanos wake = end;
    if (!stopping && fault_started_) wake = std::min(wake, NextFaultWakeup());
    int timeout_ms = static_cast<int>(std::max<int64_t>(
        0, std::min<int64_t>(200, (wake - now).count() / 1000000 + 1)));
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    if (fds[0].revents & POLLIN) {
      char buf[16];
      (void)!read(g_signal_pipe[0], buf, sizeof(buf));
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].events == POLLOUT) {
        if (fds[i].revents != 0) FlushControl(*owners[i]);
        continue;
      }
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ClientProc& c = *owners[i];
      char buf[65536];
      ssize_t got;
      while ((got = read(c.from_child, buf, sizeof(buf))) > 0) {
        c.buffer.append(buf, static_cast<size_t>(got));
        size_t nl;
        while ((nl = c.buffer.find('\n')) != std::string::npos) {
          std::string line = c.buffer.substr(0, nl);
          c.buffer.erase(0, nl + 1);
          HandleLine(c, line);
        }
      }
      if (got == 0) {  // EOF: the client exited
        close(c.from_child);
        c.from_child = -1;
        bool crashed_by_fault = !c.running;
        c.running = false;
        if (!stopping && !crashed_by_fault && !waiting_ready_) {
          ++unexpected_exits_;
          Progress("client " + std::to_string(c.process) + " exited during the run (see clients/" +
                   std::to_string(c.process) + ".log)");
        }
      }
    }
  }
}

bool Trial::StartWhenReady() {
  // A driver has start_timeout_ms (its knob, 5 s by default) to say hello, and its client
  // reports ready or failed by then; the margin covers the client's own start on a busy
  // machine. Start-up is never charged to the first operation or the fault schedule.
  Millis limit(5000);
  auto knob = o_.knobs.find("start_timeout_ms");
  if (knob != o_.knobs.end()) limit = Millis(std::atoll(knob->second.c_str()));
  waiting_ready_ = true;
  EventLoop(MonotonicNow() + limit + Millis(10000), false);
  waiting_ready_ = false;
  if (interrupted_) return false;
  for (auto& c : clients_) {
    if (c.ready) continue;
    std::string why = c.failure;
    if (why.empty() && c.from_child < 0) {
      why = "exited before its lock was ready";
      std::string last = LastLogLine(run_dir_ + "/clients/" + std::to_string(c.process) + ".log");
      if (!last.empty()) why += ": " + last;
    } else if (why.empty()) {
      why = "its lock was not ready within " + std::to_string((limit + Millis(10000)).count()) + " ms";
    }
    facts_.client_failures.push_back("client " + std::to_string(c.process) + ": " + why);
  }
  if (!facts_.client_failures.empty()) {
    std::string more = facts_.client_failures.size() > 1
                           ? " (and " + std::to_string(facts_.client_failures.size() - 1) + " more; see clients/N.log)"
                           : "";
    Progress("nothing ran, a lock did not start; " + facts_.client_failures.front() + more);
    return false;
  }
  for (auto& c : clients_) {
    SendControl(c, "go\n");
  }
  return true;
}

void Trial::StopClients() {
  for (auto& c : clients_) {
    if (c.pid <= 0) continue;
    kill(-c.pid, SIGCONT);
    kill(c.pid, SIGTERM);
    if (c.to_child >= 0) {
      close(c.to_child);
      c.to_child = -1;
      c.outbox.clear();
    }
  }
  // A client finishes its cycle: at most an acquire deadline, a hold and a few commands.
  Millis grace = o_.acquire_timeout + o_.hold + 4 * o_.command_timeout + Millis(1000);
  // Interrupted (or the history cannot be written): the run ends within a second of the
  // signal, so a client still waiting in its acquire is not waited for; its open operation
  // stays open in the history (an info outcome for the judge), and the verdict is unknown.
  if (interrupted_ || !history_error_.ok()) grace = std::min(grace, Millis(500));
  EventLoop(MonotonicNow() + grace, /*stopping=*/true);
  for (auto& c : clients_) {
    if (c.pid <= 0) continue;
    if (!WaitExit(c.pid, Millis(0))) {
      Log("client " + std::to_string(c.process) + " did not stop in time: killed");
      KillAndReap(c.pid);
    }
    c.pid = -1;
    c.running = false;
    if (c.from_child >= 0) {
      close(c.from_child);
      c.from_child = -1;
    }
  }
}

void Trial::FinalReads() {
  if (!cluster_ && external_nodes_.empty()) return;
  locks::RedisConnection conn(NodeEndpoint(0), Millis(500), Millis(500));
  for (int k = 0; k < o_.keys; ++k) {
    std::string key = workloads::CounterKey(k);
    auto event = [&](const char* type, const nlohmann::json& v) {
      WriteLabEvent("harness", type, "read", key, v, MonotonicNow());
    };
    event("invoke", nullptr);
    locks::Reply r = conn.Command({"GET", key});
    if (r.outcome != locks::Outcome::kOk || r.is_error) {
      event("info", {{"error", r.is_error ? r.str : r.transport_error}});
      continue;
    }
    if (r.is_nil) {
      event("ok", nullptr);  // never written (the register model starts at nil too)
    } else {
      try {
        event("ok", std::stoll(r.str));
      } catch (...) {
        event("info", {{"error", "not a number: " + r.str}});
      }
    }
  }
}

void Trial::Teardown() {
  if (fault_started_) {
    for (auto& f : faults_) f->Teardown(*this, MonotonicNow());
    fault_started_ = false;
  }
  for (auto& c : clients_) {
    if (c.pid > 0) KillAndReap(c.pid);
    c.pid = -1;
    if (c.to_child >= 0) close(c.to_child);
    if (c.from_child >= 0) close(c.from_child);
    c.to_child = c.from_child = -1;
  }
  if (topology_) topology_->Stop();
  proxy_.Stop();
  if (cluster_) cluster_->Stop();
  if (history_ && !run_ended_) {
    facts_.interrupted = interrupted_;
    facts_.client_exits = unexpected_exits_;
    if (!end_status_.ok()) facts_.error = end_status_.message();
    WriteRunEvent("end", checker::RunEndValue(facts_));
    run_ended_ = true;
  }
  if (history_) fclose(history_);
  history_ = nullptr;
}

nlohmann::ordered_json Trial::Judge(double seconds) {
  nlohmann::ordered_json r;
  r["scenario"] = o_.name;
  r["algorithm"] = o_.lock;
  r["faults"] = nlohmann::ordered_json::array();
  for (const auto& f : o_.faults) r["faults"].push_back(f.id);
  r["seed"] = o_.seed;
  checker::History h;
  Status read = run_dir_.empty()
                    ? Status::BadInput("no run directory")
                    : checker::ReadJsonlHistory(run_dir_ + "/history.jsonl", &h, true);
  if (read.ok()) {
    // The one judge (checker/verdict.h): `locklab check` on this history says the same.
    r.update(checker::JudgeHistory(h).ToJson());
  } else {
    r["verdict"] = "unknown";
    r["verdict_reason"] = "the history cannot be read: " + read.message();
    r["history_error"] = read.message();
    r["checks"] = nlohmann::ordered_json::array();
  }
  // The lab's own lag (workloads/lag_meter.h): the clients' hold and think sleeps that ended
  // late. Beyond a tenth of the TTL the machine itself paused the clients long enough to
  // matter, and a violation may be the lab's doing rather than the fault's: flagged, never
  // hidden (the verdict stays what the history shows).
  const double lag_ms = lag_max_us_ / 1000.0;
  const double lag_bound_ms = o_.ttl.count() / 10.0;
  r["lab_lag"] = {{"max_ms", lag_ms},       {"bound_ms", lag_bound_ms},
                  {"sleeps", lag_sleeps_},  {"over_10ms", lag_over_10ms_},
                  {"over_50ms", lag_over_50ms_}, {"clients_reporting", lag_reports_},
                  {"timing_trusted", lag_ms <= lag_bound_ms}};
  r["interrupted"] = interrupted_;
  if (!facts_.error.empty()) r["error"] = facts_.error;
  if (unexpected_exits_ > 0) r["client_exits"] = unexpected_exits_;
  if (!facts_.client_failures.empty()) r["client_failures"] = facts_.client_failures;
  r["duration_ms"] = static_cast<int64_t>(seconds * 1000);
  r["config"] = {{"clients", o_.clients}, {"keys", o_.keys}, {"ttl_ms", o_.ttl.count()},
                 {"hold_ms", o_.hold.count()}, {"nodes", o_.nodes},
                 {"command_timeout_ms", o_.command_timeout.count()}};
  if (!o_.endpoints.empty()) r["config"]["endpoints"] = o_.endpoints;
  return r;
}

TrialResult Trial::Run() {
  InstallInterruptHandlers();
  TrialResult result;
  Nanos t0 = MonotonicNow();
  Status s = Setup();
  result.run_dir = run_dir_;
  if (s.ok()) s = StartClients();
  bool ready = s.ok() && StartWhenReady();
  if (ready) {
    start_ = MonotonicNow();
    for (auto& f : faults_) {
      if (s.ok()) s = f->Setup(*this, start_);
    }
    fault_started_ = s.ok();
  }
  if (ready && s.ok()) {
    Progress("running " + o_.name + " for " + std::to_string(o_.duration.count() / 1000.0).substr(0, 5) +
             " s with " + std::to_string(o_.clients) + " clients (seed " + std::to_string(o_.seed) + ")");
    EventLoop(start_ + o_.duration, false);
    if (interrupted_) Progress("interrupted: healing faults and stopping clients");
    for (auto& f : faults_) f->Teardown(*this, MonotonicNow());
    fault_started_ = false;
    StopClients();
    FinalReads();
  }
  end_status_ = s;
  Teardown();  // writes the history's run end event
  // A history that could not be written in full is the run's failure (exit 70), whatever
  // else went on; its prefix is still judged below, and never judged safe.
  if (s.ok() && !history_error_.ok()) s = history_error_;
  double seconds = ToMillis(MonotonicNow() - t0) / 1000.0;
  if (run_dir_.empty()) {
    result.status = s;
    result.exit_code = s.ExitCode();
    return result;
  }
  result.results = Judge(seconds);
  if (!history_error_.ok()) {
    result.results["verdict"] = "unknown";
    result.results["verdict_reason"] = "the history is incomplete: " + history_error_.message();
    result.results["history_error"] = history_error_.message();
  }
  result.results["run_dir"] = run_dir_;
  Status ws = WriteFile(run_dir_ + "/results.json", result.results.dump(2) + "\n");
  Status wj = WriteFile(run_dir_ + "/junit.xml", JunitXml(o_.name, result.results["checks"], seconds));
  if (s.ok()) s = ws.ok() ? wj : ws;
  result.status = s;
  std::string verdict = result.results["verdict"];
  Log("verdict " + verdict);
  if (log_) fclose(log_);
  log_ = nullptr;
  if (!s.ok()) result.exit_code = s.ExitCode();
  else if (verdict == "violated") result.exit_code = 1;
  else if (verdict == "unknown") result.exit_code = 2;
  else result.exit_code = 0;
  return result;
}

}  // namespace

void InstallInterruptHandlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // the terminal closed: end the run as for SIGTERM
  signal(SIGPIPE, SIG_IGN);
}

bool Interrupted() { return g_signals.load() > 0; }

TrialResult RunTrial(RunOptions options, bool quiet) {
  Trial t(std::move(options), quiet);
  return t.Run();
}

}  // namespace locklab::harness
