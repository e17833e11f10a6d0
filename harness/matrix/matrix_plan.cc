#include "harness/matrix/matrix_plan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

#include <toml++/toml.h>

#include "base/numbers.h"
#include "base/random.h"
#include "checker/verdict.h"
#include "faults/fault.h"
#include "harness/matrix/matrix_scaling.h"
#include "locks/backend.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"
#include "locks/mutants.h"
#include "harness/scenario/run_options.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {

const std::string kDefaultPresetDir = std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/matrix";

const std::vector<std::string> kExampleDrivers = {
    "driver:examples/drivers/redis_py_lock.py",
    "driver:examples/drivers/node_redlock/redlock_npm.js",
    "driver:examples/drivers/kazoo_lock.py",
    "driver:examples/drivers/java/curator_lock",
};

Status LoadPresets(const std::string& dir, std::vector<Preset>* out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return Status::Infrastructure("cannot read " + dir + ": " + strerror(errno));
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".toml" && n != "expected.toml") files.push_back(n);
  }
  closedir(d);
  // Columns in the order of the fault registry, then anything else.
  std::map<std::string, int> order;
  int i = 0;
  for (const auto& f : faults::ListFaults()) order[f.id] = i++;
  std::sort(files.begin(), files.end(), [&](const std::string& a, const std::string& b) {
    auto ka = a.substr(0, a.size() - 5), kb = b.substr(0, b.size() - 5);
    int oa = order.count(ka) ? order[ka] : 1000, ob = order.count(kb) ? order[kb] : 1000;
    return std::tie(oa, ka) < std::tie(ob, kb);
  });
  for (const auto& f : files) {
    Preset p;
    p.fault = f.substr(0, f.size() - 5);
    p.path = dir + "/" + f;
    Status s = LoadScenarioFile(p.path, &p.options);
    if (!s.ok()) return s;
    out->push_back(std::move(p));
  }
  return Status::Ok();
}

namespace {
// The results --fail-on may name, by their words (checker/trial_result.h).
constexpr checker::TrialResult kFailOnResults[] = {
    checker::TrialResult::kViolated, checker::TrialResult::kStuck, checker::TrialResult::kUnknown};
}  // namespace

std::string FailOn::ToString() const {
  std::string out;
  for (const auto r : kFailOnResults) {
    if (outcomes.count(r)) out += (out.empty() ? "" : ",") + std::string(checker::NameOf(r).word);
  }
  return out;
}

std::string ParseFailOn(const std::string& words, FailOn* out) {
  FailOn parsed;
  std::stringstream ss(words);
  std::string word;
  while (std::getline(ss, word, ',')) {
    const std::optional<checker::TrialResult> r = checker::ParseResultWord(word);
    if (!r || std::find(std::begin(kFailOnResults), std::end(kFailOnResults), *r) == std::end(kFailOnResults)) {
      return "'" + word + "' is not one of violated, stuck, unknown";
    }
    if (!parsed.outcomes.insert(*r).second) return "'" + word + "' given twice";
  }
  if (parsed.empty()) return "expected violated, stuck and/or unknown, comma-separated";
  *out = parsed;
  return "";
}

namespace {

// A lab for `lock` running this preset: the lock swapped in, node lists cut to its nodes.
RunOptions ForLock(const Preset& p, const std::string& lock_id, const locks::LockInfo& lock,
                   const std::vector<std::string>& driver_args,
                   const DriverServers& servers, Cell* cell) {
  RunOptions o = p.options;
  o.lock = lock_id;
  o.nodes = servers.nodes ? *servers.nodes : lock.default_nodes;
  o.driver_args = driver_args;
  if (locks::IsDriverId(lock_id)) {
    // The hello the matrix read for the row: each trial starts the servers it asks for
    // without starting the driver once more to ask (0.1 to 2 s a trial, a JVM's start for a
    // Java driver); its clients check that their drivers still say it.
    if (servers.probed && !servers.hello_line.empty()) o.knobs.emplace("hello", servers.hello_line);
  }
  // A driver row runs every fault that applies to its servers, as any lock does: which
  // faults apply is a fact of the fault and the backend (DriverFaultWhyNot), not of the
  // lock being a driver.
  for (auto& f : o.faults) {
    if (std::string why = FaultMisfit(f.id, lock.id, lock.backend); !why.empty()) {
      cell->applicable = false;
      cell->why_not = why;
    } else if (locks::IsDriverId(lock_id)) {
      if (std::string why_not = DriverFaultWhyNot(servers, f.id); !why_not.empty()) {
        cell->applicable = false;
        cell->why_not = why_not;
      }
    }
    std::vector<int> kept;
    for (int n : f.nodes) {
      if (n <= o.nodes) kept.push_back(n);
    }
    f.nodes = kept;
    if (f.id == "failover" && o.nodes != 1) {
      cell->applicable = false;
      cell->why_not = "failover needs a single-node lock with a replica";
    }
  }
  return o;
}

// 64-bit FNV-1a as 16 hex digits (an identity check, not a security property).
std::string Fnv1a(const std::string& data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string PlanId(const Plan& plan) {
  std::ostringstream all;
  all << plan.seed << "|" << (plan.full ? "full" : "quick") << "|" << plan.trials << "\n";
  // Only when set, so that the ids of plans without it stay what they were.
  if (!plan.fail_on.empty()) all << "fail_on|" << plan.fail_on.ToString() << "\n";
  for (const auto& c : plan.cells) {
    all << c.lock << "|" << c.fault << "|" << c.applicable << "|" << c.expected << "|"
        << c.expected_resource << "\n";
  }
  for (const auto& tr : plan.all) {
    RunOptions o = tr.options;
    o.out_dir.clear();  // where trials go differs between shards
    all << tr.cell << "|" << tr.index << "\n" << ScenarioToToml(o);
  }
  return Fnv1a(all.str());
}

}  // namespace

Plan BuildPlan(const PlanRequest& request) {
  // Cells and their trials (full mode: 3 trials per cell instead of 1). Every trial's seed
  // is drawn here for the whole matrix, before any slicing: trial n has the same seed in a
  // whole run and in any shard of any shard count.
  Plan plan;
  plan.seed = request.seed;
  plan.full = request.full;
  plan.trials = request.trials;
  plan.jobs = request.jobs;
  plan.lock_ids = request.lock_ids;
  plan.expect_path = request.expect_path;
  plan.fail_on = request.fail_on;
  plan.preset_dir = request.preset_dir;
  for (const auto& p : request.presets) plan.cols.push_back(p.fault);
  const auto& endpoints = request.endpoints;
  auto& cells = plan.cells;
  auto& all = plan.all;
  Rng seeds(request.seed);
  // Each row's name for its trials' files and run directories (cells/<name>--<fault>-N.toml):
  // two drivers of one file name (driver:a/lock.py, driver:b/lock.py) would share them, and
  // a trial would run the other row's scenario; the later row gets "-2" (or "-3", ... when
  // that is taken too).
  std::set<std::string> names_used;
  for (const auto& lock_id : request.lock_ids) {
    const locks::LockInfo& info = *locks::FindLock(lock_id);
    std::string row_name = LockDisplayName(lock_id);
    for (int n = 2; names_used.count(row_name); ++n) row_name = LockDisplayName(lock_id) + "-" + std::to_string(n);
    names_used.insert(row_name);
    for (const auto& p : request.presets) {
      Cell c;
      c.lock = lock_id;
      c.fault = p.fault;
      auto da = request.driver_args.find(lock_id);
      auto ds = request.driver_servers.find(lock_id);
      DriverServers servers;
      servers.backend = info.backend;
      if (ds != request.driver_servers.end()) servers = ds->second;
      RunOptions o = ForLock(p, lock_id, info,
                             da == request.driver_args.end() ? std::vector<std::string>{} : da->second,
                             servers, &c);
      o.name = row_name + "--" + p.fault;
      // Another TTL than the preset's: the cell's times scale with it (matrix_scaling.h).
      std::optional<Millis> row_ttl = request.ttl;
      if (auto dt = request.driver_ttls.find(lock_id); dt != request.driver_ttls.end()) {
        row_ttl = dt->second;
      }
      if (row_ttl && UsesLabTtl(info) && *row_ttl != o.ttl) {
        std::string why_not;
        if (!ScaleToTtl(RunOptions(o), *row_ttl, &o, &why_not) && c.applicable) {
          c.applicable = false;
          c.why_not = why_not;
        }
      }
      if (!endpoints.empty()) {
        // Lock nodes first, then the resource: a lock of N nodes takes the first N endpoints
        // and, when more are given, the last one for the resource (else n1 holds it).
        int need = o.nodes, given = static_cast<int>(endpoints.size());
        if (servers.backend != locks::Backend::kRedis) {
          c.applicable = false;
          c.why_not = lock_id + " runs on " + locks::BackendName(servers.backend) +
                      " servers the lab starts; --endpoints gives Redis servers";
        } else if (given < need) {
          c.applicable = false;
          c.why_not = lock_id + " needs " + std::to_string(need) + " endpoints, --endpoints gives " +
                      std::to_string(given);
        } else {
          o.endpoints.assign(endpoints.begin(), endpoints.begin() + need);
          if (given > need) o.endpoints.push_back(endpoints.back());
          o.endpoints_origin = "flag --endpoints";
          o.endpoint_control = request.endpoint_control;
        }
      }
      if (const Expectation* e = FindExpectation(request.expectations, c.lock, c.fault)) {
        c.expected = e->verdict;
        c.expected_resource = e->resource;
        c.expected_violated_in = e->violated_in;
        c.expected_stuck_in = e->stuck_in;
        c.origin = e->origin;
      }
      size_t ci = cells.size();
      for (int t = 0; t < request.trials; ++t) {
        // 62 bits: a seed must fit a TOML integer in the trial's scenario file. Drawn for an
        // inapplicable cell too, so that the seeds of the other cells do not depend on it.
        uint64_t trial_seed = (seeds.Fork() & ((uint64_t{1} << 62) - 1)) | 1;
        if (!c.applicable) continue;
        PlannedTrial tr;
        tr.cell = ci;
        tr.index = t;
        tr.options = o;
        tr.options.seed = trial_seed;
        tr.options.trials = 1;
        c.trials.push_back(all.size());
        all.push_back(std::move(tr));
      }
      if (!c.applicable) c.result = checker::TrialResult::kNotApplicable;
      cells.push_back(std::move(c));
    }
  }
  plan.id = PlanId(plan);
  return plan;
}

Status UnmatchedExpectation(const Plan& plan, const Expectations& expectations,
                            const std::vector<std::string>& columns) {
  // Each lock's canonical id once (a driver's is a look at the file system), not per entry.
  std::map<std::string, std::string> canonical;
  for (const auto& c : plan.cells) canonical.try_emplace(c.lock, CanonicalLockId(c.lock));
  std::vector<std::string> known;  // the default matrix's rows, and every lock the lab names
  for (const auto& l : locks::ListLocks()) known.push_back(l.id);
  for (const auto& m : locks::ListMutants()) known.push_back(m.id);
  for (const auto& d : kExampleDrivers) known.push_back(d);
  for (const auto& id : known) canonical.try_emplace(id, CanonicalLockId(id));
  for (const auto& e : expectations) {
    const bool in_run = std::any_of(plan.cells.begin(), plan.cells.end(), [&](const Cell& c) {
      return ExpectationMatches(e, c.lock, canonical.at(c.lock), c.fault);
    });
    if (in_run) continue;
    const bool elsewhere = std::any_of(known.begin(), known.end(), [&](const std::string& lock) {
      return std::any_of(columns.begin(), columns.end(), [&](const std::string& fault) {
        return ExpectationMatches(e, lock, canonical.at(lock), fault);
      });
    });
    if (elsewhere) continue;
    std::string rows;
    for (const auto& id : plan.lock_ids) rows += (rows.empty() ? "" : ", ") + CanonicalLockId(id);
    const std::string where = e.origin.substr(0, e.origin.rfind(':') + 1) + std::to_string(e.lock_line);
    return Status::BadInput(where + ": field 'cell.lock': '" + e.lock + "' x '" + e.fault +
                            "' matches no cell of this run (its locks: " + rows +
                            ") nor of the default matrix: it would pin nothing");
  }
  return Status::Ok();
}

std::vector<size_t> SliceForShard(Plan* plan, int shard_index, int shard_count) {
  // Round robin, so every shard gets a mix of locks and faults and about the same work.
  std::vector<size_t> mine;
  for (size_t n = 0; n < plan->all.size(); ++n) {
    plan->all[n].in_slice = static_cast<int>(n % shard_count) == shard_index - 1;
    if (plan->all[n].in_slice) mine.push_back(n);
  }
  return mine;
}

}  // namespace locklab::harness
