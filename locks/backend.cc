#include "locks/backend.h"

#include <utility>

namespace locklab::locks {
namespace {

// The one name table. Its order is the order of AllBackends() and of the list a refused
// hello prints ("must be one of redis, mariadb, postgres, etcd, zookeeper").
const std::vector<std::pair<Backend, std::string>>& Table() {
  static const std::vector<std::pair<Backend, std::string>> kTable = {
      {Backend::kRedis, "redis"},
      {Backend::kMariadb, "mariadb"},
      {Backend::kPostgres, "postgres"},
      {Backend::kEtcd, "etcd"},
      {Backend::kZookeeper, "zookeeper"},
  };
  return kTable;
}

}  // namespace

const std::vector<Backend>& AllBackends() {
  static const std::vector<Backend> kAll = [] {
    std::vector<Backend> out;
    for (const auto& row : Table()) out.push_back(row.first);
    return out;
  }();
  return kAll;
}

const std::string& BackendName(Backend backend) {
  for (const auto& row : Table()) {
    if (row.first == backend) return row.second;
  }
  return Table().front().second;  // unreachable: the table has every enumerator
}

std::optional<Backend> ParseBackend(const std::string& name) {
  for (const auto& row : Table()) {
    if (row.second == name) return row.first;
  }
  return std::nullopt;
}

LockSurfaces SurfacesOf(Backend backend) {
  switch (backend) {
    case Backend::kRedis:
      return LockSurfaces::All();
    case Backend::kZookeeper:
      // The C client's requests cross the fault proxy like a Redis command. No clock: the
      // ensemble's session expiry runs on the JVM's System.nanoTime (CLOCK_MONOTONIC), which
      // libfaketime with FAKETIME_DONT_FAKE_MONOTONIC, the lab's setting, leaves alone.
      return {LockSurface::kClientProcess, LockSurface::kServerProcess, LockSurface::kRequestStream};
    case Backend::kMariadb:
    case Backend::kPostgres:
    case Backend::kEtcd:
      // A database or etcd session: no libfaketime clock in its expiry, no Sentinel
      // failover, no RESP reply for the proxy to hold or lose.
      return {LockSurface::kClientProcess, LockSurface::kServerProcess};
  }
  return {LockSurface::kClientProcess};  // unreachable: every enumerator has its row
}

}  // namespace locklab::locks
