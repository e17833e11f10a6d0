#include "faults/network_effects.h"

#include <algorithm>

namespace locklab::faults {
namespace {

std::vector<int> AllNodes(const NodeControl& lab) {
  std::vector<int> v;
  for (int n = 1; n <= lab.node_count(); ++n) v.push_back(n);
  return v;
}

nlohmann::json LinksJson(const std::vector<std::pair<int, int>>& links) {
  nlohmann::json out = nlohmann::json::array();
  for (auto [c, n] : links) out.push_back({c, n == 0 ? std::string("resource") : "n" + std::to_string(n)});
  return out;
}

// The counters of `links` summed.
LinkBytes SumCounters(const NetworkControl& net, const std::vector<std::pair<int, int>>& links) {
  LinkBytes sum;
  for (auto [c, n] : links) {
    LinkBytes b = net.LinkCounters(c, n);
    sum.held += b.held;
    sum.discarded += b.discarded;
    sum.delayed += b.delayed;
    sum.resets += b.resets;
  }
  return sum;
}

LinkBytes Since(const LinkBytes& now, const LinkBytes& base) {
  return {now.held - base.held, now.discarded - base.discarded, now.delayed - base.delayed,
          now.resets - base.resets};
}

nlohmann::json BytesJson(const LinkBytes& b) {
  return {{"bytes_held", b.held}, {"bytes_dropped", b.discarded}, {"bytes_delayed", b.delayed},
          {"connections_reset", b.resets}};
}

std::string LinkCount(size_t n) { return std::to_string(n) + (n == 1 ? " cut link" : " cut links"); }

// The clients a window on client links cuts: the one stopped at the armed point (`process`),
// else `targets` alone with target kind any, else the one the kind picks (none: it waits).
template <typename Pick>
std::vector<int> CutClients(int process, const std::string& kind, const std::vector<int>& targets, Pick pick) {
  if (process != 0) return {process};
  if (kind == "any" && !targets.empty()) return targets;
  const int p = pick();
  return p == 0 ? std::vector<int>{} : std::vector<int>{p};
}

// The client stopped at the point goes on, its next command meeting the cut links.
void GoOnFromPoint(ClientControl& clients, int process, const std::string& point, nlohmann::json* v) {
  if (process == 0) return;
  (*v)["point"] = point;
  clients.ResumeClient(process);
}

}  // namespace

void PartitionEffect::Attach(LabControl& lab) {
  clients_ = &lab;
  nodes_ = &lab;
  network_ = &lab;
}

Status PartitionEffect::Validate() {
  std::string shape = o_.Param("shape", "isolate-clients");
  if (shape != "isolate-clients" && shape != "isolate-node" && shape != "majorities-ring") {
    return Status::Usage(std::string("fault ") + id() + ": param 'shape': '" + shape +
                         "': expected isolate-clients, isolate-node or majorities-ring");
  }
  std::string mode = o_.Param("mode", "hold");
  if (mode != "hold" && mode != "reset") {
    return Status::Usage(std::string("fault ") + id() + ": param 'mode': '" + mode + "': expected hold or reset");
  }
  std::string dir = o_.Param("direction", "both");
  if (dir != "both" && dir != "up" && dir != "down") {
    return Status::Usage(std::string("fault ") + id() + ": param 'direction': '" + dir + "': expected both, up or down");
  }
  std::string res = o_.Param("resource", "false");
  if (res != "true" && res != "false") {
    return Status::Usage(std::string("fault ") + id() + ": param 'resource': '" + res + "': expected true or false");
  }
  if (!ArmedPoint(o_).empty() && shape != "isolate-clients") {
    return Status::Usage(std::string("fault ") + id() + ": param 'point': a window armed at a point cuts the "
                         "client that reaches it: shape must be isolate-clients, got '" + shape + "'");
  }
  return PointParam();
}

LinkState PartitionEffect::CutState() const {
  LinkState s;
  if (o_.Param("mode", "hold") == "reset") {
    s.reset = true;
    return s;
  }
  std::string dir = o_.Param("direction", "both");
  if (dir != "down") s.up = Direction::kHold;
  if (dir != "up") s.down = Direction::kHold;
  return s;
}

nlohmann::json PartitionEffect::Start(Nanos, int process) {
  std::string shape = o_.Param("shape", "isolate-clients");
  cut_.clear();
  if (shape == "isolate-clients") {
    // `targets` alone cuts them all (as always); with a target kind, the one client it
    // picks among them (holder: one holding a lock right now; the window waits for one).
    std::vector<int> clients = CutClients(process, target_kind(), o_.targets, [&] { return PickClient(*clients_); });
    if (clients.empty()) return nullptr;
    std::vector<int> nodes = o_.nodes.empty() ? AllNodes(*nodes_) : o_.nodes;
    if (o_.Param("resource", "false") == "true") nodes.push_back(0);
    for (int c : clients) {
      for (int n : nodes) cut_.push_back({c, n});
    }
  } else if (shape == "isolate-node") {
    for (int n : NodesOr(1)) {
      for (int c = 1; c <= clients_->client_count(); ++c) cut_.push_back({c, n});
    }
  } else {
    int nn = nodes_->node_count();
    for (int c = 1; c <= clients_->client_count(); ++c) {
      for (int n = 1; n <= nn; ++n) {
        int d = ((n - 1) - (c - 1) % nn + nn) % nn;  // distance from the client's first node
        if (d > nn / 2) cut_.push_back({c, n});
      }
    }
  }
  LinkState st = CutState();
  base_ = SumCounters(*network_, cut_);
  for (auto [c, n] : cut_) network_->SetLink(c, n, st);
  Log("partition (" + shape + "): " + std::to_string(cut_.size()) + " links " + st.ToString());
  nlohmann::json v = {{"shape", shape}, {"links", LinksJson(cut_)}, {"state", st.ToString()}};
  GoOnFromPoint(*clients_, process, ArmedPoint(o_), &v);
  return v;
}

Evidence PartitionEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  Evidence e;
  LinkBytes b = Since(SumCounters(*network_, cut_), base_);
  e.seen = b.total() > 0;
  e.details = BytesJson(b);
  e.line = "the proxy held " + std::to_string(b.held) + " bytes, dropped " + std::to_string(b.discarded) +
           " and reset " + std::to_string(b.resets) + " connections on " + LinkCount(cut_.size()) +
           (e.seen ? "" : ": nothing crossed the cut");
  return e;
}

void PartitionEffect::Stop(Nanos) {
  for (auto [c, n] : cut_) network_->SetLink(c, n, LinkState::Pass());
  cut_.clear();
}

void ReplyLossEffect::Attach(LabControl& lab) {
  clients_ = &lab;
  nodes_ = &lab;
  network_ = &lab;
}

nlohmann::json ReplyLossEffect::Start(Nanos, int process) {
  std::vector<int> clients = CutClients(process, target_kind(), o_.targets, [&] { return PickClient(*clients_); });
  if (clients.empty()) return nullptr;
  std::vector<int> nodes = o_.nodes.empty() ? AllNodes(*nodes_) : o_.nodes;
  cut_.clear();
  LinkState st;
  st.down = Direction::kDiscard;
  base_ = LinkBytes();
  for (int c : clients) {
    for (int n : nodes) {
      LinkBytes b = network_->LinkCounters(c, n);
      base_.discarded += b.discarded;
    }
  }
  for (int c : clients) {
    for (int n : nodes) {
      cut_.push_back({c, n});
      network_->SetLink(c, n, st);
    }
  }
  Log("reply-loss: replies dropped on " + std::to_string(cut_.size()) + " links");
  nlohmann::json v = {{"links", LinksJson(cut_)}};
  GoOnFromPoint(*clients_, process, ArmedPoint(o_), &v);
  return v;
}

Evidence ReplyLossEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kAfterStop || when == ProbeMoment::kLate) return {};
  Evidence e;
  const uint64_t dropped = SumCounters(*network_, cut_).discarded - base_.discarded;
  e.seen = dropped > 0;
  e.details = {{"bytes_dropped", dropped}};
  e.line = "the proxy dropped " + std::to_string(dropped) + " reply bytes on " + LinkCount(cut_.size()) +
           (e.seen ? "" : ": no reply came back while the window was open");
  return e;
}

void ReplyLossEffect::Stop(Nanos) {
  for (auto [c, n] : cut_) network_->SetLink(c, n, LinkState::Pass());
  cut_.clear();
}

void DelayEffect::Attach(LabControl& lab) {
  clients_ = &lab;
  network_ = &lab;
}

Status DelayEffect::Validate() {
  int64_t ms = 0;
  Status s = IntParam("delay_ms", std::to_string(o_.duration.count()), 1, 3600000, &ms);
  delay_ = Millis(ms);
  return s;
}

void DelayEffect::Shape(Schedule* schedule) const {
  schedule->armed_point = "before-write";
  schedule->duration = std::max(schedule->duration, delay_);
}

nlohmann::json DelayEffect::Start(Nanos time, int process) {
  LinkState st;
  st.up = Direction::kDelay;
  st.delay = delay_;
  base_ = network_->LinkCounters(process, 0);
  network_->SetLink(process, 0, st);
  clients_->ResumeClient(process);  // it stopped itself at before-write; now it sends the write
  client_ = process;
  restored_ = false;
  restore_at_ = time + Millis(50);
  Log("delay: client " + std::to_string(process) + "'s write to the resource held " +
      std::to_string(delay_.count()) + " ms");
  return {{"targets", {process}}, {"delay_ms", delay_.count()}};
}

void DelayEffect::WhileOpen(Nanos now) {
  if (!restored_ && now >= restore_at_) {
    network_->SetLink(client_, 0, LinkState::Pass());  // the write already queued keeps its time
    restored_ = true;
  }
}

Evidence DelayEffect::Probe(Nanos, ProbeMoment when) {
  if (when == ProbeMoment::kLate) return {};
  Evidence e;
  const uint64_t delayed = network_->LinkCounters(client_, 0).delayed - base_.delayed;
  e.seen = delayed > 0;
  e.details = {{"bytes_delayed", delayed}};
  e.line = "the proxy delayed " + std::to_string(delayed) + " bytes of client " + std::to_string(client_) +
           "'s write to the resource by " + std::to_string(delay_.count()) + " ms" +
           (e.seen ? "" : ": the client sent nothing while its link was slowed");
  return e;
}

void DelayEffect::Stop(Nanos) {
  if (!restored_) network_->SetLink(client_, 0, LinkState::Pass());
  restored_ = true;
}

}  // namespace locklab::faults
