#include "harness/trial/endpoints.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "harness/lab/lab_cluster.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"
#include "workloads/counter_workload.h"

namespace locklab::harness {

Status ExternalEndpoints::Open(const std::vector<std::string>& node_args) {
  Status s = CheckEndpoints(*o_);
  if (!s.ok()) return s;
  std::vector<locks::Endpoint> all;
  for (const auto& url : o_->endpoints) {
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
  int n = LockNodes(*o_);
  nodes_.assign(all.begin(), all.begin() + n);
  resource_ = static_cast<int>(all.size()) > n ? all[n] : all[0];
  for (size_t i = 0; i < all.size(); ++i) {
    locks::RedisConnection conn(all[i], Millis(1000), Millis(1000));
    std::vector<std::string> del = {"DEL"};
    for (int k = 0; k < o_->keys; ++k) {
      del.push_back(workloads::LockKey(k));
      del.push_back("fence:" + workloads::LockKey(k));
      del.push_back(workloads::CounterKey(k));
    }
    locks::Reply r = conn.Command(del);
    if (r.outcome != locks::Outcome::kOk || r.is_error) {
      return Status::Infrastructure("endpoint " + o_->endpoints[i] + ": " +
                                    (r.is_error ? r.str : r.transport_error));
    }
    std::string role = static_cast<int>(i) < n ? "node n" + std::to_string(i + 1) : "node resource";
    recorder_->Log(role + " is " + o_->endpoints[i] + " (" + all[i].ToString() + ", not started by the lab)");
  }
  if (static_cast<int>(all.size()) == n) {
    recorder_->Log("node resource is n1's server " + o_->endpoints[0] + " (counter keys on it)");
  }
  if (o_->endpoint_control.empty()) return Status::Ok();
  for (int i = 1; i <= n; ++i) {
    s = PrepareControlledNode(i, node_args);
    if (!s.ok()) return s;
  }
  recorder_->Log("node clocks: libfaketime control files " + o_->endpoint_control + "/n1..n" +
                 std::to_string(n));
  return Status::Ok();
}

// Every node up, its clock true, whatever an interrupted earlier run left behind.
Status ExternalEndpoints::PrepareControlledNode(int i, const std::vector<std::string>& node_args) {
  if (access((ControlPath(i) + ".down").c_str(), F_OK) == 0) {
    Status rs = Restart(i);
    if (!rs.ok()) return rs;
  }
  if (ServerPid(i) <= 0) {
    return Status::Infrastructure("--endpoint-control: no " + ControlPath(i) + ".pid: is " +
                                  o_->endpoints[i - 1] +
                                  " started by docker/node-entrypoint.sh n" + std::to_string(i) +
                                  " with LOCKLAB_CONTROL_DIR=" + o_->endpoint_control + "?");
  }
  kill(ServerPid(i), SIGCONT);
  Status cs = SetClock(i, "+0");
  if (!cs.ok()) return Status::Infrastructure("--endpoint-control: " + cs.message());
  // What a lab node gets on its command line (e.g. the restart fault's aof-always), set on
  // the running server instead.
  locks::RedisConnection conn(nodes_[i - 1], Millis(1000), Millis(1000));
  for (size_t a = 0; a + 1 < node_args.size(); a += 2) {
    std::string key = node_args[a].substr(node_args[a].rfind('-') + 1);
    locks::Reply r = conn.Command({"CONFIG", "SET", key, node_args[a + 1]});
    if (r.outcome != locks::Outcome::kOk || r.is_error) {
      return Status::Infrastructure("endpoint " + o_->endpoints[i - 1] + ": CONFIG SET " + key + ": " +
                                    (r.is_error ? r.str : r.transport_error));
    }
  }
  return Status::Ok();
}

pid_t ExternalEndpoints::ServerPid(int n) const {
  if (o_->endpoint_control.empty() || n < 1 || n > node_count()) return 0;
  std::ifstream in(ControlPath(n) + ".pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return 0;
  // A stale pid file must never make the harness signal some other process.
  return ReadProcFile(static_cast<pid_t>(pid), "cmdline").find("redis-server") != std::string::npos
             ? static_cast<pid_t>(pid)
             : 0;
}

bool ExternalEndpoints::Pause(int n) {
  pid_t pid = ServerPid(n);
  return pid > 0 && kill(pid, SIGSTOP) == 0;
}

bool ExternalEndpoints::Resume(int n) {
  pid_t pid = ServerPid(n);
  return pid > 0 && kill(pid, SIGCONT) == 0;
}

void ExternalEndpoints::Kill(int n) {
  // The supervisor (docker/node-entrypoint.sh) keeps it down while nN.down exists; it
  // removes nN.pid once it reaped the server: wait for that (2 s at most).
  pid_t pid = ServerPid(n);
  if (pid <= 0) return;
  WriteFile(ControlPath(n) + ".down", "down\n");
  kill(pid, SIGCONT);
  kill(pid, SIGKILL);
  Nanos end = MonotonicNow() + Millis(2000);
  while (ServerPid(n) == pid && MonotonicNow() < end) SleepFor(Millis(5));
  recorder_->Log("node n" + std::to_string(n) + " killed (server process " + std::to_string(pid) + ")");
}

Status ExternalEndpoints::Restart(int n) {
  if (ServerPid(n) > 0) return Status::Ok();  // still (or again) up
  unlink((ControlPath(n) + ".down").c_str());
  Nanos end = MonotonicNow() + Millis(5000);
  for (;;) {
    if (ServerPid(n) > 0) {
      locks::RedisConnection c(endpoint(n), Millis(100), Millis(200));
      locks::Reply r = c.Command({"PING"});
      if (r.outcome == locks::Outcome::kOk && r.str == "PONG") {
        recorder_->Log("node n" + std::to_string(n) + " restarted (server process " +
                       std::to_string(ServerPid(n)) + ")");
        return Status::Ok();
      }
    }
    if (MonotonicNow() >= end) {
      return Status::Infrastructure("node n" + std::to_string(n) + " did not come back in 5 s");
    }
    SleepFor(Millis(10));
  }
}

Status ExternalEndpoints::SetClock(int n, const std::string& offset) {
  // The user's node runs under libfaketime reading DIR/n<N> (docker/node-entrypoint.sh).
  if (o_->endpoint_control.empty() || n < 1 || n > node_count()) {
    return Status::Usage("no clock control for node n" + std::to_string(n) + " (--endpoint-control)");
  }
  return ClockControlFile(ControlPath(n)).Set(offset);
}

}  // namespace locklab::harness
