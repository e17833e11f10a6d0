// The lock registry: ids, descriptions and knobs (locklab list), and MakeLock.
#include <algorithm>

#include "locks/lock.h"
#include "locks/single_node_locks.h"

namespace locklab::locks {

const std::vector<LockInfo>& ListLocks() {
  static const std::vector<LockInfo> kLocks = {
      {"setnx", "SETNX with no expiry, DEL to release: a crashed holder blocks everyone forever",
       {}, 1},
      {"setnx-expire",
       "SETNX then PEXPIRE as two commands, DEL to release: a crash between them leaves a key "
       "that never expires; DEL removes whoever holds the key",
       {}, 1},
      {"set-nx-px-del",
       "SET NX PX (atomic expiry), plain DEL to release: a late DEL deletes the next holder's lock",
       {}, 1},
      {"set-nx-px-lua",
       "SET NX PX, Lua compare-and-delete release: the canonical single-instance lock",
       {}, 1},
  };
  return kLocks;
}

const LockInfo* FindLock(const std::string& id) {
  for (const auto& l : ListLocks()) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

Status MakeLock(const LockConfig& config, std::unique_ptr<Lock>* out) {
  const LockInfo* info = FindLock(config.algorithm);
  if (info == nullptr) {
    return Status::Usage("lock '" + config.algorithm + "': unknown lock id (see `locklab list`)");
  }
  for (const auto& [name, value] : config.knobs) {
    bool known = std::any_of(info->knobs.begin(), info->knobs.end(),
                             [&](const KnobInfo& k) { return k.name == name; });
    if (!known) return Status::Usage("lock '" + config.algorithm + "': unknown knob '" + name + "'");
  }
  if (config.nodes.empty()) return Status::Usage("lock '" + config.algorithm + "': no nodes");
  if (config.ttl.count() <= 0) return Status::Usage("lock: ttl must be > 0 ms");
  const std::string& id = config.algorithm;
  if (id == "setnx") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetnx, ReleaseStyle::kDel);
  } else if (id == "setnx-expire") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetnxThenExpire,
                                            ReleaseStyle::kDel);
  } else if (id == "set-nx-px-del") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetNxPx, ReleaseStyle::kDel);
  } else if (id == "set-nx-px-lua") {
    *out = std::make_unique<SingleNodeLock>(config, AcquireStyle::kSetNxPx,
                                            ReleaseStyle::kCompareAndDelete);
  } else {
    return Status::Usage("lock '" + id + "': listed but not built");
  }
  return Status::Ok();
}

}  // namespace locklab::locks
