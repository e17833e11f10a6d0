#include "harness/matrix.h"

#include <iostream>
#include <map>
#include <sstream>

#include "faults/fault.h"
#include "harness/report_command.h"
#include "harness/run_store.h"
#include "harness/runner.h"
#include "locks/lock.h"

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

}  // namespace

int RunMatrixCommand(const std::vector<std::string>& args) {
  std::vector<std::string> locks_ids, fault_ids;
  for (const auto& l : locks::ListLocks()) locks_ids.push_back(l.id);
  for (const auto& f : faults::ListFaults()) fault_ids.push_back(f.id);
  int trials = 1;
  bool quick = false;
  std::string out = "runs";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quick") {
      quick = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      std::cerr << "locklab matrix: flag " << a << " needs a value (or unknown flag)\n";
      return 64;
    }
    const std::string& v = args[++i];
    if (a == "--locks") locks_ids = Split(v);
    else if (a == "--faults") fault_ids = Split(v);
    else if (a == "--out") out = v;
    else if (a == "--trials") {
      try {
        trials = std::stoi(v);
      } catch (...) {
        trials = 0;
      }
      if (trials < 1 || trials > 1000) {
        std::cerr << "locklab matrix: flag --trials: '" << v << "' is not a number in [1, 1000]\n";
        return 64;
      }
    } else {
      std::cerr << "locklab matrix: unknown flag " << a << "\n";
      return 64;
    }
  }
  for (const auto& id : locks_ids) {
    if (!locks::FindLock(id)) {
      std::cerr << "locklab matrix: flag --locks: unknown lock '" << id << "'\n";
      return 64;
    }
  }
  for (const auto& id : fault_ids) {
    bool known = false;
    for (const auto& f : faults::ListFaults()) known = known || f.id == id;
    if (!known) {
      std::cerr << "locklab matrix: flag --faults: unknown fault '" << id << "'\n";
      return 64;
    }
  }
  std::string matrix_dir;
  Status s = CreateRunDir(out, "matrix", 0, &matrix_dir);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> verdicts;
  int worst = 0;
  int cell = 0, cells = static_cast<int>(locks_ids.size() * fault_ids.size());
  for (const auto& lock : locks_ids) {
    for (const auto& fault : fault_ids) {
      ++cell;
      for (int t = 0; t < trials; ++t) {
        if (Interrupted()) break;
        RunOptions o;
        o.lock = lock;
        if (fault != "none") {
          faults::FaultOptions f;
          f.id = fault;
          f.duration = Millis(1200);
          f.first_at = Millis(500);
          f.interval = Millis(1000);
          o.faults.push_back(f);
        }
        o.name = lock + "--" + fault;
        o.out_dir = matrix_dir;
        o.duration = Millis(quick ? 5000 : 10000);
        o.ttl = Millis(500);
        o.hold = Millis(100);
        std::cerr << "locklab matrix: cell " << cell << "/" << cells << " " << o.name
                  << " trial " << (t + 1) << "/" << trials << "\n";
        TrialResult r = RunTrial(o, /*quiet=*/true);
        if (!r.status.ok()) {
          std::cerr << "locklab matrix: " << r.status.message() << "\n";
          worst = std::max(worst, r.status.ExitCode());
        }
        std::string verdict = r.results.value("verdict", std::string("unknown"));
        verdicts[{lock, fault}].push_back(verdict);
        all.push_back(r.results);
        std::cerr << "locklab matrix:   -> " << verdict << " (" << r.run_dir << ")\n";
      }
    }
  }
  std::ostringstream md;
  md << "| lock |";
  for (const auto& f : fault_ids) md << " " << f << " |";
  md << "\n|---|";
  for (size_t i = 0; i < fault_ids.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& lock : locks_ids) {
    md << "| `" << lock << "` |";
    for (const auto& fault : fault_ids) {
      const auto& v = verdicts[{lock, fault}];
      int violated = 0, safe = 0;
      for (const auto& x : v) {
        violated += x == "violated";
        safe += x == "safe";
      }
      std::string cellv = violated ? "V" : (safe == static_cast<int>(v.size()) && !v.empty() ? "S" : "?");
      md << " " << cellv << " (" << violated << "/" << v.size() << " violated) |";
    }
    md << "\n";
  }
  WriteFile(matrix_dir + "/matrix.json", all.dump(2) + "\n");
  WriteFile(matrix_dir + "/matrix.md", md.str());
  std::cout << md.str();
  if (!Interrupted() && RunReportScript({"--matrix", matrix_dir}) == 0) {
    std::cout << "report: " << matrix_dir << "/report/index.html\n";
  }
  std::cout << "matrix: " << matrix_dir << "/matrix.md (trial runs under " << matrix_dir << ")\n";
  if (Interrupted()) return 2;
  return worst >= 64 ? worst : 0;
}

}  // namespace locklab::harness
