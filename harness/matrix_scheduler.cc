#include "harness/matrix_scheduler.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/exit_code.h"
#include "harness/process.h"
#include "harness/run_options.h"
#include "harness/run_store.h"
#include "harness/runner.h"

namespace locklab::harness {

ScheduleResult RunTrials(Plan* plan, const std::vector<size_t>& slice, const std::string& matrix_dir,
                         int jobs) {
  ScheduleResult result;
  bool tty = isatty(2);
  Nanos t0 = MonotonicNow();
  auto& all = plan->all;
  size_t next = 0, finished = 0, running = 0;
  std::map<std::string, int> tally;
  std::string exe = SelfExe();
  int& infra_failures = result.infra_failures;
  auto progress = [&](const Trial& tr) {
    const Cell& c = plan->cells[tr.cell];
    std::string v = tr.results.is_object() ? tr.results.value("verdict", std::string("?")) : "error";
    std::ostringstream line;
    line << "[" << finished << "/" << slice.size() << "] " << c.lock << " x " << c.fault << " trial "
         << (tr.index + 1) << ": " << v << "  (" << static_cast<int>(ToMillis(MonotonicNow() - t0) / 1000)
         << " s; violated " << tally["violated"] << ", safe " << tally["safe"] << ", other "
         << tally["unknown"] + tally["error"] << ")";
    if (tty) std::cerr << "\r\033[K" << line.str() << std::flush;
    else std::cerr << "locklab matrix: " << line.str() << "\n";
  };
  Status& io_error = result.io_error;  // a full disk: no more trials
  while (finished < slice.size()) {
    while (running < static_cast<size_t>(jobs) && next < slice.size() && !Interrupted() && io_error.ok()) {
      Trial& tr = all[slice[next]];
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
      std::string log = ReadWholeFile(tr.log);
      static const std::regex re("run: (\\S+)");
      if (std::regex_search(log, m, re)) {
        tr.results = nlohmann::ordered_json::parse(ReadWholeFile(m[1].str() + "/results.json"), nullptr, false);
        if (tr.results.is_discarded()) tr.results = nlohmann::ordered_json();
      }
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      tr.ran = tr.results.is_object() && !IsErrorExit(code);
      if (!tr.ran) {
        ++infra_failures;
        std::cerr << (tty ? "\n" : "") << "locklab matrix: trial failed: " << tr.log << "\n";
      }
      tally[tr.ran && tr.results.is_object() ? tr.results.value("verdict", std::string("unknown")) : "error"]++;
      progress(tr);
    }
  }
  if (tty) std::cerr << "\n";
  for (size_t n : slice) all[n].not_run = !all[n].done;
  return result;
}

}  // namespace locklab::harness
