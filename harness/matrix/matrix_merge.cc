#include "harness/matrix/matrix_merge.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/argv.h"
#include "base/exit_code.h"
#include "base/status.h"
#include "harness/scenario/cli_spec.h"
#include "harness/matrix/matrix_outputs.h"
#include "harness/matrix/matrix_plan.h"
#include "harness/trial/report_script.h"
#include "harness/lab/run_store.h"

namespace locklab::harness {
namespace {

using Json = nlohmann::ordered_json;

// One shard's matrix.json: its identity, read and checked by ReadShards; RebuildPlan reads
// the rest of `doc`.
struct ShardFile {
  std::string dir;
  int index = 1, count = 1;
  std::string plan_id;
  Json doc;
};

// For an error line: what a shard's plan is, so that two different ones can be told apart.
std::string DescribePlan(const Json& m) {
  std::ostringstream o;
  o << "seed " << m.at("seed").dump() << ", " << m.at("mode").get<std::string>() << ", "
    << m.at("trials_per_cell").dump() << " trial(s) per cell, locks "
    << m.at("plan").at("locks").size() << ", faults " << m.at("plan").at("faults").size() << ", plan "
    << m.at("plan").at("id").get<std::string>();
  return o.str();
}

// Reads every shard's matrix.json, in the order given, and checks they are the shards of one
// matrix, each once, none missing. Errors are Status::Usage, one line.
Status ReadShards(const std::vector<std::string>& dirs, std::vector<ShardFile>* shards) {
  std::map<int, std::string> by_index;
  for (const auto& d : dirs) {
    std::string path = d + "/matrix.json";
    std::string text = ReadWholeFile(path);
    ShardFile shard;
    shard.dir = d;
    shard.doc = Json::parse(text, nullptr, false);
    const Json& j = shard.doc;
    if (text.empty() || j.is_discarded() || !j.is_object() || !j.contains("plan") ||
        !j.at("plan").is_object() || !j.contains("trial_records") || !j.contains("cells")) {
      return Status::Usage(path + ": not a matrix.json written by `locklab matrix` (no plan)");
    }
    try {
      shard.index = j.contains("shard") ? j.at("shard").at("index").get<int>() : 1;
      shard.count = j.contains("shard") ? j.at("shard").at("count").get<int>() : 1;
      shard.plan_id = j.at("plan").at("id").get<std::string>();
      if (!shards->empty()) {
        const ShardFile& first = shards->front();
        if (shard.plan_id != first.plan_id || shard.count != first.count) {
          return Status::Usage(d + " is not a shard of the same matrix as " + dirs[0] + " (" +
                               DescribePlan(j) + " of " + std::to_string(shard.count) +
                               " shard(s) vs " + DescribePlan(first.doc) + " of " +
                               std::to_string(first.count) + ")");
        }
      }
      if (by_index.count(shard.index)) {
        return Status::Usage("shard " + std::to_string(shard.index) + "/" +
                             std::to_string(shards->front().count) +
                             " given twice: " + by_index[shard.index] + " and " + d);
      }
      by_index[shard.index] = d;
    } catch (const nlohmann::json::exception& e) {
      return Status::Usage(path + ": malformed matrix.json (" + e.what() + ")");
    }
    shards->push_back(std::move(shard));
  }
  const ShardFile& first = shards->front();
  std::string missing;
  for (int i = 1; i <= first.count; ++i) {
    if (!by_index.count(i)) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(first.count);
    }
  }
  if (!missing.empty()) return Status::Usage("missing shard(s) " + missing + " of plan " + first.plan_id);
  return Status::Ok();
}

// The plan from the first shard (rows, columns, cells, expectations), with every shard's
// trials back at their place in the whole run's order; *elapsed_s: the slowest shard's.
Status RebuildPlan(const std::vector<ShardFile>& shards, Plan* plan, double* elapsed_s) {
  const Json& first = shards.front().doc;
  const std::string& id = shards.front().plan_id;
  try {
    plan->seed = first.at("seed").get<uint64_t>();
    plan->full = first.at("mode").get<std::string>() == "full";
    plan->trials = first.at("trials_per_cell").get<int>();
    plan->jobs = first.at("jobs").get<int>();
    plan->lock_ids = first.at("plan").at("locks").get<std::vector<std::string>>();
    plan->cols = first.at("plan").at("faults").get<std::vector<std::string>>();
    plan->expect_path = first.at("plan").at("expect").get<std::string>();
    // The shards' --fail-on (part of the plan id, so every shard had the same).
    if (std::string why = first.at("plan").contains("fail_on")
                              ? ParseFailOn(first.at("plan").at("fail_on").get<std::string>(), &plan->fail_on)
                              : "";
        !why.empty()) {
      return Status::Usage(shards.front().dir + "/matrix.json: plan.fail_on: " + why);
    }
    plan->preset_dir = first.at("plan").value("presets", kDefaultPresetDir);
    plan->id = id;
    for (const auto& cj : first.at("cells")) {
      Cell c;
      c.lock = cj.at("algorithm").get<std::string>();
      c.fault = cj.at("faults").get<std::string>();
      c.applicable = !cj.contains("why_not");
      if (!c.applicable) {
        c.why_not = cj.at("why_not").get<std::string>();
        c.result = checker::TrialResult::kNotApplicable;
      }
      c.expected = cj.value("expected", std::string());
      c.expected_resource = cj.value("expected_resource", std::string());
      c.origin = cj.value("expected_origin", std::string());
      c.expected_violated_in = cj.value("expected_violated_in", std::string());
      c.expected_stuck_in = cj.value("expected_stuck_in", std::string());
      plan->cells.push_back(std::move(c));
    }
    // Every row x column once: the table and the outputs look each cell up by its pair.
    std::set<std::pair<std::string, std::string>> pairs;
    for (const auto& c : plan->cells) pairs.insert({c.lock, c.fault});
    if (pairs.size() != plan->cells.size() || plan->cells.size() != plan->lock_ids.size() * plan->cols.size()) {
      return Status::Usage(shards.front().dir + "/matrix.json: malformed (cells are not plan.locks x plan.faults)");
    }
    for (const auto& lock : plan->lock_ids) {
      for (const auto& fault : plan->cols) {
        if (!pairs.count({lock, fault})) {
          return Status::Usage(shards.front().dir + "/matrix.json: malformed (no cell " + lock + " x " + fault + ")");
        }
      }
    }
    size_t total = first.at("plan").at("trial_count").get<size_t>();
    plan->all.resize(total);
    std::vector<bool> seen(total, false);
    for (const auto& shard : shards) {
      const Json& j = shard.doc;
      *elapsed_s = std::max(*elapsed_s, j.at("elapsed_s").get<double>());
      for (const auto& r : j.at("trial_records")) {
        size_t n = r.at("n").get<size_t>();
        size_t cell = r.at("cell").get<size_t>();
        if (n >= total || seen[n] || cell >= plan->cells.size()) {
          return Status::Usage("trial " + std::to_string(n) + " appears twice or out of range (plan " +
                               id + ")");
        }
        seen[n] = true;
        PlannedTrial& tr = plan->all[n];
        tr.cell = cell;
        tr.index = r.at("trial").get<int>();
        tr.options.seed = r.at("seed").get<uint64_t>();
        tr.ran = r.at("ran").get<bool>();
        int at = r.at("results").get<int>();
        if (at >= 0) tr.results = j.at("trials").at(static_cast<size_t>(at));
      }
    }
    for (size_t n = 0; n < total; ++n) {
      if (!seen[n]) {
        return Status::Usage("trial " + std::to_string(n) + " of plan " + id +
                             " is in no shard (a shard was interrupted?)");
      }
      plan->cells[plan->all[n].cell].trials.push_back(n);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Usage(shards.front().dir + "/matrix.json: malformed (" + e.what() + ")");
  }
  return Status::Ok();
}

}  // namespace

int RunMergeCommand(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out = "runs", write_expect_path;
  bool report = true;
  ArgvReader argv(MergeCommandSpec(), args);
  while (argv.Next()) {
    Status s;
    if (!argv.AtFlag()) {
      dirs.push_back(argv.word());
    } else if (argv.Is("--no-report")) {
      s = argv.NoValue();
      report = false;
    } else if (argv.Is("--out") || argv.Is("--write-expect")) {
      std::string& v = argv.Is("--out") ? out : write_expect_path;
      s = argv.Value(&v);
      // `--write-expect "$FILE"` with FILE unset: refused, not read as no flag.
      if (s.ok() && v.empty()) s = argv.Error("expected a path, got ''");
    } else {
      s = argv.Unknown();
    }
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return 64;
    }
  }
  if (dirs.empty()) {
    std::cerr << "locklab merge: needs the matrix directories of the shards (locklab merge DIR... [--out DIR])\n";
    return 64;
  }
  std::vector<ShardFile> shards;
  Status read = ReadShards(dirs, &shards);
  Plan plan;
  double elapsed_s = 0;
  if (read.ok()) read = RebuildPlan(shards, &plan, &elapsed_s);
  if (!read.ok()) {
    std::cerr << "locklab merge: " << read.message() << "\n";
    return read.ExitCode();
  }
  std::map<int, std::string> by_index;  // merged_from lists the shards in shard order
  for (const auto& shard : shards) by_index[shard.index] = shard.dir;

  std::string merged_dir;
  Status s = CreateRunDir(out, "matrix", plan.seed, &merged_dir);
  if (!s.ok()) {
    std::cerr << "locklab merge: " << s.message() << "\n";
    return s.ExitCode();
  }
  int failed = 0;
  for (const auto& tr : plan.all) failed += !tr.ran;
  Status written;
  MatrixOutput output;
  output.dir = merged_dir;
  output.elapsed_s = elapsed_s;
  for (const auto& [index, dir] : by_index) output.merged_from.push_back(dir);
  int regressed = WriteMatrix(&plan, output, &written);
  if (!written.ok()) {
    std::cerr << "locklab merge: " << written.message() << "\n";
    return written.ExitCode();
  }
  std::cout << "\nmatrix: " << merged_dir << "/matrix.md (matrix.json, junit.xml; merged from "
            << shards.size() << " shard(s), trial runs under their cells/)\n";
  if (int code = WriteExpectFlag(plan, write_expect_path, "merge",
                                 failed > 0 ? std::to_string(failed) + " trial(s) did not run" : "");
      code != 0) {
    return code;
  }
  // prints `report: PATH`; a report that could not be made (69, 70) is the exit code
  int report_exit = report ? RunReportScript({"--matrix", merged_dir, "--no-trials"}) : 0;
  std::cout << RegressionSummary(plan);
  if (failed > 0) return kExitInfrastructure;
  return WithReportExit(regressed > 0 ? kExitViolated : kExitOk, report_exit);
}

}  // namespace locklab::harness
