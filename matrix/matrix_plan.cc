#include "matrix/matrix_plan.h"

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
#include "matrix/matrix_scaling.h"
#include "locks/backend.h"
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

bool GlobMatches(std::string_view pattern, std::string_view id) {
  // Greedy with one backtrack point (the last `*`): linear enough for ids and patterns.
  size_t p = 0, i = 0, star = std::string_view::npos, star_i = 0;
  while (i < id.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_i = i;
    } else if (p < pattern.size() && pattern[p] == id[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++star_i;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool IsGlob(const std::string& pattern) { return pattern.find('*') != std::string::npos; }

// How specific an entry is (matrix_plan.h): exact fields first, then the glob fields'
// literal characters (all of them, not only those before the first `*`: "*-lua" is more
// specific than "*", which a catch-all added below it must not override); equal keys go to
// the later entry.
std::pair<int, size_t> Specificity(const Expectation& e) {
  int exact = 0;
  size_t literal = 0;
  for (const std::string* pattern : {&e.lock, &e.fault}) {
    if (IsGlob(*pattern)) literal += pattern->size() - std::count(pattern->begin(), pattern->end(), '*');
    else ++exact;
  }
  return {exact, literal};
}

// "N/M" with 0 <= N <= M, 1 <= M.
bool IsRate(const std::string& v) {
  size_t slash = v.find('/');
  if (slash == std::string::npos) return false;
  std::optional<int64_t> m = ParseInt(std::string_view(v).substr(slash + 1), 1, 1000000);
  return m && ParseInt(std::string_view(v).substr(0, slash), 0, *m).has_value();
}

}  // namespace

const Expectation* FindExpectation(const Expectations& expectations, const std::string& lock,
                                   const std::string& fault) {
  const Expectation* best = nullptr;
  std::pair<int, size_t> best_key;
  for (const auto& e : expectations) {
    if (!GlobMatches(e.lock, lock) || !GlobMatches(e.fault, fault)) continue;
    std::pair<int, size_t> key = Specificity(e);
    if (!best || key >= best_key) {  // >=: the later of two equal entries wins
      best = &e;
      best_key = key;
    }
  }
  return best;
}

Status LoadExpectations(const std::string& path, const std::set<std::string>& known_faults,
                        Expectations* out) {
  // Opened here, not by the TOML parser: its "File could not be opened" came with a line 0,
  // and a directory parsed as an empty file.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::BadInput(path + ": is a directory, not an expectation file");
  std::ifstream in(path);
  if (!in) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  toml::table root;
  try {
    root = toml::parse(in, path);
  } catch (const toml::parse_error& e) {
    return Status::BadInput(path + ":" + std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()));
  }
  // Anything but [[cell]] is a misspelling ([[cells]], a key above the first table) that
  // would otherwise pin nothing, silently.
  for (const auto& [key, value] : root) {
    if (key.str() != "cell") {
      return Status::BadInput(path + ":" + std::to_string(value.source().begin.line) + ": field '" +
                              std::string(key.str()) + "': unknown field (an expectation file holds "
                              "[[cell]] tables only)");
    }
  }
  // No [[cell]] at all pins nothing: the file --write-expect writes when no cell was judged.
  if (!root.contains("cell")) return Status::Ok();
  const toml::array* cells = root["cell"].as_array();
  if (!cells || !cells->is_array_of_tables()) {
    return Status::BadInput(path + ":" + std::to_string(root["cell"].node()->source().begin.line) +
                            ": field 'cell': expected [[cell]] tables");
  }
  static const std::set<std::string> kFields = {"lock",     "fault",       "verdict",
                                                "resource", "violated_in", "stuck_in"};
  for (const auto& node : *cells) {
    const toml::table* t = node.as_table();
    const std::string at = path + ":" + std::to_string(node.source().begin.line) + ": ";
    // A field's error names the field's own line (as a scenario file's does); the entry's
    // errors ("needs lock and fault") its [[cell]] line.
    auto bad = [&](const std::string& field, const std::string& what) {
      const toml::node* n = t->get(field);
      const std::string line = std::to_string(n ? n->source().begin.line : node.source().begin.line);
      return Status::BadInput(path + ":" + line + ": field 'cell." + field + "': " + what);
    };
    if (!t) return Status::BadInput(at + "field 'cell': expected a [[cell]] table");
    for (const auto& [key, value] : *t) {
      const std::string k(key.str());
      // A misspelt field would pin nothing, silently.
      if (!kFields.count(k)) {
        return bad(k, "unknown field (lock, fault, verdict, resource, violated_in, stuck_in)");
      }
      if (!value.is_string()) return bad(k, "expected a string");
    }
    auto field = [&](const char* k) {
      auto v = t->get_as<std::string>(k);
      return v ? v->get() : std::string();
    };
    Expectation e;
    e.lock = field("lock");
    e.fault = field("fault");
    if (e.lock.empty() || e.fault.empty()) {
      return Status::BadInput(at + "field 'cell': needs lock and fault");
    }
    e.verdict = field("verdict");
    e.resource = field("resource");
    e.violated_in = field("violated_in");
    e.stuck_in = field("stuck_in");
    if (!e.verdict.empty() && e.verdict != "S" && e.verdict != "V" && e.verdict != "L") {
      return bad("verdict", "expected S, V or L, got '" + e.verdict + "'");
    }
    if (!e.resource.empty() && e.resource != "S" && e.resource != "V") {
      return bad("resource", "expected S or V, got '" + e.resource + "'");
    }
    if (e.verdict.empty() && e.resource.empty()) {
      return Status::BadInput(at + "field 'cell': needs verdict and/or resource");
    }
    if (!e.violated_in.empty() && !IsRate(e.violated_in)) {
      return bad("violated_in", "expected N/M (trials), got '" + e.violated_in + "'");
    }
    if (!e.stuck_in.empty() && !IsRate(e.stuck_in)) {
      return bad("stuck_in", "expected N/M (trials), got '" + e.stuck_in + "'");
    }
    // A glob may match no cell of this run; an exact id names a lock or a fault column.
    if (!IsGlob(e.lock) && !locks::FindLock(e.lock)) {
      return bad("lock", "unknown lock '" + e.lock + "' (see `locklab list`; a glob uses *)");
    }
    if (!IsGlob(e.fault) && !known_faults.count(e.fault)) {
      return bad("fault", "unknown fault '" + e.fault + "' (no such fault or cell scenario; a glob uses *)");
    }
    e.origin = path + ":" + std::to_string(node.source().begin.line);
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

bool FailOn::Hits(const std::string& verdict) const {
  return (verdict == "V" && outcomes.count(CellOutcome::kViolated)) ||
         (verdict == "L" && outcomes.count(CellOutcome::kStuck)) ||
         (verdict == "?" && outcomes.count(CellOutcome::kUnknown));
}

namespace {
// A verdict's cell outcome is spelt as the verdict (VerdictName); stuck (L) is a cell's own.
const std::vector<std::pair<CellOutcome, std::string>> kOutcomeWords = {
    {CellOutcome::kViolated, std::string(checker::VerdictName(checker::Verdict::kViolated))},
    {CellOutcome::kStuck, "stuck"},
    {CellOutcome::kUnknown, std::string(checker::VerdictName(checker::Verdict::kUnknown))}};
}  // namespace

std::string FailOn::ToString() const {
  std::string out;
  for (const auto& [outcome, word] : kOutcomeWords) {
    if (outcomes.count(outcome)) out += (out.empty() ? "" : ",") + word;
  }
  return out;
}

std::string ParseFailOn(const std::string& words, FailOn* out) {
  FailOn parsed;
  std::stringstream ss(words);
  std::string word;
  while (std::getline(ss, word, ',')) {
    auto it = std::find_if(kOutcomeWords.begin(), kOutcomeWords.end(),
                           [&](const auto& w) { return w.second == word; });
    if (it == kOutcomeWords.end()) {
      return "'" + word + "' is not one of violated, stuck, unknown";
    }
    if (!parsed.outcomes.insert(it->first).second) return "'" + word + "' given twice";
  }
  if (parsed.empty()) return "expected violated, stuck and/or unknown, comma-separated";
  *out = parsed;
  return "";
}

namespace {

// A driver row's start_timeout_ms in the matrix (see ForLock).
constexpr Millis kMatrixDriverStartTimeout{20000};

// A lab for `lock` running this preset: the lock swapped in, node lists cut to its nodes.
RunOptions ForLock(const Preset& p, const std::string& lock_id, const locks::LockInfo& lock,
                   const std::vector<std::string>& driver_args,
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
    // The hello the matrix read for the row: each trial starts the servers it asks for
    // without starting the driver once more to ask (0.1 to 2 s a trial, a JVM's start for a
    // Java driver); its clients check that their drivers still say it.
    if (servers.probed && !servers.hello_line.empty()) o.knobs.emplace("hello", servers.hello_line);
  }
  // A driver row runs every fault that applies to its servers, as any lock does: which
  // faults apply is a fact of the fault and the backend (DriverFaultWhyNot), not of the
  // lock being a driver.
  for (auto& f : o.faults) {
    if (!locks::FaultApplies(lock, f.id)) {
      cell->applicable = false;
      cell->why_not = "fault " + f.id + " does not apply to " + lock.id + " (its LockInfo)";
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
