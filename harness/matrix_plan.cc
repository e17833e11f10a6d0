#include "harness/matrix_plan.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

#include <toml++/toml.h>

#include "base/random.h"
#include "faults/fault.h"
#include "harness/matrix_scaling.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

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

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status LoadPresets(const std::string& dir, std::vector<Preset>* out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return Status::Infrastructure("matrix: cannot read " + dir);
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

// Literature answers / pinned expectations: [[cell]] lock, fault, verdict (S|V|L) and/or

Status LoadExpectations(const std::string& path, Expectations* out) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Status::BadInput(path + ":" + std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()));
  }
  const toml::array* cells = root["cell"].as_array();
  if (!cells) return Status::BadInput(path + ":1: field 'cell': expected [[cell]] tables");
  for (const auto& node : *cells) {
    const toml::table* t = node.as_table();
    int line = node.source().begin.line;
    auto field = [&](const char* k) { return t ? t->get_as<std::string>(k) : nullptr; };
    if (!field("lock") || !field("fault")) {
      return Status::BadInput(path + ":" + std::to_string(line) + ": field 'cell': needs lock and fault");
    }
    Expectation e;
    if (auto v = field("verdict")) e.verdict = v->get();
    if (auto v = field("resource")) e.resource = v->get();
    for (const std::string* v : {&e.verdict, &e.resource}) {
      if (!v->empty() && *v != "S" && *v != "V" && *v != "L") {
        return Status::BadInput(path + ":" + std::to_string(line) +
                                ": field 'cell.verdict': expected S, V or L");
      }
    }
    e.origin = path + ":" + std::to_string(line);
    (*out)[{field("lock")->get(), field("fault")->get()}] = e;
  }
  return Status::Ok();
}

namespace {

// A driver row's start_timeout_ms in the matrix (see ForLock).
constexpr Millis kMatrixDriverStartTimeout{20000};

// In quick mode a driver row runs only the faults of kQuickDriverFaults (each driver cell
// costs an interpreter start per client); --full runs them under every fault.
const std::vector<std::string> kQuickDriverFaults = {"none", "client-pause", "client-crash",
                                                     "client-clock", "partition", "restart"};

// A lab for `lock` running this preset: the lock swapped in, node lists cut to its nodes.
RunOptions ForLock(const Preset& p, const std::string& lock_id, const locks::LockInfo& lock,
                   const std::vector<std::string>& driver_args, bool full,
                   const DriverServers& servers, Cell* cell) {
  RunOptions o = p.options;
  o.lock = lock_id;
  o.nodes = servers.nodes ? *servers.nodes : lock.default_nodes;
  o.driver_args = driver_args;
  if (locks::IsDriverId(lock_id)) {
    // Up to jobs x clients drivers start at once here: on 2 cores with other work, 12 JVMs
    // took 7.4 s to say hello (6: 3.8 s), past the knob's 5 s default. Start-up is never
    // charged to the run (its clock starts when every client is ready), so a wider limit
    // costs nothing but the wait for a driver that never says hello.
    o.knobs.emplace("start_timeout_ms", std::to_string(kMatrixDriverStartTimeout.count()));
  }
  o.name = LockDisplayName(lock_id) + "--" + p.fault;
  if (locks::IsDriverId(lock_id) && !full &&
      std::find(kQuickDriverFaults.begin(), kQuickDriverFaults.end(), p.fault) ==
          kQuickDriverFaults.end()) {
    cell->applicable = false;
    cell->why_not = "quick mode runs driver rows under " + std::to_string(kQuickDriverFaults.size()) +
                    " faults only (--full for all)";
  }
  for (auto& f : o.faults) {
    if (!locks::FaultApplies(lock, f.id)) {
      cell->applicable = false;
      cell->why_not = "fault " + f.id + " does not apply to " + lock.id + " (its LockInfo)";
    } else if (locks::IsDriverId(lock_id) && !DriverFaultApplies(servers.backend, f.id)) {
      cell->applicable = false;
      cell->why_not = "fault " + f.id + " does not apply to the " + servers.backend +
                      " servers the driver's hello asks for";
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
    if (f.id == "failover" && locks::IsDriverId(lock_id)) {
      cell->applicable = false;
      cell->why_not = "a driver gets fixed node addresses, not Sentinel discovery";
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
  plan.preset_dir = request.preset_dir;
  for (const auto& p : request.presets) plan.cols.push_back(p.fault);
  const auto& endpoints = request.endpoints;
  auto& cells = plan.cells;
  auto& all = plan.all;
  Rng seeds(request.seed);
  for (const auto& lock_id : request.lock_ids) {
    const locks::LockInfo& info = *locks::FindLock(lock_id);
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
                             request.full, servers, &c);
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
        if (servers.backend != "redis") {
          c.applicable = false;
          c.why_not = lock_id + " runs on " + servers.backend +
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
      auto e = request.expectations.find({c.lock, c.fault});
      if (e != request.expectations.end()) {
        c.expected = e->second.verdict;
        c.expected_resource = e->second.resource;
        c.origin = e->second.origin;
      }
      size_t ci = cells.size();
      for (int t = 0; t < request.trials; ++t) {
        // 62 bits: a seed must fit a TOML integer in the trial's scenario file. Drawn for an
        // inapplicable cell too, so that the seeds of the other cells do not depend on it.
        uint64_t trial_seed = (seeds.Fork() & ((uint64_t{1} << 62) - 1)) | 1;
        if (!c.applicable) continue;
        Trial tr;
        tr.cell = ci;
        tr.index = t;
        tr.options = o;
        tr.options.seed = trial_seed;
        tr.options.trials = 1;
        c.trials.push_back(all.size());
        all.push_back(std::move(tr));
      }
      if (!c.applicable) c.verdict = "n/a";
      cells.push_back(std::move(c));
    }
  }
  plan.id = PlanId(plan);
  return plan;
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
