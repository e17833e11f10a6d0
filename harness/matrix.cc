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
#include "harness/process.h"
#include "harness/report_command.h"
#include "harness/run_options.h"
#include "harness/run_store.h"
#include "harness/runner.h"
#include "locks/lock.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

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
};

struct Cell {
  std::string lock, fault;
  bool applicable = true;
  std::string why_not;
  std::vector<size_t> trials;
  std::string verdict = "?";     // S | V | L | ? | n/a
  std::string resource = "?";    // S | V | ?
  int violated = 0, stuck = 0, safe = 0, unknown = 0;
  double median_first_violation_ms = -1;
  std::string expected, expected_resource, origin;
  bool mismatch = false;
};

// A lab for `lock` running this preset: the lock swapped in, node lists cut to its nodes.
RunOptions ForLock(const Preset& p, const locks::LockInfo& lock, Cell* cell) {
  RunOptions o = p.options;
  o.lock = lock.id;
  o.nodes = lock.default_nodes;
  o.name = lock.id + "--" + p.fault;
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
  }
  return o;
}

}  // namespace

int RunMatrixCommand(const std::vector<std::string>& args) {
  std::vector<std::string> lock_ids, fault_ids;
  int trials = 0, jobs = 4;
  bool full = false, report = true;
  uint64_t seed = 0;
  std::string out = "runs", expect_path;
  std::string preset_dir = std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/matrix";
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
      try {
        size_t used = 0;
        *n = std::stoll(v, &used);
        if (used == v.size() && *n >= lo && *n <= hi) return true;
      } catch (...) {
      }
      std::cerr << "locklab matrix: flag " << a << ": '" << v << "' is not a number in [" << lo
                << ", " << hi << "]\n";
      return false;
    };
    int64_t n = 0;
    if (a == "--locks") lock_ids = Split(v);
    else if (a == "--faults") fault_ids = Split(v);
    else if (a == "--out") out = v;
    else if (a == "--expect") expect_path = v;
    else if (a == "--scenarios") preset_dir = v;
    else if (a == "--trials") { if (!number(1, 1000, &n)) return 64; trials = static_cast<int>(n); }
    else if (a == "--jobs") { if (!number(1, 64, &n)) return 64; jobs = static_cast<int>(n); }
    else if (a == "--seed") { if (!number(1, INT64_MAX, &n)) return 64; seed = static_cast<uint64_t>(n); }
    else {
      std::cerr << "locklab matrix: unknown flag " << a << "\n";
      return 64;
    }
  }
  if (trials == 0) trials = full ? 3 : 1;
  if (seed == 0) seed = std::stoull(RandomToken().substr(0, 10), nullptr, 16) + 1;  // 40 bits

  std::vector<Preset> presets;
  Status s = LoadPresets(preset_dir, &presets);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  if (lock_ids.empty()) {
    for (const auto& l : locks::ListLocks()) lock_ids.push_back(l.id);
  }
  for (const auto& id : lock_ids) {
    if (!locks::FindLock(id)) {
      std::cerr << "locklab matrix: flag --locks: unknown lock '" << id << "'\n";
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
  std::map<std::pair<std::string, std::string>, Expectation> expectations;
  if (!expect_path.empty()) {
    s = LoadExpectations(expect_path, &expectations);
    if (!s.ok()) {
      std::cerr << "locklab matrix: " << s.message() << "\n";
      return s.ExitCode();
    }
  }
  std::string matrix_dir;
  s = CreateRunDir(out, "matrix", seed, &matrix_dir);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  MakeDirs(matrix_dir + "/cells");
  InstallInterruptHandlers();

  // Cells and their trials (full mode: 3 trials per cell instead of 1).
  std::vector<Cell> cells;
  std::vector<Trial> all;
  Rng seeds(seed);
  for (const auto& lock_id : lock_ids) {
    const locks::LockInfo& info = *locks::FindLock(lock_id);
    for (const auto& p : presets) {
      Cell c;
      c.lock = lock_id;
      c.fault = p.fault;
      RunOptions o = ForLock(p, info, &c);
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
        tr.options.out_dir = matrix_dir + "/cells";
        c.trials.push_back(all.size());
        all.push_back(std::move(tr));
      }
      if (!c.applicable) c.verdict = "n/a";
      cells.push_back(std::move(c));
    }
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
    line << "[" << finished << "/" << all.size() << "] " << c.lock << " x " << c.fault << " trial "
         << (tr.index + 1) << ": " << v << "  (" << static_cast<int>(ToMillis(MonotonicNow() - t0) / 1000)
         << " s; violated " << tally["violated"] << ", safe " << tally["safe"] << ", other "
         << tally["unknown"] + tally["error"] << ")";
    if (tty) std::cerr << "\r\033[K" << line.str() << std::flush;
    else std::cerr << "locklab matrix: " << line.str() << "\n";
  };
  while (finished < all.size()) {
    while (running < static_cast<size_t>(jobs) && next < all.size() && !Interrupted()) {
      Trial& tr = all[next];
      std::string scenario = matrix_dir + "/cells/" + tr.options.name + "-" + std::to_string(tr.index + 1) + ".toml";
      WriteFile(scenario, ScenarioToToml(tr.options));
      tr.log = scenario.substr(0, scenario.size() - 5) + ".log";
      SpawnOptions so;
      so.argv = {exe, "run", scenario, "--no-report", "--out", tr.options.out_dir};
      so.log_path = tr.log;
      Status ss = Spawn(so, &tr.pid);
      if (!ss.ok()) {
        tr.done = true;
        ++finished;
        ++infra_failures;
      } else {
        ++running;
      }
      ++next;
    }
    if (Interrupted() && running == 0) break;
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

  // Cell verdicts from their trials.
  int mismatches = 0;
  for (auto& c : cells) {
    if (!c.applicable) continue;
    std::vector<double> firsts;
    int resource_bad = 0, resource_safe = 0;
    for (size_t ti : c.trials) {
      const auto& r = all[ti].results;
      std::string v = all[ti].ran ? r.value("verdict", std::string("unknown")) : "error";
      bool stuck = all[ti].ran && r.contains("liveness") && r["liveness"].value("stuck", false);
      if (v == "violated") ++c.violated;
      else if (stuck) ++c.stuck;
      else if (v == "safe") ++c.safe;
      else ++c.unknown;
      std::string rv = all[ti].ran ? r.value("resource_verdict", std::string("unknown")) : "unknown";
      resource_bad += rv == "violated";
      resource_safe += rv == "safe";
      if (r.is_object() && r.contains("first_violation_ms")) firsts.push_back(r["first_violation_ms"].get<double>());
    }
    int n = static_cast<int>(c.trials.size());
    c.verdict = c.violated ? "V" : c.stuck ? "L" : (c.safe == n && n > 0) ? "S" : "?";
    c.resource = resource_bad ? "V" : (resource_safe == n && n > 0) ? "S" : "?";
    if (!firsts.empty()) {
      std::sort(firsts.begin(), firsts.end());
      c.median_first_violation_ms = firsts[firsts.size() / 2];
    }
    if (!c.expected.empty() && c.expected != c.verdict) c.mismatch = true;
    if (!c.expected_resource.empty() && c.expected_resource != c.resource) c.mismatch = true;
    mismatches += c.mismatch;
  }

  // matrix.json, matrix.md, junit.xml.
  nlohmann::ordered_json j;
  j["seed"] = seed;
  j["mode"] = full ? "full" : "quick";
  j["trials_per_cell"] = trials;
  j["jobs"] = jobs;
  j["elapsed_s"] = ToMillis(MonotonicNow() - t0) / 1000.0;
  j["cells"] = nlohmann::ordered_json::array();
  for (const auto& c : cells) {
    nlohmann::ordered_json cj = {{"algorithm", c.lock}, {"faults", c.fault}, {"verdict", c.verdict},
                                 {"resource", c.resource}, {"trials", c.trials.size()},
                                 {"violated", c.violated}, {"stuck", c.stuck}, {"safe", c.safe},
                                 {"unknown", c.unknown}};
    cj["fraction_violated"] = c.trials.empty() ? 0.0 : static_cast<double>(c.violated) / c.trials.size();
    if (c.median_first_violation_ms >= 0) cj["median_first_violation_ms"] = c.median_first_violation_ms;
    if (!c.applicable) cj["why_not"] = c.why_not;
    if (!c.expected.empty() || !c.expected_resource.empty()) {
      cj["expected"] = c.expected;
      cj["expected_resource"] = c.expected_resource;
      cj["matches"] = !c.mismatch;
    }
    j["cells"].push_back(cj);
  }
  j["trials"] = nlohmann::ordered_json::array();
  for (const auto& tr : all) {
    if (tr.results.is_object()) j["trials"].push_back(tr.results);
  }
  WriteFile(matrix_dir + "/matrix.json", j.dump(2) + "\n");

  std::ostringstream md;
  md << "# Safety matrix\n\n";
  md << "Seed " << seed << ", " << (full ? "full" : "quick") << " mode, " << trials
     << " trial(s) per cell, " << jobs << " at a time, " << static_cast<int>(j["elapsed_s"].get<double>())
     << " s. Each cell: the verdict found in the histories (V violated, L stuck, S safe, ? unknown),"
        " violated trials / trials, and the median time to the first violation. `rS` marks a lock"
        " whose holders overlapped while the resource stayed intact (fencing).";
  if (!expectations.empty()) md << " `≠ X` marks a cell that disagrees with the expectation X.";
  md << "\n\n| lock |";
  std::vector<std::string> cols;
  for (const auto& p : presets) cols.push_back(p.fault);
  for (const auto& f : cols) md << " " << f << " |";
  md << "\n|---|";
  for (size_t i = 0; i < cols.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& lock : lock_ids) {
    md << "| `" << lock << "` |";
    for (const auto& f : cols) {
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
      if (c.mismatch) md << " ≠" << (c.expected.empty() ? "r" + c.expected_resource : c.expected);
      md << " |";
    }
    md << "\n";
  }
  if (!expectations.empty()) {
    md << "\n" << mismatches << " cell(s) disagree with " << expect_path << ".\n";
  }
  WriteFile(matrix_dir + "/matrix.md", md.str());

  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& c : cells) {
    if (!c.applicable) continue;
    std::string msg = c.lock + " under " + c.fault + ": " + c.verdict + " (" +
                      std::to_string(c.violated) + "/" + std::to_string(c.trials.size()) + " violated)";
    if (c.mismatch) msg += ", expected " + c.expected + (c.expected_resource.empty() ? "" : " resource " + c.expected_resource) + " (" + c.origin + ")";
    checks.push_back({{"name", c.lock + " x " + c.fault}, {"ok", !c.mismatch && c.unknown == 0}, {"message", msg}});
  }
  WriteFile(matrix_dir + "/junit.xml", JunitXml("matrix", checks, j["elapsed_s"].get<double>()));

  std::cout << md.str();
  std::cout << "\nmatrix: " << matrix_dir << "/matrix.md (matrix.json, junit.xml; trial runs under "
            << matrix_dir << "/cells)\n";
  if (report && !Interrupted() && RunReportScript({"--matrix", matrix_dir, "--no-trials"}) == 0) {
    std::cout << "report: " << matrix_dir << "/report/index.html\n";
  }
  if (Interrupted()) return 2;
  if (infra_failures > 0) return 69;
  return mismatches > 0 ? 1 : 0;
}

}  // namespace locklab::harness
