#include "harness/lab/backend_server.h"

#include <cctype>
#include <sstream>

#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {

Status BackendServer::PrepareScratch(const ServerSite&) const { return Status::Ok(); }

Status BackendServer::PrepareLaunch(const ServerSite&, int) const { return Status::Ok(); }

Status BackendServer::WaitRestarted(const locks::Endpoint& endpoint, Millis timeout,
                                    pid_t pid) const {
  return WaitServing(endpoint, timeout, pid);
}

std::vector<pid_t> BackendServer::ProcessesOutsideGroup(pid_t) const { return {}; }

std::vector<pid_t> BackendServer::KillOutsideGroup(pid_t) const { return {}; }

std::string BackendServer::InitialCluster(const std::vector<NodeOptions>&) const { return ""; }

Status BackendServer::WarmUp(const std::vector<locks::Endpoint>&, Millis) const {
  return Status::Ok();
}

// The one place a Backend becomes a server.
std::unique_ptr<BackendServer> MakeBackendServer(locks::Backend backend, bool sentinel) {
  switch (backend) {
    case locks::Backend::kRedis:
      if (sentinel) return std::make_unique<SentinelServer>();
      return std::make_unique<RedisServer>();
    case locks::Backend::kMariadb: return std::make_unique<MariaDbServer>();
    case locks::Backend::kPostgres: return std::make_unique<PostgresServer>();
    case locks::Backend::kEtcd: return std::make_unique<EtcdServer>();
    case locks::Backend::kZookeeper: return std::make_unique<ZooKeeperServer>();
  }
  return std::make_unique<RedisServer>();  // unreachable: the switch names every backend
}

std::string LogTail(const std::string& path, size_t bytes) {
  std::string all = ReadWholeFile(path);
  if (all.size() > bytes) all = all.substr(all.size() - bytes);
  for (char& c : all) {
    if (c == '\n') c = ' ';
  }
  return all;
}

std::string TellingLogLine(const std::string& path) {
  std::string all = ReadWholeFile(path);
  if (all.size() > 16384) all = all.substr(all.size() - 16384);
  std::string telling, last, line;
  std::istringstream lines(all);
  while (std::getline(lines, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    last = line;
    if (line.rfind("at ", 0) == 0 || line.rfind("...", 0) == 0) continue;  // a stack frame
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    for (const char* word : {"error", "fatal", "exception", "panic", "failed", "could not",
                             "cannot", "unable", "already in use"}) {
      if (lower.find(word) != std::string::npos) telling = line;
    }
  }
  std::string out = telling.empty() ? last : telling;
  return out.size() > 200 ? out.substr(0, 197) + "..." : out;
}

Status PollUntilServing(const std::string& server, const locks::Endpoint& endpoint,
                        Millis timeout, pid_t pid, const char* not_yet,
                        const std::function<bool(std::string* why)>& ready) {
  Nanos end = MonotonicNow() + timeout;
  std::string last;
  for (;;) {
    if (ready(&last)) return Status::Ok();
    std::string where = server + " on " + endpoint.ToString();
    if (pid > 0 && !ProcessAlive(pid)) {
      return Status::Infrastructure(where + " exited during start: " + last);
    }
    if (MonotonicNow() >= end) return Status::Infrastructure(where + " " + not_yet + ": " + last);
    SleepFor(Millis(20));
  }
}

}  // namespace locklab::harness
