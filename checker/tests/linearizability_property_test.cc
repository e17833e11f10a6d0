// Property tests for CheckLinearizability:
// * histories generated from a real sequential execution (each op takes effect at a random
//   instant inside its call..return interval; info ops at any later instant or never) are
//   always valid, for every model, with several keys;
// * small mutated histories (<= 8 ops) get the same verdict as a slow brute-force checker
//   that tries every order of every subset of the unknown ops, written independently of the
//   checker's own model code.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/linearizability.h"

namespace locklab::checker {
namespace {

using json = nlohmann::json;

struct GOp {
  int64_t process = 0;
  std::string f;
  std::string key;
  json in;
  json out;
  int64_t call = 0;
  int64_t ret = 0;       // completion time
  EventType outcome = EventType::kOk;
  bool completes = true;  // false: no completion event at all (unknown)
};

History ToHistory(const std::vector<GOp>& ops) {
  struct E { int64_t t; int order; Event e; };
  std::vector<E> es;
  int order = 0;
  for (const GOp& o : ops) {
    Event inv;
    inv.time = Nanos(o.call);
    inv.process = o.process;
    inv.type = EventType::kInvoke;
    inv.f = o.f;
    inv.key = o.key;
    inv.value = o.in;
    es.push_back({o.call, order++, inv});
    if (o.completes) {
      Event c = inv;
      c.time = Nanos(o.ret);
      c.type = o.outcome;
      c.value = o.out;
      es.push_back({o.ret, order++, c});
    }
  }
  std::stable_sort(es.begin(), es.end(), [](const E& a, const E& b) { return a.t < b.t; });
  History h;
  for (size_t i = 0; i < es.size(); ++i) {
    es[i].e.index = static_cast<int64_t>(i);
    es[i].e.line = static_cast<int>(i) + 1;
    h.push_back(es[i].e);
  }
  return h;
}

// ---- An independent sequential specification and a brute-force checker ---------------------

struct Spec {
  json value;            // register
  std::string holder;    // mutex ("" = free)
  std::optional<int64_t> fence;
};

json RegVal(const json& v) {
  if (v.is_object() && v.contains("value")) return v["value"];
  return v;
}

// Applies one op (with its observed outcome) to the spec; false if impossible.
bool Apply(Model m, Spec* s, const GOp& o, bool cas_fail_observed) {
  bool fail = o.completes && o.outcome == EventType::kFail;
  if (m == Model::kRegister || m == Model::kCasRegister) {
    if (o.f == "read") return s->value == RegVal(o.out);
    if (o.f == "write") {
      s->value = RegVal(o.in);
      return true;
    }
    if (o.f == "cas") {
      if (fail && cas_fail_observed) return s->value != o.in[0];
      if (s->value != o.in[0]) return false;
      s->value = o.in[1];
      return true;
    }
    return false;
  }
  std::string tok;
  if (o.f == "acquire") {
    if (o.out.is_object() && o.out.contains("token")) tok = o.out["token"].get<std::string>();
    else tok = "unknown@" + std::to_string(o.call) + "/" + std::to_string(o.process);
  } else if (o.in.is_object() && o.in.contains("token")) {
    tok = o.in["token"].get<std::string>();
  }
  if (o.f == "acquire") {
    if (!s->holder.empty()) return false;
    if (m == Model::kFencedMutex && o.out.is_object() && o.out.contains("fence")) {
      int64_t f = o.out["fence"].get<int64_t>();
      if (s->fence && f <= *s->fence) return false;
      s->fence = f;
    }
    s->holder = tok;
    return true;
  }
  if (o.f == "release") {
    if (s->holder.empty()) return false;
    if (m != Model::kMutex && s->holder != tok) return false;
    s->holder.clear();
    return true;
  }
  if (o.f == "renew") return !s->holder.empty() && (m == Model::kMutex || s->holder == tok);
  return false;
}

bool BruteForce(Model m, const std::vector<GOp>& all, bool cas_fail_observed) {
  std::map<std::string, std::vector<const GOp*>> by_key;
  for (const GOp& o : all) by_key[o.key].push_back(&o);
  for (auto& [key, list] : by_key) {
    std::vector<const GOp*> req, opt;
    for (const GOp* o : list) {
      bool unknown = !o->completes || o->outcome == EventType::kInfo;
      bool fail = !unknown && o->outcome == EventType::kFail;
      if (fail && !(o->f == "cas" && cas_fail_observed)) continue;
      if (unknown && (o->f == "read" || o->f == "renew")) continue;
      (unknown ? opt : req).push_back(o);
    }
    std::vector<const GOp*> ops = req;
    ops.insert(ops.end(), opt.begin(), opt.end());
    size_t nreq = req.size();
    std::vector<bool> used(ops.size(), false);
    auto is_req = [&](size_t i) { return i < nreq; };
    std::function<bool(Spec, size_t)> dfs = [&](Spec s, size_t placed_req) -> bool {
      if (placed_req == nreq) return true;
      for (size_t c = 0; c < ops.size(); ++c) {
        if (used[c]) continue;
        bool allowed = true;  // no unplaced required op completed before c was called
        for (size_t r = 0; r < nreq && allowed; ++r) {
          if (!used[r] && r != c && ops[r]->ret < ops[c]->call) allowed = false;
        }
        if (!allowed) continue;
        Spec n = s;
        if (!Apply(m, &n, *ops[c], cas_fail_observed)) continue;
        used[c] = true;
        bool ok = dfs(n, placed_req + (is_req(c) ? 1 : 0));
        used[c] = false;
        if (ok) return true;
      }
      return false;
    };
    if (!dfs(Spec{}, 0)) return false;
  }
  return true;
}

// ---- Generating histories from real sequential executions -----------------------------------

struct Slot {  // one op of one process before its outcome is known
  int64_t process;
  std::string key;
  int64_t call, lin, ret;
  bool info;
  bool effect;  // an info op: did it take effect (at `lin`, which may be after `ret`)?
  bool last;    // the process's last op: may lack a completion altogether
  size_t index;
};

std::vector<GOp> Generate(Model m, std::mt19937_64& rng, int processes, int ops_per_process,
                          int keys, double info_rate) {
  std::uniform_int_distribution<int64_t> gap(1, 40);
  std::uniform_real_distribution<double> u01(0, 1);
  std::vector<Slot> slots;
  std::vector<GOp> ops;
  for (int p = 0; p < processes; ++p) {
    int64_t t = gap(rng);
    for (int k = 0; k < ops_per_process; ++k) {
      Slot s;
      s.process = p;
      s.key = "k" + std::to_string(rng() % keys);
      s.call = t;
      s.ret = s.call + gap(rng) * 3;
      s.lin = s.call + static_cast<int64_t>(u01(rng) * (s.ret - s.call));
      s.info = u01(rng) < info_rate;
      s.effect = u01(rng) < 0.5;
      if (s.info) s.lin = s.call + static_cast<int64_t>(u01(rng) * 600);  // maybe much later
      s.index = ops.size();
      s.last = k == ops_per_process - 1;
      ops.push_back(GOp{});
      slots.push_back(s);
      t = s.ret + gap(rng);
    }
  }
  std::vector<Slot*> order;
  for (Slot& s : slots) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](Slot* a, Slot* b) {
    return a->lin != b->lin ? a->lin < b->lin : a->index < b->index;
  });
  std::map<std::string, Spec> state;
  std::map<std::pair<int64_t, std::string>, std::string> held;  // what a process believes
  int64_t next_fence = 1, next_token = 1;
  bool mutex = m == Model::kMutex || m == Model::kOwnerMutex || m == Model::kFencedMutex;
  for (Slot* s : order) {
    GOp& o = ops[s->index];
    o.process = s->process;
    o.key = s->key;
    o.call = s->call;
    o.ret = s->ret;
    Spec& st = state[s->key];
    bool takes_effect = !s->info || s->effect;
    if (!mutex) {
      int r = static_cast<int>(rng() % (m == Model::kCasRegister ? 3 : 2));
      if (r == 0) {
        o.f = "read";
        o.out = st.value;
      } else if (r == 1) {
        o.f = "write";
        o.in = static_cast<int64_t>(rng() % 4);
        if (takes_effect) st.value = o.in;
      } else {
        o.f = "cas";
        o.in = json::array({static_cast<int64_t>(rng() % 3), static_cast<int64_t>(rng() % 3)});
        bool ok = st.value == o.in[0];
        if (ok && takes_effect) st.value = o.in[1];
        o.outcome = ok ? EventType::kOk : EventType::kFail;
        o.out = o.in;
      }
      if (o.f == "read" && st.value.is_null()) o.out = nullptr;
    } else {
      auto hk = std::make_pair(s->process, s->key);
      auto it = held.find(hk);
      if (it != held.end()) {
        o.f = (rng() % 4 == 0) ? "renew" : "release";
        o.in = {{"token", it->second}};
        bool ok = st.holder == it->second;
        if (ok && takes_effect && o.f == "release") st.holder.clear();
        o.outcome = ok ? EventType::kOk : EventType::kFail;
        if (o.f == "release") held.erase(it);
      } else {
        o.f = "acquire";
        bool ok = st.holder.empty();
        if (ok && takes_effect) {
          std::string tok = "t" + std::to_string(next_token++);
          st.holder = tok;
          int64_t fence = next_fence++;
          o.out = {{"token", tok}, {"fence", fence}};
          if (!s->info) held[hk] = tok;
        }
        o.outcome = ok ? EventType::kOk : EventType::kFail;
        if (!ok) o.out = {{"error", "held"}};
      }
    }
    if (s->info) {
      o.outcome = EventType::kInfo;
      o.out = nullptr;
      if (s->last && rng() % 2 == 0) o.completes = false;
    }
  }
  return ops;
}

LinVerdict Check(const std::vector<GOp>& ops, Model m, bool cas_fail_observed = false) {
  LinearizabilityOptions o;
  o.cas_fail_is_observation = cas_fail_observed;
  LinearizabilityResult r;
  Status s = CheckLinearizability(ToHistory(ops), m, o, "gen", &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r.verdict;
}

TEST(LinearizabilityProperty, SequentialExecutionsAreValid) {
  std::mt19937_64 rng(42);
  for (Model m : kAllModels) {
    for (int trial = 0; trial < 60; ++trial) {
      int procs = 2 + static_cast<int>(rng() % 5);
      int keys = 1 + static_cast<int>(rng() % 3);
      auto ops = Generate(m, rng, procs, 4 + static_cast<int>(rng() % 12), keys, 0.1);
      ASSERT_EQ(Check(ops, m), LinVerdict::kValid)
          << ModelName(m) << " trial " << trial << "\n"
          << [&] {
               std::string s;
               for (const Event& e : ToHistory(ops)) s += ToJsonLine(e) + "\n";
               return s;
             }();
      if (m == Model::kCasRegister) {
        ASSERT_EQ(Check(ops, m, true), LinVerdict::kValid) << "cas fail as observation";
      }
    }
  }
}

TEST(LinearizabilityProperty, LargeSequentialExecutionIsValidAndQuick) {
  std::mt19937_64 rng(7);
  for (Model m : {Model::kOwnerMutex, Model::kFencedMutex, Model::kRegister}) {
    auto ops = Generate(m, rng, 8, 300, 2, 0.02);
    LinearizabilityResult r = CheckLinearizability(ToHistory(ops), m);
    EXPECT_EQ(r.verdict, LinVerdict::kValid) << ModelName(m) << " " << r.reason;
  }
}

void Mutate(Model m, std::vector<GOp>* ops, std::mt19937_64& rng) {
  if (ops->empty()) return;
  GOp& o = (*ops)[rng() % ops->size()];
  int what = static_cast<int>(rng() % 4);
  if (what == 0) {  // move the completion inside the op's window
    int64_t lo = o.call + 1, hi = o.ret + 40;
    o.ret = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    return;
  }
  if (what == 1 && o.completes && o.outcome != EventType::kInfo) {
    o.outcome = o.outcome == EventType::kOk ? EventType::kFail : EventType::kOk;
    if (o.f == "acquire" && o.outcome == EventType::kOk && !o.out.contains("token")) {
      o.out = {{"token", "t" + std::to_string(rng() % 3 + 1)}, {"fence", int64_t(rng() % 4)}};
    }
    return;
  }
  bool mutex = m == Model::kMutex || m == Model::kOwnerMutex || m == Model::kFencedMutex;
  if (!mutex) {
    json v = rng() % 4 == 0 ? json() : json(static_cast<int64_t>(rng() % 3));
    if (o.f == "read") o.out = v;
    else if (o.f == "write") o.in = v.is_null() ? json(0) : v;
    else o.in[rng() % 2] = v.is_null() ? json(1) : v;
  } else {
    std::string tok = "t" + std::to_string(rng() % 3 + 1);
    if (o.f == "acquire" && o.out.is_object()) {
      o.out["token"] = tok;
      o.out["fence"] = static_cast<int64_t>(rng() % 4);
    } else if (o.f != "acquire") {
      o.in = {{"token", tok}};
    }
  }
}

void CrossCheck(Model m, uint64_t seed, int trials, bool cas_fail_observed) {
  std::mt19937_64 rng(seed);
  int invalid = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto ops = Generate(m, rng, 2 + static_cast<int>(rng() % 2), 2 + static_cast<int>(rng() % 2),
                        1 + static_cast<int>(rng() % 2), 0.2);
    if (ops.size() > 8) ops.resize(8);
    int mutations = 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < mutations; ++k) Mutate(m, &ops, rng);
    // Keep each process sequential after moving completions: drop overlapping later ops.
    std::map<int64_t, int64_t> busy_until;
    std::vector<GOp> kept;
    std::sort(ops.begin(), ops.end(), [](const GOp& a, const GOp& b) { return a.call < b.call; });
    for (const GOp& o : ops) {
      auto it = busy_until.find(o.process);
      if (it != busy_until.end() && it->second >= o.call) continue;
      kept.push_back(o);
      busy_until[o.process] = o.completes ? o.ret : INT64_MAX;
    }
    bool want = BruteForce(m, kept, cas_fail_observed);
    LinVerdict got = Check(kept, m, cas_fail_observed);
    invalid += !want;
    ASSERT_EQ(got, want ? LinVerdict::kValid : LinVerdict::kInvalid)
        << ModelName(m) << " seed " << seed << " trial " << trial << "\n"
        << [&] {
             std::string s;
             for (const Event& e : ToHistory(kept)) s += ToJsonLine(e) + "\n";
             return s;
           }();
  }
  EXPECT_GT(invalid, trials / 20) << "mutations should produce some invalid histories";
}

// LOCKLAB_PROPERTY_TRIALS=N (default 400) and LOCKLAB_PROPERTY_SEED scale a longer soak.
TEST(LinearizabilityProperty, MutatedSmallHistoriesMatchBruteForce) {
  const char* t = std::getenv("LOCKLAB_PROPERTY_TRIALS");
  const char* sd = std::getenv("LOCKLAB_PROPERTY_SEED");
  int trials = t ? std::atoi(t) : 400;
  uint64_t seed = sd ? std::strtoull(sd, nullptr, 10) : 1000;
  for (Model m : kAllModels) CrossCheck(m, seed + static_cast<int>(m), trials, false);
  CrossCheck(Model::kCasRegister, seed + 77, trials, true);
}

}  // namespace
}  // namespace locklab::checker
