#include "checker/mutual_exclusion.h"

#include "checker/infra.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace locklab::checker {
namespace {

Nanos EndOfHistory(const History& sorted) {
  return sorted.empty() ? Nanos(0) : sorted.back().time;
}

bool WriteValue(const nlohmann::json& v, int64_t* value, int64_t* fence) {
  *fence = -1;
  if (v.is_number_integer()) {
    *value = v.get<int64_t>();
    return true;
  }
  if (v.is_object()) {
    auto it = v.find("value");
    if (it == v.end() || !it->is_number_integer()) return false;
    *value = it->get<int64_t>();
    auto f = v.find("fence");
    if (f != v.end() && f->is_number_integer()) *fence = f->get<int64_t>();
    return true;
  }
  return false;
}

// The value's validity_ms when it is a number > 0 (how long the lock said the lease lasts).
std::optional<Nanos> PositiveValidity(const nlohmann::json& v) {
  if (!v.is_object()) return std::nullopt;
  auto it = v.find("validity_ms");
  if (it == v.end() || !it->is_number()) return std::nullopt;
  double ms = it->get<double>();
  if (!(ms > 0)) return std::nullopt;
  return std::chrono::duration_cast<Nanos>(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

std::vector<int64_t> CrashedClients(const Event& e) {
  std::vector<int64_t> out;
  if (int64_t dead = InfraDeadClient(e)) return {dead};  // a death the schedule did not cause
  if (e.process != kNemesisProcess || e.f != "start" || e.key != "client-crash") return out;
  if (!e.value.is_object()) return out;
  auto it = e.value.find("targets");
  if (it != e.value.end() && it->is_array()) {
    for (const auto& t : *it) {
      if (t.is_number_integer()) out.push_back(t.get<int64_t>());
    }
  }
  it = e.value.find("process");
  if (it != e.value.end() && it->is_number_integer()) out.push_back(it->get<int64_t>());
  return out;
}

std::vector<HoldInterval> ComputeHoldIntervals(const History& sorted, const HoldOptions& options) {
  std::vector<HoldInterval> done;
  // One hold per granted acquire: reserved once (a vector doubling to a long history's
  // holds held its old and new storage at once, and kept up to half of it unused).
  size_t grants = 0;
  for (const Event& e : sorted) {
    grants += e.process >= 0 && e.type == EventType::kOk && e.f == "acquire";
  }
  done.reserve(grants);
  std::map<std::pair<int64_t, std::string>, HoldInterval> open;
  // With validity honoured: when each open hold's client stopped believing it held the lock
  // (absent: never, the lease gave no validity).
  std::map<std::pair<int64_t, std::string>, Nanos> valid_until;
  auto close = [&](int64_t process, const std::string& key, Nanos t) {
    auto it = open.find({process, key});
    if (it == open.end()) return;
    it->second.end = t;
    auto vu = valid_until.find({process, key});
    if (vu != valid_until.end()) {
      if (vu->second < t) {
        it->second.end = vu->second;
        it->second.validity_cut = true;
      }
      valid_until.erase(vu);
    }
    done.push_back(std::move(it->second));
    open.erase(it);
  };
  for (const Event& e : sorted) {
    if (e.process == kNemesisProcess || e.process == kHarnessProcess) {
      for (int64_t p : CrashedClients(e)) {
        std::vector<std::string> keys;
        for (auto& [pk, h] : open) {
          if (pk.first == p) keys.push_back(pk.second);
        }
        for (auto& k : keys) close(p, k, e.time);
      }
      continue;
    }
    if (e.process < 0 || !IsLockOp(e.f)) continue;
    if (e.type == EventType::kInvoke && (e.f == "release" || e.f == "acquire")) {
      close(e.process, e.key, e.time);
    } else if (e.type == EventType::kOk && e.f == "acquire") {
      close(e.process, e.key, e.time);  // defensive: an ok without a matching invoke
      HoldInterval h;
      h.process = e.process;
      h.key = e.key;
      h.start = e.time;
      h.acquire_index = e.index;
      if (options.keep_lease) h.lease = e.value;
      open.emplace(std::make_pair(e.process, e.key), std::move(h));
      if (options.validity_honoured) {
        if (auto v = PositiveValidity(e.value)) valid_until[{e.process, e.key}] = e.time + *v;
      }
    } else if (e.type == EventType::kOk && e.f == "renew" && options.validity_honoured) {
      // A renewal the client saw succeed extends what it believes (never shortens it).
      auto vu = valid_until.find({e.process, e.key});
      if (vu == valid_until.end() || !open.count({e.process, e.key})) continue;
      if (auto v = PositiveValidity(e.value)) vu->second = std::max(vu->second, e.time + *v);
      else valid_until.erase(vu);  // a renewed lease without a validity is not bounded
    }
  }
  Nanos end = EndOfHistory(sorted);
  std::vector<std::pair<int64_t, std::string>> still_open;
  for (auto& [pk, h] : open) still_open.push_back(pk);
  for (auto& pk : still_open) {
    open[pk].open_at_end = true;
    close(pk.first, pk.second, end);
  }
  std::sort(done.begin(), done.end(), [](const HoldInterval& a, const HoldInterval& b) {
    return std::tie(a.key, a.start, a.process) < std::tie(b.key, b.start, b.process);
  });
  return done;
}

namespace {

// A hold the validity rule cut, and the client's own release of that lease that ended (ok,
// fail or info; null: none before the history ended).
struct CutHoldRelease {
  const HoldInterval* hold;
  const Event* release;
  // The lease was still the client's own on the server up to its release.
  bool released_ok() const { return release != nullptr && release->type == EventType::kOk; }
};

// Every hold of `holds` the validity rule cut, matched by (process, key, start) to its
// acquire in `sorted`, with its release: those released in the order the releases came,
// then those never released. One the same client's next acquire of the key closed first is
// left out. The one reading of "what became of a cut lease" (WithValidityReleases, liveness).
std::vector<CutHoldRelease> CutHoldReleases(const History& sorted, const std::vector<HoldInterval>& holds) {
  std::vector<CutHoldRelease> out;
  std::map<std::tuple<int64_t, std::string, Nanos>, const HoldInterval*> cut;
  for (const auto& h : holds) {
    if (h.validity_cut) cut[{h.process, h.key, h.start}] = &h;
  }
  if (cut.empty()) return out;
  std::map<std::pair<int64_t, std::string>, const HoldInterval*> current;  // hold being closed
  for (const auto& e : sorted) {
    if (e.process < 0) continue;
    if (e.f == "acquire" && e.type == EventType::kOk) {
      auto it = cut.find({e.process, e.key, e.time});
      if (it != cut.end()) current[{e.process, e.key}] = it->second;
      else current.erase({e.process, e.key});
    } else if (e.f == "release" && e.type != EventType::kInvoke) {
      auto it = current.find({e.process, e.key});
      if (it == current.end()) continue;
      out.push_back({it->second, &e});
      current.erase(it);
    }
  }
  for (auto& [pk, h] : current) out.push_back({h, nullptr});  // never released
  return out;
}

}  // namespace

bool HasValidityReleases(const History& sorted, const std::vector<HoldInterval>& holds) {
  for (const auto& c : CutHoldReleases(sorted, holds)) {
    if (!c.released_ok()) return true;
  }
  return false;
}

History WithValidityReleases(const History& sorted, const std::vector<HoldInterval>& holds) {
  // The holds the validity rule cut each get a release at their end unless the client's own
  // release of that lease then succeeded (the lock was still its own on the server: nobody
  // can have taken it in between).
  std::vector<const HoldInterval*> add;
  for (const auto& c : CutHoldReleases(sorted, holds)) {
    if (!c.released_ok()) add.push_back(c.hold);
  }
  if (add.empty()) return sorted;
  History out = sorted;
  int64_t next_index = 0;
  for (const auto& e : sorted) next_index = std::max(next_index, e.index + 1);
  // The release is of unknown outcome (info), not ok: the lease may have ended on the
  // server anywhere from the cut on (it expired), or not at all (a watchdog thread kept
  // renewing it after the client stopped using it). An ok release pinned it free at the cut,
  // and the watchdog's next owner-checked renewal read as a second owner: a false
  // "violated" (ValidityCutLeaseStillRenewedByItsWatchdogIsNotAViolation).
  for (const HoldInterval* h : add) {
    for (auto type : {EventType::kInvoke, EventType::kInfo}) {
      Event r;
      r.index = next_index++;
      r.time = h->end;
      r.process = h->process;
      r.type = type;
      r.f = "release";
      r.key = h->key;
      if (type == EventType::kInvoke && h->lease.is_object() && h->lease.contains("token")) {
        r.value = {{"token", h->lease["token"]}};
      }
      out.push_back(r);
    }
  }
  return SortedByTime(std::move(out));
}

std::vector<FaultWindow> ComputeFaultWindows(const History& sorted) {
  std::vector<FaultWindow> out;
  std::map<std::string, std::vector<size_t>> open;  // fault id -> open windows (FIFO)
  for (const Event& e : sorted) {
    if (e.process != kNemesisProcess) continue;
    if (e.f == "start") {
      FaultWindow w;
      w.fault = e.key;
      w.start = e.time;
      w.end = Nanos(-1);
      w.detail = e.value;
      open[e.key].push_back(out.size());
      out.push_back(std::move(w));
    } else if (e.f == "stop") {
      auto& stack = open[e.key];
      if (!stack.empty()) {
        out[stack.front()].end = e.time;  // FIFO: windows of one fault heal in order
        stack.erase(stack.begin());
      }
    }
  }
  Nanos end = EndOfHistory(sorted);
  for (auto& w : out) {
    if (w.end.count() < 0) w.end = end;
  }
  return out;
}

MutualExclusionReport CheckMutualExclusion(const std::vector<HoldInterval>& holds) {
  MutualExclusionReport r;
  r.holds = static_cast<int64_t>(holds.size());
  // Sweep per key: ends sort before starts at the same instant (touching is not overlap).
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < holds.size(); ++i) by_key[holds[i].key].push_back(i);
  for (auto& [key, idx] : by_key) {
    struct Point {
      Nanos t;
      int kind;  // 0 = end, 1 = start
      size_t hold;
    };
    std::vector<Point> pts;
    pts.reserve(idx.size() * 2);
    for (size_t i : idx) {
      if (holds[i].end <= holds[i].start) continue;  // empty hold
      pts.push_back({holds[i].start, 1, i});
      pts.push_back({holds[i].end, 0, i});
    }
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return std::tie(a.t, a.kind, a.hold) < std::tie(b.t, b.kind, b.hold);
    });
    std::set<size_t> active;
    std::map<int64_t, int> active_per_process;
    int distinct_processes = 0;
    OverlapEpisode cur;
    bool in_episode = false;
    for (const Point& p : pts) {
      const HoldInterval& h = holds[p.hold];
      if (p.kind == 1) {
        // Each active hold of another process forms one new overlapping pair.
        for (size_t a : active) {
          if (holds[a].process != h.process) ++r.overlapping_pairs;
        }
        active.insert(p.hold);
        if (active_per_process[h.process]++ == 0) ++distinct_processes;
        if (in_episode) {
          cur.holds.push_back(h);
        } else if (distinct_processes >= 2) {
          in_episode = true;
          cur = OverlapEpisode();
          cur.key = key;
          cur.start = p.t;
          for (size_t a : active) cur.holds.push_back(holds[a]);
        }
      } else {
        active.erase(p.hold);
        if (--active_per_process[h.process] == 0) --distinct_processes;
        if (in_episode && distinct_processes < 2) {
          in_episode = false;
          cur.end = p.t;
          r.overlap_ms += ToMillis(cur.end - cur.start);
          ++r.episodes;
          r.episode_list.push_back(std::move(cur));
        }
      }
    }
  }
  std::sort(r.episode_list.begin(), r.episode_list.end(),
            [](const OverlapEpisode& a, const OverlapEpisode& b) { return a.start < b.start; });
  return r;
}

ResourceReport CheckResource(const History& sorted) {
  ResourceReport r;
  std::map<std::string, int64_t> acked;
  std::map<std::string, int64_t> final_value;
  std::map<std::string, int64_t> last_write;
  // The newest fence of a write acknowledged so far, per key; and, per write in flight, its
  // fence and the newest acknowledged when it was invoked. A write is stale only when a
  // higher fence was surely applied before it: acknowledged before this one was sent. Two
  // writes in flight at once may apply in either order whatever order their replies come
  // in, so neither is stale by the other.
  std::map<std::string, int64_t> newest_fence;
  struct InFlight {
    int64_t fence = -1, newest_before = -1;
  };
  std::map<std::pair<int64_t, std::string>, InFlight> pending_fence;
  std::set<std::string> unanswered_read;  // final reads invoked with no ok (info, or none)
  for (const Event& e : sorted) {
    if (e.f != "write" && e.f != "read") continue;
    if (e.f == "read") {
      // The harness's final read; nil (null) is a counter nobody wrote, i.e. 0 writes.
      if (e.process == kHarnessProcess && e.type == EventType::kOk) {
        if (e.value.is_number_integer()) final_value[e.key] = e.value.get<int64_t>();
        else if (e.value.is_null()) final_value[e.key] = 0;
        unanswered_read.erase(e.key);
      } else if (e.process == kHarnessProcess && e.type == EventType::kInvoke) {
        unanswered_read.insert(e.key);
      }
      continue;
    }
    int64_t value = 0, fence = -1;
    if (e.type == EventType::kInvoke) {
      auto nf = newest_fence.find(e.key);
      InFlight w{-1, nf == newest_fence.end() ? -1 : nf->second};
      if (WriteValue(e.value, &value, &fence)) w.fence = fence;
      pending_fence[{e.process, e.key}] = w;
      continue;
    }
    auto pf = pending_fence.find({e.process, e.key});
    const InFlight in_flight = pf == pending_fence.end() ? InFlight{} : pf->second;
    int64_t invoked_fence = in_flight.fence;
    if (e.type == EventType::kOk) {
      ++acked[e.key];
      if (WriteValue(e.value, &value, &fence)) last_write[e.key] = value;
      if (fence < 0) fence = invoked_fence;
      if (fence >= 0) {
        if (in_flight.newest_before >= 0 && fence < in_flight.newest_before) ++r.stale_writes_accepted;
        auto nf = newest_fence.find(e.key);
        if (nf == newest_fence.end() || fence > nf->second) newest_fence[e.key] = fence;
      }
    } else if (e.type == EventType::kFail) {
      const auto& v = e.value;
      if (v.is_object() && v.value("error", std::string()) == "stale-fence") {
        ++r.stale_writes_rejected;
      }
    }
  }
  for (auto& [key, n] : acked) {
    r.acknowledged_writes += n;
    if (unanswered_read.count(key)) {
      // The harness asked for the final value and got none: what was lost is unknown.
      r.final_value_known = false;
      if (!r.final_read_failed) r.final_read_failed_key = key;
      r.final_read_failed = true;
      continue;
    }
    int64_t fin;
    if (final_value.count(key)) {
      fin = final_value[key];
    } else {
      r.final_value_known = false;
      fin = last_write.count(key) ? last_write[key] : 0;
    }
    if (n > fin) r.lost_updates += n - fin;
  }
  return r;
}

bool LockServiceBlocked(const FaultWindow& w, int64_t process) {
  // The window's own start event says what the fault did (docs/design.md 3.2): the checker
  // names no fault.
  if (!w.detail.is_object()) return false;
  auto down = w.detail.find("node_down");
  if (down != w.detail.end() && down->is_boolean() && down->get<bool>()) return true;
  auto links = w.detail.find("links");
  if (links == w.detail.end() || !links->is_array()) return false;
  for (const auto& l : *links) {
    if (!l.is_array() || l.size() != 2 || !l[0].is_number_integer() || !l[1].is_string()) continue;
    const std::string node = l[1].get<std::string>();
    if (l[0].get<int64_t>() == process && node.size() > 1 && node[0] == 'n') return true;
  }
  return false;
}

namespace {

// For liveness, who holds a key on the server: a hold the validity rule cut whose client's
// own release of that lease then succeeded was its own on the server up to that release (a
// watchdog kept renewing it while the client sat in its critical section), so it lasts until
// the release's ok. Without this, a renewed lease under a long critical section would read as
// stuck while every other client was rightly refused.
std::vector<HoldInterval> HeldOnTheServer(const History& sorted,
                                          const std::vector<HoldInterval>& cut_holds) {
  // A copy without the leases: liveness needs when and by whom, and copying a lease (the
  // acquire's value) per hold would dominate the judge's memory on a long history.
  std::vector<HoldInterval> holds;
  holds.reserve(cut_holds.size());
  for (const HoldInterval& h : cut_holds) {
    HoldInterval x;
    x.process = h.process;
    x.key = h.key;
    x.start = h.start;
    x.end = h.end;
    x.acquire_index = h.acquire_index;
    x.open_at_end = h.open_at_end;
    x.validity_cut = h.validity_cut;
    holds.push_back(std::move(x));
  }
  for (const auto& c : CutHoldReleases(sorted, cut_holds)) {
    if (!c.released_ok()) continue;
    HoldInterval& h = holds[static_cast<size_t>(c.hold - cut_holds.data())];
    h.end = std::max(h.end, c.release->time);
  }
  return holds;
}

}  // namespace

LivenessReport CheckLiveness(const History& sorted, const std::vector<HoldInterval>& cut_holds,
                             const LivenessOptions& options) {
  LivenessReport r;
  const std::vector<HoldInterval> holds = HeldOnTheServer(sorted, cut_holds);
  const std::vector<FaultWindow> windows = ComputeFaultWindows(sorted);
  // Per key: waiting intervals (from a process's first acquire invoke after its last hold
  // until its next acquire ok, or its crash / the end, less the windows that kept it from the
  // lock service) and hold intervals; the longest stretch with at least one waiter and no
  // holder is the longest wait.
  struct Point {
    Nanos t;
    int delta_wait;
    int delta_hold;
  };
  std::map<std::string, std::vector<Point>> pts;
  for (const auto& h : holds) {
    pts[h.key].push_back({h.start, 0, +1});
    pts[h.key].push_back({h.end, 0, -1});
  }
  // What each client waits for, and since when. A client waits for one key at a time: an
  // acquire of another key means it gave up on the one it waited for (the counter workload
  // draws a key per turn). Kept per (client, key), that wait ran on to the end of the
  // history, and a key nobody wanted any more read as stuck (a false alarm of hunt on
  // set-nx-px-lua: an acquire on lock:0 timed out, its client went on with lock:1, and
  // lock:0 sat idle for 3.6 s).
  struct Wait {
    std::string key;
    Nanos since;
  };
  std::map<int64_t, Wait> waiting;
  // A wait [from, to) of p, less the windows that kept p from the lock service.
  auto add_wait = [&](int64_t p, const std::string& key, Nanos from, Nanos to) {
    std::vector<std::pair<Nanos, Nanos>> cut;
    for (const auto& w : windows) {
      if (w.end > from && w.start < to && LockServiceBlocked(w, p)) cut.emplace_back(w.start, w.end);
    }
    for (const auto& [s, e] : options.lab_stalls) {
      if (e > from && s < to) cut.emplace_back(s, e);
    }
    std::sort(cut.begin(), cut.end());
    Nanos at = from;
    for (const auto& [s, e] : cut) {
      if (s > at) {
        pts[key].push_back({at, +1, 0});
        pts[key].push_back({s, -1, 0});
      }
      at = std::max(at, e);
    }
    if (at < to) {
      pts[key].push_back({at, +1, 0});
      pts[key].push_back({to, -1, 0});
    }
  };
  auto stop_wait = [&](int64_t p, Nanos t) {
    auto it = waiting.find(p);
    if (it == waiting.end()) return;
    add_wait(p, it->second.key, it->second.since, t);
    waiting.erase(it);
  };
  for (const Event& e : sorted) {
    if (e.process == kNemesisProcess || e.process == kHarnessProcess) {
      for (int64_t p : CrashedClients(e)) stop_wait(p, e.time);
      continue;
    }
    if (e.process < 0 || e.f != "acquire") continue;
    auto it = waiting.find(e.process);
    const bool waits_for_this = it != waiting.end() && it->second.key == e.key;
    if (e.type == EventType::kInvoke) {
      if (waits_for_this) continue;  // a retry: the wait goes on from its first invoke
      stop_wait(e.process, e.time);
      waiting.emplace(e.process, Wait{e.key, e.time});
    } else if (e.type == EventType::kOk && waits_for_this) {
      stop_wait(e.process, e.time);
    }
  }
  Nanos end = EndOfHistory(sorted);
  while (!waiting.empty()) stop_wait(waiting.begin()->first, end);

  Nanos longest{0};
  for (auto& [key, v] : pts) {
    std::sort(v.begin(), v.end(), [](const Point& a, const Point& b) {
      if (a.t != b.t) return a.t < b.t;
      return (a.delta_wait + a.delta_hold) < (b.delta_wait + b.delta_hold);
    });
    int waiters = 0, holders = 0;
    bool starving = false;
    Nanos since{0};
    for (const Point& p : v) {
      waiters += p.delta_wait;
      holders += p.delta_hold;
      bool now = waiters > 0 && holders == 0;
      if (now && !starving) since = p.t;
      if (!now && starving) longest = std::max(longest, p.t - since);
      starving = now;
    }
    if (starving) longest = std::max(longest, end - since);
  }
  r.longest_wait_ms = ToMillis(longest);
  r.stuck = options.stuck_after.count() > 0 &&
            longest > std::chrono::duration_cast<Nanos>(options.stuck_after);
  return r;
}

}  // namespace locklab::checker
