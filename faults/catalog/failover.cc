// failover: n1 with a replica and three sentinels; replication cut, n1 killed, the replica
// promoted. The run it needs around it (a holder that still holds when the replica is
// promoted) is FailoverEffect::ShapeRun's, taken for every value no flag gave.
#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "base/numbers.h"
#include "faults/catalog/catalog.h"
#include "faults/process_effects.h"

namespace locklab::faults {

namespace {

// Master failover (Redis docs' race): right after a client released the lock (armed at
// after-release), the replication stream from n1 to its replica is cut, and once a client
// has acquired while it is cut (a lock write acknowledged but never replicated) and
// `kill_after_ms` have passed, n1 is killed, Sentinel promotes the replica and clients find
// it through Sentinel. When the window closes the stream is healed and the old master
// restarts (empty; Sentinel turns it into a replica of the new master). The effect is the
// race itself: the replica promoted while a client still holds the lock n1 granted after
// the cut (that lock write is lost); a promotion after every such holder let go tests
// nothing, and is not seen.
class FailoverEffect : public Effect {
 public:
  using Effect::Effect;
  // Armed at after-release: the window opens the moment a client gave the lock back. One
  // failover per trial unless asked for more; the window outlasts kill_after_ms.
  void Shape(Schedule* schedule) const override;
  // The run the race needs (the default matrix cell's, scenarios/matrix/failover.toml, at
  // the default kill_after_ms): a hold of kill_after_ms + 2.7 s, the time Sentinel takes to
  // promote (down-after 500 ms and an election, about 1.5 s on an idle machine) with room
  // for a busy one, inside a lease 1 s longer; callers that give up after 1 s; a window
  // 3 s longer than the hold, opening at the first release after 500 ms.
  RunShape ShapeRun() const override;
  // The holder: it is the next to release.
  int PickArmedClient(const ClientControl& clients) override;
  nlohmann::json Start(Nanos time, int process) override;
  void Stop(Nanos time) override;
  void WhileOpen(Nanos now) override;
  void OnClientEventWhileOpen(Nanos now) override;
  // Once n1 was killed: the replica reports role master, or the sentinels name it master,
  // while a client that held a lock when n1 died (granted by n1 after the cut) still holds
  // it. Details: killed_ns (when n1 died, on the history's clock) and lost_lock_holders.
  Evidence Probe(Nanos now, ProbeMoment when) override;
  Nanos OpenWakeup() const override {
    return killed_ ? Nanos::max() : std::max(opened_at_ + kill_after_, next_check_);
  }

 protected:
  void Attach(LabControl& lab) override {
    clients_ = &lab;
    nodes_ = &lab;
  }
  Status Validate() override;

 private:
  ClientControl* clients_ = nullptr;
  NodeControl* nodes_ = nullptr;
  Millis kill_after_{300};
  bool killed_ = false;
  bool was_killed_ = false;  // in this window (Stop clears killed_ before the last probe)
  int64_t acquires_at_cut_ = 0;
  std::vector<int> holders_at_cut_;  // their locks were written before the cut
  std::vector<int> held_at_kill_;    // holders of a lock n1 granted after the cut, at its death
  std::map<int, std::vector<HeldLock>> locks_at_kill_;  // what each of them held (key, token)
  Nanos killed_at_{0};
  Nanos opened_at_{0};
  Nanos next_check_{0};
};

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

FaultDescriptor FailoverFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kReplicaFailover};
  d.info = {"failover",
            "n1 with a replica and three sentinels: replication cut, n1 killed, the replica "
            "promoted; clients find the new master through Sentinel (with no timing flag the "
            "run gets a holder that outlasts the promotion: hold kill_after_ms + 2.7 s, TTL 1 s "
            "longer)",
            {{"kill_after_ms", "300", "time between cutting replication and killing n1"}}};
  // Needs a replica and sentinels the lab started: neither client-side nor node control.
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<FailoverEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    f->params["kill_after_ms"] = std::to_string(TtlTimes(c.ttl, LogUniform(rng, 0.2, 2)).count());
  };
  d.hunt.one_window_only = true;  // its window is stretched to its kill plus the promotion
  d.sentence = [](const FaultOptions& f, const std::string&) {
    return "failover cuts n1's replication and kills n1 " + f.Param("kill_after_ms", "300") +
           " ms later; Sentinel promotes the replica";
  };
  d.style.colour = "#d94fa8";
  d.style.noun = "failover";
  d.style.label = "failover";
  d.style.story = "a failover happened ({label})";
  d.traits.node_down = true;
  d.traits.needs_sentinel = true;
  d.traits.promotes_replica = true;
  d.traits.arm_points = {"after-release"};
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kFailoverRegistered(120, &FailoverFault);

}  // namespace locklab::faults
