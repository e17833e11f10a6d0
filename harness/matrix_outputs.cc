#include "harness/matrix_outputs.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/version.h"
#include "harness/child_runs.h"
#include "harness/detection_power.h"
#include "harness/run_store.h"

namespace locklab::harness {
namespace {

using Json = nlohmann::ordered_json;

// What a cell's verdict needs of one trial's results.json, read at this one edge.
struct TrialOutcome {
  std::string verdict;           // results.json's; "error" when the trial did not run
  std::string verdict_reason;    // "the trial did not run" when it did not
  std::string resource_verdict;  // "unknown" when the trial did not run
  bool stuck = false;            // liveness.stuck
  bool fault_bit = false;        // every fault of the cell bit (results.json coverage)
  std::string evidence;          // per fault "FAULT: evidence" (coverage), "; "-joined
  std::optional<double> first_violation_ms;
  std::optional<double> untrusted_lag_ms;  // set: the lab ran too late to trust the timing
};

// A trial that did not run (a child that failed, exit 64+) may still have left a
// results.json: its coverage, first violation and lab lag count, its verdicts do not.
TrialOutcome ReadOutcome(const Trial& tr) {
  const Json& r = tr.results;
  TrialOutcome o;
  o.verdict = tr.ran ? r.value("verdict", std::string("unknown")) : "error";
  o.stuck = tr.ran && JudgedStuck(r);
  o.verdict_reason = tr.ran ? r.value("verdict_reason", std::string("no reason given"))
                            : "the trial did not run";
  o.resource_verdict = tr.ran ? r.value("resource_verdict", std::string("unknown")) : "unknown";
  bool bit = r.is_object() && r.contains("coverage") && !r["coverage"].empty();
  for (const auto& cov : bit ? r["coverage"] : Json::array()) bit = bit && cov.value("bit", false);
  o.fault_bit = bit;
  const bool has_coverage = r.is_object() && r.contains("coverage") && r["coverage"].is_array();
  for (const auto& cov : has_coverage ? r["coverage"] : Json::array()) {
    if (!cov.is_object() || !cov.contains("evidence") || !cov["evidence"].is_string()) continue;
    const std::string seen = cov.value("effects_seen", 0) > 0 ? "" : "not seen: ";
    o.evidence += (o.evidence.empty() ? "" : "; ") + cov.value("fault", std::string("?")) + ": " + seen +
                  cov["evidence"].get<std::string>();
  }
  if (r.is_object() && r.contains("first_violation_ms")) {
    o.first_violation_ms = r["first_violation_ms"].get<double>();
  }
  if (r.is_object() && r.contains("lab_lag") && !r["lab_lag"].value("timing_trusted", true)) {
    o.untrusted_lag_ms = r["lab_lag"].value("max_ms", 0.0);
  }
  return o;
}

// The matrix-wide counts the three files report.
struct Totals {
  int mismatches = 0;
  int untrusted_trials = 0;
  double worst_lag_ms = 0;
  int not_run = 0;      // trials of this output never started
  size_t in_slice = 0;  // trials of this output
};

// Keeps each cell's trials of this output, and judges the cell from them.
Totals JudgeCells(Plan* plan) {
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
    for (size_t ti : c.trials) {
      if (plan->all[ti].not_run) {
        ++c.not_run;
        continue;
      }
      TrialOutcome t = ReadOutcome(plan->all[ti]);
      if (t.verdict == "violated") ++c.violated;
      else if (t.stuck) ++c.stuck;
      else if (t.verdict == "safe") ++c.safe;
      else ++c.unknown;
      if (t.verdict != "violated" && t.verdict != "safe" && c.unknown_reason.empty()) {
        c.unknown_reason = t.verdict_reason;
      }
      c.fault_bit += t.fault_bit;
      // The first trial's evidence, unless a later one lacks the effect: that one is told.
      if (c.evidence.empty() || (!t.fault_bit && !t.evidence.empty())) c.evidence = t.evidence;
      resource_bad += t.resource_verdict == "violated";
      resource_safe += t.resource_verdict == "safe";
      if (t.first_violation_ms) firsts.push_back(*t.first_violation_ms);
      if (t.untrusted_lag_ms) {
        ++c.untrusted;
        totals.worst_lag_ms = std::max(totals.worst_lag_ms, *t.untrusted_lag_ms);
      }
    }
    totals.untrusted_trials += c.untrusted;
    int n = static_cast<int>(c.trials.size());
    c.verdict = c.violated ? "V" : c.stuck ? "L" : c.not_run > 0 ? "-" : (c.safe == n && n > 0) ? "S" : "?";
    c.resource = resource_bad ? "V" : c.not_run > 0 ? "-" : (resource_safe == n && n > 0) ? "S" : "?";
    if (!firsts.empty()) {
      std::sort(firsts.begin(), firsts.end());
      c.median_first_violation_ms = firsts[firsts.size() / 2];
    }
    if (!c.expected.empty() && c.expected != c.verdict && c.verdict != "-") c.mismatch = true;
    if (!c.expected_resource.empty() && c.expected_resource != c.resource && c.resource != "-") c.mismatch = true;
    totals.mismatches += c.mismatch;
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
  if (out.shard_count > 1) j["shard"] = {{"index", out.shard_index}, {"count", out.shard_count}};
  if (!out.merged_from.empty()) j["merged_from"] = out.merged_from;
  j["cells"] = Json::array();
  for (const auto& c : plan.cells) {
    Json cj = {{"algorithm", c.lock}, {"faults", c.fault}, {"verdict", c.verdict},
               {"resource", c.resource}, {"trials", c.trials.size()},
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
      cj["matches"] = !c.mismatch;
    }
    j["cells"].push_back(cj);
  }
  j["trials"] = Json::array();
  j["trial_records"] = Json::array();
  for (size_t n = 0; n < all.size(); ++n) {
    const Trial& tr = all[n];
    if (!tr.in_slice) continue;
    int at = -1;
    if (tr.results.is_object()) {
      at = static_cast<int>(j["trials"].size());
      j["trials"].push_back(tr.results);
    }
    j["trial_records"].push_back({{"n", n}, {"cell", tr.cell}, {"trial", tr.index},
                                  {"seed", tr.options.seed}, {"ran", tr.ran}, {"results", at}});
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
  if (!plan.expect_path.empty()) md << " `≠ X` marks a cell that disagrees with the expectation X.";
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
      md << "**" << c.verdict << "**";
      if (c.verdict == "V" && c.resource == "S") md << " rS";
      md << " " << c.violated << "/" << c.trials.size();
      if (c.median_first_violation_ms >= 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), " @%.1fs", c.median_first_violation_ms / 1000.0);
        md << buf;
      }
      if (c.not_run > 0) md << " (" << c.not_run << " not run)";
      if (c.mismatch) md << " ≠" << (c.expected.empty() ? "r" + c.expected_resource : c.expected);
      if (c.untrusted > 0) md << " ~";
      md << " |";
    }
    md << "\n";
  }
  if (!plan.expect_path.empty()) {
    md << "\n" << totals.mismatches << " cell(s) disagree with " << plan.expect_path << ".\n";
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
    snprintf(buf, sizeof(buf), "%.0f", totals.worst_lag_ms);
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
      if (c.applicable) shown.push_back({c.lock, c.fault});
    }
    // The figures belong to the presets they were measured with: a --scenarios directory
    // shows its own file or none.
    md << DetectionPowerMarkdown(plan.preset_dir + "/detection-power.json", shown,
                                 plan.full ? "full" : "quick");
  }
  return md.str();
}

// junit.xml: one testcase per applicable cell (a shard: per cell it ran trials of).
std::string MatrixJunit(const Plan& plan, const MatrixOutput& out) {
  Json checks = Json::array();
  for (const auto& c : plan.cells) {
    if (!c.applicable || (out.shard_count > 1 && c.trials.empty())) continue;
    std::string msg = c.lock + " under " + c.fault + ": " + c.verdict + " (" +
                      std::to_string(c.violated) + "/" + std::to_string(c.trials.size()) + " violated)";
    if (c.mismatch) msg += ", expected " + c.expected + (c.expected_resource.empty() ? "" : " resource " + c.expected_resource) + " (" + c.origin + ")";
    if (c.not_run > 0) msg += ", " + std::to_string(c.not_run) + " trial(s) not run (interrupted)";
    checks.push_back({{"name", c.lock + " x " + c.fault}, {"ok", !c.mismatch && c.unknown == 0 && c.not_run == 0}, {"message", msg}});
  }
  return JunitXml("matrix", checks, out.elapsed_s);
}

}  // namespace

int WriteMatrix(Plan* plan, const MatrixOutput& output, Status* written) {
  Totals totals = JudgeCells(plan);
  *written = WriteFile(output.dir + "/matrix.json", MatrixJson(*plan, output, totals).dump(2) + "\n");
  std::string md = MatrixMarkdown(*plan, output, totals);
  Status w = WriteFile(output.dir + "/matrix.md", md);
  if (written->ok()) *written = w;
  w = WriteFile(output.dir + "/junit.xml", MatrixJunit(*plan, output));
  if (written->ok()) *written = w;
  std::cout << md;
  return totals.mismatches;
}

}  // namespace locklab::harness
