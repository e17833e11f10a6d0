#include "locks/zk_lock.h"

#include <algorithm>
#include <cstdio>

#include "base/numbers.h"
#include "locks/knobs.h"

namespace locklab::locks {
namespace {

// The lock's directory: /locklab/<key>, a '/' in the key kept out of the path.
std::string LockDir(const std::string& key) {
  std::string k = key;
  std::replace(k.begin(), k.end(), '/', '_');
  return "/locklab/" + k;
}

}  // namespace

Status ParseZkLockOptions(const LockConfig& config, ZkLockOptions* out) {
  ZkLockOptions o;
  o.fencing = config.algorithm == "zk-lock-fenced";
  KnobReader r(config.algorithm, config.knobs);
  r.Duration("session_timeout_ms", Millis(0), Millis(600000), &o.session_timeout);
  if (!r.status().ok()) return r.status();
  if (o.session_timeout.count() == 0) o.session_timeout = config.ttl;
  *out = o;
  return Status::Ok();
}

int64_t ZkSequence(const std::string& name) {
  // The ensemble appends ten decimal digits to a sequential node's name.
  if (name.size() < 10) return -1;
  return ParseInt(name.substr(name.size() - 10), 0, 9999999999).value_or(-1);
}

ZkLock::ZkLock(const LockConfig& config, const ZkLockOptions& options)
    : config_(config), options_(options) {}

ZkLock::~ZkLock() {
  session_.reset();
  for (auto& f : closing_) f.wait();
}

void ZkLock::DropSession() {
  if (!session_) return;
  closing_.erase(std::remove_if(closing_.begin(), closing_.end(),
                                [](const std::future<void>& f) {
                                  return f.wait_for(std::chrono::seconds(0)) ==
                                         std::future_status::ready;
                                }),
                 closing_.end());
  // The closing thread owns the session alone (a copy left here could be the last owner
  // and close it on this thread after all: seen under TSan, an acquire took 1.9 s).
  closing_.push_back(
      std::async(std::launch::async, [s = std::move(session_)]() mutable { s.reset(); }));
}

std::string ZkLock::OwnPrefix() const {
  char buf[32];
  snprintf(buf, sizeof(buf), "lock-%llx-", static_cast<unsigned long long>(session_->session_id()));
  return buf;
}

bool ZkLock::MakeParents(const std::string& key, Nanos deadline, std::string* detail) {
  if (parents_made_.count(key)) return true;
  for (const std::string& p : {std::string("/locklab"), LockDir(key)}) {
    ZkResult r = session_->Create(p, "", ZOO_PERSISTENT, deadline);
    if (r.outcome != Outcome::kOk && r.rc != ZNODEEXISTS) {
      // (A persistent parent still queued does no harm: a later create finds it.)
      *detail = "create " + p + ": " + r.error;
      return false;
    }
  }
  parents_made_.insert(key);
  return true;
}

std::string ZkLock::FindOwnNode(const std::string& dir, Nanos deadline, Outcome* outcome) {
  ZkResult ch = session_->Children(dir, deadline);
  *outcome = ch.outcome;
  if (ch.outcome != Outcome::kOk) return "";
  const std::string prefix = OwnPrefix();
  std::string best;
  for (const auto& c : ch.children) {
    if (c.rfind(prefix, 0) == 0 && (best.empty() || ZkSequence(c) < ZkSequence(best))) best = c;
  }
  return best.empty() ? "" : dir + "/" + best;
}

Outcome ZkLock::WaitInLine(const std::string& dir, const std::string& own, Nanos deadline,
                           Nanos* validity_from, std::string* detail, bool* unsettled) {
  const std::string own_name = own.substr(dir.size() + 1);
  for (;;) {
    Nanos t = MonotonicNow();
    ZkResult ch = session_->Children(dir, deadline);
    if (ch.outcome != Outcome::kOk) {
      *detail = "children " + dir + ": " + ch.error;
      return ch.outcome;
    }
    std::vector<std::string> line = ch.children;
    std::sort(line.begin(), line.end(), [](const std::string& a, const std::string& b) {
      return ZkSequence(a) < ZkSequence(b);
    });
    auto me = std::find(line.begin(), line.end(), own_name);
    if (me == line.end()) {
      *detail = "own node " + own + " gone";
      return Outcome::kFail;
    }
    // Another node of our own session: a create whose answer was lost landed after
    // FindOwnNode had looked (on a member that had not applied it yet), and we created
    // again. Ahead of ours we would wait behind it until the deadline; behind ours it would
    // come first after our release; either way it keeps the lock from everyone for as long
    // as the session lives. Delete it (it is ours) and look again.
    auto leftover = std::find_if(line.begin(), line.end(), [&](const std::string& c) {
      return c != own_name && c.rfind(OwnPrefix(), 0) == 0;
    });
    if (leftover != line.end()) {
      const std::string path = dir + "/" + *leftover;
      ZkResult d = session_->Delete(path, deadline);
      if (d.outcome != Outcome::kOk && d.rc != ZNONODE) {
        *detail = "delete own leftover " + path + ": " + d.error;
        *unsettled = d.outcome == Outcome::kUnknown;
        return d.outcome;
      }
      continue;
    }
    if (me == line.begin()) {
      *validity_from = t;
      return Outcome::kOk;
    }
    const std::string pred = dir + "/" + *(me - 1);
    uint64_t seen = session_->generation();
    ZkResult ex = session_->Exists(pred, /*watch=*/true, deadline);
    if (ex.outcome == Outcome::kOk) {
      // The predecessor is there and watched: wait until it changes (or the session does).
      session_->WaitForEvent(seen, deadline);
      if (MonotonicNow() >= deadline) {
        *detail = "in line behind " + pred;
        return Outcome::kFail;
      }
    } else if (ex.rc != ZNONODE) {
      *detail = "exists " + pred + ": " + ex.error;
      return ex.outcome;
    }
  }
}

LockResult ZkLock::Acquire(const std::string& key, Nanos deadline) {
  LockResult result;
  bool any_unknown = false;
  std::string detail;
  const std::string dir = LockDir(key);
  auto retry = [&] {
    if (MonotonicNow() + config_.retry_delay >= deadline) return false;
    SleepFor(config_.retry_delay);
    return true;
  };
  while (MonotonicNow() < deadline) {
    if (session_ && session_->Expired()) DropSession();
    if (!session_) {
      session_ = std::make_unique<ZkSession>(config_.nodes, options_.session_timeout);
    }
    // No session: nothing was sent on this acquire's behalf.
    if (!session_->WaitConnected(deadline, &detail)) break;
    if (!MakeParents(key, deadline, &detail)) {
      if (!retry()) break;
      continue;
    }
    // 1. Our node (or, after a create whose answer was lost, the one it may have made).
    ZkResult c = session_->Create(dir + "/" + OwnPrefix(), "", ZOO_EPHEMERAL_SEQUENTIAL, deadline);
    std::string own = c.outcome == Outcome::kOk ? c.path : "";
    if (c.outcome == Outcome::kUnknown) {
      any_unknown = true;
      detail = "create: " + c.error;
      if (c.timed_out) {  // still queued in the client: only ending the session settles it
        DropSession();
        if (!retry()) break;
        continue;
      }
      Outcome found = Outcome::kUnknown;
      if (session_->WaitConnected(deadline, &detail)) own = FindOwnNode(dir, deadline, &found);
      if (found != Outcome::kOk) {
        DropSession();
        if (!retry()) break;
        continue;
      }
      if (own.empty()) continue;  // it made nothing: create again
    } else if (c.outcome == Outcome::kFail) {
      detail = "create: " + c.error;
      if (c.rc == ZNONODE) parents_made_.erase(key);  // the directory is gone: make it again
      if (!retry()) break;
      continue;
    }
    // 2. In line until first.
    Nanos from{0};
    bool unsettled = false;
    Outcome o = WaitInLine(dir, own, deadline, &from, &detail, &unsettled);
    // 3. First: the node's stat gives the fencing token and proves the node is ours.
    ZkResult st;
    if (o == Outcome::kOk) {
      from = MonotonicNow();
      st = session_->Exists(own, false, std::max(deadline, from + config_.command_timeout));
      if (st.outcome != Outcome::kOk || st.stat.ephemeralOwner != session_->session_id()) {
        o = st.outcome == Outcome::kOk ? Outcome::kFail : st.outcome;
        detail = "exists " + own + ": " + (st.outcome == Outcome::kOk ? "not ours" : st.error);
      }
    }
    if (o == Outcome::kOk) {
      Lease& l = result.lease;
      l.key = key;
      l.token = own;
      l.acquired_at = MonotonicNow();
      Millis left = session_->negotiated_timeout() -
                    std::chrono::duration_cast<Millis>(l.acquired_at - from);
      l.validity = std::max(Millis(0), left);
      l.fence = options_.fencing ? st.stat.czxid : -1;
      result.outcome = Outcome::kOk;
      return result;
    }
    if (o == Outcome::kUnknown) any_unknown = true;
    // Not first (deadline, or something unanswered): leave the line. A node left behind
    // could come first later, so a delete without an answer ends the session.
    if (unsettled) {
      DropSession();  // an own leftover whose delete went unanswered: it goes with the session
    } else if (!session_->Expired()) {
      ZkResult d = session_->Delete(own, MonotonicNow() + config_.command_timeout);
      // Gone (ZNONODE), or gone with its session: settled.
      bool gone = d.rc == ZNONODE || d.rc == ZSESSIONEXPIRED || d.rc == ZINVALIDSTATE;
      if (d.outcome != Outcome::kOk && !gone) {
        any_unknown = true;
        DropSession();
      }
    }
    if (!retry()) break;
  }
  result.outcome = any_unknown ? Outcome::kUnknown : Outcome::kFail;
  result.detail = detail;
  return result;
}

LockResult ZkLock::Release(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (!session_ || session_->Expired()) {
    result.outcome = Outcome::kFail;
    result.detail = "session expired: the node went with it";
    if (session_) DropSession();
    return result;
  }
  ZkResult d = session_->Delete(lease.token, MonotonicNow() + config_.command_timeout);
  result.outcome = d.outcome;
  if (d.outcome != Outcome::kOk) {
    result.detail = "delete " + lease.token + ": " + d.error;
    // An unanswered delete: ending the session removes the node whatever became of it.
    if (d.outcome == Outcome::kUnknown) DropSession();
  }
  return result;
}

LockResult ZkLock::Renew(const Lease& lease) {
  LockResult result;
  result.lease = lease;
  if (!session_ || session_->Expired()) {
    result.outcome = Outcome::kFail;
    result.detail = "session expired";
    return result;
  }
  Nanos invoked = MonotonicNow();
  ZkResult e = session_->Exists(lease.token, false, invoked + config_.command_timeout);
  if (e.outcome == Outcome::kOk && e.stat.ephemeralOwner != session_->session_id()) {
    e.outcome = Outcome::kFail;
    e.error = "not ours";
  }
  result.outcome = e.outcome;
  if (e.outcome != Outcome::kOk) {
    result.detail = "exists " + lease.token + ": " + e.error;
    return result;
  }
  result.lease.acquired_at = invoked;
  result.lease.validity = session_->negotiated_timeout();
  return result;
}

}  // namespace locklab::locks
