// locklab: the command line (docs/design.md 3.5). Each sub-command lives in its own file.
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/trial_result.h"
#include "base/argv.h"
#include "base/cli.h"
#include "base/version.h"
#include "base/exit_code.h"
#include "checker/check_command.h"
#include "faults/fault_descriptor.h"
#include "harness/scenario/cli_spec.h"
#include "harness/trial/client_main.h"
#include "harness/cli/cluster_command.h"
#include "harness/cli/driver_check.h"
#include "harness/matrix/matrix.h"
#include "harness/hunt/hunt.h"
#include "harness/cli/hunt_merge.h"
#include "harness/cli/replay_command.h"
#include "harness/cli/report_command.h"
#include "harness/trial/report_script.h"
#include "harness/trial/runner.h"
#include "locks/driver_lock.h"
#include "locks/lease_ttl.h"
#include "locks/lock.h"
#include "locks/mutants.h"

namespace locklab::harness {
namespace {

int ListCommand(const std::vector<std::string>& args) {
  bool json = false;
  ArgvReader r(ListCommandSpec(), args);
  while (r.Next()) {
    Status s = r.Is("--json") ? r.NoValue() : r.Unknown();
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return s.ExitCode();
    }
    json = true;
  }
  nlohmann::ordered_json j;
  j["locks"] = nlohmann::ordered_json::array();
  std::vector<locks::LockInfo> all = locks::ListLocks();
  all.push_back(locks::DriverLockInfo());  // driver:PATH, any external program
  for (const auto& l : all) {
    nlohmann::ordered_json knobs = nlohmann::ordered_json::array();
    knobs.push_back({{"name", "ttl_ms"}, {"default", std::to_string(locks::kDefaultLeaseTtl.count())},
                     {"description", "key lifetime"}});
    knobs.push_back({{"name", "retry_delay_ms"}, {"default", "20"}, {"description", "wait between acquire attempts"}});
    knobs.push_back({{"name", "command_timeout_ms"}, {"default", "200"}, {"description", "per-command timeout (an expired one is an unknown outcome)"}});
    for (const auto& k : l.knobs) {
      knobs.push_back({{"name", k.name}, {"default", k.default_value}, {"description", k.description}});
    }
    nlohmann::ordered_json lock = {{"id", l.id}, {"description", l.description},
                                   {"default_nodes", l.default_nodes}, {"knobs", knobs},
                                   {"backend", locks::BackendName(l.backend)},
                                   {"uses_lab_ttl", l.uses_lab_ttl}};
    // What its servers offer the faults (base/lock_surface.h), and the faults that apply
    // (faults::FaultFits); "faults" absent = every fault.
    const LockSurfaces offered = locks::SurfacesOf(l.backend);
    lock["surfaces"] = LockSurfaceWords(offered);
    if (offered != LockSurfaces::All()) {
      nlohmann::ordered_json fit = nlohmann::ordered_json::array();
      for (const auto& f : faults::ListFaults()) {
        if (faults::FaultFits(f.id, offered)) fit.push_back(f.id);
      }
      lock["faults"] = fit;
    }
    // The pause points the lock announces besides the workload's (a fault's `point`).
    if (!l.points.empty()) lock["points"] = l.points;
    j["locks"].push_back(lock);
  }
  // Each fault's descriptor: id, description, client_side, params, node_control, style
  // (faults/fault_descriptor.h FaultCatalogJson; the report reads its style from here).
  j["faults"] = faults::FaultCatalogJson();
  // Mutants (locks/mutants.h) in their own array: they are not in ListLocks, so the default
  // matrix does not run them; `--lock mutant:NAME` does.
  j["mutants"] = nlohmann::ordered_json::array();
  for (const auto& m : locks::ListMutants()) {
    j["mutants"].push_back({{"id", m.id}, {"description", m.description},
                            {"mutant_of", m.mutant_of}, {"default_nodes", m.default_nodes},
                            {"points", m.points}});
  }
  // The trial results' one table (checker/trial_result.h): the reports spell and colour a
  // result from here.
  j["results"] = nlohmann::ordered_json::array();
  for (const auto& r : checker::ResultTable()) {
    j["results"].push_back({{"word", r.word}, {"letter", r.letter}, {"colour", r.colour},
                            {"fill", r.fill}, {"meaning", r.meaning}});
  }
  j["workloads"] = {{{"id", "counter"},
                     {"description", "read a guarded counter inside the critical section, hold, write counter+1"}}};
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const char* section : {"locks", "faults", "workloads", "mutants"}) {
    std::cout << section << ":\n";
    for (const auto& e : j[section]) {
      std::cout << "  " << e["id"].get<std::string>() << "\n      "
                << e["description"].get<std::string>() << "\n";
      if (e.contains("params") && !e["params"].empty()) {
        std::string ps;
        for (const auto& p : e["params"]) {
          ps += (ps.empty() ? "" : ", ") + p["name"].get<std::string>() + " = " +
                p["default"].get<std::string>();
        }
        std::cout << "      params (defaults): " << ps << "\n";
      }
      if (e.contains("faults")) {
        std::string ids;
        for (const auto& f : e["faults"]) ids += (ids.empty() ? "" : ", ") + f.get<std::string>();
        std::cout << "      faults that apply: " << ids << "\n";
      }
    }
  }
  return 0;
}

int RunCommand(const std::vector<std::string>& args) {
  RunOptions o;
  std::string scenario;
  // --no-report skips the HTML report (it is made by default).
  bool report = true;
  for (const auto& a : args) {
    if (a == "--no-report") report = false;  // ParseRunFlags accepts it and leaves it here
  }
  Status s = ParseRunFlags(args, &o, &scenario);
  if (s.ok() && !scenario.empty()) {
    RunOptions from_file;
    from_file.out_dir = o.out_dir;
    s = LoadScenarioFile(scenario, &from_file);
    if (s.ok()) {
      // Flags given with a scenario file override it (e.g. --out, --seed).
      std::string ignored;
      s = ParseRunFlags(args, &from_file, &ignored);
      o = from_file;
    }
  }
  // Everything that can refuse the run, before a run directory exists.
  if (s.ok()) s = ValidateRunOptions(o);
  if (s.ok()) s = CheckEndpoints(o);
  if (!s.ok()) {
    std::cerr << "locklab " << s.message() << "\n";
    return s.ExitCode();
  }
  // Trials run one after the other with seeds seed, seed+1, ... (a drawn seed when 0).
  // A statistical [expect] (at least K of N, run_options.h) is judged over all the trials,
  // each of which replays the same seed.
  bool expectations = HasExpectations(o);
  const bool statistical = IsStatisticalExpectation(o);
  ExpectationTally tally(o);
  int worst = 0;
  uint64_t seed = o.seed;
  for (int t = 0; t < (statistical ? tally.TrialsToRun() : o.trials) && !Interrupted(); ++t) {
    RunOptions trial = o;
    trial.seed = seed == 0 ? 0 : statistical ? seed : seed + static_cast<uint64_t>(t);
    TrialResult r = RunTrial(trial);
    if (!r.status.ok()) std::cerr << "locklab run: " << r.status.message() << "\n";
    int code = r.exit_code;
    // A file that could not be written (exit 70): that one line says it all; no verdict
    // from a history that is not whole, no report on a full disk.
    bool io_failed = r.status.code() == Status::Code::kIo;
    if (r.summary && !io_failed) {
      const TrialSummary& sum = *r.summary;
      std::cout << "verdict: " << checker::VerdictName(sum.verdict) << "  overlapping_pairs=" << sum.overlapping_pairs
                << " lost_updates=" << sum.lost_updates
                << " stale_writes_accepted=" << sum.stale_writes_accepted << " ops=" << sum.ops
                << "\n";
      // Why it is violated or unknown, in one line (checker/verdict.h).
      if (!sum.reason.empty()) std::cout << "because: " << sum.reason << "\n";
      // Out now, not at exit: the report below takes seconds, and a reader of a pipe waits.
      std::cout << "run: " << r.run_dir << std::endl;
      int64_t expired = sum.acquires.expired_grants;
      if (expired > 0) {
        // An ok whose validity is already over (node-redlock issue 296): the lock said yes
        // to a lease it no longer had, and the history's verdict may not show it.
        std::cerr << "locklab run: warning: " << expired << " acquire"
                  << (expired == 1 ? " was" : "s were")
                  << " granted already expired (ok with validity_ms <= 0; results.json "
                     "acquires.expired_grants)\n";
      }
      if (!sum.lab_lag.timing_trusted) {
        std::cerr << "locklab run: warning: the lab itself ran up to " << sum.lab_lag.max.count()
                  << " ms late (bound: a tenth of the TTL, " << sum.lab_lag.bound.count()
                  << " ms); the machine is overloaded and this trial's timing is not to be "
                     "trusted (results.json lab_lag)\n";
      }
      if (statistical && r.status.ok() && !sum.interrupted) {
        tally.Add(r.results);
        code = 0;  // any one trial may end any way; the count decides, after the loop
      } else if (expectations && r.status.ok() && !sum.interrupted) {
        std::string miss = CheckExpectations(o, r.results);
        if (miss.empty()) {
          std::cout << "expectation: met\n";
          code = 0;
        } else {
          std::cout << "expectation: NOT met: " << miss << "\n";
          code = 1;
        }
      }
      if (report && !Interrupted()) {
        // The verdict above stands; a report that could not be made (no Python with
        // matplotlib: 69, a file it could not write: 70) is the exit code, as for `report`.
        // The script prints the `report: PATH` line, or its one failure line, itself.
        code = WithReportExit(code, RunReportScript({r.run_dir}));
      }
    }
    worst = WorseRunExit(worst, code);  // an error (64+) > 1 > 2 > 0 (base/exit_code.h)
    if (seed == 0 && r.summary) seed = r.summary->seed - t;
  }
  if (statistical && !Interrupted() && tally.judged() > 0) {
    // Open after every trial ran: K is reached only by counting trials the lab ran late for
    // (each was replaced, and the replacements ran late too): unknown, not a regression.
    const ExpectationTally::Outcome outcome = tally.Decide(0);
    const bool met = outcome == ExpectationTally::Outcome::kMet;
    const bool open = outcome == ExpectationTally::Outcome::kOpen;
    std::cout << "expectation: " << (met ? "met: " : open ? "undecided: " : "NOT met: ") << tally.Describe()
              << "\n";
    worst = WorseRunExit(worst, met ? 0 : open ? 2 : 1);
  }
  return worst;
}

// `locklab version` (or --version): "locklab VERSION (git REVISION)".
int VersionCommand(const std::vector<std::string>& args) {
  ArgvReader r(VersionCommandSpec(), args);
  if (r.Next()) {
    std::cerr << "locklab " << r.Unknown().message() << "\n";
    return 64;
  }
  std::cout << LocklabVersionLine() << "\n";
  return 0;
}

// `locklab completion bash`: the completion script made from every command's flag table.
int CompletionCommand(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "bash") {
    // The first word that is not the one expected: "zsh", or what follows "bash".
    const std::string* got = args.empty() ? nullptr : args[0] != "bash" ? &args[0] : &args[1];
    std::cerr << "locklab completion: expected `locklab completion bash`"
              << (got ? ", got '" + *got + "'" : "") << "\n";
    return 64;
  }
  std::cout << BashCompletion(AllCommandSpecs());
  return 0;
}

}  // namespace
}  // namespace locklab::harness

int main(int argc, char** argv) {
  using namespace locklab;
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string commands = CommandListText(harness::AllCommandSpecs());
  if (args.empty()) {
    std::cerr << commands;
    return 64;
  }
  std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    // `locklab help run` is `locklab run --help`.
    if (rest.empty()) {
      std::cout << commands;
      return 0;
    }
    cmd = rest[0];
    rest = {"--help"};
  }
  if (cmd == "--version") {
    std::cout << LocklabVersionLine() << "\n";
    return 0;
  }
  if (cmd == "driver-check") return harness::RunDriverCheckCommand(rest);  // its own flag table
  const CommandSpec* spec = harness::FindCommandSpec(cmd);
  if (spec == nullptr && cmd != "client") {
    std::cerr << "locklab: unknown command '" << cmd << "' (locklab --help lists them)\n";
    return 64;
  }
  // `locklab matrix --help`: that command's flags, not "flag --help needs a value".
  for (const auto& a : rest) {
    if ((a == "--help" || a == "-h") && spec != nullptr) {
      std::cout << HelpText(*spec);
      return 0;
    }
  }
  if (cmd == "run") return harness::RunCommand(rest);
  if (cmd == "client") return harness::RunClientCommand(rest);
  if (cmd == "check") return checker::RunCheckCommand(rest);
  if (cmd == "list") return harness::ListCommand(rest);
  if (cmd == "matrix") return harness::RunMatrixCommand(rest);
  if (cmd == "hunt") return harness::RunHuntCommand(rest);
  if (cmd == "merge") {
    // Hunt shards (their directories hold hunt.json) or matrix shards.
    const bool hunts = std::any_of(rest.begin(), rest.end(), [](const std::string& a) { return harness::IsHuntDir(a); });
    return hunts ? harness::RunHuntMergeCommand(rest) : harness::RunMergeCommand(rest);
  }
  if (cmd == "cluster") return harness::RunClusterCommand(rest);
  if (cmd == "report") return harness::RunReportCommand(rest);
  if (cmd == "replay") return harness::RunReplayCommand(rest);
  if (cmd == "completion") return harness::CompletionCommand(rest);
  if (cmd == "version") return harness::VersionCommand(rest);
  // `test` is the entry script's (./locklab test); it is listed so that --help shows it.
  std::cerr << "locklab: '" << cmd << "' is run by the entry script: ./locklab " << cmd << "\n";
  return 64;
}
