#include "lab/lab_cluster.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lab/lab_servers.h"
#include "lab/process.h"
#include "lab/run_store.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

bool Executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }
bool Readable(const std::string& p) { return !p.empty() && access(p.c_str(), R_OK) == 0; }

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() > bytes) all = all.substr(all.size() - bytes);
  for (char& c : all) {
    if (c == '\n') c = ' ';
  }
  return all;
}

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
      dir_(std::move(dir)),
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

std::string LabNode::log_path() const { return dir_ + ".log"; }

bool LabNode::Running() const { return ProcessAlive(pid_); }

std::string LabNode::program() const {
  if (options_.sentinel) return "redis-sentinel";
  switch (options_.kind) {
    case locks::Backend::kRedis: return "redis-server";
    case locks::Backend::kMariadb: return "mariadbd";
    case locks::Backend::kPostgres: return "postgres";
    case locks::Backend::kEtcd: return "etcd";
    case locks::Backend::kZookeeper: return "zookeeper";
  }
  return locks::BackendName(options_.kind);  // unreachable: the switch names every kind
}

Status LabNode::Start() {
  if (options_.kind != locks::Backend::kRedis) {
    Status s = Launch();
    if (s.ok()) s = WaitReady(Millis(20000));
    return s;
  }
  Status s = MakeDirs(dir_);
  if (!s.ok()) return s;
  s = clock_.Set("+0");
  if (!s.ok()) return s;
  for (int attempt = 0; attempt < 5; ++attempt) {
    int port = 0;
    s = FreeLoopbackPort(&port);
    if (!s.ok()) return s;
    s = StartOnPort(port);
    if (s.ok()) return s;
  }
  return Status::Infrastructure("node " + options_.name + ": " + s.message() + "; log: " +
                                Tail(log_path(), 300));
}

Status LabNode::Restart() {
  Kill();
  if (options_.kind == locks::Backend::kRedis) return StartOnPort(port_);
  Status s = SpawnOnPort(port_);
  // An etcd or ZooKeeper member serves only with a quorum, and a fault may restart every
  // member one after the other: wait only until this one answers (it rejoins on its own).
  if (s.ok() && (options_.kind == locks::Backend::kEtcd ||
                 options_.kind == locks::Backend::kZookeeper)) {
    s = options_.kind == locks::Backend::kEtcd
            ? WaitForEtcd(endpoint(), Millis(20000), pid_, /*need_quorum=*/false)
            : WaitForZooKeeper(endpoint(), Millis(20000), pid_, /*need_quorum=*/false);
    if (!s.ok()) Kill();
    return s;
  }
  if (s.ok()) s = WaitReady(Millis(20000));
  return s;
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

Status LabNode::Launch() {
  Status s = MakeDirs(dir_);
  if (!s.ok()) return s;
  if (scratch_.empty()) {
    const char* env = getenv("TMPDIR");
    std::string tmp = env && *env ? env : "/tmp";
    // postgres runs as another user, who must be able to reach its data directory.
    if (options_.kind == locks::Backend::kPostgres && !OthersCanTraverse(tmp)) tmp = "/tmp";
    SweepStaleScratch(tmp, options_.kind);
    std::string tmpl = tmp + "/locklab-" + locks::BackendName(options_.kind) + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Status::Infrastructure("mkdtemp " + tmpl + ": " + strerror(errno));
    }
    scratch_ = tmpl;
    s = MakeDirs(scratch_ + "/data");
    if (s.ok()) s = WriteFile(scratch_ + "/owner.pid", std::to_string(getpid()) + "\n");
    if (s.ok() && options_.kind == locks::Backend::kPostgres) s = InitPostgres();
    if (!s.ok()) return s;
  }
  int port = options_.port;
  if (port == 0) {
    s = FreeLoopbackPort(&port);
    if (!s.ok()) return s;
  }
  if (options_.kind == locks::Backend::kZookeeper) {  // (again on each launch: the port may be new)
    s = WriteFile(scratch_ + "/data/myid", std::to_string(options_.member_id) + "\n");
    if (s.ok()) {
      s = WriteFile(scratch_ + "/zoo.cfg",
                    ZooKeeperConfig(scratch_, port, options_.initial_cluster));
    }
    if (!s.ok()) return s;
  }
  return SpawnOnPort(port);
}

// PostgreSQL refuses root: the scratch directory goes to the user that runs it, and initdb
// makes the cluster there (synchronously; its output goes to the node's log).
Status LabNode::InitPostgres() {
  ServerPaths sp;
  Status s = ServerPaths::Discover(locks::Backend::kPostgres, &sp);
  if (!s.ok()) return s;
  passwd* pw = getpwnam(sp.postgres_user.c_str());
  if (pw == nullptr) return Status::Infrastructure("no user '" + sp.postgres_user + "'");
  for (const std::string& d : {scratch_, scratch_ + "/data"}) {
    if (chown(d.c_str(), pw->pw_uid, pw->pw_gid) != 0 || chmod(d.c_str(), 0700) != 0) {
      return Status::Infrastructure("chown " + d + " to " + sp.postgres_user + ": " +
                                    strerror(errno));
    }
  }
  SpawnOptions o;
  o.argv = InitdbArgv(sp, scratch_);
  o.run_as_user = sp.postgres_user;
  o.unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  o.cwd = scratch_;
  o.log_path = log_path();
  pid_t pid;
  s = Spawn(o, &pid);
  if (!s.ok()) return s;
  int status = 0;
  if (!WaitExit(pid, Millis(60000), &status)) {
    KillAndReap(pid);
    return Status::Infrastructure("node " + options_.name + ": initdb took over 60 s");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Infrastructure("node " + options_.name + ": initdb failed; log: " +
                                  Tail(log_path(), 300));
  }
  return Status::Ok();
}

Status LabNode::SpawnOnPort(int port) {
  ServerPaths sp;
  Status s = ServerPaths::Discover(options_.kind, &sp);
  if (!s.ok()) return s;
  SpawnOptions o;
  if (options_.kind == locks::Backend::kMariadb) {
    o.argv = MariaDbArgv(sp, scratch_, port);
  } else if (options_.kind == locks::Backend::kPostgres) {
    o.argv = PostgresArgv(sp, scratch_, port);
    o.run_as_user = sp.postgres_user;
    // The previous postmaster (if any) was killed and reaped: its pid file is stale, and a
    // recycled pid in it would make the new one refuse to start.
    std::error_code ec;
    std::filesystem::remove(scratch_ + "/data/postmaster.pid", ec);
  } else if (options_.kind == locks::Backend::kEtcd) {
    o.argv = EtcdArgv(sp, options_.name, scratch_, port, options_.peer_port,
                      options_.initial_cluster, options_.cluster_token);
  } else if (options_.kind == locks::Backend::kZookeeper) {
    o.argv = ZooKeeperArgv(sp, scratch_);
  } else {  // Redis: started by StartOnPort, never here
    return Status::Usage("node " + options_.name + ": unknown server kind '" +
                         locks::BackendName(options_.kind) + "'");
  }
  o.unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  o.cwd = scratch_;
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
  Status s;
  switch (options_.kind) {
    case locks::Backend::kMariadb: s = WaitForMariaDb(endpoint(), timeout, pid_); break;
    case locks::Backend::kPostgres: s = WaitForPostgres(endpoint(), timeout, pid_); break;
    case locks::Backend::kEtcd: s = WaitForEtcd(endpoint(), timeout, pid_); break;
    case locks::Backend::kZookeeper: s = WaitForZooKeeper(endpoint(), timeout, pid_); break;
    case locks::Backend::kRedis: s = WaitForPing(endpoint(), timeout, pid_); break;
  }
  if (!s.ok()) {
    s = Status::Infrastructure("node " + options_.name + ": " + s.message() + "; log: " +
                               Tail(log_path(), 300));
    Kill();
  }
  return s;
}

Status LabNode::StartOnPort(int port) {
  SpawnOptions o;
  if (options_.sentinel) {
    std::string conf = dir_ + "/sentinel.conf";
    Status s = WriteFile(conf, options_.sentinel_config);
    if (!s.ok()) return s;
    o.argv = {paths_.redis_server, conf, "--sentinel", "--port", std::to_string(port),
              "--bind", "127.0.0.1", "--dir", dir_, "--daemonize", "no", "--logfile", ""};
  } else {
    o.argv = {paths_.redis_server, "--port", std::to_string(port), "--bind", "127.0.0.1",
              "--dir", dir_, "--save", "", "--appendonly", "no", "--daemonize", "no",
              "--logfile", "", "--dbfilename", "dump.rdb"};
  }
  o.argv.insert(o.argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  if (options_.faketime) {
    o.env["LD_PRELOAD"] = paths_.libfaketime;
    o.env["FAKETIME_TIMESTAMP_FILE"] = clock_.path();
    o.env["FAKETIME_NO_CACHE"] = "1";
    o.env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
  } else {
    o.unset_env = {"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"};
  }
  o.cwd = dir_;
  o.log_path = log_path();
  o.detached = options_.detached;
  pid_t pid;
  Status s = Spawn(o, &pid);
  if (!s.ok()) return s;
  pid_ = pid;
  port_ = port;
  s = WaitForPing(endpoint(), Millis(5000), pid_);
  if (!s.ok()) Kill();
  return s;
}

void LabNode::Kill() {
  if (pid_ <= 0) return;
  std::vector<pid_t> children;
  if (options_.kind == locks::Backend::kPostgres) {
    // Stop the postmaster first so it forks no backend after the scan. Its backends would
    // exit on their own once they notice it died, but not at once, and a new postmaster
    // refuses to start while one of them still holds the old shared memory.
    kill(pid_, SIGSTOP);
    children = ChildrenOf(pid_);
    for (pid_t c : children) kill(c, SIGKILL);
  }
  KillAndReap(pid_);
  pid_ = -1;
  // Reparented to init, which reaps them; wait until they are gone or zombies (2 s at most).
  Nanos end = MonotonicNow() + Millis(2000);
  for (pid_t c : children) {
    while (!ProcessGone(c) && MonotonicNow() < end) SleepFor(Millis(2));
  }
}

bool LabNode::Signal(int sig) {
  if (pid_ <= 0) return false;
  if (kill(-pid_, sig) != 0) return false;
  if (options_.kind == locks::Backend::kPostgres) {
    for (pid_t c : ChildrenOf(pid_)) kill(c, sig);
  }
  return true;
}

LabNode& LabCluster::AddNode(const NodeOptions& o) {
  nodes_.push_back(std::make_unique<LabNode>(o, dir_ + "/" + o.name, paths_));
  return *nodes_.back();
}

Status LabCluster::StartMembers(int count, bool detached, locks::Backend kind) {
  // Every member's ports are known before any starts: each lists the others' peer addresses.
  std::vector<NodeOptions> members;
  std::vector<int> taken;
  std::string initial;
  for (int i = 1; i <= count; ++i) {
    NodeOptions o;
    o.name = "n" + std::to_string(i);
    o.kind = kind;
    o.detached = detached;
    o.member_id = i;
    for (int* port : {&o.port, &o.peer_port, &o.election_port}) {
      if (port == &o.election_port && kind != locks::Backend::kZookeeper) continue;
      do {  // a port that was free a moment ago may come back twice: keep them distinct
        Status s = FreeLoopbackPort(port);
        if (!s.ok()) return s;
      } while (std::find(taken.begin(), taken.end(), *port) != taken.end());
      taken.push_back(*port);
    }
    if (kind == locks::Backend::kZookeeper) {
      initial += "server." + std::to_string(i) + "=127.0.0.1:" + std::to_string(o.peer_port) +
                 ":" + std::to_string(o.election_port) + "\n";
    } else {
      initial += (initial.empty() ? "" : ",") + o.name + "=http://127.0.0.1:" +
                 std::to_string(o.peer_port);
    }
    members.push_back(o);
  }
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
    if (!s.ok() && Tail(n->log_path(), 1 << 20).find("BindException") != std::string::npos) {
      s = Status::Infrastructure(s.message() + " (address already in use)");
    }
    if (!s.ok()) return s;
  }
  return kind == locks::Backend::kZookeeper ? WarmZooKeeper(lock_endpoints(), Millis(20000))
                                             : Status::Ok();
}

Status LabCluster::Start(int lock_nodes, bool detached, const std::vector<std::string>& node_args,
                         const std::string& kind) {
  // The one place a kind is text: parsed here, compared as a Backend from here on.
  const std::optional<locks::Backend> parsed = locks::ParseBackend(kind);
  if (!parsed) return Status::Usage("node n1: unknown server kind '" + kind + "'");
  const locks::Backend server = *parsed;
  const bool members = server == locks::Backend::kEtcd || server == locks::Backend::kZookeeper;
  if (members) {
    // The ports are picked before any member starts, so another process can take one in
    // between (the member then exits: "address already in use", Java's "Address already in
    // use"): stop every member and start the cluster again on new ports, three attempts.
    Status s;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      s = StartMembers(lock_nodes, detached, server);
      if (s.ok() || (s.message().find("address already in use") == std::string::npos &&
                     s.message().find("Address already in use") == std::string::npos)) {
        break;
      }
      Stop();
      nodes_.clear();
    }
    if (!s.ok()) return s;
  }
  for (int i = 1; i <= lock_nodes && !members; ++i) {
    NodeOptions o;
    o.name = "n" + std::to_string(i);
    o.detached = detached;
    o.extra_args = node_args;
    o.kind = server;
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
