#include "harness/cli/replay_command.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checker/trial_outcome.h"
#include "base/argv.h"
#include "base/clock.h"
#include "base/exit_code.h"
#include "base/random.h"
#include "checker/verdict.h"
#include "harness/trial/child_runs.h"
#include "harness/scenario/cli_spec.h"
#include "harness/trial/interrupts.h"
#include "harness/scenario/run_options.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;

struct ReplayFlags {
  std::vector<std::string> paths;
  std::string out = "runs";
  int jobs = 2;
};

Status ParseReplayFlags(const std::vector<std::string>& args, ReplayFlags* f) {
  ArgvReader r(ReplayCommandSpec(), args);
  while (r.Next()) {
    Status s;
    int64_t n = 0;
    if (!r.AtFlag()) {
      f->paths.push_back(r.word());
    } else if (r.Is("--out")) {
      s = r.Value(&f->out);
    } else if (r.Is("--jobs")) {
      s = r.Int(1, 64, &n);
      f->jobs = static_cast<int>(n);
    } else {
      return r.Unknown();
    }
    if (!s.ok()) return s;
  }
  if (f->paths.empty()) return Status::Usage("replay: needs a corpus: DIR or FILE.toml, one or more");
  return Status::Ok();
}

// Every scenario file the arguments name: a FILE as given, a DIR's *.toml files at any depth,
// sorted; each path once.
Status CollectFiles(const std::vector<std::string>& paths, std::vector<std::string>* files) {
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    std::error_code ec;
    std::string key = fs::weakly_canonical(p, ec).string();
    if (seen.insert(ec ? p : key).second) files->push_back(p);
  };
  for (const auto& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return Status::BadInput("replay: " + p + ": cannot open: no such file or directory");
    if (!fs::is_directory(st)) {
      add(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".toml") found.push_back(it->path().string());
    }
    if (ec) return Status::BadInput("replay: " + p + ": cannot read: " + ec.message());
    // An empty corpus (none yet, or a folder holding only .gitkeep, since git keeps no empty
    // folder) is no error: nothing to replay, said in one line below.
    if (found.empty()) std::cerr << "locklab replay: " << p << ": no scenario (*.toml) in it or below it yet\n";
    std::sort(found.begin(), found.end());
    for (const auto& f : found) add(f);
  }
  return Status::Ok();
}

struct Scenario {
  std::string file;   // as found
  RunOptions options;
  std::string dir;    // its folder in the replay's directory
  int next_trial = 0, running = 0;
  std::deque<ChildRun> runs;  // stable addresses for the pool
  std::unique_ptr<ExpectationTally> tally;
  std::string error;  // a trial the lab could not run (its log)
  int error_code = 0;
  bool interrupted = false, reported = false;
  enum class State { kOpen, kMet, kNotMet, kError } state = State::kOpen;

  bool Decided() const { return state != State::kOpen; }
  int Remaining() const { return tally->TrialsToRun() - tally->judged(); }
};

// A name for a scenario's folder: NN-<file stem>, unique in the replay.
std::string FolderName(size_t index, const std::string& file) {
  std::string stem = fs::path(file).stem().string();
  for (char& c : stem) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  char num[32];
  snprintf(num, sizeof num, "%02zu-", index + 1);
  return num + stem;
}

std::string Line(const Scenario& s) {
  std::ostringstream l;
  const char* state = s.state == Scenario::State::kMet      ? "met"
                      : s.state == Scenario::State::kNotMet ? "NOT met"
                      : s.state == Scenario::State::kError  ? "error"
                                                            : "undecided";
  const int judged = s.tally->judged();
  l << "replay: " << state << " " << s.file << ": " << judged << " of " << s.options.trials << " trial"
    << (s.options.trials == 1 ? "" : "s") << " judged, " << checker::VerdictName(checker::Verdict::kViolated) << " " << s.tally->violated() << "/" << judged;
  if (s.state == Scenario::State::kError) {
    l << ": " << s.error;
  } else if (s.state == Scenario::State::kOpen) {
    l << ": " << (s.interrupted || Interrupted() ? std::string("interrupted")
                                                 : "not decided: " + s.tally->Describe());
  } else {
    l << ": " << s.tally->Describe();
  }
  l << "; runs: " << s.dir;
  return l.str();
}

}  // namespace

int RunReplayCommand(const std::vector<std::string>& args) {
  ReplayFlags flags;
  Status s = ParseReplayFlags(args, &flags);
  std::vector<std::string> files;
  if (s.ok()) s = CollectFiles(flags.paths, &files);
  if (!s.ok()) {
    std::cerr << "locklab " << s.message() << "\n";
    return s.ExitCode();
  }
  // Every file read and checked before anything runs; every bad one named.
  std::vector<Scenario> scenarios(files.size());
  int refused = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    Scenario& sc = scenarios[i];
    sc.file = files[i];
    Status v = LoadScenarioFile(sc.file, &sc.options);
    if (v.ok() && !HasExpectations(sc.options)) {
      v = Status::BadInput(sc.file + ":1: field 'expect': missing: a corpus entry says what it expects "
                           "(verdict, resource, stuck or violated_at_least)");
    }
    if (v.ok()) v = ValidateRunOptions(sc.options);
    if (v.ok()) v = CheckEndpoints(sc.options);
    if (!v.ok()) {
      std::cerr << "locklab replay: " << v.message() << "\n";
      refused = refused == 0 ? v.ExitCode() : refused;
    }
  }
  if (refused != 0) {
    std::cerr << "locklab replay: nothing run\n";
    return refused;
  }
  std::string dir;
  s = CreateRunDir(flags.out, "replay", 0, &dir);
  if (!s.ok()) {
    std::cerr << "locklab replay: " << s.message() << "\n";
    return s.ExitCode();
  }
  int total_trials = 0;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    Scenario& sc = scenarios[i];
    sc.dir = dir + "/" + FolderName(i, sc.file);
    sc.tally = std::make_unique<ExpectationTally>(sc.options);
    // One seed per scenario, as `locklab run` would draw it, so its trials are seed + t (or
    // that one seed, statistical) whatever order they run in.
    if (sc.options.seed == 0) sc.options.seed = RandomSeed(48);
    if (Status m = MakeDirs(sc.dir); !m.ok()) {
      std::cerr << "locklab replay: " << m.message() << "\n";
      return m.ExitCode();
    }
    total_trials += sc.options.trials;
  }
  std::cerr << "locklab replay: " << scenarios.size() << " scenario" << (scenarios.size() == 1 ? "" : "s")
            << ", up to " << total_trials << " trials, " << flags.jobs << " at a time: " << dir << "\n";
  InstallInterruptHandlers();
  const Nanos t0 = MonotonicNow();
  auto report = [&](Scenario& sc) {
    if (sc.reported || sc.running > 0 || !sc.Decided()) return;
    sc.reported = true;
    std::cout << Line(sc) << "\n" << std::flush;
  };
  Status ps = RunChildrenFrom(
      flags.jobs,
      [&]() -> ChildRun* {
        // Round robin: the undecided scenario with the fewest trials started (the first of
        // equals), so a scenario that its first trial decides does not get a second.
        Scenario* pick = nullptr;
        for (auto& sc : scenarios) {
          if (sc.Decided() || sc.next_trial >= sc.tally->TrialsToRun()) continue;
          if (pick == nullptr || sc.next_trial < pick->next_trial) pick = &sc;
        }
        if (pick != nullptr) {
          Scenario& sc = *pick;
          const int t = sc.next_trial++;
          RunOptions trial = sc.options;
          trial.trials = 1;
          trial.seed = IsStatisticalExpectation(sc.options) ? sc.options.seed
                                                            : sc.options.seed + static_cast<uint64_t>(t);
          // Judged here, against the scenario's [expect]: the child only runs the trial.
          ClearExpectations(&trial);
          trial.out_dir = sc.dir;
          ChildRun run;
          run.options = trial;
          run.scenario_path = sc.dir + "/trial-" + std::to_string(t + 1) + ".toml";
          sc.runs.push_back(std::move(run));
          ++sc.running;
          return &sc.runs.back();
        }
        return nullptr;
      },
      [&](const ChildRun& done, size_t) {
        Scenario* owner = nullptr;
        for (auto& sc : scenarios) {
          for (const auto& r : sc.runs) owner = &r == &done ? &sc : owner;
        }
        if (owner == nullptr) return;
        Scenario& sc = *owner;
        --sc.running;
        if (!done.ran) {
          // A trial the lab could not run leaves the scenario undecided by its [expect]; one
          // already decided (a trial still running when it was) stays as it was decided.
          if (!sc.Decided()) {
            sc.state = Scenario::State::kError;
            sc.error_code = done.exit_code >= 64 ? done.exit_code : kExitInfrastructure;
            sc.error = "a trial could not run (exit " + std::to_string(done.exit_code) + "; " + done.log + ")";
          }
        } else if (const auto read = checker::TrialOutcome::TryFromJson(done.results);
                   read && read->interrupted) {  // (one of another shape: its tally says why)
          sc.interrupted = true;
        } else if (sc.state != Scenario::State::kError) {
          sc.tally->Add(done.results);
          switch (sc.tally->Decide(sc.Remaining())) {
            case ExpectationTally::Outcome::kMet: sc.state = Scenario::State::kMet; break;
            case ExpectationTally::Outcome::kNotMet: sc.state = Scenario::State::kNotMet; break;
            case ExpectationTally::Outcome::kOpen: break;
          }
        }
        report(sc);
      });
  const double seconds = ToMillis(MonotonicNow() - t0) / 1000.0;
  int code = kExitOk;
  if (!ps.ok()) {
    std::cerr << "locklab replay: " << ps.message() << "\n";
    code = WorseRunExit(code, ps.ExitCode());
  }
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  std::vector<std::string> regressions;
  int met = 0, open = 0, errors = 0, trials_run = 0;
  for (auto& sc : scenarios) {
    if (!sc.reported) {
      sc.reported = true;
      std::cout << Line(sc) << "\n";
    }
    trials_run += static_cast<int>(sc.runs.size());
    std::string message;
    switch (sc.state) {
      case Scenario::State::kMet: ++met; break;
      case Scenario::State::kNotMet:
        regressions.push_back(sc.file);
        message = "regression: " + sc.tally->Describe();
        code = WorseRunExit(code, kExitViolated);
        break;
      case Scenario::State::kError:
        ++errors;
        message = "error: " + sc.error;
        code = WorseRunExit(code, sc.error_code);
        break;
      case Scenario::State::kOpen:
        ++open;
        message = std::string("not decided: ") +
                  (sc.interrupted || Interrupted() ? "interrupted"
                   : sc.tally->judged() == 0       ? "no judged trial"
                                                   : sc.tally->Describe());
        code = WorseRunExit(code, kExitUnknown);
        break;
    }
    checks.push_back({{"name", sc.file}, {"ok", sc.state == Scenario::State::kMet}, {"message", message}});
  }
  Status w = WriteFile(dir + "/junit.xml", JunitXml("locklab replay", checks, seconds));
  if (!w.ok()) {
    std::cerr << "locklab replay: " << w.message() << "\n";
    code = WorseRunExit(code, w.ExitCode());
  }
  std::cout << "replay: " << scenarios.size() << " scenario" << (scenarios.size() == 1 ? "" : "s") << ", " << met << " met, " << regressions.size()
            << " NOT met, " << open << " undecided, " << errors << " errors; " << trials_run << " trials in "
            << static_cast<int>(seconds) << " s; junit: " << dir << "/junit.xml\n";
  if (!regressions.empty()) {
    std::string names;
    for (const auto& r : regressions) names += (names.empty() ? "" : ", ") + r;
    std::cout << "replay: regression" << (regressions.size() == 1 ? "" : "s") << ": " << names << "\n";
  }
  return code;
}

}  // namespace locklab::harness
