#include "checker/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "base/exit_code.h"

namespace locklab::checker {
namespace {

bool IsRunEvent(const Event& e) {
  return e.process == kHarnessProcess && e.type == EventType::kInfo && e.f == "run";
}

std::vector<int64_t> Ints(const nlohmann::json& v, const char* field) {
  std::vector<int64_t> out;
  if (!v.is_object()) return out;
  auto it = v.find(field);
  if (it == v.end() || !it->is_array()) return out;
  for (const auto& x : *it) {
    if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  }
  return out;
}

void AddUnique(std::vector<int64_t>* v, const std::vector<int64_t>& more) {
  for (int64_t x : more) {
    if (std::find(v->begin(), v->end(), x) == v->end()) v->push_back(x);
  }
  std::sort(v->begin(), v->end());
}

std::string Plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

nlohmann::ordered_json HoldJson(const HoldInterval& h) {
  nlohmann::ordered_json j;
  j["process"] = h.process;
  j["key"] = h.key;
  j["start_ns"] = h.start.count();
  j["end_ns"] = h.end.count();
  j["open_at_end"] = h.open_at_end;
  j["lease"] = h.lease;
  return j;
}

nlohmann::ordered_json LinJson(const LinearizabilityResult& l) {
  nlohmann::ordered_json j = {{"model", ModelName(l.model)},
                              {"verdict", LinVerdictName(l.verdict)},
                              {"operations", l.operations}};
  if (!l.reason.empty()) j["reason"] = l.reason;
  if (l.counterexample) j["counterexample"] = l.ToJson().value("counterexample", nlohmann::ordered_json());
  return j;
}

// The first overlap episode as a counterexample: its holds, the fault windows active then,
// and the events of its processes around it.
nlohmann::ordered_json FirstViolation(const History& sorted, const OverlapEpisode& ep,
                                      size_t max_events) {
  nlohmann::ordered_json cx;
  cx["key"] = ep.key;
  cx["start_ns"] = ep.start.count();
  cx["end_ns"] = ep.end.count();
  cx["overlap_ms"] = ToMillis(ep.end - ep.start);
  cx["holds"] = nlohmann::ordered_json::array();
  Nanos from = ep.start;
  std::set<int64_t> procs;
  for (const auto& h : ep.holds) {
    cx["holds"].push_back(HoldJson(h));
    from = std::min(from, h.start);
    procs.insert(h.process);
  }
  cx["faults_active"] = nlohmann::ordered_json::array();
  for (const auto& w : ComputeFaultWindows(sorted)) {
    if (w.start <= ep.end && w.end >= from) {
      cx["faults_active"].push_back({{"fault", w.fault},
                                     {"start_ns", w.start.count()},
                                     {"end_ns", w.end.count()},
                                     {"detail", w.detail}});
    }
  }
  cx["events"] = nlohmann::ordered_json::array();
  for (const Event& e : sorted) {
    if (cx["events"].size() >= max_events) break;
    if (e.time < from || e.time > ep.end) continue;
    if (e.process >= 0 && !procs.count(e.process)) continue;
    cx["events"].push_back(nlohmann::ordered_json::parse(ToJsonLine(e)));
  }
  return cx;
}

}  // namespace

RunFacts ReadRunFacts(const History& h) {
  RunFacts f;
  for (const Event& e : h) {
    if (!IsRunEvent(e) || !e.value.is_object()) continue;
    const auto& v = e.value;
    if (e.key == "start") {
      f.declared = true;
      if (v.contains("faults") && v["faults"].is_array()) {
        for (const auto& x : v["faults"]) {
          if (x.is_string() && x.get<std::string>() != "none") f.faults.push_back(x.get<std::string>());
        }
      }
      if (v.contains("stuck_after_ms") && v["stuck_after_ms"].is_number_integer()) {
        f.stuck_after = Millis(v["stuck_after_ms"].get<int64_t>());
      }
      if (v.contains("lin_time_budget_ms") && v["lin_time_budget_ms"].is_number_integer()) {
        f.lin_time_budget = Millis(v["lin_time_budget_ms"].get<int64_t>());
      }
      if (v.contains("workload") && v["workload"].is_object()) {
        const auto& w = v["workload"];
        f.validity_honoured = w.contains("validity") && w["validity"] == "honour";
      }
      f.effects_declared = v.contains("effects") && v["effects"] == true;
    } else if (e.key == "end") {
      f.ended = true;
      f.interrupted = v.value("interrupted", false);
      if (v.contains("client_exits") && v["client_exits"].is_number_integer()) {
        f.client_exits = v["client_exits"].get<int64_t>();
      }
      if (v.contains("error") && v["error"].is_string()) f.error = v["error"].get<std::string>();
      if (v.contains("client_failures") && v["client_failures"].is_array()) {
        for (const auto& x : v["client_failures"]) {
          if (x.is_string()) f.client_failures.push_back(x.get<std::string>());
        }
      }
    }
  }
  return f;
}

nlohmann::ordered_json RunStartValue(const RunFacts& f) {
  nlohmann::ordered_json v;
  v["faults"] = f.faults;
  v["stuck_after_ms"] = f.stuck_after.count();
  v["lin_time_budget_ms"] = f.lin_time_budget.count();
  // Only declared when it changes the judgement: histories of runs that ignore validity
  // stay byte-for-byte what they were.
  if (f.validity_honoured) v["workload"] = {{"validity", "honour"}};
  if (f.effects_declared) v["effects"] = true;
  return v;
}

nlohmann::ordered_json RunEndValue(const RunFacts& f) {
  nlohmann::ordered_json v;
  v["interrupted"] = f.interrupted;
  v["client_exits"] = f.client_exits;
  if (!f.error.empty()) v["error"] = f.error;
  if (!f.client_failures.empty()) v["client_failures"] = f.client_failures;
  return v;
}

std::string FaultCoverage::Summary() const {
  std::string s = fault + ": ";
  if (armed > 0) s += "armed " + std::to_string(armed) + ", ";
  s += "opened " + std::to_string(windows_opened);
  if (windows_opened > 0) {
    s += " (" + std::to_string(windows_met) + " while the workload did lock work";
    if (windows_cut > 0) s += ", " + std::to_string(windows_cut) + " cut by the run's end";
    s += ")";
  }
  if (effects_declared && windows_opened > 0) {
    if (effects_seen > 0) s += ", effect seen " + std::to_string(effects_seen);
    else s += ", effect not seen";
    if (effects_seen > 0 && effects_not_seen > 0) s += " (not seen " + std::to_string(effects_not_seen) + ")";
    s += ": " + (evidence.empty() ? std::string("no evidence recorded") : evidence);
  }
  return s;
}

std::vector<FaultCoverage> ComputeFaultCoverage(const History& sorted, const RunFacts& facts,
                                                const std::vector<HoldInterval>& holds) {
  std::vector<FaultCoverage> out;
  auto entry = [&](const std::string& id) -> FaultCoverage& {
    for (auto& c : out) {
      if (c.fault == id) return c;
    }
    out.push_back(FaultCoverage());
    out.back().fault = id;
    return out.back();
  };
  for (const auto& id : facts.faults) entry(id);
  // Each fault's windows (by number) whose effect was seen; the first lines seen / not seen.
  std::map<std::string, std::set<int64_t>> proven;
  std::map<std::string, std::string> first_not_seen;
  // Times of client lock work: invocations and completions of lock operations.
  std::vector<Nanos> work;
  for (const Event& e : sorted) {
    if (e.process >= 0 && IsLockOp(e.f)) work.push_back(e.time);
  }
  for (const Event& e : sorted) {
    if (e.process != kNemesisProcess) continue;
    if (e.f == "plan") {
      entry(e.key).planned = true;
    } else if (e.f == "arm") {
      ++entry(e.key).armed;
    } else if (e.f == "start") {
      FaultCoverage& c = entry(e.key);
      ++c.windows_opened;
      AddUnique(&c.clients_hit, Ints(e.value, "targets"));
      AddUnique(&c.nodes_hit, Ints(e.value, "nodes"));
    } else if (e.f == "stop") {
      FaultCoverage& c = entry(e.key);
      bool cut = e.value.is_object() && e.value.value("healed", std::string()) == "teardown";
      ++(cut ? c.windows_cut : c.windows_closed);
    } else if (e.f == "effect" && e.value.is_object()) {
      FaultCoverage& c = entry(e.key);
      const bool seen = e.value.value("seen", false);
      std::string line = e.value.contains("evidence") && e.value["evidence"].is_string()
                             ? e.value["evidence"].get<std::string>()
                             : std::string();
      ++(seen ? c.effects_seen : c.effects_not_seen);
      if (seen && c.effects_seen == 1) c.evidence = line;
      if (!seen && first_not_seen[e.key].empty()) first_not_seen[e.key] = line;
      if (seen && e.value.contains("window") && e.value["window"].is_number_integer()) {
        proven[e.key].insert(e.value["window"].get<int64_t>());
      }
    }
  }
  for (auto& c : out) {
    c.effects_declared = facts.effects_declared;
    if (c.evidence.empty()) c.evidence = first_not_seen[c.fault];
  }
  // A window met the workload when a client invoked or completed a lock operation while it
  // was open, or a hold overlapped it: a window over an idle or finished run bit nothing.
  // A window proves its fault when it also showed its effect (its "effect" event, matched
  // by the window's number among the fault's windows).
  std::map<std::string, int64_t> window_number;
  for (const FaultWindow& w : ComputeFaultWindows(sorted)) {
    const int64_t number = ++window_number[w.fault];
    bool met = std::lower_bound(work.begin(), work.end(), w.start) !=
                   std::upper_bound(work.begin(), work.end(), w.end);
    for (size_t i = 0; !met && i < holds.size(); ++i) {
      met = holds[i].start < w.end && holds[i].end > w.start;
    }
    if (met) ++entry(w.fault).windows_met;
    if (met && proven[w.fault].count(number) > 0) ++entry(w.fault).windows_proven;
  }
  return out;
}

History WithCrashReleases(const History& sorted) {
  History out = sorted;
  std::map<std::pair<int64_t, std::string>, nlohmann::json> held;  // (process, key) -> lease
  std::vector<Event> extra;
  int64_t next_index = 0;
  for (const auto& e : sorted) next_index = std::max(next_index, e.index + 1);
  for (const auto& e : sorted) {
    if (e.process >= 0 && e.f == "acquire" && e.type == EventType::kOk) {
      held[{e.process, e.key}] = e.value;
    } else if (e.process >= 0 && e.f == "release" && e.type == EventType::kInvoke) {
      held.erase({e.process, e.key});
    } else {
      for (int64_t p : CrashedClients(e)) {
        for (auto it = held.begin(); it != held.end();) {
          if (it->first.first != p) {
            ++it;
            continue;
          }
          for (auto type : {EventType::kInvoke, EventType::kOk}) {
            Event r;
            r.index = next_index++;
            r.time = e.time;
            r.process = p;
            r.type = type;
            r.f = "release";
            r.key = it->first.second;
            if (type == EventType::kInvoke && it->second.is_object() && it->second.contains("token")) {
              r.value = {{"token", it->second["token"]}};
            }
            extra.push_back(r);
          }
          it = held.erase(it);
        }
      }
    }
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return SortedByTime(std::move(out));
}

bool Judgement::linearizable_known() const {
  return lock_lin.verdict != LinVerdict::kUnknown && resource_lin.verdict != LinVerdict::kUnknown;
}

namespace {

// The history in time order: itself when the lab wrote it so, else a sorted copy in *copy
// (each copy of a history is about its file's size again: docs/checker.md, memory).
const History& InTimeOrder(const History& h, History* copy) {
  auto earlier = [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.index < b.index;
  };
  if (std::is_sorted(h.begin(), h.end(), earlier)) return h;
  *copy = SortedByTime(h);
  return *copy;
}

// Phase 1: the clients' operations and acquires, counted.
void CountOperations(const History& sorted, Judgement* jp) {
  Judgement& j = *jp;
  for (const Event& e : sorted) {
    if (e.process < 0) continue;
    if (e.type == EventType::kInvoke) ++j.ops;
    if (e.f != "acquire") continue;
    if (e.type == EventType::kInvoke) ++j.acquires;
    else if (e.type == EventType::kOk) ++j.acquires_ok;
    else if (e.type == EventType::kFail) ++j.acquires_fail;
    if (e.type == EventType::kOk && e.value.is_object() && e.value.contains("validity_ms") &&
        e.value["validity_ms"].is_number() && e.value["validity_ms"].get<double>() <= 0) {
      ++j.expired_grants;
    }
  }
  j.acquires_unknown = j.acquires - j.acquires_ok - j.acquires_fail;
}

// Phase 2: hold intervals and their overlaps; the first overlap's holds get their leases.
void JudgeMutualExclusion(const History& sorted, Judgement* jp) {
  Judgement& j = *jp;
  HoldOptions ho;
  ho.validity_honoured = j.facts.validity_honoured;
  ho.keep_lease = false;  // only the first overlap's holds show theirs: looked up below
  j.holds = ComputeHoldIntervals(sorted, ho);
  j.mutual_exclusion = CheckMutualExclusion(j.holds);
  if (!j.mutual_exclusion.episode_list.empty()) {
    std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<HoldInterval*>> want;
    for (HoldInterval& h : j.mutual_exclusion.episode_list.front().holds) {
      want[{h.acquire_index, h.process, h.key}].push_back(&h);
    }
    for (const Event& e : sorted) {
      if (e.type != EventType::kOk || e.f != "acquire") continue;
      auto it = want.find({e.index, e.process, e.key});
      if (it == want.end()) continue;
      for (HoldInterval* h : it->second) h->lease = e.value;
    }
  }
}

// Phase 3: the guarded resource, the lab's own ground, liveness and each fault's coverage.
void JudgeResourceAndLiveness(const History& sorted, Judgement* jp) {
  Judgement& j = *jp;
  j.resource = CheckResource(sorted);
  j.infra = ReadInfraEvents(sorted);
  LivenessOptions lo;
  lo.stuck_after = j.facts.stuck_after;
  for (const InfraEvent& i : j.infra) {
    if (!i.stall()) continue;
    lo.lab_stalls.emplace_back(i.stalled_from, i.time);
    j.longest_lab_stall_ms = std::max(j.longest_lab_stall_ms, ToMillis(i.time - i.stalled_from));
  }
  j.liveness = CheckLiveness(sorted, j.holds, lo);
  j.coverage = ComputeFaultCoverage(sorted, j.facts, j.holds);

}

// Phase 4: linearizability of the lock (owner-aware; fenced when leases carry fences) and of
// the resource (a register per counter key).
void JudgeLinearizability(const History& sorted, const JudgeOptions& o, Judgement* jp) {
  Judgement& j = *jp;
  bool fenced = false;
  for (const Event& e : sorted) {
    if (e.f == "acquire" && e.type == EventType::kOk && e.value.is_object() && e.value.contains("fence")) {
      fenced = true;
      break;
    }
  }
  LinearizabilityOptions lin;
  lin.time_budget = o.lin_time_budget.value_or(j.facts.lin_time_budget);
  lin.memory_budget_bytes = o.memory_budget_bytes;
  // With validity honoured, a lease the client stopped using ends (for the lock's model too)
  // where its hold was cut (WithValidityReleases).
  Status lock_input, resource_input;
  // Without a crash and without a cut hold there is nothing to add: no copy.
  bool crashed = false;
  for (const Event& e : sorted) {
    if (!CrashedClients(e).empty()) {
      crashed = true;
      break;
    }
  }
  History with_releases;
  if (crashed) {
    with_releases = WithValidityReleases(WithCrashReleases(sorted), j.holds);
  } else if (HasValidityReleases(sorted, j.holds)) {
    with_releases = WithValidityReleases(sorted, j.holds);
  }
  j.lock_lin = CheckLinearizability(crashed || !with_releases.empty() ? with_releases : sorted,
                                    fenced ? Model::kFencedMutex : Model::kOwnerMutex, lin,
                                    &lock_input);
  with_releases = History();
  j.resource_lin = CheckLinearizability(sorted, Model::kRegister, lin, &resource_input);
  j.bad_input = lock_input.ok() ? resource_input : lock_input;

}

// Times are said from the workload's start (the first event of a client or the nemesis),
// not from the harness's `run` event: that one comes before the servers start, and a
// ZooKeeper ensemble or a JVM driver took 7 to 11 s of it, so "@12.4s" read as late.
Nanos WorkloadOrigin(const History& sorted) {
  Nanos origin = sorted.empty() ? Nanos(0) : sorted.front().time;
  for (const Event& e : sorted) {
    if (e.process != kHarnessProcess) {
      origin = e.time;
      break;
    }
  }
  return origin;
}

// Why the run cannot vouch for "safe", first reason wins; "" when it can.
std::string WhyUnknown(const Judgement& j, const InfraEvent* lab_failure, int64_t lab_failures, Nanos origin) {
  const auto& res = j.resource;
  std::string unknown_why;
  const RunFacts& f = j.facts;
  if (lab_failure) {
    char at[32];
    snprintf(at, sizeof(at), "%.1f", ToMillis(lab_failure->time - origin) / 1000.0);
    unknown_why = lab_failure->Describe() + " at " + at + " s, not by the schedule";
    if (lab_failures > 1) unknown_why += " (and " + Plural(lab_failures - 1, "more infra event", "more infra events") + ")";
  } else if (f.interrupted) {
    unknown_why = "interrupted by a signal; the history prefix was checked";
  } else if (!f.error.empty()) {
    unknown_why = "the run failed: " + f.error;
  } else if (!f.client_failures.empty()) {
    unknown_why = f.client_failures.front() +
                  (f.client_failures.size() > 1
                       ? " (and " + Plural(int64_t(f.client_failures.size()) - 1, "more client", "more clients") + ")"
                       : "");
  } else if (f.client_exits > 0) {
    unknown_why = Plural(f.client_exits, "client", "clients") + " exited during the run (see clients/N.log)";
  } else if (f.declared && !f.ended) {
    unknown_why = "the history ends before the run's end event (the run was killed?)";
  } else if (res.final_read_failed) {
    unknown_why = "the final read of " + res.final_read_failed_key +
                  " got no answer: lost updates are unknown";
  } else if (j.acquires_ok == 0) {
    unknown_why = "the lock granted no acquire (" + Plural(j.acquires, "acquire", "acquires") + ": " +
                  std::to_string(j.acquires_fail) + " refused, " + std::to_string(j.acquires_unknown) +
                  " unknown): nothing to judge";
  } else if (!j.linearizable_known()) {
    unknown_why = j.lock_lin.verdict == LinVerdict::kUnknown ? j.lock_lin.reason : j.resource_lin.reason;
    unknown_why = "the linearizability search did not finish: " + unknown_why;
  } else if (!f.faults.empty()) {
    // Safe vouches for every scheduled fault: one that never bit (a window never opened, or
    // opened over idle lock work, or its effect was never seen) leaves its part of the
    // schedule untested, whatever the others did.
    bool any_bit = false;
    std::string all, dormant;
    for (const auto& c : j.coverage) {
      if (std::find(f.faults.begin(), f.faults.end(), c.fault) == f.faults.end()) continue;
      any_bit = any_bit || c.bit();
      all += (all.empty() ? "" : "; ") + c.Summary();
      if (!c.bit()) dormant += (dormant.empty() ? "" : "; ") + c.Summary();
    }
    if (!any_bit) unknown_why = "no fault bit: " + all;
    else if (!dormant.empty()) unknown_why = "not every fault bit: " + dormant;
  }
  return unknown_why;
}

}  // namespace

Judgement JudgeHistory(const History& h, const JudgeOptions& o) {
  Judgement j;
  History sorted_copy;
  const History& sorted = InTimeOrder(h, &sorted_copy);
  j.facts = ReadRunFacts(sorted);
  CountOperations(sorted, &j);
  JudgeMutualExclusion(sorted, &j);
  JudgeResourceAndLiveness(sorted, &j);
  JudgeLinearizability(sorted, o, &j);

  const auto& me = j.mutual_exclusion;
  const auto& res = j.resource;
  const Nanos origin = WorkloadOrigin(sorted);
  if (!me.episode_list.empty()) {
    j.first_violation = FirstViolation(sorted, me.episode_list.front(), o.counterexample_events);
    j.first_violation_ms = ToMillis(me.episode_list.front().start - origin);
  }
  // The first death or stop of the lab's own ground that the schedule did not cause.
  const InfraEvent* lab_failure = nullptr;
  int64_t lab_failures = 0;
  for (const InfraEvent& i : j.infra) {
    if (i.stall()) continue;
    if (!lab_failure) lab_failure = &i;
    ++lab_failures;
  }
  // An overlap counts only when it began before the lab's ground gave way.
  const bool overlap_seen = !me.episode_list.empty() &&
                            (!lab_failure || me.episode_list.front().start < lab_failure->time);
  bool lock_invalid = j.lock_lin.verdict == LinVerdict::kInvalid;
  bool resource_invalid = j.resource_lin.verdict == LinVerdict::kInvalid;
  bool resource_bad = res.lost_updates > 0 || res.stale_writes_accepted > 0 || resource_invalid;

  const std::string unknown_why = WhyUnknown(j, lab_failure, lab_failures, origin);

  if (overlap_seen) {
    j.verdict = Verdict::kViolated;
    j.reason = Plural(me.overlapping_pairs, "overlapping hold pair", "overlapping hold pairs") + " in " +
               Plural(me.episodes, "episode", "episodes") + " (first on " + me.episode_list.front().key + ")";
  } else if (lab_failure) {
    // A broken resource or history after the lab's own ground gave way proves nothing.
    j.verdict = Verdict::kUnknown;
    j.reason = unknown_why;
  } else if (res.lost_updates > 0) {
    j.verdict = Verdict::kViolated;
    j.reason = Plural(res.lost_updates, "lost update", "lost updates");
  } else if (res.stale_writes_accepted > 0) {
    j.verdict = Verdict::kViolated;
    j.reason = Plural(res.stale_writes_accepted, "write", "writes") + " accepted with an older fencing token";
  } else if (lock_invalid || resource_invalid) {
    j.verdict = Verdict::kViolated;
    j.reason = std::string(lock_invalid ? ModelName(j.lock_lin.model) : "register") + " history is not linearizable";
  } else if (!unknown_why.empty()) {
    j.verdict = Verdict::kUnknown;
    j.reason = unknown_why;
  } else {
    j.verdict = Verdict::kSafe;
  }
  if (resource_bad && !lab_failure) {
    j.resource_verdict = Verdict::kViolated;
  } else {
    j.resource_verdict = unknown_why.empty() ? Verdict::kSafe : Verdict::kUnknown;
  }
  return j;
}

nlohmann::ordered_json Judgement::ToJson() const {
  nlohmann::ordered_json r;
  const ResultName& result = NameOf(ResultOf(verdict, liveness.stuck));
  r["result"] = result.word;
  r["result_letter"] = result.letter;
  r["verdict"] = VerdictName(verdict);
  if (!reason.empty()) r["verdict_reason"] = reason;
  r["resource_verdict"] = VerdictName(resource_verdict);
  r["ops"] = ops;
  r["acquires"] = {{"invoked", acquires}, {"ok", acquires_ok}, {"refused", acquires_fail},
                   {"unknown", acquires_unknown}, {"expired_grants", expired_grants}};
  const auto& me = mutual_exclusion;
  r["mutual_exclusion"] = {{"holds", me.holds},
                           {"overlapping_pairs", me.overlapping_pairs},
                           {"episodes", me.episodes},
                           {"overlap_ms", me.overlap_ms}};
  r["resource"] = {{"acknowledged_writes", resource.acknowledged_writes},
                   {"lost_updates", resource.final_read_failed ? nlohmann::ordered_json()
                                                                : nlohmann::ordered_json(resource.lost_updates)},
                   {"stale_writes_accepted", resource.stale_writes_accepted},
                   {"stale_writes_rejected", resource.stale_writes_rejected},
                   {"final_value_known", resource.final_value_known}};
  r["liveness"] = {{"stuck", liveness.stuck}, {"longest_wait_ms", liveness.longest_wait_ms},
                   {"stuck_after_ms", facts.stuck_after.count()}};
  if (lock_lin.verdict == LinVerdict::kInvalid || resource_lin.verdict == LinVerdict::kInvalid) {
    r["linearizable"] = false;
  } else if (!linearizable_known()) {
    r["linearizable"] = nullptr;
  } else {
    r["linearizable"] = true;
  }
  r["linearizability"] = {{"lock", LinJson(lock_lin)}, {"resource", LinJson(resource_lin)}};
  // Why the lock history (else the resource's) cannot be linearized, as the report draws it.
  for (const LinearizabilityResult* l : {&lock_lin, &resource_lin}) {
    if (l->verdict == LinVerdict::kInvalid && l->counterexample) {
      r["linearizability"]["unplaceable"] = l->counterexample->UnplaceableJson();
      break;
    }
  }
  nlohmann::ordered_json cov = nlohmann::ordered_json::array();
  for (const auto& c : coverage) {
    cov.push_back({{"fault", c.fault}, {"planned", c.planned}, {"armed", c.armed},
                   {"windows_opened", c.windows_opened}, {"windows_closed", c.windows_closed},
                   {"windows_cut", c.windows_cut}, {"windows_met", c.windows_met},
                   {"clients_hit", c.clients_hit}, {"nodes_hit", c.nodes_hit}, {"bit", c.bit()},
                   {"summary", c.Summary()}});
    if (c.effects_declared) {
      auto& x = cov.back();
      x["effects_seen"] = c.effects_seen;
      x["effects_not_seen"] = c.effects_not_seen;
      x["windows_proven"] = c.windows_proven;
      x["evidence"] = c.evidence;
    }
  }
  r["coverage"] = cov;
  nlohmann::ordered_json infra_json = nlohmann::ordered_json::array();
  for (const InfraEvent& i : infra) {
    nlohmann::ordered_json e = {{"subject", i.subject}, {"what", i.what}, {"how", i.how},
                                {"time_ns", i.time.count()}};
    if (i.pid > 0) e["pid"] = i.pid;
    if (!i.server.empty()) e["server"] = i.server;
    if (i.stall()) e["stalled_ms"] = ToMillis(i.time - i.stalled_from);
    if (!i.log_line.empty()) e["log_line"] = i.log_line;
    e["summary"] = i.Describe();
    infra_json.push_back(std::move(e));
  }
  r["infra"] = infra_json;
  r["longest_lab_stall_ms"] = longest_lab_stall_ms;
  if (!first_violation.is_null()) {
    r["first_violation"] = first_violation;
    r["first_violation_ms"] = first_violation_ms;
  }
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  checks.push_back({{"name", "mutual_exclusion"},
                    {"ok", me.overlapping_pairs == 0},
                    {"message", std::to_string(me.overlapping_pairs) + " overlapping hold pairs in " +
                                    std::to_string(me.episodes) + " episodes"}});
  checks.push_back({{"name", "lost_updates"},
                    {"ok", resource.lost_updates == 0 && !resource.final_read_failed},
                    {"message", resource.final_read_failed
                                    ? "unknown: the final read of " + resource.final_read_failed_key + " got no answer"
                                    : std::to_string(resource.lost_updates) + " lost updates"}});
  checks.push_back({{"name", "stale_writes"},
                    {"ok", resource.stale_writes_accepted == 0},
                    {"message", std::to_string(resource.stale_writes_accepted) +
                                    " writes accepted with an older fencing token"}});
  checks.push_back({{"name", "linearizable_lock"},
                    {"ok", lock_lin.verdict == LinVerdict::kValid},
                    {"message", std::string(ModelName(lock_lin.model)) + ": " + LinVerdictName(lock_lin.verdict)}});
  checks.push_back({{"name", "linearizable_resource"},
                    {"ok", resource_lin.verdict == LinVerdict::kValid},
                    {"message", std::string("register: ") + LinVerdictName(resource_lin.verdict)}});
  checks.push_back({{"name", "liveness"},
                    {"ok", !liveness.stuck},
                    {"message", "longest wait with no holder " + std::to_string(std::llround(liveness.longest_wait_ms)) + " ms"}});
  checks.push_back({{"name", "evidence"},
                    {"ok", verdict != Verdict::kUnknown},
                    {"message", verdict == Verdict::kUnknown ? reason : "the lock worked and every fault's coverage was seen"}});
  r["checks"] = checks;
  nlohmann::ordered_json hj = nlohmann::ordered_json::array();
  for (const auto& h : holds) {
    hj.push_back({{"process", h.process}, {"key", h.key}, {"start_ns", h.start.count()},
                  {"end_ns", h.end.count()}, {"open_at_end", h.open_at_end},
                  {"acquire_index", h.acquire_index}});
  }
  r["holds"] = hj;
  nlohmann::ordered_json ej = nlohmann::ordered_json::array();
  for (const auto& ep : me.episode_list) {
    std::set<int64_t> procs;
    for (const auto& h : ep.holds) procs.insert(h.process);
    ej.push_back({{"key", ep.key}, {"start_ns", ep.start.count()}, {"end_ns", ep.end.count()},
                  {"processes", procs}});
  }
  r["episodes"] = ej;
  return r;
}

namespace {
// A verdict's word is its trial result's (checker/trial_result.h, the one table).
constexpr TrialResult kVerdictResults[] = {TrialResult::kSafe, TrialResult::kViolated, TrialResult::kUnknown};
static_assert(std::size(kVerdictResults) == static_cast<size_t>(Verdict::kUnknown) + 1,
              "every verdict has its result");
}  // namespace

std::string_view VerdictName(Verdict verdict) {
  return NameOf(kVerdictResults[static_cast<size_t>(verdict)]).word;
}

TrialResult ResultOf(Verdict verdict, bool liveness_stuck) {
  if (verdict == Verdict::kViolated) return TrialResult::kViolated;
  if (verdict == Verdict::kSafe) return liveness_stuck ? TrialResult::kStuck : TrialResult::kSafe;
  return TrialResult::kUnknown;
}

std::optional<Verdict> ParseVerdict(std::string_view word) {
  for (size_t i = 0; i < std::size(kVerdictResults); ++i) {
    if (NameOf(kVerdictResults[i]).word == word) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

std::string VerdictWordList() {
  std::string out;
  const size_t n = std::size(kVerdictResults);
  for (size_t i = 0; i < n; ++i) {
    out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(NameOf(kVerdictResults[i]).word);
  }
  return out;
}

int VerdictExitCode(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSafe: return kExitOk;
    case Verdict::kViolated: return kExitViolated;
    case Verdict::kUnknown: return kExitUnknown;
  }
  return kExitUnknown;
}

int VerdictExitCode(const std::string& verdict) {
  return VerdictExitCode(ParseVerdict(verdict).value_or(Verdict::kUnknown));
}

}  // namespace locklab::checker
