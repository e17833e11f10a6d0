#include "checker/linearizability.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "checker/lin_builder.h"
#include "checker/lin_model.h"
#include "checker/lin_sweep.h"

namespace locklab::checker {
namespace {

using lin::Clock;
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
  if (op.comp) {
    d.complete_index = op.comp->index;
    d.complete_line = op.comp->line;
  }
  return d;
}

LinCounterexample MakeCounterexample(Model model, const Partition& part,
                                     const SweepOutcome& so) {
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
  }
  return j;
}

std::string LinearizabilityResult::ToText() const {
  std::ostringstream o;
  o << ModelName(model) << ": " << LinVerdictName(verdict) << " (" << operations
    << " operations, " << keys << " key" << (keys == 1 ? "" : "s") << ", " << states_explored
    << " states, " << elapsed_ms << " ms)";
  if (!reason.empty()) o << ": " << reason;
  o << "\n";
  if (counterexample) {
    const LinCounterexample& c = *counterexample;
    o << "  no linearization of the history up to line " << c.failed.complete_line;
    if (!c.key.empty()) o << " on key " << c.key;
    o << " (" << c.prefix_events << " events): cannot place\n    " << c.failed.ToString()
      << "\n";
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
        r.counterexample = MakeCounterexample(m, part, so);
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