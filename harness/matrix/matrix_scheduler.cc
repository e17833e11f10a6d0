#include "harness/matrix/matrix_scheduler.h"

#include <unistd.h>

#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/clock.h"
#include "checker/verdict.h"
#include "harness/trial/child_runs.h"
#include "harness/scenario/run_options.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {

ScheduleResult RunTrials(Plan* plan, const std::vector<size_t>& slice,
                         const std::string& matrix_dir, int jobs) {
  ScheduleResult result;
  bool tty = isatty(2);
  Nanos t0 = MonotonicNow();
  auto& all = plan->all;
  std::map<std::optional<checker::Verdict>, int> tally;  // nullopt: the trial did not run
  std::vector<ChildRun> runs(slice.size());
  std::vector<ChildRun*> order;
  for (size_t i = 0; i < slice.size(); ++i) {
    const PlannedTrial& tr = all[slice[i]];
    runs[i].options = tr.options;
    runs[i].scenario_path =
        matrix_dir + "/cells/" + tr.options.name + "-" + std::to_string(tr.index + 1) + ".toml";
    order.push_back(&runs[i]);
  }
  result.io_error = RunChildren(order, jobs, [&](const ChildRun& r, size_t finished) {
    PlannedTrial& tr = all[slice[&r - runs.data()]];
    tr.log = r.log;
    tr.pid = r.pid;
    tr.done = true;
    tr.ran = r.ran;
    tr.results = r.results;
    if (!r.ran) {
      ++result.infra_failures;
      std::cerr << (tty ? "\n" : "") << "locklab matrix: trial failed: " << r.log << "\n";
    }
    const std::optional<checker::Verdict> verdict = r.Verdict();
    tally[verdict]++;
    const Cell& c = plan->cells[tr.cell];
    std::ostringstream line;
    line << "[" << finished << "/" << slice.size() << "] " << c.lock << " x " << c.fault
         << " trial " << (tr.index + 1) << ": "
         << (verdict ? checker::VerdictName(*verdict) : "error") << "  ("
         << static_cast<int>(ToMillis(MonotonicNow() - t0) / 1000) << " s; "
         << checker::VerdictName(checker::Verdict::kViolated) << " "
         << tally[checker::Verdict::kViolated] << ", "
         << checker::VerdictName(checker::Verdict::kSafe) << " " << tally[checker::Verdict::kSafe]
         << ", other " << tally[checker::Verdict::kUnknown] + tally[std::nullopt] << ")";
    if (tty)
      std::cerr << "\r\033[K" << line.str() << std::flush;
    else
      std::cerr << "locklab matrix: " << line.str() << "\n";
  });
  if (tty) std::cerr << "\n";
  for (size_t n : slice) all[n].not_run = !all[n].done;
  return result;
}

}  // namespace locklab::harness
