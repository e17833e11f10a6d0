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
#include "checker/testing/brute_force.h"
#include "checker/testing/lock_history_generator.h"

namespace locklab::checker {
namespace {

using json = nlohmann::json;
using testing::BruteForce;
using testing::GOp;
using testing::HistoryOf;
using testing::Spec;

// ---- Generating histories from real sequential executions -----------------------------------

struct Slot {  // one op of one process before its outcome is known
  int64_t process;
  std::string key;
  int64_t call, lin, ret;
  bool info;
  bool effect;  // an info op: did it take effect (at `lin`, which may be after `ret`)?
  bool last;    // the process's last op: may lack a completion altogether
  bool late_token = false;  // an info acquire that took effect and names its token
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
          // A timed-out acquire that got the lock may still name its token (the lab's late
          // `ok`); its process then releases it like any other.
          s->late_token = s->info && rng() % 2 == 0;
          if (!s->info || s->late_token) held[hk] = tok;
        }
        o.outcome = ok ? EventType::kOk : EventType::kFail;
        if (!ok) o.out = {{"error", "held"}};
      }
    }
    if (s->info) {
      o.outcome = EventType::kInfo;
      o.out = s->late_token ? json{{"token", o.out["token"]}} : json();
      if (s->last && rng() % 2 == 0) {
        o.completes = false;
        o.out = nullptr;  // no completion, no value
      }
    }
  }
  return ops;
}

// The verdict, checked three ways that must agree: the sweep alone, the depth-first probe
// first, and the default (the probe once a closure grows wide); an invalid one's shortest
// prefix is the same too.
LinVerdict Check(const std::vector<GOp>& ops, Model m, bool cas_fail_observed = false) {
  History h = HistoryOf(ops);
  LinVerdict verdict = LinVerdict::kUnknown;
  int64_t prefix = -1;
  for (size_t probe : {size_t(1024), kNeverProbe, size_t(0), size_t(2)}) {
    LinearizabilityOptions o;
    o.cas_fail_is_observation = cas_fail_observed;
    o.probe_after_configs = probe;
    LinearizabilityResult r;
    Status s = CheckLinearizability(h, m, o, "gen", &r);
    EXPECT_TRUE(s.ok()) << s.message();
    int64_t p = r.counterexample ? r.counterexample->failed.complete_index : -1;
    if (probe == 1024) {
      verdict = r.verdict;
      prefix = p;
    } else {
      EXPECT_EQ(r.verdict, verdict) << "probe_after_configs " << probe;
      EXPECT_EQ(p, prefix) << "probe_after_configs " << probe << ": another shortest prefix";
    }
  }
  return verdict;
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
               for (const Event& e : HistoryOf(ops)) s += ToJsonLine(e) + "\n";
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
    LinearizabilityResult r = CheckLinearizability(HistoryOf(ops), m);
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

void CrossCheck(Model m, uint64_t seed, int trials, bool cas_fail_observed,
                size_t max_ops = 8, double info_rate = 0.2) {
  std::mt19937_64 rng(seed);
  int invalid = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto ops = Generate(m, rng, 2 + static_cast<int>(rng() % 2),
                        2 + static_cast<int>(rng() % (max_ops > 8 ? 3 : 2)),
                        1 + static_cast<int>(rng() % 2), info_rate);
    if (ops.size() > max_ops) ops.resize(max_ops);
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
             for (const Event& e : HistoryOf(kept)) s += ToJsonLine(e) + "\n";
             return s;
           }();
  }
  EXPECT_GT(invalid, trials / 40) << "mutations should produce some invalid histories";
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

// The rules for unknown outcomes (R1-R3 in lin_sweep.cc) only act when unknown ops are
// many: half the ops unknown, up to 10 per history, so tokens and values recur among them.
TEST(LinearizabilityProperty, UnknownHeavyHistoriesMatchBruteForce) {
  const char* t = std::getenv("LOCKLAB_PROPERTY_TRIALS");
  const char* sd = std::getenv("LOCKLAB_PROPERTY_SEED");
  int trials = t ? std::atoi(t) : 400;
  uint64_t seed = sd ? std::strtoull(sd, nullptr, 10) : 5000;
  for (Model m : kAllModels) CrossCheck(m, seed + static_cast<int>(m), trials, false, 10, 0.5);
  CrossCheck(Model::kCasRegister, seed + 99, trials, true, 10, 0.5);
}

std::string Dump(const History& h) {
  std::string s;
  for (const Event& e : h) s += ToJsonLine(e) + "\n";
  return s;
}

// The scale benchmark's generator, small enough for the brute force: its verdicts (and the
// checker's) are checked here, with and without unknown acquires and the intruder.
TEST(LinearizabilityProperty, GeneratedLockHistoriesMatchBruteForce) {
  int invalid = 0, runs = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    for (double unknown : {0.0, 0.1, 0.4}) {
      testing::LockHistorySpec spec;
      spec.events = 10 + static_cast<int64_t>(seed % 7);
      spec.clients = 2 + static_cast<int>(seed % 2);
      spec.indeterminate = unknown;
      spec.violation = seed % 2 == 0;
      spec.seed = seed;
      History h = testing::GenerateLockHistory(spec);
      auto ops = testing::OperationsOf(h);
      for (Model m : {Model::kMutex, Model::kOwnerMutex, Model::kFencedMutex}) {
        bool want = BruteForce(m, ops, false);
        if (!spec.violation) {
          ASSERT_TRUE(want) << "generator made an invalid history\n" << Dump(h);
        }
        LinVerdict got = CheckLinearizability(h, m).verdict;
        ASSERT_EQ(got, want ? LinVerdict::kValid : LinVerdict::kInvalid)
            << ModelName(m) << " seed " << seed << "\n" << Dump(h);
        invalid += !want;
        ++runs;
      }
    }
  }
  EXPECT_GT(invalid, runs / 10) << "the intruder should make some histories invalid";
}

// Long generated histories keep their verdict by construction (the run time is the bench's
// business, not asserted here).
TEST(LinearizabilityProperty, LongGeneratedLockHistoriesHaveTheirVerdict) {
  for (double unknown : {0.0, 0.1}) {
    for (bool violation : {false, true}) {
      testing::LockHistorySpec spec;
      spec.events = 100000;
      spec.indeterminate = unknown;
      spec.violation = violation;
      spec.seed = 11;
      History h = testing::GenerateLockHistory(spec);
      for (Model m : {Model::kMutex, Model::kOwnerMutex, Model::kFencedMutex}) {
        LinearizabilityResult r = CheckLinearizability(h, m);
        EXPECT_EQ(r.verdict, violation ? LinVerdict::kInvalid : LinVerdict::kValid)
            << ModelName(m) << " unknown " << unknown << ": " << r.ToText();
        if (violation && r.counterexample) {
          EXPECT_EQ(r.counterexample->failed.process, spec.clients) << r.ToText();
        }
      }
    }
  }
}

}  // namespace
}  // namespace locklab::checker

namespace locklab::checker {
namespace {

// Regression: every cached state carried a bitset over the whole history, so 10,000 events with
// 10% of acquires unknown explored 139,834 states for 2,028 operations, and 1M events needed
// 5.4 GB. The search's working set is now bounded by the history's concurrency and its live
// unknown operations: here, it must not grow with the length at all.
TEST(LinearizabilityProperty, Issue14SearchStateDoesNotGrowWithTheHistory) {
  size_t peak_small = 0;
  for (int64_t events : {10000, 200000}) {
    testing::LockHistorySpec spec;
    spec.events = events;
    spec.indeterminate = 0.1;
    spec.seed = 14;
    History h = testing::GenerateLockHistory(spec);
    for (Model m : {Model::kMutex, Model::kOwnerMutex}) {
      LinearizabilityResult r = CheckLinearizability(h, m);
      ASSERT_EQ(r.verdict, LinVerdict::kValid) << r.ToText();
      EXPECT_LT(r.states_explored, 4 * r.operations) << ModelName(m) << " " << events;
      if (events == 10000) {
        peak_small = std::max(peak_small, r.peak_memory_bytes);
      } else {
        EXPECT_LE(r.peak_memory_bytes, 2 * peak_small + 4096) << ModelName(m);
      }
      if (m == Model::kOwnerMutex) {
        EXPECT_GT(r.dropped_unknown, 0u) << "rule R1 never applied";
      }
    }
  }
}

}  // namespace
}  // namespace locklab::checker
