#include "harness/cli/report_command.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/argv.h"
#include "base/exit_code.h"
#include "checker/check_command.h"
#include "harness/lab/run_store.h"
#include "harness/scenario/cli_spec.h"
#include "harness/trial/report_script.h"

namespace locklab::harness {
namespace {

constexpr const char* kUsage =
    "locklab report: usage: locklab report RUN_DIR | --matrix MATRIX_DIR | "
    "[--format F] [--model M] [--out FILE.html] HISTORY_FILE\n";

// A history without a clock (EDN, Porcupine logs) has positions for times. The page draws
// it on its source lines instead (1 line = 1 ms of the drawing's axis, which then reads
// "line N"), the unit the check's sentence speaks in ("client 70's read at line 503").
constexpr int64_t kNanosPerLine = 1'000'000;

bool Clockless(checker::HistoryFormat f) { return f != checker::HistoryFormat::kJsonl; }

// Every "invoke_ns"/"complete_ns" in `j` (the unplaceable export's operations) from a
// position to its line's drawing time; -1 (no completion) stays.
void PositionsToLines(nlohmann::ordered_json* j,
                      const std::unordered_map<int64_t, int>& line_of_time) {
  if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) {
      if ((it.key() == "invoke_ns" || it.key() == "complete_ns") && it->is_number_integer()) {
        auto found = line_of_time.find(it->get<int64_t>());
        if (found != line_of_time.end()) *it = int64_t{found->second} * kNanosPerLine;
      } else {
        PositionsToLines(&*it, line_of_time);
      }
    }
  } else if (j->is_array()) {
    for (auto& x : *j) PositionsToLines(&x, line_of_time);
  }
}

struct HistoryReportArgs {
  std::string file;
  std::string out;  // empty: FILE.html
  checker::HistoryCheckOptions check;
};

// The history report: judged here, drawn by the script from a scratch directory.
int ReportHistory(const HistoryReportArgs& a) {
  checker::HistoryCheckOptions o = a.check;
  o.keep_lists = true;  // the holds and overlaps are drawn
  checker::HistoryCheck c = checker::CheckHistoryFile(a.file, o);
  if (c.exit == kExitBadInput) {
    std::cerr << "locklab report: " << c.error << "\n";
    return kExitBadInput;
  }
  nlohmann::ordered_json bundle;
  bundle["file"] = a.file;
  bundle["format"] = checker::HistoryFormatName(c.format);
  bundle["time_unit"] = Clockless(c.format) ? "line" : "ns";
  bundle["check_text"] = c.text;  // what `locklab check FILE` prints for it
  bundle["check"] = std::move(c.json);
  std::string events;
  std::unordered_map<int64_t, int> line_of_time;
  for (checker::Event e : c.history) {
    if (Clockless(c.format)) {
      line_of_time[e.time.count()] = e.line;
      e.time = Nanos(int64_t{e.line} * kNanosPerLine);
    }
    events += checker::ToJsonLine(e);
    events += '\n';
  }
  if (Clockless(c.format)) PositionsToLines(&bundle["check"], line_of_time);
  c.history.clear();

  const char* tmp_env = getenv("TMPDIR");
  std::string scratch = std::string(tmp_env && *tmp_env ? tmp_env : "/tmp") + "/locklab-report-XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) {
    std::cerr << "locklab report: " << scratch << ": cannot create a scratch directory\n";
    return kExitIo;
  }
  const std::string judged = scratch + "/judged.json", events_path = scratch + "/events.jsonl";
  int exit_code = kExitIo;
  if (!WriteFile(judged, bundle.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).ok() ||
      !WriteFile(events_path, events).ok()) {
    std::cerr << "locklab report: " << scratch << ": cannot write the judgement for the page\n";
  } else {
    const std::string out = a.out.empty() ? a.file + ".html" : a.out;
    exit_code = RunReportScript({"--history", a.file, "--judged", judged, "--events", events_path,
                                 "--out", out});
  }
  unlink(judged.c_str());
  unlink(events_path.c_str());
  rmdir(scratch.c_str());
  return exit_code;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int RunReportCommand(const std::vector<std::string>& args) {
  // One RUN_DIR, one --matrix MATRIX_DIR (handed to the script as "--matrix DIR") or one
  // HISTORY_FILE with check's --format/--model and an --out.
  std::string target, matrix;
  HistoryReportArgs history;
  bool history_flags = false;
  ArgvReader r(ReportCommandSpec(), args);
  while (r.Next()) {
    Status s;
    std::string v;
    if (!r.AtFlag()) {
      if (target.empty() && matrix.empty()) target = r.word();
      else s = Status::Usage("report: one RUN_DIR, HISTORY_FILE or --matrix MATRIX_DIR, got '" +
                             r.word() + "' too");
    } else if (r.Is("--matrix")) {
      if ((s = r.Value(&v)).ok()) {
        if (target.empty() && matrix.empty()) matrix = v;
        else s = Status::Usage("report: one RUN_DIR, HISTORY_FILE or --matrix MATRIX_DIR, got '" +
                               v + "' too");
      }
    } else if (r.Is("--model")) {
      checker::Model m = checker::Model::kOwnerMutex;
      if ((s = r.Value(&v)).ok() && !checker::ParseModel(v, &m)) s = r.Error("unknown model '" + v + "'");
      history.check.model = m;
      history_flags = true;
    } else if (r.Is("--format")) {
      checker::HistoryFormat f = checker::HistoryFormat::kJsonl;
      if ((s = r.Value(&v)).ok() && !checker::ParseHistoryFormat(v, &f)) {
        s = r.Error("unknown format '" + v + "'");
      }
      history.check.format = f;
      history_flags = true;
    } else if (r.Is("--out")) {
      if ((s = r.Value(&history.out)).ok() && history.out.empty()) s = r.Error("an empty path");
      history_flags = true;
    } else if (r.AtHelp()) {
      std::cout << HelpText(ReportCommandSpec());
      return 0;
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return kExitUsage;
    }
  }
  if (!matrix.empty()) {
    if (history_flags) {
      std::cerr << "locklab report: --format, --model and --out are for a HISTORY_FILE, not "
                   "--matrix\n";
      return kExitUsage;
    }
    return RunReportScript({"--matrix", matrix});
  }
  if (target.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  if (IsDirectory(target)) {
    if (history_flags) {
      std::cerr << "locklab report: " << target << ": a run directory; --format, --model and "
                << "--out are for a HISTORY_FILE (its history is " << target
                << "/history.jsonl)\n";
      return kExitUsage;
    }
    return RunReportScript({target});
  }
  struct stat st {};
  if (stat(target.c_str(), &st) != 0) {
    std::cerr << "locklab report: " << target << ": no such run directory or history file\n";
    return kExitBadInput;
  }
  history.file = target;
  return ReportHistory(history);
}

}  // namespace locklab::harness
