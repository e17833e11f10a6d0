#include "harness/matrix/matrix_outputs.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/version.h"
#include "checker/trial_outcome.h"
#include "harness/trial/child_runs.h"
#include "harness/matrix/detection_power.h"
#include "harness/lab/run_store.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

using Json = nlohmann::ordered_json;
using checker::Verdict;

// What a cell's verdict needs of one trial: its outcome as read at the file's edge
// (checker::TrialOutcome::FromJson), and what its faults' coverage showed.
struct CellTrial {
  // The trial's result (TrialOutcome::Result: violated, else stuck, else safe, else
  // unknown); unknown when the trial did not run.
  checker::TrialResult result = checker::TrialResult::kUnknown;
  std::string verdict_reason;                    // "the trial did not run" when it did not
  Verdict resource_verdict = Verdict::kUnknown;  // unknown when the trial did not run
  bool fault_bit = false;        // every fault of the cell bit (results.json coverage)
  std::string evidence;          // per fault "FAULT: evidence" (coverage), "; "-joined
  std::optional<double> first_violation_ms;
  std::optional<double> untrusted_lag_ms;  // set: the lab ran too late to trust the timing
  std::string run_dir;                     // results.json run_dir, "" when it left none
};

// A trial that did not run (a child that failed, exit 64+) may still have left a
// results.json: its coverage, first violation and lab lag count, its verdicts do not.
CellTrial ReadOutcomeOrThrow(const PlannedTrial& tr) {
  const Json& r = tr.results;
  CellTrial o;
  const checker::TrialOutcome read =
      r.is_object() || tr.ran ? checker::TrialOutcome::FromJson(r) : checker::TrialOutcome();
  if (tr.ran) {
    o.result = read.Result();
    o.verdict_reason = read.verdict_reason.value_or("no reason given");
    o.resource_verdict = read.resource_verdict;
  } else {
    o.verdict_reason = "the trial did not run";
  }
  // Every fault of the cell bit: at least one coverage entry, and each one's bit.
  bool bit = !read.coverage.empty();
  for (const auto& cov : read.coverage) {
    bit = bit && cov.bit;
    if (!cov.evidence) continue;
    const std::string seen = cov.effects_seen > 0 ? "" : "not seen: ";
    o.evidence += (o.evidence.empty() ? "" : "; ") + cov.fault + ": " + seen + *cov.evidence;
  }
  o.fault_bit = bit;
  o.first_violation_ms = read.first_violation_ms;
  if (!read.Trusted()) o.untrusted_lag_ms = read.lab_lag_max_ms;
  o.run_dir = read.run_dir;
  return o;
}

// A results.json of another shape (a shard's matrix.json edited by hand, or written by
// another version of the lab) makes its trial unknown with the reason, not the command abort.
CellTrial ReadOutcome(const PlannedTrial& tr) {
  try {
    return ReadOutcomeOrThrow(tr);
  } catch (const nlohmann::json::exception& e) {
    CellTrial o;
    o.verdict_reason = std::string("malformed results.json (") + e.what() + ")";
    return o;
  }
}

// The matrix-wide counts the three files report.
struct Totals {
  int mismatches = 0;
  int regressed = 0;      // cells that fail the run: mismatches of pinned cells, --fail-on hits
  int untrusted_trials = 0;
  double worst_lag_ms = 0;
  int not_run = 0;      // trials of this output never started
  size_t in_slice = 0;  // trials of this output
};

// "LOCK x FAULT: expected S, got V (1/1 violated; FILE:LINE): REASON; trial DIR" (or "got V
// (1/1 violated), --fail-on violated: ..."): the trial named is the first whose outcome
// made the letter that failed (its verdict reason is the cell's reason).
std::string RegressionLine(const Cell& c, const std::vector<CellTrial>& outcomes, const FailOn& fail_on) {
  const std::string letter = Letter(c.result);
  const bool verdict_wrong = c.mismatch ? (!c.expected.empty() && c.expected != letter) : true;
  std::string line = c.lock + " x " + c.fault + ": ";
  std::string counts = std::to_string(c.violated) + "/" + std::to_string(c.trials.size()) + " violated";
  if (c.stuck > 0) counts += ", " + std::to_string(c.stuck) + " stuck";
  if (c.unknown > 0) counts += ", " + std::to_string(c.unknown) + " unknown";
  if (!c.mismatch) {
    line += "got " + letter + " (" + counts + "), --fail-on " + fail_on.ToString();
  } else if (verdict_wrong) {
    line += "expected " + c.expected + ", got " + letter + " (" + counts + "; " + c.origin + ")";
  } else {
    line += "expected resource " + c.expected_resource + ", got resource " + Letter(c.resource) + " (" +
            counts + "; " + c.origin + ")";
  }
  const CellTrial* decisive = nullptr;
  for (const auto& t : outcomes) {
    const bool made_it = verdict_wrong ? t.result == c.result
                                       : (c.resource == checker::TrialResult::kViolated) ==
                                             (t.resource_verdict == Verdict::kViolated);
    if (made_it) {
      decisive = &t;
      break;
    }
  }
  if (!decisive && !outcomes.empty()) decisive = &outcomes.front();
  if (decisive) {
    line += ": " + decisive->verdict_reason;
    if (!decisive->run_dir.empty()) line += "; trial " + decisive->run_dir;
  }
  return line;
}

// Keeps each cell's trials of this output, and judges the cell from them. Against its
// expectation and --fail-on only when `whole` (a whole or merged matrix): a shard holds some
// of a cell's trials, and a letter from those (S from the one safe trial of a V cell) is no
// verdict to fail a cell by, in its junit.xml or anywhere.
Totals JudgeCells(Plan* plan, bool whole) {
  Totals totals;
  for (auto& c : plan->cells) {
    std::vector<size_t> kept;
    for (size_t ti : c.trials) {
      if (plan->all[ti].in_slice) kept.push_back(ti);
    }
    c.trials = kept;
    if (!c.applicable) continue;
    std::vector<double> firsts;
    int resource_bad = 0, resource_safe = 0;
    std::vector<CellTrial> outcomes;  // of the trials that ran, for the regression line
    for (size_t ti : c.trials) {
      if (plan->all[ti].not_run) {
        ++c.not_run;
        continue;
      }
      CellTrial t = ReadOutcome(plan->all[ti]);
      c.trial_dirs.push_back(t.run_dir);
      outcomes.push_back(t);
      switch (t.result) {
        case checker::TrialResult::kViolated: ++c.violated; break;
        case checker::TrialResult::kStuck: ++c.stuck; break;
        case checker::TrialResult::kSafe: ++c.safe; break;
        default: ++c.unknown; break;
      }
      if (t.result == checker::TrialResult::kUnknown && c.unknown_reason.empty()) {
        c.unknown_reason = t.verdict_reason;
      }
      c.fault_bit += t.fault_bit;
      // The first trial's evidence, unless a later one lacks the effect: that one is told.
      if (c.evidence.empty() || (!t.fault_bit && !t.evidence.empty())) c.evidence = t.evidence;
      resource_bad += t.resource_verdict == Verdict::kViolated;
      resource_safe += t.resource_verdict == Verdict::kSafe;
      if (t.first_violation_ms) firsts.push_back(*t.first_violation_ms);
      if (t.untrusted_lag_ms) {
        ++c.untrusted;
        totals.worst_lag_ms = std::max(totals.worst_lag_ms, *t.untrusted_lag_ms);
      }
    }
    totals.untrusted_trials += c.untrusted;
    int n = static_cast<int>(c.trials.size());
    using checker::TrialResult;
    c.result = c.violated ? TrialResult::kViolated : c.stuck ? TrialResult::kStuck
               : c.not_run > 0 ? TrialResult::kNotRun : (c.safe == n && n > 0) ? TrialResult::kSafe
                                                                               : TrialResult::kUnknown;
    c.resource = resource_bad ? TrialResult::kViolated : c.not_run > 0 ? TrialResult::kNotRun
                 : (resource_safe == n && n > 0) ? TrialResult::kSafe : TrialResult::kUnknown;
    if (!firsts.empty()) {
      std::sort(firsts.begin(), firsts.end());
      c.median_first_violation_ms = firsts[firsts.size() / 2];
    }
    // A shard's cells are not judged here (the merge judges them).
    if (whole && !c.trials.empty()) {
      using checker::TrialResult;
      if (!c.expected.empty() && c.expected != Letter(c.result) && c.result != TrialResult::kNotRun) c.mismatch = true;
      if (!c.expected_resource.empty() && c.expected_resource != Letter(c.resource) &&
          c.resource != TrialResult::kNotRun)
        c.mismatch = true;
    }
    totals.mismatches += c.mismatch;
    // A pinned cell is judged by its entry alone; --fail-on judges the cells no entry pins.
    const bool pinned = !c.origin.empty();
    const bool fail_on_hit = whole && !pinned && !c.trials.empty() && plan->fail_on.Hits(c.result);
    c.regressed = c.mismatch || fail_on_hit;
    if (c.regressed) c.regression = RegressionLine(c, outcomes, plan->fail_on);
    totals.regressed += c.regressed;
  }
  for (const auto& tr : plan->all) {
    totals.not_run += tr.in_slice && tr.not_run;
    totals.in_slice += tr.in_slice;
  }
  return totals;
}

// matrix.json: the plan, every cell, and every trial's results.json whole.
Json MatrixJson(const Plan& plan, const MatrixOutput& out, const Totals& totals) {
  const auto& all = plan.all;
  Json j;
  j["seed"] = plan.seed;
  j["locklab_version"] = {{"version", LocklabVersion()}, {"revision", LocklabRevision()}};
  j["mode"] = plan.full ? "full" : "quick";
  j["trials_per_cell"] = plan.trials;
  j["jobs"] = plan.jobs;
  j["elapsed_s"] = out.elapsed_s;
  if (out.interrupted || totals.not_run > 0) {
    j["interrupted"] = true;
    j["trials_not_run"] = totals.not_run;
  }
  j["lab_lag"] = {{"untrusted_trials", totals.untrusted_trials}, {"worst_ms", totals.worst_lag_ms}};
  // What `locklab merge` checks (one plan id) and rebuilds the matrix from.
  j["plan"] = {{"id", plan.id}, {"locks", plan.lock_ids}, {"faults", plan.cols},
               {"trial_count", all.size()}, {"expect", plan.expect_path},
               {"presets", plan.preset_dir}};
  if (!plan.fail_on.empty()) j["plan"]["fail_on"] = plan.fail_on.ToString();
  if (out.shard_count > 1) j["shard"] = {{"index", out.shard_index}, {"count", out.shard_count}};
  if (!out.merged_from.empty()) j["merged_from"] = out.merged_from;
  j["cells"] = Json::array();
  for (const auto& c : plan.cells) {
    // "verdict" and "resource" are the letters (matrix.md's); "result" the cell's word.
    Json cj = {{"algorithm", c.lock}, {"faults", c.fault}, {"verdict", Letter(c.result)},
               {"result", checker::NameOf(c.result).word},
               {"resource", Letter(c.resource)}, {"trials", c.trials.size()},
               {"violated", c.violated}, {"stuck", c.stuck}, {"safe", c.safe},
               {"unknown", c.unknown}, {"untrusted_timing", c.untrusted}};
    if (c.not_run > 0) cj["not_run"] = c.not_run;
    cj["fraction_violated"] = c.trials.empty() ? 0.0 : static_cast<double>(c.violated) / c.trials.size();
    // Coverage: in how many trials the cell's fault bit (every fault, for combined columns).
    if (c.applicable && c.fault != "none") cj["fault_bit"] = c.fault_bit;
    if (!c.evidence.empty()) cj["evidence"] = c.evidence;
    if (!c.unknown_reason.empty()) cj["unknown_reason"] = c.unknown_reason;
    if (c.median_first_violation_ms >= 0) cj["median_first_violation_ms"] = c.median_first_violation_ms;
    if (!c.applicable) cj["why_not"] = c.why_not;
    if (!c.expected.empty() || !c.expected_resource.empty()) {
      cj["expected"] = c.expected;
      cj["expected_resource"] = c.expected_resource;
      cj["expected_origin"] = c.origin;
      if (!c.expected_violated_in.empty()) cj["expected_violated_in"] = c.expected_violated_in;
      if (!c.expected_stuck_in.empty()) cj["expected_stuck_in"] = c.expected_stuck_in;
      // A shard does not judge (JudgeCells): its cells say nothing either way.
      if (out.shard_count == 1) cj["matches"] = !c.mismatch;
    }
    if (c.regressed) {
      cj["regressed"] = true;
      cj["regression"] = c.regression;
    }
    j["cells"].push_back(cj);
  }
  j["trials"] = Json::array();
  j["trial_records"] = Json::array();
  for (size_t n = 0; n < all.size(); ++n) {
    const PlannedTrial& tr = all[n];
    if (!tr.in_slice) continue;
    int at = -1;
    if (tr.results.is_object()) {
      at = static_cast<int>(j["trials"].size());
      j["trials"].push_back(tr.results);
    }
    // "letter" and "result": the trial as its cell counted it (CellTrial::result), so a reader of
    // this file (the matrix report) shows the lab's result instead of re-judging results.json.
    const checker::ResultName& result = checker::NameOf(ReadOutcome(tr).result);
    j["trial_records"].push_back({{"n", n}, {"cell", tr.cell}, {"trial", tr.index},
                                  {"seed", tr.options.seed}, {"ran", tr.ran}, {"results", at},
                                  {"letter", result.letter}, {"result", result.word}});
  }
  return j;
}

// matrix.md: the table, then what a reader needs to trust it (coverage, unknown cells, lab
// lag) and, for a whole matrix, the measured detection power of its cells.
std::string MatrixMarkdown(const Plan& plan, const MatrixOutput& out, const Totals& totals) {
  std::ostringstream md;
  md << "# Safety matrix";
  if (out.shard_count > 1) {
    md << " (shard " << out.shard_index << "/" << out.shard_count << ": its trials only)";
  }
  md << "\n\n";
  if (out.interrupted || totals.not_run > 0) {
    md << "**Interrupted**: " << totals.not_run << " of " << totals.in_slice
       << " trials never ran (cells marked `-`), and the trials that were running were cut short "
          "(their verdicts are unknown unless a violation was already seen). This matrix is "
          "incomplete.\n\n";
  }
  md << "Seed " << plan.seed << ", " << (plan.full ? "full" : "quick") << " mode, " << plan.trials
     << " trial(s) per cell, " << plan.jobs << " at a time, " << static_cast<int>(out.elapsed_s)
     << " s. Each cell: the verdict found in the histories (V violated, L stuck, S safe, ? unknown),"
        " violated trials / trials, and the median time to the first violation. `rS` marks a lock"
        " whose holders overlapped while the resource stayed intact (fencing).";
  if (out.shard_count > 1 && (!plan.expect_path.empty() || !plan.fail_on.empty())) {
    md << " A shard has some of a cell's trials: `locklab merge` judges the cells by the"
          " expectations and --fail-on.";
  } else if (!plan.expect_path.empty()) {
    md << " `≠ X` marks a cell that disagrees with the expectation X.";
  }
  if (!plan.fail_on.empty() && out.shard_count == 1) {
    md << " `✗` marks a cell no expectation pins whose verdict is in --fail-on " << plan.fail_on.ToString() << ".";
  }
  md << "\n\n| lock |";
  for (const auto& f : plan.cols) md << " " << f << " |";
  md << "\n|---|";
  for (size_t i = 0; i < plan.cols.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& lock : plan.lock_ids) {
    md << "| `" << lock << "` |";
    for (const auto& f : plan.cols) {
      const Cell& c = *std::find_if(plan.cells.begin(), plan.cells.end(),
                                    [&](const Cell& x) { return x.lock == lock && x.fault == f; });
      md << " ";
      if (!c.applicable) {
        md << "n/a |";
        continue;
      }
      md << "**" << Letter(c.result) << "**";
      if (c.result == checker::TrialResult::kViolated && c.resource == checker::TrialResult::kSafe) md << " rS";
      md << " " << c.violated << "/" << c.trials.size();
      if (c.median_first_violation_ms >= 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), " @%.1fs", c.median_first_violation_ms / 1000.0);
        md << buf;
      }
      if (c.not_run > 0) md << " (" << c.not_run << " not run)";
      if (c.mismatch) md << " ≠" << (c.expected.empty() ? "r" + c.expected_resource : c.expected);
      else if (c.regressed) md << " ✗";
      if (c.untrusted > 0) md << " ~";
      md << " |";
    }
    md << "\n";
  }
  if ((!plan.expect_path.empty() || !plan.fail_on.empty()) && out.shard_count == 1) {
    md << "\n" << PinSummary(plan) << ".\n";
  }
  if (!plan.expect_path.empty() && out.shard_count == 1) {
    md << "\n" << totals.mismatches << " cell(s) disagree with " << plan.expect_path << ".\n";
  }
  if (!plan.fail_on.empty() && out.shard_count == 1) {
    md << "\n" << totals.regressed - totals.mismatches << " cell(s) no expectation pins hit --fail-on "
       << plan.fail_on.ToString() << ".\n";
  }
  if (totals.regressed > 0 && out.shard_count == 1) {
    md << "\nRegressed (each fails the run, exit 1):\n\n";
    for (const auto& c : plan.cells) {
      if (c.regressed) md << "- " << c.regression << "\n";
    }
  }
  // Coverage: a fault that never bit proves nothing; say where it happened and why a cell
  // could not be judged.
  int applicable_faulted = 0, all_bit = 0;
  std::string unknowns;
  for (const auto& c : plan.cells) {
    if (!c.applicable || c.trials.empty()) continue;
    if (c.fault != "none") {
      ++applicable_faulted;
      all_bit += c.fault_bit == static_cast<int>(c.trials.size());
    }
    if (!c.unknown_reason.empty()) {
      unknowns += "- `" + c.lock + "` x " + c.fault + ": " + c.unknown_reason + "\n";
    }
  }
  if (applicable_faulted > 0) {
    md << "\nCoverage: the fault bit in every trial of " << all_bit << " of " << applicable_faulted
       << " faulted cells (a window opened while the lock was in use and its effect was seen; "
          "results.json coverage).\n";
  }
  // Which evidence each cell's fault produced (one trial's, or the trial that lacked it).
  std::string evidence;
  for (const auto& c : plan.cells) {
    if (c.applicable && c.fault != "none" && !c.evidence.empty()) {
      // One fault: its name is the column's already.
      const std::string own = c.fault + ": ";
      const bool one = c.evidence.rfind(own, 0) == 0 && c.evidence.find("; ") == std::string::npos;
      evidence += "- `" + c.lock + "` x " + c.fault + ": " + (one ? c.evidence.substr(own.size()) : c.evidence) + "\n";
    }
  }
  if (!evidence.empty()) md << "\nEffect evidence per cell:\n\n" << evidence;
  if (!unknowns.empty()) md << "\nNot judged (unknown trials, first reason per cell):\n\n" << unknowns;
  if (totals.untrusted_trials > 0) {
    // The verdicts stay what the histories show; the reader is told which timings the lab
    // itself bent (workloads/lag_meter.h).
    char buf[64];
    // A tenth of a short TTL (matrix --ttl 1ms) is below a millisecond: "0 ms late" would
    // contradict "more than a tenth of their TTL".
    snprintf(buf, sizeof(buf), totals.worst_lag_ms < 10 ? "%.1f" : "%.0f", totals.worst_lag_ms);
    md << "\n`~`: " << totals.untrusted_trials << " trial(s) ran with the lab's own sleeps up to " << buf
       << " ms late, more than a tenth of their TTL: the machine was overloaded (fewer --jobs, or"
          " a quieter machine), and a violation in those cells may owe to the lab, not the fault"
          " (results.json lab_lag).\n";
    std::cerr << "locklab matrix: warning: " << totals.untrusted_trials << " trial(s) ran with the lab up to "
              << buf << " ms late; their cells are marked ~ in matrix.md\n";
  }
  if (out.shard_count == 1) {
    // How often these cells find their verdict across seeds (measured, checked in beside
    // the presets): one run's table cannot say it.
    std::vector<std::pair<std::string, std::string>> shown;
    for (const auto& c : plan.cells) {
      if (c.applicable) shown.push_back({CanonicalLockId(c.lock), c.fault});  // as measured
    }
    // The figures belong to the presets they were measured with: a --scenarios directory
    // shows its own file or none.
    md << DetectionPowerMarkdown(plan.preset_dir + "/detection-power.json", shown,
                                 plan.full ? "full" : "quick");
  }
  return md.str();
}

// junit.xml: one testcase per applicable cell (a shard: per cell it ran trials of). A
// regressed cell is a <failure> with its regression line and every trial directory; so is a
// cell with trials that never ran (an interrupted matrix is incomplete). A cell left unknown
// (?) that nothing judges is <skipped> with its reason; every other cell passes, an expected
// V included.
std::string MatrixJunit(const Plan& plan, const MatrixOutput& out) {
  Json checks = Json::array();
  for (const auto& c : plan.cells) {
    if (!c.applicable || (out.shard_count > 1 && c.trials.empty())) continue;
    Json check = {{"name", c.lock + " x " + c.fault}, {"ok", true}};
    std::string failure;
    if (c.regressed) {
      failure = c.regression;
    } else if (c.not_run > 0) {
      failure = c.lock + " x " + c.fault + ": " + Letter(c.result) + ", " + std::to_string(c.not_run) +
                " trial(s) not run (interrupted)";
    } else if (c.result == checker::TrialResult::kUnknown) {
      check["skipped"] = true;
      check["message"] = "not judged (?): " + (c.unknown_reason.empty() ? std::string("no trial") : c.unknown_reason);
    }
    if (!failure.empty()) {
      std::string dirs;
      for (const auto& dir : c.trial_dirs) {
        if (!dir.empty()) dirs += "trial " + dir + "\n";
      }
      check["ok"] = false;
      check["message"] = failure;
      check["detail"] = dirs;
    }
    checks.push_back(std::move(check));
  }
  return JunitXml("matrix", checks, out.elapsed_s);
}

// The measured detection power of the plan's cells (its preset directory's
// detection-power.json, measured in the plan's mode), per (lock, fault): every measured run's
// letter. Empty when there is none or it cannot be read (matrix.md says why; a baseline's
// comment is no place for it).
std::map<std::pair<std::string, std::string>, std::vector<std::string>> MeasuredVerdicts(const Plan& plan) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> out;
  const Json j = Json::parse(ReadWholeFile(plan.preset_dir + "/detection-power.json"), nullptr, false);
  try {
    if (!j.is_object() || j.at("mode").get<std::string>() != (plan.full ? "full" : "quick")) return {};
    for (const auto& c : j.at("cells")) {
      out[{c.at("lock").get<std::string>(), c.at("fault").get<std::string>()}] =
          c.at("verdicts").get<std::vector<std::string>>();
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return out;
}

// A TOML basic string: a JSON string's escapes (\\ \" \n \uXXXX ...) are TOML's too.
std::string TomlQuote(const std::string& s) { return Json(s).dump(); }

}  // namespace

int WriteMatrix(Plan* plan, const MatrixOutput& output, Status* written) {
  Totals totals = JudgeCells(plan, output.shard_count == 1);
  *written = WriteFile(output.dir + "/matrix.json", MatrixJson(*plan, output, totals).dump(2) + "\n");
  std::string md = MatrixMarkdown(*plan, output, totals);
  Status w = WriteFile(output.dir + "/matrix.md", md);
  if (written->ok()) *written = w;
  w = WriteFile(output.dir + "/junit.xml", MatrixJunit(*plan, output));
  if (written->ok()) *written = w;
  std::cout << md;
  return totals.regressed;
}

std::string RegressionSummary(const Plan& plan) {
  if (plan.expect_path.empty() && plan.fail_on.empty()) return "";
  std::string judged_by = plan.expect_path.empty() ? "" : "expectations " + plan.expect_path;
  if (!plan.fail_on.empty()) {
    judged_by += (judged_by.empty() ? "" : ", ") + std::string("--fail-on ") + plan.fail_on.ToString();
  }
  std::string lines;
  int n = 0;
  for (const auto& c : plan.cells) {
    if (!c.regressed) continue;
    ++n;
    lines += "  " + c.regression + "\n";
  }
  const std::string pins = PinSummary(plan) + "\n";
  if (n == 0) return pins + "regressed: none (" + judged_by + ")\n";
  return pins + "regressed: " + std::to_string(n) + " cell(s) (" + judged_by + "):\n" + lines;
}

std::string PinSummary(const Plan& plan) {
  int cells = 0, pinned = 0, fail_on = 0, unpinned = 0;
  for (const auto& c : plan.cells) {
    if (!c.applicable) continue;
    ++cells;
    if (!c.origin.empty()) ++pinned;
    else if (!plan.fail_on.empty()) ++fail_on;
    else ++unpinned;
  }
  return "gate: " + std::to_string(pinned) + " of " + std::to_string(cells) + " cells pinned" +
         (plan.expect_path.empty() ? "" : " by " + plan.expect_path) + ", " + std::to_string(fail_on) +
         " by --fail-on, " + std::to_string(unpinned) + " unpinned";
}

Status WriteExpectationFile(const Plan& plan, const std::string& path, int* pinned) {
  *pinned = 0;
  std::ostringstream t;
  t << "# Expectations recorded by `locklab matrix --write-expect` from seed " << plan.seed << ", "
    << (plan.full ? "full" : "quick") << " mode, " << plan.trials << " trial(s) per cell.\n"
    << "# `locklab matrix --expect " << path << "` with the same flags and seed judges a run by\n"
    << "# them (exit 1 on a cell that differs). Every judged cell is pinned: verdict S safe,\n"
    << "# V violated, L stuck. violated_in / stuck_in: this run's trials, kept, never judged;\n"
    << "# `# measured:` how often the letter came out over many seeds, where that was measured.\n"
    << "# The resource letter is not pinned from one run (whether a stale write lands is\n"
    << "# timing unless the lock fences): a V cell whose resource stayed intact says so in a\n"
    << "# comment; uncomment it to pin it.\n"
    << "# Globs (`lock = \"driver:*\"`, `fault = \"*\"`) may be added: the most specific entry\n"
    << "# that matches a cell pins it (the rule: scenarios/matrix/expected.toml's header).\n";
  std::string unpinned;
  for (const auto& c : plan.cells) {
    if (c.applicable && c.result == checker::TrialResult::kUnknown) {
      unpinned += "#   " + c.lock + " x " + c.fault + ": " +
                  (c.unknown_reason.empty() ? std::string("no trial") : c.unknown_reason) + "\n";
    }
  }
  if (!unpinned.empty()) {
    t << "# Not pinned, left unknown (?) by this run (an unknown is no baseline; --fail-on\n"
      << "# unknown fails such a cell):\n" << unpinned;
  }
  const auto measured = MeasuredVerdicts(plan);
  for (const auto& c : plan.cells) {
    using checker::TrialResult;
    if (!c.applicable || (c.result != TrialResult::kSafe && c.result != TrialResult::kViolated &&
                          c.result != TrialResult::kStuck))
      continue;
    const std::string letter = Letter(c.result);
    ++*pinned;
    const std::string of = "/" + std::to_string(c.trials.size()) + "\"\n";
    // The id in its one spelling (CanonicalLockId): a driver's path relative to its
    // repository pins the same cells from any working directory and in any checkout.
    t << "\n[[cell]]\nlock = " << TomlQuote(CanonicalLockId(c.lock)) << "\nfault = " << TomlQuote(c.fault)
      << "\nverdict = \"" << letter << "\"\n";
    if (c.result == TrialResult::kViolated && c.resource == TrialResult::kSafe) t << "# resource = \"S\"   (the resource stayed intact)\n";
    // A V (or L) that not every trial found may not come back on the next run: say so where
    // a reader deciding whether to keep the pin looks.
    const int found = c.result == TrialResult::kViolated ? c.violated : c.result == TrialResult::kStuck ? c.stuck : 0;
    if (found > 0 && found < static_cast<int>(c.trials.size())) {
      t << "# found in " << found << " of " << c.trials.size() << " trials only: another run may not find it\n";
    }
    t << "violated_in = \"" << c.violated << of;
    if (c.result == TrialResult::kStuck) t << "stuck_in = \"" << c.stuck << of;
    // How often this cell's letter came out over the measured seeds, when they were measured:
    // one run's trials cannot say whether a V is found every time.
    // (The cells matrix.md lists as not in the measurement have no note: DetectionPowerMeasured.)
    if (auto m = measured.find({CanonicalLockId(c.lock), c.fault}); m != measured.end() && DetectionPowerMeasured(m->second)) {
      const auto same = std::count(m->second.begin(), m->second.end(), letter);
      t << "# measured: " << letter << " in " << same << " of " << m->second.size() << " "
        << (plan.full ? "full" : "quick") << " matrices of its seeds (detection-power.json)\n";
    }
  }
  return WriteFile(path, t.str());
}

int WriteExpectFlag(const Plan& plan, const std::string& path, const std::string& command,
                    const std::string& incomplete) {
  if (path.empty()) return 0;
  if (!incomplete.empty()) {
    std::cerr << "locklab " << command << ": " << path << " not written: " << incomplete << "\n";
    return 0;  // the run's own exit code says it is incomplete
  }
  int pinned = 0;
  Status w = WriteExpectationFile(plan, path, &pinned);
  if (!w.ok()) {
    std::cerr << "locklab " << command << ": " << w.message() << "\n";
    return w.ExitCode();
  }
  std::cout << "expectations: " << path << " (" << pinned << " cell(s) pinned)\n";
  return 0;
}

}  // namespace locklab::harness
