// Checker benchmarks:
// * EtcdAll: the 102 Porcupine etcd logs (cas-register, Porcupine's reading), the whole set
//   per iteration; EtcdFile/<name>: each file alone. Parsing is outside the timing. Run with
//   --benchmark_repetitions=5 --benchmark_report_aggregates_only=true to get the min
//   ("_min" rows). Counters: peak search cache bytes, and the process's peak RSS.
// * Overlap1M: ComputeHoldIntervals + CheckMutualExclusion on a generated 1,000,000-event
//   lock history (8 clients, leases that sometimes expire so overlaps exist).
// * KeyScaling/<keys>: linearizability of `keys` independent registers, each with the same
//   200-op, 5-client history shape; the fitted complexity should be O(N).
// * TypicalRun: ~5,000 events, 8 clients, one lock and one counter: owner-mutex + register,
//   what `locklab run` does for results.json.
// * --scale (not a Google Benchmark): generated lock histories of 10k to 1M events, with 0%,
//   1% and 10% of acquires indeterminate, valid and with an intruder (invalid), each written
//   to a jsonl file and checked by a fresh `locklab-check --model M` process; prints the wall
//   time and the process's peak RSS per row, so the growth with size is visible, and first
//   checks the generator's and the checker's verdicts against the brute-force checker on
//   small histories of the same shape. `--scale --sizes 10000,100000 --model owner-mutex`
//   narrows it; `--write EVENTS PERCENT valid|invalid FILE` only writes one history.
// * --wide: the wide family (ten windows of k acquires and k releases open at once, k = 4..16,
//   valid and invalid, mutex and owner-mutex) and 20 processes on one lock (100k, 400k
//   events; --model mutex and the judge), each checked by a fresh `locklab-check` with a
//   10 s budget: wall time and peak RSS per row. `--wide --k 8,12` narrows it, `--check-bin
//   PATH` runs another build's locklab-check on the same rows;
//   `--write wide K valid|invalid FILE` writes one wide history.
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/argv.h"
#include "base/numbers.h"
#include "checker/history_formats.h"
#include "checker/linearizability.h"
#include "checker/mutual_exclusion.h"
#include "checker/testing/brute_force.h"
#include "checker/testing/lock_history_generator.h"
#include "checker/testing/wide_history_generator.h"

namespace locklab::checker {
namespace {

namespace fs = std::filesystem;

double PeakRssMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

struct EtcdFile {
  std::string name;
  History h;
};

const std::vector<EtcdFile>& EtcdFiles() {
  static std::vector<EtcdFile>* files = [] {
    auto* v = new std::vector<EtcdFile>;
    fs::path dir = fs::path(LOCKLAB_TEST_DATA) / "porcupine-etcd";
    if (!fs::is_directory(dir)) return v;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".log") continue;
      EtcdFile f;
      f.name = e.path().filename().string();
      HistoryFormat fmt = HistoryFormat::kPorcupineEtcd;
      if (!ReadHistoryFile(e.path().string(), &fmt, false, &f.h).ok()) continue;
      v->push_back(std::move(f));
    }
    std::sort(v->begin(), v->end(),
              [](const EtcdFile& a, const EtcdFile& b) { return a.name < b.name; });
    return v;
  }();
  return *files;
}

double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

const LinearizabilityOptions kEtcdOptions = FormatOptions(HistoryFormat::kPorcupineEtcd);

void BM_EtcdAll(benchmark::State& state) {
  const auto& files = EtcdFiles();
  if (files.size() != 102) state.SkipWithError("porcupine-etcd data set missing or incomplete");
  size_t peak = 0;
  int valid = 0;
  for (auto _ : state) {
    valid = 0;
    for (const auto& f : files) {
      LinearizabilityResult r = CheckLinearizability(f.h, Model::kCasRegister, kEtcdOptions);
      peak = std::max(peak, r.peak_memory_bytes);
      valid += r.verdict == LinVerdict::kValid;
    }
  }
  state.counters["files"] = static_cast<double>(files.size());
  state.counters["valid"] = valid;
  state.counters["peak_search_KiB"] = static_cast<double>(peak) / 1024;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}
BENCHMARK(BM_EtcdAll)->Unit(benchmark::kMillisecond)->MinTime(0.5)->ComputeStatistics("min", Min);

void BM_EtcdFile(benchmark::State& state, const EtcdFile* f) {
  size_t peak = 0;
  for (auto _ : state) {
    LinearizabilityResult r = CheckLinearizability(f->h, Model::kCasRegister, kEtcdOptions);
    peak = std::max(peak, r.peak_memory_bytes);
    benchmark::DoNotOptimize(r.verdict);
  }
  state.counters["peak_search_KiB"] = static_cast<double>(peak) / 1024;
}

// A lock history: 8 clients acquire with leases; some hold past their lease (overlaps).
History LockHistory(size_t events, uint64_t seed) {
  std::mt19937_64 rng(seed);
  History h;
  h.reserve(events + 8);
  int64_t t = 0;
  int64_t index = 0;
  int64_t holder_until = 0;  // lease end of the current holder
  auto push = [&](int64_t p, EventType type, const char* f, nlohmann::json v) {
    Event e;
    e.index = index++;
    e.time = Nanos(t);
    e.process = p;
    e.type = type;
    e.f = f;
    e.key = "lock:0";
    e.value = std::move(v);
    h.push_back(std::move(e));
  };
  int64_t fence = 0;
  while (h.size() < events) {
    int64_t p = static_cast<int64_t>(rng() % 8);
    t += 1000 + static_cast<int64_t>(rng() % 5000);
    push(p, EventType::kInvoke, "acquire", nullptr);
    t += 500;
    if (t < holder_until) {
      push(p, EventType::kFail, "acquire", nullptr);
      continue;
    }
    std::string tok = std::to_string(++fence);
    push(p, EventType::kOk, "acquire", {{"token", tok}, {"fence", fence}});
    holder_until = t + 10000;
    if (rng() % 50 == 0) {
      // The holder pauses past its lease; another client acquires, then both release.
      int64_t q = (p + 1) % 8;
      t = holder_until + 1000;
      push(q, EventType::kInvoke, "acquire", nullptr);
      t += 500;
      std::string tok2 = std::to_string(++fence);
      push(q, EventType::kOk, "acquire", {{"token", tok2}, {"fence", fence}});
      t += 1000;
      push(p, EventType::kInvoke, "release", {{"token", tok}});
      t += 500;
      push(p, EventType::kFail, "release", nullptr);
      t += 1000;
      push(q, EventType::kInvoke, "release", {{"token", tok2}});
      t += 500;
      push(q, EventType::kOk, "release", nullptr);
      holder_until = 0;
      continue;
    }
    t += 2000 + static_cast<int64_t>(rng() % 6000);
    push(p, EventType::kInvoke, "release", {{"token", tok}});
    t += 500;
    push(p, EventType::kOk, "release", nullptr);
  }
  return h;
}

void BM_Overlap1M(benchmark::State& state) {
  History h = LockHistory(1000000, 1);
  int64_t pairs = 0;
  for (auto _ : state) {
    auto holds = ComputeHoldIntervals(h);
    MutualExclusionReport r = CheckMutualExclusion(holds);
    pairs = r.overlapping_pairs;
  }
  state.counters["events"] = static_cast<double>(h.size());
  state.counters["overlapping_pairs"] = static_cast<double>(pairs);
}
BENCHMARK(BM_Overlap1M)->Unit(benchmark::kMillisecond)->ComputeStatistics("min", Min);

// One register per key; per key the same shape: 5 clients, 200 ops, some unknown writes.
History RegisterHistory(int keys, uint64_t seed) {
  History h;
  int64_t index = 0;
  for (int k = 0; k < keys; ++k) {
    std::mt19937_64 rng(seed);  // same shape on every key
    std::string key = "counter:" + std::to_string(k);
    int64_t value = -1;  // -1: nil
    int64_t t = 0;
    for (int op = 0; op < 200; ++op) {
      int64_t p = k * 5 + op % 5;  // each key has its own 5 clients
      bool write = rng() % 2;
      int64_t v = static_cast<int64_t>(rng() % 5);
      bool info = write && rng() % 25 == 0;
      Event e;
      e.time = Nanos(t);
      e.process = p;
      e.key = key;
      e.f = write ? "write" : "read";
      e.index = index++;
      e.type = EventType::kInvoke;
      e.value = write ? nlohmann::json(v) : nlohmann::json();
      h.push_back(e);
      if (write && !info) value = v;
      e.time = Nanos(t + 300 + static_cast<int64_t>(rng() % 200));  // overlaps the next ops
      e.index = index++;
      e.type = info ? EventType::kInfo : EventType::kOk;
      if (!write) e.value = value < 0 ? nlohmann::json() : nlohmann::json(value);
      h.push_back(e);
      t += 100;
      (void)p;
    }
  }
  return SortedByTime(std::move(h));
}

void BM_KeyScaling(benchmark::State& state) {
  int keys = static_cast<int>(state.range(0));
  History h = RegisterHistory(keys, 3);
  LinVerdict v = LinVerdict::kValid;
  for (auto _ : state) v = CheckLinearizability(h, Model::kRegister).verdict;
  if (v != LinVerdict::kValid) state.SkipWithError("generated history should be valid");
  state.SetComplexityN(keys);
  state.counters["events"] = static_cast<double>(h.size());
}
BENCHMARK(BM_KeyScaling)
    ->RangeMultiplier(4)
    ->Range(1, 256)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN)
    ->ComputeStatistics("min", Min);

// A typical `locklab run`: ~5,000 events, 8 clients, lock:0 and counter:0 under it.
History TypicalRun() {
  History h = LockHistory(3400, 9);
  std::mt19937_64 rng(5);
  History out;
  int64_t value = -1;
  for (const Event& e : h) {
    out.push_back(e);
    if (e.f == "acquire" && e.type == EventType::kOk) {  // read + write the counter
      Event r = e;
      r.key = "counter:0";
      r.f = "read";
      r.type = EventType::kInvoke;
      r.value = nullptr;
      r.time += Nanos(100);
      out.push_back(r);
      r.type = EventType::kOk;
      r.time += Nanos(100);
      r.value = value < 0 ? nlohmann::json() : nlohmann::json(value);
      out.push_back(r);
      Event w = r;
      w.f = "write";
      w.type = EventType::kInvoke;
      w.time += Nanos(100);
      w.value = value + 1;
      out.push_back(w);
      w.type = EventType::kOk;
      w.time += Nanos(100);
      out.push_back(w);
      value = value + 1;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int64_t>(i);
  return SortedByTime(std::move(out));
}

void BM_TypicalRun(benchmark::State& state) {
  History h = TypicalRun();
  LinVerdict lock = LinVerdict::kValid, reg = LinVerdict::kValid;
  for (auto _ : state) {
    lock = CheckLinearizability(h, Model::kOwnerMutex).verdict;
    reg = CheckLinearizability(h, Model::kRegister).verdict;
  }
  state.counters["events"] = static_cast<double>(h.size());
  state.counters["lock_valid"] = lock == LinVerdict::kValid;
  state.counters["lock_invalid"] = lock == LinVerdict::kInvalid;
  state.counters["register_valid"] = reg == LinVerdict::kValid;
}
BENCHMARK(BM_TypicalRun)->Unit(benchmark::kMillisecond)->ComputeStatistics("min", Min);

void RegisterPerFile() {
  for (const auto& f : EtcdFiles()) {
    benchmark::RegisterBenchmark(("BM_EtcdFile/" + f.name).c_str(), BM_EtcdFile, &f)
        ->Unit(benchmark::kMillisecond)
        ->ComputeStatistics("min", Min);
  }
}

// ---- --scale ---------------------------------------------------------------------------

testing::LockHistorySpec ScaleSpec(int64_t events, int percent, bool invalid) {
  testing::LockHistorySpec spec;
  spec.events = events;
  spec.indeterminate = percent / 100.0;
  spec.violation = invalid;
  spec.seed = 20261123 + static_cast<uint64_t>(events) + static_cast<uint64_t>(percent);
  return spec;
}

bool WriteHistory(const History& h, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  for (const Event& e : h) out << ToJsonLine(e) << "\n";
  out.close();
  return static_cast<bool>(out);
}

// The generator's small histories against the brute force, for every shape of the table.
bool BruteForceAgreement(Model m) {
  int agree = 0, total = 0, invalid = 0;
  for (int percent : {0, 1, 10}) {
    for (bool violation : {false, true}) {
      for (uint64_t seed = 1; seed <= 200; ++seed) {
        testing::LockHistorySpec spec;
        spec.events = 10 + static_cast<int64_t>(seed % 8);
        spec.clients = 2 + static_cast<int>(seed % 2);
        spec.indeterminate = percent / 100.0 * 4;  // more of them in so few events
        spec.violation = violation;
        spec.seed = seed;
        History h = testing::GenerateLockHistory(spec);
        bool want = testing::BruteForce(m, testing::OperationsOf(h), false);
        LinVerdict got = CheckLinearizability(h, m).verdict;
        bool ok = got == (want ? LinVerdict::kValid : LinVerdict::kInvalid) &&
                  (violation || want);
        agree += ok;
        invalid += !want;
        ++total;
      }
    }
  }
  std::printf("brute force (%s): %d of %d small generated histories agree (%d invalid)\n",
              ModelName(m), agree, total, invalid);
  return agree == total;
}

struct ChildRun {
  int exit_code = -1;
  double wall_s = 0;
  double cpu_s = 0;  // user + system: what the row cost on a machine others share
  double peak_rss_mib = 0;
};

// `model` null: the lab's judge (no --model), as `locklab check` on a run's history.
ChildRun RunChecker(const std::string& bin, std::optional<Model> m, const std::string& file,
                    std::vector<std::string> extra = {}) {
  ChildRun r;
  std::vector<std::string> args = {bin};
  if (m) args.insert(args.end(), {"--model", ModelName(*m)});
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(file);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

int RunScale(const std::vector<std::string>& args) {
  std::vector<int64_t> sizes = {10000, 100000, 400000, 1000000};
  Model model = Model::kMutex;
  ArgvReader r("checker_bench --scale", args);
  while (r.Next()) {
    std::string v;
    Status s = r.AtFlag() ? r.Value(&v) : r.Unknown();
    if (!s.ok()) {
      // reported below
    } else if (r.Is("--sizes")) {
      sizes.clear();
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ',');) {
        std::optional<int64_t> n = ParseInt(part, 1, kInt64Max);
        if (!n) s = r.Error(ExpectedInteger(1, kInt64Max, part));
        sizes.push_back(n.value_or(0));
      }
    } else if (r.Is("--model")) {
      if (!ParseModel(v, &model)) s = r.Error("unknown model '" + v + "'");
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 64;
    }
  }
  bool agree = BruteForceAgreement(model);
  std::string dir = fs::temp_directory_path() / ("checker-scale-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::printf("\n%-9s %-8s %-8s %8s %10s %8s %s\n", "events", "unknown", "expect", "verdict",
              "wall s", "RSS MiB",
              ("(locklab-check --model " + std::string(ModelName(model)) + ")").c_str());
  bool all_right = agree;
  for (int64_t n : sizes) {
    for (int percent : {0, 1, 10}) {
      for (bool invalid : {false, true}) {
        History h = testing::GenerateLockHistory(ScaleSpec(n, percent, invalid));
        std::string file = dir + "/h.jsonl";
        if (!WriteHistory(h, file)) {
          std::fprintf(stderr, "checker_bench: cannot write %s\n", file.c_str());
          return 70;
        }
        size_t events = h.size();
        h.clear();
        h.shrink_to_fit();
        ChildRun r = RunChecker(LOCKLAB_CHECK_BIN, std::optional<Model>(model), file);
        const char* got = r.exit_code == 0 ? "valid" : r.exit_code == 1 ? "invalid"
                          : r.exit_code == 2 ? "unknown" : "error";
        bool right = r.exit_code == (invalid ? 1 : 0);
        all_right = all_right && right;
        std::printf("%-9zu %-8s %-8s %8s %10.3f %8.0f%s\n", events,
                    (std::to_string(percent) + "%").c_str(), invalid ? "invalid" : "valid", got,
                    r.wall_s, r.peak_rss_mib, right ? "" : "  WRONG");
        std::fflush(stdout);
      }
    }
  }
  fs::remove_all(dir);
  return all_right ? 0 : 1;
}

// ---- --wide ----------------------------------------------------------------------------

const char* VerdictOfExit(int code) {
  return code == 0 ? "valid" : code == 1 ? "invalid" : code == 2 ? "unknown" : "error";
}

testing::WideHistorySpec WideSpec(int k, bool invalid) {
  testing::WideHistorySpec spec;
  spec.windows = 10;
  spec.k = k;
  spec.invalid = invalid;
  spec.seed = 20261127 + static_cast<uint64_t>(k);
  return spec;
}

// Wide windows (k acquires and k releases open at once, ten windows; valid and invalid), and
// 20 processes contending for one lock (100k and 400k events), each checked by a fresh
// `locklab-check` process with a 10 s time budget: wall time and peak RSS per row. An
// invalid row answered `unknown` is the budget honoured, not a wrong verdict.
int RunWide(const std::vector<std::string>& args) {
  std::vector<int64_t> ks = {4, 6, 8, 10, 12, 14, 16};
  bool processes20 = true;
  std::string check_bin = LOCKLAB_CHECK_BIN;
  ArgvReader r("checker_bench --wide", args);
  while (r.Next()) {
    std::string v;
    Status s = r.AtFlag() ? r.Value(&v) : r.Unknown();
    if (s.ok() && r.Is("--check-bin")) {
      check_bin = v;  // another build's locklab-check, to compare revisions on the same rows
    } else if (s.ok() && r.Is("--k")) {
      ks.clear();
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ',');) {
        std::optional<int64_t> n = ParseInt(part, 1, 60);
        if (!n) s = r.Error(ExpectedInteger(1, 60, part));
        ks.push_back(n.value_or(1));
      }
      processes20 = false;
    } else if (s.ok()) {
      s = r.Unknown();
    }
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 64;
    }
  }
  std::string dir = fs::temp_directory_path() / ("checker-wide-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = dir + "/h.jsonl";
  bool all_right = true;
  std::printf("%-28s %-12s %-8s %-8s %9s %8s %8s\n", "history", "model", "expect", "verdict",
              "wall s", "cpu s", "RSS MiB");
  for (int64_t k : ks) {
    for (bool invalid : {false, true}) {
      History h = testing::GenerateWideHistory(WideSpec(static_cast<int>(k), invalid));
      if (!WriteHistory(h, file)) return 70;
      for (Model m : {Model::kMutex, Model::kOwnerMutex}) {
        ChildRun run = RunChecker(check_bin, m, file, {"--time-budget-ms", "10000"});
        bool right = run.exit_code == (invalid ? 1 : 0) || (invalid && run.exit_code == 2);
        all_right = all_right && right;
        std::printf("%-28s %-12s %-8s %-8s %9.3f %8.3f %8.0f%s\n",
                    ("wide k=" + std::to_string(k) + " x10").c_str(), ModelName(m),
                    invalid ? "invalid" : "valid", VerdictOfExit(run.exit_code), run.wall_s,
                    run.cpu_s, run.peak_rss_mib, right ? "" : "  WRONG");
        std::fflush(stdout);
      }
    }
  }
  if (processes20) {
    for (int64_t n : {100000, 400000}) {
      for (bool invalid : {false, true}) {
        testing::LockHistorySpec spec = ScaleSpec(n, 0, invalid);
        spec.clients = 20;
        History h = testing::GenerateLockHistory(spec);
        if (!WriteHistory(h, file)) return 70;
        size_t events = h.size();
        h.clear();
        h.shrink_to_fit();
        double mib = static_cast<double>(fs::file_size(file)) / (1 << 20);
        for (std::optional<Model> m : {std::optional<Model>(Model::kMutex), std::optional<Model>()}) {
          ChildRun run = RunChecker(check_bin, m, file);
          // The judge: violated (1), or safe (0): no run events declare faults to be met.
          bool right = run.exit_code == (invalid ? 1 : 0);
          all_right = all_right && right;
          std::printf("%-28s %-12s %-8s %-8s %9.3f %8.3f %8.0f%s\n",
                      ("20 processes " + std::to_string(events / 1000) + "k ev " +
                       std::to_string(static_cast<int>(mib)) + " MiB").c_str(),
                      m ? ModelName(*m) : "(judge)", invalid ? "invalid" : "valid",
                      VerdictOfExit(run.exit_code), run.wall_s, run.cpu_s, run.peak_rss_mib,
                      right ? "" : "  WRONG");
          std::fflush(stdout);
        }
      }
    }
  }
  fs::remove_all(dir);
  return all_right ? 0 : 1;
}

int WriteOne(const std::vector<std::string>& args) {
  if (args.size() == 4 && args[0] == "wide") {  // --write wide K valid|invalid FILE
    std::optional<int64_t> k = ParseInt(args[1], 1, 60);
    if (!k) {
      std::fprintf(stderr, "checker_bench --write: %s\n", ExpectedInteger(1, 60, args[1]).c_str());
      return 64;
    }
    History h = testing::GenerateWideHistory(WideSpec(static_cast<int>(*k), args[2] == "invalid"));
    return WriteHistory(h, args[3]) ? 0 : 70;
  }
  if (args.size() != 4) {
    std::fprintf(stderr, "usage: checker_bench --write EVENTS PERCENT valid|invalid FILE\n"
                         "       checker_bench --write wide K valid|invalid FILE\n");
    return 64;
  }
  std::optional<int64_t> events = ParseInt(args[0], 1, kInt64Max);
  std::optional<int64_t> percent = ParseInt(args[1], 0, 100);
  if (!events || !percent) {
    std::fprintf(stderr, "checker_bench --write: %s\n",
                 !events ? ExpectedInteger(1, kInt64Max, args[0]).c_str()
                         : ExpectedInteger(0, 100, args[1]).c_str());
    return 64;
  }
  History h = testing::GenerateLockHistory(
      ScaleSpec(*events, static_cast<int>(*percent), args[2] == "invalid"));
  return WriteHistory(h, args[3]) ? 0 : 70;
}

}  // namespace
}  // namespace locklab::checker

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--wide") {
    return locklab::checker::RunWide(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (argc >= 2 && (std::string(argv[1]) == "--scale" || std::string(argv[1]) == "--write")) {
    std::vector<std::string> rest(argv + 2, argv + argc);
    return std::string(argv[1]) == "--scale" ? locklab::checker::RunScale(rest)
                                             : locklab::checker::WriteOne(rest);
  }
  benchmark::Initialize(&argc, argv);
  locklab::checker::RegisterPerFile();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
