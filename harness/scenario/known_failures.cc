#include "harness/scenario/known_failures.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <toml++/toml.h>

#include "checker/verdict.h"
#include "faults/fault.h"

namespace locklab::harness {
namespace {

// Whether a TOML file holds [[cell]] tables (an expectation file) rather than a scenario.
bool IsExpectationFile(const std::string& path) {
  try {
    toml::table t = toml::parse_file(path);
    return t.contains("cell");
  } catch (const toml::parse_error&) {
    return false;  // the scenario reader names the line
  }
}

std::string Letter(const Expectation& e) { return e.verdict.empty() ? "r" + e.resource : e.verdict; }

// The kinds an entry accounts for: V two holders (and so a broken resource, unless it pins
// the resource intact), L stuck, resource V a broken resource.
FailureKindSet Covers(const Expectation& e) {
  FailureKindSet k;
  if (e.verdict == "V") {
    k.insert(FailureKind::kViolated);
    if (e.resource != "S") k.insert(FailureKind::kResource);
  }
  if (e.verdict == "L") k.insert(FailureKind::kStuck);
  if (e.resource == "V") k.insert(FailureKind::kResource);
  return k;
}

bool Includes(const FailureKindSet& covered, const FailureKindSet& kinds) {
  return !kinds.empty() && std::includes(covered.begin(), covered.end(), kinds.begin(), kinds.end());
}

}  // namespace

Status KnownFailures::Add(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::Usage("hunt: flag --known: " + path + ": no such file or directory");
  if (!fs::is_directory(st)) return AddFile(path);
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".toml") files.push_back(it->path().string());
  }
  if (ec) return Status::BadInput(path + ": cannot read: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (Status s = AddFile(f); !s.ok()) return s;
  }
  return Status::Ok();
}

Status KnownFailures::AddFile(const std::string& path) {
  if (IsExpectationFile(path)) {
    std::set<std::string> faults;
    for (const auto& f : faults::ListFaults()) faults.insert(f.id);
    Status s = LoadExpectations(path, faults, &cells_);
    return s.ok() ? s : Status::BadInput("hunt: flag --known: " + s.message());
  }
  RunOptions o;
  if (Status s = LoadScenarioFile(path, &o); !s.ok()) return Status::BadInput("hunt: flag --known: " + s.message());
  Scenario sc;
  sc.file = path;
  sc.lock = CanonicalLockId(o.lock);
  sc.faults = FaultIdList(o);
  constexpr checker::Verdict kViolated = checker::Verdict::kViolated;
  if (o.expect_verdict == kViolated || o.expect_violated_at_least > 0) {
    sc.kinds = {FailureKind::kViolated, FailureKind::kResource};
  } else if (o.expect_resource == kViolated) {
    sc.kinds = {FailureKind::kResource};
  }
  if (o.expect_stuck == true) sc.kinds.insert(FailureKind::kStuck);
  // A scenario that expects the lock to hold (a corpus's safe schedules) accounts for nothing.
  if (!sc.kinds.empty()) scenarios_.push_back(std::move(sc));
  return Status::Ok();
}

std::string KnownFailures::Accounts(const std::string& lock, const RunOptions& o,
                                    const FailureKindSet& kinds) const {
  std::vector<std::string> faults = FaultIdList(o);
  const std::string canonical = CanonicalLockId(lock);
  for (const std::string& f : faults.empty() ? std::vector<std::string>{"none"} : faults) {
    const Expectation* e = FindExpectation(cells_, lock, f);
    if (e != nullptr && Includes(Covers(*e), kinds)) {
      return e->origin + " pins " + canonical + " x " + f + " " + Letter(*e);
    }
  }
  const std::set<std::string> have(faults.begin(), faults.end());
  for (const Scenario& sc : scenarios_) {
    if (sc.lock != canonical || !Includes(sc.kinds, kinds)) continue;
    const bool within = std::all_of(sc.faults.begin(), sc.faults.end(), [&](const std::string& f) { return have.count(f); });
    if (within && (sc.faults.empty() == faults.empty())) {
      std::string under;
      for (const auto& f : sc.faults) under += (under.empty() ? "" : "+") + f;
      return sc.file + " fails " + canonical + " under " + (under.empty() ? std::string("no fault") : under);
    }
  }
  return "";
}

std::string KnownFailures::Describe() const {
  return std::to_string(cells_.size()) + " expectation entr" + (cells_.size() == 1 ? "y" : "ies") + ", " +
         std::to_string(scenarios_.size()) + " failing scenario" + (scenarios_.size() == 1 ? "" : "s");
}

}  // namespace locklab::harness
