#include "harness/trial/child_runs.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <regex>

#include "base/exit_code.h"
#include "checker/trial_outcome.h"
#include "harness/trial/interrupts.h"
#include "harness/lab/process.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {

std::optional<checker::Verdict> ChildRun::Verdict() const {
  if (!ran || !results.is_object()) return std::nullopt;
  const auto read = checker::TrialOutcome::TryFromJson(results);
  return read ? read->verdict : checker::Verdict::kUnknown;
}

bool JudgedStuck(const nlohmann::ordered_json& results) {
  const auto read = checker::TrialOutcome::TryFromJson(results);  // another shape judged nothing
  return read && read->Stuck();
}

Status RunChildren(std::vector<ChildRun*> runs, int jobs,
                   const std::function<void(const ChildRun&, size_t finished)>& on_done) {
  size_t i = 0;
  return RunChildrenFrom(
      jobs, [&]() { return i < runs.size() ? runs[i++] : nullptr; }, on_done);
}

Status RunChildrenFrom(int jobs, const std::function<ChildRun*()>& next,
                       const std::function<void(const ChildRun&, size_t finished)>& on_done) {
  const std::string exe = SelfExe();
  size_t finished = 0, running = 0;
  std::vector<ChildRun*> started;  // every run this call spawned, to match pids and interrupt
  Status io_error;
  auto finish = [&](ChildRun& r) {
    r.done = true;
    ++finished;
    if (on_done) on_done(r, finished);
  };
  for (;;) {
    while (running < static_cast<size_t>(jobs) && !Interrupted() && io_error.ok()) {
      ChildRun* rp = next();
      if (rp == nullptr) break;  // none for now: asked again after the next exit
      ChildRun& r = *rp;
      if (r.done) {
        ++finished;
        continue;
      }
      io_error = WriteFile(r.scenario_path, ScenarioToToml(r.options));
      if (!io_error.ok()) break;
      r.log = r.scenario_path.substr(0, r.scenario_path.size() - 5) + ".log";
      SpawnOptions so;
      so.argv = {exe, "run", r.scenario_path, "--no-report", "--out", r.options.out_dir};
      so.log_path = r.log;
      r.started = true;
      r.spawned_at = MonotonicNow();
      Status ss = Spawn(so, &r.pid);
      if (!ss.ok()) {
        WriteFile(r.log, "locklab: trial not started: " + ss.message() + "\n");
        finish(r);
      } else {
        started.push_back(rp);
        ++running;
      }
    }
    // Nothing running: the supplier has none, or an interrupt or write error stops new runs.
    if (running == 0) break;
    if (Interrupted()) {
      // Once per child: each trial heals and keeps its history. (Sent on every pass, as each
      // reap came, a trial still running at the third took it as a user's third Ctrl-C and
      // exited without healing or writing results.json.)
      for (ChildRun* r : started) {
        if (r->pid > 0 && !r->done && !r->interrupted) {
          kill(r->pid, SIGINT);
          r->interrupted = true;
        }
      }
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (ChildRun* rp : started) {
      ChildRun& r = *rp;
      if (r.pid != pid || r.done) continue;
      --running;
      r.reaped_at = MonotonicNow();
      static const std::regex re("run: (\\S+)");
      std::smatch m;
      std::string log = ReadWholeFile(r.log);
      if (std::regex_search(log, m, re)) {
        r.run_dir = m[1].str();
        r.results = nlohmann::ordered_json::parse(ReadWholeFile(r.run_dir + "/results.json"),
                                                  nullptr, false);
        if (r.results.is_discarded()) r.results = nlohmann::ordered_json();
      }
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      r.ran = r.results.is_object() && !IsErrorExit(r.exit_code);
      finish(r);
    }
  }
  return io_error;
}

}  // namespace locklab::harness
