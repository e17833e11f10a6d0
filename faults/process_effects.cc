#include "faults/process_effects.h"

#include <algorithm>
#include <optional>

#include "base/numbers.h"

namespace locklab::faults {

Status ClientPauseEffect::Validate() {
  std::string mode = o_.Param("mode", "targeted");
  if (mode != "targeted" && mode != "random") {
    return Status::Usage(std::string("fault ") + id() + ": param 'mode': '" + mode + "': expected targeted or random");
  }
  return PointParam();
}

nlohmann::json ClientPauseEffect::Start(Nanos, int process) {
  std::string mode = o_.Param("mode", "targeted");
  nlohmann::json v = {{"mode", mode}};
  if (process != 0) {
    // Targeted: the client already stopped itself at the point.
    v["point"] = ArmedPoint(o_);
  } else {
    process = PickClient(*clients_);
    if (process == 0 || !clients_->PauseClient(process)) return nullptr;
  }
  paused_ = process;
  v["targets"] = {process};
  Log("client-pause: client " + std::to_string(process) + " stopped for " +
      std::to_string(o_.duration.count()) + " ms");
  return v;
}

Evidence ClientPauseEffect::Probe(Nanos, ProbeMoment when) {
  // After the stop the client runs again: nothing more to see.
  if (paused_ == 0 || when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  return StoppedEvidence("client " + std::to_string(paused_), clients_->ClientProcess(paused_));
}

void ClientPauseEffect::Stop(Nanos) {
  if (paused_ != 0) clients_->ResumeClient(paused_);
  paused_ = 0;
}

Status SlowCsEffect::Validate() { return PointParam(); }

nlohmann::json SlowCsEffect::Start(Nanos time, int process) {
  process_ = process;
  opened_at_ = time;
  Log("slow-cs: client " + std::to_string(process) + " stays in its critical section " +
      std::to_string(o_.duration.count()) + " ms longer");
  return {{"targets", {process}}, {"point", ArmedPoint(o_)}};
}

Evidence SlowCsEffect::Probe(Nanos, ProbeMoment) {
  Evidence e;
  const std::string who = "client " + std::to_string(process_);
  const int64_t ms = o_.duration.count();
  SlowSeen slow;
  // The report must be of this window's section (it arrived after the window opened) and
  // of the whole sleep (1 ms of slack for the clock's rounding).
  if (!clients_->ClientSlowEnded(process_, &slow) || slow.at < opened_at_) {
    e.line = who + " reported no end of its " + std::to_string(ms) + " ms slow section at " +
             ArmedPoint(o_);
    return e;
  }
  e.details = {{"slept_ms", slow.slept.count()}, {"point", slow.point}};
  e.seen = slow.slept.count() + 1 >= ms;
  e.line = who + " stayed " + std::to_string(slow.slept.count()) + " ms longer in its critical section at " +
           slow.point + " (its own report when the slow sleep ended" +
           (e.seen ? ")" : "; " + std::to_string(ms) + " ms were asked)");
  return e;
}

Status ClientCrashEffect::Validate() { return PointParam(); }

void ClientCrashEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = ArmedPoint(o_);
  if (schedule->max_windows == 0) schedule->max_windows = 1;
}

nlohmann::json ClientCrashEffect::Start(Nanos, int process) {
  std::string point = ArmedPoint(o_);
  if (!clients_->CrashClient(process)) return nullptr;
  crashed_ = process;
  Log("client-crash: client " + std::to_string(process) + " killed (SIGKILL) at " + point);
  return {{"targets", {process}}, {"point", point}};
}

Evidence ClientCrashEffect::Probe(Nanos, ProbeMoment) {
  Evidence e;
  const std::string who = "client " + std::to_string(crashed_);
  ProcessSeen p = clients_->ClientProcess(crashed_);
  if (!p.visible) {
    e.line = who + ": " + p.why;
    return e;
  }
  const std::string stat = "/proc/" + std::to_string(p.pid) + "/stat";
  e.details = {{"pid", p.pid}, {"state", p.state == 0 ? std::string("gone") : std::string(1, p.state)}};
  e.seen = p.state == 0 || p.state == 'Z' || p.state == 'X';
  if (p.state == 0) e.line = who + " (pid " + std::to_string(p.pid) + ") gone after SIGKILL: no " + stat;
  else e.line = who + " (pid " + std::to_string(p.pid) + ") " + (e.seen ? "dead after SIGKILL" : "still running") +
                ": state " + std::string(1, p.state) + " in " + stat;
  return e;
}

nlohmann::json ServerPauseEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) nodes_->PauseNode(n);
  Log("server-pause: nodes stopped for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
}

Evidence ServerPauseEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) parts.push_back(StoppedEvidence("node n" + std::to_string(n), nodes_->NodeProcess(n)));
  return AllSeen(parts);
}

void ServerPauseEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) nodes_->ResumeNode(n);
}

nlohmann::json MemoryFullEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  for (int n : nodes) {
    // The policy first: with an evicting policy a full node would drop keys (other
    // clients' locks) instead of refusing writes. One byte is below any node's use.
    Status s = nodes_->SetNodeConfig(n, "maxmemory-policy", "noeviction");
    if (s.ok()) s = nodes_->SetNodeConfig(n, "maxmemory", "1");
    if (!s.ok()) Log("memory-full: n" + std::to_string(n) + ": " + s.message());
  }
  Log("memory-full: nodes refuse writes (OOM) for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}};
}

Evidence MemoryFullEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) {
    Evidence e;
    std::string reply;
    Status s = nodes_->NodeWriteProbe(n, &reply);
    const std::string node = "node n" + std::to_string(n);
    if (!s.ok()) {
      e.line = node + " write probe: " + s.message();
    } else {
      e.seen = reply.rfind("OOM", 0) == 0;
      e.line = node + " answered a write with " + (e.seen ? "-" : "") + reply + (e.seen ? "" : " (no OOM error)");
    }
    parts.push_back(e);
  }
  return AllSeen(parts);
}

void MemoryFullEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) {
    Status s = nodes_->SetNodeConfig(n, "maxmemory", "0");
    if (!s.ok()) Log("memory-full: n" + std::to_string(n) + " did not confirm maxmemory 0: " + s.message());
  }
}

std::vector<std::string> RestartEffect::NodeArgs() const {
  if (o_.Param("restart", "no-persistence") == "aof-always") {
    return {"--appendonly", "yes", "--appendfsync", "always"};
  }
  return {};
}

Status RestartEffect::Validate() {
  std::string mode = o_.Param("restart", "no-persistence");
  if (mode != "no-persistence" && mode != "aof-always") {
    return Status::Usage(std::string("fault ") + id() + ": param 'restart': '" + mode +
                         "': expected no-persistence or aof-always");
  }
  return Status::Ok();
}

nlohmann::json RestartEffect::Start(Nanos, int) {
  std::vector<int> nodes = NodesOr(1);
  before_.clear();
  for (int n : nodes) before_[n] = nodes_->NodeServing(n);  // to tell the restarted one apart
  for (int n : nodes) nodes_->KillNode(n);
  Log("restart: nodes killed (SIGKILL), down for " + std::to_string(o_.duration.count()) + " ms");
  return {{"nodes", nodes}, {"restart", o_.Param("restart", "no-persistence")}};
}

void RestartEffect::Stop(Nanos) {
  for (int n : NodesOr(1)) {
    Status s = nodes_->RestartNode(n);
    if (!s.ok()) Log("restart: node n" + std::to_string(n) + " did not come back: " + s.message());
  }
}

Evidence RestartEffect::Probe(Nanos, ProbeMoment when) {
  if (when != ProbeMoment::kAfterStop && when != ProbeMoment::kLate) return {};
  std::vector<Evidence> parts;
  for (int n : NodesOr(1)) {
    Evidence e;
    const std::string node = "node n" + std::to_string(n);
    const ServingSeen& old = before_[n];
    ServingSeen now = nodes_->NodeServing(n);
    if (!old.answered) {
      e.line = node + " did not say who served it before the kill: " + old.error;
    } else if (!now.answered) {
      e.line = node + " does not answer after its restart: " + now.error;
    } else {
      // Redis names each start (run_id); other servers are told apart by their pid.
      bool by_run_id = !old.run_id.empty() && !now.run_id.empty();
      e.seen = by_run_id ? old.run_id != now.run_id : old.pid != now.pid;
      e.details = {{"pid_before", old.pid}, {"pid_after", now.pid}};
      e.line = node + " answers after its restart as pid " + std::to_string(now.pid) + " (was " +
               std::to_string(old.pid) + ")" +
               (by_run_id ? std::string(", run_id ") + (e.seen ? "new" : "unchanged") : std::string()) +
               (e.seen ? "" : ": the same server, not restarted");
    }
    parts.push_back(e);
  }
  return AllSeen(parts);
}

Status FailoverEffect::Validate() {
  int64_t ms = 0;
  Status s = IntParam("kill_after_ms", "300", 0, 3600000, &ms);
  kill_after_ = Millis(ms);
  return s;
}

void FailoverEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = "after-release";
  if (schedule->max_windows == 0) schedule->max_windows = 1;
  if (schedule->duration <= kill_after_) schedule->duration = kill_after_ + Millis(5000);
}

RunShape FailoverEffect::ShapeRun() const {
  int64_t kill_after_ms = 300;  // a bad value is refused later, by Validate
  if (std::optional<int64_t> v = ParseInt(o_.Param("kill_after_ms", "300"), 0, 3600000)) kill_after_ms = *v;
  RunShape r;
  r.hold = Millis(kill_after_ms) + Millis(2700);
  r.ttl = r.hold + Millis(1000);
  r.lease_over_hold = Millis(1000);
  r.acquire_timeout = Millis(1000);
  r.first_at = Millis(500);
  r.window = r.hold + Millis(3000);
  // The first release comes a hold after the start; the window after it, and a margin.
  r.duration = r.first_at + r.hold + r.window + Millis(1500);
  return r;
}

int FailoverEffect::PickArmedClient(const ClientControl& clients) {
  std::vector<int> h = clients.Holders();
  return h.empty() ? draw().Client(clients) : h.front();
}

nlohmann::json FailoverEffect::Start(Nanos time, int process) {
  // The race of the Redis docs starts from a free lock: the armed client stopped itself
  // right after its release (the delete has run and replicated), the stream is cut, and
  // the next lock written is the one that never reaches the replica.
  Status s = nodes_->CutReplication(true);
  clients_->ResumeClient(process);
  if (!s.ok()) {
    Log("failover: " + s.message());
    return nullptr;  // (the driver resumes the client)
  }
  killed_ = false;
  was_killed_ = false;
  opened_at_ = time;
  acquires_at_cut_ = clients_->AcquiresSeen();
  holders_at_cut_ = clients_->Holders();
  held_at_kill_.clear();
  Log("failover: client " + std::to_string(process) + " released; replication n1 -> r1 cut; n1 dies " +
      std::to_string(kill_after_.count()) + " ms after the next acquire");
  return {{"nodes", {1}}, {"replica", "r1"}, {"kill_after_ms", kill_after_.count()},
          {"released_by", process}};
}

void FailoverEffect::OnClientEventWhileOpen(Nanos now) {
  // An acquire reported within the first millisecond may have run before the cut (its
  // event was on its way); a wrong guess here costs a missed detection, never a false one.
  if (now < opened_at_ + Millis(1)) acquires_at_cut_ = clients_->AcquiresSeen();
}

void FailoverEffect::WhileOpen(Nanos now) {
  if (killed_ || now < opened_at_ + kill_after_) return;
  next_check_ = now + Millis(10);
  if (clients_->AcquiresSeen() == acquires_at_cut_) return;  // no unreplicated lock yet
  held_at_kill_.clear();
  locks_at_kill_.clear();
  for (int p : clients_->Holders()) {
    if (std::find(holders_at_cut_.begin(), holders_at_cut_.end(), p) == holders_at_cut_.end()) {
      held_at_kill_.push_back(p);
      locks_at_kill_[p] = clients_->HeldLocks(p);
    }
  }
  nodes_->KillNode(1);
  killed_ = true;
  was_killed_ = true;
  killed_at_ = now;
  std::string held;
  for (int p : held_at_kill_) held += (held.empty() ? "" : ", ") + std::to_string(p);
  Log("failover: n1 killed (SIGKILL); Sentinel promotes r1; " +
      (held.empty() ? std::string("no client holds a lock n1 granted after the cut")
                    : (held_at_kill_.size() == 1 ? "client " + held + " holds" : "clients " + held + " hold") +
                          " the lock n1 granted after the cut (never replicated)"));
}

Evidence FailoverEffect::Probe(Nanos, ProbeMoment) {
  Evidence e;
  if (!was_killed_) {
    e.line = "n1 not killed yet (it waits for an acquire while replication is cut)";
    return e;
  }
  // The lost write is read from the replica itself: the lock keys n1 acknowledged after the
  // cut, which a promoted r1 must not have (else nothing was lost, whatever the timing).
  std::vector<std::string> keys;
  for (const auto& [p, held] : locks_at_kill_) {
    for (const auto& l : held) keys.push_back(l.key);
  }
  FailoverSeen f;
  Status s = nodes_->ProbeFailover(keys, &f);
  if (!s.ok()) {
    e.line = "failover probe: " + s.message();
    return e;
  }
  const bool promoted = f.replica_role == "master";
  const bool named = !f.sentinel_master.empty() && f.sentinel_master == f.replica;
  // The race needs a holder of the lost lock write at the promotion, and the write lost: its
  // key absent from r1, or holding another token. A key r1 did not answer for, or a holder
  // whose token is not known (no token in its acquire's answer), is not seen lost.
  std::vector<int> still, reached;
  std::string on_replica;  // what r1 has of the first holder's key, for the line
  const std::vector<int> now_holding = clients_->Holders();
  for (int p : held_at_kill_) {
    if (std::find(now_holding.begin(), now_holding.end(), p) == now_holding.end()) continue;
    bool lost = false, got = false;
    for (const auto& l : locks_at_kill_[p]) {
      auto r = f.replica_keys.find(l.key);
      if (r == f.replica_keys.end()) continue;
      if (on_replica.empty()) on_replica = "GET " + l.key + " on r1: " + (r->second.empty() ? "nil" : r->second);
      if (r->second.empty() || (!l.token.empty() && r->second != l.token)) lost = true;
      else got = true;
    }
    if (lost) still.push_back(p);
    else if (got) reached.push_back(p);
  }
  std::string who;
  for (int p : still) who += (who.empty() ? "" : ", ") + std::to_string(p);
  e.seen = (promoted || named) && !still.empty();
  e.details = {{"replica_role", f.replica_role},
               {"sentinel_master", f.sentinel_master},
               {"killed_ns", killed_at_.count()},
               {"lost_lock_holders", still},
               {"replicated_lock_holders", reached}};
  e.line = "replica r1 (" + f.replica + ") reports role " + (f.replica_role.empty() ? "(no answer)" : f.replica_role) +
           "; the sentinels name " + (f.sentinel_master.empty() ? "no master" : f.sentinel_master) + " master";
  if (!(promoted || named)) {
    e.line += " (no promotion yet)";
  } else if (!still.empty()) {
    e.line += (still.size() == 1 ? "; client " + who + " still holds" : "; clients " + who + " still hold") +
              " the lock n1 acknowledged after the replication cut, and r1 does not have it (" + on_replica + "): lost";
  } else if (!reached.empty()) {
    e.line += "; but r1 has the lock n1 acknowledged after the cut (" + on_replica +
              ", the holder's token): the write reached it, nothing was lost";
  } else if (!held_at_kill_.empty() && on_replica.empty() &&
             std::any_of(held_at_kill_.begin(), held_at_kill_.end(), [&](int p) {
               return std::find(now_holding.begin(), now_holding.end(), p) != now_holding.end();
             })) {
    e.line += "; r1 did not answer for the lock key n1 acknowledged after the cut: whether it was lost is not known";
  } else {
    e.line += held_at_kill_.empty() ? "; but no client held a lock n1 granted after the cut when n1 died (nothing lost was held)"
                                    : "; but the holder of the lock n1 granted after the cut had let go (nothing lost was held at the promotion)";
  }
  return e;
}

void FailoverEffect::Stop(Nanos) {
  nodes_->CutReplication(false);
  if (killed_) {
    Status s = nodes_->RestartNode(1);
    if (!s.ok()) Log("failover: old master did not restart: " + s.message());
  }
  killed_ = false;
}

}  // namespace locklab::faults
