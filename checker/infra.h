// Infra events: what the lab saw of its own ground (docs/design.md 3.2, 3.3).
//
// The harness supervises every process it starts and itself. A death or stop the fault
// schedule did not cause, and a stall of the harness, are written to the history as
//   {"process":"harness","type":"info","f":"infra","key":"node n1","value":{"what":"node",
//    "node":1,"pid":4242,"server":"redis-server","how":"killed by signal 9"}}
// `what` is one of client, node, resource, sentinel, replica, proxy, harness; a client names
// its `process`, a node its `node`; `how` is "killed by signal N", "exited with status N",
// "exited", "stopped" or, for the harness itself, "stalled" (with "stalled_ms" and
// "from_ns": the harness did not run from from_ns to the event's time).
//
// The judge's rules (checker/verdict.h): a client that died ends its holds there, as a
// scheduled crash does (CrashedClients); a death or stop makes the verdict unknown, naming
// it, unless a violation was seen before it; a stall is the lab's lateness, not the lock's:
// waits inside it do not count for liveness, and the run's timing is not trusted.
// Pure and thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "checker/history.h"

namespace locklab::checker {

struct InfraEvent {
  Nanos time{0};
  std::string subject;      // the event's key: "client 2", "node n1", "resource", "harness"
  std::string what;         // client | node | resource | sentinel | replica | proxy | harness
  int64_t process = 0;      // a client's process id; 0 otherwise
  int64_t pid = 0;          // the OS pid, 0 when unknown
  std::string server;       // the program ("redis-server", "mariadbd"), may be empty
  std::string how;          // "killed by signal 9", "exited with status 1", "stopped", "stalled"
  std::string log_line;     // a server that exited: its log's telling line, may be empty
  Nanos stalled_from{0};    // stalls only: when the harness stopped running
  bool stall() const { return how == "stalled"; }
  // "lab node n1 (redis-server, pid 4242) killed by signal 9"
  std::string Describe() const;
};

// True for an infra event of the harness.
bool IsInfraEvent(const Event& e);
// The infra events of a history in time order; malformed values are skipped field by field.
std::vector<InfraEvent> ReadInfraEvents(const History& sorted);
// The client an infra event says died (its `process`), or 0.
int64_t InfraDeadClient(const Event& e);

}  // namespace locklab::checker
