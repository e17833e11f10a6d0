#include "checker/lin_builder.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace locklab::checker::lin {
namespace {

Status Bad(const std::string& name, const Event& e, const std::string& field,
           const std::string& what) {
  std::string where = (name.empty() ? "" : name + ":") + std::to_string(e.line);
  return Status::BadField(where, field, what);
}

// Register values: integers, null, or {"value":n,...} (a fenced write); anything else is
// compared by its JSON text.
int64_t RegisterValue(Interner* in, const nlohmann::json& v) {
  if (v.is_null()) return 0;
  if (v.is_object()) {
    auto it = v.find("value");
    if (it != v.end()) return RegisterValue(in, *it);
  }
  return in->Id(Dump(v));
}

std::string TokenOf(const nlohmann::json& v) {
  if (!v.is_object()) return "";
  auto it = v.find("token");
  if (it == v.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : Dump(*it);
}

struct Builder {
  Model model;
  const LinearizabilityOptions& options;
  const std::string& name;
  std::map<std::string, Partition> partitions;
  std::unordered_map<int64_t, std::string> last_token;  // per process, last acquired token

  Partition& Part(const std::string& key) {
    auto it = partitions.find(key);
    if (it == partitions.end()) {
      it = partitions.emplace(key, Partition(key, IsMutexModel(model))).first;
    }
    return it->second;
  }

  // `c` is null when the operation never completed.
  Status Add(const Event& inv, int64_t inv_seq, const Event* c, int64_t c_seq) {
    EventType t = c ? c->type : EventType::kInfo;
    bool unknown = t == EventType::kInfo;
    Op op;
    op.unknown = unknown;
    op.call_seq = static_cast<int32_t>(inv_seq);
    if (!unknown) {
      op.ret_seq = static_cast<int32_t>(c_seq);
    }
    const std::string& f = inv.f;
    Partition& p = Part(inv.key);
    static const nlohmann::json kNull;
    const nlohmann::json& out = c ? c->value : kNull;
    const bool owner_model = model == Model::kOwnerMutex || model == Model::kFencedMutex;
    const bool not_held = t == EventType::kFail && owner_model && (f == "release" || f == "renew");
    if (t == EventType::kFail && !not_held) {
      if (!(f == "cas" && options.cas_fail_is_observation)) return Status::Ok();  // no effect
    }
    if (f == "read") {
      if (unknown) return Status::Ok();  // constrains nothing
      op.kind = Kind::kRead;
      op.x = RegisterValue(&p.values, out);
    } else if (f == "write") {
      op.kind = Kind::kWrite;
      const nlohmann::json& v = inv.value.is_null() ? out : inv.value;
      op.x = RegisterValue(&p.values, v);
    } else if (f == "cas") {
      const nlohmann::json* v = &inv.value;
      if (!(v->is_array() && v->size() == 2)) v = &out;
      if (!(v->is_array() && v->size() == 2)) {
        return Bad(name, inv, "value", "a cas needs [expected new]");
      }
      op.x = RegisterValue(&p.values, (*v)[0]);
      op.y = RegisterValue(&p.values, (*v)[1]);
      op.kind = t == EventType::kFail ? Kind::kCasFail : Kind::kCasOk;
    } else if (f == "acquire") {
      op.kind = Kind::kAcquire;
      std::string tok = TokenOf(out);
      if (tok.empty()) tok = TokenOf(inv.value);
      if (!tok.empty()) {
        op.x = p.values.Id(tok);
      } else if (unknown) {
        op.x = p.values.Fresh("unknown token of p" + ProcessName(inv.process) + "@" +
                              std::to_string(inv.line));
      } else {
        tok = "p" + ProcessName(inv.process);
        op.x = p.values.Id(tok);
      }
      if (!tok.empty()) last_token[inv.process] = tok;
      op.y = kNoFence;
      if (out.is_object()) {
        auto it = out.find("fence");
        if (it != out.end() && !it->is_null()) {
          if (!it->is_number_integer()) return Bad(name, *c, "value", "fence must be an integer");
          op.y = it->get<int64_t>();
          if (op.y == kNoFence) op.y = kNoFence + 1;
        }
      }
    } else if (f == "release" || f == "renew") {
      if (f == "renew" && unknown) return Status::Ok();  // changes no state
      op.kind = not_held ? Kind::kNotHeld : f == "release" ? Kind::kRelease : Kind::kRenew;
      std::string tok = TokenOf(inv.value);
      if (tok.empty()) tok = TokenOf(out);
      if (tok.empty()) {
        auto it = last_token.find(inv.process);
        tok = it != last_token.end() ? it->second : "p" + ProcessName(inv.process);
      }
      op.x = p.values.Id(tok);
    } else {
      return Status::Ok();
    }
    op.inv = &inv;
    op.comp = c;
    p.ops.push_back(op);
    return Status::Ok();
  }

  Status Build(const History& h) {
    // Time order (ties by index), as SortedByTime, but without copying the events; and
    // without even a pointer per event when the history is in that order already (the
    // judge's always is: 8 bytes an event at the top of a long history's peak).
    auto earlier = [](const Event* a, const Event* b) {
      if (a->time != b->time) return a->time < b->time;
      return a->index < b->index;
    };
    auto wanted = [&](const Event& e) {
      return e.process != kNemesisProcess && ModelHasFunction(model, e.f);
    };
    bool in_order = true;
    for (size_t i = 1; i < h.size() && in_order; ++i) in_order = !earlier(&h[i], &h[i - 1]);
    std::vector<const Event*> sorted;
    if (!in_order) {
      sorted.reserve(h.size());
      for (const Event& e : h) {
        if (wanted(e)) sorted.push_back(&e);
      }
      std::stable_sort(sorted.begin(), sorted.end(), earlier);
    }
    // Calls fn(position, event) for the model's events in time order.
    auto for_each = [&](auto&& fn) -> Status {
      if (!in_order) {
        for (size_t i = 0; i < sorted.size(); ++i) {
          Status s = fn(i, *sorted[i]);
          if (!s.ok()) return s;
        }
        return Status::Ok();
      }
      size_t i = 0;
      for (const Event& e : h) {
        if (!wanted(e)) continue;
        Status s = fn(i++, e);
        if (!s.ok()) return s;
      }
      return Status::Ok();
    };
    // Each key's operations at most its invocations: reserved once, so no partition's ops
    // vector doubles past its size (the slack of a doubling was a fifth of the search's
    // share of a long history's peak).
    // (An invocation that failed with no effect adds none: a refused acquire, a failed write.)
    std::unordered_map<std::string, int64_t> invocations;
    (void)for_each([&](size_t, const Event& e) {
      if (e.type == EventType::kInvoke) {
        ++invocations[e.key];
      } else if (e.type == EventType::kFail && e.process >= 0 &&
                 (e.f == "acquire" || e.f == "read" || e.f == "write")) {
        --invocations[e.key];
      }
      return Status::Ok();
    });
    for (const auto& [key, n] : invocations) {
      if (n > 0) Part(key).ops.reserve(static_cast<size_t>(n));
    }
    struct Pending {
      size_t at;
      const Event* e;
    };
    std::unordered_map<int64_t, Pending> pending;
    Status walked = for_each([&](size_t i, const Event& e) -> Status {
      if (e.type == EventType::kInvoke) {
        auto it = pending.find(e.process);
        if (it != pending.end()) {
          // A process is sequential: a second invocation before the first one's completion
          // is a malformed history (Jepsen gives a process whose op is lost a new id).
          const Event& first = *it->second.e;
          return Bad(name, e, "type", "process " + ProcessName(e.process) + " invokes '" + e.f +
                                          "' while its '" + first.f + "' of line " +
                                          std::to_string(first.line) + " has not completed");
        }
        pending.emplace(e.process, Pending{i, &e});
        return Status::Ok();
      }
      auto it = pending.find(e.process);
      if (it == pending.end()) {
        return Bad(name, e, "type", std::string("'") + EventTypeName(e.type) +
                                        "' completion without a pending invocation by process " +
                                        ProcessName(e.process));
      }
      const Event& inv = *it->second.e;
      if (inv.f != e.f) {
        return Bad(name, e, "f", "completion '" + e.f + "' does not match invocation '" + inv.f +
                                     "' at line " + std::to_string(inv.line));
      }
      Status s = Add(inv, static_cast<int64_t>(it->second.at), &e, static_cast<int64_t>(i));
      if (!s.ok()) return s;
      pending.erase(it);
      return Status::Ok();
    });
    if (!walked.ok()) return walked;
    std::vector<Pending> rest;
    for (auto& [proc, p] : pending) rest.push_back(p);
    std::sort(rest.begin(), rest.end(), [](const Pending& a, const Pending& b) { return a.at < b.at; });
    for (const Pending& p : rest) {
      Status s = Add(*p.e, static_cast<int64_t>(p.at), nullptr, 0);
      if (!s.ok()) return s;
    }
    // Failed operations and unknown reads add no op: where they were many, give back what
    // they were reserved (a copy, so only when it frees a quarter or more).
    for (auto& [key, part] : partitions) {
      if (part.ops.size() < part.ops.capacity() / 4 * 3) part.ops.shrink_to_fit();
    }
    return Status::Ok();
  }
};

}  // namespace

Status BuildPartitions(const History& h, Model model, const LinearizabilityOptions& options,
                       const std::string& name, std::map<std::string, Partition>* partitions) {
  Builder b{model, options, name, {}, {}};
  Status s = b.Build(h);
  if (s.ok()) *partitions = std::move(b.partitions);
  return s;
}

}  // namespace locklab::checker::lin
