#include "harness/cli/hunt_merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/argv.h"
#include "base/exit_code.h"
#include "harness/lab/run_store.h"
#include "harness/scenario/cli_spec.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {
namespace {

struct Shard {
  std::string dir;
  nlohmann::ordered_json j;
  int index = 0, count = 0;
};

int Refuse(const std::string& why) {
  std::cerr << "locklab merge: " << why << "\n";
  return kExitUsage;
}

// Whether a shard's hunt killed: the find its minimal came from reproduced, as that hunt
// judged it (hunt.json "shrunk"[].reproduces, ShrunkFind::reproduced).
bool Killed(const nlohmann::ordered_json& j) {
  if (!j.contains("minimal") || !j["minimal"].is_object()) return false;
  const auto& m = j["minimal"];
  for (const auto& f : j.value("shrunk", nlohmann::ordered_json::array())) {
    if (f.value("found", std::string()) == m.value("found", std::string())) return f.value("reproduces", false);
  }
  return false;
}

// Which shard's story the merged hunt tells: a kill before a find that did not reproduce;
// among equals the most reruns failed, then the earliest found, then the lowest index.
const Shard* Told(const std::vector<Shard>& shards) {
  const Shard* best = nullptr;
  auto key = [](const Shard& s) {
    const auto& m = s.j["minimal"];
    return std::make_tuple(Killed(s.j) ? 0 : 1, -m.value("reproduced", 0), m.value("found_at_s", 1e18), s.index);
  };
  for (const Shard& s : shards) {
    if (!s.j.contains("minimal") || !s.j["minimal"].is_object()) continue;
    if (best == nullptr || key(s) < key(*best)) best = &s;
  }
  return best;
}

Status ReadShard(const std::string& dir, Shard* out) {
  if (!IsHuntDir(dir)) return Status::Usage(dir + ": no hunt.json (not a hunt directory)");
  const std::string text = ReadWholeFile(dir + "/hunt.json");
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j["lock"].is_string() || !j["seed"].is_number_unsigned()) {
    return Status::BadInput(dir + "/hunt.json: not a hunt's hunt.json (field 'lock' or 'seed')");
  }
  const auto& shard = j["shard"];
  if (!shard.is_object() || !shard["index"].is_number_integer() || !shard["count"].is_number_integer()) {
    return Status::Usage(dir + ": not a hunt shard (its hunt ran without --shard I/N)");
  }
  std::string clean = dir;
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  *out = {clean, j, shard["index"].get<int>(), shard["count"].get<int>()};
  return Status::Ok();
}

// Every shard of one hunt, once each.
Status CheckShards(std::vector<Shard>& shards) {
  const Shard& first = shards.front();
  std::map<int, std::string> seen;
  for (const Shard& s : shards) {
    for (const char* field : {"lock", "baseline", "seed"}) {
      if (s.j[field] != first.j[field]) {
        return Status::Usage(s.dir + ": field '" + field + "' is " + s.j[field].dump() + ", but " + first.dir +
                             " has " + first.j[field].dump() + " (shards of different hunts)");
      }
    }
    if (s.count != first.count) {
      return Status::Usage(s.dir + " is shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + ", " +
                           first.dir + " one of " + std::to_string(first.count));
    }
    if (auto [it, fresh] = seen.emplace(s.index, s.dir); !fresh) {
      return Status::Usage("shard " + std::to_string(s.index) + " given twice: " + it->second + " and " + s.dir);
    }
  }
  for (int i = 1; i <= first.count; ++i) {
    if (!seen.count(i)) {
      return Status::Usage("shard " + std::to_string(i) + " of " + std::to_string(first.count) + " is missing");
    }
  }
  std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) { return a.index < b.index; });
  return Status::Ok();
}

nlohmann::ordered_json MergedJson(const std::vector<Shard>& shards, const Shard* told) {
  const auto& first = shards.front().j;
  nlohmann::ordered_json j;
  for (const char* field : {"lock", "baseline", "seed", "locklab_version", "ttl_ms", "faults"}) j[field] = first[field];
  double budget = 0, first_find = -1;
  int64_t trials = 0, untrusted = 0;
  bool interrupted = false;
  nlohmann::ordered_json found = nlohmann::ordered_json::array(), from = nlohmann::ordered_json::array();
  for (const Shard& s : shards) {
    budget = std::max(budget, s.j.value("budget_s", 0.0));
    trials += s.j.value("trials", int64_t{0});
    untrusted += s.j.value("untrusted_violations", int64_t{0});
    interrupted = interrupted || s.j.value("interrupted", false);
    int counted = 0;
    for (auto f : s.j.value("found", nlohmann::ordered_json::array())) {
      f["shard"] = s.index;
      f["scenario"] = s.dir + "/" + f.value("scenario", std::string());
      if (f.value("counted", false)) {
        ++counted;
        const double at = f.value("at_s", 0.0);
        if (first_find < 0 || at < first_find) first_find = at;
      }
      found.push_back(std::move(f));
    }
    from.push_back({{"dir", s.dir},
                    {"index", s.index},
                    {"trials", s.j.value("trials", int64_t{0})},
                    {"counted", counted},
                    {"killed", Killed(s.j)}});
  }
  j["budget_s"] = budget;
  j["trials"] = trials;
  j["untrusted_violations"] = untrusted;
  j["interrupted"] = interrupted;
  j["shard"] = nullptr;
  j["merged_from"] = from;
  j["found"] = found;
  j["time_to_first_s"] = first_find < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(first_find);
  if (told != nullptr) {
    j["minimal"] = told->j["minimal"];
    j["minimal"]["shard"] = told->index;
    j["minimal"]["found"] = told->dir + "/" + told->j["minimal"].value("found", std::string());
    j["narrative"] = told->j.value("narrative", std::string());
  } else {
    j["minimal"] = nullptr;
    j["narrative"] = "";
  }
  return j;
}

std::string MergedMarkdown(const nlohmann::ordered_json& j, const Shard* told) {
  std::ostringstream md;
  md << "# hunt: " << j["lock"].get<std::string>() << " (merged from " << j["merged_from"].size() << " shards)\n\n"
     << "Seed " << j["seed"] << ", " << j["trials"] << " trials over the shards.\n\n"
     << "| shard | directory | trials | failing scenarios counted | killed |\n|---|---|---|---|---|\n";
  for (const auto& s : j["merged_from"]) {
    md << "| " << s["index"] << " | `" << s["dir"].get<std::string>() << "` | " << s["trials"] << " | "
       << s["counted"] << " | " << (s["killed"].get<bool>() ? "yes" : "no") << " |\n";
  }
  if (told == nullptr) {
    md << "\nNo shard found a failure within its budget (not a proof that the lock is safe).\n";
  } else {
    const auto& m = j["minimal"];
    md << "\n## Minimal scenario (shard " << told->index << ", failed in " << m.value("reproduced", 0) << " of "
       << m.value("reruns", 0) << " reruns)\n\n"
       << j["narrative"].get<std::string>() << "\n\n`minimal.toml` here is shard " << told->index
       << "'s; its whole story: `" << told->dir << "/hunt.md`.\n";
  }
  return md.str();
}

}  // namespace

bool IsHuntDir(const std::string& dir) {
  struct stat st;
  return ::stat((dir + "/hunt.json").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

int RunHuntMergeCommand(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out = "runs";
  ArgvReader r(MergeCommandSpec(), args);
  while (r.Next()) {
    Status s;
    if (!r.AtFlag()) {
      dirs.push_back(r.word());
    } else if (r.Is("--out")) {
      s = r.Value(&out);
    } else if (r.Is("--no-report")) {
      s = r.NoValue();  // a hunt's merge makes no report of its own
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) return Refuse(s.message());
  }
  if (dirs.empty()) return Refuse("usage: locklab merge SHARD_DIR... [--out DIR]");
  std::vector<Shard> shards(dirs.size());
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (Status s = ReadShard(dirs[i], &shards[i]); !s.ok()) {
      std::cerr << "locklab merge: " << s.message() << "\n";
      return s.ExitCode();
    }
  }
  if (Status s = CheckShards(shards); !s.ok()) return Refuse(s.message());
  const Shard* told = Told(shards);
  nlohmann::ordered_json j = MergedJson(shards, told);
  std::string dir;
  Status s = CreateRunDir(out, "hunt-" + LockDisplayName(j["lock"].get<std::string>()) + "-merged", j["seed"].get<uint64_t>(), &dir);
  if (s.ok()) s = WriteFile(dir + "/hunt.json", j.dump(2) + "\n");
  if (s.ok()) s = WriteFile(dir + "/hunt.md", MergedMarkdown(j, told));
  if (s.ok() && told != nullptr) {
    for (const char* name : {"minimal.toml", "narrative.md"}) {
      const std::string from = told->dir + "/" + name;
      if (s.ok() && std::filesystem::exists(from)) s = WriteFile(dir + "/" + name, ReadWholeFile(from));
    }
  }
  if (!s.ok()) {
    std::cerr << "locklab merge: " << s.message() << "\n";
    return s.ExitCode();
  }
  int counted = 0;
  for (const auto& f : j["found"]) counted += f.value("counted", false) ? 1 : 0;
  std::cout << "hunt: " << j["trials"] << " trials over " << shards.size() << " shards; " << counted
            << " failing scenario" << (counted == 1 ? "" : "s") << " found\n";
  if (told != nullptr) {
    std::cout << "minimal: " << dir << "/minimal.toml (shard " << told->index << ", failed in "
              << j["minimal"].value("reproduced", 0) << " of " << j["minimal"].value("reruns", 0) << " reruns)\n"
              << j["narrative"].get<std::string>() << "\n";
  } else if (counted == 0) {
    std::cout << "no failure within the budget: this is not a proof that the lock is safe\n";
  }
  std::cout << "hunt: " << dir << "/hunt.md (hunt.json)\n";
  return counted > 0 ? 1 : kExitOk;
}

}  // namespace locklab::harness
