#include "harness/scenario/cell_expectations.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include <toml++/toml.h>

#include "base/numbers.h"
#include "locks/lock.h"
#include "harness/scenario/run_options.h"

namespace locklab::harness {

bool GlobMatches(std::string_view pattern, std::string_view id) {
  // Greedy with one backtrack point (the last `*`): linear enough for ids and patterns.
  size_t p = 0, i = 0, star = std::string_view::npos, star_i = 0;
  while (i < id.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_i = i;
    } else if (p < pattern.size() && pattern[p] == id[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++star_i;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool IsGlob(const std::string& pattern) { return pattern.find('*') != std::string::npos; }

// How specific an entry is (matrix_plan.h): exact fields first, then the glob fields'
// literal characters (all of them, not only those before the first `*`: "*-lua" is more
// specific than "*", which a catch-all added below it must not override); equal keys go to
// the later entry.
std::pair<int, size_t> Specificity(const Expectation& e) {
  int exact = 0;
  size_t literal = 0;
  for (const std::string* pattern : {&e.lock, &e.fault}) {
    if (IsGlob(*pattern)) literal += pattern->size() - std::count(pattern->begin(), pattern->end(), '*');
    else ++exact;
  }
  return {exact, literal};
}

// "N/M" with 0 <= N <= M, 1 <= M.
bool IsRate(const std::string& v) {
  size_t slash = v.find('/');
  if (slash == std::string::npos) return false;
  std::optional<int64_t> m = ParseInt(std::string_view(v).substr(slash + 1), 1, 1000000);
  return m && ParseInt(std::string_view(v).substr(0, slash), 0, *m).has_value();
}

}  // namespace

namespace {

bool MatchesLock(const Expectation& e, const std::string& lock, const std::string& canonical) {
  if (!IsGlob(e.lock)) return (e.lock_key.empty() ? e.lock : e.lock_key) == canonical;
  return GlobMatches(e.lock, lock) || GlobMatches(e.lock, canonical);
}

}  // namespace

bool ExpectationMatches(const Expectation& e, const std::string& lock, const std::string& canonical,
                        const std::string& fault) {
  return GlobMatches(e.fault, fault) && MatchesLock(e, lock, canonical);
}

const Expectation* FindExpectation(const Expectations& expectations, const std::string& lock,
                                   const std::string& fault) {
  const Expectation* best = nullptr;
  std::pair<int, size_t> best_key;
  const std::string canonical = CanonicalLockId(lock);
  for (const auto& e : expectations) {
    if (!GlobMatches(e.fault, fault) || !MatchesLock(e, lock, canonical)) continue;
    std::pair<int, size_t> key = Specificity(e);
    if (!best || key >= best_key) {  // >=: the later of two equal entries wins
      best = &e;
      best_key = key;
    }
  }
  return best;
}

Status LoadExpectations(const std::string& path, const std::set<std::string>& known_faults,
                        Expectations* out) {
  // Opened here, not by the TOML parser: its "File could not be opened" came with a line 0,
  // and a directory parsed as an empty file.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::BadInput(path + ": is a directory, not an expectation file");
  std::ifstream in(path);
  if (!in) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  toml::table root;
  try {
    root = toml::parse(in, path);
  } catch (const toml::parse_error& e) {
    return Status::BadInput(path + ":" + std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()));
  }
  // Anything but [[cell]] is a misspelling ([[cells]], a key above the first table) that
  // would otherwise pin nothing, silently.
  for (const auto& [key, value] : root) {
    if (key.str() != "cell") {
      return Status::BadInput(path + ":" + std::to_string(value.source().begin.line) + ": field '" +
                              std::string(key.str()) + "': unknown field (an expectation file holds "
                              "[[cell]] tables only)");
    }
  }
  // No [[cell]] at all pins nothing: the file --write-expect writes when no cell was judged.
  if (!root.contains("cell")) return Status::Ok();
  const toml::array* cells = root["cell"].as_array();
  if (!cells || !cells->is_array_of_tables()) {
    return Status::BadInput(path + ":" + std::to_string(root["cell"].node()->source().begin.line) +
                            ": field 'cell': expected [[cell]] tables");
  }
  static const std::set<std::string> kFields = {"lock",     "fault",       "verdict",
                                                "resource", "violated_in", "stuck_in"};
  for (const auto& node : *cells) {
    const toml::table* t = node.as_table();
    const std::string at = path + ":" + std::to_string(node.source().begin.line) + ": ";
    // A field's error names the field's own line (as a scenario file's does); the entry's
    // errors ("needs lock and fault") its [[cell]] line.
    auto bad = [&](const std::string& field, const std::string& what) {
      const toml::node* n = t->get(field);
      const std::string line = std::to_string(n ? n->source().begin.line : node.source().begin.line);
      return Status::BadInput(path + ":" + line + ": field 'cell." + field + "': " + what);
    };
    if (!t) return Status::BadInput(at + "field 'cell': expected a [[cell]] table");
    for (const auto& [key, value] : *t) {
      const std::string k(key.str());
      // A misspelt field would pin nothing, silently.
      if (!kFields.count(k)) {
        return bad(k, "unknown field (lock, fault, verdict, resource, violated_in, stuck_in)");
      }
      if (!value.is_string()) return bad(k, "expected a string");
    }
    auto field = [&](const char* k) {
      auto v = t->get_as<std::string>(k);
      return v ? v->get() : std::string();
    };
    Expectation e;
    e.lock = field("lock");
    e.fault = field("fault");
    if (e.lock.empty() || e.fault.empty()) {
      return Status::BadInput(at + "field 'cell': needs lock and fault");
    }
    e.verdict = field("verdict");
    e.resource = field("resource");
    e.violated_in = field("violated_in");
    e.stuck_in = field("stuck_in");
    if (!e.verdict.empty() && e.verdict != "S" && e.verdict != "V" && e.verdict != "L") {
      return bad("verdict", "expected S, V or L, got '" + e.verdict + "'");
    }
    if (!e.resource.empty() && e.resource != "S" && e.resource != "V") {
      return bad("resource", "expected S or V, got '" + e.resource + "'");
    }
    if (e.verdict.empty() && e.resource.empty()) {
      return Status::BadInput(at + "field 'cell': needs verdict and/or resource");
    }
    if (!e.violated_in.empty() && !IsRate(e.violated_in)) {
      return bad("violated_in", "expected N/M (trials), got '" + e.violated_in + "'");
    }
    if (!e.stuck_in.empty() && !IsRate(e.stuck_in)) {
      return bad("stuck_in", "expected N/M (trials), got '" + e.stuck_in + "'");
    }
    // A glob may match no cell of this run; an exact id names a lock or a fault column.
    if (!IsGlob(e.lock) && !locks::FindLock(e.lock)) {
      return bad("lock", "unknown lock '" + e.lock + "' (see `locklab list`; a glob uses *)");
    }
    if (!IsGlob(e.fault) && !known_faults.count(e.fault)) {
      return bad("fault", "unknown fault '" + e.fault + "' (no such fault or cell scenario; a glob uses *)");
    }
    if (!IsGlob(e.lock)) e.lock_key = CanonicalLockId(e.lock);
    e.origin = path + ":" + std::to_string(node.source().begin.line);
    e.lock_line = static_cast<int>(t->get("lock")->source().begin.line);
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

}  // namespace locklab::harness
