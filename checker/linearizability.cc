#include "checker/linearizability.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <map>
#include <iomanip>
#include <sstream>
#include <utility>

#include "checker/lin_builder.h"
#include "checker/lin_model.h"
#include "checker/lin_sweep.h"

namespace locklab::checker {
namespace {

using lin::Clock;
using lin::IsMutexModel;
using lin::JsonText;
using lin::Op;
using lin::Partition;
using lin::State;
using lin::SweepOutcome;

LinOperation Display(const Op& op) {
  LinOperation d;
  const Event& inv = *op.inv;
  d.process = inv.process;
  d.f = inv.f;
  d.key = inv.key;
  d.input = inv.value;
  d.output = op.unknown || !op.comp ? nlohmann::json() : op.comp->value;
  d.outcome = op.unknown ? "unknown" : (op.comp->type == EventType::kFail ? "fail" : "ok");
  d.invoke_index = inv.index;
  d.invoke_line = inv.line;
  d.invoke_ns = inv.time.count();
  if (op.comp) {
    d.complete_index = op.comp->index;
    d.complete_line = op.comp->line;
    if (!op.unknown) d.complete_ns = op.comp->time.count();
  }
  return d;
}

// ---- Why an operation cannot be placed (LinCounterexample::conflicts, sentence) -----------

std::string Seconds(Nanos t, Nanos start) {
  char buf[32];
  double s = std::chrono::duration<double>(t - start).count();
  if (s >= 0.01 || s <= -0.01 || s == 0) {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  } else {  // a generated or very fast history: 2.23 s would read as 0.00 s
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  }
  return buf;
}

// Where an op was invoked, for a sentence: "at 2.23 s" from the history's first event, or,
// in a history without a clock (EDN, Porcupine logs: times are positions), "at line 17".
struct Clockface {
  bool clocked = true;
  Nanos start{0};
  // An op with a known outcome is placed by its completion (it took effect by then), an
  // unknown one by its invocation.
  static Nanos When(const Op& op) { return op.unknown ? op.call_time() : op.ret_time(); }
  std::string At(const Op& op) const {
    if (clocked) return "at " + Seconds(When(op), start);
    const Event* e = op.unknown || !op.comp ? op.inv : op.comp;
    return "at line " + std::to_string(e->line);
  }
};

std::string Client(const Op& op) {
  int64_t p = op.inv->process;
  return p >= 0 ? "client " + std::to_string(p) : "the " + ProcessName(p);
}

// Before the failure: completed before its completion (an unknown op: invoked before it).
bool Before(const Op& op, const Op& failed) {
  return (op.unknown ? op.call_seq : op.ret_seq) < failed.ret_seq;
}
int64_t Seq(const Op& op) { return op.unknown ? op.call_seq : op.ret_seq; }

// The latest op before `failed` (not it) that `fits`; -1 when none.
template <typename Fits>
int32_t LatestBefore(const Partition& part, int32_t failed, Fits&& fits) {
  int32_t best = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(part.ops.size()); ++i) {
    const Op& op = part.ops[i];
    if (i == failed || !Before(op, part.ops[failed]) || !fits(op)) continue;
    if (best < 0 || Seq(op) > Seq(part.ops[best])) best = i;
  }
  return best;
}

// The op that put the model into state `s` as the failure saw it (its effect is what makes
// the failed op impossible there); -1 for the initial state.
int32_t ProducerOf(Model m, const Partition& part, int32_t failed, const State& s) {
  if (IsMutexModel(m)) {
    if (s.a != 0) {
      return LatestBefore(part, failed, [&](const Op& op) {
        return op.kind == lin::Kind::kAcquire && (m == Model::kMutex || op.x == s.a);
      });
    }
    return LatestBefore(part, failed, [](const Op& op) {
      return op.kind == lin::Kind::kRelease || op.kind == lin::Kind::kNotHeld;
    });
  }
  if (s.a == 0) return -1;
  return LatestBefore(part, failed, [&](const Op& op) {
    return (op.kind == lin::Kind::kWrite && op.x == s.a) ||
           (op.kind == lin::Kind::kCasOk && op.y == s.a);
  });
}

// When the lease of `token` (its acquire's validity_ms, moved by each ok renew's) had
// ended before `at`: how long before. nullopt when no validity is known, or not ended.
std::optional<Nanos> PastLease(const Partition& part, int32_t failed, int64_t token, Nanos at) {
  std::optional<Nanos> end;
  for (int32_t i = 0; i < static_cast<int32_t>(part.ops.size()); ++i) {
    const Op& op = part.ops[i];
    if (i == failed || op.unknown || op.x != token || !op.comp || !Before(op, part.ops[failed])) continue;
    if (op.kind != lin::Kind::kAcquire && op.kind != lin::Kind::kRenew) continue;
    const nlohmann::json& v = op.comp->value;
    if (!v.is_object()) continue;
    auto it = v.find("validity_ms");
    if (it == v.end() || !it->is_number()) continue;
    Nanos until = op.ret_time() + std::chrono::duration_cast<Nanos>(
                                    std::chrono::duration<double, std::milli>(it->get<double>()));
    if (!end || until > *end) end = until;
  }
  if (!end || *end >= at) return std::nullopt;
  return at - *end;
}

std::string Sentence(Model m, const Partition& part, int32_t failed, const State& s,
                     int32_t producer, const Clockface& clock) {
  const Op& f = part.ops[failed];
  const std::string who = Client(f);
  const std::string at = clock.At(f);
  const std::string outcome = f.unknown ? "may have taken effect" : "succeeded";
  const Op* p = producer >= 0 ? &part.ops[producer] : nullptr;
  auto by = [&](const Op& op, const char* what) {
    return Client(op) + "'s " + what + " " + clock.At(op);
  };
  if (IsMutexModel(m)) {
    switch (f.kind) {
      case lin::Kind::kAcquire:
        if (m == Model::kFencedMutex && s.a == 0 && f.y != lin::kNoFence && s.b != lin::kNoFence &&
            f.y <= s.b) {
          int32_t g = LatestBefore(part, failed, [&](const Op& op) {
            return op.kind == lin::Kind::kAcquire && op.y == s.b;
          });
          return who + "'s acquire " + at + " got fence " + std::to_string(f.y) +
                 ", not above fence " + std::to_string(s.b) +
                 (g >= 0 ? " granted by " + by(part.ops[g], "acquire") : std::string(" granted before"));
        }
        if (s.a != 0) {
          std::string holder = "the lock was held";
          if (p) {
            holder = Client(*p) + " held the lock (granted " + clock.At(*p) + ", not released";
            if (clock.clocked && m != Model::kMutex) {
              if (auto past = PastLease(part, failed, p->x, Clockface::When(f))) {
                holder += "; its lease had expired " + Seconds(*past + clock.start, clock.start) +
                          " before";
              }
            }
            holder += ")";
          }
          return who + "'s acquire " + outcome + " " + at + " while " + holder;
        }
        break;
      case lin::Kind::kRelease:
      case lin::Kind::kRenew: {
        const char* what = f.kind == lin::Kind::kRelease ? "release" : "renew";
        std::string lease;
        if (clock.clocked && m != Model::kMutex) {
          if (auto past = PastLease(part, failed, f.x, Clockface::When(f))) {
            lease = " " + Seconds(*past + clock.start, clock.start) + " after its lease expired";
          }
        }
        if (s.a != 0 && p) {
          return who + "'s " + what + " " + at + " " + outcome + lease +
                 (f.kind == lin::Kind::kRelease ? " and deleted " : " of ") + Client(*p) +
                 "'s key (" + Client(*p) + " acquired it " + clock.At(*p) + ")";
        }
        if (s.a == 0) {
          return who + "'s " + what + " " + at + " " + outcome + lease +
                 " although nobody held the lock" +
                 (p ? " (" + by(*p, "release") + " had freed it)" : std::string());
        }
        break;
      }
      default: break;
    }
  } else {
    std::string held = s.a == 0 ? "nil" : part.values.Name(s.a);
    std::string then = p ? " (" + by(*p, p->kind == lin::Kind::kWrite ? "write" : "cas") + ")" : "";
    if (f.kind == lin::Kind::kRead) {
      return who + "'s read " + at + " returned " + part.values.Name(f.x) +
             ", but the register held " + held + " then" + then;
    }
    if (f.kind == lin::Kind::kCasOk) {
      return who + "'s cas from " + part.values.Name(f.x) + " " + at + " " + outcome +
             ", but the register held " + held + " then" + then;
    }
  }
  return who + "'s " + f.inv->f + " " + at + " " + outcome +
         ", but no order of the operations before it allows that (" +
         lin::StateText(m, s, part.values) + ")";
}

LinCounterexample MakeCounterexample(Model model, const Partition& part,
                                     const SweepOutcome& so, const Clockface& clock) {
  LinCounterexample cx;
  cx.key = part.key;
  cx.failed = Display(part.ops[so.failed_op]);
  cx.prefix_events = so.prefix_events;
  for (int32_t o : so.open_ops) cx.concurrent.push_back(Display(part.ops[o]));
  for (const State& s : so.dead_states) {
    cx.states_tried.push_back(lin::StateText(model, s, part.values));
  }
  for (int32_t o : so.tail) {
    if (o >= 0) cx.longest_linearization_tail.push_back(Display(part.ops[o]));
  }
  const Op& failed = part.ops[so.failed_op];
  for (const Op& op : part.ops) cx.prefix_ops += op.call_seq < failed.ret_seq;
  std::vector<int32_t> producers;
  for (const State& s : so.dead_states) {
    int32_t p = ProducerOf(model, part, so.failed_op, s);
    if (cx.sentence.empty() && !so.dead_states.empty()) {
      cx.sentence = Sentence(model, part, so.failed_op, s, p, clock);
    }
    if (p >= 0 && std::find(producers.begin(), producers.end(), p) == producers.end()) {
      producers.push_back(p);
    }
  }
  // The failed op's own token's acquire, when another one holds: its hold had ended.
  if (IsMutexModel(model) && model != Model::kMutex && failed.kind != lin::Kind::kAcquire) {
    int32_t own = LatestBefore(part, so.failed_op, [&](const Op& op) {
      return op.kind == lin::Kind::kAcquire && op.x == failed.x;
    });
    if (own >= 0 && std::find(producers.begin(), producers.end(), own) == producers.end()) {
      producers.push_back(own);
    }
  }
  std::sort(producers.begin(), producers.end(),
            [&](int32_t a, int32_t b) { return Seq(part.ops[a]) < Seq(part.ops[b]); });
  for (int32_t p : producers) cx.conflicts.push_back(Display(part.ops[p]));
  if (cx.sentence.empty()) cx.sentence = Sentence(model, part, so.failed_op, State{}, -1, clock);
  return cx;
}

}  // namespace

bool ParseModel(const std::string& name, Model* out) {
  for (Model m : kAllModels) {
    if (name == ModelName(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

const char* ModelName(Model m) {
  switch (m) {
    case Model::kMutex: return "mutex";
    case Model::kOwnerMutex: return "owner-mutex";
    case Model::kFencedMutex: return "fenced-mutex";
    case Model::kRegister: return "register";
    case Model::kCasRegister: return "cas-register";
  }
  return "?";
}

const char* ModelDescription(Model m) {
  switch (m) {
    case Model::kMutex: return "a lock: acquire needs it free, anyone's release frees it";
    case Model::kOwnerMutex: return "a lock whose release and renew only the holder's token may do";
    case Model::kFencedMutex: return "owner-mutex whose acquire fences strictly grow";
    case Model::kRegister: return "a read/write register starting at nil";
    case Model::kCasRegister: return "a read/write/compare-and-set register starting at nil";
  }
  return "?";
}

const char* LinVerdictName(LinVerdict v) {
  switch (v) {
    case LinVerdict::kValid: return "valid";
    case LinVerdict::kInvalid: return "invalid";
    case LinVerdict::kUnknown: return "unknown";
  }
  return "?";
}

bool ModelHasFunction(Model m, const std::string& f) {
  switch (m) {
    case Model::kMutex:
    case Model::kOwnerMutex:
    case Model::kFencedMutex: return f == "acquire" || f == "release" || f == "renew";
    case Model::kRegister: return f == "read" || f == "write";
    case Model::kCasRegister: return f == "read" || f == "write" || f == "cas";
  }
  return false;
}

std::string VacuousReason(const LinearizabilityResult& r) {
  if (r.invocations == 0 || r.operations != 0) return "";
  return "vacuously: all " + std::to_string(r.invocations) + " " + ModelName(r.model) +
         " operation" + (r.invocations == 1 ? "" : "s") + " failed (none took effect)";
}

std::string LinOperation::ToString() const {
  std::ostringstream o;
  o << "p" << ProcessName(process) << " " << f;
  if (!input.is_null()) o << " " << JsonText(input);
  o << " -> " << outcome;
  if (outcome != "unknown" && !output.is_null() && f != "write") o << " " << JsonText(output);
  o << " (line " << invoke_line;
  if (complete_line) o << "-" << complete_line;
  o << ")";
  return o.str();
}

nlohmann::ordered_json LinOperation::ToJson() const {
  nlohmann::ordered_json j;
  j["process"] = process >= 0 ? nlohmann::ordered_json(process)
                              : nlohmann::ordered_json(ProcessName(process));
  j["f"] = f;
  if (!key.empty()) j["key"] = key;
  j["input"] = input;
  j["output"] = output;
  j["outcome"] = outcome;
  j["invoke_index"] = invoke_index;
  j["complete_index"] = complete_index >= 0 ? nlohmann::ordered_json(complete_index)
                                            : nlohmann::ordered_json();
  j["invoke_line"] = invoke_line;
  j["complete_line"] = complete_line ? nlohmann::ordered_json(complete_line)
                                     : nlohmann::ordered_json();
  return j;
}

nlohmann::ordered_json LinOperation::ToDrawJson() const {
  nlohmann::ordered_json j;
  j["process"] = process >= 0 ? nlohmann::ordered_json(process)
                              : nlohmann::ordered_json(ProcessName(process));
  j["f"] = f;
  j["key"] = key;
  j["invoke_ns"] = invoke_ns;
  j["complete_ns"] = complete_ns >= 0 ? nlohmann::ordered_json(complete_ns) : nlohmann::ordered_json();
  j["outcome"] = outcome;
  j["value"] = output.is_null() ? input : output;
  return j;
}

nlohmann::ordered_json LinCounterexample::UnplaceableJson() const {
  nlohmann::ordered_json j;
  j["op"] = failed.ToDrawJson();
  j["prefix_ops"] = prefix_ops;
  j["conflicts"] = nlohmann::ordered_json::array();
  for (const auto& c : conflicts) j["conflicts"].push_back(c.ToDrawJson());
  j["sentence"] = sentence;
  return j;
}

nlohmann::ordered_json LinearizabilityResult::ToJson() const {
  nlohmann::ordered_json j;
  j["model"] = ModelName(model);
  j["verdict"] = LinVerdictName(verdict);
  j["linearizable"] = verdict == LinVerdict::kValid   ? nlohmann::ordered_json(true)
                      : verdict == LinVerdict::kInvalid ? nlohmann::ordered_json(false)
                                                        : nlohmann::ordered_json();
  j["operations"] = operations;
  j["invocations"] = invocations;
  j["keys"] = keys;
  j["states_explored"] = states_explored;
  j["dropped_unknown"] = dropped_unknown;
  j["peak_memory_bytes"] = peak_memory_bytes;
  j["elapsed_ms"] = elapsed_ms;
  if (!reason.empty()) j["reason"] = reason;
  if (counterexample) {
    const LinCounterexample& c = *counterexample;
    nlohmann::ordered_json x;
    x["key"] = c.key;
    x["failed"] = c.failed.ToJson();
    x["prefix_events"] = c.prefix_events;
    x["concurrent"] = nlohmann::ordered_json::array();
    for (const auto& op : c.concurrent) x["concurrent"].push_back(op.ToJson());
    x["states_tried"] = c.states_tried;
    x["longest_linearization_tail"] = nlohmann::ordered_json::array();
    for (const auto& op : c.longest_linearization_tail) {
      x["longest_linearization_tail"].push_back(op.ToJson());
    }
    j["counterexample"] = std::move(x);
    j["unplaceable"] = c.UnplaceableJson();
  }
  return j;
}

std::string LinearizabilityResult::ToText() const {
  std::ostringstream o;
  o << ModelName(model) << ": " << LinVerdictName(verdict) << " (" << operations
    << " operations, " << keys << " key" << (keys == 1 ? "" : "s") << ", " << states_explored
    << " states, " << std::fixed << std::setprecision(elapsed_ms < 10 ? 2 : 0) << elapsed_ms
    << std::defaultfloat << " ms)";
  if (!reason.empty()) o << ": " << reason;
  o << "\n";
  if (counterexample) {
    const LinCounterexample& c = *counterexample;
    o << "  no linearization of the history up to line " << c.failed.complete_line;
    if (!c.key.empty()) o << " on key " << c.key;
    o << " (" << c.prefix_events << " events): cannot place\n    " << c.failed.ToString()
      << "\n";
    if (!c.sentence.empty()) o << "  why: " << c.sentence << "\n";
    o << "  operations concurrent there:\n";
    for (const auto& op : c.concurrent) o << "    " << op.ToString() << "\n";
    o << "  model states reached there:";
    for (const auto& s : c.states_tried) o << " [" << s << "]";
    o << "\n";
    if (!c.longest_linearization_tail.empty()) {
      o << "  one deepest attempt ended with:\n";
      for (const auto& op : c.longest_linearization_tail) o << "    " << op.ToString() << "\n";
    }
  }
  return o.str();
}

Status CheckLinearizability(const History& h, Model m, const LinearizabilityOptions& o,
                            const std::string& name, LinearizabilityResult* out) {
  auto start = Clock::now();
  std::map<std::string, Partition> partitions;
  Status s = lin::BuildPartitions(h, m, o, name, &partitions);
  if (!s.ok()) return s;
  LinearizabilityResult r;
  r.model = m;
  for (const Event& e : h) {
    if (e.type == EventType::kInvoke && e.process != kNemesisProcess && ModelHasFunction(m, e.f)) {
      ++r.invocations;
    }
  }
  Clockface clock;
  clock.start = h.empty() ? Nanos(0) : h.front().time;
  clock.clocked = false;
  for (const Event& e : h) {
    clock.start = std::min(clock.start, e.time);
    clock.clocked = clock.clocked || e.time.count() != e.index;
  }
  auto deadline = start + o.time_budget;
  bool unknown = false;
  int64_t best_seq = 0;
  for (auto& [key, part] : partitions) {
    if (part.ops.empty()) continue;
    ++r.keys;
    r.operations += part.ops.size();
    SweepOutcome so = lin::RunSweep(m, part, o, deadline);
    r.states_explored += so.states;
    r.dropped_unknown += so.dropped_unknown;
    r.peak_memory_bytes = std::max(r.peak_memory_bytes, so.peak_bytes);
    if (so.verdict == LinVerdict::kUnknown) {
      if (!unknown) r.reason = so.reason;
      unknown = true;
      if (Clock::now() > deadline) break;
    } else if (so.verdict == LinVerdict::kInvalid) {
      int64_t seq = part.ops[so.failed_op].ret_seq;  // earliest completion wins
      if (!r.counterexample || seq < best_seq) {
        r.counterexample = MakeCounterexample(m, part, so, clock);
        best_seq = seq;
      }
    }
  }
  if (r.counterexample) {
    r.verdict = LinVerdict::kInvalid;
    r.reason.clear();
  } else if (unknown) {
    r.verdict = LinVerdict::kUnknown;
  }
  if (r.verdict == LinVerdict::kValid && r.operations == 0) r.reason = VacuousReason(r);
  r.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  *out = std::move(r);
  return Status::Ok();
}

LinearizabilityResult CheckLinearizability(const History& h, Model m,
                                           const LinearizabilityOptions& o, Status* bad_input) {
  LinearizabilityResult r;
  Status s = CheckLinearizability(h, m, o, "", &r);
  if (!s.ok()) {
    if (bad_input) *bad_input = s;
    r = LinearizabilityResult();
    r.model = m;
    r.verdict = LinVerdict::kUnknown;
    r.reason = "bad input: " + s.message();
  }
  return r;
}

}  // namespace locklab::checker