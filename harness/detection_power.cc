#include "harness/detection_power.h"

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

}  // namespace

std::string DetectionPowerMarkdown(const std::string& json_path,
                                   const std::vector<std::pair<std::string, std::string>>& cells,
                                   const std::string& mode) {
  std::ifstream in(json_path);
  if (!in) return "";
  int runs = 0;
  std::string measured, measured_mode, revision;
  std::vector<uint64_t> seeds;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> verdicts;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    runs = j.at("runs").get<int>();
    measured = j.at("measured").get<std::string>();
    measured_mode = j.at("mode").get<std::string>();
    seeds = j.at("seeds").get<std::vector<uint64_t>>();
    // What it was measured on (bench/detection_power records it; files from before lack it).
    if (j.contains("source") && j["source"].is_object()) {
      const auto& src = j["source"];
      if (src.contains("revision") && src["revision"].is_string()) {
        revision = src["revision"].get<std::string>().substr(0, 7);
        if (!src.contains("dirty") || !src["dirty"].is_boolean()) {
          revision += " (tree state unrecorded)";
        } else if (src["dirty"].get<bool>()) {
          revision += " with uncommitted changes";
        }
      }
    }
    for (const auto& c : j.at("cells")) {
      verdicts[{c.at("lock").get<std::string>(), c.at("fault").get<std::string>()}] =
          c.at("verdicts").get<std::vector<std::string>>();
    }
    if (runs <= 0) throw std::runtime_error("runs must be > 0");
  } catch (const std::exception& e) {
    return "\n## Detection power\n\nNot shown: " + json_path + " cannot be read (" + e.what() +
           "); rewrite it with bench/detection_power --write.\n";
  }
  if (measured_mode != mode) return "";

  int violated = 0, at_bar = 0, every = 0, never = 0;
  std::vector<std::string> short_of_every, mixed_never, unmeasured;
  const int bar = (9 * runs + 9) / 10;  // 9 of 10
  for (const auto& cell : cells) {
    auto it = verdicts.find(cell);
    if (it == verdicts.end() || it->second.empty()) {
      unmeasured.push_back(CellName(cell.first, cell.second));
      continue;
    }
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
