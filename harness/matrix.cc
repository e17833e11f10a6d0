#include "harness/matrix.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include <toml++/toml.h>

#include "base/random.h"
#include "faults/fault.h"
#include "harness/detection_power.h"
#include "harness/process.h"
#include "harness/report_command.h"
#include "harness/run_options.h"
#include "harness/run_store.h"
#include "harness/runner.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

// The default matrix: one cell scenario per fault, and their measured detection power.
const std::string kDefaultPresetDir = std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/matrix";

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Preset {
  std::string fault;  // the file's stem: the column name
  std::string path;
  RunOptions options;
};

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
// resource (S|V).
struct Expectation {
  std::string verdict, resource, origin;
};

Status LoadExpectations(const std::string& path,
                        std::map<std::pair<std::string, std::string>, Expectation>* out) {
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

struct Trial {
  size_t cell = 0;
  int index = 0;
  RunOptions options;
  pid_t pid = -1;
  std::string log;
  nlohmann::ordered_json results;
  bool done = false;
  bool ran = false;
  bool in_slice = true;  // false: another shard runs it (--shard)
  bool not_run = false;  // never started: the matrix was interrupted first
};

struct Cell {
  std::string lock, fault;
  bool applicable = true;
  std::string why_not;
  std::vector<size_t> trials;
  std::string verdict = "?";     // S | V | L | ? | - (not run: interrupted) | n/a
  std::string resource = "?";    // S | V | ?
  int violated = 0, stuck = 0, safe = 0, unknown = 0;
  int not_run = 0;    // trials never started (an interrupted matrix)
  int untrusted = 0;  // trials whose lab ran late by more than a tenth of the TTL (lab_lag)
  double median_first_violation_ms = -1;
  int fault_bit = 0;          // trials whose fault bit (results.json coverage)
  std::string unknown_reason; // the first unknown trial's verdict_reason
  std::string expected, expected_resource, origin;
  bool mismatch = false;
};

// The example lock drivers (examples/drivers/, other languages through the driver protocol)
// are rows of the default matrix after the registry's locks. In quick mode they run only
// the faults of kQuickDriverFaults (each driver cell costs an interpreter start per client);
// --full runs them under every fault.
const std::vector<std::string> kExampleDrivers = {
    "driver:examples/drivers/redis_py_lock.py",
    "driver:examples/drivers/node_redlock/redlock_npm.js",
};
const std::vector<std::string> kQuickDriverFaults = {"none", "client-pause", "client-crash",
                                                     "client-clock", "partition", "restart"};

// A lab for `lock` running this preset: the lock swapped in, node lists cut to its nodes.
RunOptions ForLock(const Preset& p, const std::string& lock_id, const locks::LockInfo& lock,
                   const std::vector<std::string>& driver_args, bool full, Cell* cell) {
  RunOptions o = p.options;
  o.lock = lock_id;
  o.nodes = lock.default_nodes;
  o.driver_args = driver_args;
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


// Everything a matrix will run, before it runs: the same for every shard of one matrix.
struct Plan {
  uint64_t seed = 0;
  bool full = false;
  int trials = 0;  // per cell
  int jobs = 6;
  std::vector<std::string> lock_ids, cols;
  std::string expect_path;  // empty: no expectations
  std::string preset_dir;   // the cell scenarios (--scenarios), and their detection-power.json
  std::vector<Cell> cells;
  std::vector<Trial> all;  // every trial of every shard, in the order of a whole run
  // Hash of every trial's scenario, the cells and their expectations: two shards belong to
  // one matrix exactly when their ids are equal.
  std::string id;
};

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

// --shard I/N: 1 <= I <= N <= 10000.
bool ParseShard(const std::string& v, int* index, int* count) {
  size_t slash = v.find('/');
  if (slash == std::string::npos) return false;
  try {
    size_t a = 0, b = 0;
    std::string l = v.substr(0, slash), r = v.substr(slash + 1);
    *index = std::stoi(l, &a);
    *count = std::stoi(r, &b);
    return a == l.size() && b == r.size() && *count >= 1 && *count <= 10000 && *index >= 1 &&
           *index <= *count;
  } catch (...) {
    return false;
  }
}

// Cell verdicts from the plan's trials that are in this output (in_slice), then
// matrix.json, matrix.md and junit.xml in `dir`; prints matrix.md. shard_count > 1: one
// shard of a larger matrix; 1: a whole (or merged) one. Returns the mismatching cells.
// An interrupted matrix says so at the top of matrix.md and in matrix.json; a cell with a
// trial that never ran is `-` (not run), never `?` or S, unless a trial that ran found a
// violation or a stuck lock. `*written` gets the first failed write (a full disk).
int WriteMatrix(Plan& plan, const std::string& dir, double elapsed_s, int shard_index,
                int shard_count, const nlohmann::ordered_json& merged_from, bool interrupted,
                Status* written) {
  auto& cells = plan.cells;
  auto& all = plan.all;
  bool sharded = shard_count > 1;
  int mismatches = 0, untrusted_trials = 0;
  double worst_lag_ms = 0;
  for (auto& c : cells) {
    std::vector<size_t> kept;
    for (size_t ti : c.trials) {
      if (all[ti].in_slice) kept.push_back(ti);
    }
    c.trials = kept;
    if (!c.applicable) continue;
    std::vector<double> firsts;
    int resource_bad = 0, resource_safe = 0;
    for (size_t ti : c.trials) {
      const auto& r = all[ti].results;
      if (all[ti].not_run) {
        ++c.not_run;
        continue;
      }
      std::string v = all[ti].ran ? r.value("verdict", std::string("unknown")) : "error";
      bool stuck = all[ti].ran && r.contains("liveness") && r["liveness"].value("stuck", false);
      if (v == "violated") ++c.violated;
      else if (stuck) ++c.stuck;
      else if (v == "safe") ++c.safe;
      else ++c.unknown;
      if (v != "violated" && v != "safe" && c.unknown_reason.empty()) {
        c.unknown_reason = all[ti].ran ? r.value("verdict_reason", std::string("no reason given"))
                                       : "the trial did not run";
      }
      bool bit = r.is_object() && r.contains("coverage") && !r["coverage"].empty();
      for (const auto& cov : bit ? r["coverage"] : nlohmann::ordered_json::array()) {
        bit = bit && cov.value("bit", false);
      }
      c.fault_bit += bit;
      std::string rv = all[ti].ran ? r.value("resource_verdict", std::string("unknown")) : "unknown";
      resource_bad += rv == "violated";
      resource_safe += rv == "safe";
      if (r.is_object() && r.contains("first_violation_ms")) firsts.push_back(r["first_violation_ms"].get<double>());
      if (r.is_object() && r.contains("lab_lag") && !r["lab_lag"].value("timing_trusted", true)) {
        ++c.untrusted;
        worst_lag_ms = std::max(worst_lag_ms, r["lab_lag"].value("max_ms", 0.0));
      }
    }
    untrusted_trials += c.untrusted;
    int n = static_cast<int>(c.trials.size());
    c.verdict = c.violated ? "V" : c.stuck ? "L" : c.not_run > 0 ? "-" : (c.safe == n && n > 0) ? "S" : "?";
    c.resource = resource_bad ? "V" : c.not_run > 0 ? "-" : (resource_safe == n && n > 0) ? "S" : "?";
    if (!firsts.empty()) {
      std::sort(firsts.begin(), firsts.end());
      c.median_first_violation_ms = firsts[firsts.size() / 2];
    }
    if (!c.expected.empty() && c.expected != c.verdict && c.verdict != "-") c.mismatch = true;
    if (!c.expected_resource.empty() && c.expected_resource != c.resource && c.resource != "-") c.mismatch = true;
    mismatches += c.mismatch;
  }

  nlohmann::ordered_json j;
  j["seed"] = plan.seed;
  j["mode"] = plan.full ? "full" : "quick";
  j["trials_per_cell"] = plan.trials;
  j["jobs"] = plan.jobs;
  j["elapsed_s"] = elapsed_s;
  int not_run = 0;
  for (const auto& tr : all) not_run += tr.in_slice && tr.not_run;
  if (interrupted || not_run > 0) {
    j["interrupted"] = true;
    j["trials_not_run"] = not_run;
  }
  j["lab_lag"] = {{"untrusted_trials", untrusted_trials}, {"worst_ms", worst_lag_ms}};
  // What `locklab merge` checks (one plan id) and rebuilds the matrix from.
  j["plan"] = {{"id", plan.id}, {"locks", plan.lock_ids}, {"faults", plan.cols},
               {"trial_count", all.size()}, {"expect", plan.expect_path},
               {"presets", plan.preset_dir}};
  if (sharded) j["shard"] = {{"index", shard_index}, {"count", shard_count}};
  if (!merged_from.is_null()) j["merged_from"] = merged_from;
  j["cells"] = nlohmann::ordered_json::array();
  for (const auto& c : cells) {
    nlohmann::ordered_json cj = {{"algorithm", c.lock}, {"faults", c.fault}, {"verdict", c.verdict},
                                 {"resource", c.resource}, {"trials", c.trials.size()},
                                 {"violated", c.violated}, {"stuck", c.stuck}, {"safe", c.safe},
                                 {"unknown", c.unknown}, {"untrusted_timing", c.untrusted}};
    if (c.not_run > 0) cj["not_run"] = c.not_run;
    cj["fraction_violated"] = c.trials.empty() ? 0.0 : static_cast<double>(c.violated) / c.trials.size();
    // Coverage: in how many trials the cell's fault bit (every fault, for combined columns).
    if (c.applicable && c.fault != "none") cj["fault_bit"] = c.fault_bit;
    if (!c.unknown_reason.empty()) cj["unknown_reason"] = c.unknown_reason;
    if (c.median_first_violation_ms >= 0) cj["median_first_violation_ms"] = c.median_first_violation_ms;
    if (!c.applicable) cj["why_not"] = c.why_not;
    if (!c.expected.empty() || !c.expected_resource.empty()) {
      cj["expected"] = c.expected;
      cj["expected_resource"] = c.expected_resource;
      cj["expected_origin"] = c.origin;
      cj["matches"] = !c.mismatch;
    }
    j["cells"].push_back(cj);
  }
  j["trials"] = nlohmann::ordered_json::array();
  j["trial_records"] = nlohmann::ordered_json::array();
  for (size_t n = 0; n < all.size(); ++n) {
    const Trial& tr = all[n];
    if (!tr.in_slice) continue;
    int at = -1;
    if (tr.results.is_object()) {
      at = static_cast<int>(j["trials"].size());
      j["trials"].push_back(tr.results);
    }
    j["trial_records"].push_back({{"n", n}, {"cell", tr.cell}, {"trial", tr.index},
                                  {"seed", tr.options.seed}, {"ran", tr.ran}, {"results", at}});
  }
  *written = WriteFile(dir + "/matrix.json", j.dump(2) + "\n");

  std::ostringstream md;
  md << "# Safety matrix";
  if (sharded) md << " (shard " << shard_index << "/" << shard_count << ": its trials only)";
  md << "\n\n";
  if (interrupted || not_run > 0) {
    size_t in_slice = 0;
    for (const auto& tr : all) in_slice += tr.in_slice;
    md << "**Interrupted**: " << not_run << " of " << in_slice
       << " trials never ran (cells marked `-`), and the trials that were running were cut short "
          "(their verdicts are unknown unless a violation was already seen). This matrix is "
          "incomplete.\n\n";
  }
  md << "Seed " << plan.seed << ", " << (plan.full ? "full" : "quick") << " mode, " << plan.trials
     << " trial(s) per cell, " << plan.jobs << " at a time, " << static_cast<int>(elapsed_s)
     << " s. Each cell: the verdict found in the histories (V violated, L stuck, S safe, ? unknown),"
        " violated trials / trials, and the median time to the first violation. `rS` marks a lock"
        " whose holders overlapped while the resource stayed intact (fencing).";
  if (!plan.expect_path.empty()) md << " `≠ X` marks a cell that disagrees with the expectation X.";
  md << "\n\n| lock |";
  for (const auto& f : plan.cols) md << " " << f << " |";
  md << "\n|---|";
  for (size_t i = 0; i < plan.cols.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& lock : plan.lock_ids) {
    md << "| `" << lock << "` |";
    for (const auto& f : plan.cols) {
      const Cell& c = *std::find_if(cells.begin(), cells.end(),
                                    [&](const Cell& x) { return x.lock == lock && x.fault == f; });
      md << " ";
      if (!c.applicable) {
        md << "n/a |";
        continue;
      }
      md << "**" << c.verdict << "**";
      if (c.verdict == "V" && c.resource == "S") md << " rS";
      md << " " << c.violated << "/" << c.trials.size();
      if (c.median_first_violation_ms >= 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), " @%.1fs", c.median_first_violation_ms / 1000.0);
        md << buf;
      }
      if (c.not_run > 0) md << " (" << c.not_run << " not run)";
      if (c.mismatch) md << " ≠" << (c.expected.empty() ? "r" + c.expected_resource : c.expected);
      if (c.untrusted > 0) md << " ~";
      md << " |";
    }
    md << "\n";
  }
  if (!plan.expect_path.empty()) {
    md << "\n" << mismatches << " cell(s) disagree with " << plan.expect_path << ".\n";
  }
  // Coverage: a fault that never bit proves nothing; say where it happened and why a cell
  // could not be judged.
  int applicable_faulted = 0, all_bit = 0;
  std::string unknowns;
  for (const auto& c : cells) {
    if (!c.applicable || c.trials.empty()) continue;
    if (c.fault != "none") {
      ++applicable_faulted;
      all_bit += c.fault_bit == static_cast<int>(c.trials.size());
    }
    if (!c.unknown_reason.empty()) {
      unknowns += "- `" + c.lock + "` x " + c.fault + ": " + c.unknown_reason + "\n";
    }
  }
  if (applicable_faulted > 0) {
    md << "\nCoverage: the fault bit in every trial of " << all_bit << " of " << applicable_faulted
       << " faulted cells (a window opened while the lock was in use; results.json coverage).\n";
  }
  if (!unknowns.empty()) md << "\nNot judged (unknown trials, first reason per cell):\n\n" << unknowns;
  if (untrusted_trials > 0) {
    // The verdicts stay what the histories show; the reader is told which timings the lab
    // itself bent (workloads/lag_meter.h).
    char buf[64];
    snprintf(buf, sizeof(buf), "%.0f", worst_lag_ms);
    md << "\n`~`: " << untrusted_trials << " trial(s) ran with the lab's own sleeps up to " << buf
       << " ms late, more than a tenth of their TTL: the machine was overloaded (fewer --jobs, or"
          " a quieter machine), and a violation in those cells may owe to the lab, not the fault"
          " (results.json lab_lag).\n";
    std::cerr << "locklab matrix: warning: " << untrusted_trials << " trial(s) ran with the lab up to "
              << buf << " ms late; their cells are marked ~ in matrix.md\n";
  }
  if (shard_count == 1) {
    // How often these cells find their verdict across seeds (measured, checked in beside
    // the presets): one run's table cannot say it.
    std::vector<std::pair<std::string, std::string>> shown;
    for (const auto& c : cells) {
      if (c.applicable) shown.push_back({c.lock, c.fault});
    }
    // The figures belong to the presets they were measured with: a --scenarios directory
    // shows its own file or none.
    md << DetectionPowerMarkdown(plan.preset_dir + "/detection-power.json", shown,
                                 plan.full ? "full" : "quick");
  }
  Status w = WriteFile(dir + "/matrix.md", md.str());
  if (written->ok()) *written = w;

  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& c : cells) {
    if (!c.applicable || (sharded && c.trials.empty())) continue;
    std::string msg = c.lock + " under " + c.fault + ": " + c.verdict + " (" +
                      std::to_string(c.violated) + "/" + std::to_string(c.trials.size()) + " violated)";
    if (c.mismatch) msg += ", expected " + c.expected + (c.expected_resource.empty() ? "" : " resource " + c.expected_resource) + " (" + c.origin + ")";
    if (c.not_run > 0) msg += ", " + std::to_string(c.not_run) + " trial(s) not run (interrupted)";
    checks.push_back({{"name", c.lock + " x " + c.fault}, {"ok", !c.mismatch && c.unknown == 0 && c.not_run == 0}, {"message", msg}});
  }
  w = WriteFile(dir + "/junit.xml", JunitXml("matrix", checks, elapsed_s));
  if (written->ok()) *written = w;
  std::cout << md.str();
  return mismatches;
}

}  // namespace

int RunMatrixCommand(const std::vector<std::string>& args) {
  std::vector<std::string> lock_ids, fault_ids;
  std::map<std::string, std::vector<std::string>> driver_args;  // per driver:PATH lock
  // 6 at a time: on 2 cores the quick matrix uses about 0.4 cores at 4 (trials mostly wait),
  // and bench/matrix_parallelism measured the lab's own lag at --jobs 1/2/4/6/8 as p99
  // 0.4/0.5/1.4/2.2/4.0 ms (max 13 ms), far below the 50 ms a 500 ms TTL tolerates, with no
  // lag-driven verdict flip. Every trial still checks its own lag (lab_lag).
  int trials = 0, jobs = 6, shard_index = 1, shard_count = 1;
  bool full = false, report = true;
  uint64_t seed = 0;
  std::string out = "runs", expect_path;
  std::string preset_dir = kDefaultPresetDir;
  std::vector<std::string> endpoints;
  std::string endpoint_control;  // --endpoint-control: node clock faults run too
  bool jobs_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quick") { full = false; continue; }
    if (a == "--full") { full = true; continue; }
    if (a == "--no-report") { report = false; continue; }
    if (i + 1 >= args.size()) {
      std::cerr << "locklab matrix: " << (a.rfind("--", 0) == 0 ? "flag " + a + " needs a value" : "unknown argument " + a) << "\n";
      return 64;
    }
    const std::string& v = args[++i];
    auto number = [&](int64_t lo, int64_t hi, int64_t* n) {
      Status s = ParseIntFlag("matrix", a, v, lo, hi, n);
      if (!s.ok()) std::cerr << "locklab " << s.message() << "\n";
      return s.ok();
    };
    int64_t n = 0;
    if (a == "--endpoints") {
      endpoints = Split(v);
      std::string host, error;
      int port = 0;
      for (const auto& e : endpoints) {
        if (!ParseRedisUrl(e, &host, &port, &error)) {
          std::cerr << "locklab matrix: flag --endpoints: " << error << "\n";
          return 64;
        }
      }
      if (endpoints.empty()) {
        std::cerr << "locklab matrix: flag --endpoints: expected redis://host:port,...\n";
        return 64;
      }
    }
    else if (a == "--endpoint-control") endpoint_control = v;
    else if (a == "--locks") {
      for (const auto& id : Split(v)) lock_ids.push_back(id);
    } else if (a == "--lock") {
      lock_ids.push_back(v);  // one id (a driver path may contain commas)
    } else if (a == "--driver-arg") {
      if (lock_ids.empty() || !locks::IsDriverId(lock_ids.back())) {
        std::cerr << "locklab matrix: flag --driver-arg: must follow --lock driver:PATH\n";
        return 64;
      }
      driver_args[lock_ids.back()].push_back(v);
    }
    else if (a == "--faults") fault_ids = Split(v);
    else if (a == "--out") out = v;
    else if (a == "--expect") expect_path = v;
    else if (a == "--scenarios") preset_dir = v;
    else if (a == "--trials") { if (!number(1, 1000, &n)) return 64; trials = static_cast<int>(n); }
    else if (a == "--jobs") { if (!number(1, 64, &n)) return 64; jobs = static_cast<int>(n); jobs_given = true; }
    else if (a == "--seed") { if (!number(1, INT64_MAX, &n)) return 64; seed = static_cast<uint64_t>(n); }
    else if (a == "--shard") {
      if (!ParseShard(v, &shard_index, &shard_count)) {
        std::cerr << "locklab matrix: flag --shard: '" << v << "' is not I/N with 1 <= I <= N <= 10000\n";
        return 64;
      }
    }
    else {
      std::cerr << "locklab matrix: unknown flag " << a << "\n";
      return 64;
    }
  }
  if (trials == 0) trials = full ? 3 : 1;
  if (seed == 0) {
    if (shard_count > 1) {
      // Shards on different machines must draw the same trial seeds.
      std::cerr << "locklab matrix: flag --shard: needs --seed N (every shard must use the same seed)\n";
      return 64;
    }
    seed = std::stoull(RandomToken().substr(0, 10), nullptr, 16) + 1;  // 40 bits
  }

  std::vector<Preset> presets;
  Status s = LoadPresets(preset_dir, &presets);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  if (lock_ids.empty()) {
    for (const auto& l : locks::ListLocks()) lock_ids.push_back(l.id);
    for (const auto& d : kExampleDrivers) lock_ids.push_back(d);
  }
  for (const auto& id : lock_ids) {
    if (!locks::FindLock(id)) {
      std::cerr << "locklab matrix: flag --locks: unknown lock '" << id << "'\n";
      return 64;
    }
    std::string resolved;
    Status ds = ResolveDriverPath(id, &resolved);
    if (!ds.ok()) {
      std::cerr << "locklab matrix: flag --lock: " << ds.message() << "\n";
      return 64;
    }
  }
  if (!fault_ids.empty()) {
    std::vector<Preset> kept;
    for (const auto& id : fault_ids) {
      auto it = std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.fault == id; });
      if (it == presets.end()) {
        std::cerr << "locklab matrix: flag --faults: no cell scenario '" << id << "' in " << preset_dir << "\n";
        return 64;
      }
      kept.push_back(*it);
    }
    presets = kept;
  }
  if (!endpoints.empty()) {
    // Your own servers: only client-side faults. Named ones that need the servers are
    // refused; by default the matrix keeps its client-side columns.
    std::string refused;
    std::vector<Preset> kept;
    for (const auto& p : presets) {
      bool client_side = true;
      for (const auto& f : p.options.faults) {
        client_side = client_side && (faults::IsClientSideFault(f.id) ||
                                      (faults::IsNodeControlFault(f.id) && !endpoint_control.empty()));
      }
      if (client_side) kept.push_back(p);
      else refused += (refused.empty() ? "" : ", ") + p.fault;
    }
    if (!refused.empty() && !fault_ids.empty()) {
      std::cerr << "locklab matrix: flag --endpoints: fault(s) " << refused
                << " need control of the servers; against your own servers only client-side faults run\n";
      return 64;
    }
    if (!refused.empty()) {
      std::cerr << "locklab matrix: --endpoints: leaving out the faults that need control of the servers ("
                << refused << ")\n";
    }
    presets = kept;
    // Trials against one set of servers share its keys: one at a time.
    if (jobs_given && jobs > 1) {
      std::cerr << "locklab matrix: flag --jobs: trials against --endpoints run one at a time (they share the servers' keys)\n";
      return 64;
    }
    jobs = 1;
  }
  std::map<std::pair<std::string, std::string>, Expectation> expectations;
  if (!expect_path.empty()) {
    s = LoadExpectations(expect_path, &expectations);
    if (!s.ok()) {
      std::cerr << "locklab matrix: " << s.message() << "\n";
      return s.ExitCode();
    }
  }

  // Cells and their trials (full mode: 3 trials per cell instead of 1). Every trial's seed
  // is drawn here for the whole matrix, before any slicing: trial n has the same seed in a
  // whole run and in any shard of any shard count.
  Plan plan;
  plan.seed = seed;
  plan.full = full;
  plan.trials = trials;
  plan.jobs = jobs;
  plan.lock_ids = lock_ids;
  plan.expect_path = expect_path;
  plan.preset_dir = preset_dir;
  for (const auto& p : presets) plan.cols.push_back(p.fault);
  auto& cells = plan.cells;
  auto& all = plan.all;
  Rng seeds(seed);
  for (const auto& lock_id : lock_ids) {
    const locks::LockInfo& info = *locks::FindLock(lock_id);
    for (const auto& p : presets) {
      Cell c;
      c.lock = lock_id;
      c.fault = p.fault;
      auto da = driver_args.find(lock_id);
      RunOptions o = ForLock(p, lock_id, info, da == driver_args.end() ? std::vector<std::string>{} : da->second,
                             full, &c);
      if (!endpoints.empty()) {
        // Lock nodes first, then the resource: a lock of N nodes takes the first N endpoints
        // and, when more are given, the last one for the resource (else n1 holds it).
        int need = o.nodes, given = static_cast<int>(endpoints.size());
        if (info.backend != "redis") {
          c.applicable = false;
          c.why_not = lock_id + " runs on " + info.backend +
                      " servers the lab starts; --endpoints gives Redis servers";
        } else if (given < need) {
          c.applicable = false;
          c.why_not = lock_id + " needs " + std::to_string(need) + " endpoints, --endpoints gives " +
                      std::to_string(given);
        } else {
          o.endpoints.assign(endpoints.begin(), endpoints.begin() + need);
          if (given > need) o.endpoints.push_back(endpoints.back());
          o.endpoints_origin = "flag --endpoints";
          o.endpoint_control = endpoint_control;
        }
      }
      auto e = expectations.find({c.lock, c.fault});
      if (e != expectations.end()) {
        c.expected = e->second.verdict;
        c.expected_resource = e->second.resource;
        c.origin = e->second.origin;
      }
      size_t ci = cells.size();
      for (int t = 0; t < trials; ++t) {
        // 62 bits: a seed must fit a TOML integer in the trial's scenario file.
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
  // Shard I of N runs trials I-1, I-1+N, I-1+2N, ... of the whole run's order: round robin,
  // so every shard gets a mix of locks and faults and about the same work.
  std::vector<size_t> mine;
  for (size_t n = 0; n < all.size(); ++n) {
    all[n].in_slice = static_cast<int>(n % shard_count) == shard_index - 1;
    if (all[n].in_slice) mine.push_back(n);
  }

  std::string matrix_dir;
  s = CreateRunDir(out, shard_count > 1 ? "matrix-shard-" + std::to_string(shard_index) : "matrix",
                   seed, &matrix_dir);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  MakeDirs(matrix_dir + "/cells");
  for (auto& tr : all) tr.options.out_dir = matrix_dir + "/cells";
  InstallInterruptHandlers();
  if (shard_count > 1) {
    std::cerr << "locklab matrix: shard " << shard_index << "/" << shard_count << ": " << mine.size()
              << " of " << all.size() << " trials (plan " << plan.id << ")\n";
  }

  // Run `jobs` trials at a time, each a child `locklab run` on its own scenario file.
  bool tty = isatty(2);
  Nanos t0 = MonotonicNow();
  size_t next = 0, finished = 0, running = 0;
  std::map<std::string, int> tally;
  std::string exe = SelfExe();
  int infra_failures = 0;
  auto progress = [&](const Trial& tr) {
    const Cell& c = cells[tr.cell];
    std::string v = tr.results.is_object() ? tr.results.value("verdict", std::string("?")) : "error";
    std::ostringstream line;
    line << "[" << finished << "/" << mine.size() << "] " << c.lock << " x " << c.fault << " trial "
         << (tr.index + 1) << ": " << v << "  (" << static_cast<int>(ToMillis(MonotonicNow() - t0) / 1000)
         << " s; violated " << tally["violated"] << ", safe " << tally["safe"] << ", other "
         << tally["unknown"] + tally["error"] << ")";
    if (tty) std::cerr << "\r\033[K" << line.str() << std::flush;
    else std::cerr << "locklab matrix: " << line.str() << "\n";
  };
  Status io_error;  // a cell's scenario could not be written (a full disk): no more trials
  while (finished < mine.size()) {
    while (running < static_cast<size_t>(jobs) && next < mine.size() && !Interrupted() && io_error.ok()) {
      Trial& tr = all[mine[next]];
      std::string scenario = matrix_dir + "/cells/" + tr.options.name + "-" + std::to_string(tr.index + 1) + ".toml";
      io_error = WriteFile(scenario, ScenarioToToml(tr.options));
      if (!io_error.ok()) break;
      tr.log = scenario.substr(0, scenario.size() - 5) + ".log";
      SpawnOptions so;
      so.argv = {exe, "run", scenario, "--no-report", "--out", tr.options.out_dir};
      so.log_path = tr.log;
      Status ss = Spawn(so, &tr.pid);
      if (!ss.ok()) {
        tr.done = true;
        ++finished;
        ++infra_failures;
        std::cerr << (tty ? "\n" : "") << "locklab matrix: trial not started: " << scenario << ": "
                  << ss.message() << "\n";
      } else {
        ++running;
      }
      ++next;
    }
    if ((Interrupted() || !io_error.ok()) && running == 0) break;
    if (Interrupted()) {
      for (auto& tr : all) {
        if (tr.pid > 0 && !tr.done) kill(tr.pid, SIGINT);  // each trial heals and keeps its history
      }
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (auto& tr : all) {
      if (tr.pid != pid || tr.done) continue;
      tr.done = true;
      --running;
      ++finished;
      std::smatch m;
      std::string log = ReadAll(tr.log);
      static const std::regex re("run: (\\S+)");
      if (std::regex_search(log, m, re)) {
        tr.results = nlohmann::ordered_json::parse(ReadAll(m[1].str() + "/results.json"), nullptr, false);
        if (tr.results.is_discarded()) tr.results = nlohmann::ordered_json();
      }
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      tr.ran = tr.results.is_object() && code < 64;
      if (!tr.ran) {
        ++infra_failures;
        std::cerr << (tty ? "\n" : "") << "locklab matrix: trial failed: " << tr.log << "\n";
      }
      tally[tr.ran && tr.results.is_object() ? tr.results.value("verdict", std::string("unknown")) : "error"]++;
      progress(tr);
    }
  }
  if (tty) std::cerr << "\n";

  for (size_t n : mine) all[n].not_run = !all[n].done;
  if (!io_error.ok()) {  // a full disk: the one line that matters (exit 70)
    std::cerr << (tty ? "\n" : "") << "locklab matrix: " << io_error.message() << "\n";
    return io_error.ExitCode();
  }
  Status written;
  int mismatches = WriteMatrix(plan, matrix_dir, ToMillis(MonotonicNow() - t0) / 1000.0,
                               shard_index, shard_count, nlohmann::ordered_json(), Interrupted(),
                               &written);
  if (!written.ok()) {
    std::cerr << "locklab matrix: " << written.message() << "\n";
    return written.ExitCode();
  }
  std::cout << "\nmatrix: " << matrix_dir << "/matrix.md (matrix.json, junit.xml; trial runs under "
            << matrix_dir << "/cells)\n";
  // The script prints the `report: PATH` line itself (and makes the violated and stuck
  // trials' reports; the safe ones' on demand, `locklab report TRIAL_DIR`).
  if (report && !Interrupted()) RunReportScript({"--matrix", matrix_dir, "--no-trials"});
  if (Interrupted()) return 2;
  if (infra_failures > 0) return 69;
  if (shard_count > 1) return 0;  // expectations are judged on the merged matrix
  return mismatches > 0 ? 1 : 0;
}

int RunMergeCommand(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out = "runs";
  bool report = true;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--no-report") {
      report = false;
    } else if (args[i] == "--out") {
      if (i + 1 >= args.size()) {
        std::cerr << "locklab merge: flag --out needs a value\n";
        return 64;
      }
      out = args[++i];
    } else if (args[i].rfind("--", 0) == 0) {
      std::cerr << "locklab merge: unknown flag " << args[i] << "\n";
      return 64;
    } else {
      dirs.push_back(args[i]);
    }
  }
  if (dirs.empty()) {
    std::cerr << "locklab merge: needs the matrix directories of the shards (locklab merge DIR... [--out DIR])\n";
    return 64;
  }
  // Read every shard and check they are the shards of one matrix, each once, none missing.
  std::vector<nlohmann::ordered_json> shards;
  std::map<int, std::string> by_index;
  int count = 0;
  std::string id;
  for (const auto& d : dirs) {
    std::string path = d + "/matrix.json";
    std::string text = ReadAll(path);
    auto j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (text.empty() || j.is_discarded() || !j.is_object() || !j.contains("plan") ||
        !j["plan"].is_object() || !j.contains("trial_records") || !j.contains("cells")) {
      std::cerr << "locklab merge: " << path << ": not a matrix.json written by `locklab matrix` (no plan)\n";
      return 64;
    }
    try {
      int index = j.contains("shard") ? j["shard"]["index"].get<int>() : 1;
      int n = j.contains("shard") ? j["shard"]["count"].get<int>() : 1;
      std::string this_id = j["plan"]["id"].get<std::string>();
      auto describe = [](const nlohmann::ordered_json& m) {
        std::ostringstream o;
        o << "seed " << m["seed"].dump() << ", " << m["mode"].get<std::string>() << ", "
          << m["trials_per_cell"].dump() << " trial(s) per cell, locks "
          << m["plan"]["locks"].size() << ", faults " << m["plan"]["faults"].size() << ", plan "
          << m["plan"]["id"].get<std::string>();
        return o.str();
      };
      if (shards.empty()) {
        count = n;
        id = this_id;
      } else if (this_id != id || n != count) {
        std::cerr << "locklab merge: " << d << " is not a shard of the same matrix as " << dirs[0]
                  << " (" << describe(j) << " of " << n << " shard(s) vs " << describe(shards[0])
                  << " of " << count << ")\n";
        return 64;
      }
      if (by_index.count(index)) {
        std::cerr << "locklab merge: shard " << index << "/" << count << " given twice: "
                  << by_index[index] << " and " << d << "\n";
        return 64;
      }
      by_index[index] = d;
    } catch (const nlohmann::json::exception& e) {
      std::cerr << "locklab merge: " << path << ": malformed matrix.json (" << e.what() << ")\n";
      return 64;
    }
    shards.push_back(std::move(j));
  }
  std::vector<std::string> missing;
  for (int i = 1; i <= count; ++i) {
    if (!by_index.count(i)) missing.push_back(std::to_string(i) + "/" + std::to_string(count));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    std::cerr << "locklab merge: missing shard(s) " << list << " of plan " << id << "\n";
    return 64;
  }

  // Rebuild the plan from the first shard, then put every shard's trials back in place.
  Plan plan;
  const auto& first = shards[0];
  double elapsed = 0;
  nlohmann::ordered_json from = nlohmann::ordered_json::array();
  try {
    plan.seed = first["seed"].get<uint64_t>();
    plan.full = first["mode"].get<std::string>() == "full";
    plan.trials = first["trials_per_cell"].get<int>();
    plan.jobs = first["jobs"].get<int>();
    plan.lock_ids = first["plan"]["locks"].get<std::vector<std::string>>();
    plan.cols = first["plan"]["faults"].get<std::vector<std::string>>();
    plan.expect_path = first["plan"]["expect"].get<std::string>();
    plan.preset_dir = first["plan"].value("presets", kDefaultPresetDir);
    plan.id = id;
    for (const auto& cj : first["cells"]) {
      Cell c;
      c.lock = cj["algorithm"].get<std::string>();
      c.fault = cj["faults"].get<std::string>();
      c.applicable = !cj.contains("why_not");
      if (!c.applicable) {
        c.why_not = cj["why_not"].get<std::string>();
        c.verdict = "n/a";
      }
      c.expected = cj.value("expected", std::string());
      c.expected_resource = cj.value("expected_resource", std::string());
      c.origin = cj.value("expected_origin", std::string());
      plan.cells.push_back(std::move(c));
    }
    size_t total = first["plan"]["trial_count"].get<size_t>();
    plan.all.resize(total);
    std::vector<bool> seen(total, false);
    for (const auto& j : shards) {
      elapsed = std::max(elapsed, j["elapsed_s"].get<double>());
      for (const auto& r : j["trial_records"]) {
        size_t n = r["n"].get<size_t>();
        size_t cell = r["cell"].get<size_t>();
        if (n >= total || seen[n] || cell >= plan.cells.size()) {
          std::cerr << "locklab merge: trial " << n << " appears twice or out of range (plan " << id << ")\n";
          return 64;
        }
        seen[n] = true;
        Trial& tr = plan.all[n];
        tr.cell = cell;
        tr.index = r["trial"].get<int>();
        tr.options.seed = r["seed"].get<uint64_t>();
        tr.ran = r["ran"].get<bool>();
        int at = r["results"].get<int>();
        if (at >= 0) tr.results = j["trials"].at(static_cast<size_t>(at));
      }
    }
    for (size_t n = 0; n < total; ++n) {
      if (!seen[n]) {
        std::cerr << "locklab merge: trial " << n << " of plan " << id
                  << " is in no shard (a shard was interrupted?)\n";
        return 64;
      }
      plan.cells[plan.all[n].cell].trials.push_back(n);
    }
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "locklab merge: " << dirs[0] << "/matrix.json: malformed (" << e.what() << ")\n";
    return 64;
  }
  for (const auto& [index, d] : by_index) from.push_back(d);

  std::string merged_dir;
  Status s = CreateRunDir(out, "matrix", plan.seed, &merged_dir);
  if (!s.ok()) {
    std::cerr << "locklab merge: " << s.message() << "\n";
    return s.ExitCode();
  }
  int failed = 0;
  for (const auto& tr : plan.all) failed += !tr.ran;
  Status written;
  int mismatches = WriteMatrix(plan, merged_dir, elapsed, 1, 1, from, false, &written);
  if (!written.ok()) {
    std::cerr << "locklab merge: " << written.message() << "\n";
    return written.ExitCode();
  }
  std::cout << "\nmatrix: " << merged_dir << "/matrix.md (matrix.json, junit.xml; merged from "
            << shards.size() << " shard(s), trial runs under their cells/)\n";
  if (report) RunReportScript({"--matrix", merged_dir, "--no-trials"});  // prints `report: PATH`
  if (failed > 0) return 69;
  return mismatches > 0 ? 1 : 0;
}

}  // namespace locklab::harness
