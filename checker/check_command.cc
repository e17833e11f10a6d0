#include "checker/check_command.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>

#include "base/argv.h"
#include "base/exit_code.h"
#include "checker/history.h"
#include "checker/history_formats.h"
#include "checker/linearizability.h"
#include "checker/mutual_exclusion.h"
#include "checker/verdict.h"

namespace locklab::checker {
namespace {

CommandSpec MakeCheckSpec() {
  using K = FlagKind;
  CommandSpec s;
  s.name = "check";
  s.summary = "judge history files from any tool (lab jsonl, Jepsen EDN, Porcupine logs)";
  s.description = "A lab history (jsonl) without --model gets the run's own verdict (safe, violated, "
                  "unknown with its reason, coverage): exactly what its results.json says.";
  s.synopsis = {"locklab check [--model M] [--format jsonl|edn|porcupine-etcd] [--json] FILE..."};
  s.flags = {
      {"--model", {}, "M", K::kString,
       "a linearizability model: mutex, owner-mutex, fenced-mutex, register, cas-register "
       "(default the format's: a lab history gets the run's judge)", ""},
      {"--format", {}, "F", K::kString,
       "jsonl, edn or porcupine-etcd (default from the file)", ""},
      {"--json", {}, "", K::kSwitch, "print the verdicts as JSON", ""},
      {"--time-budget-ms", {}, "DURATION", K::kDuration,
       "the linearizability search's time budget (default 10s)", "budgets"},
      {"--memory-budget-mb", {}, "N", K::kInt, "its memory budget in MiB (default 1024)", "budgets"},
      {"--bench", {}, "", K::kSwitch, "time the check instead (--repeat times)", "budgets"},
      {"--repeat", {}, "N", K::kInt, "runs of --bench (default 5)", "budgets"},
  };
  s.notes =
      "exit: 0 valid/safe, 1 invalid/violated, 2 unknown, 64 usage, 65 bad input; several files: "
      "the worst,\nranked 1 > 65 > 2 > 0\n";
  return s;
}

// A usage error (base/argv.h wording): one line, exit 64, as for every command (the flags
// are `locklab check --help`'s).
int Usage(const Status& s) {
  std::cerr << "locklab " << s.message() << "\n";
  return 64;
}

struct Flags {
  bool has_model = false;
  Model model = Model::kOwnerMutex;
  bool has_format = false;
  HistoryFormat format = HistoryFormat::kJsonl;
  bool json = false;
  bool bench = false;
  bool has_time_budget = false;
  int64_t repeat = 5;
  LinearizabilityOptions options;
  std::vector<std::string> files;
};

// The models to run on one file: the chosen one, or the format's defaults (a native history
// gets owner-mutex on its lock ops and register on its resource ops, whichever exist).
std::vector<Model> ModelsFor(std::optional<Model> model, HistoryFormat fmt, const History& h) {
  if (model) return {*model};
  if (fmt != HistoryFormat::kJsonl) return {DefaultModel(fmt)};
  bool lock = false, reg = false;
  for (const Event& e : h) {
    if (e.process == kNemesisProcess) continue;
    lock = lock || ModelHasFunction(Model::kOwnerMutex, e.f);
    reg = reg || ModelHasFunction(Model::kRegister, e.f);
  }
  std::vector<Model> out;
  if (lock || !reg) out.push_back(Model::kOwnerMutex);
  if (reg) out.push_back(Model::kRegister);
  return out;
}

int VerdictExit(LinVerdict v) {
  return v == LinVerdict::kValid ? 0 : v == LinVerdict::kInvalid ? 1 : 2;
}

size_t PeakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;
}

// --bench: each file checked `repeat` times; min time per file, and the min total.
int RunBench(const Flags& fl) {
  struct Item {
    std::string path;
    HistoryFormat fmt;
    History h;
    std::vector<Model> models;
    double best_ms = std::numeric_limits<double>::infinity();
    size_t peak = 0;
    LinVerdict verdict = LinVerdict::kValid;
  };
  std::vector<Item> items;
  for (const auto& path : fl.files) {
    Item it;
    it.path = path;
    it.fmt = fl.format;
    Status s = ReadHistoryFile(path, &it.fmt, !fl.has_format, &it.h);
    if (!s.ok()) {
      std::cerr << "locklab check: " << s.message() << "\n";
      return 65;
    }
    it.models = ModelsFor(fl.has_model ? std::optional<Model>(fl.model) : std::nullopt, it.fmt, it.h);
    items.push_back(std::move(it));
  }
  double best_total = std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < std::max<int64_t>(fl.repeat, 1); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (Item& it : items) {
      auto a = std::chrono::steady_clock::now();
      LinVerdict worst = LinVerdict::kValid;
      for (Model m : it.models) {
        LinearizabilityResult res = CheckLinearizability(it.h, m, FormatOptions(it.fmt, fl.options));
        it.peak = std::max(it.peak, res.peak_memory_bytes);
        if (res.verdict != LinVerdict::kValid) worst = res.verdict;
      }
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                      .count();
      it.best_ms = std::min(it.best_ms, ms);
      it.verdict = worst;
    }
    best_total = std::min(best_total, std::chrono::duration<double, std::milli>(
                                          std::chrono::steady_clock::now() - t0)
                                          .count());
  }
  std::vector<const Item*> order;
  for (const Item& it : items) order.push_back(&it);
  std::sort(order.begin(), order.end(),
            [](const Item* a, const Item* b) { return a->best_ms > b->best_ms; });
  if (fl.json) {
    nlohmann::ordered_json j;
    j["files"] = items.size();
    j["repeat"] = fl.repeat;
    j["total_ms_min"] = best_total;
    j["peak_rss_bytes"] = PeakRssBytes();
    j["per_file"] = nlohmann::ordered_json::array();
    for (const Item* it : order) {
      j["per_file"].push_back({{"file", it->path},
                               {"ms_min", it->best_ms},
                               {"verdict", LinVerdictName(it->verdict)},
                               {"peak_search_bytes", it->peak}});
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << std::fixed << std::setprecision(3);
    std::cout << items.size() << " files, min of " << fl.repeat << " runs: total "
              << best_total << " ms, peak RSS " << PeakRssBytes() / (1024 * 1024) << " MiB\n";
    for (const Item* it : order) {
      std::cout << "  " << std::setw(10) << it->best_ms << " ms  " << std::setw(8)
                << LinVerdictName(it->verdict) << "  " << std::setw(9) << it->peak / 1024
                << " KiB  " << it->path << "\n";
    }
  }
  return 0;
}

// What checking a history may hold per byte of its file: the bound `check` refuses above
// (docs/checker.md; the measured ratios are in bench/results/checker-*.md).
constexpr double kMemoryPerHistoryByte = 3.0;

double PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

// Reads one file as ReadHistoryFile does, but a directory is refused (an ifstream reads it
// as empty: "valid, 0 operations"), and a lab history whose last line is torn (a killed
// run) is checked as the prefix before it, with one line on stderr saying so. The judge
// then finds no normal run end: never safe.
Status ReadHistory(const std::string& path, bool detect, HistoryFormat* fmt, History* h) {
  struct stat st {};
  const bool statted = stat(path.c_str(), &st) == 0;
  if (statted && S_ISDIR(st.st_mode)) {
    return Status::BadInput(path + ": is a directory, not a history file");
  }
  // The history is held whole while it is judged: about 3 times the file at most
  // (docs/checker.md, "Reading and memory"). One that cannot fit in this machine's memory is refused before it is read,
  // instead of swapping for an hour or being killed.
  const double need = static_cast<double>(st.st_size) * kMemoryPerHistoryByte;
  const double have = PhysicalMemoryBytes();
  if (statted && have > 0 && need > have) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  ": %.1f GiB history needs about %.1f GiB to check, more than this machine's "
                  "%.1f GiB of memory",
                  static_cast<double>(st.st_size) / (1 << 30), need / (1 << 30), have / (1 << 30));
    return Status::BadInput(path + buf);
  }
  Status s = ReadHistoryFile(path, fmt, detect, h);
  if (s.ok() || *fmt != HistoryFormat::kJsonl) return s;
  int torn = 0;
  History prefix;
  if (!ReadJsonlHistory(path, &prefix, /*allow_torn_tail=*/true, &torn).ok() || torn == 0) return s;
  std::cerr << "locklab check: " << path << ":" << torn << ": torn last line dropped (a killed "
            << "run?); checking the " << prefix.size() << " events before it\n";
  *h = std::move(prefix);
  return Status::Ok();
}

}  // namespace

const CommandSpec& CheckCommandSpec() {
  static const CommandSpec spec = MakeCheckSpec();
  return spec;
}

HistoryCheck CheckHistoryFile(const std::string& path, const HistoryCheckOptions& o) {
  HistoryCheck out;
  auto refuse = [&out](const std::string& message) {
    out.exit = kExitBadInput;
    out.error = message;
    out.json = nlohmann::ordered_json();
    out.text.clear();
    return std::move(out);
  };
  HistoryFormat fmt = o.format.value_or(HistoryFormat::kJsonl);
  History& h = out.history;
  Status s = ReadHistory(path, !o.format.has_value(), &fmt, &h);
  if (s.ok() && h.empty()) {
    s = Status::BadInput(path + ": no events (an empty history judges nothing)");
  }
  if (!s.ok()) return refuse(s.message());
  out.format = fmt;
  nlohmann::ordered_json& fj = out.json;
  fj["file"] = path;
  fj["format"] = HistoryFormatName(fmt);
  fj["events"] = h.size();
  std::string& text = out.text;
  text = path + " (" + HistoryFormatName(fmt) + ", " + std::to_string(h.size()) + " events)\n";
  int file_exit = 0;
  if (fmt == HistoryFormat::kJsonl && !o.model) {
    // A lock history: the one judge (checker/verdict.h), exactly as `locklab run` judged it.
    SortByTimeInPlace(&h);  // the judge then walks it as it is, with no sorted copy
    JudgeOptions jo;
    if (o.has_time_budget) jo.lin_time_budget = o.lin.time_budget;
    jo.memory_budget_bytes = o.lin.memory_budget_bytes;
    Judgement jd = JudgeHistory(h, jo);
    if (!jd.bad_input.ok()) {  // what --model refuses, the judge refuses too
      return refuse(path + ":" + jd.bad_input.message());
    }
    file_exit = VerdictExitCode(jd.verdict);
    text += "  verdict: " + std::string(VerdictName(jd.verdict)) + (jd.reason.empty() ? "" : " (" + jd.reason + ")") + "\n";
    for (const auto* l : {&jd.lock_lin, &jd.resource_lin}) text += "  " + l->ToText();
    if (!o.keep_lists) {
      // The text says counts only: the lists of holds and episodes, as JSON, were a
      // fifth of checking a long history's peak memory.
      jd.holds.clear();
      jd.holds.shrink_to_fit();
      jd.mutual_exclusion.episode_list.clear();
      jd.mutual_exclusion.episode_list.shrink_to_fit();
    }
    auto counts = jd.ToJson();
    // In words and rounded (--json keeps every digit).
    const auto& me = jd.mutual_exclusion;
    const auto& res = jd.resource;
    char overlap[32];
    snprintf(overlap, sizeof(overlap), "%.1f ms", me.overlap_ms);
    text += "  mutual exclusion: " + std::to_string(me.holds) + " holds, " +
            std::to_string(me.overlapping_pairs) + " overlapping pairs in " + std::to_string(me.episodes) +
            " episodes, " + overlap + " of overlap\n";
    text += "  resource: " + std::to_string(res.acknowledged_writes) + " acknowledged writes, " +
            (res.final_read_failed ? std::string("lost updates unknown (the final read of ") +
                                         res.final_read_failed_key + " got no answer)"
                                   : std::to_string(res.lost_updates) + " lost updates") +
            ", " + std::to_string(res.stale_writes_accepted) + " stale writes accepted, " +
            std::to_string(res.stale_writes_rejected) + " rejected\n";
    for (const auto& c : jd.coverage) text += "  coverage: " + c.Summary() + "\n";
    if (o.keep_lists) fj.update(counts);
  } else {
    fj["linearizability"] = nlohmann::ordered_json::array();
    for (Model m : ModelsFor(o.model, fmt, h)) {
      LinearizabilityResult r;
      s = CheckLinearizability(h, m, FormatOptions(fmt, o.lin), path, &r);
      if (!s.ok()) return refuse(s.message());
      if (r.invocations == 0) {
        // Valid in logic, but nothing was checked: never a pass for a CI suite. (With
        // invocations that all failed, the model's operations were there and none took
        // effect: valid, and its reason says vacuously.)
        r.verdict = LinVerdict::kUnknown;
        r.reason = "no " + std::string(ModelName(m)) + " operation among the " +
                   std::to_string(h.size()) + " events (wrong --model or --format?)";
      }
      fj["linearizability"].push_back(r.ToJson());
      text += "  " + r.ToText();
      file_exit = WorseCheckExit(file_exit, VerdictExit(r.verdict));
    }
  }
  fj["exit"] = file_exit;
  out.exit = file_exit;
  return out;
}

int RunCheckCommand(const std::vector<std::string>& args) {
  Flags fl;
  ArgvReader r(CheckCommandSpec(), args);
  while (r.Next()) {
    std::string v;
    Status s;
    if (!r.AtFlag()) {
      fl.files.push_back(r.word());
    } else if (r.Is("--json")) {
      s = r.NoValue();
      fl.json = true;
    } else if (r.Is("--bench")) {
      s = r.NoValue();
      fl.bench = true;
    } else if (r.Is("--model")) {
      if ((s = r.Value(&v)).ok() && !ParseModel(v, &fl.model)) s = r.Error("unknown model '" + v + "'");
      fl.has_model = true;
    } else if (r.Is("--format")) {
      if ((s = r.Value(&v)).ok() && !ParseHistoryFormat(v, &fl.format)) {
        s = r.Error("unknown format '" + v + "'");
      }
      fl.has_format = true;
    } else if (r.Is("--time-budget-ms")) {
      // A trillion ms or MiB is past any budget, and MiB << 20 still fits in size_t.
      s = r.Duration(std::chrono::milliseconds(0), std::chrono::milliseconds(999999999999),
                     &fl.options.time_budget);
      fl.has_time_budget = true;
    } else if (r.Is("--memory-budget-mb") || r.Is("--repeat")) {
      int64_t n = 0;
      s = r.Int(0, 999999999999, &n);
      if (r.Is("--memory-budget-mb")) fl.options.memory_budget_bytes = size_t(n) << 20;
      else fl.repeat = n;
    } else if (r.AtHelp()) {
      std::cout << HelpText(CheckCommandSpec());
      return 0;
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) return Usage(s);
  }
  if (fl.files.empty()) return Usage(Status::Usage("check: no FILE given (locklab check --help)"));
  if (fl.bench) return RunBench(fl);

  HistoryCheckOptions o;
  if (fl.has_model) o.model = fl.model;
  if (fl.has_format) o.format = fl.format;
  o.lin = fl.options;
  o.has_time_budget = fl.has_time_budget;
  o.keep_lists = fl.json;
  int worst = 0;
  int unreadable = 0, per_exit[3] = {0, 0, 0};
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& path : fl.files) {
    HistoryCheck c = CheckHistoryFile(path, o);
    worst = WorseCheckExit(worst, c.exit);
    if (c.exit == kExitBadInput) {
      std::cerr << "locklab check: " << c.error << "\n";
      ++unreadable;
      continue;
    }
    ++per_exit[c.exit];
    if (fl.json) all.push_back(std::move(c.json));
    else std::cout << c.text;
  }
  if (fl.json) {
    if (all.size() == 1) std::cout << all[0].dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else if (!all.empty()) std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  const int exit_code = worst;  // the worst: 1 > 65 > 2 > 0 (base/exit_code.h)
  if (fl.files.size() > 1) {
    std::cerr << "locklab check: " << fl.files.size() << " files: " << per_exit[1]
              << " violated/invalid, " << unreadable << " unreadable, " << per_exit[2]
              << " unknown, " << per_exit[0] << " safe/valid; exit " << exit_code
              << " (violated > unreadable > unknown > safe)\n";
  }
  return exit_code;
}

}  // namespace locklab::checker
