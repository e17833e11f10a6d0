#include "harness/lab/lab_cluster.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "harness/lab/process.h"
#include "harness/lab/run_store.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

bool Executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }
bool Readable(const std::string& p) { return !p.empty() && access(p.c_str(), R_OK) == 0; }

}  // namespace

Status LabPaths::Discover(LabPaths* out) {
  LabPaths p;
  const char* env = getenv("LOCKLAB_REDIS_SERVER");
  p.redis_server = env ? env : std::string(LOCKLAB_SOURCE_DIR) + "/.lab/redis/bin/redis-server";
  if (!Executable(p.redis_server)) {
    return Status::Infrastructure("lab Redis not found at " + p.redis_server +
                                  " (run ./locklab setup, or set LOCKLAB_REDIS_SERVER)");
  }
  env = getenv("LOCKLAB_LIBFAKETIME");
  if (env) {
    p.libfaketime = env;
  } else {
    for (const char* c : {"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                          "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                          "/usr/lib/faketime/libfaketime.so.1"}) {
      if (Readable(c)) {
        p.libfaketime = c;
        break;
      }
    }
  }
  if (!Readable(p.libfaketime)) {
    return Status::Infrastructure("libfaketime not found (apt-get install libfaketime, or set "
                                  "LOCKLAB_LIBFAKETIME)");
  }
  *out = p;
  return Status::Ok();
}

Status ClockControlFile::Set(const std::string& spec) const {
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Infrastructure("write " + tmp + ": " + strerror(errno));
    out << spec << "\n";
  }
  if (rename(tmp.c_str(), path_.c_str()) != 0) {
    return Status::Infrastructure("rename " + tmp + ": " + strerror(errno));
  }
  return Status::Ok();
}

Status WaitForPing(const locks::Endpoint& endpoint, Millis timeout, pid_t pid) {
  Nanos end = MonotonicNow() + timeout;
  locks::RedisConnection conn(endpoint, Millis(100), Millis(200));
  for (;;) {
    locks::Reply r = conn.Command({"PING"});
    if (r.outcome == locks::Outcome::kOk && r.str == "PONG") return Status::Ok();
    if (pid > 0 && !ProcessAlive(pid)) {
      return Status::Infrastructure("server on " + endpoint.ToString() + " exited during start");
    }
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("server on " + endpoint.ToString() + " did not answer PING");
    }
    SleepFor(Millis(10));
  }
}

LabNode::LabNode(NodeOptions options, std::string dir, const LabPaths& paths)
    : options_(std::move(options)),
      server_(MakeBackendServer(options_.kind, options_.sentinel)),
      dir_(std::move(dir)),
      log_path_(dir_ + ".log"),
      paths_(paths),
      clock_(dir_ + "/clock") {}

LabNode::~LabNode() {
  if (!options_.detached) {
    Kill();
    if (!scratch_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(scratch_, ec);
    }
  }
}

bool LabNode::Running() const { return ProcessAlive(pid_); }

Status LabNode::Start() {
  // Whatever the server, a picked port that another process took before the server bound
  // it is given up for a fresh one, up to this many starts in all.
  constexpr int kPortTakenStarts = 3;
  for (int attempt = 1;; ++attempt) {
    Status s = Launch();
    if (s.ok()) s = WaitReady(server_->ready_timeout());
    if (s.ok()) return s;
    const bool port_taken = options_.port == 0 &&
                            s.message().find("address already in use") != std::string::npos;
    if (attempt >= server_->start_attempts() && !(port_taken && attempt < kPortTakenStarts)) {
      return s;
    }
  }
}

Status LabNode::Restart() {
  Kill();
  Status s = SpawnOnPort(port_);
  if (!s.ok()) return s;
  s = server_->WaitRestarted(endpoint(), server_->ready_timeout(), pid_);
  if (s.ok()) s = ConfirmServesItsPort();
  return s.ok() ? s : StartFailed(s);
}

namespace {

// True when every directory on the way to `path` (itself included) lets other users through.
bool OthersCanTraverse(const std::string& path) {
  std::filesystem::path p = std::filesystem::absolute(path);
  for (; !p.empty(); p = p.parent_path()) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    if (p == p.root_path()) break;
  }
  return true;
}

// Scratch directories of harnesses that were SIGKILLed (their servers died with them by
// PDEATHSIG, but nobody removed the data): each holds owner.pid; a dead owner's is removed.
void SweepStaleScratch(const std::string& tmp, locks::Backend kind) {
  std::error_code ec;
  std::string prefix = "locklab-" + locks::BackendName(kind) + "-";
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::ifstream in(e.path() / "owner.pid");
    long owner = 0;
    if (!(in >> owner) || owner <= 0) continue;  // not ours to judge
    if (kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
}

}  // namespace

Status LabNode::MakeScratch() {
  const char* env = getenv("TMPDIR");
  std::string tmp = env && *env ? env : "/tmp";
  if (server_->runs_as_another_user() && !OthersCanTraverse(tmp)) tmp = "/tmp";
  SweepStaleScratch(tmp, options_.kind);
  std::string tmpl = tmp + "/locklab-" + locks::BackendName(options_.kind) + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::Infrastructure("mkdtemp " + tmpl + ": " + strerror(errno));
  }
  scratch_ = tmpl;
  Status s = MakeDirs(scratch_ + "/data");
  if (s.ok()) s = WriteFile(scratch_ + "/owner.pid", std::to_string(getpid()) + "\n");
  return s;
}

Status LabNode::Launch() {
  Status s = MakeDirs(dir_);
  if (!s.ok()) return s;
  if (scratch_.empty() && server_->keeps_scratch()) {
    s = MakeScratch();
    if (s.ok()) s = server_->PrepareScratch(Site());
    if (!s.ok()) return s;
  }
  // The node's ports stay held (PortHold) for its life: free when the server binds them at
  // start and again at a restart after a kill, whatever else runs on the machine.
  holds_.clear();
  int port = options_.port;
  if (port == 0) {
    PortHold picked;
    s = PortHold::Pick(&picked);
    if (!s.ok()) return s;
    port = picked.port();
    holds_.push_back(std::move(picked));
  }
  for (int p : {options_.port, options_.peer_port, options_.election_port}) {
    PortHold h;  // a preset port someone else already serves on cannot be held: Confirm says so
    if (p > 0 && PortHold::Hold(p, &h).ok()) holds_.push_back(std::move(h));
  }
  s = server_->PrepareLaunch(Site(), port);
  if (!s.ok()) return s;
  return SpawnOnPort(port);
}

Status LabNode::SpawnOnPort(int port) {
  SpawnOptions o;
  Status s = server_->PrepareSpawn(Site(), port, &o);
  if (!s.ok()) return s;
  o.log_path = log_path();
  o.detached = options_.detached;
  pid_t pid;
  s = Spawn(o, &pid);
  if (!s.ok()) return s;
  pid_ = pid;
  port_ = port;
  return Status::Ok();
}

Status LabNode::WaitReady(Millis timeout) {
  Status s = server_->WaitServing(endpoint(), timeout, pid_);
  if (s.ok()) s = ConfirmServesItsPort();
  return s.ok() ? s : StartFailed(s);
}

Status LabNode::ConfirmServesItsPort() const {
  const std::vector<uint64_t> inodes = ListeningSocketInodes(port_);
  if (inodes.empty()) return Status::Ok();  // no table to read: the probe's answer stands
  std::vector<pid_t> ours = DescendantsOf(pid_);
  ours.push_back(pid_);
  for (pid_t p : server_->ProcessesOutsideGroup(pid_)) ours.push_back(p);
  for (pid_t p : ours) {
    if (HoldsSocket(p, inodes)) return Status::Ok();
  }
  std::string holders;
  for (pid_t p : SocketHolders(inodes)) holders += (holders.empty() ? "" : ", ") + std::to_string(p);
  return Status::Infrastructure(
      "port " + std::to_string(port_) + " is served by another process" +
      (holders.empty() ? std::string() : " (pid " + holders + ")") + ", not by " +
      server_->program() + " (pid " + std::to_string(pid_) + "): address already in use");
}

Status LabNode::StartFailed(const Status& why) {
  Status s = Status::Infrastructure("node " + options_.name + ": " + why.message() +
                                    "; log: " + LogTail(log_path(), 300));
  Kill();
  return s;
}

void LabNode::Kill() {
  if (pid_ <= 0) return;
  std::vector<pid_t> outside = server_->KillOutsideGroup(pid_);
  KillAndReap(pid_);
  pid_ = -1;
  // Reparented to init, which reaps them; wait until they are gone or zombies (2 s at most).
  Nanos end = MonotonicNow() + Millis(2000);
  for (pid_t c : outside) {
    while (!ProcessGone(c) && MonotonicNow() < end) SleepFor(Millis(2));
  }
}

bool LabNode::Signal(int sig) {
  if (pid_ <= 0) return false;
  if (kill(-pid_, sig) != 0) return false;
  for (pid_t c : server_->ProcessesOutsideGroup(pid_)) kill(c, sig);
  return true;
}

LabNode& LabCluster::AddNode(const NodeOptions& o) {
  nodes_.push_back(std::make_unique<LabNode>(o, dir_ + "/" + o.name, paths_));
  return *nodes_.back();
}

Status LabCluster::StartMembers(int count, bool detached, locks::Backend kind,
                                const BackendServer& server) {
  // Every member's ports are known before any starts: each lists the others' peer addresses.
  std::vector<NodeOptions> members;
  // Held until each member holds its own (LabNode::Launch): the kernel picks each once.
  std::vector<PortHold> picked;
  for (int i = 1; i <= count; ++i) {
    NodeOptions o;
    o.name = "n" + std::to_string(i);
    o.kind = kind;
    o.detached = detached;
    o.member_id = i;
    for (int* port : {&o.port, &o.peer_port, &o.election_port}) {
      if (port == &o.election_port && !server.member_has_election_port()) continue;
      PortHold h;
      Status s = PortHold::Pick(&h);
      if (!s.ok()) return s;
      *port = h.port();
      picked.push_back(std::move(h));
    }
    members.push_back(o);
  }
  const std::string initial = server.InitialCluster(members);
  std::string token = "locklab-" + std::to_string(getpid()) + "-" +
                      std::to_string(MonotonicNow().count());
  for (auto& o : members) {
    o.initial_cluster = initial;
    o.cluster_token = token;
    Status s = AddNode(o).Launch();
    if (!s.ok()) return s;
  }
  for (auto& n : nodes_) {
    Status s = n->WaitReady(Millis(20000));
    // A JVM's bind failure is a stack trace, longer than the log tail the message quotes.
    if (!s.ok() && LogTail(n->log_path(), 1 << 20).find("BindException") != std::string::npos) {
      s = Status::Infrastructure(s.message() + " (address already in use)");
    }
    if (!s.ok()) return s;
  }
  return server.WarmUp(lock_endpoints(), Millis(20000));
}

Status LabCluster::Start(int lock_nodes, bool detached, const std::vector<std::string>& node_args,
                         locks::Backend kind) {
  const std::unique_ptr<BackendServer> server = MakeBackendServer(kind);
  if (server->forms_quorum()) {
    // The ports are picked and held before any member starts; a process that binds one
    // explicitly all the same (without SO_REUSEADDR, or before the hold) makes a member exit
    // ("address already in use", Java's "Address already in use") or answer for it
    // (ConfirmServesItsPort): stop every member and start again on new ports, three attempts.
    Status s;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      s = StartMembers(lock_nodes, detached, kind, *server);
      if (s.ok() || (s.message().find("address already in use") == std::string::npos &&
                     s.message().find("Address already in use") == std::string::npos)) {
        break;
      }
      Stop();
      nodes_.clear();
    }
    if (!s.ok()) return s;
  }
  for (int i = 1; i <= lock_nodes && !server->forms_quorum(); ++i) {
    NodeOptions o;
    o.name = "n" + std::to_string(i);
    o.detached = detached;
    o.extra_args = node_args;
    o.kind = kind;
    Status s = AddNode(o).Start();
    if (!s.ok()) return s;
  }
  NodeOptions r;
  r.name = "resource";
  r.detached = detached;
  resource_ = std::make_unique<LabNode>(r, dir_ + "/resource", paths_);
  return resource_->Start();
}

void LabCluster::Stop() {
  for (auto& n : nodes_) n->Kill();
  if (resource_) resource_->Kill();
}

std::vector<locks::Endpoint> LabCluster::lock_endpoints() const {
  std::vector<locks::Endpoint> out;
  for (const auto& n : nodes_) out.push_back(n->endpoint());
  return out;
}

}  // namespace locklab::harness
