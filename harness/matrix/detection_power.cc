#include "harness/matrix/detection_power.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace locklab::harness {

namespace {

std::string CellName(const std::string& lock, const std::string& fault) {
  return "`" + lock + "` x " + fault;
}

// "301-310" for consecutive seeds, else "301, 305, 309".
std::string SeedList(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "unrecorded";
  bool consecutive = true;
  for (size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[i - 1] + 1;
  if (consecutive && seeds.size() > 2) {
    return std::to_string(seeds.front()) + "-" + std::to_string(seeds.back());
  }
  std::string out;
  for (uint64_t s : seeds) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

// "4205df3", with " (tree state unrecorded)" or " with uncommitted changes" when the file
// says so; "" when it records no revision (files from before bench/detection_power did).
std::string RevisionOf(const nlohmann::json& holder) {
  if (!holder.contains("source") || !holder["source"].is_object()) return "";
  const auto& src = holder["source"];
  if (!src.contains("revision") || !src["revision"].is_string()) return "";
  std::string revision = src["revision"].get<std::string>().substr(0, 7);
  if (!src.contains("dirty") || !src["dirty"].is_boolean()) {
    revision += " (tree state unrecorded)";
  } else if (src["dirty"].get<bool>()) {
    revision += " with uncommitted changes";
  }
  return revision;
}

// Rows measured apart and added to the file (bench/detection_power --add): whose, when.
struct Addition {
  std::vector<std::string> locks;
  std::string measured, revision;
  std::vector<uint64_t> seeds;
};

}  // namespace

bool DetectionPowerMeasured(const std::vector<std::string>& verdicts) {
  // A cell the measurement recorded as n/a in every run was not run then (the quick mode
  // once left most columns of a driver row out): it has no figures, like one never seen.
  return std::any_of(verdicts.begin(), verdicts.end(), [](const std::string& v) { return v != "n/a"; });
}

std::string DetectionPowerMarkdown(const std::string& json_path,
                                   const std::vector<std::pair<std::string, std::string>>& cells,
                                   const std::string& mode) {
  std::ifstream in(json_path);
  if (!in) return "";
  int runs = 0;
  std::string measured, measured_mode, revision;
  std::vector<uint64_t> seeds;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> verdicts;
  std::vector<Addition> additions;
  std::map<std::pair<std::string, std::string>, size_t> addition_of;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    runs = j.at("runs").get<int>();
    measured = j.at("measured").get<std::string>();
    measured_mode = j.at("mode").get<std::string>();
    seeds = j.at("seeds").get<std::vector<uint64_t>>();
    // What it was measured on (bench/detection_power records it; files from before lack it).
    revision = RevisionOf(j);
    if (j.contains("additions")) {
      for (const auto& a : j.at("additions")) {
        additions.push_back({a.at("locks").get<std::vector<std::string>>(),
                             a.at("measured").get<std::string>(), RevisionOf(a),
                             a.at("seeds").get<std::vector<uint64_t>>()});
      }
    }
    for (const auto& c : j.at("cells")) {
      std::pair<std::string, std::string> key{c.at("lock").get<std::string>(),
                                              c.at("fault").get<std::string>()};
      verdicts[key] = c.at("verdicts").get<std::vector<std::string>>();
      if (c.contains("addition")) {
        int a = c.at("addition").get<int>();
        if (a < 1 || a > static_cast<int>(additions.size())) {
          throw std::runtime_error("cell " + key.first + " x " + key.second + ": addition " +
                                   std::to_string(a) + " is not in \"additions\"");
        }
        addition_of[key] = a - 1;
      }
    }
    if (runs <= 0) throw std::runtime_error("runs must be > 0");
  } catch (const std::exception& e) {
    return "\n## Detection power\n\nNot shown: " + json_path + " cannot be read (" + e.what() +
           "); rewrite it with bench/detection_power --write.\n";
  }
  if (measured_mode != mode) return "";

  int violated = 0, at_bar = 0, every = 0, never = 0;
  std::vector<std::string> short_of_every, mixed_never, unmeasured;
  std::set<size_t> used;  // additions some cell of this table comes from
  const int bar = (9 * runs + 9) / 10;  // 9 of 10
  for (const auto& cell : cells) {
    auto it = verdicts.find(cell);
    // A cell the measurement recorded as n/a in every run was not run then (the quick mode
    // once left most columns of a driver row out): it has no figures, like one never seen.
    if (it == verdicts.end() || !DetectionPowerMeasured(it->second)) {
      unmeasured.push_back(CellName(cell.first, cell.second));
      continue;
    }
    if (auto a = addition_of.find(cell); a != addition_of.end()) used.insert(a->second);
    const auto& v = it->second;
    int found = static_cast<int>(std::count(v.begin(), v.end(), "V"));
    std::ostringstream line;
    if (found > 0) {
      ++violated;
      if (found >= bar) ++at_bar;
      if (found == static_cast<int>(v.size())) {
        ++every;
      } else {
        line << CellName(cell.first, cell.second) << " " << found << "/" << v.size();
        short_of_every.push_back(line.str());
      }
    } else {
      ++never;
      if (std::set<std::string>(v.begin(), v.end()).size() > 1) {
        line << CellName(cell.first, cell.second) << " (";
        for (size_t i = 0; i < v.size(); ++i) line << (i ? " " : "") << v[i];
        line << ")";
        mixed_never.push_back(line.str());
      }
    }
  }

  std::ostringstream md;
  md << "\n## Detection power (measured over many seeds, not by this run)\n\n";
  md << "Over " << runs << " " << measured_mode << " matrices (seeds " << SeedList(seeds)
     << ", measured " << measured << (revision.empty() ? "" : " at revision " + revision)
     << " with bench/detection_power; docs/matrix-notes.md says how), of this table's cells: "
     << violated << " showed a violation in some run, " << at_bar << " of them in at least "
     << bar << " of " << runs << " and " << every << " in every run; " << never
     << " never showed one.\n";
  for (size_t a : used) {
    const Addition& ad = additions[a];
    md << "\nRows ";
    for (size_t i = 0; i < ad.locks.size(); ++i) md << (i ? ", " : "") << "`" << ad.locks[i] << "`";
    md << " were measured apart and added (bench/detection_power --add): seeds "
       << SeedList(ad.seeds) << ", measured " << ad.measured
       << (ad.revision.empty() ? "" : " at revision " + ad.revision) << ".\n";
  }
  auto list = [&](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    md << "\n" << title << ": ";
    for (size_t i = 0; i < items.size(); ++i) md << (i ? "; " : "") << items[i];
    md << ".\n";
  };
  list("Violated in fewer than every run", short_of_every);
  list("Never violated, verdicts that varied by seed", mixed_never);
  list("Not in the measurement (no figures)", unmeasured);
  return md.str();
}

}  // namespace locklab::harness
