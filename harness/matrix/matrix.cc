#include "harness/matrix/matrix.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "base/argv.h"
#include "base/clock.h"
#include "base/exit_code.h"
#include "base/numbers.h"
#include "base/random.h"
#include "faults/fault.h"
#include "locks/lease_ttl.h"
#include "harness/scenario/cli_spec.h"
#include "harness/trial/interrupts.h"
#include "harness/matrix/matrix_outputs.h"
#include "harness/matrix/matrix_plan.h"
#include "harness/matrix/matrix_scheduler.h"
#include "harness/trial/report_script.h"
#include "harness/scenario/run_options.h"
#include "harness/lab/run_store.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {
namespace {

// "a,b,,c" -> {a, b, c}: a flag's comma-separated list, empty items dropped.
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// What the `locklab matrix` command line says (matrix.h has the flags).
struct MatrixFlags {
  std::vector<std::string> lock_ids, fault_ids;
  std::map<std::string, std::vector<std::string>> driver_args;  // per driver:PATH lock
  // 6 at a time: on 2 cores the quick matrix uses about 0.4 cores at 4 (trials mostly wait),
  // and bench/matrix_parallelism measured the lab's own lag at --jobs 1/2/4/6/8 as p99
  // 0.4/0.5/1.4/2.2/4.0 ms (max 13 ms), far below the 50 ms a 500 ms TTL tolerates, with no
  // lag-driven verdict flip. Every trial still checks its own lag (lab_lag).
  int trials = 0, jobs = 6, shard_index = 1, shard_count = 1;
  bool full = false, report = true;
  uint64_t seed = 0;  // drawn when not given
  std::string out = "runs", expect_path;
  std::string write_expect_path;  // --write-expect FILE: this run's cells as expectations
  FailOn fail_on;                 // --fail-on violated,stuck,unknown: fails unpinned cells
  std::string preset_dir = kDefaultPresetDir;
  std::vector<std::string> endpoints;
  std::string endpoint_control;  // --endpoint-control: node clock faults run too
  bool jobs_given = false;
  std::optional<Millis> ttl;  // --ttl DURATION: the rows' TTL, cell times scaled (matrix_scaling.h)
};

// Returns 0, or 64 after printing the one-line error.
int ParseMatrixFlags(const std::vector<std::string>& args, MatrixFlags* flags) {
  MatrixFlags& f = *flags;
  ArgvReader argv(MatrixCommandSpec(), args);
  auto fail = [](const Status& s) {
    std::cerr << "locklab " << s.message() << "\n";
    return 64;
  };
  while (argv.Next()) {
    if (!argv.AtFlag()) return fail(argv.Unknown());
    if (argv.Is("--quick") || argv.Is("--full") || argv.Is("--no-report")) {
      if (Status s = argv.NoValue(); !s.ok()) return fail(s);
      if (argv.Is("--no-report")) f.report = false;
      else f.full = argv.Is("--full");
      continue;
    }
    int64_t n = 0;
    if (argv.Is("--ttl")) {
      Millis ttl{0};
      if (Status s = argv.Duration(locks::kMinLeaseTtl, locks::kMaxLeaseTtl, &ttl); !s.ok()) return fail(s);
      f.ttl = ttl;
      continue;
    }
    if (argv.Is("--trials") || argv.Is("--jobs") || argv.Is("--seed")) {
      Status s = argv.Is("--trials") ? argv.Int(1, 1000, &n)
                 : argv.Is("--jobs") ? argv.Int(1, 64, &n)
                                     : argv.Int(1, INT64_MAX, &n);
      if (!s.ok()) return fail(s);
      if (argv.Is("--trials")) f.trials = static_cast<int>(n);
      if (argv.Is("--jobs")) f.jobs = static_cast<int>(n), f.jobs_given = true;
      if (argv.Is("--seed")) f.seed = static_cast<uint64_t>(n);
      continue;
    }
    static const std::set<std::string> kValueFlags = {
        "--endpoints", "--endpoint-control", "--locks", "--lock", "--driver-arg", "--faults",
        "--out", "--expect", "--scenarios", "--shard", "--write-expect", "--fail-on"};
    if (!kValueFlags.count(argv.flag())) return fail(argv.Unknown());
    std::string v;
    if (Status s = argv.Value(&v); !s.ok()) return fail(s);
    // An empty list (`--locks "$LOCKS"` with the variable unset) must not mean the default,
    // which is the whole matrix.
    if ((argv.Is("--locks") || argv.Is("--faults")) && Split(v).empty()) {
      return fail(argv.Error(std::string("expected ") + (argv.Is("--locks") ? "lock" : "fault") +
                             " ids, comma-separated; got none"));
    }
    // The same for a file or directory: `--expect "$EXPECT"` with EXPECT unset would turn the
    // gate off, silently.
    if (v.empty() && (argv.Is("--expect") || argv.Is("--write-expect") || argv.Is("--out") ||
                      argv.Is("--scenarios") || argv.Is("--endpoint-control"))) {
      return fail(argv.Error("expected a path, got ''"));
    }
    if (argv.Is("--endpoints")) {
      f.endpoints = Split(v);
      std::string host, error;
      int port = 0;
      for (const auto& e : f.endpoints) {
        if (!ParseRedisUrl(e, &host, &port, &error)) return fail(argv.Error(error));
      }
      if (f.endpoints.empty()) return fail(argv.Error("expected redis://host:port,..."));
    } else if (argv.Is("--endpoint-control")) {
      f.endpoint_control = v;
    } else if (argv.Is("--locks")) {
      for (const auto& id : Split(v)) f.lock_ids.push_back(id);
    } else if (argv.Is("--lock")) {
      f.lock_ids.push_back(v);  // one id (a driver path may contain commas)
    } else if (argv.Is("--driver-arg")) {
      if (f.lock_ids.empty() || !locks::IsDriverId(f.lock_ids.back())) {
        return fail(argv.Error("must follow --lock driver:PATH"));
      }
      f.driver_args[f.lock_ids.back()].push_back(v);
    } else if (argv.Is("--faults")) {
      f.fault_ids = Split(v);
    } else if (argv.Is("--out")) {
      f.out = v;
    } else if (argv.Is("--expect")) {
      f.expect_path = v;
    } else if (argv.Is("--scenarios")) {
      f.preset_dir = v;
    } else if (argv.Is("--write-expect")) {
      f.write_expect_path = v;
    } else if (argv.Is("--fail-on")) {
      if (std::string why = ParseFailOn(v, &f.fail_on); !why.empty()) return fail(argv.Error(why));
    } else if (!ParseShard(v, &f.shard_index, &f.shard_count)) {  // --shard
      return fail(argv.Error("'" + v + "' is not I/N with 1 <= I <= N <= 10000"));
    }
  }
  // A row or column twice would be two cells of one name (junit.xml, matrix.md, --expect
  // cannot tell them apart), and a driver's --driver-arg would go to both.
  for (const auto* ids : {&f.lock_ids, &f.fault_ids}) {
    std::set<std::string> seen;
    for (const auto& id : *ids) {
      if (!seen.insert(id).second) {
        std::cerr << "locklab matrix: flag " << (ids == &f.lock_ids ? "--locks/--lock" : "--faults")
                  << ": '" << id << "' given twice\n";
        return 64;
      }
    }
  }
  if (!f.endpoint_control.empty() && f.endpoints.empty()) {
    // Without --endpoints the lab starts its own nodes: the flag would be ignored (run refuses
    // it the same way).
    std::cerr << "locklab matrix: flag --endpoint-control: needs --endpoints\n";
    return 64;
  }
  if (f.trials == 0) f.trials = f.full ? 3 : 1;
  if (f.seed == 0) {
    if (f.shard_count > 1) {
      // Shards on different machines must draw the same trial seeds.
      std::cerr << "locklab matrix: flag --shard: needs --seed N (every shard must use the same seed)\n";
      return 64;
    }
    f.seed = RandomSeed(40);
  }
  if (!f.write_expect_path.empty() && f.shard_count > 1) {
    std::cerr << "locklab matrix: flag --write-expect: a shard has only some cells' trials "
                 "(write it from the merge: locklab merge DIR... --write-expect FILE)\n";
    return 64;
  }
  return 0;
}

// The columns (cell scenarios, filtered by --faults and --endpoints), the rows (every lock
// when none is named), the expectations: everything BuildPlan needs, each checked. Returns 0,
// or the exit code after printing the one-line error.
int ResolvePlanRequest(MatrixFlags flags, PlanRequest* request) {
  auto& [lock_ids, fault_ids, driver_args, trials, jobs, shard_index, shard_count, full, report,
         seed, out, expect_path, write_expect_path, fail_on, preset_dir, endpoints, endpoint_control,
         jobs_given, ttl] = flags;
  std::vector<Preset>& presets = request->presets;
  Expectations& expectations = request->expectations;
  Status s = LoadPresets(preset_dir, &presets);
  if (!s.ok() && s.code() == Status::Code::kInfrastructure && preset_dir != kDefaultPresetDir) {
    // A --scenarios directory that is not there is the flag's fault (64), not the lab's.
    std::cerr << "locklab matrix: flag --scenarios: " << s.message() << "\n";
    return 64;
  }
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  // An exact fault of an expectation file names a fault or any column of the preset
  // directory (one file serves runs of other --faults too).
  std::set<std::string> known_faults;
  for (const auto& f : faults::ListFaults()) known_faults.insert(f.id);
  for (const auto& p : presets) known_faults.insert(p.fault);
  for (const auto& p : presets) request->all_columns.push_back(p.fault);
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
  if (!expect_path.empty()) {
    s = LoadExpectations(expect_path, known_faults, &expectations);
    if (!s.ok()) {
      std::cerr << "locklab matrix: " << s.message() << "\n";
      return s.ExitCode();
    }
  }
  request->seed = seed;
  request->full = full;
  request->trials = trials;
  request->jobs = jobs;
  request->lock_ids = lock_ids;
  request->driver_args = driver_args;
  request->expect_path = expect_path;
  request->fail_on = fail_on;
  request->preset_dir = preset_dir;
  request->endpoints = endpoints;
  request->endpoint_control = endpoint_control;
  request->ttl = ttl;
  // A driver row's hello may declare the TTL it really sets (ttl_ms): its cells scale to it.
  // One probe per driver row; a driver that cannot be probed runs unscaled (its trials will
  // say what is wrong with it).
  for (const auto& id : lock_ids) {
    if (!locks::IsDriverId(id)) continue;
    locks::DriverHello hello;
    auto da = driver_args.find(id);
    std::string path;
    Status ps = ResolveDriverPath(id, &path);  // checked above
    if (ps.ok()) {
      ps = locks::ProbeDriver(path, da == driver_args.end() ? std::vector<std::string>{} : da->second,
                              locks::kDefaultDriverStartTimeout, &hello);
    }
    if (ps.code() == Status::Code::kUsage) {  // a hello with a bad field (backend, nodes, ...)
      std::cerr << "locklab matrix: " << id << ": " << ps.message() << "\n";
      return ps.ExitCode();
    }
    if (!ps.ok()) {
      std::cerr << "locklab matrix: " << id << ": " << ps.message() << " (its cells run unscaled)\n";
      continue;
    }
    if (hello.ttl) request->driver_ttls[id] = *hello.ttl;
    // The servers it asks for (driver_servers.h): its cells start those.
    request->driver_servers[id] = ServersFromHello(hello);
  }
  return 0;
}

// --write-expect FILE, checked before the trials run (a matrix takes minutes; a directory
// that does not exist should not cost them): Status::Io naming the file, exit 70.
Status CheckWritable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status::Io("write " + path + ": " + strerror(EISDIR));
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::Io("write " + path + ": " + strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

int RunMatrixCommand(const std::vector<std::string>& args) {
  MatrixFlags flags;
  if (int code = ParseMatrixFlags(args, &flags); code != 0) return code;
  PlanRequest request;
  if (int code = ResolvePlanRequest(flags, &request); code != 0) return code;
  const int shard_index = flags.shard_index, shard_count = flags.shard_count;
  if (!flags.write_expect_path.empty()) {
    if (Status w = CheckWritable(flags.write_expect_path); !w.ok()) {
      std::cerr << "locklab matrix: " << w.message() << "\n";
      return w.ExitCode();
    }
  }
  Plan plan = BuildPlan(request);
  // An entry that pins nothing is a typo that would disarm the gate: refused before any trial.
  if (Status u = UnmatchedExpectation(plan, request.expectations, request.all_columns); !u.ok()) {
    std::cerr << "locklab matrix: " << u.message() << "\n";
    return u.ExitCode();
  }
  std::vector<size_t> mine = SliceForShard(&plan, shard_index, shard_count);

  std::string matrix_dir;
  Status s = CreateRunDir(flags.out, shard_count > 1 ? "matrix-shard-" + std::to_string(shard_index) : "matrix",
                          plan.seed, &matrix_dir);
  if (!s.ok()) {
    std::cerr << "locklab matrix: " << s.message() << "\n";
    return s.ExitCode();
  }
  MakeDirs(matrix_dir + "/cells");
  for (auto& tr : plan.all) tr.options.out_dir = matrix_dir + "/cells";
  InstallInterruptHandlers();
  if (shard_count > 1) {
    std::cerr << "locklab matrix: shard " << shard_index << "/" << shard_count << ": " << mine.size()
              << " of " << plan.all.size() << " trials (plan " << plan.id << ")\n";
  }

  Nanos t0 = MonotonicNow();
  ScheduleResult ran = RunTrials(&plan, mine, matrix_dir, plan.jobs);
  if (!ran.io_error.ok()) {  // a full disk: the one line that matters (exit 70)
    std::cerr << (isatty(2) ? "\n" : "") << "locklab matrix: " << ran.io_error.message() << "\n";
    return ran.io_error.ExitCode();
  }
  MatrixOutput output;
  output.dir = matrix_dir;
  output.elapsed_s = ToMillis(MonotonicNow() - t0) / 1000.0;
  output.shard_index = shard_index;
  output.shard_count = shard_count;
  output.interrupted = Interrupted();
  Status written;
  int regressed = WriteMatrix(&plan, output, &written);
  if (!written.ok()) {
    std::cerr << "locklab matrix: " << written.message() << "\n";
    return written.ExitCode();
  }
  std::cout << "\nmatrix: " << matrix_dir << "/matrix.md (matrix.json, junit.xml; trial runs under "
            << matrix_dir << "/cells)\n";
  const std::string incomplete = Interrupted() ? "the matrix was interrupted"
                                 : ran.infra_failures > 0
                                     ? std::to_string(ran.infra_failures) + " trial(s) could not run"
                                     : "";
  if (int code = WriteExpectFlag(plan, flags.write_expect_path, "matrix", incomplete); code != 0) {
    return code;
  }
  // The script prints the `report: PATH` line itself (and makes the violated and stuck
  // trials' reports; the safe ones' on demand, `locklab report TRIAL_DIR`).
  // A report that could not be made (69, 70) is the exit code, as for `locklab report`.
  int report_exit = 0;
  if (flags.report && !Interrupted()) {
    report_exit = RunReportScript({"--matrix", matrix_dir, "--no-trials"});
  }
  // Last, so that a CI log ends with them: the regressed cells, one line each.
  if (shard_count == 1 && !Interrupted()) std::cout << RegressionSummary(plan);
  // Not a ranking of the trials' exit codes (base/exit_code.h) but a precedence: an
  // interrupted matrix is incomplete whatever its trials did (the trials it cut short may
  // have failed because of the interrupt), then a trial that could not run, then the
  // regressed cells (expectations, --fail-on), which a shard leaves to the merged matrix.
  if (Interrupted()) return kExitUnknown;
  if (ran.infra_failures > 0) return kExitInfrastructure;
  if (shard_count > 1) return WithReportExit(kExitOk, report_exit);
  return WithReportExit(regressed > 0 ? kExitViolated : kExitOk, report_exit);
}

}  // namespace locklab::harness
