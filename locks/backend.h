// Backend: the closed set of servers the lab can start as a lock's nodes, and the one table
// that spells them ("redis", "mariadb", "postgres", "etcd", "zookeeper").
//
// The words are what `locklab list --json` prints as a lock's "backend", what a driver's
// hello may say in its "backend" field (locks/driver_protocol.h) and what names a lab node's
// scratch directory (harness/lab/lab_cluster.h). Code compares the enum; text meets it only
// through BackendName (out) and ParseBackend (in, exact lower-case words, nullopt otherwise),
// so adding a server is one row of the table plus the lab's way to start it.
#pragma once

#include <optional>

#include "base/lock_surface.h"
#include <string>
#include <vector>

namespace locklab::locks {

enum class Backend { kRedis, kMariadb, kPostgres, kEtcd, kZookeeper };

// Every backend, in the table's order (redis first).
const std::vector<Backend>& AllBackends();
// The backend's word; every enumerator has one.
const std::string& BackendName(Backend backend);
// The backend a word names; nullopt for any other text (case matters: "Redis" is none).
std::optional<Backend> ParseBackend(const std::string& name);

// What the lab can act on in a lock kept by these servers (base/lock_surface.h): which of
// its faults apply (faults::FaultFits). Every backend offers its client and server
// processes; Redis offers everything.
LockSurfaces SurfacesOf(Backend backend);

}  // namespace locklab::locks
